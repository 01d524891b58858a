"""Web conversations: sessions a customer reaches with a bearer token, and their turns.

Framework-free: `web.py` maps HTTP onto this. A conversation is a desk session with channel
`web`; its token is shown once, and only its SHA-256 is stored (in the session's meta), compared
in constant time. A customer message is stored before the caller is told so; the turn runs in
the background, one at a time per session, through the desk's runner and store.
"""

from __future__ import annotations

import asyncio
from typing import Any
import collections
import contextlib
import hashlib
import hmac
import logging
import math
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from supportdesk.channels.hub import EventStream, Hub
from supportdesk.channels.protocol import Channel, Delivers
from supportdesk.engine.channels import is_served
from supportdesk.channels.view import DELAYED, CustomerEvent, customer_event, delta_event
from supportdesk.engine.desk import Desk
from supportdesk.engine.events import Appended, Token
from supportdesk.engine.log import SessionInfo
from supportdesk.items import Item, Message, Notice

log = logging.getLogger("supportdesk.serve")

CHANNEL = "web"
# A message body larger than this is refused (413) before it is parsed.
MAX_MESSAGE_BYTES = 16 * 1024
# A per-client limit forgets clients quiet for a minute once it tracks this many.
MAX_TRACKED_KEYS = 10_000
# How many items back, per message allowed a minute, the stored per-conversation limit looks for
# the customer's last minute (a turn writes far fewer items than this per customer message).
RATE_LOOKBACK_ITEMS_PER_MESSAGE = 40
# How many recent sessions are looked at on start-up for a message left unanswered by a restart.
RESUME_LOOKBACK = 500
# A message whose turn was started this many times at start-up without an answer (the turn failed,
# timed out, or took the worker down) is parked for staff instead of being tried again.
MAX_RESUMES = 2
# The notice data keys: a resumed attempt at the turn of message `seq`, and that turn parked.
RESUMED = "resumed_turn"
PARKED = "parked_turn"
# The longest a turn may run in this worker before it is given up (its step threads are not
# killed; the model's steps are bounded by their own size caps).
TURN_SECONDS = 300.0
# A failed turn is tried again this many times, after 1 s, 2 s, 4 s ... (at most RETRY_CAP).
RETRY_TURNS = 6
RETRY_FIRST = 1.0
RETRY_CAP = 60.0


class ApiError(Exception):
    """A request the API refuses: the status, one line for the client, extra headers."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass
class RateLimit:
    """At most `per_minute` of `what` in any 60 s per key (a conversation, a client), in this worker."""

    per_minute: int
    what: str = "messages"
    clock: Callable[[], float] = time.monotonic
    _sent: dict[str, collections.deque[float]] = field(default_factory=dict)

    def check(self, key: str) -> None:
        now = self.clock()
        if len(self._sent) > MAX_TRACKED_KEYS:  # forget the keys quiet for a minute
            self._sent = {k: q for k, q in self._sent.items() if q and now - q[-1] < 60.0}
        sent = self._sent.setdefault(key, collections.deque())
        while sent and now - sent[0] >= 60.0:
            sent.popleft()
        if len(sent) >= self.per_minute:
            raise too_many(self.per_minute, self.what, 60.0 - (now - sent[0]))
        sent.append(now)


@dataclass
class _Seen:
    """One conversation's customer messages of the last minute as this worker knows them
    (seq -> created_at), and the seq up to which it has looked at every item."""

    upto: int = 0
    times: dict[int, datetime] = field(default_factory=dict)

    def forget(self, floor: int, now: datetime) -> None:
        """Drop what the stored limit no longer counts: older than a minute, or behind its look-back."""
        self.times = {seq: at for seq, at in self.times.items() if seq > floor and (now - at).total_seconds() < 60.0}


class _RateSeen:
    """What the stored per-conversation limit has read, kept per conversation, so a POST reads only
    what it has not seen, and nothing when what it knows plus what it has not seen is under the limit
    (issue 34: the read was one of the three store hops of every served message)."""

    def __init__(self) -> None:
        self._seen: dict[str, _Seen] = {}

    def get(self, session_id: str, head: int, floor: int, now: datetime) -> _Seen:
        seen = self._seen.get(session_id)
        if seen is None or head < seen.upto:  # (unknown, or not the log it read: start over)
            if len(self._seen) >= MAX_TRACKED_KEYS:
                self._seen = {sid: s for sid, s in self._seen.items() if s.times}
                if len(self._seen) >= MAX_TRACKED_KEYS:
                    self._seen.clear()
            seen = self._seen[session_id] = _Seen()
        seen.forget(floor, now)
        return seen

    def stored(self, session_id: str, item: Item) -> None:
        """The customer message this worker has just stored counts from now on."""
        seen = self._seen.get(session_id)
        if seen is not None:
            seen.times[item.seq] = item.created_at
            if item.seq == seen.upto + 1:
                seen.upto = item.seq


def too_many(per_minute: int, what: str, wait_seconds: float) -> ApiError:
    wait = max(1, math.ceil(wait_seconds))
    return ApiError(429, f"more than {per_minute} {what} a minute; try again in {wait} s", {"Retry-After": str(wait)})


@dataclass(frozen=True)
class ClientLimits:
    """What one client (an IP address; for the staff API, the staff token) may do a minute,
    across all conversations."""

    conversations_per_minute: int = 30
    messages_per_minute: int = 120
    staff_actions_per_minute: int = 120


class Conversations:
    def __init__(
        self, desk: Desk, *, messages_per_minute: int = 20, turn_seconds: float = TURN_SECONDS,
        client_limits: ClientLimits = ClientLimits(), retry_first: float = RETRY_FIRST,
    ):
        self.desk = desk
        self.turn_seconds = turn_seconds
        self.retry_first = retry_first
        self.messages_per_minute = messages_per_minute
        self.client_created = RateLimit(client_limits.conversations_per_minute, "new conversations from one client")
        self.client_messages = RateLimit(client_limits.messages_per_minute, "messages from one client")
        self.staff_actions = RateLimit(client_limits.staff_actions_per_minute, "staff actions with one token")
        self.hub = Hub(desk.store, lambda item: customer_event(item, desk.config))
        self._rate_seen = _RateSeen()
        # Each conversation's token digest as this worker last read, made or heard created (a
        # digest never changes while its conversation lives; a deleted one is forgotten when the
        # change feed says so): an event stream's token check reads nothing (`check_token`).
        self._digests: dict[str, str] = {}
        self.hub.forgotten.append(self._forget_digest)
        self.hub.created.append(self._heard_created)
        self._wanted: dict[str, int] = {}  # session -> turns asked for and not yet started
        self._workers: dict[str, asyncio.Task[None]] = {}
        # Called with the session id after each turn (a channel that relays replies elsewhere).
        self.after_turn: list[Callable[[str], Awaitable[None]]] = []
        self._deliveries: dict[tuple[str, str], asyncio.Task[None]] = {}  # (channel, session) -> its follower

    async def start(self) -> None:
        self.hub.start()
        await self._resume_unanswered()

    async def close(self) -> None:
        workers = [*self._workers.values(), *self._deliveries.values()]
        for task in workers:
            task.cancel()
        for task in workers:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.hub.close()

    # --- what a channel hands in, and what it is handed (channels/protocol.py) ---------------------

    async def receive(
        self, channel: Channel, thread: str, text: str, *, meta: dict[str, Any] | None = None,
        external_id: str | None = None,
    ) -> int:
        """A customer message from one of `channel`'s threads: its session opened on the first
        one (channel `channel.name`), the message stored (durably, before this returns its seq;
        `external_id`: the channel's own id, so a redelivery raises `DuplicateItem`), a turn
        asked for, and, for a channel that `Delivers`, the session's events followed to it."""
        session_id = channel.session_for(thread)
        store = self.desk.store
        if await store.get_session(session_id) is None:
            try:
                await store.create_session(self.desk.config.desk.entry, session_id=session_id, channel=channel.name)
            except Exception:
                if await store.get_session(session_id) is None:  # (not another worker's same first message)
                    raise
        item = await self.desk.runner.receive(session_id, text, meta=meta, external_id=external_id)
        await self.hub.stored(session_id, [item])
        if isinstance(channel, Delivers):
            await self.follow(channel, session_id, after=item.seq)
        self.want_turn(session_id)
        return item.seq

    async def follow(self, channel: Channel, session_id: str, *, after: int) -> None:
        """Hand `channel` (a channel that `Delivers`) every stored event of the session after seq
        `after`, in order, until the server stops: whoever wrote it (this worker's turns, staff
        in the TUI, another worker). Streamed pieces of a reply are not handed on: the stored
        reply follows. Delivery is at most once per process; a channel that must deliver across
        restarts marks what it delivered in the log (as Chatwoot does) and follows from there."""
        if not isinstance(channel, Delivers) or (channel.name, session_id) in self._deliveries:
            return
        stream = await self.hub.stream(session_id, after)  # subscribed now: nothing falls between

        async def deliver(stream: EventStream, after: int) -> None:
            try:
                while True:
                    try:
                        async for batch in stream:
                            for event in batch:
                                if event.seq is None:
                                    continue
                                try:
                                    await channel.deliver(session_id, event)
                                except asyncio.CancelledError:
                                    raise
                                except Exception:
                                    log.exception("delivering item %s of session %s on %s failed", event.seq, session_id, channel.name)
                                after = event.seq
                    finally:
                        await stream.aclose()
                    # The stream ended (this reader fell behind): go on after the last event handed on.
                    stream = await self.hub.stream(session_id, after)
            finally:
                self._deliveries.pop((channel.name, session_id), None)

        self._deliveries[channel.name, session_id] = asyncio.create_task(
            deliver(stream, after), name=f"supportdesk-deliver-{channel.name}-{session_id}"
        )

    # --- conversations and their tokens -----------------------------------------------------------

    async def create(self, *, channel: str = CHANNEL, meta: dict[str, object] | None = None) -> tuple[str, str]:
        token = secrets.token_urlsafe(32)
        info = await self.desk.store.create_session(
            self.desk.config.desk.entry, channel=channel, meta={**(meta or {}), "token_sha256": token_digest(token)}
        )
        self._keep_digest(info.id, token_digest(token))
        return info.id, token

    async def authorize(self, session_id: str, token: str | None) -> SessionInfo:
        """The conversation if `token` is its own; 404, 401 or 403 otherwise."""
        info = await self.desk.store.get_session(session_id) if _plausible_id(session_id) else None
        digest = info.meta.get("token_sha256") if info is not None else None
        if info is None or not isinstance(digest, str):
            raise ApiError(404, "no such conversation")
        self._keep_digest(session_id, digest)
        _check_digest(token, digest)
        return info

    async def check_token(self, session_id: str, token: str | None) -> None:
        """`authorize` for a caller that needs no more than the answer (an event stream): from the
        digest this worker knows while the change feed is heard (it would hear the conversation
        deleted), else read. A wrong token is refused as at once either way (issue 34: every
        stream's connect read the session on PostgreSQL)."""
        digest = self._digests.get(session_id) if self.hub.following.is_set() else None
        if digest is None:
            await self.authorize(session_id, token)
            return
        _check_digest(token, digest)

    def _keep_digest(self, session_id: str, digest: str) -> None:
        if len(self._digests) >= MAX_TRACKED_KEYS and session_id not in self._digests:
            self._digests.clear()
        self._digests[session_id] = digest

    def _heard_created(self, session_id: str, meta: Mapping[str, Any]) -> None:
        """A conversation created by any worker, as the change feed tells it: its digest kept, so
        its streams joining here read nothing either."""
        digest = meta.get("token_sha256")
        if isinstance(digest, str):
            self._keep_digest(session_id, digest)

    def _forget_digest(self, session_id: str | None) -> None:
        if session_id is None:
            self._digests.clear()
        else:
            self._digests.pop(session_id, None)

    # --- messages and turns ---------------------------------------------------------------------

    async def post(
        self, session_id: str, text: str, meta: dict[str, Any] | None = None, *, client: str | None = None,
        session: SessionInfo | None = None,
    ) -> int:
        """Store the customer's message (durably, before returning its seq) and ask for a turn.
        Stored at once, even while a turn runs on the conversation (issue 32: no wait for it).
        `meta`: a button's structured answer to an offer (engine/confirmation.py), if any;
        `client`: who sent it, for the per-client limit; `session`: the session as the caller has
        just read it (the request's `authorize`): where it ends and who holds it are not read again."""
        await self._check_stored_rate(session_id, session.item_count if session is not None else None)
        if client is not None:
            self.client_messages.check(client)
        item = await self.desk.runner.receive(session_id, text, meta=meta, session=session)
        self._rate_seen.stored(session_id, item)
        await self.hub.stored(session_id, [item])  # no read back of what it stored
        self.want_turn(session_id)
        return item.seq

    async def _check_stored_rate(self, session_id: str, head: int | None = None) -> None:
        """The per-conversation limit counted in the store: it holds across workers (two
        `serve` processes on one PostgreSQL database), not only within this one. `head`: where
        the session ended a moment ago (the look-back starts from it; what came since is read too)."""
        store = self.desk.store
        last = head if head is not None else await store.last_seq(session_id)
        floor = max(0, last - RATE_LOOKBACK_ITEMS_PER_MESSAGE * self.messages_per_minute)
        now = store.clock()
        seen = self._rate_seen.get(session_id, last, floor, now)
        # The customer messages this worker knows of, plus every item it has not looked at (each
        # could be one, from another worker): under the limit, the store cannot say otherwise.
        if len(seen.times) + (last - seen.upto) < self.messages_per_minute:
            return
        messages = await store.of_kind(session_id, "message", after=max(floor, seen.upto))
        for m in messages:
            if isinstance(m, Message) and m.role == "customer":
                seen.times[m.seq] = m.created_at
        seen.upto = max([last, seen.upto, *(m.seq for m in messages)])
        seen.forget(floor, now)
        recent = sorted(seen.times.values())
        if len(recent) >= self.messages_per_minute:
            oldest = recent[-self.messages_per_minute]
            raise too_many(self.messages_per_minute, "messages", 60.0 - (now - oldest).total_seconds())

    def want_turn(self, session_id: str) -> None:
        """Run the agents on this session once more; turns of one session never overlap.

        A message that arrives while a turn runs is stored at once (`Runner.receive`) and seen
        by that turn's next step; if no step of it saw the message, the next turn answers it
        (`resume` answers only an unanswered message, so never twice)."""
        self._wanted[session_id] = self._wanted.get(session_id, 0) + 1
        if session_id not in self._workers:
            task = asyncio.create_task(self._work(session_id), name=f"supportdesk-turn-{session_id}")
            self._workers[session_id] = task

    async def _work(self, session_id: str) -> None:
        failures = 0
        try:
            while self._wanted.pop(session_id, 0):
                if await self._turn(session_id):
                    failures = 0
                    continue
                # A failed turn (a full disk, the database away) is tried again when its cause
                # may have cleared, with backoff; the customer's page is told the answer is late.
                failures += 1
                if failures > RETRY_TURNS or await self._parked(session_id):
                    continue
                self.hub.publish_delta(session_id, CustomerEvent("status", {"status": "delayed", "text": DELAYED}))
                await asyncio.sleep(min(self.retry_first * 2 ** (failures - 1), RETRY_CAP))
                self._wanted[session_id] = self._wanted.get(session_id, 0) + 1
        finally:
            self._workers.pop(session_id, None)

    async def _parked(self, session_id: str) -> bool:
        with contextlib.suppress(Exception):
            [last] = await self.desk.store.latest(session_id, 1)
            return isinstance(last, Notice) and PARKED in last.data
        return False

    async def _turn(self, session_id: str) -> bool:
        """Run one turn; whether it ended (False: it failed or timed out, and was logged)."""
        config = self.desk.config
        ok = False
        # A streamed piece is handed to the streams with what comes next of the turn (the next
        # piece, or the item stored after it: `Hub.stored`'s `piece`), not alone: the offline
        # model's reply comes as one piece right before the reply is stored, and the two went to
        # every stream as two writes, one store round trip apart (issue 34). A model streaming
        # word by word is a piece behind; a piece the turn ends on is handed on as it ends
        # (`finally`), however it ends.
        held: CustomerEvent | None = None
        try:
            # Only an unanswered message gets a turn, checked under the turn lease: a message
            # another worker's turn already answered (two workers, a restart) is answered once.
            async with asyncio.timeout(self.turn_seconds):
                try:
                    async for event in self.desk.runner.resume(session_id):
                        if isinstance(event, Appended):
                            piece, held = held, None
                            # No read back of what it stored; the held piece goes with it.
                            await self.hub.stored(session_id, [event.item], piece=piece)
                        elif isinstance(event, Token):
                            if held is not None:
                                self.hub.publish_delta(session_id, held)
                            held = delta_event(config, event.agent, event.text)
                finally:
                    if held is not None:
                        self.hub.publish_delta(session_id, held)
            ok = True
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            log.error("the turn on session %s took over %g s and was given up", session_id, self.turn_seconds)
            await self._park_if_tried_out(session_id)
        except Exception:  # the message is stored: retried with backoff (`_work`), staff see the session
            log.exception("the turn on session %s failed", session_id)
            await self._park_if_tried_out(session_id)
        # What the turn stored reached the streams as stored (`Hub.stored`), and while the
        # change feed is heard anything else does through it: the turn's end reads nothing
        # (issue 34: a last_seq read a turn). A failed turn, or no feed, and the hub reads.
        if not ok or not self.hub.following.is_set():
            with contextlib.suppress(Exception):  # (the store may still be what fails)
                await self.hub.poke(session_id)
        for hook in self.after_turn:
            try:
                await hook(session_id)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("relaying the turn on session %s failed", session_id)
        return ok

    async def _resume_unanswered(self) -> None:
        """A worker stopped between a 202 and its turn, or in the middle of a turn (after a
        handoff, after a tool's result): finish those turns now, each once (`_turn`), and each
        at most MAX_RESUMES times (a message whose turn takes the worker down must not do so
        forever)."""
        for info in await self.desk.store.list_sessions(limit=RESUME_LOOKBACK):
            # A served channel's customer waits on this server (engine/channels.CHANNELS).
            if not is_served(info.channel) or info.item_count == 0:
                continue
            unanswered = await self._unanswered(info.id)
            if unanswered is None:
                continue
            seq, attempts = unanswered
            if attempts >= MAX_RESUMES:
                await self._park(info.id, seq, attempts)
                continue
            # Said before the turn starts: if it never ends (the worker is killed), the next
            # start-up counts it.
            await self.desk.store.append(info.id, [Notice(
                notice_kind="info", agent=info.active_agent, data={RESUMED: seq, "attempt": attempts + 1},
                text=f"resuming the unanswered turn of message {seq} after a restart (attempt {attempts + 1} of {MAX_RESUMES})",
            )])
            self.want_turn(info.id)

    async def _unanswered(self, session_id: str) -> tuple[int, int] | None:
        """(the seq of the customer message whose turn never ended, resumed attempts at it), or
        None when every turn ended (`runner.unfinished_turn`; a parked turn ends in its notice)."""
        seq = await self.desk.runner.unfinished_turn(session_id)
        if seq is None:
            return None
        since = await self.desk.store.range(session_id, seq, await self.desk.store.last_seq(session_id))
        attempts = sum(1 for item in since if isinstance(item, Notice) and item.data.get(RESUMED) == seq)
        return seq, attempts

    async def _park_if_tried_out(self, session_id: str) -> None:
        """After a failed turn: park it when this was its last resumed attempt."""
        with contextlib.suppress(Exception):  # (the store may be what failed)
            unanswered = await self._unanswered(session_id)
            if unanswered is not None and unanswered[1] >= MAX_RESUMES:
                await self._park(session_id, *unanswered)

    async def _park(self, session_id: str, seq: int, attempts: int) -> None:
        """Leave message `seq` for staff: a `limit` notice (the customer is told the answer is
        delayed; staff see the conversation needs them) instead of another attempt."""
        log.error("session %s: the turn of message %s failed %s times after restarts; parked for staff", session_id, seq, attempts)
        info = await self.desk.store.get_session(session_id)
        await self.desk.store.append(session_id, [Notice(
            notice_kind="limit", agent=info.active_agent if info is not None else self.desk.config.desk.entry,
            data={PARKED: seq, "attempts": attempts},
            text=f"the turn of message {seq} failed or timed out {attempts} times after restarts; it waits for staff, not retried",
        )])
        await self.hub.poke(session_id)

    async def idle(self) -> None:
        """Wait until no turn is running or asked for (tests, benchmarks, shutdown)."""
        while self._workers:
            await asyncio.gather(*list(self._workers.values()), return_exceptions=True)


class WebChannel:
    """The web API and chat page as a channel: a conversation is its own session (its token
    guards it), opened by `Conversations.create`, its messages posted by `Conversations.post`.
    It pulls: each event stream reads the hub, so it has no `deliver`."""

    name = CHANNEL

    def __init__(self, conversations: Conversations):
        self.conversations = conversations

    def session_for(self, thread: str) -> str:
        return thread

    async def start(self) -> None:
        """Nothing to open: the HTTP routes receive (`web.create_app`)."""

    async def close(self) -> None:
        """Nothing to close: the host ends the streams and turns (`Conversations.close`)."""


def _check_digest(token: str | None, digest: str) -> None:
    """401 without a token, 403 when it is not the one whose SHA-256 is `digest` (constant time)."""
    if not token:
        raise ApiError(401, "this conversation needs its token: send Authorization: Bearer TOKEN")
    if not hmac.compare_digest(token_digest(token), digest):
        raise ApiError(403, "that token is not this conversation's")


def _plausible_id(session_id: str) -> bool:
    return 0 < len(session_id) <= 64 and session_id.isascii() and session_id.replace("-", "").isalnum()
