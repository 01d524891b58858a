"""Run `supportdesk` in a real process that stops dead after a side-effecting tool ran but
before the step's items are stored: the window a SIGKILL mid-turn can hit.

    python tests/crash_after_tool.py MARKER TOOL -- supportdesk arguments...

When the runner is about to store a result of TOOL, the marker file is written and the
process waits (for the test's SIGKILL) instead of storing it.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path


def main() -> int:
    marker, tool, sep, *argv = sys.argv[1:]
    assert sep == "--"
    from supportdesk.cli import main as cli_main
    from supportdesk.store.sessions import SessionStore

    append = SessionStore.append

    async def append_or_hang(self, session_id, items, **kw):  # type: ignore[no-untyped-def]
        if any(item.kind == "tool_result" and item.name == tool for item in items):
            Path(marker).write_text("the tool ran; its items are not stored")
            await asyncio.sleep(3600)
        return await append(self, session_id, items, **kw)

    SessionStore.append = append_or_hang  # type: ignore[method-assign]
    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
