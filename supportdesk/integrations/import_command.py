"""`supportdesk import PATH [--db DB]`: other frameworks' sessions as desk sessions.

Registered through `cli.PLUG_INS`, so it is imported only when `import` is the command.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from supportdesk.text import counted, safe_text

EXIT_BAD_SOURCE = 2


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser | None = None) -> None:
    parser = sub.add_parser(
        "import",
        parents=[common] if common is not None else [],
        description=(
            "Read an OpenAI Agents SDK SQLiteSession database or a Strands FileSessionManager folder "
            "and write each session in it as a desk session (channel 'import'), to replay, search and export."
        ),
    )
    parser.add_argument("path", metavar="PATH", help="an Agents SDK .db file or a Strands session folder")
    parser.add_argument(
        "--entry-agent",
        default="agent",
        metavar="NAME",
        help="who held an Agents SDK session before its first handoff (the SDK stores no agent names)",
    )
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    from supportdesk.integrations.importer import SourceError, read_source, write_session
    from supportdesk.store import open_store

    try:
        sessions = read_source(Path(args.path), entry_agent=args.entry_agent)
    except SourceError as exc:
        print(f"supportdesk: {safe_text(str(exc))}", file=sys.stderr)
        return EXIT_BAD_SOURCE
    async with await open_store(getattr(args, "db", None)) as store:
        done = await _imported_before(store)
        skipped = 0
        for imported in sessions:
            key = _source_key(imported.meta)
            if key in done:  # imported by an earlier run: importing is idempotent
                print(safe_text(f"{done[key]}  {imported.source}:{imported.source_id}  already imported"))
                skipped += 1
                continue
            info = await write_session(store, imported)
            done[key] = info.id
            print(
                safe_text(
                    f"{info.id}  {imported.source}:{imported.source_id}  {counted(info.item_count, 'item')} · "
                    f"{counted(info.handoff_count, 'handoff')} · {info.title or '(no title)'}"
                )
            )
    new = len(sessions) - skipped
    already = f" ({skipped} imported before)" if skipped else ""
    print(safe_text(f"imported {counted(new, 'session')} from {args.path}{already}"))
    return 0


def _source_key(meta: dict[str, object]) -> tuple[str, str, str]:
    """Which source session an imported session came from: its format, file and id there."""
    return (str(meta.get("source", "")), str(meta.get("path", "")), str(meta.get("session_id", "")))


async def _imported_before(store: object) -> dict[tuple[str, str, str], str]:
    """Every source session already imported into `store`, by `_source_key`, with its id here."""
    from supportdesk.integrations.importer import CHANNEL

    found: dict[tuple[str, str, str], str] = {}
    offset, page = 0, 500
    while True:
        infos = await store.list_sessions(limit=page, offset=offset)  # type: ignore[attr-defined]
        for info in infos:
            if info.channel == CHANNEL and info.meta.get("source"):
                found.setdefault(_source_key(info.meta), info.id)
        if len(infos) < page:
            return found
        offset += page
