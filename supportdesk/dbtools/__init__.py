"""`supportdesk db`: move a whole desk between databases (`copy`) and check one (`check`).

Registered with the command only when asked for (`cli.PLUG_INS`), so the TUI's start-up never
imports it. Everything goes through the store's and the business data's contracts: no SQL here.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from supportdesk.text import safe_text

COPY_HELP = (
    "Copy every session (ids, seqs, items, context, forks, usage totals) and the business data "
    "from SRC to DST: SQLite file or sqlite:///path, or postgresql://user:password@host/db. "
    "Resumable: a session is copied in one transaction, and a rerun skips the sessions DST "
    "already holds exactly as SRC does. A session of the same id with other content is refused "
    "before anything is written; nothing in DST is overwritten. DST's business data is replaced "
    "only when it holds no refunds or other writes that SRC lacks. Copy a desk at rest."
)
CHECK_HELP = (
    "Report a database's kind, schema version, sessions and items, and check the log is whole "
    "(seqs contiguous, item and handoff counts and the active agent match the items, forks "
    "within their source, refunds adding up). Exit 1 on any problem."
)


def _out(text: str = "") -> None:
    print(safe_text(text))


def _err(text: str) -> None:
    print(f"supportdesk: {safe_text(text)}", file=sys.stderr)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    db = sub.add_parser("db", description="Move a whole desk between databases (copy) or check one (check).")
    dsub = db.add_subparsers(dest="db_command", metavar="ACTION", required=True)
    copy = dsub.add_parser("copy", help="copy every session and the business data to another database",
                           description=COPY_HELP)
    copy.add_argument("src", metavar="SRC", help="the database to copy from (path or URL)")
    copy.add_argument("dst", metavar="DST", help="the database to copy into (created when new)")
    copy.set_defaults(func=_copy)
    check = dsub.add_parser("check", parents=[common], help="schema version, sessions, items and integrity",
                            description=CHECK_HELP)
    check.add_argument("target", nargs="?", metavar="DB", help="path or URL (default: --db, $SUPPORTDESK_DB, the data folder)")
    check.set_defaults(func=_check)


async def _copy(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from supportdesk.dbtools.copy import CopyProgress, CopyRefused, copy_desk

    console = Console(stderr=True)
    bar = Progress(
        TextColumn("copying sessions"), BarColumn(), MofNCompleteColumn(), TextColumn("items"), TimeRemainingColumn(),
        console=console, disable=not console.is_terminal, transient=True,
    )
    task = bar.add_task("copy", total=None)

    def start(sessions: int, items: int) -> None:
        bar.update(task, total=items)
        bar.start()

    def copied(info: Any) -> None:
        bar.advance(task, info.item_count)

    try:
        report = await copy_desk(args.src, args.dst, CopyProgress(start, copied))
    except CopyRefused as exc:
        _err(str(exc))
        return 1
    finally:
        bar.stop()
    skipped = f", skipped {len(report.skipped)} already there" if report.skipped else ""
    business = {"copied": "copied", "already there": "already there", "none in SRC": "none in the source"}[report.business]
    _out(f"copied {len(report.copied)} sessions ({report.items} items){skipped}; business data: {business}")
    return 0


async def _check(args: argparse.Namespace) -> int:
    from supportdesk.dbtools.check import check_desk

    report = await check_desk(args.target or getattr(args, "db", None))
    _out(f"{report.where}: {report.kind}, schema v{report.schema_version}")
    _out(f"sessions: {report.sessions} · items: {report.items} · handoffs: {report.handoffs} · forks: {report.forks}")
    if report.business is not None:
        _out("business data: " + ", ".join(f"{n} {name}" for name, n in report.business.items()))
    else:
        _out("business data: none")
    for note in report.notes:
        _out(f"note: {note}")
    for problem in report.problems:
        _out(f"problem: {problem}")
    _out("integrity: ok" if not report.problems else f"integrity: {len(report.problems)} problem(s)")
    return 1 if report.problems else 0
