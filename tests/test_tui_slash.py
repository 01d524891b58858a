"""The slash-command table is the only list of commands: suggestions, the palette, help and dispatch
all read it, and nothing on screen names a command it does not hold.

(Help and the palette are driven with Pilot in test_tui_help.py and test_tui_commands.py.)
"""

from __future__ import annotations

import ast
import re
from typing import Any

import pytest

from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.commands import DeskCommands
from supportdesk.tui.screens.chat import ChatScreen
from supportdesk.tui.slash import COMMANDS, SLASH_COMMANDS, Slash, SlashError, parse_slash, suggestions
from tests.conftest import REPO

TUI = REPO / "supportdesk" / "tui"
# "/word" at the start of a string or after a space, quote, bracket or colon: a command named in text.
NAMED = re.compile(r"(?:^|[\s(:'\"`])/([a-z]+)\b")


def test_each_name_is_one_row() -> None:
    assert len(COMMANDS) == len(SLASH_COMMANDS)


def test_the_input_suggests_every_command() -> None:
    offered = suggestions(["billing"])
    for command in SLASH_COMMANDS:
        assert f"/{command.name}" in {word.strip() for word in offered}
        assert set(command.completions) <= set(offered)
    assert "/handoff billing " in offered


def test_the_palette_lists_every_command_from_the_table() -> None:
    class Screen:  # the provider reads only `screen.app`
        app = object()

    rows = list(DeskCommands(Screen())._slash())  # type: ignore[arg-type]
    assert [row.text for row in rows] == [command.usage for command in SLASH_COMMANDS]
    assert [row.help for row in rows] == [command.help for command in SLASH_COMMANDS]
    assert [row.run.args[1:] for row in rows] == [("run_slash_command", command.name) for command in SLASH_COMMANDS]
    assert hasattr(SupportDeskApp, "run_slash_command")


class _Recorder:
    """Stands in for the chat screen (and its app): remembers which methods a handler calls."""

    def __init__(self, calls: list[str], prefix: str = "") -> None:
        self._calls, self._prefix = calls, prefix

    def __getattr__(self, name: str) -> Any:
        if name == "app":
            return _Recorder(self._calls, "app.")
        return lambda *args, **kwargs: self._calls.append(self._prefix + name)


# What follows each command that takes arguments, written as staff would type it.
SAMPLE_ARGUMENTS = {
    "handoff": "billing why",
    "note": "hello",
    "set": "plan gold",
    "unset": "plan",
    "state": "resolved",
    "tag": "vip -new",
    "priority": "high",
    "as": "staff",
    "reply": "greeting",
    "macro": "refund",
}


@pytest.mark.parametrize("command", SLASH_COMMANDS, ids=lambda command: command.name)
def test_every_row_dispatches_to_a_method_the_screen_or_app_has(command) -> None:
    calls: list[str] = []
    sample = SAMPLE_ARGUMENTS.get(command.name, "")
    args = command.parse(sample)
    assert args is not None, f"/{command.name} {sample!r} should parse (a new command adds to SAMPLE_ARGUMENTS)"
    assert parse_slash(f"/{command.name} {sample}".strip()) == Slash(command.name, args)
    command.run(_Recorder(calls), args)
    assert len(calls) == 1
    owner, _, method = calls[0].rpartition(".")
    assert hasattr(SupportDeskApp if owner == "app" else ChatScreen, method), calls[0]


def test_an_unknown_command_lists_the_table() -> None:
    with pytest.raises(SlashError) as raised:
        parse_slash("/frobnicate")
    assert all(f"/{command.name}" in str(raised.value) for command in SLASH_COMMANDS)


def test_every_command_named_on_screen_is_in_the_table() -> None:
    named = set()
    for path in TUI.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                named |= {(path.name, word) for word in NAMED.findall(node.value)}
    assert {word for _, word in named} >= {"approve", "deny", "retry", "note", "help"}  # the scan finds them
    assert [(where, word) for where, word in sorted(named) if word not in COMMANDS] == []
