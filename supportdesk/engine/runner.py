"""The desk runner: one customer message in, agent steps out as a stream of events.

A step asks the model for the next action, runs any tools, and appends everything that
step produced in one transaction. The active agent is read from the log at the start of
every turn, never kept in memory, so a restart (or another process) picks up exactly
where the conversation stands.
"""

from __future__ import annotations

import asyncio
import uuid
from contextlib import aclosing, asynccontextmanager
from dataclasses import replace
from datetime import datetime
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from typing import Any, assert_never, cast

from supportdesk.config import AgentConfig, DeskConfig
from supportdesk.engine.confirmation import (
    OpenOffer,
    Reading,
    asked_beside,
    assents_only,
    names_the_action,
    names_another,
    offers_exchange,
    open_offer,
    requested,
    offer_sentence,
    states_the_call,
    read_answer,
    records_in,
    same_call,
    structured_answer,
)
from supportdesk.engine.errors import TurnError
from supportdesk.engine.events import (
    Appended, Done, Event, SessionStarted, StepStarted, Token, TurnOutcome, TurnWaiting, saw_upto, unfinished_turn,
)
from supportdesk.engine.handoffs import transfer_tool_name
from supportdesk.engine.history_window import HistoryWindows, read_depth, settings_for
from supportdesk.engine.later import Later, ready
from supportdesk.engine.hooks import (
    AskApproval,
    HandoffAsked,
    HandoffDone,
    HookSet,
    ModelStep,
    ModelStepDone,
    ToolCallAsked,
    ToolCallDone,
    TurnEnded,
    TurnStarted,
    Veto,
    veto_notice,
)
from supportdesk.engine.protocol import (
    Answer,
    CallTools,
    ModelProvider,
    ProviderError,
    RequestedCall,
    StepRequest,
    TextDelta,
    ToolSpec,
    Transfer,
)
from supportdesk.engine.services import Services
from supportdesk.engine.turn_reads import TurnReads, customer_words
from supportdesk.engine.tools import ToolContext, ToolOutput, ToolRegistry, TransferArgs, check_arguments
from supportdesk.items import (
    AnswerSource,
    Confirmation,
    ContextSet,
    Decline,
    DeclineWhy,
    Handoff,
    Item,
    Message,
    Notice,
    NoticeKind,
    Offer,
    Priority,
    SettableState,
    StaffReply,
    StateChange,
    TagChange,
    Takeover,
    ToolCall,
    ToolResult,
    pending_text,
)
from supportdesk.staff import Actor
from supportdesk.staff import acts as staff_acts
from supportdesk.store import EXTERNAL_ID, HeadMoved, SessionInfo, Store, TurnLease
# Channels (which do not import the store) catch a redelivery the store refused by this name.
from supportdesk.store import DuplicateItem as DuplicateItem


# Said when a provider raises without a message of its own.
PROVIDER_ERROR_TEXT = {
    "unreachable": "the model server could not be reached",
    "auth": "the model server refused our API key",
    "unknown_model": "the model server does not know the configured model",
    "rate_limited": "the model server is rate-limiting us",
    "timeout": "the model server did not answer in time",
    "bad_response": "the model server sent a reply we could not read",
    "error": "the model failed",
}


# Sessions another framework's agents write (integrations/openai_agents.py: DeskSession) or wrote
# (integrations/importer.py: `supportdesk import`): a customer message at their end is not a turn
# of ours that a crash cut short, so resume leaves them be.
FOREIGN_CHANNELS = frozenset({"agents-sdk", "import"})
# How far back a turn's own start (its customer message) is looked for. Model calls see their
# own window (engine/history_window.py).
HISTORY_WINDOW = 400

# What the fallback agent tells the customer when a limit ends the turn.
LIMIT_ANSWER = (
    "{title} here: I've taken your conversation back because our agents could not settle it this time; "
    "reply with what you need most and I'll pass it to the right person, or ask for a human."
)


class _TurnKeys:
    """Idempotency keys for one turn's side-effecting calls: session, turn, tool, and the
    call's number among that tool's calls in the turn. A turn resumed after a crash numbers
    its calls the same way, whatever call ids the model makes up this time."""

    def __init__(self, session_id: str, turn_seq: int, stored_calls: dict[str, int], key_seq: int | None = None):
        self.session_id = session_id
        # The customer message this turn answers (an offer's answer is the message right after it).
        self.turn_seq = turn_seq
        # The customer message the turn began with, which its keys are named after: an earlier
        # one when more came in while the turn ran (stored without the lease, issue 32).
        self.key_seq = key_seq if key_seq is not None else turn_seq
        self.calls = dict(stored_calls)

        # Calls the customer confirmed and the engine ran in this turn (the call, its output): a
        # model that asks for the same call again after the yes is told it was done, not re-offered.
        self.confirmed: list[tuple[str, dict[str, Any], str]] = []

    def next_key(self, tool: str) -> str:
        self.calls[tool] = self.calls.get(tool, 0) + 1
        return f"{self.session_id}/turn-{self.key_seq}/{tool}/{self.calls[tool]}"


def provider_error_text(exc: ProviderError) -> str:
    said = exc.message or PROVIDER_ERROR_TEXT.get(exc.kind, "the model failed")
    return f"{said[:1].upper()}{said[1:]}. The customer's message is saved; retry the turn with /retry."


# How many sessions' customer words a runner keeps between tool calls (a worker serves many).
CUSTOMER_WORDS_KEPT = 256


def _stamp(message: Item) -> tuple[Any, str]:
    """What tells one stored message from another at the same seq of a session."""
    return message.created_at, getattr(message, "text", "")


class _StepNotStored(Exception):
    """A tool step's append failed (its cause): raised through the step's catch-all for model
    failures, which would otherwise report the store's failure as the model's."""


class Runner:
    def __init__(
        self,
        store: Store,
        config: DeskConfig,
        provider: ModelProvider | Later[ModelProvider],
        tools: ToolRegistry | Later[ToolRegistry],
        services: Services | None = None,
        hooks: HookSet | Later[HookSet] | None = None,
    ):
        self.store = store
        self.config = config
        # Either may be deferred (engine/later.py): built on first use, or by `warm()`.
        self._provider = provider
        self._tools = tools
        self.services = services
        # Code outside the desk that watches each step and may veto some (engine/hooks.py);
        # the desk file's hooks are loaded where the desk is wired (supportdesk/wiring.py),
        # deferred like the model: finding entry points reads every installed package's metadata.
        self._hooks: HookSet | Later[HookSet] = hooks if hooks is not None else HookSet()
        # How much of the log each model call sees, and the note for the rest (engine/history_window.py).
        self.windows = HistoryWindows(provider)
        # What each session's customer has written so far, and the seq read up to: the account
        # tools' policies ask on every call, and the log is append-only, so each ask reads only
        # the messages written since the last (not a long session's every message again).
        # Each entry: (seq read up to, that message's (created_at, text), the customer's words).
        self._customer_said: dict[str, tuple[int, tuple[Any, str] | None, list[str]]] = {}
        # The fencing token of each session's turn lease this runner holds: every append of the
        # turn carries it, and the store refuses it once another holder took the session.
        self._fences: dict[str, str] = {}
        # The leases those tokens are of: a turn's last append gives its lease back (`_append`).
        self._leases: dict[str, TurnLease] = {}
        # The running turns' reads (engine/turn_reads.py): one read when a turn starts, then
        # what it stores, so its steps do not read the window and the context again.
        # A turn's reads also hold what it holds back for its next append (`_append(hold=True)`).
        self._turn_reads: dict[str, TurnReads] = {}

    @property
    def provider(self) -> ModelProvider:
        return ready(self._provider)

    @provider.setter
    def provider(self, provider: ModelProvider) -> None:
        self._provider = provider

    @property
    def provider_built(self) -> bool:
        return not isinstance(self._provider, Later) or self._provider.built

    @property
    def tools(self) -> ToolRegistry:
        return ready(self._tools)

    @tools.setter
    def tools(self, tools: ToolRegistry) -> None:
        self._tools = tools

    @property
    def hooks(self) -> HookSet:
        return ready(self._hooks)

    @hooks.setter
    def hooks(self, hooks: HookSet) -> None:
        self._hooks = hooks

    def close_hooks(self) -> None:
        """Let the hooks flush and let go; hooks never loaded have nothing to close."""
        if not isinstance(self._hooks, Later) or self._hooks.built:
            self.hooks.close()

    @property
    def warmed(self) -> bool:
        """Nothing deferred is left to build."""
        return not any(isinstance(part, Later) and not part.built for part in (self._provider, self._tools, self._hooks))

    def warm(self) -> None:
        """Build whatever was deferred (the model, the tools, the hooks): safe to call from a thread."""
        self.provider, self.tools, self.hooks  # noqa: B018 (built on access)

    def warm_model(self) -> None:
        """Let the model do its one-off work now (`warm_up`, when it has any: the offline model's
        readers and rules), so the first message does not wait for it on the event loop: `serve`
        before it listens, the TUI on a thread once its first page is up. Safe from a thread."""
        warm_up = getattr(self.provider, "warm_up", None)
        if warm_up is not None:
            warm_up()

    # --- sessions and turns ----------------------------------------------------------------------

    async def new_session(self) -> str:
        info = await self.store.create_session(self.config.desk.entry)
        return info.id

    async def send(self, session_id: str | None, text: str, *, channel: str = "tui") -> AsyncGenerator[Event, None]:
        """Store the customer's message, then let the agents work until one answers.

        `channel` is where a new session's customer came from (`SessionInfo.channel`)."""
        new = session_id is None
        if session_id is None:
            # The session and its first message are one transaction: a message that cannot be
            # stored (disk full, read-only file) leaves no empty session behind.
            entry = self.config.desk.entry
            info = await self.store.create_session(
                entry, channel=channel, first=[Message(role="customer", text=text, agent=entry)]
            )
            session_id = info.id
            yield SessionStarted(session_id)
        async with aclosing(self._one_at_a_time(session_id, lambda reads: self._send(session_id, text, reads, new=new))) as turn:
            async for event in turn:
                yield event

    async def _send(self, session_id: str, text: str, reads: TurnReads, *, new: bool) -> AsyncGenerator[Event, None]:
        # `reads`: the turn's one read, taken with its lease: the session, its newest items, its
        # context and who holds it; the turn's steps read from it and what they store.
        if new:
            first = await reads.latest(session_id, 1) if reads.head == 1 else []
            stored = first[0] if first else await self.store.item(session_id, 1)
            assert stored is not None
        else:
            info = reads.session
            if info is None:
                raise TurnError(f"no session {session_id!r}")
            # A turn a crash left unfinished is finished first, under its own turn's keys, so a
            # tool that ran before the crash is not run again for the new message.
            async for event in self._resume(session_id, info=info, reads=reads, final=False):
                yield event
            # The session as read, and as the resumed turn (if any) moved it, says who holds it.
            info = reads.session if reads.fresh else None
            active = self._present(info.active_agent) if info is not None else None
            stored = await self._store_message(session_id, text, active=active)
            reads.add(stored)
        yield Appended(stored)
        async with aclosing(self._turn(session_id, started=stored, reads=reads)) as events:
            async for event in events:
                yield event

    async def receive(
        self, session_id: str, text: str, *, meta: dict[str, Any] | None = None, external_id: str | None = None,
        session: SessionInfo | None = None,
    ) -> Item:
        """Store the customer's message in its own transaction, without running a turn.

        A channel that must answer "stored" before the agents work (the web API's 202) calls
        this, then `resume` (which answers only an unanswered message) when the session's turn
        comes. `meta` is the channel's own bookkeeping (its message id), kept with the item and
        never shown to agents.

        Stored at once, without the turn lease and unfenced (issue 32): a customer message is
        not a step of any turn, so no turn's lease has a say in it, and waiting for a running
        turn (a slow model: seconds) would delay "stored" by that long. A turn running on the
        session meanwhile sees it from its next step on, at its seq: this runner's running turn
        is told (`TurnReads.stored_meanwhile`), so items it holds for its next append move after
        it; a turn in another process notices the item it was not shown at its next append
        (a gap, or `HeadMoved` for held items); an answer whose step did not see it does not answer it
        (`events.unfinished_turn` reads what each answer's step saw), so the next turn does.

        `external_id`: the channel's own id of the message (Chatwoot's message id): the store
        keeps one message per (session, external id), checked in the append's transaction, so
        a redelivery, or one delivery two workers handle at once, raises `DuplicateItem` and is
        not stored again.

        `session`: the session as the caller has just read it (serve's token check), so who holds
        the conversation is not read again."""
        if external_id is not None:
            meta = {**(meta or {}), EXTERNAL_ID: external_id}
        agent = self._present(session.active_agent) if session is not None and session.id == session_id else await self._active_agent(session_id)
        message = Message(role="customer", text=text, agent=agent, meta=meta or {})
        [stored] = await self.store.append(session_id, [message])
        running = self._turn_reads.get(session_id)
        if running is not None:  # a turn of this runner reads the session: its next step sees it in place
            running.stored_meanwhile(stored)
        return stored

    async def _store_message(
        self, session_id: str, text: str, *, meta: dict[str, Any] | None = None, active: str | None = None
    ) -> Item:
        """The customer's message, appended by the holder of the turn lease (`send`; `active`:
        the agent holding the conversation, when the caller has just read it)."""
        active = active or await self._active_agent(session_id)
        message = Message(role="customer", text=text, agent=active, meta=meta or {})
        [stored] = await self._append(session_id, [message])
        return stored

    async def retry_turn(self, session_id: str) -> AsyncGenerator[Event, None]:
        """Run the agents again on the log as it stands (after a provider error, say)."""
        async with aclosing(self._one_at_a_time(session_id, lambda reads: self._turn(session_id, reads=reads))) as turn:
            async for event in turn:
                yield event

    async def _one_at_a_time(
        self, session_id: str, turn: Callable[[TurnReads], AsyncGenerator[Event, None]]
    ) -> AsyncGenerator[Event, None]:
        """Run a turn holding the session's turn lease: a turn another process (or machine)
        runs on this session ends before this one starts, and this one reads what it left.

        The lease comes with the turn's one read (`TurnLease.try_start`: one round trip), and
        goes back with the turn's last append when nothing is written after it (`_append`'s
        `last`); else here, after the turn.

        Callers iterate it under `aclosing`: a caller that stops early (the TUI's turn ended by
        an error) then releases the lease at once, not whenever the abandoned generator is
        collected."""
        lease = self.store.turn(session_id)
        depth = self._read_depth()
        try:
            start = await lease.try_start(depth)
            if start is None:
                yield TurnWaiting(session_id)
                start = await lease.start(depth)
            reads = TurnReads.of(self.store, session_id, depth, start)
            # (each generator below is closed when its caller stops early, not left to the
            # garbage collector, whose finaliser wakes the event loop through its self-pipe:
            # eval routing stops every turn at the handoff)
            async with self._fenced(session_id, lease), aclosing(turn(reads)) as events:
                async for event in events:
                    yield event
        finally:
            if lease.token is not None:  # (not given back by the turn's last append)
                await lease.release()

    @asynccontextmanager
    async def _fenced(self, session_id: str, lease: TurnLease) -> AsyncIterator[None]:
        """While the lease is held, this runner's appends to the session carry its token. An
        append the store refuses (`LeaseLost`: this holder paused past its lease and another
        took the session) ends the turn there, with the store's one-line reason."""
        token = lease.token
        if token is not None:
            self._fences[session_id] = token
            self._leases[session_id] = lease
        try:
            yield
        finally:
            if token is not None and self._fences.get(session_id) == token:
                del self._fences[session_id]
                del self._leases[session_id]

    async def _append(
        self, session_id: str, items: Sequence[Item], *, last: bool = False, hold: bool = False
    ) -> list[Item]:
        """Append fenced by the session's turn lease when this runner holds it. `last`: nothing
        of the turn is written after these items, so the lease goes back in their transaction
        (`Store.append(release=)`), saving the turn a round trip; a later append of the turn
        would then be refused (`LeaseLost`), never written unfenced.

        `hold`: items nothing outside the turn acts on before its next step ends (a handoff, a
        step whose calls only read), kept for the turn's next append when `_may_hold` (one round trip and one commit less a
        handoff, issue 34); [] is returned then, and the next append stores and returns them
        first, told the seq they were shown at (`Store.append(at=)`)."""
        reads = self._turn_reads.get(session_id)
        if reads is not None and reads.step_saw_upto is not None:
            # A customer's message was placed before held items this step was shown
            # (`TurnReads.stored_meanwhile`): it saw the log only up to there, so the message it
            # never saw is answered by the next step or turn (`events.seen_upto`).
            items = [saw_upto(item, reads.step_saw_upto) for item in items]
        if hold and not last and self._may_hold(session_id):
            assert reads is not None
            reads.hold(items)  # (after any held before: all go with the next append)
            return []
        held = reads.take_held() if reads is not None else None
        if held is None:
            return await self._store_append(session_id, items, last)
        at, waiting = held
        try:
            return await self._store_append(session_id, [*waiting, *items], last, at=at)
        except HeadMoved:
            # A customer's message was stored while the held items waited (issue 32): they go
            # where the log ends now, then this step's items, marked as having seen the log up to
            # where the held items were shown, so the message the step never saw is answered
            # by the next turn (`events.seen_upto`).
            stored = await self._store_append(session_id, waiting, False)
            return stored + await self._store_append(session_id, [saw_upto(item, at - 1) for item in items], last)

    async def _store_append(
        self, session_id: str, items: Sequence[Item], last: bool, *, at: int | None = None
    ) -> list[Item]:
        lease = self._leases.get(session_id)
        if last and lease is not None and lease.token is not None:
            return await self.store.append(session_id, items, release=lease, at=at)
        return await self.store.append(session_id, items, fence=self._fences.get(session_id), at=at)

    def _may_hold(self, session_id: str) -> bool:
        """Whether a turn's items may wait for its next append: it holds the session's lease (so
        only a customer's message can land meanwhile, which `at` catches), its reads hold the
        log whole in memory (its steps read the held items there, `TurnReads.hold`), no hook
        watches (hooks are told each stored item's seq) and its model says its steps come at
        once (`instant_steps`: the embedded model's take milliseconds; a model server's can take
        seconds, and the customer's page would wait that long for the handoff).

        What it costs: a customer's message stored within that moment is answered by the next
        turn, not by the step after the handoff (`HeadMoved` below), and a crash within it
        loses the handoff with the step, so the resumed turn hands off again (a handoff runs no
        tool)."""
        reads = self._turn_reads.get(session_id)
        return (
            session_id in self._fences and reads is not None and reads.in_memory(session_id, 0)
            and not self.hooks and getattr(self.provider, "instant_steps", False) is True
        )

    async def resume(self, session_id: str, *, idle_for: float | None = None) -> AsyncGenerator[Event, None]:
        """Finish the last turn if a crash stopped it before any agent answered; else nothing.

        Side-effecting tools are keyed by the session, the turn and the call's place in it,
        not by the model's call id, so a refund that ran before the crash is not made again
        however the model names its calls this time. Runs under the turn lease, and looks at
        the log only once it holds it. `idle_for`: only when nothing was written for that long
        (the TUI's opening a session: a turn another process runs right now is left to it)."""
        async with aclosing(self._one_at_a_time(session_id, lambda reads: self._resume(session_id, idle_for, reads=reads))) as turn:
            async for event in turn:
                yield event

    async def _resume(
        self, session_id: str, idle_for: float | None = None, *, info: SessionInfo | None = None,
        reads: TurnReads | None = None, final: bool = True,
    ) -> AsyncGenerator[Event, None]:
        if info is None:
            info = reads.session if reads is not None and reads.fresh else await self.store.get_session(session_id)
        if info is not None and info.channel in FOREIGN_CHANNELS:
            return  # another framework's agents hold this session: not ours to answer
        if idle_for is not None and not await self._idle(reads or self.store, session_id, idle_for):
            return  # the turn may still be running in another process
        async for event in self._turn(session_id, only_unfinished=True, reads=reads, final=final):
            yield event

    async def _idle(self, reads: Store | TurnReads, session_id: str, seconds: float) -> bool:
        """Nothing was written to the session for `seconds`: a live turn appends at least once
        per step, and a step that runs longer than `step_timeout` ends in a limit notice."""
        latest = await reads.latest(session_id, 1)
        if not latest:
            return True
        return (self.store.clock() - latest[-1].created_at).total_seconds() >= seconds

    async def unfinished_turn(self, session_id: str) -> int | None:
        """The seq of the customer message whose turn never ended, or None (`events.unfinished_turn`)."""
        return await unfinished_turn(self.store, session_id)

    async def _turn_start(self, session_id: str) -> tuple[int, dict[str, int], int]:
        """The seq of the turn's customer message, how many calls of each tool the turn has
        stored so far (a resumed or retried turn goes on counting), and the seq its keys are
        named after: the first customer message since the last turn ended. Customer messages are
        stored without the lease (issue 32), so one may land inside a turn; a turn resumed after
        a crash then still names its calls as the turn did before the crash, and counts them all."""
        calls: dict[str, int] = {}
        tail = await self._reads(session_id).latest(session_id, HISTORY_WINDOW)
        turn_seq = key_seq = 0
        for at in range(len(tail) - 1, -1, -1):
            item = tail[at]
            if item.kind == "message" and item.role == "customer":
                turn_seq = turn_seq or item.seq
                key_seq = item.seq
            elif turn_seq and _ends_a_turn(item, tail[at + 1] if at + 1 < len(tail) else None):
                break
            if item.kind == "tool_call":
                calls[item.name] = calls.get(item.name, 0) + 1
        return turn_seq, calls, key_seq

    async def _active_agent(self, session_id: str) -> str:
        info = await self.store.get_session(session_id)
        if info is None:
            raise TurnError(f"no session {session_id!r}")
        return self._present(info.active_agent)

    def _present(self, agent: str) -> str:
        # A desk file edited since the session began may no longer have that agent.
        return agent if agent in self.config.agents else self.config.desk.fallback

    def _read_depth(self) -> int:
        """How many of the newest items a turn's one read holds: enough for every agent's window."""
        agents = self.config.agents.values()
        return max([HISTORY_WINDOW, *(read_depth(settings_for(self.config, agent)) for agent in agents)])

    async def _start_reads(self, session_id: str) -> TurnReads:
        """The turn's one read when it starts (a turn whose lease did not bring it)."""
        return await TurnReads.read(self.store, session_id, self._read_depth())

    def _reads(self, session_id: str) -> Store:
        """Where a running turn reads its session: its `TurnReads`, else the store."""
        return cast(Store, self._turn_reads.get(session_id) or self.store)

    async def _turn(
        self, session_id: str, *, only_unfinished: bool = False, started: Item | None = None,
        reads: TurnReads | None = None, final: bool = True,
    ) -> AsyncGenerator[Event, None]:
        """A turn under the session's lease, reading from `reads` (read now when not given) and
        adding to it every item the turn stores. `final`: nothing is written under the lease
        after this turn (not so for the unfinished turn `send` finishes before its message),
        so its last append may give the lease back."""
        if only_unfinished and reads is None and await unfinished_turn(self.store, session_id) is None:
            return  # (a glance at the log's end: opening a session in the TUI asks this)
        reads = reads or await self._start_reads(session_id)
        self._turn_reads[session_id] = reads
        try:
            async with aclosing(self._steps(session_id, reads, only_unfinished=only_unfinished, started=started, final=final)) as steps:
                async for event in steps:
                    if isinstance(event, Appended):
                        reads.add(event.item)
                    yield event
        finally:
            # (held items a failed turn never stored go with its reads, as in a crash: the turn
            # is unfinished and runs again; a turn that fails ends its caller's use of the reads)
            if self._turn_reads.get(session_id) is reads:
                del self._turn_reads[session_id]

    async def _steps(
        self, session_id: str, reads: TurnReads, *, only_unfinished: bool = False, started: Item | None = None,
        final: bool = True,
    ) -> AsyncGenerator[Event, None]:
        """`started`: the customer message this turn answers, just stored under this turn's lease.
        It was stamped with the agent holding the conversation, and no call of the turn is stored
        yet, so neither is read again (two reads of every message's turn, one of 400 items)."""
        # Checked inside the turn, so whatever serializes turns on a session (the turn lease)
        # also keeps two processes from both finishing one interrupted turn.
        if only_unfinished and await unfinished_turn(self._reads(session_id), session_id) is None:
            return
        holder = reads.holder if reads.fresh else await self.held_by(session_id)
        if holder is not None:
            # A person holds the conversation: the customer's message waits for them, stored.
            if not only_unfinished:
                yield Done(session_id, await self._active_agent(session_id), "held", "staff")
            return
        limits = self.config.desk.limits
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limits.message_timeout
        if started is not None:
            active = self._present(started.agent)
        elif reads.fresh and reads.session is not None:
            active = self._present(reads.session.active_agent)
        else:
            active = await self._active_agent(session_id)
        holders = [active]  # who held the conversation this turn, for ping-pong detection
        specs: dict[str, list[ToolSpec]] = {}  # the turn's tool specs by agent (`_request`)
        handoffs = 0
        statuses: set[str] = set()

        def ending(items: Sequence[Item]) -> bool:
            """Whether a turn that ends with `items` writes nothing after them: no after_turn
            hook may write, and the session's status stays as read. Then the lease goes back
            with them (`_append`'s `last`)."""
            if not final or self.hooks or not (reads.fresh and reads.session is not None):
                return False
            return reads.session.status == _turn_status(statuses | {i.notice_kind for i in items if isinstance(i, Notice)})
        outcome: TurnOutcome = "answered"
        if not self.warmed:
            # A deferred desk's model, tools and hooks are built in a thread, not on the event
            # loop: a turn that comes before the TUI's warm-up (a crashed turn resumed as the
            # session opens, a message typed at once) would otherwise freeze its screen while
            # they build (the offline model, every tool, the entry-point scan).
            await asyncio.to_thread(self.warm)
        self.hooks.start_turn()
        vetoed = False
        async for ev in self._before_turn_hooks(session_id, active):
            # Only a veto ends the turn: a hook that failed, or answered what before_turn does
            # not take, leaves a notice and the turn goes on.
            if isinstance(ev, Appended) and isinstance(ev.item, Notice) and ev.item.data.get("vetoed") == "the turn":
                vetoed = True
            yield ev
        turn = _TurnKeys(session_id, *((started.seq, {}, started.seq) if started is not None else await self._turn_start(session_id)))
        # The customer's message may answer the offer made right before it: read it first, and
        # on a yes run the offered call, so the agent's step sees the answer and the result.
        async for ev in self._settle_offer(session_id, active, turn, vetoed=vetoed):
            if isinstance(ev, Appended) and isinstance(ev.item, Notice):
                statuses.add(ev.item.notice_kind)  # (the confirmed call may wait for staff)
            if isinstance(ev, Appended) and isinstance(ev.item, Handoff):
                # A yes to an action passed up: the agent that ran it answers.
                active = ev.item.to_agent
                holders.append(active)
                handoffs += 1
            yield ev

        for step in range(1, limits.max_steps_per_message + 2):
            if vetoed:
                outcome = "vetoed"
                break
            if step > limits.max_steps_per_message:
                async for ev in self._limit(session_id, active, f"{limits.max_steps_per_message} steps without an answer", ending):
                    yield ev
                active, outcome = self.config.desk.fallback, "limit"
                break
            agent = self.config.agents[active]
            yield StepStarted(active, step)
            budget = min(limits.step_timeout, deadline - loop.time())
            action = None
            try:
                if budget <= 0:
                    raise TimeoutError
                async with asyncio.timeout(budget):
                    request = await self._request(session_id, agent, specs)
                    seen = ModelStep(
                        session_id, active, step, len(request.history),
                        request.history[-1].seq if request.history else 0, self._model_name(agent),
                    )
                    for item in await self._hook_notices(session_id, "before_model_step", seen, active):
                        yield Appended(item)
                    async for out in self.provider.stream(request):
                        if isinstance(out, TextDelta):
                            yield Token(active, out.text)
                        else:
                            action = out
                    if action is not None:
                        # What this call saw, for the inspector ("the last call saw N items").
                        action.meta["history"] = self.windows.last_seen(session_id)
                        usage = action.usage
                        done = ModelStepDone(
                            session_id, active, step, _action_name(action),
                            usage.input_tokens if usage else None, usage.output_tokens if usage else None,
                        )
                        for item in await self._hook_notices(session_id, "after_model_step", done, active):
                            yield Appended(item)
                    if isinstance(action, CallTools):
                        stored = await self._run_tools(session_id, agent, action, request.context, turn, ending)
            except TimeoutError:
                which = "message" if deadline - loop.time() <= 0 else "step"
                seconds = limits.message_timeout if which == "message" else limits.step_timeout
                async for ev in self._limit(session_id, active, f"the {which} took longer than {seconds:g} s", ending):
                    yield ev
                active, outcome = self.config.desk.fallback, "limit"
                break
            except _StepNotStored as failed:
                # The store refused the step's append (a full disk, the database away, the lease
                # lost): the turn fails as at any other append (serve retries it), not as the
                # model's failure, whose notice would not be stored either. (The held handoff
                # goes with a tool step's append, so this is the turn's first write then.)
                # Raised with what it came from (the driver's error, by which `supportdesk run`
                # tells a database gone from one that refused): raising it here makes this
                # handler its context, in place of the one it had.
                refused = failed.__cause__
                assert refused is not None
                raise refused from (refused.__cause__ or refused.__context__)
            except ProviderError as exc:
                notice = Notice(
                    notice_kind="provider_error", text=provider_error_text(exc), data={"error": exc.kind}, agent=active
                )
                for item in await self._append(session_id, [notice], last=ending([notice])):
                    yield Appended(item)
                outcome = "provider_error"
                break
            except Exception as exc:  # a broken provider must not lose the turn or crash the app
                notice = Notice(
                    notice_kind="provider_error",
                    text=f"The model failed: {type(exc).__name__}: {exc}",
                    data={"error": "error"},
                    agent=active,
                )
                for item in await self._append(session_id, [notice], last=ending([notice])):
                    yield Appended(item)
                outcome = "provider_error"
                break

            if action is None:
                notice = Notice(notice_kind="provider_error", text="The model returned no action", agent=active)
                for item in await self._append(session_id, [notice], last=ending([notice])):
                    yield Appended(item)
                outcome = "provider_error"
                break

            if isinstance(action, CallTools):
                offered = False
                for item in stored:
                    if item.kind == "notice":
                        statuses.add(item.notice_kind)
                    offered = offered or item.kind == "offer"
                    yield Appended(item)
                if offered:
                    break  # the turn waits for the customer's answer to the offer
                continue

            items = self._context_items(action.context, active)
            meta = self._meta(action)
            if isinstance(action, Answer):
                items.append(Message(role="agent", text=action.text, agent=active, meta=meta))
                for item in await self._append(session_id, items, last=ending(items)):
                    yield Appended(item)
                break

            assert isinstance(action, Transfer)
            refusal = self._check_transfer(agent, action)
            if refusal:
                call = action.call
                call_id = call.call_id if call and call.call_id else f"call_{uuid.uuid4().hex[:10]}"
                name = transfer_tool_name(action.to_agent)
                arguments = {"reason": action.reason}
                if call is not None:
                    arguments = call.arguments if call.arguments is not None else {"_invalid_json": call.raw_arguments}
                items += [
                    ToolCall(call_id=call_id, name=name, arguments=arguments, agent=active, meta=meta),
                    ToolResult(call_id=call_id, name=name, output=refusal, is_error=True, agent=active),
                ]
                for item in await self._append(session_id, items):
                    yield Appended(item)
                continue
            problem = self._handoff_limit(handoffs + 1, holders + [action.to_agent])
            if problem:
                for item in await self._append(session_id, items):
                    yield Appended(item)
                async for ev in self._limit(session_id, active, problem, ending):
                    yield ev
                active, outcome = self.config.desk.fallback, "limit"
                break
            said = await self.hooks.call(
                "before_handoff", HandoffAsked(session_id, active, action.to_agent, action.reason), agent=active
            )
            items += said.notices
            if said.decision is not None:
                items += self._held_handoff(active, action, said.hook, said.decision, meta)
                for item in await self._append(session_id, items):
                    if item.kind == "notice":
                        statuses.add(item.notice_kind)
                    yield Appended(item)
                continue
            if action.text:
                items.append(Message(role="agent", text=action.text, agent=active))
            items.append(
                Handoff(
                    from_agent=active,
                    to_agent=action.to_agent,
                    reason=action.reason,
                    handoff_kind=action.handoff_kind,
                    agent=active,
                    meta=meta,
                )
            )
            # Held for the next step's append when it may be: the handoff's seq is known then,
            # and a held handoff has no hook to tell (`_may_hold`).
            stored_items = await self._append(session_id, items, hold=True)
            for item in stored_items:
                yield Appended(item)
            handoffs += 1
            if stored_items:
                handed = HandoffDone(session_id, active, action.to_agent, action.reason, stored_items[-1].seq)
                for item in await self._hook_notices(session_id, "after_handoff", handed, active):
                    yield Appended(item)
            active = action.to_agent
            holders.append(active)

        if reads.holding:  # (each way out of a step after a handoff appends; one that did not)
            for item in await self._append(session_id, []):
                yield Appended(item)
        status = _turn_status(statuses)
        lease = self._leases.get(session_id)
        if lease is not None and lease.token is None:
            pass  # given back with the last append (`ending`): the status stood as read
        elif not (reads.fresh and reads.session is not None and reads.session.status == status):
            await self.store.set_status(session_id, status)  # (unchanged, it is not written again)
        for item in await self._hook_notices(session_id, "after_turn", TurnEnded(session_id, active, outcome), active):
            yield Appended(item)
        yield Done(session_id, active, outcome, status)

    # --- hooks (engine/hooks.py) -------------------------------------------------------------------

    async def _hook_notices(self, session_id: str, moment: str, event: Any, agent: str) -> list[Item]:
        """Run an observing moment's hooks; a hook that failed is reported in the log."""
        if not self.hooks:
            return []
        said = await self.hooks.call(moment, event, agent=agent)
        return await self._append(session_id, said.notices) if said.notices else []

    async def _before_turn_hooks(self, session_id: str, active: str) -> AsyncGenerator[Event, None]:
        """Yields only when something was appended; a veto leaves its notice (and the hook's
        reply) in the log and the turn ends before any model call."""
        if not self.hooks:
            return
        latest = await self._reads(session_id).latest(session_id, 1)
        last = latest[-1] if latest else None
        text = last.text if isinstance(last, Message) and last.role == "customer" else ""
        started = TurnStarted(session_id, active, text, last.seq if last is not None else 0)
        said = await self.hooks.call("before_turn", started, agent=active)
        items: list[Item] = list(said.notices)
        if isinstance(said.decision, Veto):
            items.append(veto_notice(said.hook, said.decision, "the turn", active))
            if said.decision.reply:
                items.append(Message(role="agent", text=said.decision.reply, agent=active, meta={"hook": said.hook}))
        if items:
            for item in await self._append(session_id, items):
                yield Appended(item)

    def _model_name(self, agent: AgentConfig) -> str:
        return agent.model or self.config.model.model or self.config.model.provider

    def _held_handoff(
        self, active: str, action: Transfer, hook: str, decision: Veto | AskApproval, meta: dict[str, Any]
    ) -> list[Item]:
        """A vetoed handoff, or one waiting for staff: the agent reads why as its call's result."""
        call_id = f"call_{uuid.uuid4().hex[:10]}"
        name = transfer_tool_name(action.to_agent)
        call = ToolCall(call_id=call_id, name=name, arguments={"reason": action.reason}, agent=active, meta=meta)
        if isinstance(decision, Veto):
            return [
                call,
                ToolResult(call_id=call_id, name=name, output=f"vetoed by {hook}: {decision.reason}", is_error=True, agent=active),
                veto_notice(hook, decision, f"the handoff to {action.to_agent}", active, call_id=call_id),
            ]
        return [
            call,
            ToolResult(call_id=call_id, name=name, output=pending_text(decision.reason), agent=active, awaits_approval=True),
            Notice(
                notice_kind="approval_requested",
                text=f"{hook} asks staff to approve the handoff to {action.to_agent}: {decision.reason}",
                data={"approval_id": call_id, "tool": name, "handoff": action.to_agent, "reason": action.reason,
                      "handoff_kind": action.handoff_kind, "arguments": {"reason": action.reason}},
                agent=active,
            ),
        ]

    # --- one step's parts --------------------------------------------------------------------------

    async def _request(
        self, session_id: str, agent: AgentConfig, specs: dict[str, list[ToolSpec]] | None = None
    ) -> StepRequest:
        """One step's request. `specs`: the turn's tool specs by agent, filled here (an agent's
        tools and the desk do not change within a turn, and building them costs about as much
        as the step's window)."""
        reads = self._reads(session_id)  # (a running turn's: from memory, no store read)
        if isinstance(reads, TurnReads):
            reads.viewed()
        settings = settings_for(self.config, agent)
        if isinstance(reads, TurnReads) and reads.in_memory(session_id, read_depth(settings)):
            # Both answered from memory: awaited in turn, with no task each and no trip round
            # the event loop for the two to finish.
            window = await self.windows.build(reads, session_id, settings)
            context = await reads.context_at(session_id)
        else:
            # The two reads are independent: asked together, they cost one wait for the store,
            # not two (SQLite runs them back to back on its thread, PostgreSQL on two pooled
            # connections).
            window, context = await asyncio.gather(
                self.windows.build(reads, session_id, settings), reads.context_at(session_id),
            )
        history = window.items
        tools = specs.get(agent.name) if specs is not None else None
        if tools is None:
            tools = self.tools.specs(
                agent.tools, self.config, asked=lambda tool: requested(history, tool.name, tool.requested_in)
            )
            if specs is not None:
                specs[agent.name] = tools
        return StepRequest(
            session_id=session_id,
            agent=agent,
            desk=self.config,
            tools=list(tools),
            handoff_targets=[self.config.agents[n] for n in agent.handoffs if n in self.config.agents],
            history=history,
            context={k: e.value for k, e in context.items()},
        )

    @staticmethod
    def _meta(action: Answer | CallTools | Transfer) -> dict[str, Any]:
        meta = dict(action.meta)
        if action.usage is not None:
            meta["usage"] = action.usage.as_meta()
        return meta

    @staticmethod
    def _context_items(updates: dict[str, Any], writer: str) -> list[Item]:
        return [ContextSet(key=k, value=v, writer=writer, agent=writer) for k, v in updates.items()]

    def _check_transfer(self, agent: AgentConfig, action: Transfer) -> str | None:
        """Why this handoff is refused (the model reads it as the call's error result), or None."""
        if action.call is not None:
            # A handoff the model asked for as a tool call is checked like any tool's arguments.
            _, problem = check_arguments(transfer_tool_name(action.to_agent), TransferArgs, action.call.arguments)
            if problem:
                return problem
        if action.to_agent in agent.handoffs and action.to_agent in self.config.agents:
            return None
        valid = ", ".join(agent.handoffs) or "none"
        return f"refused: {agent.name} cannot hand off to {action.to_agent!r}; valid targets: {valid}"

    def _handoff_limit(self, count: int, holders: list[str]) -> str | None:
        limits = self.config.desk.limits
        if count > limits.max_handoffs_per_message:
            return f"more than {limits.max_handoffs_per_message} handoffs for one message"
        window = holders[-limits.pingpong_window :]
        if len(window) >= limits.pingpong_window and len(set(window)) < limits.pingpong_min_unique:
            return f"agents kept handing the conversation back and forth ({' → '.join(window)})"
        return None

    async def _run_tools(
        self, session_id: str, agent: AgentConfig, action: CallTools, context: dict[str, Any], turn: _TurnKeys,
        ending: Callable[[Sequence[Item]], bool] | None = None,
    ) -> list[Item]:
        """Run the calls; append the step's calls, results and context writes together.

        `context` is the shared context the step's request was built from, so the tools act
        on the same facts the model decided on (and the step reads it once, not twice)."""
        active = agent.name
        items: list[Item] = self._context_items(action.context, active)
        # The step's text, said before its calls run; unless it is the question of the offer
        # the step makes (then it is said once, as the offer's sentence, after the calls).
        said = Message(role="agent", text=action.text, agent=active) if action.text else None
        if said is not None:
            items.append(said)
        context = {**context, **action.context}
        meta = self._meta(action)
        results: list[Item] = []
        offer: Offer | None = None
        for call in action.calls:
            call_id = call.call_id or f"call_{uuid.uuid4().hex[:10]}"
            arguments = call.arguments if call.arguments is not None else {"_invalid_json": call.raw_arguments}
            items.append(ToolCall(call_id=call_id, name=call.name, arguments=arguments, agent=active, meta=meta))
            meta = {}  # usage belongs to the step once, not to each call
            key = turn.next_key(call.name)  # every call counts, vetoed or not, as the log does
            # A call passed up is checked as the agent it is passed up to (its tools, its limit)
            # and is only ever offered: the caller never runs it (`_passed_up`).
            runs_as = self._passed_up(agent, call)
            if isinstance(runs_as, str):
                results.append(ToolResult(call_id=call_id, name=call.name, output=runs_as, is_error=True, agent=active))
                continue
            gated = await self._gated(session_id, runs_as, call_id, call.name, call.arguments, context)
            if isinstance(gated, ToolOutput):  # refused by the tool's policy: never offered
                results.append(ToolResult(call_id=call_id, name=call.name, output=gated.text(), is_error=True, agent=active))
                continue
            if gated is None and runs_as is not agent:
                results.append(ToolResult(
                    call_id=call_id, name=call.name, is_error=True, agent=active,
                    output=f"not run: {call.name} passed up to {runs_as.name} runs only on the customer's yes to its offer, "
                    f"and this desk does not wait for one; hand the conversation to {runs_as.name}",
                ))
                continue
            if gated is not None and offer is not None:
                # One offer at a time: the customer answers one question with one message.
                results.append(ToolResult(
                    call_id=call_id, name=call.name, is_error=True, agent=active,
                    output=f"not run: the customer is asked about {offer.tool} first; offer this again after their answer",
                ))
                continue
            done = next((out for tool, args, out in turn.confirmed if same_call(tool, args, call.name, call.arguments)), None)
            if gated is not None and done is not None:
                # An error result, so nothing (figures, the TUI) counts it as a second act.
                results.append(ToolResult(
                    call_id=call_id, name=call.name, agent=active, is_error=True,
                    output=f"already done on the customer's yes (not run again): {done}",
                ))
                continue
            if gated is not None:
                # The gate: a call that needs the customer's yes does not run; it is offered.
                # The model may phrase the question (issue 33 §2); the engine's own sentence asks
                # unless the model's names the action and its amount / plan / target.
                tool = self.tools.get(call.name)
                asked = said is not None and tool is not None and states_the_call(said.text, tool.offer_terms(call.arguments))
                if asked and said is not None:
                    items.remove(said)
                    said = None
                offer = Offer(
                    offer_id=f"offer_{uuid.uuid4().hex[:10]}", tool=call.name, arguments=dict(call.arguments or {}),
                    action=gated, text=action.text if asked else offer_sentence(gated), call_id=call_id, agent=active,
                    for_agent="" if runs_as is agent else runs_as.name,
                )
                results.append(ToolResult(
                    call_id=call_id, name=call.name, is_error=True, agent=active,
                    output=f"not run: {call.name} needs the customer's yes; they are asked to confirm: {gated}",
                ))
                continue
            results += await self._call(session_id, agent, call_id, call.name, call.arguments, context, key)
        if offer is not None:
            stale = await self._open_offer(session_id)
            if stale is not None:  # an earlier offer nobody answered: a new question replaces it
                results.append(self._decline(stale.offer, "expired", "desk", active))
            # The question, then the offer it asks about (channels draw its buttons under it).
            results += [Message(role="agent", text=offer.text, agent=active, meta={"offer_id": offer.offer_id}), offer]
        # An offer ends the turn (it waits for the customer's answer): its lease goes with it.
        last = offer is not None and ending is not None and ending(items + results)
        # A step whose every call only reads (`Tool.effect`) changed nothing outside the log:
        # held for the next step's append when it may be (`_may_hold`: one round trip and one
        # commit less a looked-up answer, issue 34); a crash before that append loses only reads,
        # which the resumed turn makes again. Not one with a notice: the turn's status is read
        # from the notices each step's append returns.
        reads_only = offer is None and all(
            (tool := self.tools.get(call.name)) is not None and tool.effect == "reads" for call in action.calls
        ) and not any(isinstance(item, Notice) for item in results)
        try:
            return await self._append(session_id, items + results, last=last, hold=reads_only)
        except Exception as exc:
            raise _StepNotStored() from exc

    async def _call(
        self,
        session_id: str,
        agent: AgentConfig,
        call_id: str,
        name: str,
        arguments: dict[str, Any] | None,
        context: dict[str, Any],
        key: str,
    ) -> list[Item]:
        """One call through the hooks and the tool: its result, context writes and notices
        (`context` is updated with what the call wrote)."""
        active = agent.name
        results: list[Item] = []
        said = await self.hooks.call(
            "before_tool_call", ToolCallAsked(session_id, active, call_id, name, arguments), agent=active
        )
        results += said.notices
        if isinstance(said.decision, Veto):
            output = ToolOutput(
                f"vetoed by {said.hook}: {said.decision.reason}",
                is_error=True,
                notices=[veto_notice(said.hook, said.decision, name, active, call_id=call_id)],
            )
        elif isinstance(said.decision, AskApproval):
            output = ToolOutput.held(said.decision.reason, f"{said.decision.reason} (asked by {said.hook})")
        else:
            output = await self._invoke(session_id, agent, call_id, name, arguments, context, key=key)
            done = ToolCallDone(session_id, active, call_id, name, output.text(), output.is_error)
            results += (await self.hooks.call("after_tool_call", done, agent=active)).notices if self.hooks else []
        results.append(output.result(call_id, name, active))
        results += self._context_items(output.context, active)
        context.update(output.context)
        results += [replace(n, agent=active) for n in output.notices]
        if output.approval_reason is not None:
            results.append(
                Notice(
                    notice_kind="approval_requested",
                    text=f"{agent.title} asks staff to approve {name}: {output.approval_reason}",
                    data={"approval_id": call_id, "tool": name, "arguments": arguments or {}},
                    agent=active,
                )
            )
        return results

    # --- the confirmation gate (engine/confirmation.py) -------------------------------------------

    def _passed_up(self, agent: AgentConfig, call: RequestedCall) -> AgentConfig | str:
        """The agent a call is checked and offered as: the caller, or the agent it passes the
        call up to (`RequestedCall.for_agent`: one of its handoff targets that has the tool), or
        why it may not pass it there (the model reads it as the call's error result)."""
        if not call.for_agent or call.for_agent == agent.name:
            return agent
        target = self.config.agents.get(call.for_agent)
        if target is None or call.for_agent not in agent.handoffs:
            valid = ", ".join(agent.handoffs) or "none"
            return f"refused: {agent.name} cannot pass {call.name} up to {call.for_agent!r}; valid targets: {valid}"
        if call.name not in target.tools:
            return f"refused: {target.name} has no tool {call.name!r} to pass up to"
        return target

    async def _gated(
        self,
        session_id: str,
        agent: AgentConfig,
        call_id: str,
        name: str,
        arguments: dict[str, Any] | None,
        context: dict[str, Any],
    ) -> str | ToolOutput | None:
        """For a call that must wait for the customer's yes: the action in checkable words, or
        the tool's refusal (a call its policy refuses is not offered). None when the call may
        run now (it needs no yes, or it fails anyway: unknown, not the agent's, bad arguments)."""
        tool = self.tools.get(name)
        if tool is None or name not in agent.tools or not tool.needs_confirmation(self.config):
            return None
        words = tool.action_words(arguments)
        if words is None:
            return None
        if tool.confirm_kind(self.config) == "request" and requested(
            await self._request_reads(session_id, name), name, tool.requested_in
        ):
            # An action that changes nothing by itself, asked for in the customer's latest
            # messages (as the desk reads them, whatever the model thinks): the request is the
            # consent; it runs now. Asked for by nobody, it waits for a yes like any other.
            return None
        if self.services is not None:
            await self.services.ready()
        _, held = await tool.check(self._tool_context(session_id, agent, call_id, context), arguments)
        if held is not None and held.is_error:
            return held
        return words  # (a call that waits for staff is offered: the yes comes first, then staff)

    async def _request_reads(self, session_id: str, tool: str) -> Sequence[Item]:
        """What `requested` reads for `tool`: the newest items the running turn holds when they
        reach back to where its scan stops (the tool's last run or answered offer, or
        REQUEST_WINDOW customer messages); the whole log from the store only when they do not
        (a turn's read holds hundreds of items, so hardly ever: it was one read of the whole
        log for every gated call, a round trip on PostgreSQL)."""
        reads = self._turn_reads.get(session_id)
        held = await reads.since_request(tool) if reads is not None else None
        if held is not None:
            return held
        return await self.store.range(session_id, 0, 1 << 62)

    async def _open_offer(self, session_id: str) -> OpenOffer | None:
        """The session's last offer while it is open: from the turn's reads when they can say
        (no store read), else two reads (one when no offer was ever made)."""
        reads = self._turn_reads.get(session_id)
        held = reads.since_last_offer() if reads is not None else None
        if held is not None:
            return open_offer(held) if held else None
        seqs = await self.store.kind_seqs(session_id, "offer")
        if not seqs:
            return None
        return open_offer(await self.store.range(session_id, seqs[-1], 1 << 62))

    @staticmethod
    def _decline(offer: Offer, why: DeclineWhy, source: AnswerSource, agent: str, answer_seq: int = 0) -> Decline:
        return Decline(offer_id=offer.offer_id, tool=offer.tool, why=why, source=source, answer_seq=answer_seq, agent=agent)

    async def _settle_offer(
        self, session_id: str, active: str, turn: _TurnKeys, *, vetoed: bool
    ) -> AsyncGenerator[Event, None]:
        """Read the customer message this turn answers as the answer to the offer right before
        it: a yes runs the offered call as offered; anything else closes the offer."""
        state = await self._open_offer(session_id)
        if state is None or state.answer is None:
            return
        offer, answer = state.offer, state.answer
        items: list[Item]
        if state.expired or answer.seq != turn.turn_seq:
            items = [self._decline(offer, "expired", "desk", active)]
        else:
            structured = structured_answer(answer)
            source: AnswerSource
            reading: Reading
            if structured is not None:
                offer_id, yes = structured
                source = "button"
                # A button under another (older) offer never confirms this one.
                reading = ("yes" if yes else "no") if offer_id == offer.offer_id else "other"
            else:
                source, reading = "text", read_answer(answer.text, offer.text)
                if reading == "yes" and await self._names_another(session_id, answer.text, offer):
                    reading = "change_of_mind"  # "yes, the one on the 1st": not the charge offered
                if (
                    reading == "yes" and not names_the_action(answer.text, offer.text) and not assents_only(answer.text)
                    and asked_beside(await self._offers_turn(session_id, offer), offer)
                ):
                    reading = "other"  # which question a bare yes answers is unclear: asked again
            if reading == "yes" and vetoed:
                reading = "other"  # a message a hook stopped confirms nothing
            runs_as = self._runs_offer(offer, active) if reading == "yes" else None
            if reading == "yes" and isinstance(runs_as, AgentConfig):
                confirmed = Confirmation(
                    offer_id=offer.offer_id, tool=offer.tool, arguments=offer.arguments, source=source,
                    answer_seq=answer.seq, agent=active,
                )
                handed, allowed = await self._hand_over(session_id, active, runs_as, offer)
                if allowed:
                    items = [confirmed, *handed, *await self._run_offered(session_id, offer, runs_as, turn)]
                else:  # a before_handoff hook stopped the handoff the yes needs: nothing runs
                    items = [self._decline(offer, "withdrawn", "desk", active, answer.seq), *handed]
            elif reading == "yes":
                # A yes to an action passed up to an agent the desk no longer lets run it (its
                # file changed since the offer): nothing runs, and never as the agent that asked.
                items = [self._decline(offer, "withdrawn", "desk", active, answer.seq)]
            else:
                why: DeclineWhy = reading
                items = [self._decline(offer, why, source, active, answer.seq)]
        # A decline runs nothing: held for the next step's append (`_append`'s hold) when the
        # turn's reads hold the whole log, where the step's every look at the offer (is one
        # open, what did the customer ask for since) finds it; the store would not yet.
        reads = self._turn_reads.get(session_id)
        closing = isinstance(items[0], Decline) and reads is not None and reads.whole
        stored = await self._append(session_id, items, hold=closing)
        for item in stored:
            yield Appended(item)
        for item in stored:
            if isinstance(item, Handoff):
                done = HandoffDone(session_id, item.from_agent, item.to_agent, item.reason, item.seq)
                for notice in await self._hook_notices(session_id, "after_handoff", done, item.from_agent):
                    yield Appended(notice)

    async def _offers_turn(self, session_id: str, offer: Offer) -> list[Item]:
        """The items of the turn that made `offer` before it (`confirmation.offers_exchange`): from
        the turn's reads when they hold them, else one read of the log's tail before the offer."""
        reads = self._turn_reads.get(session_id)
        held = reads.offers_turn() if reads is not None else None
        if held is not None:
            return held
        items = [i for i in await self.store.range(session_id, max(1, offer.seq - 60), offer.seq) if i.seq < offer.seq]
        exchange = offers_exchange(items)
        return exchange if exchange is not None else items

    async def _names_another(self, session_id: str, text: str, offer: Offer) -> bool:
        """Whether the yes names another thing than the offered call's (confirmation.names_another),
        checked against the records the log's tool results show (read only when it names one)."""
        if not names_another(text, offer.arguments, []):
            return False
        results = await self.store.of_kind(session_id, "tool_result", upto=offer.seq)
        return names_another(text, offer.arguments, records_in([r.output for r in results if isinstance(r, ToolResult)]))

    def _runs_offer(self, offer: Offer, active: str) -> AgentConfig | None:
        """The agent that runs a confirmed offer: the one it was passed up to (`for_agent`), if
        the desk still has it with the tool, else None (never the agent that asked instead);
        for an offer not passed up, the agent that offered it (or the one holding it now)."""
        if offer.for_agent:
            target = self.config.agents.get(offer.for_agent)
            return target if target is not None and offer.tool in target.tools else None
        return self.config.agents.get(offer.agent) or self.config.agents[active]

    async def _hand_over(
        self, session_id: str, active: str, runs_as: AgentConfig, offer: Offer
    ) -> tuple[list[Item], bool]:
        """The handoff a yes to an offer passed up makes (none when the agent that runs it holds
        the conversation already), through the before_handoff hooks like any other: its items,
        and whether it may go ahead (a hook's veto or wait for staff stops the call too)."""
        if not offer.for_agent or runs_as.name == active:
            return [], True
        reason = f"the customer said yes to {offer.action}, passed up by {offer.agent or active} to {runs_as.name}"
        said = await self.hooks.call("before_handoff", HandoffAsked(session_id, active, runs_as.name, reason), agent=active)
        if said.decision is not None:
            return [*said.notices, veto_notice(said.hook, said.decision, f"the handoff to {runs_as.name}", active)], False
        handoff = Handoff(from_agent=active, to_agent=runs_as.name, reason=reason, handoff_kind="escalate", agent=active)
        return [*said.notices, handoff], True

    async def _run_offered(self, session_id: str, offer: Offer, agent: AgentConfig, turn: _TurnKeys) -> list[Item]:
        """The confirmed call, with the offer's arguments exactly, by `agent` (`_runs_offer`)
        (then staff approval, where the tool's policy asks for it). Keyed by the offer, so a turn
        resumed after a crash does not run it twice."""
        call_id = f"{offer.offer_id}-yes"
        reads = self._turn_reads.get(session_id) or self.store  # (the turn's one read, where it has one)
        context = {k: e.value for k, e in (await reads.context_at(session_id)).items()}
        results = await self._call(
            session_id, agent, call_id, offer.tool, offer.arguments, context, f"{session_id}/offer/{offer.offer_id}"
        )
        output = next((r.output for r in results if isinstance(r, ToolResult)), "")
        turn.confirmed.append((offer.tool, offer.arguments, output))
        return [ToolCall(call_id=call_id, name=offer.tool, arguments=offer.arguments, agent=agent.name), *results]

    async def _invoke(
        self,
        session_id: str,
        agent: AgentConfig,
        call_id: str,
        name: str,
        arguments: dict[str, Any] | None,
        context: dict[str, Any],
        approved: bool = False,
        *,
        key: str = "",
    ) -> ToolOutput:
        tool = self.tools.get(name)
        if tool is None or name not in agent.tools:
            valid = ", ".join(agent.tools) or "none"
            return ToolOutput(f"unknown tool {name!r} for {agent.name}; available: {valid}", is_error=True)
        if self.services is not None:
            await self.services.ready()  # a deferred desk's business data, opened at first need
        ctx = self._tool_context(session_id, agent, call_id, context, approved=approved, key=key)
        return await tool.invoke(ctx, arguments)

    def _tool_context(
        self,
        session_id: str,
        agent: AgentConfig,
        call_id: str,
        context: dict[str, Any],
        *,
        approved: bool = False,
        key: str = "",
    ) -> ToolContext:
        turn = self._turn_reads.get(session_id)
        return ToolContext(
            session_id=session_id,
            call_id=call_id,
            idempotency_key=key,
            agent=agent,
            desk=self.config,
            context=context,
            services=turn.services(self.services) if turn is not None and self.services is not None else self.services,
            approved=approved,
            customer_words=lambda: self._customer_words(session_id),
        )

    async def _customer_words(self, session_id: str) -> str:
        """`turn_reads.customer_words` of the session, one per line (for tool policies): from the
        running turn's reads when they hold the whole log, else from the store, its customer
        messages kept per session and read on from where they were left."""
        turn = self._turn_reads.get(session_id)
        whole = turn.customer_words() if turn is not None else None
        if whole is not None:
            return "\n".join(whole)  # the running turn holds the whole log
        read_upto, last_read, said = self._customer_said.pop(session_id, (0, None, []))
        # The last message read comes back with the new ones: if it is gone or different, the
        # session was deleted and another imported under its id, and its log is read whole.
        messages = await self.store.of_kind(session_id, "message", after=max(read_upto - 1, 0))
        if read_upto:
            first = messages[0] if messages else None
            if first is not None and first.seq == read_upto and _stamp(first) == last_read:
                messages = messages[1:]
            else:
                said = []
                messages = await self.store.of_kind(session_id, "message")
        if messages:
            read_upto, last_read = messages[-1].seq, _stamp(messages[-1])
        said.extend(customer_words(messages))
        if len(self._customer_said) >= CUSTOMER_WORDS_KEPT:  # the least recently asked goes first
            del self._customer_said[next(iter(self._customer_said))]
        self._customer_said[session_id] = (read_upto, last_read, said)
        # What staff wrote when they gave it back counts as said (issue 39 §3): a person of the
        # support staff vouches for it, as no model or shared-context write can.
        vouched = customer_words(await self.store.of_kind(session_id, "release"))
        return "\n".join([*said, *vouched])

    async def _limit(
        self, session_id: str, active: str, why: str, ending: Callable[[Sequence[Item]], bool] | None = None
    ) -> AsyncGenerator[Event, None]:
        """A limit ends the turn and hands the conversation to the fallback agent."""
        fallback = self.config.desk.fallback
        items: list[Item] = [Notice(notice_kind="limit", text=f"Limit reached: {why}.", agent=active)]
        if active != fallback:
            items.append(
                Handoff(from_agent=active, to_agent=fallback, reason=f"limit reached: {why}", handoff_kind="return", agent=active)
            )
        # The customer is never left without an answer: the fallback agent says, in one line,
        # that it has the conversation back and what happens next.
        title = self.config.agents[fallback].title if fallback in self.config.agents else fallback
        items.append(Message(role="agent", text=LIMIT_ANSWER.format(title=title), agent=fallback))
        for item in await self._append(session_id, items, last=ending is not None and ending(items)):
            yield Appended(item)

    # --- staff actions (supportdesk/staff/acts.py) -------------------------------------------------
    # The acts live with the rest of staff; these are their names on the runner, which the TUI,
    # the command line, the web API and the tests call. Each appends under the turn lease.

    async def held_by(self, session_id: str) -> str | None:
        return await staff_acts.held_by(self, session_id)

    async def resolved(self, session_id: str) -> bool:
        return await staff_acts.resolved(self, session_id)

    async def takeover(self, session_id: str, by: Actor | None = None, reason: str = "") -> Item:
        return await staff_acts.takeover(self, session_id, by, reason)

    async def release(
        self, session_id: str, to_agent: str | None = None, summary: str = "", by: Actor | None = None
    ) -> list[Item]:
        return await staff_acts.release(self, session_id, to_agent, summary, by)

    async def staff_reply(self, session_id: str, text: str, by: Actor | None = None) -> Item:
        return await staff_acts.staff_reply(self, session_id, text, by)

    async def set_state(
        self, session_id: str, state: SettableState, *, until: datetime | None = None, reason: str = "",
        by: Actor | None = None,
    ) -> Item:
        return await staff_acts.set_state(self, session_id, state, until=until, reason=reason, by=by)

    async def tag(
        self,
        session_id: str,
        add: list[str] = [],  # noqa: B006 - never mutated
        remove: list[str] = [],  # noqa: B006
        priority: Priority | None = None,
        by: Actor | None = None,
    ) -> Item:
        return await staff_acts.tag(self, session_id, add, remove, priority, by)

    async def staff_note(self, session_id: str, text: str, by: Actor | None = None) -> Item:
        return await staff_acts.staff_note(self, session_id, text, by)

    async def force_handoff(
        self, session_id: str, to_agent: str, reason: str = "staff decision", by: Actor | None = None
    ) -> Item:
        return await staff_acts.force_handoff(self, session_id, to_agent, reason, by)

    async def set_context(
        self, session_id: str, key: str, value: Any, writer: str = "staff", by: Actor | None = None
    ) -> Item:
        return await staff_acts.set_context(self, session_id, key, value, writer, by)

    async def pending_approvals(self, session_id: str) -> list[Notice]:
        return await staff_acts.pending_approvals(self, session_id)

    def decide_approval(
        self, session_id: str, approval_id: str, granted: bool, by: Actor | None = None
    ) -> AsyncGenerator[Event, None]:
        return staff_acts.decide_approval(self, session_id, approval_id, granted, by)

    async def withdraw_offer(self, session_id: str, by: Actor | None = None) -> Item:
        return await staff_acts.withdraw_offer(self, session_id, by)

def _ends_a_turn(item: Item, after: Item | None) -> bool:
    """Whether `item` (followed by `after` in the log) ends a turn: an agent's answer (not its
    words before a handoff), a person's reply or take-over, a limit or provider error."""
    match item.kind:
        case "message":
            return item.role == "agent" and (after is None or after.kind != "handoff")
        case "staff_reply" | "takeover":
            return True
        case "notice":
            return item.notice_kind in ("limit", "provider_error")
        case _:
            return False


def _turn_status(notices: set[str]) -> str:
    """The session's status after a turn that stored notices of these kinds."""
    if "approval_requested" in notices:
        return "awaiting_approval"
    return "needs_human" if "human_requested" in notices else "open"


def _action_name(action: Answer | CallTools | Transfer) -> str:
    match action:
        case Answer():
            return "answer"
        case CallTools():
            return "call_tools"
        case Transfer():
            return "transfer"
        case _:
            assert_never(action)


async def drain(events: AsyncIterator[Event]) -> list[Event]:
    """Run a turn to its end and keep every event (CLI, evals, tests)."""
    return [event async for event in events]
