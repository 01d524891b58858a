"""`supportdesk stats [--range today|7d|30d|all] [--json]`: registered by cli.py as a plug-in, so
only this command imports it. In a terminal it opens the dashboard; `--json` (or a pipe) prints
the figures of `supportdesk.reports.stats`."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from supportdesk.text import safe_text

EXIT_USAGE = 2


def _err(text: str) -> None:
    print(f"supportdesk: {safe_text(text)}", file=sys.stderr)


def register(sub: Any, common: argparse.ArgumentParser | None = None) -> None:
    parents = [common] if common is not None else []
    stats = sub.add_parser("stats", parents=parents)
    # Checked by stats.parse_range, so a bad range is one line (argparse's choices print usage too).
    stats.add_argument("--range", default="7d", metavar="today|7d|30d|all", help="the time range (default: 7d)")
    stats.add_argument("--json", action="store_true", help="print the figures as JSON instead of the dashboard")
    stats.add_argument("--theme", default=argparse.SUPPRESS, help="the dashboard's theme")
    stats.set_defaults(func=_cmd_stats)


def _cmd_stats(args: argparse.Namespace) -> int:
    import asyncio

    from supportdesk.reports.stats import StatsError, parse_range
    from supportdesk.store import StoreError, parse_location

    try:
        range_name = parse_range(args.range)
        location = parse_location(args.db)
    except (StatsError, StoreError) as exc:
        _err(str(exc))
        return EXIT_USAGE
    if location.kind == "sqlite" and str(location.path) != ":memory:" and not location.path.exists():
        _err(f"{location}: no such database; name one with --db or $SUPPORTDESK_DB")
        return EXIT_USAGE
    config = _desk_or_none(args)
    try:
        out = asyncio.run(_figures(location, config, range_name))
    except StoreError as exc:
        _err(str(exc))
        return EXIT_USAGE
    if args.json or not sys.stdout.isatty():
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    from supportdesk.tui.stats_app import StatsApp

    app = StatsApp(location, config, range_name, theme=getattr(args, "theme", None))
    app.run()
    return app.return_code or 0


async def _figures(location: Any, config: Any, range_name: Any) -> dict[str, Any]:
    """The figures as JSON (which also proves the database usable before a dashboard opens)."""
    from supportdesk.items import utcnow
    from supportdesk.reports.stats import desk_stats, stats_json
    from supportdesk.store import open_store

    async with await open_store(location) as store:
        return stats_json(await desk_stats(store, config, range_name, utcnow()))


def _desk_or_none(args: argparse.Namespace) -> Any:
    """The desk file for agents' titles and prices; the figures stand without it."""
    from supportdesk.config import ConfigError, load_desk

    try:
        return load_desk(args.config)
    except ConfigError:
        return None
