"""The desk's figures over a time range, assembled in one place for `supportdesk stats` (text and
`--json`) and the TUI's dashboard screen. No Textual, no SQL: the store computes the aggregates
(`Store.desk_figures`, defined in `store/figures.py`); this module picks the window, prices the
tokens (`engine/pricing.py`) and derives the rates.

A new section (issue 19's SLA figures, say) is one field on `DeskStats`, filled in `desk_stats`
and written in `stats_json`: the command and the dashboard read only those.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal, assert_never, get_args

from supportdesk.folds.sla import figures_json
from supportdesk.store.figures import AMOUNT_EDGES, DURATION_EDGES, MONEY_TOOLS, DeskFigures, Distribution

if TYPE_CHECKING:
    from supportdesk.config import DeskConfig
    from supportdesk.folds.sla import SlaFigures
    from supportdesk.store import Store

RangeName = Literal["today", "7d", "30d", "all"]
RANGES: tuple[RangeName, ...] = get_args(RangeName)
RANGE_TITLES: dict[RangeName, str] = {"today": "today", "7d": "last 7 days", "30d": "last 30 days", "all": "all time"}


class StatsError(Exception):
    """A range or option that cannot be used; the message is one line for the user."""


def parse_range(text: str) -> RangeName:
    for name in RANGES:
        if text == name:
            return name
    raise StatsError(f"unknown range {text!r}: use one of {', '.join(RANGES)}")


def window(range_name: RangeName, now: datetime, tz: tzinfo | None = None) -> tuple[datetime | None, datetime]:
    """(since, until) of a range ending now; `today` starts at midnight in `tz` (default: local)."""
    match range_name:
        case "today":
            local = now.astimezone(tz)
            return local.replace(hour=0, minute=0, second=0, microsecond=0), now
        case "7d":
            return now - timedelta(days=7), now
        case "30d":
            return now - timedelta(days=30), now
        case "all":
            return None, now
        case _:
            assert_never(range_name)


def duration_labels() -> list[str]:
    """Bucket names of `DURATION_EDGES` by their upper edge ("<10s", "<30s", ..., "≥1d"): short,
    so a chart's labels never overlap."""

    def short(seconds: float) -> str:
        if seconds < 60:
            return f"{seconds:g}s"
        if seconds < 3600:
            return f"{seconds / 60:g}m"
        if seconds < 86400:
            return f"{seconds / 3600:g}h"
        return f"{seconds / 86400:g}d"

    return _labels(DURATION_EDGES, short)


def money_tools(money: Iterable[str]) -> list[tuple[str, str | None]]:
    """The money tools among `money` (the figures' tools), each with what the figures call its
    calls: the declared ones first in their order, then any other by name with None (a log may
    hold a tool this desk no longer has: its name is untrusted text to the reader)."""
    present = set(money)
    known: list[tuple[str, str | None]] = [(tool, label) for tool, label in MONEY_TOOLS.items() if tool in present]
    return known + [(tool, None) for tool in sorted(present - set(MONEY_TOOLS))]


def amount_labels() -> list[str]:
    return _labels(AMOUNT_EDGES, lambda amount: f"{amount:g}")


def _labels(edges: tuple[float, ...], name: Any) -> list[str]:
    return [f"<{name(edge)}" for edge in edges] + [f"≥{name(edges[-1])}"]


def _buckets_json(edges: tuple[float, ...], labels: list[str], counts: tuple[int, ...]) -> list[dict[str, Any]]:
    """Each bucket with its bounds (`from` inclusive, `to` exclusive; None: unbounded)."""
    bounds = list(zip((None, *edges), (*edges, None)))
    return [{"label": label, "from": low, "to": high, "count": n} for label, (low, high), n in zip(labels, bounds, counts)]


@dataclass(frozen=True)
class AgentRow:
    agent: str
    title: str
    conversations: int  # conversations the agent took in the range
    escalated: int  # of which it escalated (an `escalate` handoff)
    # A specialist: not the entry agent, and some agent it hands to is of a higher level.
    specialist: bool

    @property
    def escalation_rate(self) -> float | None:
        return self.escalated / self.conversations if self.conversations else None


@dataclass(frozen=True)
class TokenRow:
    agent: str
    model: str
    input_tokens: int
    output_tokens: int
    reported: bool
    cost: float | None  # None: the model has no price in [model.prices]


@dataclass(frozen=True)
class DeskStats:
    range_name: RangeName
    figures: DeskFigures
    agents: tuple[AgentRow, ...]
    tokens: tuple[TokenRow, ...]
    # Issue 19's SLA figures: waits split AI / staff / customer, breaches, AI containment,
    # take-over and needs-staff reasons (None when not asked for).
    sla: SlaFigures | None = None

    @property
    def cost(self) -> float | None:
        priced = [row.cost for row in self.tokens if row.cost is not None]
        return round(sum(priced), 6) if priced else None


async def desk_stats(
    store: Store, config: DeskConfig | None, range_name: RangeName, now: datetime, tz: tzinfo | None = None
) -> DeskStats:
    since, until = window(range_name, now, tz)
    figures = await store.desk_figures(since, until)
    sla = await sla_figures(store, config, since, until, now)
    return DeskStats(range_name, figures, _agents(figures, config), _tokens(figures, config), sla)


async def sla_figures(
    store: Store, config: DeskConfig | None, since: datetime | None, until: datetime, now: datetime
) -> SlaFigures:
    """The SLA figures (`supportdesk/folds/sla.py`) over every conversation started in the window, as of
    `now`: each conversation's clocks as the store keeps them with the appends, read at `now`."""
    from supportdesk.config import SlaSettings
    from supportdesk.folds.sla import figures, finish

    targets = config.desk.sla if config is not None else SlaSettings()
    clocks = [finish(progress, state, targets, now) for state, progress in await store.sla_progress(since, until)]
    return figures(clocks, targets)


def _agents(figures: DeskFigures, config: DeskConfig | None) -> tuple[AgentRow, ...]:
    known = list(config.agents) if config is not None else []
    names = known + sorted((set(figures.taken) | set(figures.escalated)) - set(known))
    rows = []
    for name in names:
        agent = config.agents.get(name) if config is not None else None
        rows.append(
            AgentRow(
                agent=name,
                title=agent.title if agent is not None else name,
                conversations=figures.taken.get(name, 0),
                escalated=figures.escalated.get(name, 0),
                specialist=_is_specialist(name, config),
            )
        )
    return tuple(rows)


def _is_specialist(name: str, config: DeskConfig | None) -> bool:
    if config is None:
        return True
    agent = config.agents.get(name)
    if agent is None or name == config.desk.entry:
        return False
    return any((target := config.agents.get(t)) is not None and target.level > agent.level for t in agent.handoffs)


def _tokens(figures: DeskFigures, config: DeskConfig | None) -> tuple[TokenRow, ...]:
    rows = []
    for used in figures.usage:
        model = used.model or _agent_model(used.agent, config)
        price = config.model.prices.get(model) if config is not None else None
        cost = None
        if price is not None:
            cost = (used.input_tokens * price.input_per_million + used.output_tokens * price.output_per_million) / 1_000_000
        rows.append(TokenRow(used.agent, model, used.input_tokens, used.output_tokens, used.reported, cost))
    return tuple(rows)


def _agent_model(agent_name: str, config: DeskConfig | None) -> str:
    """The model an item without a model in its meta was made by: the agent's, else the desk's."""
    if config is None:
        return ""
    agent = config.agents.get(agent_name)
    return (agent.model if agent is not None else None) or config.model.model or ""


# --- JSON ---------------------------------------------------------------------------------------


def _distribution_json(dist: Distribution) -> dict[str, Any]:
    return {
        "count": dist.count,
        "mean_s": round(dist.mean, 3) if dist.mean is not None else None,
        **{f"p{p}_s": dist.percentiles.get(p) for p in (50, 90)},
        "max_s": dist.largest,
        "buckets": _buckets_json(DURATION_EDGES, duration_labels(), dist.buckets),
    }


def stats_json(stats: DeskStats) -> dict[str, Any]:
    """The figures as `supportdesk stats --json` prints them (and the dashboard shows them)."""
    figures = stats.figures
    return {
        "range": stats.range_name,
        "since": figures.since.isoformat() if figures.since else None,
        "until": figures.until.isoformat(),
        "conversations": figures.conversations,
        "started": figures.started,
        "agents": [
            {
                "agent": row.agent,
                "title": row.title,
                "conversations": row.conversations,
                "escalated": row.escalated,
                "escalation_rate": round(row.escalation_rate, 4) if row.escalation_rate is not None else None,
                "specialist": row.specialist,
            }
            for row in stats.agents
        ],
        "handoffs": [
            {"from": edge.from_agent, "to": edge.to_agent, "kind": edge.handoff_kind, "count": edge.count}
            for edge in figures.handoffs
        ],
        "first_answer": _distribution_json(figures.first_answer) | {"unanswered": figures.unanswered},
        "resolution": _distribution_json(figures.resolution),
        "money": {
            tool: {
                "count": made.count,
                "total": made.total,
                "buckets": _buckets_json(AMOUNT_EDGES, amount_labels(), made.buckets),
            }
            for tool, made in figures.money.items()
        },
        "notices": dict(figures.notices),
        # Issue 33: what became of each agent's offers of each tool (made, accepted, declined, expired).
        "offers": [
            {"tool": o.tool, "agent": o.agent, "made": o.made, "accepted": o.accepted, "declined": o.declined, "expired": o.expired}
            for o in figures.offers
        ],
        "sla": figures_json(stats.sla) if stats.sla is not None else None,
        "tokens": {
            "input": sum(row.input_tokens for row in stats.tokens),
            "output": sum(row.output_tokens for row in stats.tokens),
            "reported": all(row.reported for row in stats.tokens),
            "cost": stats.cost,
            "by_agent": [
                {
                    "agent": row.agent,
                    "model": row.model,
                    "input": row.input_tokens,
                    "output": row.output_tokens,
                    "reported": row.reported,
                    "cost": round(row.cost, 6) if row.cost is not None else None,
                }
                for row in stats.tokens
            ],
        },
    }
