"""Fan-out of one desk's sessions to the event streams that follow them, in this process.

Stored items reach subscribers in seq order, read once per session however many streams
follow it. A poke says "this session may have grown": the turns this process runs poke after
every append; other writers (a staff terminal, another `serve` worker) are noticed by the
follower. Streamed reply pieces (deltas) are not stored, so they go only to this process's
subscribers and are never resumed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from datetime import datetime, timedelta

from supportdesk.channels.view import CustomerEvent
from supportdesk.items import Item
from supportdesk.engine.log import Store

log = logging.getLogger("supportdesk.serve")

# A subscriber this far behind is dropped: its stream ends and the client resumes from its
# Last-Event-ID, so a slow reader costs a reconnect instead of unbounded memory.
QUEUE_LIMIT = 1000
# How often the follower asks a store without a change feed whether another connection committed
# (both adapters have a feed: on PostgreSQL LISTEN/NOTIFY, so no poll at all; see `_follow`).
FOLLOW_INTERVAL = 0.25

# A change the store says this process wrote itself (`Change.own`) is not read at once: the
# writer hands its items to the streams as stored (`Hub.stored`), and a read racing it was a
# range read of every item twice (issue 34). This long after, the session is looked at again and
# read only if its streams still lack what the change announced.
OWN_RECHECK = 0.05

# At most this many sessions are read at once for the change feed (`Hub._catch_up`): the reads
# share the store's connections with this worker's turns (PostgreSQL's pool holds 8).
FEED_READS = 3
# The follower's page of recent sessions holds the followed ones and this many more.
PAGE_MARGIN = 32
# How far the writers' clocks (which stamp updated_at) may be from ours.
CLOCK_SLACK = timedelta(seconds=5)
# At most this many sessions' heads are kept as the change feed announced them (`Hub._heard`);
# past it they are all forgotten and a session's first stream reads its head again.
HEARD_LIMIT = 10_000

# None in a queue means "this stream is over" (server shutting down, or the reader too slow).
Queued = CustomerEvent | None


@dataclass
class _Followed:
    head: int
    subscribers: set[asyncio.Queue[Queued]] = field(default_factory=set)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # The highest head the change feed announced, and the task reading up to it (`Hub._changed`).
    announced: int = 0
    reader: asyncio.Task[None] | None = None


class Hub:
    def __init__(self, store: Store, view: Callable[[Item], CustomerEvent | None]):
        self.store = store
        self.view = view
        self._sessions: dict[str, _Followed] = {}
        self._follower: asyncio.Task[None] | None = None
        # Set while the follower hears every writer (the change feed is open; cleared while it
        # is lost): what is written meanwhile reaches the streams without a poll or a poke.
        self.following = asyncio.Event()
        self._feed_reads = asyncio.Semaphore(FEED_READS)
        # Where each session ends, as the change feed last announced it, for every session it
        # announced since it last (re)started following without a break (it hears every writer,
        # in commit order): a session's first stream starts its hand-out there with no read of
        # the log's end (issue 34: a statement a stream's session on PostgreSQL, where both
        # workers hear each conversation's creation). A commit whose change is still on its way
        # when the stream joins reaches it as any later change does (`_changed`).
        self._heard: dict[str, int] = {}
        # Told of each session the feed says was deleted, and with None whenever the feed (re)starts
        # following (a deletion may have gone unheard before): what a caller keeps per session
        # (`Conversations`' token digests) goes with it.
        self.forgotten: list[Callable[[str | None], None]] = []
        # Told of each session the feed says was created, with the meta its writer sent along
        # (`Change.meta`): what a caller keeps per session (`Conversations`' token digests) is
        # known on every worker without a read of the session.
        self.created: list[Callable[[str, Mapping[str, Any]], None]] = []

    async def subscribe(self, session_id: str) -> asyncio.Queue[Queued]:
        """A queue of the session's new events, from now on (read the backlog after this)."""
        queue: asyncio.Queue[Queued] = asyncio.Queue(QUEUE_LIMIT)
        followed = self._sessions.get(session_id)
        if followed is None:
            head = self._heard.get(session_id) if self.following.is_set() else None
            if head is None:
                head = await self.store.last_seq(session_id)
            followed = self._sessions.setdefault(session_id, _Followed(head=head))
        followed.subscribers.add(queue)
        return queue

    def unsubscribe(self, session_id: str, queue: asyncio.Queue[Queued]) -> None:
        followed = self._sessions.get(session_id)
        if followed is None:
            return
        followed.subscribers.discard(queue)
        if not followed.subscribers:
            del self._sessions[session_id]
            if followed.reader is not None:
                followed.reader.cancel()

    async def stream(self, session_id: str, after: int, *, idle: float | None = None) -> EventStream:
        """The session's customer events after seq `after`: the stored backlog, then live.

        Subscribed when this returns (so a caller may answer "listening" at once); the backlog
        is read after subscribing and seqs already sent are skipped, so nothing falls between the
        two and nothing comes twice. Close it with `aclose()`."""
        queue = await self.subscribe(session_id)
        # Where the hub's hand-out stands as the queue joins (no await since): every item up to it
        # was handed out before, and every later one reaches the queue, so the backlog is read up
        # to it, with no read of where the log ends (one statement less a stream, issue 34).
        return EventStream(self, session_id, queue, after, idle, self._sessions[session_id].head)

    def publish_delta(self, session_id: str, event: CustomerEvent) -> None:
        followed = self._sessions.get(session_id)
        if followed is not None:
            self._put_all(followed, event)

    async def poke(self, session_id: str, head: int | None = None) -> None:
        """Read what the session gained since it was last read and hand it to its streams.

        `head`: where the session ends, when the caller knows (a change of the feed carries it),
        so only the new items are read."""
        followed = self._sessions.get(session_id)
        if followed is None:
            return
        async with followed.lock:
            last = head if head is not None else await self.store.last_seq(session_id)
            if last <= followed.head:
                return
            items = await self.store.range(session_id, followed.head + 1, last)
            followed.head = last
        for item in items:
            event = self.view(item)
            if event is not None:
                self._put_all(followed, event)

    async def stored(self, session_id: str, items: list[Item], *, piece: CustomerEvent | None = None) -> None:
        """Items this process has just stored (a turn's `Appended`), handed to the session's
        streams as they are: no read of the log, when they follow what the streams have.
        Anything else (a gap: some other writer's items came first) is a poke, which reads.

        `piece`: a streamed piece of the turn (`publish_delta`) that comes before the items: put
        in the streams' queues with them, so each stream takes both in one wake and one write,
        or at once, alone, when a read holds the session (it is never held behind a read); never
        after the items (when a read handed them out first, the piece is not handed out)."""
        followed = self._sessions.get(session_id)
        if followed is None:
            heard = self._heard.get(session_id)
            if heard is not None and items and items[-1].seq > heard:
                # Where it ends now, at once (a stream joining next reads up to here without
                # waiting for their change): whatever came before them is stored already. Only
                # for a session the feed announced since it last started: it hears every later one.
                self._heard[session_id] = items[-1].seq
            return
        if piece is not None and (followed.lock.locked() or not items):
            self._put_all(followed, piece)
            piece = None
        if not items:
            return
        async with followed.lock:
            if items[-1].seq <= followed.head:
                # Already handed out (a poke read them). Their piece would come after them (a
                # page draws a piece after its reply as a reply still being written): dropped.
                return
            if piece is not None:
                self._put_all(followed, piece)  # (before the items, or before the poke's read of them)
            if items[0].seq == followed.head + 1:
                followed.head = items[-1].seq
                for item in items:
                    event = self.view(item)
                    if event is not None:
                        self._put_all(followed, event)
                return
        await self.poke(session_id)

    def _put_all(self, followed: _Followed, event: CustomerEvent) -> None:
        for queue in list(followed.subscribers):
            try:
                queue.put_nowait(event)
            except asyncio.QueueFull:
                followed.subscribers.discard(queue)
                _end(queue)

    # --- other writers -------------------------------------------------------------------------

    def start(self) -> None:
        self._follower = asyncio.create_task(self._follow(), name="supportdesk-hub-follow")

    async def close(self) -> None:
        if self._follower is not None:
            self._follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._follower
        readers = [f.reader for f in self._sessions.values() if f.reader is not None]
        for reader in readers:
            reader.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
        for followed in self._sessions.values():
            for queue in followed.subscribers:
                _end(queue)
        self._sessions.clear()

    async def _follow(self) -> None:
        """Poke the followed sessions that other writers moved: through the store's change feed
        where it has one, else by polling (`_poll`). A feed that fails is opened again."""
        follow = getattr(self.store, "follow", None)
        if follow is None:
            await self._poll()
            return
        lost = False
        while True:
            try:
                async with await follow() as feed:
                    if hasattr(feed, "wanted"):  # (a feed that can leave out the items of sessions nobody here follows)
                        feed.wanted = self._sessions.__contains__
                    self._forget(None)
                    self.following.set()
                    if lost:
                        # Listening again: what moved while the feed was down, each followed
                        # session read from the last seq its streams got (the database may have
                        # restarted; until it answers, this fails and the loop tries again).
                        for session_id in list(self._sessions):
                            await self.poke(session_id)
                        lost = False
                    async for change in feed:
                        self._hear(change.session_id, None if change.deleted else change.head)
                        if change.deleted:
                            self._forget(change.session_id)
                        elif change.meta is not None:
                            for created in self.created:
                                created(change.session_id, change.meta)
                        if change.items and not change.own and self._handed(change.session_id, change.head, change.items):
                            continue
                        self._changed(change.session_id, change.head, own=change.own)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a lost connection must not end live follow for every stream
                log.warning("the change feed failed (%s: %s); following again", type(exc).__name__, exc)
                self.following.clear()
                lost = True
                await asyncio.sleep(1.0)

    def _handed(self, session_id: str, head: int, items: tuple[Item, ...]) -> bool:
        """The feed brought the items that moved the session to `head` (PostgreSQL's NOTIFY, for
        small appends): handed to its streams as they are, without a read, when they follow what
        the streams have and no read of the session is under way. False: not handed (a gap, a
        read in flight, not followed), and the change is read as any other."""
        followed = self._sessions.get(session_id)
        if followed is None or followed.lock.locked() or (followed.reader is not None and not followed.reader.done()):
            return followed is None
        if head <= followed.head:
            return True  # (already handed out)
        if items[0].seq != followed.head + 1 or items[-1].seq != head:
            return False
        followed.head = head
        for item in items:
            event = self.view(item)
            if event is not None:
                self._put_all(followed, event)
        return True

    def _hear(self, session_id: str, head: int | None) -> None:
        """The feed's latest word on where a session ends (None: it was deleted)."""
        if head is None:
            self._heard.pop(session_id, None)
            return
        if len(self._heard) >= HEARD_LIMIT and session_id not in self._heard:
            self._heard.clear()
        self._heard[session_id] = head

    def _forget(self, session_id: str | None) -> None:
        if session_id is None:
            self._heard.clear()  # (the feed starts again: what it heard before may have moved since)
        for forget in self.forgotten:
            forget(session_id)

    def _changed(self, session_id: str, head: int, *, own: bool = False) -> None:
        """The feed says `session_id` now ends at `head`: its streams get the new items from a
        reader of that session's own. The feed is not held up by one session's read (50 busy
        conversations followed from another worker were read one after another, each a round
        trip, and the streams fell seconds behind), and the changes that arrive while a read is
        in flight are taken by one more read, not one each. `own`: this process wrote it, and
        its writer hands the items over itself; looked at again after OWN_RECHECK, and read
        then only if the streams still lack them (a write nobody handed over)."""
        followed = self._sessions.get(session_id)
        if followed is None or head <= followed.head:
            return
        if own:
            asyncio.get_running_loop().call_later(OWN_RECHECK, self._changed, session_id, head)
            return
        followed.announced = max(followed.announced, head)
        if followed.reader is None or followed.reader.done():
            followed.reader = asyncio.create_task(self._catch_up(session_id, followed), name=f"supportdesk-hub-read-{session_id}")

    async def _catch_up(self, session_id: str, followed: _Followed) -> None:
        """Read the session up to the highest head announced, again while more is announced; a
        failed read is tried again (the items stay in the log; the streams get them late, never
        not at all), until nobody follows the session."""
        while followed.announced > followed.head and self._sessions.get(session_id) is followed:
            try:
                async with self._feed_reads:
                    await self.poke(session_id, followed.announced)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("reading session %s for its streams failed (%s: %s); trying again", session_id, type(exc).__name__, exc)
                await asyncio.sleep(1.0)

    async def _poll(self) -> None:
        """Notice commits by other connections and poke the followed sessions they moved.

        SQLite says cheaply whether another connection committed (`data_version`). A store
        without that probe is asked for one page of the most recently active sessions, whose
        `item_count` is each one's head; a followed session missing from a page that reaches
        back past the last poll is asked for on its own. Only for a store without `follow`: both
        adapters have one, so `serve` never polls here."""
        probe = getattr(self.store, "data_version", None)
        seen = await probe() if probe is not None else None
        since = self.store.clock()
        while True:
            await asyncio.sleep(FOLLOW_INTERVAL)
            try:
                if probe is not None:
                    version = await probe()
                    if version == seen:
                        continue
                    seen = version
                    moved = list(self._sessions)
                else:
                    now = self.store.clock()
                    moved = await self._moved_since(since)
                    since = now
                for session_id in moved:
                    await self.poke(session_id)
            except asyncio.CancelledError:
                raise
            except Exception:  # a store hiccup must not end live follow for every stream
                await asyncio.sleep(1.0)

    async def _moved_since(self, since: datetime) -> list[str]:
        followed = {sid: f.head for sid, f in self._sessions.items()}
        if not followed:
            return []
        limit = len(followed) + PAGE_MARGIN
        page = await self.store.list_sessions(limit=limit)
        heads = {info.id: info.item_count for info in page}
        moved = [sid for sid, head in followed.items() if heads.get(sid, head) > head]
        missing = [sid for sid in followed if sid not in heads]
        if missing and len(page) == limit and page[-1].updated_at >= since - CLOCK_SLACK:
            moved += missing  # the page may have cut off a session that changed since
        return moved


class EventStream:
    """One reader's events (see `Hub.stream`), in batches: each is everything that was waiting,
    so a busy stream is written in a few large chunks rather than one per streamed word. Yields
    an empty batch (a keep-alive tick) once the live stream has been silent for between `idle`/2
    and `idle` seconds; ends when the hub closes or the reader fell too far behind, and the reader
    resumes from the last seq it got."""

    def __init__(
        self, hub: Hub, session_id: str, queue: asyncio.Queue[Queued], after: int, idle: float | None, head: int
    ):
        self._hub = hub
        self._session_id = session_id
        self._queue = queue
        self._idle = idle
        # Half-`idle` ticks with nothing taken from the queue since the last event (`_tick`).
        self._quiet_ticks = 0
        self._timer: asyncio.TimerHandle | None = None
        self._events = self._run(after, head)

    def __aiter__(self) -> AsyncIterator[list[CustomerEvent]]:
        return self._events

    async def aclose(self) -> None:
        self._stop_ticking()
        await self._events.aclose()
        self._hub.unsubscribe(self._session_id, self._queue)

    def _tick(self) -> None:
        """Every `idle`/2 s while live: the second tick in a row without an event puts a keep-alive
        in the queue. One timer a stream, moved on only when it fires, instead of a timeout armed
        and cancelled at every wake of every stream (issue 34)."""
        assert self._idle is not None
        self._quiet_ticks += 1
        if self._quiet_ticks >= 2:
            self._quiet_ticks = 0
            with contextlib.suppress(asyncio.QueueFull):  # (a full queue is no quiet stream)
                self._queue.put_nowait(_KEEP_ALIVE)
        self._timer = asyncio.get_running_loop().call_later(self._idle / 2, self._tick)

    def _stop_ticking(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def _run(self, after: int, head: int) -> AsyncGenerator[list[CustomerEvent], None]:
        """`head`: where the hub's hand-out stood when the queue joined (`Hub.stream`): the backlog
        ends there, and the queue has everything after it."""
        store, view = self._hub.store, self._hub.view
        sent = after
        backlog = await store.range(self._session_id, after + 1, head) if head > after else []
        events = [event for event in map(view, backlog) if event is not None]
        if backlog:
            sent = backlog[-1].seq
        if events:
            yield events
        queue = self._queue
        if self._idle is not None:
            self._timer = asyncio.get_running_loop().call_later(self._idle / 2, self._tick)
        try:
            while True:
                waiting = [await queue.get() if queue.empty() else queue.get_nowait()]
                while not queue.empty():
                    waiting.append(queue.get_nowait())
                batch: list[CustomerEvent] = []
                keep_alive = False
                for event in waiting:
                    if event is _KEEP_ALIVE:
                        keep_alive = True
                        continue
                    self._quiet_ticks = 0
                    if event is None:
                        if batch:
                            yield batch
                        return
                    if event.seq is not None:
                        if event.seq <= sent:
                            # Already in the backlog, and so is what its piece says (`Hub.stored`
                            # puts a reply's piece right before it): the piece is not sent after it.
                            while batch and batch[-1].seq is None and batch[-1].type == "delta":
                                batch.pop()
                            continue
                        sent = event.seq
                    batch.append(event)
                if batch:
                    yield batch
                elif keep_alive:
                    yield []
        finally:
            self._stop_ticking()


# Put in a quiet stream's own queue by its timer (`EventStream._tick`); never handed to the hub.
_KEEP_ALIVE = CustomerEvent("keep-alive", {})


def _end(queue: asyncio.Queue[Queued]) -> None:
    try:
        queue.put_nowait(None)
    except asyncio.QueueFull:  # make room by dropping the oldest: the reader resumes from its last id
        queue.get_nowait()
        queue.put_nowait(None)
