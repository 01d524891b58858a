"""Staff actions from the command line, for scripts and for staff without the TUI:
`supportdesk takeover | reply | release | state | tag` and `supportdesk audit`.

Each action is `staff.requests.perform` (the runner's own, shared with the web API), with origin
`cli` and the person from `--as` (default: $SUPPORTDESK_STAFF, else the OS user). An action that makes no sense (an unknown
session or agent, a release nobody took, a reply to a resolved conversation, a time that cannot be
read) is refused with one line on stderr and exit status 2; nothing is written then.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from typing import Any, get_args

from supportdesk.cli import EXIT_USAGE, _err, _out
from supportdesk.items import Priority, SettableState
from supportdesk.staff import Actor, AuditEntry, SettingsError, WhenError, audit, default_actor, parse_duration, parse_when
from supportdesk.staff.requests import Inputs, Refused, StaffAction, find_session, perform, said

# How many sessions `audit` reads per page, newest activity first.
AUDIT_PAGE = 200


def _actor(args: argparse.Namespace) -> Actor:
    return Actor(args.person, "cli") if args.person else default_actor("cli")


async def _act(args: argparse.Namespace, action: StaffAction, given: Inputs) -> int:
    """Open the desk, find the session, run the action (staff.requests.perform, as the web API
    does); its refusals, TurnError and bad input are one line and exit 2."""
    from supportdesk.wiring import open_desk
    from supportdesk.engine.errors import TurnError

    try:
        by = _actor(args)
        async with await open_desk(args.db, args.config) as desk:
            session_id = await find_session(desk.store, args.session)
            for item in await perform(desk.runner, session_id, action, given, by):
                _out(f"{session_id} #{item.seq} {said(item)}")
    except (Refused, TurnError, WhenError, SettingsError) as exc:
        _err(str(exc))
        return EXIT_USAGE
    return 0


async def takeover(args: argparse.Namespace) -> int:
    return await _act(args, "takeover", Inputs(reason=args.reason or ""))


async def reply(args: argparse.Namespace) -> int:
    text = sys.stdin.buffer.read().decode("utf-8", errors="replace").strip() if args.text == "-" else args.text
    return await _act(args, "reply", Inputs(text=text))


async def release(args: argparse.Namespace) -> int:
    return await _act(args, "release", Inputs(to=args.to, summary=args.summary or ""))


async def state(args: argparse.Namespace) -> int:
    return await _act(args, "state", Inputs(state=args.state, until=args.until, reason=args.reason or ""))


async def tag(args: argparse.Namespace) -> int:
    return await _act(args, "tag", Inputs(tags=tuple(args.tags), remove=tuple(args.remove or ()), priority=args.priority))


# --- the audit -------------------------------------------------------------------------------------


async def audit_command(args: argparse.Namespace) -> int:
    from supportdesk.store import open_store

    try:
        async with await open_store(args.db) as store:
            since = _since(args.since, store.clock()) if args.since else None
            entries = await collect_audit(store, since=since, session=args.session)
    except (Refused, WhenError) as exc:
        _err(str(exc))
        return EXIT_USAGE
    if args.who:
        entries = [e for e in entries if e.person == args.who]
    for entry in entries:
        if args.json:
            print(json.dumps(entry.as_json(), ensure_ascii=False))
        else:
            macro = f" (macro {entry.macro})" if entry.macro else ""
            _out(
                f"{entry.at:%Y-%m-%d %H:%M:%S}  {entry.session_id}  #{entry.seq:<4} {entry.person:<12} "
                f"{entry.origin:<8} {entry.action:<9} {' '.join(entry.detail.split())[:100]}{macro}"
            )
    if not entries and not args.json:
        _out("no staff actions match")
    return 0


def _since(text: str, now: datetime) -> datetime:
    """`--since 1d` and `--since -1d` both mean a day ago; an ISO time is itself."""
    bare = text.strip().lstrip("-").removesuffix(" ago").strip()
    try:
        return now - parse_duration(bare)
    except WhenError:
        return parse_when(text, now)


async def collect_audit(store: Any, *, since: datetime | None = None, session: str | None = None) -> list[AuditEntry]:
    """Every staff action in the store (or one session), oldest first; `since` keeps the newer."""
    if session is not None:
        info = await store.find_session(session)
        if info is None:
            raise Refused(f"no session {session!r}; see `supportdesk sessions list`")
        sessions = [info]
    else:
        sessions = []
        offset = 0
        while True:
            page = await store.list_sessions(limit=AUDIT_PAGE, offset=offset)
            sessions += [s for s in page if since is None or s.updated_at >= since]
            if len(page) < AUDIT_PAGE or (since is not None and page and page[-1].updated_at < since):
                break
            offset += AUDIT_PAGE
    entries: list[AuditEntry] = []
    for info in sessions:
        entries += audit(await store.range(info.id, 1, info.item_count))
    if since is not None:
        entries = [e for e in entries if e.at >= since]
    return sorted(entries, key=lambda e: (e.at, e.session_id, e.seq))


# --- the parsers -------------------------------------------------------------------------------------


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """The staff commands, added to `supportdesk`'s subcommands."""
    person = argparse.ArgumentParser(add_help=False)
    person.add_argument("--as", dest="person", metavar="NAME", help="who is acting (default: $SUPPORTDESK_STAFF or the OS user)")

    p = sub.add_parser("takeover", parents=[common, person])
    p.add_argument("session", metavar="SESSION")
    p.add_argument("--reason", metavar="TEXT")
    p.set_defaults(func=takeover)

    p = sub.add_parser("reply", parents=[common, person])
    p.add_argument("session", metavar="SESSION")
    p.add_argument("text", metavar="TEXT", help="the reply; - reads it from stdin")
    p.set_defaults(func=reply)

    p = sub.add_parser("release", parents=[common, person])
    p.add_argument("session", metavar="SESSION")
    p.add_argument("--to", metavar="AGENT", help="the agent to give it to (default: the one that held it)")
    p.add_argument("--summary", metavar="TEXT", help="what the agent should know (it reads this)")
    p.set_defaults(func=release)

    p = sub.add_parser("state", parents=[common, person])
    p.add_argument("session", metavar="SESSION")
    p.add_argument("state", choices=get_args(SettableState))
    p.add_argument("--until", metavar="WHEN", help="a snooze's end: 2h, 3d, or an ISO time (UTC)")
    p.add_argument("--reason", metavar="TEXT")
    p.set_defaults(func=state)

    p = sub.add_parser("tag", parents=[common, person])
    p.add_argument("session", metavar="SESSION")
    p.add_argument("tags", nargs="*", metavar="TAG")
    p.add_argument("--remove", nargs="+", metavar="TAG")
    p.add_argument("--priority", choices=get_args(Priority))
    p.set_defaults(func=tag)

    p = sub.add_parser("audit", parents=[common])
    p.add_argument("--since", metavar="WHEN", help="only newer actions: -1d, -2h, or an ISO time")
    p.add_argument("--who", metavar="NAME")
    p.add_argument("--session", metavar="ID")
    p.add_argument("--json", action="store_true", help="one JSON object per action")
    p.set_defaults(func=audit_command)
