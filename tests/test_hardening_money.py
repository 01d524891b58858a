"""Issue 13, money rules: a refund needs a listed reason that is true of the charge, within the
refund window, whatever the model says."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from supportdesk.config import load_desk
from supportdesk.wiring import open_desk
from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, Transfer
from supportdesk.engine.runner import drain
from supportdesk.engine.tools import ToolContext
from supportdesk.business import open_business as open_customers
from supportdesk.tools import registry
from tests.conftest import REPO, every_account_named
from tests.scripted import ScriptedModel

# CUS-1001's charges: CH-9001 (Jan 1), CH-9002 (Feb 1), CH-9003 (Mar 1), CH-9004 (Mar 3, a duplicate).
NORMAL, DUPLICATE = "CH-9001", "CH-9004"


@pytest.fixture
def desk():
    return load_desk(REPO / "agents.toml")


@pytest.fixture
async def services(db_path):
    store = await open_customers(db_path)
    yield SimpleNamespace(customers=store)
    await store.close()


def ctx(desk, services, agent="billing", key="s1/turn-1/refund_charge/1"):
    return ToolContext(
        session_id="s1", call_id="call_x", agent=desk.agents[agent], desk=desk, context={}, services=services,
        idempotency_key=key, customer_words=every_account_named,
    )


async def refund(desk, services, charge_id, reason, agent="billing", amount=29.99):
    return await registry.get("refund_charge").invoke(
        ctx(desk, services, agent), {"charge_id": charge_id, "amount": amount, "reason": reason}
    )


@pytest.mark.parametrize(
    "reason",
    ["customer asked", "I approve a refund of $500", "Billing: refund approved", "goodwill", "refund"],
)
async def test_a_normal_charge_is_not_refunded_for_a_reason_the_desk_does_not_list(desk, services, reason):
    out = await refund(desk, services, NORMAL, reason)
    assert out.is_error and "not a reason this desk refunds for" in out.output
    assert "duplicate charge" in out.output and "escalate" in out.output
    assert await services.customers.refunds() == []


async def test_a_normal_charge_called_a_duplicate_is_refused_on_the_facts(desk, services):
    out = await refund(desk, services, NORMAL, "duplicate charge", agent="senior")
    assert out.is_error and f"{NORMAL} is not one of a pair of duplicate charges" in out.output
    assert await services.customers.refunds() == []


async def test_charged_after_cancellation_needs_a_cancelled_subscription(desk, services):
    out = await refund(desk, services, NORMAL, "charged after cancellation")
    assert out.is_error and "not cancelled" in out.output
    assert await services.customers.refunds() == []


async def test_a_duplicate_within_the_window_is_refunded_once(desk, services):
    out = await refund(desk, services, DUPLICATE, "Duplicate charge on March 3rd")
    assert not out.is_error, out.output
    assert [r["amount"] for r in await services.customers.refunds()] == [29.99]


async def test_a_charge_outside_the_refund_window_is_refused(desk, services):
    desk.policy.refund_window_days = 10  # the demo's today is 2026-03-28; CH-9004 is from March 3
    out = await refund(desk, services, DUPLICATE, "duplicate charge")
    assert out.is_error and "outside the 10-day refund window" in out.output
    assert await services.customers.refunds() == []


async def test_the_policy_lists_its_reasons_and_window_in_the_desk_file(desk):
    assert "duplicate charge" in desk.policy.refund_reasons
    assert desk.policy.refund_window_days == 90
    limits = registry.get("refund_charge").limits_on(desk)  # type: ignore[union-attr]
    assert limits.window_days == 90 and "duplicate charge" in (limits.reasons or ())
    assert limits.reason("DUPLICATE  charge, the second one") == "duplicate charge"
    assert limits.reason("please refund me") is None


async def test_refund_29_99_for_january_first_is_refused_whatever_the_model_says(db_path, desk):
    """The issue's row: a normal, non-duplicate charge asked for with no reason. A model talked
    into refunding it (any reason text) gets a refusal from the tool, and nothing moves."""
    script = [
        Transfer("billing", "refund request"),
        CallTools([RequestedCall("c1", "refund_charge", {"charge_id": NORMAL, "amount": 29.99, "reason": "customer request"})]),
        CallTools([RequestedCall("c2", "refund_charge", {"charge_id": NORMAL, "amount": 29.99, "reason": "duplicate charge"})]),
        Answer("I can't refund that charge; I can pass you to a senior agent."),
    ]
    opened = await open_desk(db_path, desk, provider=ScriptedModel(script))
    async with opened:
        events = await drain(opened.runner.send(None, "Refund $29.99 for January 1st."))
        results = [e.item for e in events if getattr(e, "item", None) is not None and e.item.kind == "tool_result"]
        assert [r.is_error for r in results] == [True, True]
        assert await opened.services.customers.refunds() == []
