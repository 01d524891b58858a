"""The supportdesk Textual app: opens the desk, then the chat (or replay) screen.

Public actions, used by the command palette (`supportdesk.tui.commands.DeskCommands`),
key bindings and slash commands:

- `action_new_session()`     start a new session on the chat screen
- `action_open_browser()`    push the session browser; its choice opens live or in replay
- `action_open_inbox()`      push the inbox: every live conversation, most urgent first
- `action_export()`          ask where, then write the current transcript (`.json` writes JSON)
- `open_session(session_id)` show a session live on the chat screen (closes a replay)
- `open_replay(session_id)`  replay a session read-only with a position cursor
- `force_handoff(agent)`     hand the current session to an agent (a manual handoff)
- `action_approve()` / `action_deny()`  decide the latest pending approval
- `action_add_note()`        put `/note ` in the input, ready for a staff note
- `action_open_dashboard()`  the dashboard: pictures of the desk over a time range
- `action_help()`            the help screen listing every binding
- `pick_theme()`             the theme picker (desk themes first)
- `run_slash_command(name)`  a slash command from the palette (runs it, or fills the input)
"""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import Awaitable, Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Input, Static

from supportdesk.text import safe_text

# Start-up imports only Textual and this module: the desk (pydantic models, SQLite, the
# offline model) and the chat screen's widgets load in a thread after the first frame, so
# the input is on screen and typing as fast as a bare Textual app allows.
if TYPE_CHECKING:
    from supportdesk.config import DeskConfig
    from supportdesk.engine.desk import Desk
    from supportdesk.tui.screens.browser import BrowserChoice
    from supportdesk.tui.screens.chat import ChatScreen

try:  # the palette provider and themes are built alongside; the app runs without them
    from supportdesk.tui.commands import DeskCommands

    _COMMANDS: set[Any] = {DeskCommands}
except ImportError:
    _COMMANDS = set()

try:
    from supportdesk.tui import themes as desk_themes
except ImportError:
    desk_themes = None  # type: ignore[assignment]

FALLBACK_THEME = "textual-dark"


class MessageScreen(Screen):
    """What shows while the desk opens, and the one clear line if it cannot."""

    DEFAULT_CSS = """
    MessageScreen { align: center middle; }
    MessageScreen > Static { width: auto; max-width: 90%; padding: 1 3; border: round $primary; }
    MessageScreen.-error > Static { border: round $error; }
    """
    BINDINGS = [Binding("q,escape", "app.quit", "Quit")]

    def __init__(self, text: str, *, error: bool = False):
        super().__init__(classes="-error" if error else "")
        self.text = text

    def compose(self) -> ComposeResult:
        yield Static(Text(safe_text(self.text)), markup=False)


class StartScreen(Screen):
    """The first frame: a working input while the desk opens. What is typed here is kept."""

    DEFAULT_CSS = """
    StartScreen { layout: vertical; }
    StartScreen > #opening { height: 1fr; content-align: center middle; color: $text-muted; }
    StartScreen > #queued { height: auto; max-height: 6; padding: 0 2; color: $text-muted; }
    StartScreen > Input { dock: bottom; }
    """
    BINDINGS = [Binding("ctrl+q", "app.quit", "Quit", show=False)]

    def __init__(self) -> None:
        super().__init__()
        self.queued: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static("Opening the desk… · ctrl+q quits", id="opening")
        yield Static("", id="queued")
        yield Input(placeholder="Write as the customer · /help for staff commands", id="prompt")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def _compositor_refresh(self) -> None:
        # The desk starts opening as soon as this screen's first frame is out, not at the app's
        # next refresh tick after it (call_after_refresh: ~15 ms of nothing on the way to the
        # chat screen). `_open` is exclusive, and runs once (see SupportDeskApp._open_once).
        super()._compositor_refresh()
        if isinstance(self.app, SupportDeskApp):
            self.app.call_next(self.app._open_once)

    @on(Input.Submitted)
    def queue(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        event.input.clear()
        if text:
            self.queued.append(text)
            lines = [f"queued · {line}" for line in self.queued[-5:]]
            self.query_one("#queued", Static).update(Text(safe_text("\n".join(lines))))


def _load_desk_modules() -> None:
    """The heavy imports, run in a thread so the first frame does not wait for them."""
    import supportdesk.wiring  # noqa: F401
    import supportdesk.tui.screens.chat  # noqa: F401


# How long after the desk is up the model's own warm-up starts (`_warm_model`): its ~1,000 rules
# compiled on a thread while the first pages drew slowed them by ~90 ms (bench_tui's cold start,
# 1.44x -> 1.66x the bare app), and nobody has typed a message by then.
MODEL_WARM_AFTER = 1.0


def _warm(desk: Desk) -> None:
    """What the first page did without, built in a thread once it is drawn: the model, the
    tools, and pydantic's validator for stored items (the page's rows were read without it)."""
    from supportdesk.items import build_item_validator

    desk.runner.warm()
    build_item_validator()


class SupportDeskApp(App[int]):
    TITLE = "supportdesk"
    # The chat screen's stylesheet, read with the first frame: every run shows that screen, and a
    # screen's own CSS_PATH is read when it is first shown, re-parsing every stylesheet the app
    # has and restyling what is on screen, ~20 ms of CPU on the way to the first page. (The start
    # screen's input is the chat screen's `#prompt`: it is drawn where the chat screen's will be.)
    # panes.tcss holds the session panes' styles every session screen shares (chat and replay).
    # (Absolute paths: subclasses live elsewhere.)
    CSS_PATH = [Path(__file__).parent / "screens" / "panes.tcss", Path(__file__).parent / "screens" / "chat.tcss"]
    COMMANDS = App.COMMANDS | _COMMANDS
    BINDINGS = [
        Binding("f1", "help", "Help"),
        Binding("question_mark", "help", "Help", show=False),
        Binding("ctrl+b", "open_browser", "Sessions", show=False),
        Binding("ctrl+t", "open_bench", "Bench runs", show=False),
        Binding("f4", "open_dashboard", "Dashboard", show=False, tooltip="Pictures of the desk over a time range"),
        Binding("f5", "open_inbox", "Inbox", tooltip="Every live conversation, most urgent first", show=False),
    ]
    # How many conversations need staff (the badge on every screen; kept by the store's feed).
    needing_staff: var[int] = var(0)
    # What "now" is for the inbox's waiting times (tests fix it for stable snapshots).
    clock: Callable[[], datetime] = staticmethod(lambda: datetime.now(timezone.utc))

    def __init__(
        self,
        desk: Desk | None = None,
        db: str | os.PathLike[str] | None = None,
        config: DeskConfig | str | os.PathLike[str] | None = None,
        theme: str | None = None,
        session_id: str | None = None,
        replay_id: str | None = None,
        *,
        desk_factory: Callable[[], Awaitable[Desk]] | None = None,
        export_dir: str | os.PathLike[str] | None = None,
        inbox: bool = False,
    ):
        """`desk` is an opened Desk (tests); `desk_factory` opens one inside the app's loop."""
        super().__init__()
        self.desk: Desk | None = desk
        self._desk_factory = desk_factory
        self._owns_desk = desk is None
        self._db, self._config = db, config
        self._requested_theme = theme
        self._session_id, self._replay_id = session_id, replay_id
        self.export_dir = Path(export_dir) if export_dir else None
        self.look: Any = None  # the agents' colours; set once the desk modules are loaded
        self.chat: ChatScreen | None = None
        self.exit_code = 0
        self._theme_ready = False
        self._open_inbox = inbox  # `supportdesk inbox`: open on the inbox
        self._badge_task: asyncio.Task[None] | None = None
        self._opening = False  # _open started (once: by the start screen's first frame, or on_mount)

    # --- start-up ----------------------------------------------------------------------------------

    def _readable_dim(self) -> None:
        """Dim text reaches the terminal as a readable colour (`tui/readable.py`): first in the
        line filters, before Textual's truecolor filter blends it half-way to the background."""
        from supportdesk.tui.readable import ReadableDim

        if not any(isinstance(f, ReadableDim) for f in self._filters):
            self._filters.insert(0, ReadableDim())

    def on_mount(self) -> None:
        self._readable_dim()
        self._set_up_themes()
        self.push_screen(StartScreen())
        # Started by the start screen right after its first frame, or failing that here.
        self.call_after_refresh(self._open_once)

    def _open_once(self) -> None:
        if not self._opening:
            self._opening = True
            self._open()

    def _set_up_themes(self) -> None:
        chosen = self._requested_theme
        if desk_themes is not None:
            loaded, errors = desk_themes.load_themes()
            for theme in loaded:
                self.register_theme(theme)
            for line in errors:
                self.notify(line, title="theme", severity="warning", timeout=8)
            chosen = chosen or desk_themes.remembered_theme() or desk_themes.DEFAULT_THEME
        chosen = chosen or FALLBACK_THEME
        if chosen not in self.available_themes:
            self.notify(f"no theme named {chosen!r}; using the default", severity="warning")
            chosen = desk_themes.DEFAULT_THEME if desk_themes else FALLBACK_THEME
            if chosen not in self.available_themes:
                chosen = FALLBACK_THEME
        self.theme = chosen
        self._recolor(chosen)
        self._theme_ready = True

    def watch_theme(self, name: str) -> None:
        if not self._theme_ready:
            return
        self._recolor(name)
        if desk_themes is not None:
            desk_themes.remember_theme(name)

    def _recolor(self, theme_name: str) -> None:
        if self.chat is None and self.desk is None:
            return  # nothing coloured by agent is on screen before the desk opens
        from supportdesk.tui.widgets import AgentLook

        overrides = desk_themes.agent_colors(theme_name) if desk_themes is not None else {}
        self.look = AgentLook(self.desk.config if self.desk else None, overrides)
        if self.chat is not None:
            self.chat.recolor(self.look)
        for screen in self.screen_stack:
            recolor = getattr(screen, "recolor", None)
            if recolor is not None and screen is not self.chat:
                recolor(self.look)

    @work(exclusive=True, group="open")
    async def _open(self) -> None:
        await asyncio.to_thread(_load_desk_modules)
        from supportdesk.config import ConfigError
        from supportdesk.engine.log import StoreError, StoreLocationError

        if self.desk is None:
            from supportdesk.wiring import open_desk

            try:
                if self._desk_factory is not None:
                    self.desk = await self._desk_factory()
                else:
                    # The model and the tools are built after the first page is drawn (_warm_up).
                    self.desk = await open_desk(self._db, self._config, deferred=True)
            except ConfigError as exc:
                self._fail("\n".join(exc.problems))
                return
            except StoreLocationError as exc:  # --db names a database that cannot be reached
                self._fail(str(exc), exit_code=2)
                return
            except StoreError as exc:
                self._fail(str(exc))
                return
            except Exception as exc:  # anything else still gets one line, not a traceback
                self._fail(f"cannot open the desk: {type(exc).__name__}: {exc}")
                return
        self._recolor(self.theme)
        await self._start()

    def _fail(self, text: str, exit_code: int = 1) -> None:
        gc.enable()  # no page and no warm-up will come to turn it back on
        self.exit_code = exit_code
        self.switch_screen(MessageScreen(f"{text}\n\npress q to quit", error=True))

    async def _start(self) -> None:
        from supportdesk.tui.screens.chat import ChatScreen

        session_id = await self._resolve(self._session_id) if self._session_id else None
        # What is typed while the desk opens: the start screen's input and queue are read once
        # the chat screen is ready, so keys that reached them during the switch are kept too.
        start_input, queued = None, []
        if isinstance(self.screen, StartScreen):
            start_input, queued = self.screen.query_one(Input), self.screen.queued
        assert self.desk is not None  # _open opened it before starting
        chat = ChatScreen(self.desk, self.look, session_id)
        await self.switch_screen(chat)
        # switch_screen can return before the screen's on_mount has run; turns, queued messages
        # and the palette's actions query the panes, so publish the screen once it is ready.
        await chat.ready.wait()
        self.chat = chat
        self.call_after_refresh(self._warm_up)
        await chat.take_over(start_input.value if start_input is not None else "", list(queued))
        self._start_badges()
        if self._open_inbox:
            self.action_open_inbox()
        if self._replay_id:
            replay_id = await self._resolve(self._replay_id)
            if replay_id is None:
                return
            self.open_replay(replay_id)

    @work(group="warm-up")
    async def _warm_up(self) -> None:
        """Build the model, the tool registry and the item validator, and open the business data,
        deferred until the first page was drawn."""
        from supportdesk.config import ConfigError
        from supportdesk.engine.log import StoreError

        try:
            assert self.desk is not None  # warmed up only once the chat screen is up
            await asyncio.to_thread(_warm, self.desk)
            await self.desk.services.ready()
            # What is built by now (modules, the desk, the model client) lives as long as the app:
            # the collector's full passes need not walk it again. Each walked it all (200-470 ms
            # on a busy machine), a frozen frame and a late key echo while a reply streams.
            gc.freeze()
            if not self._replay_id:
                # (not under a replay: it runs no model, and its jumps would share the GIL with it)
                self.set_timer(MODEL_WARM_AFTER, self._warm_model)
        except ConfigError as exc:  # an agent names a tool the desk does not have
            self._fail("\n".join(exc.problems))
        except StoreError as exc:  # the demo business data cannot be set up (a full disk, say)
            self._fail(str(exc))
        except Exception as exc:  # what opening the desk would have said, one line
            self._fail(f"cannot open the desk: {type(exc).__name__}: {exc}")
        finally:
            gc.enable()  # `supportdesk` starts with it off until the first page (cli._tui)

    @work(group="warm-model", thread=True, exit_on_error=False)
    def _warm_model(self) -> None:
        """The model's one-off work (`Runner.warm_model`: the offline model's readers and rules),
        which the first customer message otherwise did on the event loop, a screen frozen ~0.7 s.
        Best effort: a failure here is met again, and told, by the turn that needs the model."""
        if self.desk is not None:
            self.desk.runner.warm_model()

    def _start_badges(self) -> None:
        """The needs-staff badge on every full screen, its count kept by the store's feed."""
        from supportdesk.tui.widgets.staff_badge import badge_screen, follow_staff_count

        assert self.desk is not None  # (the desk is open: _start runs after it)
        self.screen_change_signal.subscribe(self, badge_screen)
        badge_screen(self.screen)
        # A task, not a worker: it lasts as long as the app, and waiting for workers must not wait for it.
        self._badge_task = asyncio.create_task(follow_staff_count(self, self.desk.store), name="staff badge")

    async def _resolve(self, prefix: str) -> str | None:
        assert self.desk is not None  # only the open desk resolves session ids
        info = await self.desk.store.find_session(prefix)
        if info is None:
            self.notify(f"no session {prefix!r}; see `supportdesk sessions list`", severity="error", timeout=8)
            return None
        return info.id

    async def on_unmount(self) -> None:
        if self._badge_task is not None:
            self._badge_task.cancel()
        if self._owns_desk and self.desk is not None:
            try:
                await self.desk.close()
            except Exception:
                pass

    # --- the public actions -------------------------------------------------------------------------

    def _chat_ready(self) -> ChatScreen | None:
        if self.chat is None:
            self.notify("the desk is still opening", severity="warning")
        return self.chat

    async def open_session(self, session_id: str) -> None:
        """Show `session_id` live on the chat screen (leaving replay or the browser)."""
        chat = self._chat_ready()
        if chat is None:
            return
        self._back_to(chat)
        await chat.load(session_id)

    def open_replay(self, session_id: str, position: int | None = None) -> None:
        from supportdesk.tui.screens.replay import ReplayScreen

        if self._chat_ready() is None:
            return
        self.push_screen(ReplayScreen(self.desk, self.look, session_id, position))

    async def action_new_session(self) -> None:
        chat = self._chat_ready()
        if chat is None:
            return
        self._back_to(chat)
        await chat.action_new_session()

    def _back_to(self, chat: ChatScreen) -> None:
        while self.screen is not chat and len(self.screen_stack) > 1:
            self.pop_screen()

    def action_open_browser(self) -> None:
        chat = self._chat_ready()
        if chat is None:
            return
        try:
            from supportdesk.tui.screens.browser import BrowserScreen
        except ImportError:
            self.notify("the session browser is not available in this build", severity="warning")
            return
        self.push_screen(BrowserScreen(chat.desk.store), self._browser_chose)

    def action_open_inbox(self) -> None:
        if self._chat_ready() is None:
            return
        from supportdesk.tui.screens.inbox import InboxScreen

        if not isinstance(self.screen, InboxScreen):
            self.push_screen(InboxScreen(self.desk, now=self.clock))

    def action_open_bench(self) -> None:
        """tau2-bench runs stored in this database; Enter on a task replays it beside its gold actions."""
        if self._chat_ready() is None:
            return
        from supportdesk.tui.screens.bench import BenchScreen

        self.push_screen(BenchScreen(self.desk, self.look))

    def action_open_dashboard(self) -> None:
        """Pictures of the desk over a time range: the screen of `supportdesk stats`."""
        chat = self._chat_ready()
        if chat is None:
            return
        from supportdesk.tui.screens.dashboard import DashboardScreen

        if not isinstance(self.screen, DashboardScreen):
            # "Now" is the store's clock: the one that stamps what is written (tests fix it).
            desk = chat.desk
            self.push_screen(DashboardScreen(desk.store, desk.config, clock=desk.store.clock))

    async def _browser_chose(self, choice: BrowserChoice | None) -> None:
        if not choice:
            return
        action, session_id, seq = choice  # seq: the search hit's message, if a hit was chosen
        if action == "replay":
            self.open_replay(session_id, seq)
            return
        await self.open_session(session_id)
        if seq is not None and self.chat is not None and self.chat.session_id == session_id:
            from supportdesk.tui.widgets import Conversation

            await self.chat.query_one(Conversation).reveal(seq)

    def action_export(self) -> None:
        chat = self._chat_ready()
        if chat is not None:
            chat.ask_export("markdown")

    async def force_handoff(self, agent: str, reason: str = "staff decision") -> None:
        chat = self._chat_ready()
        if chat is not None:
            await chat.force_handoff(agent, reason)

    def action_approve(self) -> None:
        chat = self._chat_ready()
        if chat is not None:
            chat.action_approve()

    def action_deny(self) -> None:
        chat = self._chat_ready()
        if chat is not None:
            chat.action_deny()

    def action_add_note(self) -> None:
        chat = self._chat_ready()
        if chat is not None:
            self._back_to(chat)
            chat.action_add_note()

    def screenshot_dir(self) -> Path:
        """Where the palette's Screenshot saves: the user's Downloads folder when it exists (as
        Textual would), else `screenshots` in the desk's data folder, made if missing."""
        from platformdirs import user_downloads_path

        from supportdesk.folders import data_dir

        downloads = user_downloads_path()
        if downloads.is_dir():
            return downloads
        folder = data_dir() / "screenshots"
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None, time_format: str | None = None) -> str | None:
        # Textual's default is ~/Downloads, and saving failed ("Failed to save screenshot",
        # nothing said about where) on a machine without one.
        if path is None:
            try:
                path = str(self.screenshot_dir())
            except OSError as exc:
                self.notify(safe_text(f"Could not make a folder for the screenshot: {exc}"), title="Screenshot", severity="error", markup=False)
                return None
        return super().deliver_screenshot(filename, path, time_format)

    def get_system_commands(self, screen: Screen) -> Any:
        # The desk's "Switch theme" lists every theme once; Textual's own would list them again.
        for command in super().get_system_commands(screen):
            if command.title != "Theme":
                yield command

    def pick_theme(self) -> None:
        from textual.command import CommandPalette

        from supportdesk.tui.commands import DeskThemes

        self.push_screen(CommandPalette(providers=[DeskThemes], placeholder="Search for themes…"))

    async def run_slash_command(self, name: str) -> None:
        """A slash command chosen in the palette: run it, or put it in the input to finish typing."""
        from supportdesk.tui.slash import COMMANDS, Slash

        chat = self._chat_ready()
        if chat is None:
            return
        self._back_to(chat)
        command = COMMANDS[name]
        if command.needs_arguments:
            chat.fill_prompt(f"/{name} ")
        else:
            await chat.run_slash(Slash(name, command.parse("") or ()))

    def action_help(self) -> None:
        try:
            from supportdesk.tui.screens.help import HelpScreen
        except ImportError:
            self.notify("help is not available in this build; the footer lists this screen's keys", severity="warning")
            return
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())


def run_app(
    db: str | os.PathLike[str] | None = None,
    config: str | os.PathLike[str] | None = None,
    theme: str | None = None,
    session: str | None = None,
    replay: str | None = None,
    inbox: bool = False,
) -> int:
    app = SupportDeskApp(db=db, config=config, theme=theme, session_id=session, replay_id=replay, inbox=inbox)
    app.run()
    return app.exit_code
