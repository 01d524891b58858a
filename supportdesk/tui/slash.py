"""The staff's slash commands, defined once: name, arguments, help, how to read the arguments
and what runs them. The input's suggestions, the help screen (F1), the command palette and the
chat screen's dispatch all read `SLASH_COMMANDS`, so a command added here appears everywhere.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from supportdesk.tui.app import SupportDeskApp
    from supportdesk.tui.screens.chat import ChatScreen


class SlashError(ValueError):
    """A staff command typed wrong; the message says how to type it."""


@dataclass(frozen=True)
class Slash:
    """A parsed command line: which command and its arguments."""

    name: str
    args: tuple[Any, ...] = ()


def parse_value(text: str) -> Any:
    """`/set` values: JSON when it parses (numbers, true, lists), else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


# --- how each command reads what follows its name ("rest"); None means "usage error" ---------------


def _no_arguments(rest: str) -> tuple[Any, ...] | None:
    return None if rest else ()


def _handoff(rest: str) -> tuple[Any, ...] | None:
    agent, _, reason = rest.partition(" ")
    return (agent, reason.strip() or "staff decision") if agent else None


def _text(rest: str) -> tuple[Any, ...] | None:
    return (rest,) if rest else None


def _key_value(rest: str) -> tuple[Any, ...] | None:
    key, _, value = rest.partition(" ")
    return (key, parse_value(value.strip())) if key and value.strip() else None


def _one_key(rest: str) -> tuple[Any, ...] | None:
    return (rest,) if rest and len(rest.split()) == 1 else None


def _optional_id(rest: str) -> tuple[Any, ...] | None:
    try:
        words = shlex.split(rest) if rest else []
    except ValueError:
        return None
    return tuple(words[:1])


def _optional_text(rest: str) -> tuple[Any, ...] | None:
    return (rest,)


STATES = ("resolved", "snoozed", "needs_staff", "ai")
PRIORITIES = ("none", "low", "medium", "high", "urgent")


def _state(rest: str) -> tuple[Any, ...] | None:
    state, _, when = rest.partition(" ")
    if state not in STATES or (state == "snoozed") != bool(when.strip()):
        return None
    return (state, when.strip() or None)


def _tags(rest: str) -> tuple[Any, ...] | None:
    words = rest.split()
    if not words:
        return None
    added = tuple(w for w in words if not w.startswith("-"))
    removed = tuple(w[1:] for w in words if w.startswith("-") and len(w) > 1)
    return (added, removed)


def _priority(rest: str) -> tuple[Any, ...] | None:
    return (rest,) if rest in PRIORITIES else None


def _write_as(rest: str) -> tuple[Any, ...] | None:
    return (rest,) if rest in ("customer", "staff") else None


def _export_format(rest: str) -> tuple[Any, ...] | None:
    fmt = {"": "markdown", "md": "markdown"}.get(rest.lower(), rest.lower())
    return (fmt,) if fmt in ("markdown", "json") else None


Handler = Callable[["ChatScreen", tuple[Any, ...]], Awaitable[None] | None]


@dataclass(frozen=True)
class SlashCommand:
    name: str
    arguments: str  # how the arguments are written, for usage lines: "AGENT [reason]"
    help: str  # one line, what it does
    parse: Callable[[str], tuple[Any, ...] | None]
    run: Handler
    completions: tuple[str, ...] = ()  # whole lines the input suggests beyond "/name "

    @property
    def usage(self) -> str:
        return f"/{self.name} {self.arguments}".rstrip()

    @property
    def needs_arguments(self) -> bool:
        """Whether the command cannot run without something typed after it."""
        return self.parse("") is None


SLASH_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("handoff", "AGENT [reason]", "Give the conversation to AGENT now (a manual handoff)",
                 _handoff, lambda screen, args: screen.force_handoff(*args)),
    SlashCommand("note", "TEXT", "Add a staff note: the agents see it, the customer does not",
                 _text, lambda screen, args: screen.staff_note(*args)),
    SlashCommand("set", "KEY VALUE", "Set a shared-context key (VALUE is JSON or text)",
                 _key_value, lambda screen, args: screen.set_context(*args)),
    SlashCommand("unset", "KEY", "Clear a shared-context key",
                 _one_key, lambda screen, args: screen.set_context(args[0], None)),
    SlashCommand("takeover", "[reason]", "Take the conversation from the agents: they stay silent until /release",
                 _optional_text, lambda screen, args: screen.take_over_conversation(*args)),
    SlashCommand("release", "[AGENT] [summary]", "Give it back (to the agent that held it, or AGENT) with a summary it reads",
                 _optional_text, lambda screen, args: screen.release_conversation(*args)),
    SlashCommand("state", "resolved|snoozed WHEN|needs_staff|ai", "Set the conversation's state (WHEN: 2h, 3d or an ISO time)",
                 _state, lambda screen, args: screen.set_state(*args),
                 completions=("/state resolved", "/state snoozed 2h", "/state needs_staff", "/state ai")),
    SlashCommand("tag", "TAG... [-TAG...]", "Tag the conversation (-TAG removes a tag)",
                 _tags, lambda screen, args: screen.tag(*args)),
    SlashCommand("priority", "none|low|medium|high|urgent", "Set the conversation's priority",
                 _priority, lambda screen, args: screen.set_priority(*args),
                 completions=tuple(f"/priority {p}" for p in PRIORITIES)),
    SlashCommand("as", "customer|staff", "Write as the customer or as staff (local sessions; F7 toggles)",
                 _write_as, lambda screen, args: screen.set_write_as(*args),
                 completions=("/as customer", "/as staff")),
    SlashCommand("reply", "NAME", "Send a saved reply (replies.toml) to the customer, filled from the shared context",
                 _one_key, lambda screen, args: screen.send_saved_reply(*args)),
    SlashCommand("macro", "NAME", "Run a macro (replies.toml): replies, states, tags, handoffs, notes, in order",
                 _one_key, lambda screen, args: screen.run_macro(*args)),
    SlashCommand("approve", "[ID]", "Grant the pending approval (the latest, or ID)",
                 _optional_id, lambda screen, args: screen.decide(True, *args)),  # type: ignore[has-type]  # @work hides it from the checker across the import circle
    SlashCommand("deny", "[ID]", "Deny the pending approval (the latest, or ID)",
                 _optional_id, lambda screen, args: screen.decide(False, *args)),  # type: ignore[has-type]
    SlashCommand("withdraw", "", "Withdraw the offer waiting for the customer's yes: it can no longer be confirmed",
                 _no_arguments, lambda screen, args: screen.withdraw_offer()),
    SlashCommand("new", "", "Start a new session",
                 _no_arguments, lambda screen, args: screen.action_new_session()),
    SlashCommand("export", "[markdown|json]", "Export the transcript (asks where; Markdown by default)",
                 _export_format, lambda screen, args: screen.ask_export(*args),
                 completions=("/export markdown", "/export json")),
    SlashCommand("browse", "", "Open the session browser",
                 _no_arguments, lambda screen, args: cast("SupportDeskApp", screen.app).action_open_browser()),
    SlashCommand("replay", "", "Replay this session from its start",
                 _no_arguments, lambda screen, args: screen.action_replay()),
    SlashCommand("retry", "", "Run the agents again on the last customer message",
                 _no_arguments, lambda screen, args: screen.action_retry()),
    SlashCommand("help", "", "Show keys and commands",
                 _no_arguments, lambda screen, args: cast("SupportDeskApp", screen.app).action_help()),
)  # fmt: skip

COMMANDS: dict[str, SlashCommand] = {command.name: command for command in SLASH_COMMANDS}


def parse_slash(line: str) -> Slash:
    """`/handoff billing customer asked` -> Slash("handoff", ("billing", "customer asked"))."""
    name, _, rest = line.strip()[1:].partition(" ")
    command = COMMANDS.get(name.lower())
    if command is None:
        known = ", ".join(c.usage.split()[0] for c in SLASH_COMMANDS)
        raise SlashError(f"unknown command /{name}; commands: {known}")
    args = command.parse(rest.strip())
    if args is None:
        raise SlashError(f"usage: {command.usage}")
    return Slash(command.name, args)


def suggestions(agents: Any) -> list[str]:
    """What the input completes as staff type: each command, agents after /handoff, fixed lines."""
    words = [f"/handoff {agent} " for agent in agents]
    for command in SLASH_COMMANDS:
        words.append(f"/{command.name} " if command.arguments else f"/{command.name}")
        words += command.completions
    return words
