"""A tool acts on an account only once the customer has named it, in their own messages.

The model picks the account; neither its words nor the shared context (which models write) can
vouch for whose it is. These run the real runner with a scripted model that is talked into
acting on an account: the tool refuses until the customer's own message names it by its email
address or customer id. One rule for reads and writes, refunds and plan changes alike (issue 39
§3): a name, or a charge's amount and dates, name no account.
"""

from __future__ import annotations

import json
from dataclasses import replace
from types import SimpleNamespace

import pytest

from supportdesk.config import load_desk
from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, Transfer
from supportdesk.engine.runner import drain
from supportdesk.engine.tools import ToolContext
from supportdesk.items import Message
from supportdesk.tools import registry
from supportdesk.wiring import open_desk
from tests.conftest import REPO
from tests.scripted import ScriptedModel

REFUSED = "to confirm the account is yours"


@pytest.fixture
def desk():
    return load_desk(REPO / "agents.toml")


@pytest.fixture
async def data(db_path):
    """The demo business data, for tools invoked directly (not through a runner)."""
    from supportdesk.business import open_business

    opened = await open_business(db_path)
    yield opened
    await opened.close()


def direct(desk, data, said: str | None, context: dict | None = None) -> ToolContext:
    """A billing agent's call context whose customer wrote `said` (None: outside a desk runner)."""

    async def words() -> str:
        return said or ""

    return ToolContext(
        session_id="s", call_id="c", agent=desk.agents["billing"], desk=desk, context=context or {},
        services=SimpleNamespace(customers=data), customer_words=words if said is not None else None,  # type: ignore[arg-type]
    )


def results(events):
    return [e.item for e in events if getattr(e, "item", None) is not None and e.item.kind == "tool_result"]


def call(name: str, **arguments):
    return CallTools([RequestedCall(f"c-{name}", name, arguments)])


def cancel_asked_twice() -> list:
    """A model talked into cancelling Marco's account, asking once for the account in between."""
    return [
        Transfer("billing", "cancellation"),
        call("cancel_subscription", customer_id="CUS-1002"),
        Answer("Which account is it?"),
        call("cancel_subscription", customer_id="CUS-1002"),
        Answer("Cancelled."),
    ]


async def test_a_cancel_on_an_account_the_customer_never_named_is_refused(db_path, desk):
    async with await open_desk(db_path, desk, provider=ScriptedModel(cancel_asked_twice())) as opened:
        events = await drain(opened.runner.send(None, "Cancel the subscription on Marco Bellini's account please"))
        sid = events[0].session_id
        [refused] = results(events)
        assert refused.is_error and REFUSED in str(refused.output)
        assert "CUS-1002" not in str(refused.output)  # a refusal read out names no account
        assert (await opened.services.customers.get_customer("CUS-1002"))["status"] == "active"
        # The customer names it: the same call goes through, offered first (issue 33), on the yes.
        events = await drain(opened.runner.send(sid, "It's mine: marco@example.com"))
        [offered] = results(events)
        assert REFUSED not in offered.output and [e.item.tool for e in events if getattr(e, "item", None) and e.item.kind == "offer"]
        events = await drain(opened.runner.send(sid, "yes"))
        [done] = results(events)
        assert not done.is_error, done.output
        assert (await opened.services.customers.get_customer("CUS-1002"))["status"] == "cancelled"


async def test_naming_one_account_does_not_open_another(db_path, desk):
    script = [
        Transfer("billing", "credit"),
        Transfer("senior", "credit"),
        call("issue_credit", customer_id="CUS-1002", amount=20, reason="goodwill"),
        Answer("Done."),
    ]
    async with await open_desk(db_path, desk, provider=ScriptedModel(script)) as opened:
        events = await drain(opened.runner.send(None, "I'm dana@example.com. Also credit $20 to Marco Bellini's account."))
        [refused] = results(events)
        assert refused.is_error and REFUSED in str(refused.output)
        assert await opened.services.customers.credits("CUS-1002") == []


async def test_the_shared_context_cannot_vouch_for_the_account(desk, data):
    """A model writes the context (`customer_email`, `customer_id`): only the customer's words count."""
    ctx = direct(desk, data, "Move my account to the team plan", {"customer_email": "dana@example.com", "customer_id": "CUS-1001"})
    out = await registry.get("change_plan").invoke(ctx, {"customer_id": "CUS-1001", "plan": "team"})
    assert out.is_error and REFUSED in str(out.output)
    assert (await data.get_customer("CUS-1001"))["plan"] == "pro"


async def test_a_refund_needs_the_account_named_not_only_the_charge_described(db_path, desk):
    """Issue 39 §3: the charge's amount and dates, which anyone who saw the statement knows, do
    not move its owner's money; the account's email does. The refusal is a policy's, in the
    tool result's own words ("refused by policy: ..."), never a technical failure's."""
    refund = call("refund_charge", charge_id="CH-9004", amount=29.99, reason="duplicate charge")
    script = [
        Transfer("billing", "duplicate"), refund, Answer("What did you see on your statement?"),
        refund, Answer("Which account?"), refund, Answer("Refunded."),
    ]
    async with await open_desk(db_path, desk, provider=ScriptedModel(script)) as opened:
        events = await drain(opened.runner.send(None, "I was charged twice, refund the duplicate"))
        sid = events[0].session_id
        [refused] = results(events)
        assert refused.is_error and refused.output.startswith("refused by policy: ") and REFUSED in refused.output
        events = await drain(opened.runner.send(sid, "Two charges of $29.99 on March 1st and March 3rd"))
        [refused] = results(events)
        assert refused.is_error and refused.output.startswith("refused by policy: ") and REFUSED in refused.output
        assert await opened.services.customers.refunds() == []
        events = await drain(opened.runner.send(sid, "It's dana@example.com"))
        [offered] = results(events)
        assert REFUSED not in offered.output  # now offered (issue 33), and run on the yes
        events = await drain(opened.runner.send(sid, "yes"))
        [done] = results(events)
        assert not done.is_error, done.output
        assert [r["charge_id"] for r in await opened.services.customers.refunds()] == ["CH-9004"]


async def test_a_tool_run_outside_a_desk_runner_cannot_name_an_account(desk, data):
    ctx = direct(desk, data, None, {"customer_email": "dana@example.com", "customer_id": "CUS-1001"})
    out = await registry.get("update_payment_method").invoke(ctx, {"customer_id": "CUS-1001", "method": "visa ending 1111"})
    assert out.is_error and REFUSED in str(out.output)


async def test_a_name_does_not_show_an_account(db_path, desk):
    """An account's email address, plan and payment method are shown to the customer who named
    it, not to anyone who knows the name on it."""
    script = [
        Transfer("billing", "lookup"),
        call("find_customer", query="Marco Bellini"),
        call("find_charges", customer="Marco Bellini"),
        Answer("Which account is it?"),
        call("find_customer", query="marco@example.com"),
        Answer("Found it."),
    ]
    async with await open_desk(db_path, desk, provider=ScriptedModel(script)) as opened:
        events = await drain(opened.runner.send(None, "What's the email and card on Marco Bellini's account?"))
        sid = events[0].session_id
        refused = results(events)
        assert [r.name for r in refused] == ["find_customer", "find_charges"]
        for r in refused:
            assert r.is_error and REFUSED in str(r.output)
            assert "marco@" not in str(r.output) and "mastercard" not in str(r.output)
        events = await drain(opened.runner.send(sid, "I'm Marco, marco@example.com"))
        [found] = results(events)
        assert not found.is_error and json.loads(found.output)["email"] == "marco@example.com"


@pytest.mark.parametrize(
    "said, shown",
    [
        ("What are the charges and invoices on Marco Bellini's account?", False),  # the model found the id
        ("I'm marco@example.com, show me my invoices", True),
        ("I see $129.99 twice on my statement", False),  # one of the account's own charges: no proof
        ("account cus-1002 please", True),
    ],
)
async def test_an_accounts_charges_and_invoices_show_only_once_it_is_named(desk, data, said, shown):
    for tool, arguments in (("find_charges", {"customer_id": "CUS-1002"}), ("list_invoices", {"customer_id": "CUS-1002"})):
        out = await registry.get(tool).invoke(direct(desk, data, said), arguments)
        assert (not out.is_error) is shown, (tool, out.output)
        if not shown:
            assert REFUSED in str(out.output) and "CH-" not in str(out.output)


@pytest.mark.parametrize(
    "said, named",
    [
        ("my email is dana@example.com.", True),
        ("DANA@EXAMPLE.COM", True),
        ("account cus-1001 please", True),
        ("it's xdana@example.com", False),  # another address that ends the same
        ("dana@example.community", False),
        ("CUS-10012", False),
        ("Dana Whitfield", False),  # a name is no proof
    ],
)
async def test_what_names_an_account(desk, data, said, named):
    out = await registry.get("change_plan").invoke(direct(desk, data, said), {"customer_id": "CUS-1001", "plan": "pro"})
    assert (REFUSED not in str(out.output)) is named, out.output


async def test_each_ask_reads_only_the_messages_written_since_the_last(db_path, desk):
    """The policies ask for the customer's words on every account-tool call. A session whose
    whole log came with the turn's one read (engine/turn_reads.py) is answered from it: no
    message is read from the store again, on the first ask or on the next turn's."""
    async with await open_desk(db_path, desk, provider=ScriptedModel(cancel_asked_twice())) as opened:
        asked: list[int] = []
        of_kind = opened.store.of_kind

        async def counted(session_id, kind, **kw):
            found = await of_kind(session_id, kind, **kw)
            if kind == "message":
                asked.append(kw.get("after", 0))
            return found

        opened.runner.store.of_kind = counted  # type: ignore[method-assign]
        events = await drain(opened.runner.send(None, "Cancel Marco's subscription"))
        sid = events[0].session_id
        assert REFUSED in results(events)[0].output and asked == []
        events = await drain(opened.runner.send(sid, "It's mine: marco@example.com"))
        assert REFUSED not in results(events)[0].output  # the new message was read: it names the account
        assert asked == []


async def test_a_runner_keeps_the_words_of_a_bounded_number_of_sessions(db_path, desk, monkeypatch):
    from supportdesk.engine import runner as runner_module

    monkeypatch.setattr(runner_module, "CUSTOMER_WORDS_KEPT", 2)
    async with await open_desk(db_path, desk, provider=ScriptedModel([])) as opened:
        sessions = []
        for n in range(3):
            info = await opened.store.create_session("triage")
            await opened.store.append(info.id, [Message(role="customer", text=f"I am customer {n}")])
            sessions.append(info.id)
            assert await opened.runner._customer_words(info.id) == f"I am customer {n}"
        assert list(opened.runner._customer_said) == sessions[1:]  # the least recently asked went
        # a session asked again is read afresh, whole
        assert await opened.runner._customer_words(sessions[0]) == "I am customer 0"


@pytest.mark.parametrize(
    "said, arguments, owners",
    [
        # dates alone, or an amount only the model guessed: nothing the customer has a claim to
        ("I was charged twice in March", {"dates": ["2026-03-01", "2026-03-03"]}, None),
        ("I was charged twice in March", {"amount": 129.99}, None),
        # a plan's price fits many accounts: written as money, it still names none of them
        ("I see $129.99 twice on my card", {"amount": 129.99}, None),
        # issue 39 §3: the amount as the customer read it off their statement, one account's
        # alone, names no account: anyone who knows a charge would see its owner's
        ("Two charges of $29.99 on March 1st and March 3rd", {"dates": ["2026-03-01", "2026-03-03"]}, None),
        ("Two charges of $29.99 on March 1st and March 3rd", {"amount": 29.99, "dates": ["2026-03-01", "2026-03-03"]}, None),
        ("account CUS-1001, two charges of $29.99", {"amount": 29.99}, ["CUS-1001"]),
        ("It's dana@example.com, two charges of $29.99", {"amount": 29.99, "dates": ["2026-03-01", "2026-03-03"]}, ["CUS-1001"]),
        # a named account shows its own charges on those dates, not its neighbours'
        ("I'm marco@example.com, charged twice in March", {"dates": ["2026-03-01", "2026-03-03"]}, ["CUS-1002"]),
    ],
)
async def test_a_search_by_amount_or_dates_shows_only_charges_the_customer_has_a_claim_to(desk, data, said, arguments, owners):
    # Both accounts were charged on March 1st and 3rd: the search finds the charges of both.
    everyone = await data.find_charges(customer_id=None, amount=arguments.get("amount"), dates=arguments.get("dates"))
    amount = arguments.get("amount")
    expected = {"CUS-1001", "CUS-1002"} if amount is None else {"CUS-1002"} if amount == 129.99 else {"CUS-1001"}
    assert {c["customer_id"] for c in everyone} >= expected
    out = await registry.get("find_charges").invoke(direct(desk, data, said), arguments)
    if owners is None:
        assert out.is_error and REFUSED in str(out.output) and "CH-" not in str(out.output)
        assert out.output.startswith("refused by policy: ")  # a policy's refusal, not a failure
        return
    found = out.output
    assert not out.is_error and found["customers"] == owners
    assert found["charges"] and {c["customer_id"] for c in found["charges"]} == set(owners)


@pytest.mark.parametrize(
    "said, reads, owners",
    [
        # a plan's price charged to many accounts, no account named: refused without reading any
        ("I see $129.99 twice on my card", 0, None),
        # one email written: that account is looked up once, however many accounts were charged
        ("I'm marco@example.com, $129.99 twice", 1, ["CUS-1002"]),
        # an id is named as written: no read at all
        ("account cus-1002, $129.99 twice", 0, ["CUS-1002"]),
    ],
)
async def test_a_search_by_amount_reads_only_the_accounts_the_customer_wrote(desk, data, monkeypatch, said, reads, owners):
    looked_up: list[str] = []
    for name in ("get_customer", "find_customer"):
        real = getattr(data, name)

        async def counted(query, _real=real):
            looked_up.append(query)
            return await _real(query)

        monkeypatch.setattr(data, name, counted)
    everyone = await data.find_charges(customer_id=None, amount=129.99, dates=None)
    assert len({c["customer_id"] for c in everyone}) > 5  # the plan's price: many accounts
    out = await registry.get("find_charges").invoke(direct(desk, data, said), {"amount": 129.99})
    assert len(looked_up) == reads, looked_up
    if owners is None:
        assert out.is_error and REFUSED in str(out.output)
    else:
        assert not out.is_error and out.output["customers"] == owners


async def test_a_session_deleted_and_imported_again_under_its_id_is_read_afresh(db_path, desk):
    """A worker keeps each session's customer words; a log replaced under the same id must not
    lend the old words (and the accounts they named) to the new one."""
    async with await open_desk(db_path, desk, provider=ScriptedModel([])) as opened:
        store = opened.store
        info = await store.create_session("triage")
        await store.append(info.id, [Message(role="customer", text="I'm marco@example.com")])
        assert await opened.runner._customer_words(info.id) == "I'm marco@example.com"
        replaced = await store.get_session(info.id)
        await store.delete_session(info.id)
        await store.import_session(replace(replaced, item_count=2), [
            Message(role="customer", text="hello", seq=1, session_id=info.id),
            Message(role="customer", text="cancel my plan", seq=2, session_id=info.id),
        ], {})
        assert await opened.runner._customer_words(info.id) == "hello\ncancel my plan"
        # and an unchanged log is still read only from where it was left
        await store.append(info.id, [Message(role="customer", text="it's dana@example.com")])
        assert await opened.runner._customer_words(info.id) == "hello\ncancel my plan\nit's dana@example.com"


async def test_a_release_summary_staff_wrote_counts_as_named_once_the_turn_reads_the_store(db_path, desk):
    """Issue 39 §3: staff vouch for what their release summary says (an agent read of the log
    outside a running turn, here, as well as inside one: tests/test_offline_model.py)."""
    from supportdesk.staff import Actor

    async with await open_desk(db_path, desk, provider=ScriptedModel([])) as opened:
        info = await opened.store.create_session("triage")
        await opened.store.append(info.id, [Message(role="customer", text="hello")])
        assert await opened.runner._customer_words(info.id) == "hello"
        await opened.runner.takeover(info.id, Actor("dana", "cli"))
        await opened.runner.release(info.id, summary="verified by phone: dana@example.com", by=Actor("dana", "cli"))
        assert await opened.runner._customer_words(info.id) == "hello\nverified by phone: dana@example.com"
