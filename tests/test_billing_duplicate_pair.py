"""A duplicate pair is refunded once: either charge of the pair may be the one refunded (the
customer may name the first), but once one is, the other is no duplicate any more and a refund of
it "as a duplicate" is refused, under any idempotency key (`tools/billing.py`, `_check_duplicate`)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from supportdesk.business import open_business
from supportdesk.config import load_desk
from supportdesk.engine.tools import ToolContext
from supportdesk.tools import registry
from tests.conftest import REPO, every_account_named

# CUS-1001's March charges: CH-9003 (Mar 1) and CH-9004 (Mar 3), a duplicate of it.
ORIGINAL, DUPLICATE = "CH-9003", "CH-9004"


@pytest.fixture
def desk():
    return load_desk(REPO / "agents.toml")


@pytest.fixture
async def services(db_path):
    store = await open_business(db_path)
    yield SimpleNamespace(customers=store)
    await store.close()


async def refund(desk, services, charge_id: str, call: int):
    ctx = ToolContext(
        session_id="s1", call_id=f"call_{call}", agent=desk.agents["billing"], desk=desk, context={},
        services=services, idempotency_key=f"s1/turn-1/refund_charge/{call}", customer_words=every_account_named,
    )
    return await registry.get("refund_charge").invoke(ctx, {"charge_id": charge_id, "amount": 29.99, "reason": "duplicate charge"})


@pytest.mark.parametrize(("first", "second"), [(DUPLICATE, ORIGINAL), (ORIGINAL, DUPLICATE)])
async def test_the_other_charge_of_a_refunded_duplicate_pair_is_refused(desk, services, first, second):
    charges = {c["id"]: c for c in await services.customers.charges("CUS-1001")}
    assert charges[DUPLICATE].get("duplicate_of") == ORIGINAL  # the demo data this test stands on
    done = await refund(desk, services, first, 1)
    assert not done.is_error, done.output
    refused = await refund(desk, services, second, 2)
    assert refused.is_error
    assert f"the duplicate of {second} was already refunded ({first})" in refused.output
    assert [(r["charge_id"], r["amount"]) for r in await services.customers.refunds()] == [(first, 29.99)]
