"""The dashboard: pictures of the desk over a time range (today, 7 days, 30 days, all).

The figures come from `supportdesk.reports.stats` (one place for the command and this screen). The
charts are text bar charts (`tui/widgets/bars.py`): a row per agent or bucket, the number beside
every bar, series named in a header row; no numeric axis to mis-space, no legend over a bar, no
bar wrapped onto a line of its own. The handoff flow is drawn with box characters. Agent names
come from the log, so they are data: made inert (`safe_text`) and put on screen as `Text`,
never markup.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Vertical, VerticalScroll
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Static

from supportdesk.items import utcnow
from supportdesk.reports.stats import RANGE_TITLES, RANGES, DeskStats, RangeName, amount_labels, desk_stats, duration_labels, money_tools
from supportdesk.engine.log import StoreError
from supportdesk.text import one_line, safe_text
from supportdesk.tui.widgets.bars import BarChart, Drawing, Series
from supportdesk.tui.widgets.footer import DeskFooter

if TYPE_CHECKING:
    from supportdesk.config import DeskConfig
    from supportdesk.engine.log import Store
    from supportdesk.folds.sla import SlaFigures
    from supportdesk.engine.log import Distribution, OfferRow


def _name(text: str, width: int = 14) -> str:
    return one_line(safe_text(text), width)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    if seconds < 60:
        return f"{seconds:.1f}s" if seconds < 10 else f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds / 60:.1f}m"
    if seconds < 86400:
        return f"{seconds / 3600:.1f}h"
    return f"{seconds / 86400:.1f}d"


def _count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def _bar(count: int, largest: int, width: int) -> str:
    if count <= 0 or largest <= 0:
        return ""
    return "█" * max(1, round(width * count / largest))


def _mark(handoff_kind: str) -> str:
    """The flow's mark for a kind of handoff (a kind the log holds that this desk does not know
    is drawn plain: the figures are data)."""
    match handoff_kind:
        case "escalate":
            return "⇡"
        case "return":
            return "↩"
        case "manual":
            return "✋"
        case _:
            return " "


def flow_lines(stats: DeskStats, width: int = 60) -> Text:
    """The handoff flow as box-drawn lines: for each agent handing off (entry agent first), a
    branch per target with its count, kind and a bar. Escalations are marked ⇡, returns ↩."""
    edges = stats.figures.handoffs
    if not edges:
        return Text("No handoffs in this range.", style="dim")
    order = [row.agent for row in stats.agents]
    sources = sorted({e.from_agent for e in edges}, key=lambda a: (order.index(a) if a in order else len(order), a))
    largest = max(e.count for e in edges)
    name_width = min(12, max(len(_name(e.from_agent)) for e in edges))
    target_width = min(12, max(len(_name(e.to_agent)) for e in edges))
    bar_width = max(1, width - name_width - target_width - 20)
    out = Text()
    for source in sources:
        branches = sorted((e for e in edges if e.from_agent == source), key=lambda e: (-e.count, e.to_agent, e.handoff_kind))
        for i, edge in enumerate(branches):
            head = _name(source, name_width).ljust(name_width) if i == 0 else " " * name_width
            if len(branches) == 1:
                joint = "───▶"
            elif i == 0:
                joint = "─┬─▶"
            else:
                joint = " └─▶" if i == len(branches) - 1 else " ├─▶"
            out.append(head, style="bold" if i == 0 else "")
            out.append(f" {joint} ", style="dim")
            out.append(_name(edge.to_agent, target_width).ljust(target_width))
            out.append(f" {_mark(edge.handoff_kind)} {edge.count:>5} ")
            out.append(_bar(edge.count, largest, bar_width), style="yellow" if edge.handoff_kind == "escalate" else "cyan")
            out.append("\n")
    out.append("⇡ escalate  ↩ return  ✋ staff", style="dim")
    return out


OFFER_COLUMNS = ("made", "accepted", "declined", "expired")


SLA_NAMES = (("first_response", "first response"), ("next_response", "next response"), ("resolution", "resolution"))


def packed(head: str, parts: Sequence[str], width: int, style: str = "") -> Text:
    """`head` then `parts` joined by " · ", each part whole on a line of at most `width` cells:
    a line that would run over breaks between parts and goes on indented (a narrow panel wrapped
    "staff called for: approval 1 · human requested 1 ·" with the rest at the left edge)."""
    out, line = Text(), head
    for n, part in enumerate(parts):
        joined = f"{line}{' · ' if n else ''}{part}"
        if n and len(joined) > width:
            out.append(line + "\n", style=style)
            line = "  " + part
        else:
            line = joined
    out.append(line + "\n", style=style)
    return out


def sla_lines(sla: SlaFigures, width: int = 60) -> Text:
    """The service-levels panel for its width: every line fits, a list breaks between its items."""
    width = max(width, 30)
    out = Text()
    labels = dict(SLA_NAMES)
    breached = sla.breached_conversations
    head = f"{breached} of {_count(sla.conversations, 'conversation')} breached"
    kinds = [f"{labels.get(key, key)} {n}" for key, n in sla.breaches.items() if n]
    if breached and kinds:
        out.append_text(packed(head + ": ", kinds, width, "bold red"))
    else:
        out.append(head + "\n", style="bold red" if breached else "")
    rate = f" ({sla.containment:.0%})" if sla.containment is not None else ""
    out.append(f"agents settled {sla.contained}{rate} alone · {_count(sla.takeovers, 'take-over')}\n")
    largest = max([*sla.waits.values(), 1.0])
    spent_on = {"ai": "agents working", "staff": "waiting on staff", "customer": "on the customer"}
    bar = max(4, min(18, width - 25))
    for on, seconds in sla.waits.items():
        out.append(f"{spent_on.get(on, on):<17}{_duration(seconds):>7} ")
        out.append(_bar(round(seconds), round(largest), bar) + "\n", style="yellow" if on == "staff" else "cyan")
    for title, reasons in (("staff called for: ", sla.needs_staff_reasons), ("taken over for: ", sla.takeover_reasons)):
        if reasons:
            out.append_text(packed(title, [f"{_reason(reason)} {n}" for reason, n in reasons.items()], width, "dim"))
    out.rstrip()
    return out


def _reason(reason: str) -> str:
    """A reason as people read it: a notice kind's words (`human_requested`: "human requested")."""
    return _name(reason.replace("_", " ") if reason.isidentifier() else reason, 18)


def offer_lines(offers: Sequence[OfferRow], width: int = 60) -> Text:
    """A row per tool and agent with its offers made, accepted, declined and expired (withdrawn
    by staff counts as expired), under a header naming each column. Where the names do not fit,
    the tool's name is cut, never the agent's or a number."""
    if not offers:
        return Text("No offers in this range.", style="dim")
    columns = [max(len(key), 4) for key in OFFER_COLUMNS]
    numbers = " ".join(f"{key:>{w}}" for key, w in zip(OFFER_COLUMNS, columns))
    name_width = max(8, width - len(numbers) - 1)
    out = Text(no_wrap=True, overflow="crop")
    out.append(f"{'tool · agent':<{name_width}} {numbers}\n", style="bold")
    for n, row in enumerate(offers):
        agent = _name(row.agent, 12)
        name = f"{_name(row.tool, max(1, name_width - len(agent) - 3))} · {agent}"
        out.append(f"{name:<{name_width}} ")
        out.append(" ".join(f"{getattr(row, key):>{w},}" for key, w in zip(OFFER_COLUMNS, columns)))
        if n < len(offers) - 1:
            out.append("\n")
    return out


class Panel(Vertical):
    """One picture with its title on the border and a one-line summary under the title."""

    def __init__(self, title: str, body: Any, *, id: str) -> None:
        super().__init__(id=id, classes="panel")
        self.border_title = title
        self.body = body

    def compose(self) -> ComposeResult:
        yield Static("", classes="summary", markup=False)
        yield self.body

    def summarise(self, text: str) -> None:
        self.query_one(".summary", Static).update(Text(safe_text(text)))


class DashboardScreen(Screen[None]):
    CSS_PATH = "dashboard.tcss"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    BINDINGS = [
        Binding("escape,q", "close", "Close"),
        Binding("d", "show_range('today')", "Today"),
        Binding("w", "show_range('7d')", "7 days"),
        Binding("m", "show_range('30d')", "30 days"),
        Binding("a", "show_range('all')", "All"),
        Binding("r", "reload", "Reload"),
    ]

    # The range on screen once its figures are drawn (tests wait on it); None while loading.
    shown: var[RangeName | None] = var(None)

    def __init__(
        self,
        store: Store,
        config: DeskConfig | None,
        range_name: RangeName = "7d",
        *,
        clock: Callable[[], datetime] = utcnow,
        tz: tzinfo | None = None,
    ) -> None:
        super().__init__()
        self.store = store
        self.config = config
        self.range_name: RangeName = range_name
        self.clock = clock
        self.tz = tz
        self.stats: DeskStats | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="ranges", markup=False)
        yield Static("Loading the figures…", id="headline", markup=False)
        with VerticalScroll(id="board"):
            with Grid(id="panels"):
                yield Panel("Conversations per agent", BarChart(id="agents-plot"), id="agents")
                yield Panel("Handoff flow", Drawing(id="flow"), id="flow-panel")
                yield Panel("Escalation rate per specialist", BarChart(id="escalation-plot"), id="escalation")
                yield Panel("Time to first answer", BarChart(id="first-plot"), id="first-answer")
                yield Panel("Time to resolution", BarChart(id="resolution-plot"), id="resolution")
                yield Panel("Refunds and credits by amount", BarChart(id="money-plot"), id="money")
                yield Panel("Offers to customers and their answers", Drawing(id="offers"), id="offers-panel")
                yield Panel("Provider errors, limits and staff calls", Static("", id="notices", markup=False), id="notices-panel")
                yield Panel("Tokens and cost", Static("", id="tokens", markup=False), id="tokens-panel")
                yield Panel("Service levels", Drawing(id="sla"), id="sla-panel")
        yield DeskFooter()

    def on_mount(self) -> None:
        self.load()

    def action_show_range(self, name: str) -> None:
        for known in RANGES:
            if known == name and known != self.range_name:
                self.range_name = known
                self.load()

    def _draw_ranges(self) -> None:
        """The ranges with their keys, the one shown marked (a plain line: nothing animates).
        Where the whole line does not fit (60 columns), the ranges go by their short names, so
        no key's name is cut ("a all t…")."""
        keys = {"today": "d", "7d": "w", "30d": "m", "all": "a"}
        short = {"today": "today", "7d": "7 days", "30d": "30 days", "all": "all"}
        ranges = self.query_one("#ranges", Static)
        room = ranges.content_size.width or self.app.size.width
        for prefix, titles in ((" Range: ", RANGE_TITLES), (" ", short)):
            line = Text(prefix)
            for n, name in enumerate(RANGES):
                line.append(" " if n else "")
                line.append(f" {keys[name]} {titles[name]} ", style="reverse bold" if name == self.range_name else "")
            if line.cell_len <= room:
                break
        ranges.update(line)

    def on_resize(self) -> None:
        self.call_after_refresh(self._draw_ranges)

    def action_reload(self) -> None:
        self.load()

    def action_close(self) -> None:
        self.dismiss(None)

    @work(exclusive=True, group="dashboard-load")
    async def load(self) -> None:
        self.shown = None
        range_name = self.range_name
        self._draw_ranges()
        try:
            stats = await desk_stats(self.store, self.config, range_name, self.clock(), self.tz)
        except StoreError as exc:
            self.query_one("#headline", Static).update(Text(safe_text(str(exc)), style="bold red"))
            return
        self.stats = stats
        self._draw(stats)
        self.shown = range_name

    # --- drawing -----------------------------------------------------------------------------

    def _draw(self, stats: DeskStats) -> None:
        figures = stats.figures
        span = RANGE_TITLES[stats.range_name]
        self.query_one("#headline", Static).update(
            Text(
                safe_text(
                    f"{span}: {_count(figures.conversations, 'conversation')} active, {figures.started:,} started · "
                    f"{_count(sum(e.count for e in figures.handoffs), 'handoff')} · "
                    f"{_count(sum(m.count for m in figures.money.values()), 'refund/credit', 'refunds/credits')}"
                )
            )
        )
        self._draw_agents(stats)
        self.query_one("#flow", Drawing).show(lambda width: flow_lines(stats, width))
        kinds = {kind: sum(e.count for e in figures.handoffs if e.handoff_kind == kind) for kind in ("escalate", "return")}
        self.query_one("#flow-panel", Panel).summarise(
            f"{_count(sum(e.count for e in figures.handoffs), 'handoff')} · {_count(kinds['escalate'], 'escalation')}"
            f" · {_count(kinds['return'], 'return')}"
        )
        self._draw_escalation(stats)
        self._draw_distribution("first-answer", "#first-plot", figures.first_answer, "answered", f"{figures.unanswered} unanswered")
        self._draw_distribution("resolution", "#resolution-plot", figures.resolution, "resolved", "")
        self._draw_money(stats)
        self._draw_offers(stats)
        self._draw_notices(stats)
        self._draw_tokens(stats)
        self._draw_sla(stats)

    def _draw_agents(self, stats: DeskStats) -> None:
        rows = [row for row in stats.agents if row.conversations]
        self.query_one("#agents-plot", BarChart).show(
            [_name(r.title) for r in rows],
            [Series("conversations", [r.conversations for r in rows], [str(r.conversations) for r in rows])],
            empty="No conversations in this range.",
        )
        self.query_one("#agents", Panel).summarise(
            f"conversations each of {_count(len(rows), 'agent')} took part in"
            if rows
            else "no conversations in this range"
        )

    def _draw_escalation(self, stats: DeskStats) -> None:
        rows = [row for row in stats.agents if row.specialist and row.conversations]
        self.query_one("#escalation-plot", BarChart).show(
            [_name(r.title) for r in rows],
            [
                Series(
                    "escalated",
                    [100 * (r.escalation_rate or 0.0) for r in rows],
                    [f"{100 * (r.escalation_rate or 0.0):.0f}% · {r.escalated} of {r.conversations}" for r in rows],
                )
            ],
            largest=100,
            empty="No specialist took a conversation in this range.",
        )
        self.query_one("#escalation", Panel).summarise(
            "conversations escalated; a full bar is 100%" if rows else "no specialist took a conversation"
        )

    def _draw_distribution(self, panel_id: str, plot_id: str, dist: Distribution, noun: str, extra: str) -> None:
        self.query_one(plot_id, BarChart).show(
            duration_labels() if dist.count else [],
            [Series(noun, list(dist.buckets), [str(n) for n in dist.buckets])],
            empty="None in this range.",
        )
        summary = (
            f"{dist.count} {noun} · p50 {_duration(dist.percentiles.get(50))} · p90 {_duration(dist.percentiles.get(90))}"
            f" · mean {_duration(dist.mean)} · max {_duration(dist.largest)}"
            if dist.count
            else f"none {noun} in this range"
        )
        self.query_one(f"#{panel_id}", Panel).summarise(f"{summary}{' · ' + extra if extra else ''}")

    def _draw_money(self, stats: DeskStats) -> None:
        money = stats.figures.money
        named = money_tools(money)  # (the figures' order and words for the tools: stats.money_tools)
        tools = [tool for tool, _ in named]
        names = {tool: label or _name(tool) for tool, label in named}

        def noun(tool: str, n: int) -> str:
            many = names[tool]
            return many.removesuffix("s") if n == 1 else many

        self.query_one("#money-plot", BarChart).show(
            amount_labels() if tools else [],
            [Series(noun(t, 2), list(money[t].buckets), [str(n) for n in money[t].buckets]) for t in tools],
            empty="No refunds or credits in this range.",
        )
        self.query_one("#money", Panel).summarise(
            " · ".join(f"{money[t].count} {noun(t, money[t].count)} totalling {money[t].total:,.2f}" for t in tools)
            or "no refunds or credits in this range"
        )

    def _draw_offers(self, stats: DeskStats) -> None:
        """Issue 33: what became of the offers each agent made of each tool (a consequential
        call waits for the customer's yes): made, accepted, declined, expired or withdrawn."""
        offers = stats.figures.offers
        totals = {key: sum(getattr(o, key) for o in offers) for key in OFFER_COLUMNS}
        self.query_one("#offers", Drawing).show(lambda width: offer_lines(offers, width))
        self.query_one("#offers-panel", Panel).summarise(
            " · ".join(f"{totals[key]} {key}" for key in OFFER_COLUMNS) if offers else "no offers in this range"
        )

    def _draw_notices(self, stats: DeskStats) -> None:
        notices = stats.figures.notices
        wanted = [
            ("provider_error", "provider errors"),
            ("limit", "limits hit"),
            ("human_requested", "human requested"),
            ("approval_requested", "approvals asked"),
            ("approval_granted", "approvals granted"),
            ("approval_denied", "approvals denied"),
        ]
        largest = max([notices.get(kind, 0) for kind, _ in wanted] + [1])
        out = Text()
        for kind, label in wanted:
            count = notices.get(kind, 0)
            style = "bold red" if kind in ("provider_error", "limit") and count else ""
            out.append(f"{label:<18}{count:>6} ", style=style)
            out.append(_bar(count, largest, 20) + "\n", style="red" if style else "cyan")
        self.query_one("#notices", Static).update(out)
        self.query_one("#notices-panel", Panel).summarise(
            f"{_count(notices.get('provider_error', 0), 'provider error')} · {_count(notices.get('limit', 0), 'limit')} hit"
        )

    def _draw_tokens(self, stats: DeskStats) -> None:
        out = Text()
        total_in = sum(r.input_tokens for r in stats.tokens)
        total_out = sum(r.output_tokens for r in stats.tokens)
        for row in stats.tokens:
            cost = f"{row.cost:>10.4f}" if row.cost is not None else f"{'unpriced':>10}"
            model = _name(row.model or "—", 12)
            out.append(f"{_name(row.agent, 10):<10} {model:<12} {row.input_tokens:>9,} in {row.output_tokens:>8,} out {cost}\n")
        if not stats.tokens:
            out.append("No token usage recorded in this range.\n", style="dim")
        estimated = "" if all(r.reported for r in stats.tokens) else " (some estimated)"
        cost = f"cost {stats.cost:,.4f}" if stats.cost is not None else "no prices set ([model.prices])"
        self.query_one("#tokens", Static).update(out)
        self.query_one("#tokens-panel", Panel).summarise(f"{total_in:,} in · {total_out:,} out{estimated} · {cost}")

    def _draw_sla(self, stats: DeskStats) -> None:
        """Issue 19's SLA figures (`supportdesk/folds/sla.py`): breaches against `[desk.sla]`, what the
        agents settled alone, who the customers' waiting time was spent on, why staff were called."""
        sla = stats.sla
        panel = self.query_one("#sla-panel", Panel)
        drawing = self.query_one("#sla", Drawing)
        if sla is None or not sla.conversations:
            drawing.show(lambda width: Text("No conversation started in this range.", style="dim"))
            panel.summarise("nothing to measure")
            return
        targets = sla.targets
        set_targets = [f"{label} {_duration(getattr(targets, key))}" for key, label in SLA_NAMES if getattr(targets, key)]
        panel.summarise("targets: " + (" · ".join(set_targets) if set_targets else "none set ([desk.sla])"))
        drawing.show(lambda width: sla_lines(sla, width))
