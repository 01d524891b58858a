"""A tool declares its own limits, with its definition (issue 36): `Tool.limits` (config.ToolLimits),
overridden per tool by the desk file's `[tools.NAME]` (and, for the two shipped money tools, by the
older `[policy]` keys), and read through one function, `Tool.limits_on(desk)`: by the engine's
amount check (the per-call limit of the agent's level, the approval threshold), by the tools'
own policies (the totals, the reasons, the window) and by the models (`ToolSpec.limits`: the
offline model's "above my limit" passes a refund up a level).

Each limit is checked here through the desk file, so a check that stops reading the declaration
(or is removed) fails a test."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from pydantic import BaseModel

from supportdesk.business import open_business
from supportdesk.config import ConfigError, DeskConfig, ToolLimits, parse_desk
from supportdesk.engine.events import Appended
from supportdesk.engine.runner import drain
from supportdesk.engine.tools import Tool, ToolContext, ToolOutput
from supportdesk.items import Handoff, Message, Offer
from supportdesk.tools import registry
from supportdesk.wiring import open_desk
from tests.conftest import REPO, every_account_named

SHIPPED = (REPO / "agents.toml").read_text(encoding="utf-8")


def desk_with(extra: str) -> DeskConfig:
    """The shipped desk file with `extra` appended, checked against the shipped tools' declarations."""
    return parse_desk(SHIPPED + "\n" + extra, "agents.toml", tool_names=registry.declared_limits())


@pytest.fixture
async def business(tmp_path):
    opened = await open_business(str(tmp_path / "desk.db"))
    yield opened
    await opened.close()


async def call(desk: DeskConfig, business, tool: str, agent: str, session: str = "s1", key: str = "k1", **arguments) -> ToolOutput:
    ctx = ToolContext(
        session_id=session, call_id=key, agent=desk.agents[agent], desk=desk, context={},
        services=SimpleNamespace(customers=business),  # type: ignore[arg-type]
        idempotency_key=f"{session}/{key}", customer_words=every_account_named,
    )
    found = registry.get(tool)
    assert found is not None
    return await found.invoke(ctx, arguments)


def refund(amount: float, charge: str = "CH-9004") -> dict[str, object]:
    return {"charge_id": charge, "amount": amount, "reason": "duplicate charge"}


def credit(amount: float, customer: str = "CUS-1001") -> dict[str, object]:
    return {"customer_id": customer, "amount": amount, "reason": "outage"}


# --- the per-call limit of each level --------------------------------------------------------


async def test_the_per_call_limit_of_level_1_is_the_tool_s_and_the_desk_file_s(business):
    shipped = desk_with("")
    assert not (await call(shipped, business, "refund_charge", "billing", key="a", **refund(29.99))).is_error
    lowered = desk_with("[tools.refund_charge]\nlimit_level1 = 20.0\n")
    out = await call(lowered, business, "refund_charge", "billing", key="b", **refund(25.0, "CH-9008"))
    assert out.is_error and "a refund of $25.00 is above the $20.00 limit for level-1 agents" in out.output
    assert [r["amount"] for r in await business.refunds()] == [29.99]


async def test_the_per_call_limit_of_level_2_is_the_tool_s_and_the_desk_file_s(business):
    out = await call(desk_with(""), business, "issue_credit", "senior", key="a", **credit(2000.01))
    assert out.is_error and "a credit of $2,000.01 is above the $2,000.00 limit for level-2 agents" in out.output
    lowered = desk_with("[tools.issue_credit]\nlimit_level2 = 100.0\n")
    out = await call(lowered, business, "issue_credit", "senior", key="b", **credit(100.01))
    assert out.is_error and "above the $100.00 limit for level-2 agents" in out.output
    assert await business.credits("CUS-1001") == []


async def test_a_tool_s_own_table_sets_only_its_own_limits(business):
    """`[tools.refund_charge]` leaves `issue_credit` at its declared (or `[policy]`) values."""
    desk = desk_with("[tools.refund_charge]\nlimit_level2 = 10.0\n")
    refund_tool, credit_tool = registry.get("refund_charge"), registry.get("issue_credit")
    assert refund_tool is not None and credit_tool is not None
    assert refund_tool.limits_on(desk).per_call(2) == 10.0 and credit_tool.limits_on(desk).per_call(2) == 2000.0
    assert not (await call(desk, business, "issue_credit", "senior", **credit(20.0))).is_error


# --- the approval threshold --------------------------------------------------------------------


async def test_the_approval_threshold_holds_a_call_for_staff(business):
    desk = desk_with("[tools.issue_credit]\napproval_threshold = 15.0\n")
    held = await call(desk, business, "issue_credit", "senior", key="a", **credit(15.0))
    assert not held.is_error and held.approval_reason == "a credit of $15.00 is at or above the $15.00 approval threshold"
    under = await call(desk, business, "issue_credit", "senior", key="b", **credit(14.99))
    assert under.approval_reason is None and not under.is_error
    assert [c["amount"] for c in await business.credits("CUS-1001")] == [14.99]


async def test_the_older_policy_table_still_sets_both_money_tools(business):
    desk = desk_with("")
    desk.policy.approval_threshold = 15.0  # as `[policy] approval_threshold = 15.0` says
    held = await call(desk, business, "refund_charge", "senior", key="a", **refund(20.0))
    assert held.approval_reason and "$15.00 approval threshold" in held.approval_reason
    # ... and `[tools.NAME]` wins over it for its tool
    desk.tools["refund_charge"] = ToolLimits(approval_threshold=100.0)
    assert (await call(desk, business, "refund_charge", "senior", key="b", **refund(20.0))).approval_reason is None


# --- the totals per conversation and per customer ------------------------------------------------


async def test_the_total_per_conversation_is_the_tool_s_limit_on_the_desk(business):
    desk = desk_with("[tools.issue_credit]\nlimit_per_conversation = 25.0\n")
    assert (await call(desk, business, "issue_credit", "senior", key="a", **credit(20.0))).approval_reason is None
    held = await call(desk, business, "issue_credit", "senior", key="b", **credit(10.0))
    assert held.approval_reason and "above the $25.00 a conversation may move without staff" in held.output
    # another conversation starts from nothing
    assert (await call(desk, business, "issue_credit", "senior", session="s2", key="c", **credit(10.0))).approval_reason is None


async def test_the_total_per_customer_is_the_tool_s_limit_on_the_desk(business):
    desk = desk_with("[tools.issue_credit]\nlimit_per_customer = 25.0\nperiod_days = 7\n")
    assert (await call(desk, business, "issue_credit", "senior", session="s1", key="a", **credit(20.0))).approval_reason is None
    held = await call(desk, business, "issue_credit", "senior", session="s2", key="b", **credit(10.0))
    assert held.approval_reason and "in the last 7 days would come to $30.00, above the $25.00" in held.output
    assert [c["amount"] for c in await business.credits("CUS-1001")] == [20.0]


# --- the models read the same limits -------------------------------------------------------------


def test_a_model_is_told_each_tool_s_limits_on_this_desk():
    desk = desk_with("[tools.refund_charge]\nlimit_level1 = 200.0\n")
    specs = {s.name: s for s in registry.specs(desk.agents["billing"].tools, desk)}
    assert specs["refund_charge"].limits.per_call(1) == 200.0
    assert specs["find_charges"].limits == ToolLimits()
    assert len(set(specs.values())) == len(specs)  # a spec stays hashable with its limits


async def test_the_offline_model_s_own_limit_is_the_tool_s_on_the_desk(tmp_path: Path):
    """Marco's duplicate $129.99 is above billing's shipped $50.00 limit: billing passes it to
    senior. With `[tools.refund_charge] limit_level1 = 200.0` billing offers it itself."""

    async def first_turn(path: Path) -> list:
        desk = await open_desk(tmp_path / f"{path.stem}.db", path)
        async with desk:
            return [e.item for e in await drain(desk.runner.send(None, "I think you took my money twice this month. marco@example.com")) if isinstance(e, Appended)]

    shipped, raised = tmp_path / "shipped.toml", tmp_path / "raised.toml"
    shipped.write_text(SHIPPED, encoding="utf-8")
    raised.write_text(SHIPPED + "\n[tools.refund_charge]\nlimit_level1 = 200.0\n", encoding="utf-8")
    passed_up, kept = await first_turn(shipped), await first_turn(raised)
    assert [(h.from_agent, h.to_agent) for h in passed_up if isinstance(h, Handoff) and h.handoff_kind == "escalate"] == [("billing", "senior")]
    assert [h for h in kept if isinstance(h, Handoff) and h.handoff_kind == "escalate"] == []
    [offer] = [i for i in kept if isinstance(i, Offer)]
    assert (offer.tool, offer.arguments["amount"], offer.agent) == ("refund_charge", 129.99, "billing")
    assert any(isinstance(i, Message) and i.agent == "billing" and "$129.99" in i.text for i in kept)


# --- the declaration and the desk file are checked -----------------------------------------------


class Amount(BaseModel):
    amount: float


class Percent(BaseModel):
    percent: float


def test_a_tool_that_limits_amounts_moves_money_and_a_customer_total_has_its_period():
    Tool("gift", "Gift", Amount, lambda ctx, args: None, effect="money", limits=ToolLimits(limit_level1=20.0))
    with pytest.raises(ValueError, match="limits amounts \\(limit_level1\\): declare it effect=\"money\""):
        Tool("discount", "Discount", Percent, lambda ctx, args: None, effect="account", limits=ToolLimits(limit_level1=20.0))
    with pytest.raises(ValueError, match="declare the period_days it counts over"):
        Tool("gift", "Gift", Amount, lambda ctx, args: None, effect="money", limits=ToolLimits(limit_per_customer=20.0))


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        (
            "[tools.refund_charge]\nlimit = 20.0\n",
            "agents.toml: tools.refund_charge.limit: unknown key; valid keys here: limit_level1, limit_level2, "
            "approval_threshold, limit_per_conversation, limit_per_customer, period_days, reasons, window_days",
        ),
        (
            "[tools.issue_credit]\nwindow_days = 30\n",
            "agents.toml: tools.issue_credit.window_days: issue_credit declares no window_days; the limits it declares: "
            "limit_level1, limit_level2, approval_threshold, limit_per_conversation, limit_per_customer, period_days",
        ),
        ("[tools.refund_charge]\napproval_threshold = -1\n", "agents.toml: tools.refund_charge.approval_threshold: must be greater than or equal to 0 (got -1)"),
        ("[tools.search_kb]\nlimit_level1 = 5.0\n", "agents.toml: tools.search_kb.limit_level1: search_kb declares no limit_level1; the limits it declares: none"),
    ],
)
def test_a_wrong_tool_table_is_one_line(extra: str, problem: str):
    with pytest.raises(ConfigError) as exc:
        desk_with(extra)
    assert exc.value.problems == [problem]


def test_a_table_for_a_tool_nobody_registered_is_one_line():
    with pytest.raises(ConfigError) as exc:
        desk_with("[tools.refund]\nlimit_level1 = 5.0\n")
    [problem] = exc.value.problems
    assert problem.startswith("agents.toml: tools.refund: no tool named 'refund'; valid tools: cancel_subscription, ")


def test_config_check_shows_each_held_tool_s_limits_on_the_desk(tmp_path: Path, capsys):
    from supportdesk.cli import main

    path = tmp_path / "agents.toml"
    path.write_text(SHIPPED + "\n[tools.issue_credit]\napproval_threshold = 100.0\n", encoding="utf-8")
    assert main(["config", "check", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "  issue_credit: level 1 up to $50.00, level 2+ up to $2,000.00, staff approve from $100.00, " \
        "$500.00 a conversation, $1,000.00 a customer in 30 days" in lines
    [refunds] = [line for line in lines if line.startswith("  refund_charge: ")]
    assert "staff approve from $250.00" in refunds and "reasons: duplicate charge;" in refunds and "window 90 days" in refunds


def test_money_tools_is_one_name_with_one_meaning():
    """Issue 36 item 1: `MONEY_TOOLS` is the figures' copy of the tools that move money
    (store/figures.py); the offline model's own list (the tools its money skill drives) has a
    name of its own, and no second module defines a `MONEY_TOOLS`."""
    import ast

    defined = []
    for path in sorted((REPO / "supportdesk").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
            defined += [str(path.relative_to(REPO)) for t in targets if isinstance(t, ast.Name) and t.id == "MONEY_TOOLS"]
    assert defined == ["supportdesk/store/figures.py"]


async def test_the_tui_s_deferred_desk_checks_its_tool_tables_when_the_tools_are_built(tmp_path: Path):
    """The TUI loads the desk file before the tools exist (`open_desk(deferred=True)`): a limit
    a tool does not declare is the same one line once the registry is built."""
    path = tmp_path / "agents.toml"
    path.write_text(SHIPPED + "\n[tools.issue_credit]\nwindow_days = 30\n", encoding="utf-8")
    desk = await open_desk(tmp_path / "desk.db", path, deferred=True)
    try:
        with pytest.raises(ConfigError) as exc:
            desk.runner.warm()
    finally:
        await desk.close()
    assert exc.value.problems == [
        f"{path}: tools.issue_credit.window_days: issue_credit declares no window_days; the limits it declares: "
        "limit_level1, limit_level2, approval_threshold, limit_per_conversation, limit_per_customer, period_days"
    ]
