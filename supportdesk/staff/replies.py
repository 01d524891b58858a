"""Saved replies and macros (`replies.toml`): what staff send often, and named lists of actions.

Two files, read in order, a later name replacing an earlier one: the examples shipped with the
package (the repo's `replies.toml`), then the user's `$XDG_CONFIG_HOME/supportdesk/replies.toml`.

    [replies.refund_done]
    text = "Hi {customer_name}, the duplicate charge is refunded."

    [macros.refund_and_close]
    steps = [{ reply = "refund_done" }, { tag = "refund" }, { state = "resolved" }]

A reply's `{field}`s are filled from the session's shared context when it is sent; a field the
context does not hold is an error before anything is sent. A macro's steps are: `reply` (a saved
reply's name), `state` (resolved, needs_staff, ai), `snooze` (a duration: 2h, 3d), `tag` (one tag
or a list), `priority`, `handoff` (an agent), `note` (a staff note). A file with mistakes is
refused with one line per mistake, as agents.toml is.
"""

from __future__ import annotations

import string
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from supportdesk.folders import config_dir
from supportdesk.items import Item, Priority
from supportdesk.staff import Actor, WhenError, parse_duration

FILE_NAME = "replies.toml"
StepKind = Literal["reply", "state", "snooze", "tag", "priority", "handoff", "note"]
STEP_KINDS: tuple[StepKind, ...] = get_args(StepKind)
MACRO_STATES = ("resolved", "needs_staff", "ai")


class RepliesError(Exception):
    """A replies file with mistakes (one line each), or a reply that cannot be sent."""

    def __init__(self, problems: Sequence[str]):
        super().__init__("\n".join(problems))
        self.problems = list(problems)


@dataclass(frozen=True)
class SavedReply:
    name: str
    text: str
    source: str

    @property
    def fields(self) -> list[str]:
        return [field for _, field, _, _ in string.Formatter().parse(self.text) if field]

    def fill(self, context: Mapping[str, Any]) -> str:
        """The text with its fields from the shared context; a missing one is a RepliesError."""
        missing = [f for f in dict.fromkeys(self.fields) if context.get(f) in (None, "")]
        if missing:
            named = ", ".join("{" + f + "}" for f in missing)
            raise RepliesError([
                f"saved reply {self.name!r} needs {named}, which the shared context does not hold; "
                f"set it with /set {missing[0]} VALUE, or write the reply yourself"
            ])
        return self.text.format_map({f: _plain(context[f]) for f in self.fields})


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


@dataclass(frozen=True)
class Step:
    kind: StepKind
    value: Any


@dataclass(frozen=True)
class Macro:
    name: str
    steps: tuple[Step, ...]
    source: str


@dataclass(frozen=True)
class Replies:
    replies: dict[str, SavedReply]
    macros: dict[str, Macro]


def user_replies_path() -> Path:
    return config_dir() / FILE_NAME


def packaged_replies_path() -> Path:
    here = Path(__file__).resolve().parent.parent  # the package's folder (this module is in staff/)
    installed = here / "data" / FILE_NAME
    return installed if installed.exists() else here.parent / FILE_NAME


def load_replies(paths: Iterable[Path] | None = None, agents: Iterable[str] | None = None) -> Replies:
    """The saved replies and macros of these files (default: shipped, then the user's); every
    mistake in every file is one line of the RepliesError."""
    files = list(paths) if paths is not None else [packaged_replies_path(), user_replies_path()]
    replies: dict[str, SavedReply] = {}
    macros: dict[str, Macro] = {}
    problems: list[str] = []
    raw_macros: list[tuple[str, str, Any]] = []
    for path in files:
        if not path.is_file():
            continue
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            problems.append(f"{path}: not valid TOML: {exc}")
            continue
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{path}: cannot be read: {exc}")
            continue
        for key in raw:
            if key not in ("replies", "macros"):
                problems.append(f"{path}: {key}: unknown table; a replies file holds [replies.NAME] and [macros.NAME]")
        for name, table in _tables(raw.get("replies", {}), f"{path}: replies", problems):
            reply = _reply(name, table, str(path), problems)
            if reply is not None:
                replies[name] = reply
        for name, table in _tables(raw.get("macros", {}), f"{path}: macros", problems):
            raw_macros.append((str(path), name, table))
    known_agents = set(agents) if agents is not None else None
    for source, name, table in raw_macros:
        macro = _macro(name, table, source, replies, known_agents, problems)
        if macro is not None:
            macros[name] = macro
    if problems:
        raise RepliesError(problems)
    return Replies(replies, macros)


def _tables(raw: Any, where: str, problems: list[str]) -> Iterable[tuple[str, dict[str, Any]]]:
    if not isinstance(raw, dict):
        problems.append(f"{where}: must be tables like [{where.rsplit(': ', 1)[-1]}.NAME]")
        return
    for name, table in raw.items():
        if not isinstance(table, dict):
            problems.append(f"{where}.{name}: must be a table")
            continue
        yield name, table


def _reply(name: str, table: dict[str, Any], source: str, problems: list[str]) -> SavedReply | None:
    where = f"{source}: replies.{name}"
    extra = sorted(set(table) - {"text"})
    if extra:
        problems.append(f"{where}: unknown key {extra[0]!r}; a saved reply has only text")
    text = table.get("text")
    if not isinstance(text, str) or not text.strip():
        problems.append(f"{where}.text: must be the reply's text")
        return None
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(text) if f is not None]
    except ValueError as exc:
        problems.append(f"{where}.text: {exc} (write {{{{ and }}}} for a literal brace)")
        return None
    bad = [f for f in fields if not f.isidentifier()]
    if bad:
        problems.append(f"{where}.text: {{{bad[0]}}} is not a field name; fields are context keys like {{customer_name}}")
        return None
    return SavedReply(name, text, source)


def _macro(
    name: str,
    table: dict[str, Any],
    source: str,
    replies: Mapping[str, SavedReply],
    agents: set[str] | None,
    problems: list[str],
) -> Macro | None:
    where = f"{source}: macros.{name}"
    extra = sorted(set(table) - {"steps"})
    if extra:
        problems.append(f"{where}: unknown key {extra[0]!r}; a macro has only steps")
    steps_raw = table.get("steps")
    if not isinstance(steps_raw, list) or not steps_raw:
        problems.append(f"{where}.steps: must be a list of steps like {{ reply = \"NAME\" }}")
        return None
    steps: list[Step] = []
    before = len(problems)
    for n, raw in enumerate(steps_raw, 1):
        at = f"{where}.steps[{n}]"
        if not isinstance(raw, dict) or len(raw) != 1:
            problems.append(f"{at}: must be one action, like {{ tag = \"vip\" }}; actions: {', '.join(STEP_KINDS)}")
            continue
        [(kind, value)] = raw.items()
        problem = _check_step(kind, value, replies, agents)
        if problem:
            problems.append(f"{at}: {problem}")
            continue
        steps.append(Step(kind, value))
    return Macro(name, tuple(steps), source) if len(problems) == before else None


def _check_step(kind: str, value: Any, replies: Mapping[str, SavedReply], agents: set[str] | None) -> str | None:
    match kind:
        case "reply":
            if value not in replies:
                return f"no saved reply {value!r}; replies: {', '.join(replies) or 'none'}"
        case "state":
            if value not in MACRO_STATES:
                return f"state {value!r}: must be one of {', '.join(MACRO_STATES)} (snooze with {{ snooze = \"2h\" }})"
        case "snooze":
            try:
                parse_duration(str(value))
            except WhenError as exc:
                return str(exc)
        case "tag":
            tags = [value] if isinstance(value, str) else value
            if not isinstance(tags, list) or not tags or not all(isinstance(t, str) and t.strip() for t in tags):
                return "tag: give a tag or a list of tags"
        case "priority":
            if value not in get_args(Priority):
                return f"priority {value!r}: must be one of {', '.join(get_args(Priority))}"
        case "handoff":
            if not isinstance(value, str) or (agents is not None and value not in agents):
                return f"no agent named {value!r}" + (f"; agents: {', '.join(sorted(agents))}" if agents else "")
        case "note":
            if not isinstance(value, str) or not value.strip():
                return "note: give the note's text"
        case _:
            return f"unknown action {kind!r}; actions: {', '.join(STEP_KINDS)}"
    return None


# --- running them ------------------------------------------------------------------------------------


async def send_reply(runner: Any, session_id: str, reply: SavedReply, by: Actor) -> Item:
    """Fill the reply from the session's shared context and send it as a staff reply."""
    context = {key: entry.value for key, entry in (await runner.store.context_at(session_id)).items()}
    return await runner.staff_reply(session_id, reply.fill(context), by)


async def run_macro(runner: Any, session_id: str, macro: Macro, replies: Replies, by: Actor) -> list[Item]:
    """Run the macro's steps in order, each a staff action recorded with the macro's name. Every
    saved reply is filled first, so a missing field stops the macro before any step runs."""
    from dataclasses import replace

    actor = replace(by, macro=macro.name)
    context = {key: entry.value for key, entry in (await runner.store.context_at(session_id)).items()}
    texts = {s.value: replies.replies[s.value].fill(context) for s in macro.steps if s.kind == "reply"}
    done: list[Item] = []
    for step in macro.steps:
        match step.kind:
            case "reply":
                done.append(await runner.staff_reply(session_id, texts[step.value], actor))
            case "state":
                done.append(await runner.set_state(session_id, step.value, by=actor))
            case "snooze":
                until = runner.store.clock() + parse_duration(str(step.value))
                done.append(await runner.set_state(session_id, "snoozed", until=until, by=actor))
            case "tag":
                tags = [step.value] if isinstance(step.value, str) else list(step.value)
                done.append(await runner.tag(session_id, tags, by=actor))
            case "priority":
                done.append(await runner.tag(session_id, priority=step.value, by=actor))
            case "handoff":
                done.append(await runner.force_handoff(session_id, step.value, f"macro {macro.name}", by=actor))
            case "note":
                done.append(await runner.staff_note(session_id, step.value, actor))
    return done
