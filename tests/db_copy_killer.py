"""Copies argv[1] into argv[2] with `supportdesk db copy`'s own code, and SIGKILLs itself once
argv[3] sessions are copied: an interruption at a known point, as a crash or a lost machine."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from supportdesk.dbtools.copy import CopyProgress, copy_desk


def main(src: str, dst: str, stop_after: int) -> None:
    copied = 0

    def on_copied(info: object) -> None:
        nonlocal copied
        copied += 1
        if copied == stop_after:
            os.kill(os.getpid(), signal.SIGKILL)

    asyncio.run(copy_desk(src, dst, CopyProgress(copied=on_copied)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
