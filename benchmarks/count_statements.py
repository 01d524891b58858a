"""Run a Python module with every statement its asyncpg connections send counted (`bench_serve
--count-statements`): `python count_statements.py OUT MODULE ARGS...`.

Counted from the start, and from zero again at SIGUSR2 (what `bench_serve` sends once the workers
are warm); written at exit to OUT.<pid> as JSON, [[statement's first words, count], ...]. A
statement is one `Connection` execution, prepared or simple (a BEGIN or COMMIT is one too).
"""

from __future__ import annotations

import atexit
import collections
import json
import os
import runpy
import signal
import sys

import asyncpg.connection

counts: collections.Counter[str] = collections.Counter()


def note(query: object) -> None:
    counts[" ".join(str(query).split())[:90]] += 1


def main() -> None:
    out, module, *args = sys.argv[1:]
    sent = asyncpg.connection.Connection._do_execute
    simple = asyncpg.connection.Connection.execute

    async def do_execute(self, query, *a, **k):  # type: ignore[no-untyped-def]
        note(query)
        return await sent(self, query, *a, **k)

    async def execute(self, query, *a, timeout=None):  # type: ignore[no-untyped-def]
        if not a:  # (with parameters it goes through _do_execute, counted there)
            note(query)
        return await simple(self, query, *a, timeout=timeout)

    asyncpg.connection.Connection._do_execute = do_execute  # type: ignore[method-assign]
    asyncpg.connection.Connection.execute = execute  # type: ignore[method-assign]
    signal.signal(signal.SIGUSR2, lambda *_: counts.clear())

    def write() -> None:
        with open(f"{out}.{os.getpid()}", "w") as f:
            json.dump(counts.most_common(), f)

    atexit.register(write)
    sys.argv = [module, *args]
    sys.path.insert(0, os.getcwd())  # (as `python -m` finds the module)
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
