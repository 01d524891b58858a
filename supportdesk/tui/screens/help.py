"""The help screen: the keys active where it was opened from, and the slash commands.

The bindings are read from the screen below at the moment help opens (its focused widget,
the screen and the app), so the list is always the truth about what the keys do right there.
"""

from __future__ import annotations

import re

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, Static, TextArea

from supportdesk.tui.slash import SLASH_COMMANDS

# One width for the key column of every table, so the sections line up.
KEY_WIDTH = 14
USAGE_WIDTH = 24
# Below this width the keys and the commands stack instead of sitting side by side.
SIDE_BY_SIDE = 100
# Editing widgets bring dozens of generic keys (word left, delete to end…) that every input has.
EDITING_WIDGETS = (Input, TextArea)
# What every Textual screen binds (focus next/previous, copy): listed after a screen's own keys.
GENERIC_SCREEN_ACTIONS = frozenset(binding.action for binding in Binding.make_bindings(Screen.BINDINGS))


def usage_lines(usage: str, width: int) -> str:
    """A command's usage on lines of at most `width`, broken at spaces or after a "|" between
    choices (the table cut "/priority none|low|medium|high|urgent" to "…high|ur…")."""
    pieces = re.findall(r"[^ |]*\|?(?: |$)?", usage)
    lines, line = [], ""
    for piece in (p for p in pieces if p):
        if line and len((line + piece).rstrip()) > width:
            lines.append(line.rstrip())
            line = "  "
        line += piece
    lines.append(line.rstrip())
    return "\n".join(lines)


def _group_title(node: object) -> str:
    title = getattr(node, "BINDING_GROUP_TITLE", None)
    if title:
        return str(title)
    from textual.app import App

    if isinstance(node, App):
        return "Everywhere"
    # "SessionTable" -> "Session table"
    words = re.findall(r"[A-Z][a-z0-9]*|[a-z0-9]+", type(node).__name__)
    title = " ".join(words).capitalize().removesuffix(" screen")
    return title or type(node).__name__


class HelpScreen(ModalScreen[None]):
    """Lists the active bindings with their descriptions, then the slash commands."""

    BINDINGS = [
        Binding("escape,q", "close", "Close help"),
    ]
    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        background: $background 60%;
    }
    HelpScreen > #help {
        width: 116;
        max-width: 95%;
        height: 90%;
        background: $surface;
        border: thick $primary 60%;
        border-title-color: $primary;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        padding: 0 1;
    }
    HelpScreen #help-body {
        height: 1fr;
        scrollbar-size-vertical: 1;
    }
    HelpScreen #help-columns { height: auto; }
    HelpScreen #help-keys { width: 46; height: auto; padding-right: 2; }
    HelpScreen #help-commands { width: 1fr; height: auto; }
    HelpScreen.-narrow #help-columns { layout: vertical; }
    HelpScreen.-narrow #help-keys { width: 1fr; padding-right: 0; }
    HelpScreen .help-note { color: $text-muted; }
    HelpScreen .help-heading {
        color: $accent;
        text-style: bold;
        margin-top: 1;
    }
    """

    def __init__(self, below: Screen[object] | None = None) -> None:
        super().__init__()
        # Which screen's keys to list; by default the one under this modal when it opens.
        self._below = below

    def compose(self) -> ComposeResult:
        with Vertical(id="help") as box:
            box.border_title = "Keys and commands"
            box.border_subtitle = "Esc or q closes"
            with VerticalScroll(id="help-body"), Horizontal(id="help-columns"):
                with Vertical(id="help-keys"):
                    for title, table in self._binding_tables():
                        yield Static(Text(title), classes="help-heading")
                        yield Static(table, classes="help-table")
                with Vertical(id="help-commands"):
                    yield Static(Text("Slash commands"), classes="help-heading")
                    yield Static(Text(self._slash_note(), style="italic"), classes="help-note")
                    yield Static(self._slash_table(), classes="help-table", id="slash-commands")
                    yield Static(Text("Command palette"), classes="help-heading")
                    yield Static(
                        Text("Ctrl+P finds sessions, agents (hand off to …), actions and themes by name."),
                        classes="help-note",
                    )

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()

    def on_resize(self) -> None:
        self.set_class(self.size.width < SIDE_BY_SIDE, "-narrow")

    def _slash_note(self) -> str:
        below = self._screen_below()
        if below is not None and below.query("#prompt"):
            return "Type them in the message box."
        return "Type them in the chat screen's message box (this screen has none)."

    def _screen_below(self) -> Screen[object] | None:
        if self._below is not None:
            return self._below
        stack = self.app.screen_stack
        if self in stack:
            index = stack.index(self)
            return stack[index - 1] if index > 0 else None
        return stack[-1] if stack else None

    def binding_rows(self) -> list[tuple[str, list[tuple[str, str, bool]]]]:
        """[(group title, [(keys, description, enabled)])] for the screen below, in display order."""
        below = self._screen_below()
        if below is None:
            return []
        # (group, description) -> the keys that do it, so ctrl+c and super+c share one row.
        groups: dict[str, dict[tuple[str, bool], list[str]]] = {}
        # Keys shown in the footer first: they are the ones people look for; every screen's
        # focus and copy keys (Textual's own) last.
        actives = sorted(
            below.active_bindings.values(),
            key=lambda active: (not active.binding.show, active.binding.action in GENERIC_SCREEN_ACTIONS),
        )
        for active in actives:
            binding = active.binding
            if not binding.description or binding.system or isinstance(active.node, EDITING_WIDGETS):
                continue
            # The footer shows the short description; help the longer tooltip when there is one.
            description = "Command palette" if binding.action == "command_palette" else binding.tooltip or binding.description
            rows = groups.setdefault(_group_title(active.node), {})
            rows.setdefault((description, active.enabled), []).append(self.app.get_key_display(binding))
        # The screen's own keys first, then the app's, then the focused widget's (mostly navigation).
        here = _group_title(below)
        order = sorted(groups, key=lambda title: 0 if title == here else 1 if title == "Everywhere" else 2)
        return [
            (title, [(", ".join(dict.fromkeys(keys)), description, enabled) for (description, enabled), keys in groups[title].items()])
            for title in order
        ]

    def _binding_tables(self) -> list[tuple[str, Table]]:
        tables = []
        for title, rows in self.binding_rows():
            table = self._table()
            for keys, description, enabled in rows:
                style = "" if enabled else "dim"
                table.add_row(
                    Text(keys, style=f"bold {style}".strip()),
                    Text(description + ("" if enabled else " (not available now)"), style=style),
                )
            tables.append((title, table))
        return tables

    def _slash_table(self) -> Table:
        table = self._table(USAGE_WIDTH)
        for command in SLASH_COMMANDS:
            table.add_row(Text(usage_lines(command.usage, USAGE_WIDTH), style="bold"), Text(command.help))
        return table

    @staticmethod
    def _table(first_width: int = KEY_WIDTH) -> Table:
        table = Table.grid(padding=(0, 2), expand=False)
        table.add_column(min_width=first_width, max_width=first_width)
        table.add_column(ratio=1)
        return table

    def action_close(self) -> None:
        self.dismiss(None)


__all__ = ["HelpScreen"]
