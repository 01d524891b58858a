"""The session browser: every session, newest activity first; full-text search; row actions.

Filters narrow the list as the inbox's do, on keys that type nothing (letters search): ctrl+s
cycles the state groups (desk_state's `STATE_GROUPS`), ctrl+l the tags and priorities in use. The
store pages through the filtered list (`Store.desk` with a `DeskFilter`), so a filter reaches every
session, not only the page on screen; a search lists every matching message, whatever the filters.

The browser reads only the store (a page of sessions, or search hits) and answers with what
the user chose, a `BrowserChoice`: `("open", id, seq)` or `("replay", id, seq)`, where `seq` is
the matching message of a search hit (None for a plain session row); the app acts on it. Fork, export and delete happen here. Titles and snippets are customer text: they are
built as `rich.text.Text` (literal), never as markup.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.reactive import var
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widgets import Button, DataTable, Input, Label, Static
from textual.widgets.button import ButtonVariant
from textual.worker import Worker

from supportdesk.folds.desk_state import STATE_GROUPS, ConversationState, DeskFilter, StateGroup
from supportdesk.engine.log import Change, SearchHit, SessionInfo, Store, StoreError
from supportdesk.items import utcnow
from supportdesk.text import clip_words, one_line, safe_text
from supportdesk.tui.exporting import default_export_dir, write_export
from supportdesk.tui.screens._feed import FollowsChanges
from supportdesk.tui.screens.inbox import tags_text
from supportdesk.tui.seen import seen_counts, unseen
from supportdesk.tui.themes import agent_colors
from supportdesk.tui.widgets.footer import DeskFooter



class BrowserChoice(NamedTuple):
    """The browser's answer: open `session_id` live or replay it, at message `seq` if a hit chose it."""

    action: str  # "open" or "replay"
    session_id: str
    seq: int | None = None


# How long typing must pause before the search runs (one query per pause, not per key).
SEARCH_DEBOUNCE = 0.25
# The least width of the wide column; it grows with the terminal.
TITLE_WIDTH = 16
SNIPPET_WIDTH = 30
SEARCH_PLACEHOLDER = "Search all messages · / to focus · Enter: results"
# At most this much of a title cell goes to the session's tags and priority.
TAGS_WIDTH = 18


def _one_line(text: str, width: int) -> str:
    return one_line(safe_text(text), width)


def typed_character(screen: Screen[Any], event: events.Key) -> str | None:
    """The character a key press types, if it is printable and no binding where it was pressed claims it."""
    if not event.is_printable or not event.character or event.key in screen.active_bindings:
        return None
    return event.character


def _when(info_time: Any) -> str:
    return f"{info_time:%Y-%m-%d %H:%M}"


@dataclass(frozen=True)
class Column:
    label: str
    key: str
    width: int = 0  # 0: the wide column, which takes what the others leave
    drop: int = 0  # 0: always shown; else dropped when the terminal is narrow, the highest first


# Marks before a title: ! the session needs staff, ● activity not seen in this terminal yet.
NEEDS_STAFF = {"awaiting_approval": "needs approval", "needs_human": "needs a human"}

# A narrow terminal keeps what tells sessions apart and what to do about them (title, status, id)
# and drops the handoff count first, then the agent, then the start time.
SESSION_COLUMNS = (
    Column("Title", "title"),
    Column("Started", "started", 16, drop=3),
    Column("Agent", "agent", 10, drop=4),
    Column("Handoffs", "handoffs", 8, drop=5),
    Column("Status", "status", 14),
    Column("ID", "id", 12, drop=1),
)
HIT_COLUMNS = (
    Column("Session", "title", 26),
    Column("#", "seq", 5),
    Column("Matching message", "snippet"),
    Column("Agent", "agent", 10, drop=1),
    Column("ID", "id", 12, drop=2),
)


@dataclass(frozen=True)
class Row:
    """What a table row stands for: a session (seq None) or one search hit in it."""

    session_id: str
    seq: int | None = None


class SessionTable(DataTable[Any]):
    """The sessions (or hits) table; Enter opens, so the footer says so.

    Typing at the table searches: a letter or digit, or any printable key that no binding claims,
    moves the focus to `type_into` (the search box) and goes there, as if `/` had been pressed first. Keys typed
    fast arrive here even after the focus has moved (the app routed them before the first one
    was handled); until the table has the focus again they all follow the first one, bound or
    not, so a quickly typed "parcel" does not replay at its "r".
    """

    BINDING_GROUP_TITLE = "Session list"
    BINDINGS = [Binding("enter", "select_cursor", "Open", show=True)]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.type_into: Input | None = None
        self._typing_elsewhere = False

    def on_focus(self) -> None:
        self._typing_elsewhere = False

    def on_key(self, event: events.Key) -> None:
        target = self.type_into
        if target is None or not self.screen.is_current or not event.is_printable or not event.character:
            return
        if not self._typing_elsewhere and not event.character.isalnum() and event.key in self.screen.active_bindings:
            return  # a bound symbol (/, [, ]) or one of the app's (?); letters and digits always search
        event.stop()
        event.prevent_default()
        self._typing_elsewhere = True
        # set_focus posts the focus event now (focus() would defer it), so the search box
        # handles it first: it selects the old query, which the key then replaces, as after `/`.
        self.screen.set_focus(target)
        target.post_message(events.Key(event.key, event.character))

    def on_paste(self, event: events.Paste) -> None:
        if self.type_into is not None and event.text:
            event.stop()
            self.screen.set_focus(self.type_into)
            self.type_into.post_message(events.Paste(event.text))


# --- modals -------------------------------------------------------------------------------------


class Dialog(ModalScreen[Any]):
    """A small centred box over the browser."""

    DEFAULT_CSS = """
    Dialog {
        align: center middle;
        background: $background 60%;
    }
    Dialog > .dialog {
        width: 64;
        max-width: 100%;
        height: auto;
        padding: 1 2;
        background: $surface;
        border: thick $primary 60%;
    }
    Dialog .dialog-title { text-style: bold; width: 100%; margin-bottom: 1; }
    Dialog .dialog-body { margin-bottom: 1; }
    Dialog .dialog-buttons { height: auto; align-horizontal: right; margin-top: 1; }
    Dialog .dialog-buttons Button { margin-left: 1; }
    """


class Confirm(Dialog):
    """A yes/no question about one session, answered True or False.

    `y` (or Enter on the yes button, or a click) says yes; `n`, Esc or the Cancel button say no.
    Any other printable key also says no: someone typing a word past the row key that opened
    the dialog (d, f) must never reach the `y` in it.
    """

    QUESTION = ""
    YES_LABEL = "Yes"
    YES_ID = "yes"  # the yes button's id
    YES_VARIANT: ButtonVariant = "primary"
    FOCUS_YES = False  # which button has the focus, so what Enter does

    def __init__(self, session_id: str, title: str) -> None:
        super().__init__()
        self.session_id = session_id
        self.session_title = title

    def consequence(self) -> str:
        """What happens on yes, in one or two plain sentences."""
        return ""

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Label(self.QUESTION, classes="dialog-title")
            question = Text.assemble(
                (_one_line(self.session_title or "Untitled session", 60), "bold"),
                "\n",
                (self.session_id, "dim"),
                "\n\n",
                self.consequence(),
            )
            yield Static(question, classes="dialog-body")
            with Horizontal(classes="dialog-buttons"):
                yield Button(self.YES_LABEL, variant=self.YES_VARIANT, id=self.YES_ID)
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one(f"#{self.YES_ID}" if self.FOCUS_YES else "#cancel", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.action_answer(event.button.id == self.YES_ID)

    def action_answer(self, answer: bool) -> None:
        # Keys typed in a burst can arrive after the first answer; dismissing twice would
        # close the screen below too.
        if self.is_current:
            self.dismiss(answer)

    def on_key(self, event: events.Key) -> None:
        if typed_character(self, event) is not None:
            event.stop()
            self.action_answer(False)


class ConfirmDelete(Confirm):
    """Asks before a session is deleted for good. Cancel has the focus: the safe default."""

    DEFAULT_CSS = """
    ConfirmDelete > .dialog { border: thick $error 70%; }
    """
    BINDINGS = [
        Binding("y", "answer(True)", "Delete"),
        Binding("n,escape", "answer(False)", "Cancel"),
    ]
    QUESTION = "Delete this session?"
    YES_LABEL = "Delete"
    YES_ID = "delete"
    YES_VARIANT = "error"

    def consequence(self) -> str:
        return "Its whole log goes; forks of it stay."


class ConfirmFork(Confirm):
    """Asks before a session is forked. Nothing is lost either way, so Fork has the focus."""

    BINDINGS = [
        Binding("y", "answer(True)", "Fork"),
        Binding("n,escape", "answer(False)", "Cancel"),
    ]
    QUESTION = "Fork this session?"
    YES_LABEL = "Fork"
    YES_ID = "fork"
    FOCUS_YES = True

    def __init__(self, session_id: str, title: str, item_count: int) -> None:
        super().__init__(session_id, title)
        self.item_count = item_count

    def consequence(self) -> str:
        items = "item" if self.item_count == 1 else "items"
        return f"A new session gets a copy of its {self.item_count} {items} and opens live; this one stays as it is."


class ExportDialog(Dialog):
    """Where to write the export; the file's suffix picks the format (.json, else Markdown)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, default_path: Path) -> None:
        super().__init__()
        self.default_path = default_path

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Label("Export session", classes="dialog-title")
            yield Static("Path (.md writes Markdown, .json writes JSON):", classes="dialog-body")
            yield Input(str(self.default_path), id="path")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Markdown", variant="primary", id="markdown")
                yield Button("JSON", id="json")
                yield Button("Cancel", id="cancel")

    def _path(self) -> Path | None:
        text = self.query_one("#path", Input).value.strip()
        return Path(text).expanduser() if text else None

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.dismiss(self._path())

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        path = self._path()
        if event.button.id == "cancel" or path is None:
            self.dismiss(None)
        else:
            self.dismiss(path.with_suffix(".json" if event.button.id == "json" else ".md"))

    def action_cancel(self) -> None:
        self.dismiss(None)


# --- the browser --------------------------------------------------------------------------------


class BrowserScreen(FollowsChanges[BrowserChoice | None]):
    """All sessions, paged, newest activity first, with search and row actions."""

    # Absolute, so a subclass defined elsewhere still finds it.
    CSS_PATH = Path(__file__).with_name("browser.tcss")
    BINDING_GROUP_TITLE = "Session browser"
    # Row actions are on keys that type nothing: every letter and digit at the table searches.
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("ctrl+r", "replay", "Replay"),
        Binding("ctrl+f", "fork", "Fork"),
        Binding("ctrl+o", "export", "Export"),
        Binding("delete", "delete", "Delete"),
        # Not in the footer (it must fit 80 columns): the search box's placeholder says "/".
        Binding("slash", "focus_search", "Search", show=False),
        # From the search box, ↓ goes on to the results (the table's own ↓ moves its cursor).
        Binding("down", "focus_results", "Go to the results", show=False),
        Binding("right_square_bracket", "page(1)", "Next page", show=False),
        Binding("left_square_bracket", "page(-1)", "Prev page", show=False),
        # The inbox's s and l, with ctrl (letters search here); listed in help (F1) and the status line.
        Binding("ctrl+s", "cycle_state", "State filter", show=False,
                tooltip="Filter by state: all, needs staff, working, waiting, idle"),
        Binding("ctrl+l", "cycle_tag", "Tag filter", show=False, tooltip="Filter by tag (and priority)"),
    ]

    PAGE_SIZE = 50
    # Changes within this long of the first are shown by one reload (seconds).
    FEED_SETTLE = 0.2
    SEARCH_LIMIT = 100

    page: var[int] = var(0)
    total: var[int] = var(0)
    query_text: var[str] = var("")
    state_filter: var[StateGroup] = var[StateGroup]("all", init=False)
    tag_filter: var[str] = var("", init=False)  # "#tag" or "!priority", as the inbox writes them

    def __init__(self, store: Store, config: Any = None, *, export_dir: Path | None = None) -> None:
        super().__init__()
        self.store = store
        self.config = config
        self.export_dir = export_dir
        self._rows: dict[str, Row] = {}
        self._sessions: dict[str, SessionInfo] = {}
        self._states: dict[str, ConversationState] = {}
        self._debounce: Timer | None = None
        self._reload_soon: Timer | None = None
        # The search running now and its text: a new query cancels it at the first key, not
        # after the debounce, and cancelling stops the store's statement (it does not run on).
        self._searching: Worker[None] | None = None
        self._searching_for = ""
        self._search_abandoned = False

    def compose(self) -> ComposeResult:
        with Horizontal(id="topbar"):
            yield Static(Text("Sessions", style="bold"), id="heading")
            yield Static(id="status")
        # Short enough to show whole at 60 columns ("… Enter to g" was cut there).
        yield Input(placeholder=SEARCH_PLACEHOLDER, id="search")
        yield SessionTable(id="sessions", cursor_type="row", zebra_stripes=True)
        yield Static(id="empty")
        yield DeskFooter(compact=True)

    def on_mount(self) -> None:
        # Hosted by the desk app, take its desk file (agent titles) and export folder.
        desk = getattr(self.app, "desk", None)
        if self.config is None and desk is not None:
            self.config = getattr(desk, "config", None)
        if self.export_dir is None:
            self.export_dir = getattr(self.app, "export_dir", None)
        table = self.query_one(SessionTable)
        table.type_into = self.query_one("#search", Input)
        table.focus()
        self.watch(self.app, "theme", self._theme_changed, init=False)
        self.reload()
        # Sessions another process or machine writes appear: the store's change feed says when.
        self.follow_changes(self.store)

    # --- loading ---------------------------------------------------------------------------

    @contextmanager
    def _one_line_errors(self, doing: str) -> Iterator[None]:
        """A failing database read or write becomes one notification, never a crashed app."""
        try:
            yield
        except StoreError as exc:
            self.notify(f"Could not {doing}: {exc}", severity="error", markup=False)
        except (ValueError, OSError) as exc:
            self.notify(f"Could not {doing}: {type(exc).__name__}: {exc}", severity="error", markup=False)

    def reload(self) -> None:
        if self.query_text:
            self._searching_for = self.query_text
            self._searching = self._search(self.query_text)
        else:
            self._load_page()

    def desk_filter(self) -> DeskFilter:
        word = self.tag_filter
        return DeskFilter(
            self.state_filter,
            tag=word[1:] if word.startswith("#") else "",
            priority=word[1:] if word.startswith("!") else "",
        )

    def _now(self) -> Any:
        """The app's clock when it has one (tests fix it), else the time now."""
        return getattr(self.app, "clock", utcnow)()

    @work(exclusive=True, group="browser-load")
    async def _load_page(self) -> None:
        with self._one_line_errors("list the sessions"):
            where, now = self.desk_filter(), self._now()
            total = await self.store.count_desk(where, now)
            last_page = max(0, (total - 1) // self.PAGE_SIZE)
            page = min(self.page, last_page)
            rows = await self.store.desk(limit=self.PAGE_SIZE, offset=page * self.PAGE_SIZE, where=where, now=now)
            self._states = {row.session.id: row.state for row in rows}
            try:
                self._show_page(total, page, [row.session for row in rows])
            except NoMatches:
                pass  # the screen's widgets went during the reads: it closed (the app quit)

    def _show_page(self, total: int, page: int, infos: list[SessionInfo]) -> None:
        self.total = total
        self.page = page
        self._show_sessions(infos)

    @work(exclusive=True, group="browser-load")
    async def _search(self, text: str) -> None:
        with self._one_line_errors("search"):
            hits = await self.store.search(text, limit=self.SEARCH_LIMIT)
            infos: dict[str, SessionInfo] = {}
            # Who wrote each matching message (the session's current agent may be another one).
            writers: dict[tuple[str, int], str] = {}
            for hit in hits:
                if hit.session_id not in infos:
                    info = await self.store.get_session(hit.session_id)
                    if info is not None:
                        infos[hit.session_id] = info
                        seqs = [h.seq for h in hits if h.session_id == hit.session_id]
                        for item in await self.store.items_at(hit.session_id, seqs):
                            writers[(hit.session_id, item.seq)] = item.agent
            if text == self.query_text:  # the user may have typed on meanwhile
                try:
                    self._show_hits(text, hits, infos, writers)
                except NoMatches:
                    pass  # the screen's widgets went during the reads: it closed (the app quit)

    async def on_change(self, change: Change) -> None:
        """Reload when sessions change; a burst of changes (a turn's steps) is one reload."""
        if self._reload_soon is None:
            self._reload_soon = self.set_timer(self.FEED_SETTLE, self._reload_after_changes)

    def _reload_after_changes(self) -> None:
        self._reload_soon = None
        self.reload()

    # --- rendering -------------------------------------------------------------------------

    def _agent_cell(self, name: str) -> Text:
        color = agent_colors(self.app.theme).get(name)
        agent = self.config.agents.get(name) if self.config is not None else None
        if color is None and agent is not None and agent.color:
            color = agent.color
        return Text(safe_text(agent.title if agent else name), style=f"bold {color}" if color else "bold")

    def _title_cell(self, info: SessionInfo, width: int, seen: dict[str, int], title: str | None = None) -> Text:
        """The title (or a hit's session title), after its marks; `title` overrides the session's."""
        title = info.title if title is None else title
        cell = self._marks(info, seen)
        if info.forked_from:
            cell.append("⑂ ", style="bold dim")  # a fork says so before its (copied) title
        state = self._states.get(info.id)
        # Whole tags, in at most half the room (the title keeps the rest): "my fi… !high #vip #windo…"
        # read as neither a title nor tags that exist (issue 39).
        said = tags_text(state) if state is not None else ""
        tags_room = min(TAGS_WIDTH, (width - cell.cell_len) // 2 - 1)
        tags = Text(" " + clip_words(safe_text(said), tags_room), style="dim") if said and tags_room >= 5 else Text()
        room = max(1, width - cell.cell_len - tags.cell_len)
        cell.append(clip_words(_one_line(title or "Untitled session", 400), room), style="" if title else "dim italic")
        return cell.append_text(tags)

    def _marks(self, info: SessionInfo, seen: dict[str, int]) -> Text:
        variables = self.app.theme_variables
        mark = Text()
        if info.status in NEEDS_STAFF:
            mark.append("!", style=f"bold {variables.get('error', '')}".strip())
        if unseen(seen, info.id, info.item_count):
            mark.append("●", style=variables.get("accent", ""))
        if mark:
            mark.append(" ")
        return mark

    def _status_cell(self, status: str) -> Text:
        variables = self.app.theme_variables
        color = {
            "open": variables.get("success"),
            "awaiting_approval": variables.get("warning"),
            "needs_human": variables.get("error"),
        }.get(status)
        label = NEEDS_STAFF.get(status, status)
        return Text(label.replace("_", " "), style=color or "")

    def _reset_table(self, *columns: tuple[str, str, int | None]) -> SessionTable:
        table = self.query_one(SessionTable)
        keep = table.cursor_row
        table.clear(columns=True)
        for label, key, width in columns:
            table.add_column(label, key=key, width=width)
        self._rows.clear()
        self._keep_cursor = keep
        return table

    def _restore_cursor(self, table: SessionTable) -> None:
        if table.row_count:
            table.move_cursor(row=min(self._keep_cursor, table.row_count - 1), animate=False)

    def _fit(self, columns: tuple[Column, ...], least: int) -> tuple[list[Column], int]:
        """The columns that fit the terminal and the width left for the wide one (title, snippet).

        Droppable columns go, highest `drop` first, while the wide column would be narrower
        than `least`; a table wider than the terminal would scroll sideways instead.
        """
        shown = list(columns)
        while True:
            fixed = sum(c.width for c in shown)
            # 2 border, 2 margin, 1 vertical scrollbar; 2 of cell padding per column.
            wide = self.app.size.width - 5 - 2 * len(shown) - fixed
            droppable = [c for c in shown if c.drop]
            if wide >= least or not droppable:
                return shown, max(least, wide)
            shown.remove(max(droppable, key=lambda c: c.drop))

    def on_resize(self) -> None:
        if self.is_mounted:
            self.reload()

    def _fill(self, columns: tuple[Column, ...], least: int) -> tuple[SessionTable, list[Column], int]:
        shown, wide = self._fit(columns, least)
        table = self._reset_table(*((c.label, c.key, c.width or wide) for c in shown))
        return table, shown, wide

    def _show_sessions(self, infos: list[SessionInfo]) -> None:
        table, shown, title_width = self._fill(SESSION_COLUMNS, TITLE_WIDTH)
        self._sessions = {info.id: info for info in infos}
        seen = seen_counts()
        for info in infos:
            self._rows[info.id] = Row(info.id)
            cells = {
                "title": self._title_cell(info, title_width, seen),
                "started": Text(_when(info.created_at)),
                "agent": self._agent_cell(info.active_agent),
                "handoffs": Text(str(info.handoff_count), justify="right"),
                "status": self._status_cell(info.status),
                "id": Text(info.id, style="dim"),
            }
            table.add_row(*(cells[c.key] for c in shown), key=info.id)
        self._restore_cursor(table)
        pages = max(1, -(-self.total // self.PAGE_SIZE))
        noun = "session" if self.total == 1 else "sessions"
        self._set_status(f"{self.total} {noun} · page {self.page + 1} of {pages}")
        # The filters go beside the heading, on the left: the top right is the staff badge's.
        self.query_one("#heading", Static).update(Text.assemble(("Sessions", "bold"), self._filter_words()))
        if infos:
            self._set_empty("")
        elif self.desk_filter().narrows:
            self._set_empty("No session matches the filters (ctrl+s: state, ctrl+l: tag).")
        else:
            self._set_empty("No sessions yet. Close the browser (Esc) and start a conversation.")

    def _filter_words(self) -> str:
        """The filters in force, for the status line ("" when none narrows the list)."""
        words = []
        if self.state_filter != "all":
            words.append(f" · state: {STATE_GROUPS[self.state_filter]}")
        if self.tag_filter:
            words.append(f" · tag: {safe_text(self.tag_filter)}")
        return "".join(words)

    def _show_hits(
        self, text: str, hits: list[SearchHit], infos: dict[str, SessionInfo], writers: dict[tuple[str, int], str]
    ) -> None:
        table, shown, _ = self._fill(HIT_COLUMNS, SNIPPET_WIDTH)
        title_width = next(c.width for c in HIT_COLUMNS if c.key == "title")
        self._sessions = dict(infos)
        seen = seen_counts()
        for hit in hits:
            info = infos.get(hit.session_id)
            if info is None:
                continue  # deleted between the search and now
            key = f"{hit.session_id}#{hit.seq}"
            self._rows[key] = Row(hit.session_id, hit.seq)
            cells = {
                "title": self._title_cell(info, title_width, seen, hit.title),
                "seq": Text(str(hit.seq), style="dim", justify="right"),
                "snippet": self._snippet(hit),
                "agent": self._agent_cell(writers.get((hit.session_id, hit.seq), info.active_agent)),
                "id": Text(hit.session_id, style="dim"),
            }
            table.add_row(*(cells[c.key] for c in shown), key=key)
        self._restore_cursor(table)
        count = len(self._rows)
        shown_query = _one_line(text, 30)
        self._set_status(f"{count} {'match' if count == 1 else 'matches'} for “{shown_query}”")
        self._set_empty(f"No message matches “{shown_query}”." if not count else "")

    def _snippet(self, hit: SearchHit) -> Text:
        """The matching words highlighted from the hit's parts, with no markup anywhere."""
        snippet = Text(no_wrap=True, overflow="ellipsis")
        highlight = f"bold reverse {self.app.theme_variables.get('accent', '')}".strip()
        for chunk, is_match in hit.parts():
            snippet.append(" ".join(safe_text(chunk).splitlines()), style=highlight if is_match else "")
        return snippet

    def _set_status(self, text: str) -> None:
        self.query_one("#status", Static).update(Text(text))

    def _set_empty(self, text: str) -> None:
        empty = self.query_one("#empty", Static)
        empty.update(Text(text))
        empty.display = bool(text)

    def _theme_changed(self) -> None:
        self.reload()  # agent and status colours come from the theme

    # --- the current row -------------------------------------------------------------------

    def current(self) -> Row | None:
        table = self.query_one(SessionTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self._rows.get(key or "")

    def _current_or_say(self) -> Row | None:
        row = self.current()
        if row is None:
            self.notify("No session selected", severity="warning")
        return row

    # --- search ----------------------------------------------------------------------------

    @on(Input.Changed, "#search")
    def _search_changed(self, event: Input.Changed) -> None:
        if self._debounce is not None:
            self._debounce.stop()
        searching = self._searching
        if searching is not None and searching.is_running and event.value.strip() != self._searching_for:
            searching.cancel()
            # The hits for the old text will not come: the next query must run even if the
            # box goes back to that text.
            self._search_abandoned = True
        self._debounce = self.set_timer(SEARCH_DEBOUNCE, lambda: self._apply_query(event.value))

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        if self._debounce is not None:
            self._debounce.stop()
        self._apply_query(event.value)
        self.query_one(SessionTable).focus()

    def _apply_query(self, value: str) -> None:
        text = value.strip()
        if text == self.query_text and not self._search_abandoned:
            return
        self._search_abandoned = False
        self.query_text = text
        self._keep_cursor = 0
        self.query_one(SessionTable).move_cursor(row=0, animate=False)
        self.reload()

    def action_focus_search(self) -> None:
        self.query_one("#search", Input).focus()

    def action_focus_results(self) -> None:
        self.query_one(SessionTable).focus()

    # --- actions ---------------------------------------------------------------------------

    def action_close(self) -> None:
        self.dismiss(None)

    def action_cycle_state(self) -> None:
        groups = list(STATE_GROUPS)
        self.state_filter = groups[(groups.index(self.state_filter) + 1) % len(groups)]

    @work(exclusive=True, group="browser-tags")
    async def action_cycle_tag(self) -> None:
        with self._one_line_errors("read the tags"):
            tags, priorities = await self.store.desk_tags()
            words = ["", *sorted({*(f"!{p}" for p in priorities), *(f"#{t}" for t in tags)})]
            at = words.index(self.tag_filter) if self.tag_filter in words else 0
            self.tag_filter = words[(at + 1) % len(words)]

    def watch_state_filter(self) -> None:
        self._filters_changed()

    def watch_tag_filter(self) -> None:
        self._filters_changed()

    def _filters_changed(self) -> None:
        """A new filter starts at its first page, cursor on top; a search shown stays as it is."""
        self.page = 0
        self._keep_cursor = 0
        self.query_one(SessionTable).move_cursor(row=0, animate=False)
        if not self.query_text:
            self._load_page()
        else:
            self.notify("Filters apply to the session list; clear the search to see it", markup=False)

    def action_page(self, delta: int) -> None:
        if self.query_text:
            return
        pages = max(1, -(-self.total // self.PAGE_SIZE))
        page = min(max(0, self.page + delta), pages - 1)
        if page != self.page:
            self.page = page
            self._keep_cursor = 0
            self.query_one(SessionTable).move_cursor(row=0, animate=False)
            self._load_page()

    @on(DataTable.RowSelected, "#sessions")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        row = self._rows.get(event.row_key.value or "")
        if row is not None:
            self.dismiss(BrowserChoice("open", row.session_id, row.seq))

    def action_replay(self) -> None:
        if row := self._current_or_say():
            self.dismiss(BrowserChoice("replay", row.session_id, row.seq))

    def action_fork(self) -> None:
        row = self._current_or_say()
        info = self._sessions.get(row.session_id) if row else None
        if info is None:
            return
        # The copy holds the items the dialog counted, even if the session grows meanwhile.
        upto = info.item_count
        def chosen(yes: bool | None) -> None:
            if yes:
                self._fork(info.id, upto)

        self.app.push_screen(ConfirmFork(info.id, info.title, upto), chosen)

    @work(exclusive=True, group="browser-action")
    async def _fork(self, session_id: str, upto: int) -> None:
        with self._one_line_errors("fork the session"):
            if await self.store.get_session(session_id) is None:
                self.notify("That session no longer exists", severity="error")
                self.reload()
                return
            fork = await self.store.fork(session_id, upto)
            self.dismiss(BrowserChoice("open", fork.id))

    def action_export(self) -> None:
        if row := self._current_or_say():
            folder = self.export_dir or default_export_dir(self.app)
            def export_to(path: Path | None) -> None:
                if path:
                    self._export(row.session_id, path)

            self.app.push_screen(ExportDialog(folder / f"supportdesk-{row.session_id}.md"), export_to)

    @work(exclusive=True, group="browser-action")
    async def _export(self, session_id: str, path: Path) -> None:
        with self._one_line_errors("read the session"):
            info = await self.store.get_session(session_id)
            if info is None:
                self.notify("That session no longer exists", severity="error")
                return
            items = await self.store.range(session_id, 1, info.item_count)
            self._write_export(session_id, path, info, items)

    def _write_export(self, session_id: str, path: Path, info: SessionInfo, items: list[Any]) -> None:
        write_export(self.notify, path, info, items, self.config)

    def action_delete(self) -> None:
        if row := self._current_or_say():
            info = self._sessions.get(row.session_id)
            title = info.title if info else ""
            def chosen(yes: bool | None) -> None:
                if yes:
                    self._delete(row.session_id)

            self.app.push_screen(ConfirmDelete(row.session_id, title), chosen)

    @work(exclusive=True, group="browser-action")
    async def _delete(self, session_id: str) -> None:
        with self._one_line_errors("delete the session"):
            if await self.store.delete_session(session_id):
                self.notify(f"Deleted session {session_id}", markup=False)
        self.reload()


__all__ = ["BrowserChoice", "BrowserScreen", "Confirm", "ConfirmDelete", "ConfirmFork", "Dialog", "ExportDialog", "Row"]
