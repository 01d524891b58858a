"""The store's dialect-free core: what the SQLite and the PostgreSQL adapters share.

`sessions.py` (SQLite) and `postgres.py` (PostgreSQL) keep only what differs between the two
databases: the driver's calls and error handling, the placeholders (`?` or `$n`), JSON access,
upserts, locking and the change feed, search, the turn lease. Everything else is written here once:

- `StoreDialect`: the few words an adapter gives (its placeholder, how it binds a time, how it
  reads a field of the kept desk summary, a snooze's end and a tag, its largest seq);
- `StoreCore`: the base class of both adapters' stores, holding the contract's reads of session
  rows (get/find/list/count, the inbox and its counts, tags, usage, SLA progress), the log's keyed
  reads (range, item, agent_at, context_at) and the frame of a fork; an adapter gives `_rows`
  (one read), `_copy_session` (a fork's transaction), `of_kind` and `close`, and its `ReadSql`;
- `ReadSql` and `SummarySql`: the statements, built from the dialect (as `figures.FigureSql`
  builds the figures' SQL), with the ones whose words differ passed in by the adapter;
- pure functions: a row as a `SessionInfo`, `DeskRow`, `Item`, context or `TurnStart`; the inbox
  filter (`desk_where`); the fold of a whole log into the kept summaries and the test whether the
  kept ones stand at the head; what an append writes besides its rows (`plan_append`); an import's
  rows; a fork's title; the refusal of a newer schema.

A third backend gives a dialect, its statements and the driver calls, and inherits the rest;
`tests/test_store_core.py` fails when a function body or a statement is written in both adapters.
"""

from __future__ import annotations

import itertools

import json
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, ClassVar, Self, assert_never

from supportdesk.folds.desk_state import ConversationState, DeskFilter, start
from supportdesk.exact import read_back
from supportdesk.items import Handoff, Item, item_body_json, item_from_json
from supportdesk.folds.sla import SlaProgress
from supportdesk.store import figure_summary
from supportdesk.store.figure_summary import FigureSummary
from supportdesk.store.figures import EPOCH
from supportdesk.store.kept_folds import advance_all
from supportdesk.store.protocol import ContextEntry, DeskRow, SessionInfo, StoreError, TurnStart, session_info
from supportdesk.text import one_line

# The session row's columns, in the order every read of a whole row selects them.
SESSION_COLS = (
    "id, title, created_at, updated_at, entry_agent, active_agent, status, "
    "item_count, handoff_count, forked_from, forked_at, channel, meta"
)
SESSION_COL_NAMES: tuple[str, ...] = tuple(SESSION_COLS.split(", "))


def session_of_row(row: Iterable[Any]) -> SessionInfo:
    """A session from a row of SESSION_COLS (a tuple or a driver's record, in that order)."""
    return session_info(dict(zip(SESSION_COL_NAMES, row)))


def item_of_row(row: Sequence[Any]) -> Item:
    """An item from a row whose first column is the item as one JSON document."""
    return item_from_json(row[0])


def share_of(text: str | None) -> FigureSummary | None:
    """A session's kept share of the figures (None: none kept yet)."""
    return FigureSummary.from_json(text) if text else None


def context_entries(rows: Iterable[Sequence[Any]]) -> dict[str, ContextEntry]:
    """The shared context from (key, body, seq, created_at) rows, the newest write of each key
    (a cleared key is left out)."""
    out: dict[str, ContextEntry] = {}
    for key, body, at, created in rows:
        data = json.loads(body)
        if data.get("value") is None:
            continue  # cleared
        out[key] = read_back(
            ContextEntry, {"key": key, "value": data["value"], "writer": data["writer"], "seq": at, "created_at": created}
        )
    return out


def _count(value: Any, default: int) -> int:
    """A usage figure from item meta as the SQL back-fill reads it: numbers count, anything else not."""
    if value is None:
        return default
    return int(value) if isinstance(value, (int, float)) else 0


def usage_rows(pairs: Iterable[tuple[str, dict[str, Any]]]) -> list[tuple[str, int, int, int]]:
    """(agent, input, output, reported) summed over (agent, item meta) pairs whose meta carries
    `usage`: what an append adds to `usage_totals`."""
    totals: dict[str, tuple[int, int, int]] = {}
    for agent, meta in pairs:
        usage = meta.get("usage")
        if usage is None:
            continue
        fields = usage if isinstance(usage, dict) else {}
        before_in, before_out, before_reported = totals.get(agent, (0, 0, 1))
        totals[agent] = (
            before_in + _count(fields.get("input_tokens"), 0),
            before_out + _count(fields.get("output_tokens"), 0),
            min(before_reported, _count(fields.get("reported"), 1)),
        )
    return [(agent, *sums) for agent, sums in totals.items()]


@dataclass(frozen=True)
class StoreDialect:
    """The few words in which the two databases' SQL differs, for the statements built here."""

    # The placeholder of the n-th parameter (from 1): "?" or "$n".
    param: Callable[[int], str]
    # A time as the driver binds it (SQLite: ISO text, compared as the log stores it).
    time: Callable[[datetime], Any]
    # A field of the kept desk summary (`desk_summary`, JSON text) as SQL text.
    summary_field: Callable[[str], str]
    # True when the kept summary's snooze ends at or before the time in placeholder p (NULL: false).
    snooze_over: Callable[[str], str]
    # True when the kept summary's tags hold the text in placeholder p.
    has_tag: Callable[[str], str]
    # Larger than any seq the database can hold: "no upper bound" (reads clamp to it).
    no_limit: int


def desk_where(dialect: StoreDialect, where: DeskFilter, now: datetime) -> tuple[str, list[Any]]:
    """The WHERE clause (parameters numbered from 1) that keeps the sessions `where.matches` keeps."""
    clauses: list[str] = []
    params: list[Any] = []

    def param(value: Any) -> str:
        params.append(value)
        return dialect.param(len(params))

    def snooze_ended() -> str:  # a snooze whose time has passed: back with staff (desk_state.at)
        return f"(desk_state = 'snoozed' AND {dialect.snooze_over(param(dialect.time(now)))})"

    match where.group:
        case "all":
            pass
        case "needs_staff":
            clauses.append(f"(desk_state = 'needs_staff' OR {snooze_ended()})")
        case "working" | "waiting_customer":
            clauses.append(f"(desk_state = 'ai' AND {dialect.summary_field('detail')} = {param(where.group)})")
        case "idle":
            clauses.append(f"(desk_state = 'resolved' OR (desk_state = 'snoozed' AND NOT {snooze_ended()}))")
        case _:
            assert_never(where.group)
    if where.tag:
        clauses.append(dialect.has_tag(param(where.tag)))
    if where.priority:
        clauses.append(f"{dialect.summary_field('priority')} = {param(where.priority)}")
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def desk_page_sql(dialect: StoreDialect, clause: str, n_params: int) -> str:
    """The inbox page under a `desk_where` clause of n_params parameters (then LIMIT, OFFSET)."""
    return (
        f"SELECT {SESSION_COLS}, desk_summary FROM sessions{clause} "
        f"ORDER BY updated_at DESC, id LIMIT {dialect.param(n_params + 1)} OFFSET {dialect.param(n_params + 2)}"
    )


def desk_row(row: Sequence[Any]) -> DeskRow:
    """An inbox row from SESSION_COLS then desk_summary: the session and its kept state."""
    *cols, summary = row
    info = session_of_row(cols)
    return DeskRow(info, ConversationState.from_json(summary) if summary else start(info.entry_agent))


class SummarySql:
    """The statements that keep a session's summaries (its desk state, its share of the figures
    and its SLA clocks, beside its row), in one dialect's placeholders. The session id is always
    the last parameter."""

    # The sessions lacking a kept summary (after the migrations that added them): (id, lacks desk).
    LACKING = "SELECT id, desk_summary IS NULL FROM sessions WHERE desk_summary IS NULL OR figure_summary IS NULL"

    def __init__(self, dialect: StoreDialect):
        p = dialect.param
        self.forked_at = f"SELECT coalesce(forked_at, 0) FROM sessions WHERE id = {p(1)}"
        # What a fold of the whole log starts from.
        self.fold_start = f"SELECT entry_agent, created_at, figure_summary, status FROM sessions WHERE id = {p(1)}"
        self.set_summary = f"UPDATE sessions SET desk_state = {p(1)}, desk_summary = {p(2)} WHERE id = {p(3)}"
        # The session's share of the figures: its columns (`figure_columns`), then its id.
        self.set_figures = (
            f"UPDATE sessions SET span_first = {p(1)}, span_last = {p(2)}, asked_us = {p(3)}, answer_ms = {p(4)}, "
            f"resolved_us = {p(5)}, resolution_ms = {p(6)}, figure_summary = {p(7)}, sla_summary = {p(8)} WHERE id = {p(9)}"
        )


def figure_columns(share: FigureSummary, progress: SlaProgress | None) -> tuple[Any, ...]:
    """`SummarySql.set_figures`' parameters but the session id: the share's indexed columns, the
    share and the SLA clocks' progress as JSON."""
    return (
        share.first_us,
        share.last_us,
        share.asked_us,
        share.answer_ms,
        share.resolved_us,
        share.resolution_ms,
        share.to_json(),
        (progress or SlaProgress()).to_json(),
    )


def current(
    count: int, state: ConversationState, share: FigureSummary | None, progress: SlaProgress | None
) -> tuple[ConversationState, FigureSummary, SlaProgress] | None:
    """A session's kept summaries when they stand at its head `count`; None when they lag or are
    missing (a fork, an import, a database from before they were kept): fold the whole log."""
    if state.seq != count or share is None or share.seq != count or progress is None:
        return None
    return state, share, progress


def fold_whole_log(
    entry_agent: str, created_at: datetime, status: str, copied: int, items: Iterable[Item]
) -> tuple[ConversationState, FigureSummary, SlaProgress]:
    """The desk state, the figures' share and the SLA clocks folded from a session's whole log
    (`copied`: a fork's copied items, which count in no figure)."""
    state, share = start(entry_agent), figure_summary.start(entry_agent, created_at, status, copied)
    return advance_all(state, share, SlaProgress(), items)


def status_move(
    figures: str | None, clocks: str | None, status: str
) -> tuple[FigureSummary, FigureSummary, SlaProgress | None] | None:
    """A status change's move of the session's share (kept, new, clocks): a waiting status holds
    back its resolution in the figures' roll-up. None when the session keeps no share."""
    if not figures:
        return None
    kept = FigureSummary.from_json(figures)
    return kept, figure_summary.with_status(kept, status), SlaProgress.from_json(clocks) if clocks else None


@dataclass(frozen=True)
class AppendPlan:
    """What an append writes, serialized (and so validated) before any statement runs: the
    items' columns, one list per column, and how they move the session's row."""

    kinds: list[str]
    agents: list[str]
    bodies: list[str]
    metas: list[str | None]
    # The context key a `context_set` writes (None for other kinds), and the distinct keys.
    keys: list[str | None]
    new_keys: list[str]
    handoffs: int
    # The agent the last handoff hands to (None: no handoff, the active agent stays).
    active: str | None
    # The title from the first customer message (used when the session has none yet).
    title: str | None
    # (agent, input, output, reported) to add to usage_totals.
    usage: list[tuple[str, int, int, int]]


def plan_append(items: Sequence[Item]) -> AppendPlan:
    keys = [item.key if item.kind == "context_set" else None for item in items]
    handoffs = [item for item in items if item.kind == "handoff"]
    titles = (one_line(i.text, 80) for i in items if i.kind == "message" and i.role == "customer")
    return AppendPlan(
        kinds=[item.kind for item in items],
        agents=[item.agent for item in items],
        bodies=[item_body_json(item) for item in items],
        metas=[json.dumps(item.meta, ensure_ascii=False) if item.meta else None for item in items],
        keys=keys,
        new_keys=sorted({key for key in keys if key is not None}),
        handoffs=len(handoffs),
        active=handoffs[-1].to_agent if handoffs else None,
        title=next((t for t in titles if t), None),
        usage=usage_rows((item.agent, item.meta) for item in items),
    )


# Items a window read (a turn's start, `latest`) parsed lately, by their document as stored. A
# conversation's next turn reads much of the same window again: parsing it (pydantic, tens of µs
# an item) was the largest cost of a served turn's start. The document names its session, seq and
# time, so an equal document is the same item; items are frozen and nothing changes a read item's
# fields. When full, the oldest kept quarter goes (not all of it: `serve` with 50 conversations
# reads ~3,000 window items in turn, and a clear-all when full re-parsed every one of them).
PARSED_KEPT = 8192
PARSED_LONGEST = 16_384  # a longer document (a big tool result) is parsed each time, not kept
_parsed: dict[str | bytes, Item] = {}


def window_item(doc: str | bytes) -> Item:
    """The item of one stored document, parsed once while it stays among the PARSED_KEPT kept."""
    item = _parsed.get(doc)
    if item is None:
        item = item_from_json(doc)
        keep_parsed(doc, item)
    return item


def keep_parsed(doc: str | bytes, item: Item) -> None:
    """`item` kept as the parse of `doc`, its document as a read of the log gives it: by
    `window_item`, and by a writer for the items it has just stored (PostgreSQL's append makes
    their documents for its NOTIFY), so its next turn's start does not parse back what it wrote."""
    if len(doc) <= PARSED_LONGEST and doc not in _parsed:
        if len(_parsed) >= PARSED_KEPT:
            for oldest in list(itertools.islice(_parsed, max(1, PARSED_KEPT // 4))):
                del _parsed[oldest]
        _parsed[doc] = item


def window_item_of_row(row: Sequence[Any]) -> Item:
    """`item_of_row` through the kept parses (`window_item`): for reads of a session's newest items."""
    return window_item(row[0])


def turn_start_of(
    row: Iterable[Any] | None, docs: Iterable[str], context: Iterable[Sequence[Any]], held_by: str | None
) -> TurnStart:
    """A turn's start read as the contract returns it: the session's row (SESSION_COLS first;
    None: no such session), its newest items as JSON documents, its context rows (as
    `context_entries` reads them) and the person holding it."""
    if row is None:
        return TurnStart(None, [], {}, None)
    return TurnStart(session_of_row(row), [window_item(doc) for doc in docs], context_entries(context), held_by)


def newer_schema(where: str, version: int, known: int) -> StoreError | None:
    """The refusal of a database made by a newer supportdesk (None when this one knows its schema)."""
    if version <= known:
        return None
    return StoreError(
        f"{where}: made by a newer supportdesk (schema v{version}, this one knows v{known}); upgrade supportdesk to open it"
    )


def fork_title(source: SessionInfo, first_customer: int | None, upto: int) -> str:
    """A fork's title: the source's, if the first customer message it comes from is among the
    copied items (or it was given, not derived); else none yet."""
    return source.title if first_customer is None or first_customer <= upto else ""


@dataclass(frozen=True)
class ImportRows:
    """A session exactly as another store holds it, as rows (`StoreAdmin.import_session`)."""

    # The session row's values in SESSION_COLS order (its times as the dialect binds them).
    session: tuple[Any, ...]
    # (session_id, seq, kind, agent, created_at, body, meta, ctx_key) per item.
    items: list[tuple[Any, ...]]
    # The context keys its items write, and (session_id, agent, input, output, reported) totals.
    keys: list[str]
    usage: list[tuple[str, str, int, int, int]]


def import_rows(
    dialect: StoreDialect, info: SessionInfo, items: Sequence[Item], usage: dict[str, dict[str, int]]
) -> ImportRows:
    row = asdict(info)
    row["created_at"], row["updated_at"] = dialect.time(info.created_at), dialect.time(info.updated_at)
    row["meta"] = json.dumps(info.meta, ensure_ascii=False)
    item_rows = [
        (
            info.id,
            item.seq,
            item.kind,
            item.agent,
            dialect.time(item.created_at),
            item_body_json(item),
            json.dumps(item.meta, ensure_ascii=False) if item.meta else None,
            item.key if item.kind == "context_set" else None,
        )
        for item in items
    ]
    return ImportRows(
        session=tuple(row[c] for c in SESSION_COL_NAMES),
        items=item_rows,
        keys=sorted({r[7] for r in item_rows if r[7] is not None}),
        usage=[(info.id, agent, t["input_tokens"], t["output_tokens"], t["reported"]) for agent, t in usage.items()],
    )


def insert_session_sql(dialect: StoreDialect) -> str:
    """An INSERT of a whole session row (ImportRows.session)."""
    values = ", ".join(dialect.param(n) for n in range(1, len(SESSION_COL_NAMES) + 1))
    return f"INSERT INTO sessions ({SESSION_COLS}) VALUES ({values})"


class CopySql:
    """The statements of a fork and an import that both databases write alike, in one
    dialect's placeholders (the adapters pass the same parameters in the same order)."""

    def __init__(self, dialect: StoreDialect) -> None:
        p = dialect.param
        self.session_exists = f"SELECT 1 FROM sessions WHERE id = {p(1)}"
        # A fork's row: (id, title, created_at, updated_at, entry_agent, active_agent,
        # item_count, handoff_count, forked_from, forked_at).
        self.fork_session = (
            "INSERT INTO sessions (id, title, created_at, updated_at, entry_agent, active_agent, status, "
            f"item_count, handoff_count, forked_from, forked_at) VALUES ({p(1)}, {p(2)}, {p(3)}, {p(4)}, {p(5)}, "
            f"{p(6)}, 'open', {p(7)}, {p(8)}, {p(9)}, {p(10)})"
        )
        # The fork's context keys, from the items it copied: (new id, new id) (SQLite's "?" are
        # positional: each is a parameter of its own).
        self.fork_context_keys = (
            f"INSERT INTO context_keys (session_id, key) SELECT DISTINCT {p(1)}, ctx_key FROM items "
            f"WHERE session_id = {p(2)} AND ctx_key IS NOT NULL"
        )
        # An imported session's token totals, one row per agent.
        self.insert_usage = (
            "INSERT INTO usage_totals (session_id, agent, input_tokens, output_tokens, reported) "
            f"VALUES ({p(1)}, {p(2)}, {p(3)}, {p(4)}, {p(5)})"
        )


class ReadSql:
    """The reads of session rows in one dialect's placeholders; the statements whose words
    differ (JSON walks, time comparisons) are the adapter's, passed in."""

    def __init__(
        self,
        dialect: StoreDialect,
        *,
        desk_tags: str,
        desk_priorities: str,
        count_needing_staff: str,
        item_range: str,
        item: str,
        agent_at: str,
        context_at: str,
    ):
        p = dialect.param
        self.session = f"SELECT {SESSION_COLS} FROM sessions WHERE id = {p(1)}"
        self.by_prefix = f"SELECT {SESSION_COLS} FROM sessions WHERE id >= {p(1)} AND id < {p(2)} LIMIT 2"
        self.page = f"SELECT {SESSION_COLS} FROM sessions ORDER BY updated_at DESC, id LIMIT {p(1)} OFFSET {p(2)}"
        self.count = "SELECT count(*) FROM sessions"
        self.last_seq = f"SELECT item_count FROM sessions WHERE id = {p(1)}"
        # The inbox: the most recently active sessions with their kept state, one index range.
        self.desk = f"SELECT {SESSION_COLS}, desk_summary FROM sessions ORDER BY updated_at DESC, id LIMIT {p(1)}"
        self.usage_totals = (
            f"SELECT agent, input_tokens, output_tokens, reported FROM usage_totals WHERE session_id = {p(1)} ORDER BY agent"
        )
        # The SLA figures' conversations: created in the window, with items (an index range on creation).
        self.sla_progress = (
            f"SELECT desk_summary, sla_summary FROM sessions WHERE created_at >= {p(1)} AND created_at <= {p(2)} "
            "AND item_count > 0 ORDER BY created_at, id"
        )
        self.desk_tags = desk_tags
        self.desk_priorities = desk_priorities
        # (a snooze whose time, the parameter, has passed is back with staff: desk_state.at)
        self.count_needing_staff = count_needing_staff
        # The log's reads, each item as one JSON document (the adapter's own expression):
        # (session, first, last), (session, seq), (session, seq) -> the agent, (seq, session) -> context rows.
        self.item_range = item_range
        self.item = item
        self.agent_at = agent_at
        self.context_at = context_at


class StoreCore:
    """The half of the contract every adapter shares, written once: the reads of whole session
    rows and their kept summaries, and the frame of a fork. An adapter sets `dialect` and
    `reads` and gives `_rows` (one read, its rows), `_copy_session` (a fork's transaction),
    `of_kind` and `close`."""

    dialect: ClassVar[StoreDialect]
    reads: ClassVar[ReadSql]
    # The clock that stamps appended items and is "now" for the inbox; tests fix it.
    clock: Callable[[], datetime]

    async def _rows(self, sql: str, params: Sequence[Any] = ()) -> Sequence[Sequence[Any]]:
        raise NotImplementedError

    async def of_kind(self, session_id: str, kind: str, *, upto: int | None = None, after: int = 0) -> list[Item]:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    async def _copy_session(self, source: SessionInfo, new_id: str, upto: int, now: datetime) -> None:
        """Write `new_id`, a copy of `source`'s items 1..upto with its summaries folded, in one transaction."""
        raise NotImplementedError

    async def fork(self, session_id: str, upto: int) -> SessionInfo:
        """A new session holding a copy of items 1..upto of another."""
        source = await self.get_session(session_id)
        if source is None:
            raise StoreError(f"no session {session_id!r}")
        new_id = uuid.uuid4().hex[:12]
        await self._copy_session(source, new_id, max(0, min(upto, source.item_count)), self.clock())
        info = await self.get_session(new_id)
        assert info is not None
        return info

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def get_session(self, session_id: str) -> SessionInfo | None:
        rows = await self._rows(self.reads.session, (session_id,))
        return session_of_row(rows[0]) if rows else None

    async def find_session(self, prefix: str) -> SessionInfo | None:
        """A session by its id or an unambiguous prefix of it (what people type)."""
        exact = await self.get_session(prefix)
        if exact or not prefix:
            return exact
        rows = await self._rows(self.reads.by_prefix, (prefix, prefix + "\U0010ffff"))
        return session_of_row(rows[0]) if len(rows) == 1 else None

    async def list_sessions(self, *, limit: int = 50, offset: int = 0) -> list[SessionInfo]:
        return [session_of_row(r) for r in await self._rows(self.reads.page, (limit, offset))]

    async def count_sessions(self) -> int:
        rows = await self._rows(self.reads.count)
        return int(rows[0][0])

    async def desk(
        self, *, limit: int = 200, offset: int = 0, where: DeskFilter = DeskFilter(), now: datetime | None = None
    ) -> list[DeskRow]:
        if not where.narrows and not offset:
            return [desk_row(r) for r in await self._rows(self.reads.desk, (limit,))]
        clause, params = desk_where(self.dialect, where, now or self.clock())
        sql = desk_page_sql(self.dialect, clause, len(params))
        return [desk_row(r) for r in await self._rows(sql, (*params, limit, offset))]

    async def count_desk(self, where: DeskFilter = DeskFilter(), now: datetime | None = None) -> int:
        clause, params = desk_where(self.dialect, where, now or self.clock())
        rows = await self._rows(f"SELECT count(*) FROM sessions{clause}", params)
        return int(rows[0][0])

    async def desk_tags(self) -> tuple[list[str], list[str]]:
        tags = [str(r[0]) for r in await self._rows(self.reads.desk_tags)]
        priorities = [str(r[0]) for r in await self._rows(self.reads.desk_priorities)]
        return tags, priorities

    async def count_needing_staff(self, now: datetime) -> int:
        rows = await self._rows(self.reads.count_needing_staff, (self.dialect.time(now),))
        return int(rows[0][0])

    async def last_seq(self, session_id: str) -> int:
        rows = await self._rows(self.reads.last_seq, (session_id,))
        return int(rows[0][0]) if rows else 0

    async def range(self, session_id: str, first: int, last: int) -> list[Item]:
        """Items with first <= seq <= last, oldest first."""
        bound = self.dialect.no_limit
        rows = await self._rows(self.reads.item_range, (session_id, max(first, -bound), min(last, bound)))
        return [item_of_row(r) for r in rows]

    async def item(self, session_id: str, seq: int) -> Item | None:
        if not -self.dialect.no_limit <= seq <= self.dialect.no_limit:
            return None
        rows = await self._rows(self.reads.item, (session_id, seq))
        return item_of_row(rows[0]) if rows else None

    async def agent_at(self, session_id: str, seq: int) -> str:
        """The agent holding the conversation once item `seq` was written."""
        rows = await self._rows(self.reads.agent_at, (session_id, min(seq, self.dialect.no_limit)))
        if rows:
            return str(rows[0][0])
        info = await self.get_session(session_id)
        return info.entry_agent if info else ""

    async def context_at(self, session_id: str, seq: int | None = None) -> dict[str, ContextEntry]:
        """The shared context as of item `seq` (default: now). One index probe per key."""
        upto = self.dialect.no_limit if seq is None else min(seq, self.dialect.no_limit)
        return context_entries(await self._rows(self.reads.context_at, (upto, session_id)))

    async def handoffs(self, session_id: str, upto: int | None = None) -> list[Handoff]:
        return await self.of_kind(session_id, "handoff", upto=upto)  # type: ignore[return-value]

    async def usage_totals(self, session_id: str) -> dict[str, dict[str, int]]:
        """Token usage per agent (the `usage` the runner writes into item meta), summed.

        The appends keep the sums, so this is one index probe however long the session is."""
        rows = await self._rows(self.reads.usage_totals, (session_id,))
        return {a: {"input_tokens": i, "output_tokens": o, "reported": int(r)} for a, i, o, r in rows}

    async def sla_progress(self, since: datetime | None, until: datetime) -> list[tuple[ConversationState, SlaProgress]]:
        rows = await self._rows(self.reads.sla_progress, (self.dialect.time(since or EPOCH), self.dialect.time(until)))
        return [(ConversationState.from_json(state), SlaProgress.from_json(clocks)) for state, clocks in rows]
