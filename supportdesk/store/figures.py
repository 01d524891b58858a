"""The desk's figures over a time window: what `Store.desk_figures` returns, and the SQL both
adapters run for it (`FigureSql`, written once; `sqlite_figures.py` and `pg_figures.py` give only
their dialect's words for a JSON field, a placeholder and a time).

How they are read fast: every session keeps its share of the figures beside its row, folded as
the appends go (`figure_summary.py`), and adds it to a roll-up by the day and by the hour in which
its span (its creation and every item time) begins and ends. A window's figures are the roll-up
rows of the sessions whose span lies inside the whole hours it holds (a few hundred rows even for
all time), plus the sessions that cross its edges, read from their items with the definitions
below, plus the durations, one value per session in indexed columns. What each figure counts (the definitions a plain-Python fold
of the log reproduces in `tests/test_stats.py`):

- the window is `since <= created_at < until` of the items (`since` None: from the beginning);
- `conversations`: sessions with at least one item in the window; `started`: sessions created in it;
- `taken[agent]`: sessions the agent took in the window: its entry agent when the session's first
  own item (after a fork's copy) is in the window (an empty session is no conversation anybody took
  part in: issue 39), or handed to it by a handoff in the window (each session once per agent);
- `escalated[agent]`: sessions in which the agent made an `escalate` handoff in the window;
- `handoffs`: handoff items in the window by (from, to, handoff kind);
- `first_answer`: for each session whose first customer message is in the window, the seconds
  from it to the first agent message after it (`unanswered` when there is none yet);
- `resolution`: for each session whose conversation state (`desk_state`) is `resolved` and became
  so (the last time) in the window, the seconds from its first customer message to that moment:
  the SLA clocks' resolution (`folds/sla.py`), so it counts exactly the conversations `sla.resolved` does
  (those with a customer message);
- a fork's copied items (seq <= its `forked_at`) are its source's events: they count in no figure
  and not in its span (its first answer and money are only what happened in the fork);
- `money[tool]`: refunds and credits made in the window: successful results of `refund_charge`
  and `issue_credit` (not errors, not a call held for staff approval: `awaits_approval`), each at the
  amount its call asked for (the latest call with that call id before the result);
- `offers`: per tool and agent (the item's), the offers made in the window (issue 33) and the
  answers: accepted (a confirmation), declined (a no, a change of mind, a question, anything
  else), expired (the conversation moved on, a takeover, staff withdrew it).
- `notices[kind]`: notice items in the window by kind (provider errors, limits, approvals ...);
- `usage`: the token usage recorded in the meta of items in the window, by (agent, model).

Durations are whole milliseconds (truncated), reported in seconds; percentiles are nearest-rank.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from supportdesk.items import APPROVAL_PENDING

# Seconds: under 10 s, 30 s, 1 min, 5 min, 15 min, 1 h, 4 h, 1 day, and a day or more.
DURATION_EDGES: tuple[float, ...] = (10, 30, 60, 300, 900, 3600, 4 * 3600, 86400)
# The same in milliseconds: durations are measured in whole milliseconds (integers on both
# databases, so every figure is exact and the same on both).
DURATION_EDGES_MS: tuple[int, ...] = tuple(int(edge * 1000) for edge in DURATION_EDGES)
# Money, in the charge's currency: under 10, 25, 50, 100, 250, 500, and 500 or more.
AMOUNT_EDGES: tuple[float, ...] = (10, 25, 50, 100, 250, 500)
# The tools that move money to the customer (their calls carry `amount`, in the charge's
# currency: engine/tools.Tool refuses a money tool without it), in the figures' order, with what
# the figures call their calls. The tools declare it (effect="money"); this is the one copy below
# them, read by the kept share's fold and SQL, `stats` and the dashboard, and checked against the
# declarations (tests/test_confirmation.py). Why a copy: the store may not import the tools
# (layers), and the share it folds inside every append must not depend on which process opened
# the database (a writer opened without the list would store money as not made).
MONEY_TOOLS: dict[str, str] = {"refund_charge": "refunds", "issue_credit": "credits"}
# Statuses in which the desk is waiting on someone: such a conversation is not resolved.
WAITING_STATUSES: tuple[str, ...] = ("awaiting_approval", "needs_human")
# The beginning of time for a window without a start (both adapters compare timestamps).
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
PERCENTILES: tuple[int, ...] = (50, 90)
# The durations, as the shares and the roll-up name them.
DURATIONS: tuple[str, ...] = ("first_answer", "resolution")
# The roll-up's grains, coarsest first: (name, length in microseconds). Times in the summaries
# and the roll-up are microseconds since the epoch (`micros`).
GRAINS: tuple[tuple[str, int], ...] = (("d", 86_400_000_000), ("h", 3_600_000_000))
# Money in millionths, so sums are exact integers on both databases.
MONEY_SCALE = 1_000_000


def micros(at: datetime) -> int:
    """Microseconds since the epoch."""
    return (at - EPOCH) // timedelta(microseconds=1)


def bucket_of(value: float, edges: tuple[float, ...]) -> int:
    """The bucket a value falls in: i when edges[i-1] <= value < edges[i] (0 below the first)."""
    for i, edge in enumerate(edges):
        if value < edge:
            return i
    return len(edges)


def bucket_sums(expr: str, edges: tuple[float, ...]) -> str:
    """SQL columns counting the rows of each bucket of `expr` (one column per bucket)."""
    bounds = [(None, edges[0])] + list(zip(edges, edges[1:])) + [(edges[-1], None)]
    cols = []
    for low, high in bounds:
        tests = ([f"{expr} >= {low}"] if low is not None else []) + ([f"{expr} < {high}"] if high is not None else [])
        cols.append(f"sum(CASE WHEN {' AND '.join(tests)} THEN 1 ELSE 0 END)")
    return ", ".join(cols)


def rank_sql(p: int, greatest: str) -> str:
    """The nearest rank of percentile p among n rows: ceil(p * n / 100), at least 1."""
    return f"{greatest}(1, ({p} * n + 99) / 100)"


def nearest_rank(p: int, n: int) -> int:
    return max(1, (p * n + 99) // 100)


@dataclass(frozen=True)
class Distribution:
    """Durations in seconds: how many, their sum and largest, percentiles, and bucket counts."""

    count: int = 0
    total: float = 0.0
    largest: float | None = None
    percentiles: dict[int, float] = field(default_factory=dict)
    buckets: tuple[int, ...] = (0,) * (len(DURATION_EDGES) + 1)

    @property
    def mean(self) -> float | None:
        return self.total / self.count if self.count else None

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> Distribution:
        """From the summary row both adapters select over milliseconds: n, sum, max, p50, p90,
        buckets..."""
        n = int(row[0] or 0)
        if not n:
            return cls()
        ranks = dict(zip(PERCENTILES, (int(v) / 1000 for v in row[3 : 3 + len(PERCENTILES)])))
        return cls(
            count=n,
            total=int(row[1]) / 1000,
            largest=int(row[2]) / 1000,
            percentiles=ranks,
            buckets=tuple(int(v or 0) for v in row[3 + len(PERCENTILES) :]),
        )


@dataclass(frozen=True)
class MoneyFigures:
    """How many refunds (or credits), their total, and how many fell in each amount bucket."""

    count: int = 0
    total: float = 0.0
    buckets: tuple[int, ...] = (0,) * (len(AMOUNT_EDGES) + 1)


@dataclass(frozen=True)
class UsageRow:
    """Tokens one agent used with one model."""

    agent: str
    model: str  # the model the item's meta names ("" when the item did not say)
    input_tokens: int
    output_tokens: int
    reported: bool  # False once any count in the sum was an estimate


@dataclass(frozen=True)
class OfferRow:
    """What became of one agent's offers of one tool (issue 33)."""

    tool: str
    agent: str
    made: int = 0
    accepted: int = 0
    declined: int = 0
    expired: int = 0


# How an offer's answer is counted: its decline reasons, by outcome.
OFFER_EXPIRED: tuple[str, ...] = ("expired", "withdrawn")


@dataclass(frozen=True)
class HandoffEdge:
    """How many handoffs of one kind went from one agent to another."""

    from_agent: str
    to_agent: str
    handoff_kind: str
    count: int


@dataclass(frozen=True)
class DeskFigures:
    """The aggregates of the log over one window (see the module's definitions)."""

    since: datetime | None
    until: datetime
    conversations: int = 0
    started: int = 0
    taken: dict[str, int] = field(default_factory=dict)
    escalated: dict[str, int] = field(default_factory=dict)
    handoffs: tuple[HandoffEdge, ...] = ()
    first_answer: Distribution = field(default_factory=Distribution)
    unanswered: int = 0
    resolution: Distribution = field(default_factory=Distribution)
    money: dict[str, MoneyFigures] = field(default_factory=dict)
    notices: dict[str, int] = field(default_factory=dict)
    usage: tuple[UsageRow, ...] = ()
    offers: tuple[OfferRow, ...] = ()


# --- the SQL both adapters run -------------------------------------------------------------------


@dataclass(frozen=True)
class Dialect:
    """A database's words for what the shared SQL needs: a JSON field of a text column, a
    number in it, and the window's bounds on an item's `created_at`."""

    field: Any  # (alias, column, path) -> SQL text of that JSON field
    number: Any  # (alias, column, path) -> SQL number (NULL when absent)
    is_false: Any  # (alias, column, path) -> SQL test that the JSON field is false
    ids: str  # a SELECT of one column `id` from the list of session ids in the parameter :ids


def _in_window(a: str) -> str:
    return f"{a}.created_at >= :since AND {a}.created_at < :until"


class FigureSql:
    """The statements of `desk_figures`, with `:name` parameters (adapters map them)."""

    def __init__(self, d: Dialect) -> None:
        rows = "SELECT what, a, b, c, n, x, y, z FROM figure_rollup WHERE "
        # The sessions inside the window's whole days, then those inside its whole hours but not
        # its whole days (beginning before the first whole day, or ending after the last).
        self.rollup = f"""
            SELECT what, a, b, c, sum(n), sum(x), sum(y), sum(z) FROM (
                {rows} grain = 'd' AND lo >= :d1 AND hi < :d2
                UNION ALL
                {rows} grain = 'h' AND lo >= :h1 AND lo < :h1d AND hi < :h2
                UNION ALL
                {rows} grain = 'h' AND hi >= :h2d AND hi < :h2 AND lo >= :h1d) AS r
            GROUP BY what, a, b, c"""
        # The sessions crossing an edge of the window's whole hours, read from their items: they
        # begin in the window's first part-hour, or before the window and end in it, or end in its
        # last part-hour or after it. (No session begins before a window with no start.) The
        # unary plus keeps each part an index range on its first column, not the other one's.
        edges = """
            SELECT id FROM sessions WHERE span_first >= :since_us AND span_first < :h1_us
            UNION SELECT id FROM sessions WHERE span_last >= :h2_us AND +span_first < :until_us"""
        self.edges_from_start = f"{edges} UNION SELECT id FROM sessions WHERE span_last >= :since_us AND +span_first < :since_us"
        self.edges = edges
        # Each figure over the edge sessions, found once and passed back as a list.
        # (`upto`: a fork's copied items, seq <= forked_at, are its source's events, counted there.)
        listed = f"w0 AS ({d.ids}), w AS (SELECT w0.id, coalesce(s.forked_at, 0) AS upto FROM w0 JOIN sessions AS s ON s.id = w0.id)"
        self.edge_statements = {name: f"WITH {listed} {sql}" for name, sql in self._edge_statements(d).items()}
        # The durations' percentiles and largest: the k-th value in the window, by each duration's
        # own index. When the window holds a large part of the values they are walked in order
        # (`walk`), else the window's are read by time and sorted (the unary plus keeps the walk
        # off the time index); `totals` counts every value, to choose.
        self.ranks: dict[tuple[str, bool], tuple[str, str]] = {}
        self.totals: dict[str, str] = {}
        for which, value, at, extra in (
            ("first_answer", "answer_ms", "asked_us", f"answer_ms IS NOT NULL"),
            ("resolution", "resolution_ms", "resolved_us", "resolution_ms IS NOT NULL"),
        ):
            self.totals[which] = f"SELECT count(*) FROM sessions WHERE {extra}"
            for walk in (False, True):
                time = f"{'+' if walk else ''}{at}"
                where = f"FROM sessions WHERE {time} >= :since_us AND {time} < :until_us AND {extra}"
                self.ranks[which, walk] = (
                    f"SELECT {value} {where} ORDER BY {value} LIMIT 1 OFFSET :k",
                    f"SELECT {value} {where} ORDER BY {value} DESC LIMIT 1",
                )

    @staticmethod
    def _edge_statements(d: Dialect) -> dict[str, str]:
        """Per figure, the edge sessions' rows in the roll-up's shape: what, a, b, c, n, x, y, z."""
        f = d.field
        money = ", ".join(f"'{name}'" for name in MONEY_TOOLS)
        expired = ", ".join(f"'{why}'" for why in OFFER_EXPIRED)
        # A result held for staff approval says so in `awaits_approval`; a row stored before that
        # field existed (the field absent) by its output's first words (items._read_legacy).
        pending = APPROVAL_PENDING.replace("'", "''")
        handoffs = f"FROM w JOIN items AS i ON i.session_id = w.id AND i.kind = 'handoff' AND i.kind <> 'message' WHERE {_in_window('i')} AND i.seq > w.upto"
        amount_bucket = " ".join(f"WHEN amount < {edge} THEN '{i}'" for i, edge in enumerate(AMOUNT_EDGES))
        duration_bucket = " ".join(f"WHEN {{v}} < {edge} THEN '{i}'" for i, edge in enumerate(DURATION_EDGES_MS))
        duration_bucket = f"CASE {duration_bucket} ELSE '{len(DURATION_EDGES_MS)}' END"
        asked = "s.asked_us >= :since_us AND s.asked_us < :until_us"
        return {
            "first_answer": f"""
                SELECT CASE WHEN s.answer_ms IS NULL THEN 'unanswered' ELSE 'first_answer' END,
                    CASE WHEN s.answer_ms IS NULL THEN '' ELSE {duration_bucket.format(v='s.answer_ms')} END, '', '',
                    count(*), coalesce(sum(s.answer_ms), 0), 0, 0
                FROM w JOIN sessions AS s ON s.id = w.id WHERE {asked}
                GROUP BY 1, 2""",
            "resolution": f"""
                SELECT 'resolution', {duration_bucket.format(v='s.resolution_ms')}, '', '', count(*), sum(s.resolution_ms), 0, 0
                FROM w JOIN sessions AS s ON s.id = w.id
                WHERE s.resolved_us >= :since_us AND s.resolved_us < :until_us
                GROUP BY 2""",
            "conversations": f"""
                SELECT 'conversations', '', '', '', count(*), 0, 0, 0 FROM w
                WHERE EXISTS (SELECT 1 FROM items AS i WHERE i.session_id = w.id AND i.seq > w.upto AND {_in_window('i')})""",
            "started": f"""
                SELECT 'started', '', '', '', count(*), 0, 0, 0 FROM w JOIN sessions AS s ON s.id = w.id
                WHERE {_in_window('s')}""",
            "taken": f"""
                SELECT 'taken', agent, '', '', count(*), 0, 0, 0 FROM (
                    SELECT s.id AS sid, s.entry_agent AS agent FROM w JOIN sessions AS s ON s.id = w.id
                    WHERE EXISTS (SELECT 1 FROM items AS i WHERE i.session_id = w.id AND i.seq = w.upto + 1 AND {_in_window('i')})
                    UNION
                    SELECT i.session_id, {f('i', 'body', 'to_agent')} {handoffs}) AS took
                GROUP BY agent""",
            "handoff": f"""
                SELECT 'handoff', {f('i', 'body', 'from_agent')}, {f('i', 'body', 'to_agent')},
                    {f('i', 'body', 'handoff_kind')}, count(*), 0, 0, 0 {handoffs}
                GROUP BY 2, 3, 4""",
            "escalated": f"""
                SELECT 'escalated', {f('i', 'body', 'from_agent')}, '', '', count(DISTINCT i.session_id), 0, 0, 0 {handoffs}
                    AND {f('i', 'body', 'handoff_kind')} = 'escalate'
                GROUP BY 2""",
            "money": f"""
                SELECT 'money', tool, CASE {amount_bucket} ELSE '{len(AMOUNT_EDGES)}' END, '', count(*),
                    sum(CAST(round(amount * {MONEY_SCALE}) AS BIGINT)), 0, 0
                FROM (
                    SELECT {f('r', 'body', 'name')} AS tool, {d.number('c', 'body', 'arguments.amount')} AS amount
                    FROM w
                    JOIN items AS r ON r.session_id = w.id AND r.kind = 'tool_result' AND r.kind <> 'message'
                    JOIN items AS c ON c.session_id = r.session_id AND c.seq = (
                        SELECT max(seq) FROM items
                        WHERE session_id = r.session_id AND kind = 'tool_call' AND kind <> 'message' AND seq < r.seq
                            AND {f('items', 'body', 'call_id')} = {f('r', 'body', 'call_id')})
                    WHERE {_in_window('r')} AND r.seq > w.upto
                        AND {f('r', 'body', 'name')} IN ({money})
                        AND {d.is_false('r', 'body', 'is_error')}
                        AND coalesce({d.is_false('r', 'body', 'awaits_approval')}, {f('r', 'body', 'output')} NOT LIKE '{pending}%')) AS made
                GROUP BY 2, 3""",
            "notice": f"""
                SELECT 'notice', {f('i', 'body', 'notice_kind')}, '', '', count(*), 0, 0, 0
                FROM w JOIN items AS i ON i.session_id = w.id AND i.kind = 'notice' AND i.kind <> 'message'
                WHERE {_in_window('i')} AND i.seq > w.upto
                GROUP BY 2""",
            "offer": f"""
                SELECT 'offer', {f('i', 'body', 'tool')}, i.agent,
                    CASE WHEN i.kind = 'offer' THEN 'made' WHEN i.kind = 'confirmation' THEN 'accepted'
                        WHEN {f('i', 'body', 'why')} IN ({expired}) THEN 'expired' ELSE 'declined' END,
                    count(*), 0, 0, 0
                FROM w JOIN items AS i ON i.session_id = w.id AND i.kind IN ('offer', 'confirmation', 'decline')
                    AND i.kind <> 'message'
                WHERE {_in_window('i')} AND i.seq > w.upto
                GROUP BY 2, 3, 4""",
            "usage": f"""
                SELECT 'usage', i.agent, coalesce({f('i', 'meta', 'model')}, ''), '', count(*),
                    sum(coalesce({d.number('i', 'meta', 'usage.input_tokens')}, 0)),
                    sum(coalesce({d.number('i', 'meta', 'usage.output_tokens')}, 0)),
                    sum(CASE WHEN {d.is_false('i', 'meta', 'usage.reported')} THEN 1 ELSE 0 END)
                FROM w JOIN items AS i ON i.session_id = w.id
                WHERE {_in_window('i')} AND i.seq > w.upto AND i.meta IS NOT NULL AND {f('i', 'meta', 'usage')} IS NOT NULL
                GROUP BY 2, 3""",
        }




def window_params(since: datetime | None, until: datetime) -> dict[str, Any]:
    """The parameters of `FigureSql`: the window in microseconds, and its whole days and hours
    (`d1`..`d2`, `h1`..`h2`: the first whole one and the end; `h1d`, `h2d`: those days in hours)."""
    (_, day), (_, hour) = GRAINS
    since_us, until_us = micros(since or EPOCH), micros(until)
    d1, d2 = -(-since_us // day), until_us // day
    h1, h2 = -(-since_us // hour), until_us // hour
    per_day = day // hour
    return {
        "since": since or EPOCH,
        "until": until,
        "since_us": since_us,
        "until_us": until_us,
        "d1": d1,
        "d2": d2,
        "h1": h1,
        "h2": h2,
        "h1d": d1 * per_day,
        "h2d": d2 * per_day,
        "h1_us": h1 * hour,
        "h2_us": h2 * hour,
    }


Row = tuple[Any, ...]


# A duration's values are walked in order when the window holds at least this part of them.
WALK_SHARE = 3


def duration_counts(shares: list[Row]) -> dict[str, int]:
    """How many values each duration has in the window (to find its percentiles' ranks)."""
    counts = dict.fromkeys(DURATIONS, 0)
    for what, *_, n, _x, _y, _z in shares:
        if what in counts:
            counts[what] += int(n or 0)
    return counts


def assemble(since: datetime | None, until: datetime, shares: list[Row], ranks: dict[str, list[Any]]) -> DeskFigures:
    """The figures from the rows both adapters read: the roll-up's and the edge sessions' shares
    (what, a, b, c, n, x, y, z; summed here), and each duration's percentiles and largest."""
    summed: dict[tuple[str, str, str, str], list[int]] = {}
    for what, a, b, c, *values in shares:
        row = summed.setdefault((what, a or "", b or "", c or ""), [0, 0, 0, 0])
        for i, v in enumerate(values):
            row[i] += int(v or 0)
    taken: dict[str, int] = {}
    escalated: dict[str, int] = {}
    handoffs: list[HandoffEdge] = []
    notices: dict[str, int] = {}
    money: dict[str, list[int]] = {}
    durations: dict[str, list[int]] = {name: [0, 0] + [0] * (len(DURATION_EDGES) + 1) for name in DURATIONS}
    usage: list[UsageRow] = []
    offers: dict[tuple[str, str], dict[str, int]] = {}
    counts = {"conversations": 0, "started": 0, "unanswered": 0}
    for (what, a, b, c), (n, x, y, z) in sorted(summed.items()):
        if n == 0:
            continue  # every share counts at least one fact: a zero is a roll-up row emptied
        match what:
            case "conversations" | "started" | "unanswered":
                counts[what] += n
            case "taken":
                taken[a] = n
            case "escalated":
                escalated[a] = n
            case "handoff":
                handoffs.append(HandoffEdge(a, b, c, n))
            case "notice":
                notices[a] = n
            case "money":
                tool = money.setdefault(a, [0, 0] + [0] * (len(AMOUNT_EDGES) + 1))
                tool[0] += n
                tool[1] += x
                tool[2 + int(b)] += n
            case "first_answer" | "resolution":
                duration = durations[what]
                duration[0] += n
                duration[1] += x
                duration[2 + int(a)] += n
            case "usage":
                usage.append(UsageRow(a, b, x, y, z == 0))
            case "offer":
                offers.setdefault((a, b), {})[c] = n

    def distribution(name: str) -> Distribution:
        n, total, *buckets = durations[name]
        *percentiles, largest = ranks.get(name) or [None] * (len(PERCENTILES) + 1)
        return Distribution.from_row((n, total, largest, *percentiles, *buckets))

    return DeskFigures(
        since=since,
        until=until,
        conversations=counts["conversations"],
        started=counts["started"],
        taken=taken,
        escalated=escalated,
        handoffs=tuple(handoffs),
        first_answer=distribution("first_answer"),
        unanswered=counts["unanswered"],
        resolution=distribution("resolution"),
        money={
            tool: MoneyFigures(count=v[0], total=round(v[1] / MONEY_SCALE, 2), buckets=tuple(v[2:]))
            for tool, v in sorted(money.items())
        },
        notices=notices,
        usage=tuple(usage),
        offers=tuple(OfferRow(tool, agent, **{k: v for k, v in outcomes.items() if k in _OFFER_OUTCOMES})
                     for (tool, agent), outcomes in sorted(offers.items())),
    )


_OFFER_OUTCOMES = ("made", "accepted", "declined", "expired")


