"""The `supportdesk` command: the TUI by default, headless subcommands beside it.

Every failure a user can cause (a broken desk file, a foreign database, an unknown
session) ends as one clear line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from supportdesk.text import one_line, safe_text

if TYPE_CHECKING:
    from supportdesk.config import DeskConfig

# The desk's modules (pydantic models, SQLite) are imported where a command needs them:
# the TUI draws its first frame before they load.

EXIT_USAGE = 2


def _out(text: str = "") -> None:
    print(safe_text(text))


def _err(text: str) -> None:
    print(f"supportdesk: {safe_text(text)}", file=sys.stderr)


# --- headless commands -------------------------------------------------------------------------


async def _run(args: argparse.Namespace) -> int:
    """Send the messages in turn; the exit code says how the turns ended (see EXIT_*)."""
    from supportdesk.store import StoreError

    messages = [_read_stdin() if m == "-" else m for m in args.message]
    if not messages and not args.retry:
        _err("give a message to send, or --retry with --session to finish the last turn")
        return EXIT_USAGE
    if any(not m.strip() for m in messages):
        # The web API answers 422 to an empty text and the TUI ignores one: a blank message is
        # a slip (an unset shell variable, say), not something to store and answer.
        _err("a message is empty; give the customer's words (- reads them from stdin)")
        return EXIT_USAGE
    if args.retry and not args.session:
        _err("--retry needs --session ID: the session whose last turn to finish")
        return EXIT_USAGE

    def show(line: dict[str, Any] | str) -> None:
        if isinstance(line, dict):
            print(json.dumps(line, ensure_ascii=False))
        else:
            _out(line)

    outcomes: list[str] = []
    unsaved = list(messages)  # the customer's messages not in the log yet
    state: dict[str, str] = {}  # "opened" once the database answered, "session" once known
    try:
        return await _run_turns(args, messages, unsaved, outcomes, show, state)
    except Exception as exc:
        if "opened" in state and _database_lost(exc):
            _err(_lost_line(args.db, exc, state.get("session"), bool(unsaved)))
            return EXIT_DATABASE_LOST
        if isinstance(exc, StoreError) and unsaved:
            _err(f"{exc}; the customer's message was not saved")
            return EXIT_FAILURE
        raise


def _database_lost(exc: BaseException) -> bool:
    """The database server stopped answering (a refused or cut connection, the driver's own
    errors), anywhere in the error's chain: exit 2. A database that answers but cannot take the
    write (a full disk, a read-only or locked file) is exit 1, as the exit codes say."""
    seen: BaseException | None = exc
    for _ in range(8):  # (a chain is short; a cycle must not loop)
        if seen is None:
            return False
        if isinstance(seen, ConnectionError) or type(seen).__module__.split(".")[0] == "asyncpg":
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _lost_line(db: Any, exc: BaseException, session_id: str | None, unsaved: bool) -> str:
    """One line: which database (password masked), what it said, and whether the message is stored."""
    from supportdesk.store.location import parse_location, scrub

    location = parse_location(db)
    said = str(exc).splitlines()[0] if str(exc) else ""
    said = scrub(said.removeprefix(f"{location.display}: "), location.target) or type(exc).__name__
    if unsaved:
        fate = "the customer's message was not stored; send it again"
    else:
        fate = f"the customer's message is stored; finish its turn with `supportdesk run --session {session_id} --retry`"
    return f"{location.display}: the database stopped answering during the turn ({said}); {fate}"


async def _run_turns(
    args: argparse.Namespace, messages: list[str], unsaved: list[str], outcomes: list[str], show: Callable[[Any], None],
    state: dict[str, str],
) -> int:
    from supportdesk.wiring import open_desk
    from supportdesk.engine.events import Appended, Done, SessionStarted, TurnWaiting
    from supportdesk.reports.export import in_brief_transcript, item_line
    from supportdesk.items import Message, item_to_json

    async with await open_desk(args.db, args.config) as desk:
        state["opened"] = "yes"
        session_id: str | None = None
        if args.session:
            info = await desk.store.find_session(args.session)
            if info is None:
                _err(f"no session {args.session!r}; see `supportdesk sessions list`")
                unsaved.clear()
                return EXIT_FAILURE
            session_id = info.id
            state["session"] = session_id
            show({"session": session_id} if args.json else f"session {session_id}")
        turns: list[tuple[str | None, Any]] = []
        if args.retry:
            turns.append((None, lambda sid: desk.runner.retry_turn(sid)))
        turns += [(m, lambda sid, m=m: desk.runner.send(sid, m, channel="cli")) for m in messages]
        for message, start in turns:
            async for event in start(session_id):
                if isinstance(event, SessionStarted):
                    session_id = state["session"] = event.session_id
                    show({"session": session_id} if args.json else f"session {session_id}")
                elif isinstance(event, TurnWaiting):  # on stderr: stdout stays the transcript
                    _err(f"session {event.session_id}: waiting for the turn in progress")
                elif isinstance(event, Done):
                    outcomes.append(event.outcome)
                    if event.outcome == "held" and not args.json:
                        holder = await desk.runner.held_by(event.session_id) or "staff"
                        _out(f"{holder} (staff) holds this conversation: the message is stored and waits for them")
                    if args.json:
                        show({"turn": len(outcomes), "outcome": event.outcome, "status": event.status,
                              "agent": event.active_agent})
                elif isinstance(event, Appended):
                    item = event.item
                    if message is not None and unsaved and unsaved[0] is message:
                        unsaved.pop(0)  # the turn's first item is its customer message
                    if args.json:
                        show(item_to_json(item))
                    elif isinstance(item, Message) and item.role == "customer":
                        _out(f"\n{item_line(item, desk.config)}")
                    elif in_brief_transcript(item) or args.verbose:
                        _out(item_line(item, desk.config))
    return _exit_code(outcomes)


# `run`'s exit codes (docs/usage.md, "Exit codes"): scripts can tell an answered customer from a turn
# that needs a retry or a look.
EXIT_OK = 0  # every turn ended in an agent's answer (or a pending staff approval)
EXIT_FAILURE = 1  # a database, file or session problem (one line on stderr)
# The database stopped answering during a turn (one line on stderr naming it, and whether the
# customer's message is stored); shares 2 with a usage error: the database needs a look.
EXIT_DATABASE_LOST = 2
EXIT_PROVIDER = 3  # a turn ended in a provider error: retry it with `run --retry --session ID`
EXIT_LIMIT = 4  # a turn hit a desk limit: the fallback agent answered and holds the conversation
EXIT_VETOED = 5  # a hook vetoed a turn before any agent worked on it (its notice says which and why)
EXIT_HELD = 6  # a person holds the conversation (a take-over): the message is stored, no agent ran


def _exit_code(outcomes: list[str]) -> int:
    if "provider_error" in outcomes:
        return EXIT_PROVIDER
    if "limit" in outcomes:
        return EXIT_LIMIT
    if "vetoed" in outcomes:
        return EXIT_VETOED
    if "held" in outcomes:
        return EXIT_HELD
    return EXIT_OK


def _read_stdin() -> str:
    """A message from stdin, whatever its bytes: invalid UTF-8 becomes U+FFFD."""
    return sys.stdin.buffer.read().decode("utf-8", errors="replace").strip()


async def _sessions_list(args: argparse.Namespace) -> int:
    from supportdesk import records
    from supportdesk.store import open_store

    async with await open_store(args.db) as store:
        if args.search:
            hits = await store.search(args.search, limit=args.limit)
            if args.json:
                for hit in hits:
                    print(json.dumps(records.dump(hit) | {"snippet": _plain_snippet(hit)}, ensure_ascii=False))
                return 0
            for hit in hits:
                _out(f"{hit.session_id}  #{hit.seq:<5} {_plain_snippet(hit)}")
            if not hits:
                _out(f"no messages match {args.search!r}")
            return 0
        # The state is the inbox's (desk_state's fold kept with the appends), read from the same
        # place: the row's `status` is what the last turn ended with and missed staff actions
        # (a take-over, reply and release left it at needs_human).
        from supportdesk.folds.desk_state import at, label

        rows = await store.desk(limit=args.limit)
        now = store.clock()
        if args.json:
            for row in rows:
                shown = at(row.state, now)
                print(json.dumps(records.dump(row.session) | {"state": label(shown.state, shown.detail)}, ensure_ascii=False))
            return 0
        if not rows:
            _out("no sessions yet; start one with `supportdesk run \"Hello\"` or `supportdesk`")
        for row in rows:
            info, shown = row.session, at(row.state, now)
            _out(
                f"{info.id}  {info.updated_at:%Y-%m-%d %H:%M}  {info.active_agent:<10} "
                f"{info.handoff_count:>2} {'handoff ' if info.handoff_count == 1 else 'handoffs'}  "
                f"{label(shown.state, shown.detail):<26} {one_line(info.title, 80)}"
            )
    return 0


def _plain_snippet(hit: Any) -> str:
    return "".join(f"«{t}»" if match else t for t, match in hit.parts())


async def _load_session(args: argparse.Namespace) -> tuple[Any, list[Any]] | None:
    from supportdesk.store import open_store

    async with await open_store(args.db) as store:
        info = await store.find_session(args.id)
        if info is None:
            _err(f"no session {args.id!r}; see `supportdesk sessions list`")
            return None
        return info, await store.range(info.id, 1, info.item_count)


def _desk_or_none(args: argparse.Namespace) -> Any:
    from supportdesk.config import ConfigError
    from supportdesk.wiring import load_config

    try:
        return load_config(args.config)
    except ConfigError:
        return None  # titles are a nicety when showing a transcript


async def _sessions_show(args: argparse.Namespace) -> int:
    from supportdesk.reports.export import item_line

    loaded = await _load_session(args)
    if loaded is None:
        return 1
    info, items = loaded
    config = _desk_or_none(args)
    _out(f"{info.id} · {info.title} · agent now: {info.active_agent} · {info.item_count} items")
    for item in items:
        _out(f"{item.seq:>5}  {item_line(item, config)}")
    return 0


async def _export(args: argparse.Namespace) -> int:
    from supportdesk.reports.export import session_json_text, session_markdown

    loaded = await _load_session(args)
    if loaded is None:
        return 1
    info, items = loaded
    if args.format == "json":
        text = session_json_text(info, items)
    else:
        text = session_markdown(info, items, _desk_or_none(args))
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            _err(f"{args.output}: cannot write the export: {exc.strerror or exc}")
            return 1
        _out(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    return 0


def _config_check(args: argparse.Namespace) -> int:
    from supportdesk.config import ConfigError, resolve_config_path
    from supportdesk.wiring import load_config

    path = args.path or args.config
    resolved = resolve_config_path(path)
    try:
        desk = load_config(resolved)
    except ConfigError as exc:
        for problem in exc.problems:
            print(safe_text(problem), file=sys.stderr)
        return EXIT_USAGE
    agents = ", ".join(f"{a.name} (L{a.level})" for a in desk.agents.values())
    _out(f"{resolved}: ok · entry {desk.desk.entry} · agents: {agents} · model: {desk.model.provider}")
    for line in _limit_lines(desk):
        _out(line)
    return 0


def _limit_lines(desk: DeskConfig) -> list[str]:
    """Each limited tool an agent holds, with its limits on this desk (the tool's declaration
    with the desk file's values over it, `Tool.limits_on`): what `config check` shows."""
    from supportdesk.text import money
    from supportdesk.wiring import shipped_tools

    registry, held = shipped_tools(), {t for a in desk.agents.values() for t in a.tools}
    lines = []
    for name in sorted(held):
        tool = registry.get(name)
        limits = tool.limits_on(desk) if tool is not None else None
        if limits is None or not limits.declared():
            continue
        said = [
            *([f"level 1 up to {money(limits.limit_level1)}"] if limits.limit_level1 is not None else []),
            *([f"level 2+ up to {money(limits.limit_level2)}"] if limits.limit_level2 is not None else []),
            *([f"staff approve from {money(limits.approval_threshold)}"] if limits.approval_threshold is not None else []),
            *([f"{money(limits.limit_per_conversation)} a conversation"] if limits.limit_per_conversation is not None else []),
            *(
                [f"{money(limits.limit_per_customer)} a customer in {limits.period_days} days"]
                if limits.limit_per_customer is not None
                else []
            ),
            *([f"reasons: {'; '.join(limits.reasons)}"] if limits.reasons else []),
            *([f"window {limits.window_days} days"] if limits.window_days is not None else []),
        ]
        lines.append(f"  {name}: {', '.join(said)}")
    return lines


# --- the TUI -----------------------------------------------------------------------------------


def _tui(args: argparse.Namespace) -> int:
    # No garbage collection until the first page is drawn (the app turns it back on then, see
    # SupportDeskApp._warm_up): start-up allocates ~100,000 objects, almost none of them garbage,
    # and the collector's passes over them were 50-100 ms of the CPU before that page.
    gc.disable()
    try:
        from supportdesk.tui.app import run_app
    except ImportError as exc:
        _err(f"the terminal interface is not available in this build ({exc}); try `supportdesk run MESSAGE`")
        return 1
    # A broken desk file or database is shown by the app itself as one clear line (exit 1).
    return run_app(
        db=args.db,
        config=args.config,
        theme=getattr(args, "theme", None),
        session=getattr(args, "session", None),
        replay=getattr(args, "replay_id", None),
    ) or 0


# --- argument parsing --------------------------------------------------------------------------


def _common(default: Any) -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--db",
        metavar="PATH|URL",
        default=default,
        help="session database: a SQLite file or sqlite:///path, or postgresql://user:password@host/db "
        "(default: $SUPPORTDESK_DB or the data folder)",
    )
    common.add_argument(
        "--config", metavar="PATH", default=default, help="desk file (default: $SUPPORTDESK_CONFIG, ./agents.toml ...)"
    )
    return common


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The command line; `argv` (default: this process's) decides which plug-ins to import."""
    parser = argparse.ArgumentParser(
        prog="supportdesk",
        parents=[_common(None)],
        description="A terminal desk for multi-agent customer support.",
    )
    # Subcommands take --db/--config too; SUPPRESS keeps them from undoing `supportdesk --db X run`.
    common = _common(argparse.SUPPRESS)
    parser.add_argument("--theme", help="theme name (see the themes/ folder)")
    parser.set_defaults(func=_tui, session=None, replay_id=None)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    chat = sub.add_parser("chat", parents=[common], help="open the desk, optionally on one session")
    chat.add_argument("--session", metavar="ID")
    chat.add_argument("--theme", default=argparse.SUPPRESS)
    chat.set_defaults(func=_tui)

    replay = sub.add_parser("replay", parents=[common], help="replay a past session and step through its handoffs")
    replay.add_argument("replay_id", metavar="ID")
    replay.add_argument("--theme", default=argparse.SUPPRESS)
    replay.set_defaults(func=_tui)

    run = sub.add_parser("run", parents=[common], help="send customer messages headlessly and print what the agents do")
    run.add_argument("--session", metavar="ID", help="continue this session (default: a new one)")
    run.add_argument(
        "--json", action="store_true", help="one JSON object per appended item, and one per turn with its outcome"
    )
    run.add_argument("-v", "--verbose", action="store_true", help="also print tool calls, results and context writes")
    run.add_argument(
        "--retry", action="store_true", help="first finish the session's last turn (after a crash or a provider error)"
    )
    run.add_argument("message", nargs="*", metavar="MESSAGE", help="customer messages; - reads one from stdin")
    run.set_defaults(func=_run)

    sessions = sub.add_parser("sessions", help="list, search and show sessions")
    ssub = sessions.add_subparsers(dest="sessions_command", metavar="ACTION", required=True)
    slist = ssub.add_parser("list", parents=[common], help="sessions, newest activity first")
    slist.add_argument("--search", metavar="TEXT", help="full-text search over messages")
    slist.add_argument("--json", action="store_true")
    slist.add_argument("--limit", type=int, default=50)
    slist.set_defaults(func=_sessions_list)
    sshow = ssub.add_parser("show", parents=[common], help="one session's items")
    sshow.add_argument("id", metavar="ID")
    sshow.set_defaults(func=_sessions_show)

    export = sub.add_parser("export", parents=[common], help="a session as Markdown or JSON")
    export.add_argument("id", metavar="ID")
    export.add_argument("--format", choices=("markdown", "json"), default="markdown")
    export.add_argument("-o", "--output", metavar="FILE")
    export.set_defaults(func=_export)

    config = sub.add_parser("config", help="check a desk file")
    csub = config.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    check = csub.add_parser("check", parents=[common], help="validate agents.toml and print every problem")
    check.add_argument("path", nargs="?", metavar="PATH")
    check.set_defaults(func=_config_check)

    wanted = _requested_command(sys.argv[1:] if argv is None else argv)
    wanted_module = PLUG_INS[wanted][0] if wanted in PLUG_INS else None
    for name, (module, help_text) in PLUG_INS.items():
        if name == wanted:
            _plug_in(module, sub, common)
        elif module == wanted_module:
            continue  # the wanted command's module registered its siblings with it
        else:  # listed in --help without importing the feature (and pydantic with it)
            sub.add_parser(name, help=help_text, add_help=False)
    return parser


# Subcommands that live with their feature register themselves, but only when asked for: the
# TUI's start-up must not import them. name -> (module with a `register(sub, common)`, help).
# The help is written here only: `--help` lists a command without importing it, and a module's
# `register` gets its parser's help from this table (`_plug_in`), so the two cannot differ.
PLUG_INS: dict[str, tuple[str, str]] = {
    "eval": ("supportdesk.commands.evals", "measure routing, run scripted conversations"),
    "doctor": ("supportdesk.commands.doctor", "check the session store and the model provider: server, model and tool support"),
    "serve": ("supportdesk.channels.command", "serve the web chat and API (and configured channels) to customers"),
    "import": ("supportdesk.integrations.import_command", "import Agents SDK SQLite sessions or a Strands session folder"),
    "db": ("supportdesk.dbtools", "copy a desk between databases, check one"),
    "bench": ("supportdesk.bench.cli", "measure a desk on tau2-bench, list past runs"),
    "takeover": ("supportdesk.staff.command", "take a conversation from the agents (they stay silent)"),
    "reply": ("supportdesk.staff.command", "write to a conversation's customer as staff"),
    "release": ("supportdesk.staff.command", "give a taken conversation back to an agent"),
    "state": ("supportdesk.staff.command", "set a conversation's state: resolved, snoozed ..."),
    "tag": ("supportdesk.staff.command", "tag a conversation, remove tags, set its priority"),
    "audit": ("supportdesk.staff.command", "every staff action: who, when, from where, what"),
    "stats": ("supportdesk.reports.stats_command", "the desk's figures over a time range: a dashboard, or --json for scripts"),
    "inbox": ("supportdesk.tui.inbox_command", "every live conversation, most urgent first: approve, deny, open"),
}
# Top-level options that take a value, so their value is not taken for the command's name.
_VALUE_OPTIONS = {"--db", "--config", "--theme"}


def _requested_command(argv: list[str]) -> str | None:
    skip = False
    for token in argv:
        if skip:
            skip = False
        elif token in _VALUE_OPTIONS:
            skip = True
        elif not token.startswith("-"):
            return token
    return None


def _plug_in(module: str, sub: Any, common: argparse.ArgumentParser) -> None:
    import importlib

    register: Callable[..., None] = importlib.import_module(module).register
    register(_HelpFromPlugIns(sub), common)


class _HelpFromPlugIns:
    """The subparsers action a plug-in registers on: `add_parser` of a listed command takes
    its help from `PLUG_INS`, whatever the module says (its subcommands keep their own)."""

    def __init__(self, sub: Any) -> None:
        self._sub = sub

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        if name in PLUG_INS:
            kwargs["help"] = PLUG_INS[name][1]
        parser: argparse.ArgumentParser = self._sub.add_parser(name, **kwargs)
        return parser

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sub, name)


def _as_text(argv: list[str]) -> list[str]:
    """Arguments as text: bytes that are not UTF-8 (Python keeps them as lone surrogates,
    which nothing downstream can encode) become U+FFFD before anything is created."""
    return [arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace") for arg in argv]


# Options whose value names a file: a name that is not UTF-8 is refused, never silently replaced
# by another (U+FFFD in place of its bytes would read or write a different file).
_PATH_OPTIONS = ("--db", "--config", "-o", "--output")


def _undecodable_path(argv: list[str]) -> str | None:
    """The path option whose value is not valid UTF-8 (kept by Python as lone surrogates), if any."""
    for at, arg in enumerate(argv):
        if not any("\udc80" <= c <= "\udcff" for c in arg):
            continue
        option = argv[at - 1] if at else ""
        for name in _PATH_OPTIONS:
            if option == name or arg.startswith(f"{name}=") or (name == "-o" and arg.startswith("-o") and not arg.startswith("--")):
                return name
    return None


def main(argv: list[str] | None = None) -> int:
    raw = sys.argv[1:] if argv is None else argv
    option = _undecodable_path(raw)
    if option is not None:
        _err(f"{option}: the path is not valid UTF-8; rename the file or give a UTF-8 path")
        return EXIT_USAGE
    argv = _as_text(raw)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    func = args.func
    try:
        result = func(args)
        if isinstance(result, Coroutine):
            result = asyncio.run(result)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        return _user_error(exc)
    return int(result or 0)


def _user_error(exc: Exception) -> int:
    """A broken desk file or database is one clear message; anything else is a real bug."""
    from supportdesk.config import ConfigError
    from supportdesk.store import StoreError, StoreLocationError

    if isinstance(exc, ConfigError):
        for problem in exc.problems:
            print(safe_text(problem), file=sys.stderr)
        return EXIT_USAGE
    if isinstance(exc, StoreLocationError):  # what was typed in --db must change
        _err(str(exc))
        return EXIT_USAGE
    if isinstance(exc, StoreError):
        _err(str(exc))
        return 1
    if isinstance(exc, OSError):  # a file the command reads or writes: permission, disk full ...
        where = f"{exc.filename}: " if exc.filename else ""
        _err(f"{where}{exc.strerror or exc}; check the path, its permissions and free space")
        return 1
    raise exc


if __name__ == "__main__":
    sys.exit(main())
