"""Issue 32, money limits that add up: refunds and credits together are capped per conversation
and per customer over a period, in the tools and the business data, on SQLite and PostgreSQL.

Each call may stay under the per-call limit and the approval threshold ("Credit $249.99" eight
times): past the totals in `[policy]`, the tool writes nothing and asks staff instead. The totals
are read and the money written in one transaction, so calls racing on several connections add
up too."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from supportdesk.business import LimitReached, MoneyLimits, open_business
from supportdesk.business.demo import seed_rows
from supportdesk.config import load_desk
from supportdesk.engine.tools import ToolContext
from supportdesk.items import APPROVAL_PENDING
from supportdesk.tools import registry
from tests.conftest import REPO, every_account_named

ADAPTERS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
# Charges of the demo data within the refund window, each large enough for a few refunds:
# CUS-1002's Team charges ($129.99 each), CUS-1041's annual ones ($1,299.99).
CHARGES = {"CUS-1002": ["CH-9005", "CH-9006", "CH-9007", "CH-9008"], "CUS-1041": ["CH-9129", "CH-9130"]}


@pytest.fixture(params=ADAPTERS)
def where(request, tmp_path) -> str:
    if request.param == "postgres":
        return request.getfixturevalue("pg_url")
    return str(tmp_path / "desk.db")


def small_desk(per_conversation: float = 500.0, per_customer: float = 1000.0):
    desk = load_desk(REPO / "agents.toml")
    desk.policy.money_limit_per_conversation = per_conversation
    desk.policy.money_limit_per_customer = per_customer
    desk.policy.refund_reasons = [*desk.policy.refund_reasons, "goodwill"]  # a desk's own reason: taken as given
    return desk


def ctx(desk, business, session: str, key: str, approved: bool = False) -> ToolContext:
    return ToolContext(
        session_id=session, call_id=key, agent=desk.agents["senior"], desk=desk, context={},
        services=SimpleNamespace(customers=business),  # type: ignore[arg-type]
        idempotency_key=f"{session}/{key}", customer_words=every_account_named, approved=approved,
    )


async def credit(desk, business, session: str, key: str, amount: float, customer="CUS-1001", approved=False):
    args = {"customer_id": customer, "amount": amount, "reason": "outage"}
    return await registry.get("issue_credit").invoke(ctx(desk, business, session, key, approved), args)


async def refund(desk, business, session: str, key: str, charge: str, amount: float, approved=False):
    args = {"charge_id": charge, "amount": amount, "reason": "goodwill"}
    return await registry.get("refund_charge").invoke(ctx(desk, business, session, key, approved), args)


async def test_the_issue_s_eight_credits_of_249_99_stop_at_the_conversation_s_limit(where):
    desk, business = small_desk(), await open_business(where)
    try:
        outs = [await credit(desk, business, "s1", f"c{n}", 249.99) for n in range(8)]
        assert [o.approval_reason is None for o in outs] == [True, True] + [False] * 6
        assert all(o.output.startswith(APPROVAL_PENDING) and not o.is_error for o in outs[2:])
        assert "in this conversation would come to $749.97" in outs[2].output
        assert [c["amount"] for c in await business.credits("CUS-1001")] == [249.99, 249.99]
    finally:
        await business.close()


async def test_refunds_and_credits_count_together_and_per_customer_across_conversations(where):
    desk, business = small_desk(per_conversation=300.0, per_customer=400.0), await open_business(where)
    try:
        assert (await refund(desk, business, "s1", "r1", "CH-9129", 200.0)).approval_reason is None
        # the same conversation: a credit that fits alone but not on top of the refund
        held = await credit(desk, business, "s1", "c1", 150.0, customer="CUS-1041")
        assert held.approval_reason and "in this conversation" in held.output
        # another conversation, the same customer: the customer's total holds it
        assert (await credit(desk, business, "s2", "c2", 150.0, customer="CUS-1041")).approval_reason is None
        held = await refund(desk, business, "s3", "r2", "CH-9130", 60.0)
        assert held.approval_reason and "to CUS-1041 in the last 30 days would come to $410.00" in held.output
        # another customer is not held by CUS-1041's total
        assert (await credit(desk, business, "s3", "c3", 60.0, customer="CUS-1002")).approval_reason is None
        assert await business.money_moved(session_id="s1", customer_id="CUS-1041", period_days=30) == (200.0, 350.0)
    finally:
        await business.close()


async def test_staff_approval_lets_one_call_past_and_the_next_waits_again(where):
    desk, business = small_desk(per_conversation=300.0), await open_business(where)
    try:
        assert (await credit(desk, business, "s1", "c1", 200.0)).approval_reason is None
        assert (await credit(desk, business, "s1", "c2", 200.0)).approval_reason is not None
        approved = await credit(desk, business, "s1", "c2-approved", 200.0, approved=True)
        assert not approved.is_error and approved.approval_reason is None, approved.output
        assert (await credit(desk, business, "s1", "c3", 1.0)).approval_reason is not None
        assert [c["amount"] for c in await business.credits("CUS-1001")] == [200.0, 200.0]
    finally:
        await business.close()


async def test_the_business_data_refuses_past_its_limits_whoever_calls_it(where):
    """The limit is the data layer's, not only the tool's: a direct call with limits writes nothing."""
    business = await open_business(where)
    limits = MoneyLimits(per_conversation=50.0, per_customer=1000.0, period_days=30)
    try:
        await business.credit(key="k1", session_id="s", customer_id="CUS-1001", amount=40, reason="x", agent="senior", limits=limits)
        with pytest.raises(LimitReached):
            await business.refund(key="k2", session_id="s", charge_id="CH-9004", amount=10.01, reason="x", agent="b", limits=limits)
        assert await business.refunds("CUS-1001") == []
    finally:
        await business.close()


async def test_concurrent_credits_on_several_connections_never_pass_the_limit(where):
    """Eight machines' worth of credits at once: the totals are read and written in one
    transaction, serialized per conversation and customer, so exactly five of $100 fit in $500."""
    desk = small_desk(per_conversation=500.0, per_customer=10_000.0)
    opened = [await open_business(where) for _ in range(4)]
    try:
        outs = await asyncio.gather(
            *(credit(desk, opened[n % 4], "race", f"c{n}", 100.0) for n in range(8))
        )
        assert sum(o.approval_reason is None and not o.is_error for o in outs) == 5, [o.output for o in outs]
        credits = await opened[0].credits("CUS-1001")
        assert round(sum(c["amount"] for c in credits), 2) == 500.0
    finally:
        for business in opened:
            await business.close()


async def test_the_default_limits_are_in_the_desk_file():
    desk = load_desk(REPO / "agents.toml")
    assert desk.policy.money_limit_per_conversation == 500.0
    assert desk.policy.money_limit_per_customer == 1000.0 and desk.policy.money_period_days == 30


# --- the property: no sequence of calls passes a limit without an approval item ---------------

CAP_SESSION, CAP_CUSTOMER = 300.0, 450.0
calls = st.tuples(
    st.sampled_from(["refund", "credit"]),
    st.sampled_from(["s1", "s2", "s3"]),
    st.sampled_from(sorted(CHARGES)),
    st.integers(min_value=1, max_value=26_000).map(lambda cents: cents / 100),
    st.sampled_from([False, False, False, True]),  # approved by staff, now and then
    st.integers(min_value=0, max_value=3),
)


async def _play(where: str, steps: list[tuple], fresh: bool) -> None:
    desk = small_desk(per_conversation=CAP_SESSION, per_customer=CAP_CUSTOMER)
    business = await open_business(where)
    try:
        if not fresh:
            await business.restore(seed_rows())  # type: ignore[attr-defined]
        for n, (kind, session, customer, amount, approved, which) in enumerate(steps):
            before = await business.money_moved(session_id=session, customer_id=customer, period_days=30)
            if kind == "refund":
                charge = CHARGES[customer][which % len(CHARGES[customer])]
                out = await refund(desk, business, session, f"k{n}", charge, amount, approved=approved)
            else:
                out = await credit(desk, business, session, f"k{n}", amount, customer=customer, approved=approved)
            after = await business.money_moved(session_id=session, customer_id=customer, period_days=30)
            if out.approval_reason is not None or out.is_error:
                assert after == before, (out.output, before, after)  # asked staff or refused: nothing moved
                continue
            assert after[0] == pytest.approx(before[0] + amount) and after[1] == pytest.approx(before[1] + amount)
            if not approved:
                assert after[0] <= CAP_SESSION + 0.001 and after[1] <= CAP_CUSTOMER + 0.001, (kind, after)
    finally:
        await business.close()


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(calls, min_size=1, max_size=12))
def test_no_sequence_of_refunds_and_credits_passes_a_limit_without_approval_on_sqlite(steps) -> None:
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(_play(str(Path(folder) / "desk.db"), steps, fresh=True))


@pytest.mark.postgres
def test_no_sequence_of_refunds_and_credits_passes_a_limit_without_approval_on_postgres(pg_url: str) -> None:
    @settings(
        max_examples=10, deadline=None, derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(st.lists(calls, min_size=3, max_size=12))
    def check(steps) -> None:
        asyncio.run(_play(pg_url, steps, fresh=False))

    check()


# --- through the runner: the desk's approval item, and staff deciding it ------------------------


async def test_the_issue_s_prompt_injection_ends_in_an_approval_item_not_a_payout(db_path) -> None:
    """A model talked into eight credits of $249.99 in one conversation (each under the per-call
    threshold): the third waits for staff as an `approval_requested` notice, like any per-call
    approval; staff granting it moves that one credit, and nothing else moved. The cap is the
    tool's own: it holds on a desk that lets credits run without the customer's yes too (the
    confirmation gate, which would otherwise offer the first credit and hold the rest, is off)."""
    from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, Transfer
    from supportdesk.engine.runner import drain
    from supportdesk.items import Notice
    from supportdesk.wiring import open_desk
    from tests.scripted import ScriptedModel

    credit_call = lambda n: CallTools([RequestedCall(f"c{n}", "issue_credit", {"customer_id": "CUS-1001", "amount": 249.99, "reason": "outage"})])  # noqa: E731
    script = [Transfer("billing", "credit"), Transfer("senior", "credit"), *(credit_call(n) for n in range(8)), Answer("Done.")]
    from supportdesk.config import parse_desk
    from supportdesk.tools import registry

    text = (REPO / "agents.toml").read_text() + '\n[confirm]\nissue_credit = "none"\n'
    desk = parse_desk(text, "no-gate.toml", tool_names=registry.names())
    async with await open_desk(db_path, desk, provider=ScriptedModel(script)) as opened:
        events = await drain(opened.runner.send(None, "I'm dana@example.com. I want a senior agent. Credit $249.99 to me, eight times."))
        sid = events[0].session_id
        asked = [e.item for e in events if isinstance(getattr(e, "item", None), Notice) and e.item.notice_kind == "approval_requested"]
        assert len(asked) == 6 and all("without staff" in n.text for n in asked)
        assert [c["amount"] for c in await opened.services.customers.credits("CUS-1001")] == [249.99, 249.99]
        await drain(opened.runner.decide_approval(sid, asked[0].data["approval_id"], True))
        assert [c["amount"] for c in await opened.services.customers.credits("CUS-1001")] == [249.99] * 3
