"""Issue 38, the lead's policy: a customer's request naming a reset link is consent to
`send_password_reset` (confirm = "request", engine/tools.py): the desk reads the request, not the
model, so every model gets the same gate; a money or account tool marked confirm = "customer" is
never run on a request alone."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from supportdesk.commands.evals import evaluate_conversations
from supportdesk.config import parse_desk
from supportdesk.engine.confirmation import requested
from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, Transfer
from supportdesk.engine.tools import Tool, ToolRegistry
from supportdesk.items import Decline, Message, Offer, ToolResult
from supportdesk.wiring import open_desk
from tests.conftest import REPO, TEST_DESK
from tests.scripted import ScriptedModel
from tests.test_confirmation import items_of
from tests.money_turns import MONEY, passes


def call(name: str, **arguments: Any) -> CallTools:
    return CallTools([RequestedCall(f"call_{name}", name, arguments)])


# --- the shipped tools ----------------------------------------------------------------------------


def test_the_reset_link_alone_is_a_request_tool_and_money_stays_with_the_customers_yes():
    from supportdesk.tools import registry

    desk = parse_desk((REPO / "agents.toml").read_text(), "agents.toml", tool_names=registry.names())
    kinds = {name: registry.get(name).confirm_kind(desk) for name in registry.names()}  # type: ignore[union-attr]
    assert kinds["send_password_reset"] == "request"
    assert {name for name, kind in kinds.items() if kind == "customer"} == set(MONEY)


def test_a_money_tool_cannot_be_run_on_a_request():
    class Amount(BaseModel):
        amount: float

    with pytest.raises(ValueError, match="moves money"):
        Tool("refund", "refund", Amount, lambda ctx, args: None, effect="money", confirm="request")
    from supportdesk.tools import registry

    text = (REPO / "agents.toml").read_text() + '\n[confirm]\nrefund_charge = "request"\n'
    desk = parse_desk(text, "a.toml", tool_names=registry.names())
    assert registry.get("refund_charge").confirm_kind(desk) == "customer"  # type: ignore[union-attr]


@pytest.mark.parametrize("text", [
    "hey can u send me a password reset link? sami.meyer18@example.com",
    "forgot my pw again, send the reset thing",
    "cant remember my password, need a new one",
    "Please, I want that you mail me the link for make a new password",
    "my password reset link please, dana@example.com",  # a thing named and "please" asks for it
    # Verbless and terse, beside who writes (acct17: evals/acct-lines-17-tune.jsonl taught the
    # act reader "password reset" as asked for; it read a greeting or a problem):
    "CUS-1014 password reset.",
    "Pw reset - olga.nguyen14@example.com",
    # An emoji ends a clause (readers/acts.py _CLAUSE): the request after the report is one.
    "forgot it AGAIN \U0001f629 reset to dana@example.com",
    # Put as a question: the thing asked for named alone, or the action's verb used as one.
    "reset link? quinn.adams16@example.com",
    "pw reset pls? CUS-1016",
    "could i get a new password link?",
    # The verb in another of its forms, as a learner writes it (understand-held-17): still asked.
    "please can you sending me the reset link? CUS-1016",
])
def test_the_reset_tool_reads_a_request_for_the_link(text):
    from supportdesk.tools import registry

    assert registry.get("send_password_reset").requested_in(text)  # type: ignore[union-attr]


@pytest.mark.parametrize("text", [
    "how do I change my password?",
    "i cant log in, it keeps saying wrong password",
    "my password turned up in a breach list, i want to lock things down",
    "refund my duplicate charge please",
    "i never got the reset email",
    "why does my password keep expiring please?",  # a question, "please" or not
    # A problem told beside who writes: the id alone read as a verbless request (held-11).
    "i clicked a link in a fake acme email and typed my password in, dumb i know. CUS-1018",
    "someone phished my password. dana@example.com",
    # Told, not asked, with the address: the link is offered (understand-held-3), whatever the
    # terse requests taught the reader.
    "forgot my password, dana@example.com",
    # A bare noun phrase asked with a "?" the act reader half hears as a request (0.76): a
    # question about passwords, and the link went out unasked (controls-h18). A request put as a
    # question ("hey can u send me a password reset link?" above) is one the reader is sure of.
    "min password length? quinn.adams16@example.com",
    "min password length?",
    # A noun phrase saying something about the link is a question about it, though the act reader
    # reads it as a request, sure of it (1.00): each sent a link nobody asked for.
    "reset link expiry? quinn.adams16@example.com",
    "reset email from you guys legit? quinn.adams16@example.com",
    # Told and asked why: the act reader hears "reset link says expired" as a request (1.00), and
    # "why" as a problem told.
    "reset link says expired, why? quinn.adams16@example.com",
])
def test_the_reset_tool_reads_no_request_in_questions_problems_or_other_asks(text):
    from supportdesk.tools import registry

    assert not registry.get("send_password_reset").requested_in(text)  # type: ignore[union-attr]


def test_a_clause_put_as_a_question_asks_by_its_verb_or_the_thing_alone():
    """Every reader of requests (the money skill's too) hears a noun phrase asked about a thing
    as a question, though the act reader reads it as a request (1.00)."""
    from supportdesk.engine.confirmation import asks_for_something

    assert not asks_for_something("reset link expiry", put_as_question=True)
    # Since acts-17 the reader hears those two as the questions they are; this one it still reads
    # as a request (0.91), a modal asking what is possible, naming no action done (kb-16):
    assert not asks_for_something("can the 2 step code come as a text to my old nokia", put_as_question=True)
    assert not asks_for_something("refund policy for annual plans", put_as_question=True)
    assert asks_for_something("can you send me a reset link", put_as_question=True)
    assert asks_for_something("password reset", put_as_question=True)


def _said(*texts: str) -> list[Message]:
    return [Message(role="customer", text=t) for t in texts]


def test_a_request_is_spent_once_done_and_taken_back_by_a_no():
    asked = lambda text: "reset link" in text  # noqa: E731  (the reader is not what this tests)
    assert requested(_said("send me a reset link", "dana@example.com"), "send_password_reset", asked)
    done = ToolResult(call_id="c", name="send_password_reset", output="{}")
    assert not requested([*_said("send me a reset link"), done, *_said("thanks!")], "send_password_reset", asked)
    declined = Decline(offer_id="o", tool="send_password_reset", why="no", source="text")
    assert not requested([*_said("send me a reset link"), declined, *_said("ok")], "send_password_reset", asked)
    assert not requested(_said("send me a reset link", "no wait, don't"), "send_password_reset", asked)
    assert not requested(_said("send me a reset link", "a", "b", "c"), "send_password_reset", asked)  # too long ago


# --- every model: the desk's gate -------------------------------------------------------------------


async def _reset_turn(db_path, text: str):
    """A scripted model (no reader of its own) that calls the reset tool whatever was said."""
    from supportdesk.wiring import load_config

    model = ScriptedModel([Transfer("technical", "password"), call("send_password_reset", customer="dana@example.com"),
                           Answer("done")])
    desk = await open_desk(db_path, load_config(str(REPO / "agents.toml")), provider=model)
    async with desk:
        items = await items_of(desk.runner.send(None, text))
    ran = [i for i in items if isinstance(i, ToolResult) and i.name == "send_password_reset" and not i.is_error]
    offers = [i for i in items if isinstance(i, Offer)]
    return ran, offers, model


async def test_a_model_calling_the_reset_unasked_is_held_for_a_yes(db_path):
    ran, offers, model = await _reset_turn(db_path, "i cant log in, it says my password is wrong. dana@example.com")
    assert ran == [] and [o.tool for o in offers] == ["send_password_reset"]
    spec = next(t for t in model.requests[-1].tools if t.name == "send_password_reset")
    assert spec.confirm  # the model is told the call waits for a yes


async def test_a_model_calling_the_reset_the_customer_asked_for_sends_it_at_once(db_path):
    ran, offers, model = await _reset_turn(db_path, "please send me a password reset link, dana@example.com")
    assert len(ran) == 1 and offers == []
    spec = next(t for t in model.requests[1].tools if t.name == "send_password_reset")
    assert not spec.confirm  # told it may run


async def test_a_request_alone_never_runs_a_refund(db_path):
    from supportdesk.wiring import load_config

    model = ScriptedModel([Transfer("billing", "money"), call("refund_charge", charge_id="CH-9004", amount=29.99, reason="duplicate charge"),
                           Answer("asked")])
    desk = await open_desk(db_path, load_config(str(REPO / "agents.toml")), provider=model)
    async with desk:
        items = await items_of(desk.runner.send(
            None, "please refund my duplicate charge CH-9004, you can go ahead, dana@example.com"))
    assert not [i for i in items if isinstance(i, ToolResult) and i.name == "refund_charge" and not i.is_error]
    assert [i.tool for i in items if isinstance(i, Offer)] == ["refund_charge"]


# --- a desk file chooses it for a tool of its own -----------------------------------------------------


class Account(BaseModel):
    account: str


async def test_a_desk_file_marks_its_tool_request_and_a_request_in_its_words_runs_it(db_path):
    registry = ToolRegistry()
    ran: list[str] = []

    @registry.tool("unlock_account", "Unlock an account", Account, effect="account", confirm="customer")
    def unlock(ctx, args: Account):
        ran.append(args.account)
        return {"unlocked": args.account}

    text = TEST_DESK.replace('tools = ["refund", "explode"]', 'tools = ["unlock_account"]') + '\n[confirm]\nunlock_account = "request"\n'
    desk_cfg = parse_desk(text, "d.toml", tool_names=["unlock_account", "refund", "explode"])
    for said, runs in (("could you please unlock my account", True), ("my account seems locked since this morning", False)):
        script = [Transfer("billing", "x"), call("unlock_account", account="a1"), Answer("ok")]
        async with await open_desk(db_path, desk_cfg, provider=ScriptedModel(script), tools=registry, customers=False) as desk:
            items = await items_of(desk.runner.send(None, said))
        assert bool([i for i in items if isinstance(i, Offer)]) is not runs, said
    assert ran == ["a1"]


# --- the offline model, end to end ----------------------------------------------------------------------


async def test_the_offline_model_sends_a_reset_asked_for_at_once_and_nothing_more_on_thanks():
    convo = {"name": "reset asked for", "turns": [
        {"customer": "cant remember my password, need a new one", "expect": {"not_tools": MONEY + ["send_password_reset"]}},
        {"customer": "oh right, tara.haddad19@example.com",
         "expect": {"tools": [{"name": "send_password_reset", "arguments": {"customer": "tara.haddad19@example.com"}}],
                    "reply_not": ["shall i"]}},
        {"customer": "got it, thanks!", "expect": {"not_tools": MONEY + ["send_password_reset"]}},
    ], "expect": {"tool_counts": {"send_password_reset": 1}}}
    await passes(convo)


async def test_a_reset_link_asked_with_a_customer_id_is_sent_to_that_account():
    """A customer id told in the request is a slot like an email (consent-10): the link goes to
    that account at once, and the tool's lookup writes `customer_id` to the shared context."""
    convo = {"name": "reset with an id", "turns": [
        {"customer": "reset link for my password please, i'm customer CUS-1015",
         "expect": {"tools": [{"name": "send_password_reset", "arguments": {"customer": "CUS-1015"}}],
                    "context": {"customer_id": "CUS-1015"}, "reply_not": ["shall i", "email address on your account"],
                    "not_tools": MONEY}},
    ], "expect": {"tool_counts": {"send_password_reset": 1}}}
    await passes(convo)


@pytest.mark.parametrize("text", ["got it, thx", "received, ta"])
async def test_thanks_heard_clause_by_clause_after_the_link_closes_without_a_search(text):
    """Thanks after the finished action is a closing even when the whole short message leans to
    neither act (the act reader reads "got it" as leave-taking and "thx" as thanks, clause by
    clause): no help-article search, no "I don't know" (consent-10)."""
    convo = {"name": "thanks after the link", "turns": [
        {"customer": "could you send me a password reset link", "expect": {}},
        {"customer": "nils.costa13@example.com", "expect": {"tools": [{"name": "send_password_reset"}]}},
        {"customer": text, "expect": {"reply": ["welcome"], "reply_not": ["I don't know"],
                                      "not_tools": MONEY + ["send_password_reset", "search_kb"]}},
    ], "expect": {"tool_counts": {"send_password_reset": 1}}}
    await passes(convo)


def test_a_closing_is_thanks_and_leave_taking_in_every_clause():
    from supportdesk.models.offline.specialist import closing_clauses

    assert closing_clauses("got it, thx")
    assert not closing_clauses("got it")  # no thanks in it
    assert not closing_clauses("thx, and send me my invoice")


@pytest.mark.parametrize("answer", ["no, don't, that was my daughter on her tablet", "no"])
async def test_a_config_agent_offered_the_reset_takes_a_no_with_a_reason_as_the_answer(answer):
    """A desk-file agent (the generic skill) whose offer of a call was turned down does not put
    the same call to the customer again on the next step (consent-10, held-10's 'my son')."""
    convo = {"name": "sign-in, offer, no", "turns": [
        {"customer": "i got a sign-in alert from a windows laptop i don't own. zane.shah25@example.com",
         "expect": {"agent": "security", "offers": ["send_password_reset"], "not_tools": MONEY + ["send_password_reset"]}},
        {"customer": answer, "expect": {"reply": ["nothing has been done"], "reply_not": ["shall i"],
                                        "not_tools": MONEY + ["send_password_reset"]}},
    ], "expect": {"tool_counts": {"send_password_reset": 0}}}
    await passes(convo, "evals/config-agent.toml")


async def test_the_consent_10_config_pair_passes_on_the_config_desk():
    """The config desk's half of the consent-10 pair (2 tune + 2 held, too few for a family of
    tests/test_understand_evals.py)."""
    from supportdesk.commands.evals import read_jsonl

    convos = [c for half in ("tune", "held") for c in read_jsonl(REPO / "evals" / f"consent-10-config-{half}.jsonl")]
    results = await evaluate_conversations(convos, config=str(REPO / "evals" / "config-agent.toml"))
    assert [r.name for r in results if not r.passed] == []


# --- what was said stays said: a request before the account, a plan picked from the list -------------


async def test_a_duplicate_asked_to_be_sorted_is_passed_up_once_and_refunded_on_the_yes():
    """The customer asked for something about the charges ("pls fix", "i want it back") without
    both days in words the date rules read: that request stays said, so a refund above billing's limit goes up at once and the
    senior agent's one question is answered by the yes (money/reads.py `came_for`)."""
    convo = {"name": "team duplicate, asked to sort it", "turns": [
        {"customer": "marco@example.com: our team subscription got charged 2x in march (1st & 3rd), pls fix",
         "expect": {"offers": ["refund_charge"], "reply": ["$129.99"], "not_tools": MONEY}},
        {"customer": "go for it, cheers", "expect": {"tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9008", "amount": 129.99}}],
                                              "reply_not": ["just to be sure"]}},
    ], "expect": {"tool_counts": {"refund_charge": 1}}}
    await passes(convo)


async def test_a_plan_picked_by_its_place_in_the_list_just_given_is_offered_then_made_on_the_yes():
    convo = {"name": "the third one from the price list", "turns": [
        {"customer": "how much are your plans a month?", "expect": {"reply": ["$129.99"], "not_tools": MONEY}},
        {"customer": "I'll take the third one please, dana@example.com", "expect": {"offers": ["change_plan"], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [{"name": "change_plan", "arguments": {"customer_id": "CUS-1001", "plan": "team"}}]}},
    ], "expect": {"tool_counts": {"change_plan": 1}}}
    await passes(convo)


async def test_a_repeat_charge_asked_back_before_the_email_is_offered_once_the_account_is_found():
    """"i want it back" before the email: the request and the day stay said, so the charges
    found on the email are answered with the refund's offer, not "tell me if you'd like it"."""
    convo = {"name": "a repeat, asked back, email after", "turns": [
        {"customer": "the 29.99 from march 11 is a repeat of the one before it, i want it back", "expect": {"not_tools": MONEY}},
        {"customer": "sami.meyer18@example.com", "expect": {"offers": ["refund_charge"], "reply": ["$29.99"], "not_tools": MONEY}},
        {"customer": "yes please", "expect": {"tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9059", "amount": 29.99}}]}},
    ], "expect": {"tool_counts": {"refund_charge": 1}}}
    await passes(convo)


def test_days_in_brackets_after_their_month_are_dates():
    from supportdesk.models.offline.slots import Date, extract_dates

    assert extract_dates("charged 2x in march (10th & 11th) pls sort") == [Date(3, 10), Date(3, 11)]
    assert extract_dates("the one from april (the 2nd)") == [Date(4, 2)]
