"""A worker process for the refund race: opens the business data at argv[1], waits for the
start file argv[2], then refunds per the JSON plan in argv[3] and prints one JSON line per
attempt ({"key", "ok", "result" | "error"})."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

from supportdesk.business import BusinessError, open_business


async def main(where: str, start_file: str, plan: list[dict]) -> None:
    business = await open_business(where)
    try:
        deadline = time.monotonic() + 30
        while not os.path.exists(start_file):
            if time.monotonic() > deadline:
                raise SystemExit("no start signal")
            await asyncio.sleep(0.001)
        for step in plan:
            try:
                result = await business.refund(
                    key=step["key"], session_id="race", charge_id=step["charge"], amount=step["amount"],
                    reason="race", agent="billing",
                )
                line = {"key": step["key"], "ok": True, "result": result}
            except BusinessError as exc:
                line = {"key": step["key"], "ok": False, "error": str(exc)}
            print(json.dumps(line), flush=True)
    finally:
        await business.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])))
