"""The input line: customer text by default, staff commands when it starts with `/`."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from textual.suggester import SuggestFromList
from textual.widgets import Input

# name -> (arguments, what it does); the help screen and the suggester read this too.
SLASH_COMMANDS: dict[str, tuple[str, str]] = {
    "handoff": ("AGENT [reason]", "hand the conversation to an agent"),
    "note": ("TEXT", "add a staff note the agents see"),
    "set": ("KEY VALUE", "set a shared-context key (VALUE is JSON or text)"),
    "unset": ("KEY", "clear a shared-context key"),
    "approve": ("[ID]", "grant the pending approval"),
    "deny": ("[ID]", "deny the pending approval"),
    "new": ("", "start a new session"),
    "export": ("[markdown|json]", "write the transcript to a file"),
    "browse": ("", "open the session browser"),
    "replay": ("", "replay this session"),
    "retry": ("", "run the agents again (after a model error)"),
    "help": ("", "show keys and commands"),
}


class SlashError(ValueError):
    """A staff command typed wrong; the message says how to type it."""


@dataclass(frozen=True)
class Slash:
    name: str
    args: tuple[Any, ...] = ()


def usage(name: str) -> str:
    args, _ = SLASH_COMMANDS[name]
    return f"/{name} {args}".rstrip()


def parse_value(text: str) -> Any:
    """`/set` values: JSON when it parses (numbers, true, lists), else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_slash(line: str) -> Slash:
    """`/handoff billing customer asked` -> Slash("handoff", ("billing", "customer asked"))."""
    body = line.strip()[1:]
    name, _, rest = body.partition(" ")
    name, rest = name.lower(), rest.strip()
    if name not in SLASH_COMMANDS:
        known = ", ".join(f"/{n}" for n in SLASH_COMMANDS)
        raise SlashError(f"unknown command /{name}; commands: {known}")
    if name == "handoff":
        agent, _, reason = rest.partition(" ")
        if not agent:
            raise SlashError(f"usage: {usage(name)}")
        return Slash(name, (agent, reason.strip() or "staff decision"))
    if name == "note":
        if not rest:
            raise SlashError(f"usage: {usage(name)}")
        return Slash(name, (rest,))
    if name == "set":
        key, _, value = rest.partition(" ")
        if not key or not value.strip():
            raise SlashError(f"usage: {usage(name)}")
        return Slash(name, (key, parse_value(value.strip())))
    if name == "unset":
        if not rest or len(rest.split()) != 1:
            raise SlashError(f"usage: {usage(name)}")
        return Slash(name, (rest,))
    if name == "export":
        fmt = rest.lower() or "markdown"
        if fmt in ("md",):
            fmt = "markdown"
        if fmt not in ("markdown", "json"):
            raise SlashError(f"usage: {usage(name)}")
        return Slash(name, (fmt,))
    if name in ("approve", "deny"):
        words = shlex.split(rest) if rest else []
        return Slash(name, tuple(words[:1]))
    if rest:
        raise SlashError(f"usage: {usage(name)}")
    return Slash(name)


class Prompt(Input):
    """Always usable, even while agents work; suggests commands and agent names."""

    def __init__(self, agents: Iterable[str] = (), **kwargs):
        super().__init__(
            placeholder="Write as the customer · /help for staff commands",
            suggester=SuggestFromList(self.suggestions(agents), case_sensitive=False),
            **kwargs,
        )

    @staticmethod
    def suggestions(agents: Iterable[str]) -> list[str]:
        words = [f"/handoff {a} " for a in agents]
        words += [f"/{name} " if args else f"/{name}" for name, (args, _) in SLASH_COMMANDS.items()]
        words += ["/export markdown", "/export json"]
        return words
