"""The chat screen: talk to the desk as the customer, act on it as staff, watch it live.

Every pane is the log as of its end (`projection.snapshot`, shown through the pane protocol).
The screen follows the end two ways: the events of the turns it runs itself, and for writes by
other processes or machines the store's change feed; a change to this session reads only the
items after the last seq the screen has, and every pane is extended with them.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from pathlib import Path
from typing import TYPE_CHECKING, Any, assert_never, cast

from textual import on, work
from textual.app import ComposeResult
from textual.css.query import NoMatches
from textual.events import ScreenResume
from textual.binding import Binding
from textual.reactive import var
from textual.widgets import Input

from supportdesk.engine.channels import is_served
from supportdesk.engine.desk import Desk
from supportdesk.engine.events import Appended, Done, Event, SessionStarted, StepStarted, Token, TurnWaiting, unfinished_turn
from supportdesk.engine.errors import TurnError
from supportdesk.items import (
    Confirmation,
    ContextSet,
    Decline,
    Offer,
    Handoff,
    Item,
    Message,
    Notice,
    Release,
    StaffReply,
    StateChange,
    TagChange,
    Takeover,
    ToolCall,
    ToolResult,
)
from supportdesk.engine.pricing import session_cost
from supportdesk.engine.log import Change, StoreError
from supportdesk.text import safe_text
from supportdesk.folds import desk_state
from supportdesk.folds.desk_state import needs_staff
from supportdesk.staff import Actor, SettingsError, WhenError, default_actor, parse_when
from supportdesk.tui.exporting import default_export_path, write_export
from supportdesk.tui.projection import Snapshot, advance, conversation_state, new_session, snapshot
from supportdesk.tui.widgets.footer import DeskFooter
from supportdesk.tui.widgets.panes import PANE_BINDINGS, PaneActions, session_panes
from supportdesk.tui.widgets import AgentBar, AgentLook, Conversation, HandoffTimeline, Prompt
from supportdesk.tui.screens._feed import FollowsChanges
from supportdesk.tui.seen import mark_seen
from supportdesk.tui.themes import remembered_setting
from supportdesk.tui.slash import COMMANDS, Slash, SlashError, parse_slash

if TYPE_CHECKING:
    from supportdesk.tui.app import SupportDeskApp


def bears_on_attention(item: Item) -> bool:
    """Whether a new item can change why staff are needed (worth asking the runner again)."""
    match item:
        case Message() | Handoff() | Notice() | Takeover() | Release() | StateChange() | StaffReply():
            return True
        case ToolCall() | ToolResult() | ContextSet() | TagChange():
            return False
        case Offer() | Confirmation() | Decline():
            return False
        case _:
            assert_never(item)


class ChatScreen(PaneActions, FollowsChanges[None]):
    FEED_STOPPED = "Live follow stopped"
    # chat.tcss is the app's CSS_PATH (SupportDeskApp): read with the first frame, not here, where
    # reading it re-parsed every stylesheet and restyled the app on the way to the first page.
    # Below 120 columns the header keeps why staff are needed and drops the session's facts.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    # The prompt, not the first focusable pane (the conversation), takes focus when the screen
    # shows: focusing the conversation first and moving to the prompt restyled both on the way
    # to the first page, and changed the footer's bindings twice.
    AUTO_FOCUS = "#prompt"
    BINDINGS = [
        # Short labels: the footer must keep them at 80 columns; help shows the tooltips.
        Binding("ctrl+n", "new_session", "New", tooltip="Start a new session", show=False),
        Binding("ctrl+b", "app.open_browser", "Sessions", tooltip="Browse, search and open sessions"),
        Binding("ctrl+r", "replay", "Replay", tooltip="Replay this session"),
        Binding("ctrl+o", "export", "Export", tooltip="Export the transcript (asks where)"),
        # Shown only while an approval waits (see check_action).
        Binding("ctrl+y", "approve", "Approve", tooltip="Grant the pending approval"),
        Binding("ctrl+g", "deny", "Deny", tooltip="Deny the pending approval"),
        Binding("ctrl+l", "follow", "Latest", show=False, tooltip="Back to the latest message (and follow new ones)"),
        Binding("f6", "take_over", "Take over", tooltip="Take the conversation from the agents (F6 again: /release)", show=False),
        Binding("f8", "saved_reply", "Saved reply", tooltip="Pick a saved reply (replies.toml) to send", show=False),
        Binding("f7", "toggle_write_as", "Write as", tooltip="Write as the customer or as staff (local sessions)", show=False),
        Binding("escape", "focus_prompt", "Input", show=False),
        *PANE_BINDINGS,
    ]

    # The session every pane has finished drawing ("" for a new one): `load` awaits several
    # reads, and what must see the whole screen (tests, snapshots) waits on this, not on time.
    loaded: var[str | None] = var(None, init=False)
    # The log as of its end, as every pane shows it: set by `load`, advanced by `apply`.
    snapshot: var[Snapshot] = var(lambda: new_session(""), init=False)
    # Who holds the conversation, its state, tags, priority (desk_state's fold), for the header;
    # repainted on every set (a snooze shown runs out with time, not with a change of state).
    conv_state: var[desk_state.ConversationState | None] = var(None, init=False, always_update=True)
    write_as: var[str] = var("customer", init=False)  # what the input writes as on a local session

    def __init__(self, desk: Desk, look: AgentLook, session_id: str | None = None):
        super().__init__(look)
        # The width class from the start: left to Textual's first resize, adding it restyled every
        # pane once more on the way to the first page. (That resize then finds it already set.)
        width = self.app.size.width
        self.add_class(next(name for edge, name in sorted(self.HORIZONTAL_BREAKPOINTS, reverse=True) if width >= edge), update=False)
        self.desk = desk
        self.session_id: str | None = session_id
        self._turn_lock = asyncio.Lock()
        self._apply_lock = asyncio.Lock()
        self._usage: dict[str, dict[str, int]] = {}
        self._pending_approval = False  # approve/deny keys show only while one waits
        self._announced = ""  # the reason staff were last told they are needed (told once)
        self._fork_of = ""  # "fork of <id> at item <k>" when the session shown is a fork
        self._channel = "tui"  # where the session's customer is: tui/cli (local), web, chatwoot
        # Counts the sessions shown: a turn started on one session never draws on another
        # (its events are read to the end, and drawn only while the screen shows its session).
        self._showing = 0
        self._settings_problem = ""
        try:
            self.person = default_actor("tui")  # who staff actions are by
        except SettingsError as exc:  # said once the screen is up; actions are by "staff" meanwhile
            self.person, self._settings_problem = Actor("staff", "tui"), str(exc)
        # Set once the panes are mounted and the session loaded: turns may start from then on.
        self.ready = asyncio.Event()
        self._resumed = False  # shown once (see _on_screen_resume)

    @property
    def store(self):
        return self.desk.store

    @property
    def runner(self):
        return self.desk.runner

    def compose(self) -> ComposeResult:
        yield AgentBar(self.look, id="agent-bar")
        # The inspector (a DataTable) is mounted after the screen's first frame: see InspectorSlot.
        yield from session_panes(self.look, self.store, "Shared context · ✱ changed this turn", inspector_later=True)
        yield Prompt(self.desk.config.agents, id="prompt")
        yield DeskFooter(compact=True)

    def _on_screen_resume(self, event: ScreenResume) -> None:
        # (Textual calls this, then Screen's own with the same event.) The first resume follows
        # the mount, which has just styled every widget; restyling the whole screen again was
        # ~3 ms before the chat screen's first frame. Later resumes (back from another screen,
        # where the theme may have changed) restyle as Textual does.
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False

    async def on_mount(self) -> None:
        self.query_one(Prompt).focus()
        if self._settings_problem:
            self.notify(safe_text(self._settings_problem), severity="error", markup=False)
        self.follow_changes(self.store)
        await self.load(self.session_id)
        self.call_after_refresh(self._inspector_then_ready)

    async def _inspector_then_ready(self) -> None:
        # Ready (and published as `app.chat`) with every pane in place, the inspector included.
        await self.mount_inspector()
        self.ready.set()

    # --- whole-session loads -----------------------------------------------------------------------

    async def load(self, session_id: str | None) -> None:
        """Show a session from its end (or an empty new one)."""
        self._showing += 1
        self.session_id = session_id
        if session_id is None:
            self.snapshot = new_session(self.desk.config.desk.entry)
            await self.show_panes(self.snapshot)
            self._usage = {}
            self._fork_of = ""
            self._channel = "tui"
            self.conv_state, self.write_as = None, "customer"
            self._facts()
            await self._refresh_attention()
            self.loaded = ""
            return
        snap = await snapshot(self.store, session_id, whole_turn=True)
        if snap is None:
            self.notify(f"no session {session_id!r}", severity="error")
            await self.load(None)
            return
        info = snap.session
        assert info is not None  # snapshot() read it
        self._fork_of = f"fork of {info.forked_from} at item {info.forked_at}" if info.forked_from else ""
        self.snapshot = snap
        await self.show_panes(snap)
        state = await conversation_state(self.store, session_id, info.entry_agent, snap.items)
        self._channel = info.channel
        # Staff write to a customer on a channel, and to one in a conversation this person holds
        # (taken over here, from the inbox, or before); a local session is otherwise typed as
        # its customer.
        held_here = state.held_by_staff and state.holder == self.person.person
        self.conv_state, self.write_as = state, "staff" if self.on_channel or held_here else "customer"
        await self._refresh_facts()
        self.loaded = session_id
        if not getattr(self.store, "readonly", False):
            # A turn a crash cut short is finished now (no-op otherwise), once the page is on
            # screen: finishing it builds the runner and the model, which the page does not need.
            self.call_after_refresh(self.resume_turn)

    async def _refresh_facts(self) -> None:
        # Usage is summed over the session's items, so it is read when a turn ends, not per item.
        self._usage = await self.store.usage_totals(self.session_id) if self.session_id else {}
        self._facts()
        await self._refresh_attention()
        if self.session_id is not None:
            mark_seen(self.session_id, self.snapshot.position)

    async def _refresh_attention(self) -> None:
        """Say when staff are needed: the header in words and colour, one notification, the bell."""
        # Read from the store, not through the runner: the first page is drawn before it is built.
        pending = desk_state.undecided_approvals(await self.store.of_kind(self.session_id, "notice")) if self.session_id else []
        reason = needs_staff(self.snapshot.items, pending) if self.session_id else ""
        if bool(pending) != self._pending_approval:
            self._pending_approval = bool(pending)
            self.refresh_bindings()
        self.query_one(AgentBar).attention = reason
        if reason and reason != self._announced:
            self.notify(safe_text(reason), title="Staff needed", severity="warning", timeout=8)
            if remembered_setting("bell", False) is True:
                self.app.bell()
        self._announced = reason

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("approve", "deny"):
            return self._pending_approval  # hidden from the footer while nothing waits
        return True

    def _facts(self) -> None:
        spent = session_cost(self._usage, self.desk.config) if self._usage else None
        bar = self.query_one(AgentBar)
        shown = self.snapshot
        bar.set_facts(self.session_id, shown.position, len(shown.stops), self._usage, extra=self._fork_of, cost=spent)
        self.sub_title = self.session_id or "new session"

    # --- new items from the log ----------------------------------------------------------------------

    async def apply(self, items: Sequence[Item]) -> None:
        """Fold new log items into every pane (from our own turns or from another process)."""
        async with self._apply_lock:
            end = self.snapshot.position
            # Only this session's items: one written elsewhere never lands in this page.
            fresh = [i for i in items if i.seq > end and (not i.session_id or i.session_id == self.session_id)]
            if not fresh or self.session_id is None:
                return
            if fresh[0].seq > end + 1:
                # Someone else wrote in between: read the gap so nothing is skipped.
                fresh = await self.store.range(self.session_id, end + 1, fresh[0].seq - 1) + fresh
            if any(isinstance(i, Notice) and i.notice_kind == "approval_requested" for i in fresh):
                # Approve/deny work as soon as the request is on screen (the full check follows).
                self._pending_approval = True
                self.refresh_bindings()
            self.snapshot = advance(self.snapshot, fresh)
            await self.extend_panes(fresh)
            state = self.conv_state
            if state is None and fresh[0].seq == 1:
                # A session this screen started: every item of it arrives here, from the first.
                state = desk_state.start(self.desk.config.desk.entry)
            if state is not None:
                self.conv_state = desk_state.fold(fresh, state)
            self._facts()
            if any(bears_on_attention(item) for item in fresh):
                await self._refresh_attention()

    async def sync(self) -> None:
        """Read whatever the log holds past what is shown (index range, never the whole session)."""
        if self.session_id is None:
            return
        last = await self.store.last_seq(self.session_id)
        if last > self.snapshot.position:
            await self.apply(await self.store.range(self.session_id, self.snapshot.position + 1, last))
            if self.is_current:
                mark_seen(self.session_id, self.snapshot.position)

    async def on_change(self, change: Change) -> None:
        """Another process or machine wrote to this session: read what it added."""
        if change.session_id == self.session_id and change.head > self.snapshot.position:
            await self.sync()

    # --- turns ------------------------------------------------------------------------------------------

    async def take_over(self, draft: str, queued: Sequence[str]) -> None:
        """Carry on from the start screen: keep the half-typed draft, send what was queued."""
        prompt = self.query_one(Prompt)
        # Keys typed here since the screen showed (it takes them before it is ready) follow the
        # draft: the typist went on from the start screen's input to this one.
        if draft:
            prompt.value = draft + prompt.value
            prompt.cursor_position = len(prompt.value)
        for text in queued:
            await self.submit_text(text)

    @on(Input.Submitted, "#prompt")
    async def submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        event.input.clear()
        await self.submit_text(text)

    async def submit_text(self, text: str) -> None:
        """What Enter does: a slash command for staff, anything else goes to the desk."""
        if not text:
            return
        if text.startswith("/"):
            try:
                command = parse_slash(text)
            except SlashError as exc:
                self.notify(str(exc), severity="warning")
                return
            await self.run_slash(command)
        elif self.write_as == "staff":
            await self.staff_reply(text)
        else:
            self.send(text)

    @work(group="turn")
    async def send(self, text: str) -> None:
        await self.query_one(Conversation).follow()  # staff who write want to see the answer
        stored: list[bool] = []

        async def events() -> AsyncGenerator[Event, None]:
            async with aclosing(self.runner.send(self.session_id, text)) as turn:
                async for event in turn:
                    if isinstance(event, Appended) and isinstance(event.item, Message) and event.item.role == "customer":
                        stored.append(True)
                    yield event

        await self._drive(events)
        if not stored:
            # The message could not be stored (disk full, read-only database): the error is on
            # screen, and the text goes back into the input so nothing typed is lost.
            try:
                prompt = self.query_one(Prompt)
            except NoMatches:
                return
            if not prompt.value:
                prompt.value = text
                prompt.cursor_position = len(text)
            self.notify("the message was not saved; it is back in the input", severity="warning")

    async def _drive(self, start: Any) -> None:
        """Run one turn (or approval decision) to its end, folding its events into the panes."""
        async with self._turn_lock:  # turns queue up; the input stays usable meanwhile
            try:
                conversation = self.query_one(Conversation)
                bar = self.query_one(AgentBar)
            except NoMatches:
                return  # the screen closed while this waited (a resume asked of the store): the log keeps all
            bar.set_working(bar.agent or self.desk.config.desk.entry)
            showing = self._showing
            try:
                # Closed however the loop ends: a turn stopped by an error releases its lease now.
                async with aclosing(start()) as events:
                    async for event in events:
                        if self._showing == showing:  # still the session the turn is on
                            await self._on_event(event)
            except (TurnError, StoreError) as exc:
                self.notify(safe_text(str(exc)), severity="error")
            except Exception as exc:  # never a traceback for staff; the log keeps what was stored
                self.notify(safe_text(f"the turn failed: {type(exc).__name__}: {exc}"), severity="error")
            # Not in a `finally`: a cancelled worker means the screen is closing. The log holds
            # everything the turn did; whoever opens the session next shows it.
            try:
                await conversation.end_stream()
                bar.set_working("")
                if self._showing == showing:
                    await self.sync()
                    await self._refresh_facts()
            except NoMatches:
                pass  # the panes of a ready screen go missing only while it closes (the app quits)

    async def _on_event(self, event: Event) -> None:
        conversation = self.query_one(Conversation)
        if isinstance(event, SessionStarted):
            self.session_id = event.session_id
            conversation.session_id = event.session_id
            self.app.sub_title = event.session_id
        elif isinstance(event, TurnWaiting):
            self.notify("Waiting for the turn in progress on this session (another terminal or worker)…")
        elif isinstance(event, StepStarted):
            await conversation.end_stream()
            self.query_one(AgentBar).set_working(event.agent)
        elif isinstance(event, Token):
            if conversation.stream is None:
                await conversation.start_stream(event.agent)
            await conversation.write_stream(event.text)
        elif isinstance(event, Appended):
            await self.apply([event.item])
        elif isinstance(event, Done):
            await conversation.end_stream()
            if event.outcome == "held":
                held = self.conv_state
                holder = held.holder if held is not None and held.held_by_staff else "staff"
                self.notify(safe_text(f"{holder} holds this conversation: the message waits for them, no agent answers"))

    # --- staff actions -------------------------------------------------------------------------------

    def _need_session(self) -> bool:
        if self.session_id is None:
            self.notify("no session yet: send a message first", severity="warning")
            return False
        return True

    async def run_slash(self, command: Slash) -> None:
        """Run a parsed command through its row of the one table (`supportdesk.tui.slash`)."""
        result = COMMANDS[command.name].run(self, command.args)
        if inspect.isawaitable(result):
            await result

    async def staff_note(self, text: str) -> None:
        await self._staff(lambda sid: self.runner.staff_note(sid, text, self.person))

    async def set_context(self, key: str, value: Any) -> None:
        """Set a shared-context key as staff; None clears it."""
        await self._staff(lambda sid: self.runner.set_context(sid, key, value, by=self.person))

    def action_retry(self) -> None:
        if self._need_session():
            self.retry()

    async def _staff(self, act: Any) -> bool:
        if not self._need_session():
            return False
        try:
            await act(self.session_id)
        except (TurnError, StoreError) as exc:
            self.notify(safe_text(str(exc)), severity="error")
            return False
        await self.sync()
        return True

    # --- staff as people: take over, release, reply, state, tags ---------------------------------------

    @property
    def on_channel(self) -> bool:
        """The customer is outside (a served channel: web, Chatwoot): what staff type goes to
        them, as staff (engine/channels.CHANNELS)."""
        return is_served(self._channel)

    def watch_conv_state(self) -> None:
        self._paint_state()

    def watch_write_as(self) -> None:
        self._paint_state()

    def _paint_state(self) -> None:
        # Writing as the customer (a local session's default) says so in the input's placeholder;
        # writing as staff says it in the header too, where it cannot be missed.
        write_as = "staff" if self.write_as == "staff" else ""
        self.query_one(AgentBar).set_state(self.conv_state, write_as, now=self.store.clock())
        self.query_one(Prompt).writing_as(self.write_as, on_channel=self.on_channel)

    async def take_over_conversation(self, reason: str = "") -> None:
        if not await self._staff(lambda sid: self.runner.takeover(sid, self.person, reason)):
            return
        if self.on_channel:  # what staff type already goes to the customer, as staff
            self.notify("you hold the conversation: the agents stay silent until /release")
            return
        # A local session's input writes as the customer by default; taking a conversation over
        # is to answer the customer yourself, so from here it writes as staff (F7 switches back).
        self.write_as = "staff"
        self.notify("you hold the conversation and write as staff (F7: as the customer); the agents stay silent until /release")

    async def release_conversation(self, rest: str = "") -> None:
        """`/release [AGENT] [summary]`: a first word naming an agent is the agent."""
        first, _, more = rest.partition(" ")
        agent, summary = (first, more.strip()) if first in self.desk.config.agents else (None, rest.strip())
        if await self._staff(lambda sid: self.runner.release(sid, agent, summary, self.person)):
            holder = self.conv_state.holder if self.conv_state is not None else (agent or "")
            back = f"{self.look.title(holder)} has the conversation back"
            if not self.on_channel and self.write_as == "staff":
                self.write_as = "customer"  # as before the take-over: the agent answers what is typed
                back += "; the input writes as the customer again"
            self.notify(safe_text(back))
            self.answer_waiting()  # a message the customer wrote meanwhile gets its turn now

    @work(group="turn")
    async def answer_waiting(self) -> None:
        """After a release: the customer message that came while staff held the conversation
        and nobody answered gets its turn (issue 39 §3; `unfinished_turn`), once, under the lease."""
        if self.session_id is None or await unfinished_turn(self.store, self.session_id) is None:
            return
        await self._drive(lambda: self.runner.resume(self.session_id))

    async def withdraw_offer(self) -> None:
        """`/withdraw`: the open offer (issue 33) is closed; a later yes confirms nothing."""
        if await self._staff(lambda sid: self.runner.withdraw_offer(sid, self.person)):
            self.notify("Offer withdrawn: the customer's yes no longer runs it")

    async def staff_reply(self, text: str) -> None:
        if not await self._staff(lambda sid: self.runner.staff_reply(sid, text, self.person)):
            prompt = self.query_one(Prompt)
            if not prompt.value:  # nothing typed is lost
                prompt.value = text
                prompt.cursor_position = len(text)

    async def set_state(self, state: str, when: str | None = None) -> None:
        try:
            until = parse_when(when, self.store.clock()) if when else None
        except WhenError as exc:
            self.notify(str(exc), severity="warning")
            return
        await self._staff(lambda sid: self.runner.set_state(sid, state, until=until, by=self.person))

    async def tag(self, added: Sequence[str], removed: Sequence[str] = ()) -> None:
        await self._staff(lambda sid: self.runner.tag(sid, list(added), list(removed), by=self.person))

    async def set_priority(self, priority: str) -> None:
        await self._staff(lambda sid: self.runner.tag(sid, priority=priority, by=self.person))

    def set_write_as(self, who: str) -> None:
        if self.on_channel and who == "customer":
            self.notify("this customer is on the web or Chatwoot: what you type goes to them as staff", severity="warning")
            return
        self.write_as = who
        self._paint_state()  # said again even when it already wrote as `who`
        self.notify(f"the input now writes as {who}")

    def action_toggle_write_as(self) -> None:
        self.set_write_as("customer" if self.write_as == "staff" else "staff")

    async def action_take_over(self) -> None:
        if self.conv_state is not None and self.conv_state.held_by_staff:
            self.fill_prompt("/release ")  # a release says to whom and what the agent should know
            return
        await self.take_over_conversation()

    def _replies(self) -> Any:
        """replies.toml (shipped, then the user's), read when used: an edit applies at once."""
        from supportdesk.staff.replies import RepliesError, load_replies

        try:
            return load_replies(agents=self.desk.config.agents)
        except RepliesError as exc:
            for problem in exc.problems[:5]:
                self.notify(safe_text(problem), severity="error", markup=False)
            return None

    async def send_saved_reply(self, name: str) -> None:
        from supportdesk.staff.replies import RepliesError, send_reply

        replies = self._replies()
        if replies is None:
            return
        reply = replies.replies.get(name)
        if reply is None:
            self.notify(safe_text(f"no saved reply {name!r}; replies: {', '.join(replies.replies) or 'none'}"),
                        severity="warning", markup=False)
            return
        try:
            await self._staff(lambda sid: send_reply(self.runner, sid, reply, self.person))
        except RepliesError as exc:  # a field the shared context does not hold: nothing was sent
            self.notify(safe_text(str(exc)), severity="warning", markup=False)

    async def run_macro(self, name: str) -> None:
        from supportdesk.staff.replies import RepliesError, run_macro

        replies = self._replies()
        if replies is None:
            return
        macro = replies.macros.get(name)
        if macro is None:
            self.notify(safe_text(f"no macro {name!r}; macros: {', '.join(replies.macros) or 'none'}"),
                        severity="warning", markup=False)
            return
        try:
            if await self._staff(lambda sid: run_macro(self.runner, sid, macro, replies, self.person)):
                self.notify(safe_text(f"macro {name} done ({len(macro.steps)} steps)"), markup=False)
        except RepliesError as exc:
            self.notify(safe_text(str(exc)), severity="warning", markup=False)

    def action_saved_reply(self) -> None:
        replies = self._replies()
        if replies is not None:
            self.fill_prompt("/reply ")
            self.notify(safe_text("saved replies: " + (", ".join(replies.replies) or "none")), markup=False)

    async def force_handoff(self, agent: str, reason: str = "staff decision") -> None:
        if await self._staff(lambda sid: self.runner.force_handoff(sid, agent, reason, self.person)):
            self.notify(f"{self.look.title(agent)} now holds the conversation")

    @work(group="turn")
    async def resume_turn(self) -> None:
        await self.ready.wait()  # the panes show the session before the turn's events arrive
        # Asked of the store, not the runner: the first page is drawn before a deferred desk
        # builds its runner, and nearly every session has nothing to finish.
        if self.session_id is None or await unfinished_turn(self.store, self.session_id) is None:
            return  # the usual case: nothing to finish, nothing on screen changes
        # Only a turn idle for longer than a step may take: one a live process is still running
        # in another terminal or worker is left to it.
        idle = self.desk.config.desk.limits.step_timeout
        await self._drive(lambda: self.runner.resume(self.session_id, idle_for=idle))

    @work(group="turn")
    async def retry(self) -> None:
        await self._drive(lambda: self.runner.retry_turn(self.session_id))

    @work(group="turn")
    async def decide(self, granted: bool, approval_id: str | None = None) -> None:
        if not self._need_session():
            return
        pending = await self.runner.pending_approvals(self.session_id)
        if not pending:
            self.notify("nothing is waiting for approval", severity="warning")
            return
        if approval_id is None:
            approval_id = pending[-1].data.get("approval_id")
        await self._drive(lambda: self.runner.decide_approval(self.session_id, approval_id, granted, self.person))

    async def action_new_session(self) -> None:
        await self.load(None)
        self.query_one(Prompt).focus()
        self.notify("new session: the first message starts it")

    def action_approve(self) -> None:
        self.decide(True)

    def action_deny(self) -> None:
        self.decide(False)

    def action_replay(self) -> None:
        if self._need_session() and self.session_id is not None:
            cast("SupportDeskApp", self.app).open_replay(self.session_id)

    def action_export(self) -> None:
        self.ask_export("markdown")

    def ask_export(self, fmt: str = "markdown") -> None:
        """Ask where to write the transcript (the same dialog as the browser's), then write it."""
        if not self._need_session():
            return
        from supportdesk.tui.screens.browser import ExportDialog

        session_id = self.session_id
        assert session_id is not None  # _need_session said there is one

        def chosen(path: Path | None) -> None:
            if path:
                self.export_to(session_id, path)

        self.app.push_screen(ExportDialog(default_export_path(self.app, session_id, fmt)), chosen)

    @work(group="export")
    async def export_to(self, session_id: str, path: Path) -> Path | None:
        try:
            info = await self.store.get_session(session_id)
            items = await self.store.range(session_id, 1, info.item_count) if info else []
        except StoreError as exc:
            self.notify(safe_text(f"Could not read the session: {exc}"), severity="error")
            return None
        if info is None:
            self.notify("That session no longer exists", severity="error")
            return None
        return write_export(self.notify, path, info, items, self.desk.config)

    def action_add_note(self) -> None:
        self.fill_prompt("/note ")

    def fill_prompt(self, text: str) -> None:
        """Put a command in the input, cursor at its end, ready to finish typing."""
        prompt = self.query_one(Prompt)
        prompt.value = text
        prompt.cursor_position = len(text)
        prompt.focus()

    def action_focus_prompt(self) -> None:
        self.query_one(Prompt).focus()

    async def action_follow(self) -> None:
        await self.query_one(Conversation).follow()

    @on(HandoffTimeline.Jump)
    async def jump(self, event: HandoffTimeline.Jump) -> None:
        await self.query_one(Conversation).reveal(event.seq)
