"""The command palette's desk provider: sessions, agents and actions by name.

Session titles are customer text, so hits are built as `Content` objects (literal text with
match styles laid on top), never through markup, which `Matcher.highlight` would parse.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
import inspect
from dataclasses import dataclass
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content

from supportdesk.text import counted, one_line, safe_text
from supportdesk.tui.slash import SLASH_COMMANDS
from supportdesk.tui.themes import loaded_theme_names, remember_setting, remembered_setting

# How many sessions the palette offers (newest activity first); the browser has them all.
SESSION_LIMIT = 200


@dataclass(frozen=True)
class Command:
    text: str
    help: str
    run: Callable[[], Any]
    # Customer-written text (session titles) is shown literally.
    literal: bool = False


async def _call(app: Any, method: str, *args: Any) -> None:
    """Run an app method (sync or async) if the app has it; the palette awaits this."""
    target = getattr(app, method, None)
    if callable(target):
        result = target(*args)
        if inspect.isawaitable(result):
            await result


def _highlight(matcher: Matcher, text: str) -> Content:
    content = Content(text)
    score, offsets = matcher.fuzzy_search.match(matcher.query, text)
    if score:
        for offset in offsets:
            if not text[offset].isspace():
                content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


class DeskCommands(Provider):
    """Offers what staff do at the desk by name; sessions come from the app's store."""

    async def startup(self) -> None:
        self._sessions: list[Command] = []
        desk = getattr(self.app, "desk", None)
        if desk is None:
            return  # still loading: actions only
        try:
            infos = await desk.store.list_sessions(limit=SESSION_LIMIT)
        except Exception:  # a busy or closing database: the palette still offers actions
            return
        for info in infos:
            title = one_line(safe_text(info.title or "Untitled session"), 70)
            self._sessions.append(
                Command(
                    f"Open session: {title}",
                    f"{info.id} · {info.active_agent} · {counted(info.handoff_count, 'handoff')} · {info.status}",
                    partial(_call, self.app, "open_session", info.id),
                    literal=True,
                )
            )

    def _agents(self) -> Iterable[Command]:
        desk = getattr(self.app, "desk", None)
        if desk is None:
            return
        for name, agent in desk.config.agents.items():
            yield Command(
                f"Hand off to {agent.title}",
                f"Give the conversation to {agent.title} (level {agent.level}) now",
                partial(_call, self.app, "force_handoff", name),
            )

    def _actions(self) -> Iterable[Command]:
        app = self.app
        yield Command("New session", "Start a fresh conversation", partial(_call, app, "action_new_session"))
        yield Command("Open inbox", "Every live conversation, most urgent first (F5)", partial(_call, app, "action_open_inbox"))
        yield Command("Open session browser", "Browse, search, replay, fork and delete sessions", partial(_call, app, "action_open_browser"))
        yield Command(
            "Open dashboard",
            "Pictures of the desk: conversations per agent, handoffs, waits, refunds, errors, tokens",
            partial(_call, app, "action_open_dashboard"),
        )
        yield Command("Export transcript", "Write the current session as Markdown or JSON", partial(_call, app, "action_export"))
        yield Command("Approve pending approval", "Let the waiting tool call go ahead", partial(_call, app, "action_approve"))
        yield Command("Deny pending approval", "Refuse the waiting tool call", partial(_call, app, "action_deny"))
        yield Command("Add staff note", "A note the agents see, the customer does not", partial(_call, app, "action_add_note"))
        # One entry for every theme (Textual's own "Theme" command is left out of the palette).
        yield Command("Switch theme", "Pick a theme: the desk's first, then Textual's (remembered)", partial(_call, app, "pick_theme"))
        bell = remembered_setting("bell", False) is True
        yield Command(
            f"Bell when staff are needed: turn {'off' if bell else 'on'}",
            "Ring the terminal bell when a conversation needs staff (remembered)",
            partial(remember_setting, "bell", not bell),
        )

    def _slash(self) -> Iterable[Command]:
        """The slash commands, from the same table as the input's dispatch and help."""
        for command in SLASH_COMMANDS:
            yield Command(command.usage, command.help, partial(_call, self.app, "run_slash_command", command.name))

    def _all(self) -> list[Command]:
        return [*self._actions(), *self._agents(), *self._slash(), *self._sessions]

    async def discover(self) -> Hits:
        for command in self._all():
            if not command.literal:
                yield DiscoveryHit(command.text, command.run, text=command.text, help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._all():
            score = matcher.match(command.text)
            if score > 0:
                display = _highlight(matcher, command.text) if command.literal else matcher.highlight(command.text)
                yield Hit(score, display, command.run, text=command.text, help=command.help)



def themes_in_order(available: Iterable[str]) -> list[str]:
    """Every registered theme once: the desk's theme files first (as loaded), then the rest by name."""
    names = set(available)
    desk = [name for name in loaded_theme_names() if name in names]
    return desk + sorted(names - set(desk))


class DeskThemes(Provider):
    """The theme picker behind "Switch theme": each theme once, desk themes first."""

    def _themes(self) -> list[str]:
        return themes_in_order(self.app.available_themes)

    async def discover(self) -> Hits:
        for name in self._themes():
            yield DiscoveryHit(name, partial(setattr, self.app, "theme", name), text=name)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name in self._themes():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), partial(setattr, self.app, "theme", name), text=name)
