"""`supportdesk inbox`: the desk opened on the inbox (a plug-in of cli.py, imported only when asked)."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    inbox = sub.add_parser(
        "inbox",
        parents=[common],
        description="Open the desk on the inbox: one row per recently active conversation with its state, "
        "live as other processes write. Enter opens a conversation; a/d approve or deny its pending approval.",
    )
    inbox.add_argument("--theme", default=argparse.SUPPRESS)
    inbox.set_defaults(func=_inbox)


def _inbox(args: argparse.Namespace) -> int:
    from supportdesk.tui.app import run_app

    return run_app(db=args.db, config=args.config, theme=getattr(args, "theme", None), inbox=True) or 0
