"""One ask, not two (issues 33 and 38): the embedded model's own question is the desk's offer.

The billing agent asks "Would you like me to refund it?" about the duplicate $29.99; the customer
says yes in their own words; the refund runs on that first yes, and the customer was asked once.
The gate's guarantees stay: the yes runs exactly the offered call, a no runs nothing."""

from __future__ import annotations

import subprocess
import sys

from supportdesk.engine.events import Appended
from supportdesk.engine.runner import drain
from supportdesk.items import Confirmation, Decline, Item, Message, Offer, ToolResult
from supportdesk.wiring import open_desk
from tests.conftest import REPO

REQUEST = "I was charged twice for my subscription this month, dana@example.com"


async def _say(desk, session_id: str | None, text: str) -> list[Item]:
    return [e.item for e in await drain(desk.runner.send(session_id, text)) if isinstance(e, Appended)]


def _asks_to_refund(item: Item) -> bool:
    return (
        isinstance(item, Message) and item.role == "agent"
        and "refund" in item.text.lower() and "$29.99" in item.text and "?" in item.text
    )


async def test_the_duplicate_refund_is_asked_once_and_runs_on_the_first_yes(db_path):
    desk = await open_desk(db_path, REPO / "agents.toml")
    async with desk:
        first = await _say(desk, None, REQUEST)
        sid = first[0].session_id
        second = await _say(desk, sid, "yeah go ahead, give it back")
        log = await desk.store.range(sid, 0, 1 << 62)
    # Before the yes: exactly one question about the refund, and it is the offer's own text.
    [offer] = [i for i in log if isinstance(i, Offer)]
    asked = [i for i in first if _asks_to_refund(i)]
    assert len(asked) == 1 and asked[0].text == offer.text and asked[0].meta.get("offer_id") == offer.offer_id
    assert offer.tool == "refund_charge" and offer.arguments["amount"] == 29.99 and offer.arguments["charge_id"] == "CH-9004"
    # The yes: one confirmation of that offer, and the refund it names ran once, with its arguments.
    [confirmation] = [i for i in log if isinstance(i, Confirmation)]
    assert confirmation.offer_id == offer.offer_id and confirmation.arguments == offer.arguments
    refunds = [i for i in log if isinstance(i, ToolResult) and i.name == "refund_charge" and not i.is_error]
    assert len(refunds) == 1 and refunds[0].call_id == f"{offer.offer_id}-yes"
    # Nothing asks again after the yes: the agent reports what was done.
    replies = [i.text for i in second if isinstance(i, Message) and i.role == "agent"]
    assert replies and "refunded $29.99" in replies[-1] and not any("?" in r and "shall i" in r.lower() for r in replies)
    assert [i for i in second if isinstance(i, Offer)] == []


async def test_a_no_to_the_models_question_refunds_nothing(db_path):
    desk = await open_desk(db_path, REPO / "agents.toml")
    async with desk:
        first = await _say(desk, None, REQUEST)
        sid = first[0].session_id
        second = await _say(desk, sid, "no, leave it for now")
    [decline] = [i for i in second if isinstance(i, Decline)]
    assert decline.why == "no"
    assert not [i for i in second if isinstance(i, ToolResult) and i.name == "refund_charge"]
    assert "nothing has been refunded" in " ".join(i.text for i in second if isinstance(i, Message) and i.role == "agent")


def test_the_cli_run_asks_once(tmp_path):
    """The command line of the report: one question before the refund, none after the yes."""
    ran = subprocess.run(
        [sys.executable, "-m", "supportdesk.cli", "--db", str(tmp_path / "x.db"), "run", REQUEST, "yeah go ahead, give it back"],
        capture_output=True, text=True, timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    lines = [line for line in ran.stdout.splitlines() if line.startswith("Billing:")]
    questions = [line for line in lines if "?" in line]
    assert len(questions) == 1 and "$29.99" in questions[0] and "refund" in questions[0]
    assert "Before I do anything" not in ran.stdout and "refunded $29.99" in lines[-1]


async def test_a_change_of_mind_gets_the_other_plan_offered_and_its_yes_runs_that_one(db_path):
    """Issue 33's failure: after one plan change was offered, "no wait, make it the cheaper one"
    carried the first one out. The gate declines the offer as a change of mind; the agent follows
    the customer with a new question, about the other plan, which the next yes runs."""
    desk = await open_desk(db_path, REPO / "agents.toml")
    async with desk:
        first = await _say(desk, None, "can I switch to the team plan? dana@example.com")
        sid = first[0].session_id
        [team] = [i for i in first if isinstance(i, Offer)]
        second = await _say(desk, sid, "no wait, make it the cheaper one")
        third = await _say(desk, sid, "yes")
        customer = await desk.services.customers.get_customer("CUS-1001")
    assert team.arguments["plan"] == "team"
    assert [d.why for d in second if isinstance(d, Decline)] == ["change_of_mind"]
    [starter] = [i for i in second if isinstance(i, Offer)]
    assert starter.arguments["plan"] == "starter" and "Starter plan" in starter.text
    assert [i.text for i in second if isinstance(i, Message) and i.role == "agent"] == [starter.text]  # one question
    ran = [i for i in third if isinstance(i, ToolResult) and i.name == "change_plan" and not i.is_error]
    assert len(ran) == 1 and customer["plan"] == "starter"


async def test_on_a_desk_without_the_gate_for_refunds_the_model_still_asks_and_reads_the_yes_with_the_one_reader(db_path):
    """`[confirm] refund_charge = "none"`: the gate holds nothing, so the question goes alone (no
    call with it, or it would run at once) and the desk's reader reads the answer."""
    from supportdesk.config import parse_desk

    config = parse_desk((REPO / "agents.toml").read_text() + '\n[confirm]\nrefund_charge = "none"\n', "agents.toml")
    desk = await open_desk(db_path, config)
    async with desk:
        first = await _say(desk, None, REQUEST)
        sid = first[0].session_id
        held = await _say(desk, sid, "I want to talk to a real person please")  # no yes: nothing runs
        assert not [i for i in first + held if isinstance(i, ToolResult) and i.name == "refund_charge"]
        first = await _say(desk, sid, REQUEST)
        second = await _say(desk, sid, "yeah go ahead, give it back")
    assert [i for i in first if isinstance(i, Offer)] == [] and len([i for i in first if _asks_to_refund(i)]) == 1
    refunds = [i for i in second if isinstance(i, ToolResult) and i.name == "refund_charge" and not i.is_error]
    assert len(refunds) == 1
