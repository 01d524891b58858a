"""Deterministic sessions for the browser and help tests and snapshots (fixed ids and clock)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Static

from supportdesk.items import ContextSet, Handoff, Message, Notice
from supportdesk.store import SessionStore
from supportdesk.tui.themes import DEFAULT_THEME, load_themes

T0 = datetime(2026, 3, 3, 10, 0, tzinfo=timezone.utc)


def fixed_clock(minutes: int) -> Any:
    return lambda: T0 + timedelta(minutes=minutes)


async def seed_sessions(store: SessionStore) -> None:
    """Three sessions; 'refund' appears in two. Newest activity: s-billing, s-login, s-hello."""
    store.clock = fixed_clock(0)
    await store.create_session("triage", session_id="s-hello")
    await store.append("s-hello", [Message(role="customer", text="hello there", agent="triage"),
                                   Message(role="agent", text="Hi! How can I help?", agent="triage")])
    store.clock = fixed_clock(5)
    await store.create_session("triage", session_id="s-login")
    await store.append(
        "s-login",
        [
            Message(role="customer", text="I cannot log in and I want a refund for this month", agent="triage"),
            Handoff(from_agent="triage", to_agent="technical", reason="login problem", agent="triage"),
            Message(role="agent", text="Let's reset your password first.", agent="technical"),
        ],
    )
    store.clock = fixed_clock(10)
    await store.create_session("triage", session_id="s-billing")
    await store.append(
        "s-billing",
        [
            Message(role="customer", text="Hi, I was charged twice for my subscription this month.", agent="triage"),
            Handoff(from_agent="triage", to_agent="billing", reason="duplicate charge", agent="triage"),
            ContextSet(key="issue", value="double charge", writer="triage", agent="billing"),
            Message(role="customer", text="I'd like a refund for the duplicate charge of $29.99.", agent="billing"),
            Message(role="agent", text="Refund of **$29.99** issued.", agent="billing"),
            Notice(notice_kind="info", text="refund done", agent="billing"),
        ],
    )


class BrowserHost(App[Any]):
    """A tiny app that hosts one screen, so the screens are tested without the real app."""

    CSS = "Screen { background: $background; }"

    def __init__(self, make_screen: Any, theme: str = DEFAULT_THEME) -> None:
        super().__init__()
        self.make_screen = make_screen
        self.results: list[Any] = []
        themes, self.theme_errors = load_themes()
        for t in themes:
            self.register_theme(t)
        self.theme = theme

    def compose(self) -> ComposeResult:
        yield Static("host")

    def on_mount(self) -> None:
        if self.make_screen is not None:  # a subclass may open its screen itself
            self.push_screen(self.make_screen(), self.results.append)


class HelpHost(BrowserHost):
    """The host with app-level bindings like the real app's, so help has something to list."""

    BINDINGS = [
        ("f1,question_mark", "help", "Help"),
        ("ctrl+b", "browse", "Sessions"),
        ("ctrl+q", "quit", "Quit"),
    ]

    def action_help(self) -> None:
        from supportdesk.tui.screens.help import HelpScreen

        self.push_screen(HelpScreen())

    def action_browse(self) -> None:
        pass
