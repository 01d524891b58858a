"""The desk's figures over a time window: what `Store.desk_figures` returns, and the parts of its
SQL both adapters share (bucket edges, the percentile rank, the money tools).

The figures are aggregates computed by the database, so a dashboard over 100,000 sessions reads
a few dozen rows, never the items. What each figure counts (the definitions a plain-Python fold
of the log reproduces in `tests/test_stats.py`):

- the window is `since <= created_at < until` of the items (`since` None: from the beginning);
- `conversations`: sessions with at least one item in the window; `started`: sessions created in it;
- `taken[agent]`: sessions the agent took in the window: started there with it as the entry agent,
  or handed to it by a handoff in the window (each session once per agent);
- `escalated[agent]`: sessions in which the agent made an `escalate` handoff in the window;
- `handoffs`: handoff items in the window by (from, to, handoff kind);
- `first_answer`: for each session whose first customer message is in the window, the seconds
  from it to the first agent message after it (`unanswered` when there is none yet);
- `resolution`: for each session nobody is waiting on (status not awaiting approval or needing a
  human) whose last message is an agent's and in the window, the seconds from its first customer
  message to that last answer;
- `money[tool]`: refunds and credits made in the window: successful results of `refund_charge`
  and `issue_credit` (not errors, not the "waiting for staff approval" placeholder), each at the
  amount its call asked for (the latest call with that call id before the result);
- `notices[kind]`: notice items in the window by kind (provider errors, limits, approvals ...);
- `usage`: the token usage recorded in the meta of items in the window, by (agent, model).

Durations are whole milliseconds (truncated), reported in seconds; percentiles are nearest-rank.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

# Seconds: under 10 s, 30 s, 1 min, 5 min, 15 min, 1 h, 4 h, 1 day, and a day or more.
DURATION_EDGES: tuple[float, ...] = (10, 30, 60, 300, 900, 3600, 4 * 3600, 86400)
# The same in milliseconds: durations are measured in whole milliseconds (integers on both
# databases, so every figure is exact and the same on both).
DURATION_EDGES_MS: tuple[int, ...] = tuple(int(edge * 1000) for edge in DURATION_EDGES)
# Money, in the charge's currency: under 10, 25, 50, 100, 250, 500, and 500 or more.
AMOUNT_EDGES: tuple[float, ...] = (10, 25, 50, 100, 250, 500)
# The tools that move money to the customer (their calls carry `amount`).
MONEY_TOOLS: tuple[str, ...] = ("refund_charge", "issue_credit")
# Statuses in which the desk is waiting on someone: such a conversation is not resolved.
WAITING_STATUSES: tuple[str, ...] = ("awaiting_approval", "needs_human")
# The beginning of time for a window without a start (both adapters compare timestamps).
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
PERCENTILES: tuple[int, ...] = (50, 90)


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
    count: int = 0
    total: float = 0.0
    buckets: tuple[int, ...] = (0,) * (len(AMOUNT_EDGES) + 1)


@dataclass(frozen=True)
class UsageRow:
    agent: str
    model: str  # the model the item's meta names ("" when the item did not say)
    input_tokens: int
    output_tokens: int
    reported: bool  # False once any count in the sum was an estimate


@dataclass(frozen=True)
class HandoffEdge:
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
