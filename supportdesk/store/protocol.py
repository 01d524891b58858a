"""The session store's contract: what the engine, the TUI, export and evals may ask of a store.

Two adapters keep it: `SessionStore` (SQLite, `sessions.py`, the embedded default) and
`PostgresStore` (`postgres.py`, the shared store of a desk that spans machines). Code outside
`store/` holds a `Store` and never learns which one it has; `tests/test_store.py`
runs one suite over both.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from supportdesk.folds.desk_state import ConversationState, DeskFilter
from supportdesk.exact import read_back
from supportdesk.folds.sla import SlaProgress
from supportdesk.items import Handoff, Item
from supportdesk.store.figures import DeskFigures
from supportdesk.text import plain_line

# Private-use code points that mark a search match inside a snippet: they cannot be
# confused with markup or with anything a customer typed in a search result.
MATCH_START = "\ue000"
MATCH_END = "\ue001"


# A snippet is a window of words: a Markdown mark whose pair the window cut off ("…see **two
# charges", "on `CH9") goes too: one that opens a word with no word before it, or closes one with
# none after ("a ** b" stays).
_CUT_MARK = re.compile(r"(?<![^\s…])(?:\*\*|__|`)(?=[^\s…])|(?<=[^\s…])(?:\*\*|__|`)(?![^\s…])")


# The meta key under which a channel files its own id of a customer message (Chatwoot's message
# id): the store keeps one message per (session, external id).
EXTERNAL_ID = "external_id"


class StoreError(Exception):
    """A database that cannot be used; the message is one line for the user."""


class LeaseLost(StoreError):
    """An append fenced by a turn lease that is no longer the session's current one: its holder
    paused (or was cut off) past the lease's lifetime and another turn took the session. Nothing
    was written; the holder stops its turn."""


def release_token(session_id: str, lease: TurnLease) -> str:
    """The token an append that gives `lease` back is fenced by (`Store.append(release=)`):
    a lease no longer held has none, and the append is refused as one fenced by a lost lease."""
    token = lease.token
    if token is None:
        raise LeaseLost(f"session {session_id}: this turn's lease is no longer held; the turn stopped here and wrote nothing more")
    return token


class HeadMoved(StoreError):
    """An append told where its first item lands (`Store.append(at=)`) found the session's log
    ending elsewhere: something was stored since the caller last looked (a customer's message,
    stored without the turn lease, issue 32). Nothing was written."""


class DuplicateItem(StoreError):
    """An append carrying a message whose `meta["external_id"]` (a channel's own id for it, say
    Chatwoot's message id) is already on a message of the same session: a redelivery, or the
    same delivery handled by two workers at once. Refused in the append's own transaction;
    nothing of that append was written."""


def external_ids(session_id: str, items: Sequence[Item]) -> list[str]:
    """The external ids an append's messages carry, refused (`DuplicateItem`) if one repeats
    within the append; what is not a non-empty string is not an external id."""
    seen: list[str] = []
    for item in items:
        if item.kind != "message":
            continue
        external_id = item.meta.get(EXTERNAL_ID) if item.meta else None
        if not isinstance(external_id, str) or not external_id:
            continue
        if external_id in seen:
            raise duplicate_item(session_id, external_id)
        seen.append(external_id)
    return seen


def duplicate_item(session_id: str, external_id: str) -> DuplicateItem:
    return DuplicateItem(f"session {session_id}: message {external_id!r} is already stored; nothing was written")


class StoreLocationError(StoreError):
    """The database named by --db/SUPPORTDESK_DB cannot be reached as given (bad URL, host,
    password, missing database, missing driver): a usage error the user fixes in what they typed."""


# The store's records are plain dataclasses (`supportdesk.records`): a session read back from a
# store is constructed without pydantic when its values have their types (`session_info`), and
# validated by it otherwise.
@dataclass
class SessionInfo:
    """A session's row: its title, agents, status and counts."""

    id: str
    title: str
    created_at: datetime
    updated_at: datetime
    entry_agent: str
    active_agent: str
    status: str
    item_count: int
    handoff_count: int
    forked_from: str | None = None
    forked_at: int | None = None
    # Where the customer came from: tui, cli, web, chatwoot, bench, import.
    channel: str = "tui"
    # Facts about the session that are not conversation (a benchmark task's id and reward, a
    # channel's own conversation id): never shown to agents.
    meta: dict[str, Any] = field(default_factory=dict)


def session_info(row: dict[str, Any]) -> SessionInfo:
    """A session row read back from a store (its `meta` as stored: JSON text or a dict)."""
    meta = row.get("meta")
    if type(meta) is str:
        try:
            row = {**row, "meta": json.loads(meta)}
        except ValueError:
            pass  # the validator says it is not a table
    return read_back(SessionInfo, row)


@dataclass
class ContextEntry:
    """One key of the shared context as of some item: its value and who wrote it when."""

    key: str
    value: Any
    writer: str
    seq: int
    created_at: datetime


# A search hit's snippet is at most about this many characters, however long the message
# (FTS5 and ts_headline count words, and one "word" can be a megabyte).
SNIPPET_CHARS = 160
# Of which at most this many come before the first match.
_SNIPPET_BEFORE = 50


def bounded_snippet(snippet: str, limit: int = SNIPPET_CHARS) -> str:
    """The snippet cut to about `limit` characters around its first match, marks kept whole."""
    if len(snippet) <= limit:
        return snippet  # short enough with its marks, so without them too (most hits)
    chunks = re.split(f"[{MATCH_START}{MATCH_END}]", snippet)
    if sum(len(c) for c in chunks) <= limit:
        return snippet
    out: list[str] = []
    budget = limit
    for i, chunk in enumerate(chunks):
        match = i % 2 == 1
        if i == 0 and len(chunks) > 1 and len(chunk) > _SNIPPET_BEFORE:
            chunk = "…" + chunk[-_SNIPPET_BEFORE:]  # the words just before the match
        if len(chunk) > budget:
            chunk = chunk[: max(budget, 1)] + "…"
        budget -= len(chunk)
        out.append(f"{MATCH_START}{chunk}{MATCH_END}" if match else chunk)
        if budget <= 0:
            break
    return "".join(out)


@dataclass
class SearchHit:
    """A message that matched a search, with a snippet around the match."""

    session_id: str
    title: str
    seq: int
    snippet: str

    def __post_init__(self) -> None:
        self.snippet = bounded_snippet(self.snippet)

    def parts(self) -> list[tuple[str, bool]]:
        """The snippet as (text, is_match) runs, for highlighting without markup; an agent's
        `**strong**` and `code` marks are left out, as the conversation draws them."""
        out: list[tuple[str, bool]] = []
        shown = _CUT_MARK.sub("", plain_line(self.snippet))
        for i, chunk in enumerate(re.split(f"[{MATCH_START}{MATCH_END}]", shown)):
            if chunk:
                out.append((chunk, i % 2 == 1))
        return out


def search_words(text: str) -> list[str]:
    """The words of a search box, as both adapters match them (all required).

    Only word characters survive, so nothing a user types becomes query syntax."""
    return re.findall(r"\w+", text, flags=re.UNICODE)


# A search word this long or longer matches as a prefix ("refu" finds "refund"); a shorter one
# matches whole words only: a one- or two-letter prefix ("re") matches a large part of every
# index, and its cost grows with the number of words it opens, not with the page shown.
PREFIX_MIN_CHARS = 3


def search_terms(text: str) -> list[tuple[str, bool]]:
    """The search box as (word, matches_as_prefix) terms, every one required (both adapters)."""
    return [(word, len(word) >= PREFIX_MIN_CHARS) for word in search_words(text)]


@dataclass(frozen=True)
class DeskRow:
    """One session as the inbox lists it: its row and where its conversation stands (the
    summary the appends keep, `desk_state.fold` of its log)."""

    session: SessionInfo
    state: ConversationState


@dataclass
class TurnStart:
    """What a turn needs from the store when it starts, read at once (`Store.turn_start`):
    the session's row (None: no such session), its newest items, the shared context now,
    and the person holding the conversation (a take-over not yet released), if any."""

    session: SessionInfo | None
    # The newest items, oldest first: `n` of them, or the whole log when it is shorter.
    items: list[Item]
    context: dict[str, ContextEntry]
    holder: str | None

    @property
    def whole_log(self) -> bool:
        """`items` is the session's whole log (it reaches back to seq 1, or there is none)."""
        return not self.items or self.items[0].seq == 1


@dataclass(frozen=True)
class Change:
    """One entry of the change feed: session `session_id` now ends at `head` (its item count).

    `head` is 0 with `deleted` set when the session was deleted. `own`: sent by one of the
    store's own connections (this process wrote it, and most likely handed it to its streams
    itself); only a hint, never trusted for delivery (`Hub._changed` checks it a moment later).
    `items`: the items that moved the head there, when the writer sent them (PostgreSQL, for an
    append whose items are small), oldest first; else empty, and a follower reads them.
    `meta`: a creation's (head 0, not deleted) session meta, when the writer sent it (PostgreSQL,
    a small meta); else None."""

    session_id: str
    head: int
    deleted: bool = False
    own: bool = False
    items: tuple[Item, ...] = ()
    meta: Mapping[str, Any] | None = None


@runtime_checkable
class TurnLease(Protocol):
    """The right to run one turn on one session (see `Store.turn`).

    `async with` acquires (waiting as long as another holder keeps it) and releases. A caller
    that must say it is waiting (the runner emits an event) calls `try_acquire` first, then
    `acquire`. `waited` is how long the acquisition waited, in seconds.

    A turn takes it with its one read instead (`try_start`, then `start` if it must wait: the
    lease and `Store.turn_start` in one round trip) and gives it back with its last append
    (`Store.append(..., release=lease)`), so a turn of N steps costs N + 1 round trips beside
    its customer's message.

    `token` is the lease's fencing token while it is held (None otherwise): every append of the
    turn passes it (`Store.append(..., fence=token)`), and the store refuses the append with
    `LeaseLost` once another holder has taken the session, so a holder that paused past its
    lease (SIGSTOP, a frozen VM, a database restart) can never write into another's turn. A
    holder that died on this machine (its pid is gone) or whose PostgreSQL connection ended
    without a server restart loses the lease at once; any other holder after the lifetime."""

    waited: float

    @property
    def token(self) -> str | None: ...

    async def try_acquire(self) -> bool: ...

    async def acquire(self) -> None: ...

    async def release(self) -> None: ...

    async def try_start(self, n: int) -> TurnStart | None:
        """`try_acquire` and `Store.turn_start(session_id, n)` in one round trip (one write
        transaction on SQLite, one statement on PostgreSQL): the turn's start as read once the
        lease is this holder's, so it holds everything the previous holder stored; None (and
        nothing read) when another holder has the session. A lease already held just reads."""
        ...

    async def start(self, n: int) -> TurnStart:
        """`try_start`, waiting as `acquire` does while another holder keeps the session."""
        ...

    def let_go(self) -> None:
        """The store gave this lease back in an append's transaction (`Store.append(...,
        release=lease)`): stop renewing it and free what this process keeps for it, with no
        round trip. Only the store calls it."""
        ...

    async def __aenter__(self) -> TurnLease: ...

    async def __aexit__(self, *exc: object) -> None: ...


@runtime_checkable
class Feed(Protocol):
    """The change feed, listening from the moment `Store.follow()` returns it.

    `async for change in feed` yields a `Change` for every write to a session (by this process
    or any other) after that moment: appends, new sessions, status changes, forks, deletes.
    Several writes may arrive as one change carrying the latest head. Close it with `aclose()`
    or `async with`."""

    def __aiter__(self) -> Feed: ...

    async def __anext__(self) -> Change: ...

    async def aclose(self) -> None: ...

    async def __aenter__(self) -> Feed: ...

    async def __aexit__(self, *exc: object) -> None: ...


@runtime_checkable
class Store(Protocol):
    """A session log store. Every read the panes make is an index lookup on both adapters."""

    # Where the store is, for people: a path, or a URL with its password masked.
    location: str
    # The clock that stamps what is written; tests fix it for stable snapshots.
    clock: Callable[[], datetime]
    # Opened without write access (another user's SQLite file): reads work, writes are refused.
    readonly: bool

    async def close(self) -> None: ...

    async def __aenter__(self) -> Store: ...

    async def __aexit__(self, *exc: object) -> None: ...

    # --- sessions ---
    async def create_session(
        self,
        entry_agent: str,
        *,
        title: str = "",
        session_id: str | None = None,
        channel: str = "tui",
        meta: dict[str, Any] | None = None,
        first: Sequence[Item] = (),
    ) -> SessionInfo:
        """A new session; `first` items (the customer's first message) are appended in the same
        transaction, so a failed first append never leaves an empty session behind."""
        ...

    async def get_session(self, session_id: str) -> SessionInfo | None: ...

    async def find_session(self, prefix: str) -> SessionInfo | None: ...

    async def list_sessions(self, *, limit: int = 50, offset: int = 0) -> list[SessionInfo]: ...

    async def count_sessions(self) -> int: ...

    async def set_status(self, session_id: str, status: str) -> None: ...

    async def delete_session(self, session_id: str) -> bool: ...

    # --- the desk: where every conversation stands (a summary kept by the appends) ---
    async def desk(
        self, *, limit: int = 200, offset: int = 0, where: DeskFilter = DeskFilter(), now: datetime | None = None
    ) -> list[DeskRow]:
        """The `limit` most recently active sessions (after `offset`) with their state, newest
        first: one query, no log read (the state is the fold of the log that each append brings up
        to date). `where` keeps those in a state group, with a tag, with a priority, judged as
        `DeskFilter.matches` judges them as of `now` (default: the clock now)."""
        ...

    async def count_desk(self, where: DeskFilter = DeskFilter(), now: datetime | None = None) -> int:
        """How many sessions `desk(where=where, now=now)` pages through."""
        ...

    async def desk_tags(self) -> tuple[list[str], list[str]]:
        """The tags and the priorities (other than none) some session has now, each sorted."""
        ...

    async def count_needing_staff(self, now: datetime) -> int:
        """How many sessions need staff as of `now`: in state `needs_staff`, or snoozed until a
        time that has passed (`desk_state.at`). An index count, not a scan."""
        ...

    # --- the log ---
    async def append(
        self, session_id: str, items: Sequence[Item], *, fence: str | None = None, release: TurnLease | None = None,
        at: int | None = None,
    ) -> list[Item]:
        """Append items as one transaction. `fence`: the token of the turn lease the caller
        holds; the append is refused (`LeaseLost`, nothing written) unless it is still the
        session's current lease, checked in the append's own transaction.

        `at`: the seq the first item must get, checked in the same transaction: refused
        (`HeadMoved`, nothing written) when the log no longer ends right before it. A turn that
        held items back for its next append (engine/runner.py) showed them to its next step at
        those seqs.

        `release`: a turn's last append gives its lease back in the same transaction (fenced by
        the lease's token, so `fence` need not be given): the next holder's `try_start` reads
        these items, and the turn pays no round trip of its own to release (`TurnLease.let_go`).
        Refused (`LeaseLost`) like a fenced append, and then the lease is left as it was.

        A message whose `meta` carries `EXTERNAL_ID` (a channel's id for it) is stored once per
        session: an append holding one already on a message of the session (or twice in the
        append) is refused with `DuplicateItem`, nothing written, whatever process raced it."""
        ...

    async def last_seq(self, session_id: str) -> int: ...

    async def latest(self, session_id: str, n: int) -> list[Item]: ...

    async def range(self, session_id: str, first: int, last: int) -> list[Item]: ...

    async def item(self, session_id: str, seq: int) -> Item | None: ...

    async def items_at(self, session_id: str, seqs: Sequence[int]) -> list[Item]: ...

    async def handoffs(self, session_id: str, upto: int | None = None) -> list[Handoff]: ...

    async def agent_at(self, session_id: str, seq: int) -> str: ...

    async def context_at(self, session_id: str, seq: int | None = None) -> dict[str, ContextEntry]: ...

    async def of_kind(self, session_id: str, kind: str, *, upto: int | None = None, after: int = 0) -> list[Item]:
        """Every item of one kind with `after < seq <= upto`, oldest first."""
        ...

    async def kind_seqs(self, session_id: str, kind: str) -> list[int]: ...

    async def usage_totals(self, session_id: str) -> dict[str, dict[str, int]]: ...

    async def turn_start(self, session_id: str, n: int) -> TurnStart:
        """Everything a turn reads when it starts, in one round trip: the session's row, its
        newest `n` items, the shared context now and who holds the conversation (`TurnStart`).
        The same answers as `get_session`, `latest(n)`, `context_at` and the last take-over or
        release, asked together."""
        ...

    # --- the desk's figures ---
    async def desk_figures(self, since: datetime | None, until: datetime) -> DeskFigures:
        """Aggregates of every session's log over `since <= created_at < until` (None: from
        the beginning), computed by the database: conversations per agent, handoffs, first
        answer and resolution times, refunds and credits, notices, token usage
        (`store/figures.py` defines each), read from the sessions' kept shares and their roll-up:
        a few hundred rows plus the sessions crossing the window's edges, whatever the window."""
        ...

    async def sla_progress(self, since: datetime | None, until: datetime) -> list[tuple[ConversationState, SlaProgress]]:
        """The kept state and SLA clocks (`sla.advance`, folded with the appends) of every
        conversation with items created in `since <= created_at <= until`: `sla.finish` reads
        them at a `now`, without reading a log."""
        ...

    # --- search and fork ---
    async def search(self, text: str, *, limit: int = 50) -> list[SearchHit]: ...

    async def fork(self, session_id: str, upto: int) -> SessionInfo: ...

    # --- one turn at a time, and the change feed ---
    def turn(self, session_id: str) -> TurnLease:
        """The lease of one turn on one session (not yet acquired). Turns on one session take
        it one at a time, across processes and machines; turns on different sessions never
        wait for each other; a holder that dies loses it after a bounded time."""
        ...

    async def follow(self) -> Feed: ...


@runtime_checkable
class StoreAdmin(Protocol):
    """What moving and checking a whole desk needs beyond `Store` (`supportdesk db copy/check`).

    An optional capability next to the contract: both adapters have it; the engine and the TUI
    never use it."""

    async def schema_version(self) -> int:
        """The version of the schema this database is at (after opening, the current one)."""
        ...

    async def import_session(
        self, info: SessionInfo, items: Sequence[Item], usage: dict[str, dict[str, int]]
    ) -> None:
        """Write a session exactly as another store holds it: its id, its row (times, status,
        counts, fork origin, channel, meta), its items with their seqs, times and meta, and its
        usage totals. One transaction: a session is copied whole or not at all. A session of
        that id already here is a StoreError, never overwritten."""
        ...
