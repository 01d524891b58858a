"""Issue 33: a consequential call runs only on the customer's yes to the desk's offer of exactly
that call, whatever the model (engine/runner.py's gate, engine/confirmation.py's reader)."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from supportdesk.config import ConfigError, parse_desk
from supportdesk.engine.confirmation import answer_meta, hedged, names_another, read_answer, records_in, rest_after_yes
from supportdesk.engine.errors import TurnError
from supportdesk.engine.events import Appended
from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, Transfer
from supportdesk.engine.runner import drain
from supportdesk.engine.tools import Tool, ToolRegistry
from supportdesk.items import Confirmation, Decline, Item, Message, Notice, Offer, Takeover, ToolCall, ToolResult
from supportdesk.wiring import open_desk
from tests.conftest import REPO, TEST_DESK, TEST_REFUND_LIMITS
from tests.scripted import ScriptedModel

EVALS = REPO / "evals"


# --- the declarations -------------------------------------------------------------------------


def test_the_shipped_tools_declare_what_they_do():
    from supportdesk.tools import registry

    consequential = {
        "refund_charge", "issue_credit", "change_plan", "cancel_subscription", "update_payment_method", "send_password_reset",
    }
    desk = parse_desk((REPO / "agents.toml").read_text(), "agents.toml", tool_names=registry.names())
    waits = {name for name in registry.names() if registry.get(name).needs_confirmation(desk)}  # type: ignore[union-attr]
    assert waits == consequential
    assert set(registry.with_effect("money")) == {"refund_charge", "issue_credit"}
    for name in registry.with_effect("reads"):
        assert not registry.get(name).needs_confirmation(desk)  # type: ignore[union-attr]


def test_the_figures_count_as_money_what_the_tools_declare_as_money():
    """The store cannot import the tools (layers): its list of money tools is checked against
    the tools' own declarations, so the two never drift (issue 36 item 1)."""
    from supportdesk.store.figures import MONEY_TOOLS
    from supportdesk.tools import registry

    assert set(MONEY_TOOLS) == set(registry.with_effect("money"))


def test_a_tool_that_only_reads_cannot_ask_for_a_confirmation():
    with pytest.raises(ValueError, match="only reads"):
        Tool("peek", "look", BaseModel, lambda ctx, args: None, effect="reads", confirm="customer")


def test_a_desk_overrides_a_tools_confirmation_and_names_only_real_tools():
    from supportdesk.tools import registry

    text = (REPO / "agents.toml").read_text()
    desk = parse_desk(text + '\n[confirm]\nsend_password_reset = "none"\nlist_plans = "customer"\n', "a.toml", tool_names=registry.names())
    assert not registry.get("send_password_reset").needs_confirmation(desk)  # type: ignore[union-attr]
    assert not registry.get("list_plans").needs_confirmation(desk)  # type: ignore[union-attr]  # reads: never
    with pytest.raises(ConfigError) as caught:
        parse_desk(text + '\n[confirm]\nrefund_everything = "none"\n', "b.toml", tool_names=registry.names())
    assert caught.value.problems == [
        f"b.toml: confirm.refund_everything: no tool named 'refund_everything'; valid tools: {', '.join(registry.names())}"
    ]


# --- the reader, measured on answers written before it ---------------------------------------------


def _rows(part: str) -> list[dict[str, str]]:
    return [json.loads(line) for line in (EVALS / f"confirmation-{part}.jsonl").read_text().splitlines() if line.strip()]


def _holds_the_bar(part: str, rows: list[dict[str, str]], got: list[tuple[dict[str, str], str]], capsys) -> None:  # type: ignore[no-untyped-def]
    right = sum(r["label"] == answer for r, answer in got)
    # The error that matters, reported apart: an answer that is not a yes read as a yes.
    not_yes_as_yes = [r["text"] for r, answer in got if answer == "yes" and r["label"] != "yes"]
    yes_missed = [r["text"] for r, answer in got if r["label"] == "yes" and answer != "yes"]
    with capsys.disabled():
        print(f"\nconfirmation reader, {part}: {right}/{len(rows)} right ({right / len(rows):.0%}); "
              f"not-yes read as yes: {len(not_yes_as_yes)}; yes missed: {len(yes_missed)}")
    assert not_yes_as_yes == []
    assert right / len(rows) >= 0.9
    assert len(yes_missed) <= len([r for r in rows if r["label"] == "yes"]) // 10


@pytest.mark.parametrize("part", ["tune", "held"])
def test_the_reader_on_labelled_answers(part, capsys):
    rows = _rows(part)
    assert {r["label"] for r in rows} == {"yes", "no", "change_of_mind", "question", "other"}
    got = [(r, read_answer(r["text"])) for r in rows]
    _holds_the_bar(part, rows, got, capsys)


@pytest.mark.parametrize(
    "text",
    ["yes, but not the duplicate", "yes no", "yes, wait", "Yes if it doesn't cost more", "sure, the other one though",
     "ok, but first tell me what happens to my files", "yes?", "not yes", "YES!!! ... actually no",
     # A request for a person is no yes, "please" or not (the agent's question is an offer now).
     "I want to talk to a real person please", "i want a human please", "ok let me speak to someone",
     # Issue 38: an obstacle denied with a condition or an aside, another time, a question after
     # a weak ok, a person after the yes, a real word that looks like a misspelt yes.
     "no problem if it is free", "i dont mind waiting", "not a problem but not now", "i don't mind either way",
     "you can do it tomorrow", "ok, can i get a discount", "ok and what happens to my files?",
     "yes go ahead, and i want a manager to look at it", "year", "find it", "yes, and also the other one",
     # The shapes of the public dialogues' (SGD) answers that turn an offer down or correct it,
     # in our own words: politeness around another choice, nothing more wanted, another time,
     # a yes whose second part may change the offer.
     "please make it the annual one", "I'd like 2 seats please", "please change the date to the 12th",
     "ok that's all I needed", "I'm good for now thanks", "for now it's fine", "let's do it at 3pm",
     "ok change to annual", "good morning", "ok, i understand", "ah i see, thanks", "got it", "yes, and I'd like the annual plan", "yes. refund the second one",
     # Taking leave, and a weak "ok" beside words of its own, acknowledge: they do not consent.
     "ok thanks, bye", "ok bye", "k ty bye", "great, cheers, bye", "alright, have a nice day", "ok see you",
     "ok. night", "ok noted, cheers mate", "great, speak soon",
     # The "ya" of "see ya" is no yes beside the goodbye (confirmation-6's held half caught it).
     "cool, see ya", "sure, see ya later", "ok cya"],
)
def test_a_yes_with_anything_against_it_is_not_a_yes(text):
    assert read_answer(text) != "yes"


@pytest.mark.parametrize(
    "text",
    # Issue 38: informal, misspelt and non-native yeses, and an obstacle denied ("no problem").
    ["okey, you can do it", "i dont mind, go ahead", "no problem, go on with it", "not a problem, do it", "yesss",
     "shure, go ahead", "ok sure, make it", "why not, go ahead", "oki doki, u can proceed", "okey", "shure", "yeh",
     "cool, do it", "exactly", "please refund it", "fine by me", "ok, refund it", "yes do it, bye", "ok great"],
)
def test_an_informal_yes_is_a_yes(text):
    assert read_answer(text) == "yes"


@pytest.mark.parametrize(
    ("text", "rest"),
    [("yes do it, and also send me the invoice too", "send me the invoice too"),
     ("yep go ahead. and when is my next payment?", "when is my next payment?"),
     ("yes please refund it, and also reset my password", "reset my password"),
     ("yes", ""), ("ok, and what happens to my files?", "")],
)
def test_a_yes_with_a_request_after_it_is_a_yes_and_the_request_is_kept(text, rest):
    # (Before issue 38 "yes, and also reset my password" was no yes: the refund the customer
    # agreed to did not run. The yes runs the offer; the rest is answered after it.)
    assert rest_after_yes(text) == rest
    assert (read_answer(text) == "yes") == (text != "ok, and what happens to my files?")


@pytest.mark.parametrize(
    ("text", "rest"),
    [("yes do it, and refund january too, I hardly used it", "refund january too, i hardly used it"),
     ("yep go ahead and also the february one, it was a mistake", "the february one, it was a mistake"),
     ("ok sure. refund the 2nd march one as well", "refund the 2nd march one as well"),
     # The rest with no verb of its own borrows the yes's.
     ("yes please refund that, and the february one as well", "refund the february one as well")],
)
def test_a_yes_with_another_charge_asked_on_top_runs_the_offer_and_keeps_the_request(text, rest):
    # Issue 38: a month or a day after the yes reshapes the offer ("yes, the march one"), but
    # said to come on top ("too", "as well", "also") it is a second request, answered after.
    assert read_answer(text) == "yes" and rest_after_yes(text) == rest
    # In its place it is no yes to the offer as it stands.
    assert read_answer("yes, and the january one instead") != "yes"


def test_a_yes_that_names_another_charge_than_the_offered_one_is_caught():
    offered = {"charge_id": "CH-9004", "amount": 29.99, "reason": "duplicate charge"}
    records = records_in([json.dumps({"charges": [
        {"id": "CH-9003", "charged_on": "2026-03-01", "amount": 29.99},
        {"id": "CH-9004", "charged_on": "2026-03-03", "amount": 29.99},
    ]})])
    for other in (
        "yes, the one on the 1st", "yes refund CH-9003", "yes, the march 1st charge", "ok, the 129.99 one",
        "yes, refund the february one", "yes please, the charge from january",
    ):
        assert names_another(other, offered, records), other
    for same in (
        "yes", "yes, the one on the 3rd", "yes refund ch-9004", "yes please refund 29.99", "yes, 3rd of march",
        "yes, the march one", "yes you may go ahead", "yes refund it, and the february one as well",
    ):
        assert not names_another(same, offered, records), same
    # A date nothing in the log can check is taken as another (asked again, nothing run).
    assert names_another("yes, the one on the 3rd", offered, [])


# --- the learned reader and its vetoes (issue 38) ------------------------------------------------


def _offered_rows(part: str) -> list[dict[str, str]]:
    return [json.loads(line) for line in (EVALS / f"confirmation-{part}.jsonl").read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("part", ["6-tune", "6-held"])
def test_the_reader_on_answers_written_before_it_learned(part, capsys):
    """evals/confirmation-6-*.jsonl were written before the reader learned (commit "evals:
    confirmation-6, ..."): on the held half the rules alone read 6 of 27 yeses as not-a-yes and
    one goodbye ("cool, see ya") as a yes."""
    rows = _offered_rows(part)
    got = [(r, read_answer(r["text"], r.get("offer", ""))) for r in rows]
    _holds_the_bar(part, rows, got, capsys)


@pytest.mark.parametrize("part", ["17-tune", "17-held"])
def test_the_reader_on_terse_go_aheads(part, capsys):
    """evals/confirmation-17-*.jsonl (terse go-aheads and their near misses) were written before
    the reader learned them: tune 18/32 and held 15/31 before, no non-yes read as yes. Not one
    may be read as a yes; the floors are the figures after `_LONE_GO`."""
    rows = _offered_rows(part)
    got = [(r, read_answer(r["text"], r.get("offer", ""))) for r in rows]
    right = sum(r["label"] == answer for r, answer in got)
    with capsys.disabled():
        print(f"\nconfirmation reader, {part}: {right}/{len(rows)} right")
    assert [r["text"] for r, answer in got if answer == "yes" and r["label"] != "yes"] == []
    assert right >= {"17-tune": 27, "17-held": 18}[part]


# The blind half's answers still read as a yes although they only confirm a fact the offer
# named (a date, a code, a seat count): known, and never to grow.
ACK_HELD_KNOWN_YES = {
    "yep 5 seats, all taken",
    "yes SPRING25 is the code I used, I still have the email with it",
    "yes the 22nd, that's when it always comes out",
    "right, June 2 is when we removed Mark's seat",
    "yes that's the charge I saw on my statement",
}


@pytest.mark.parametrize("part", ["ack-tune", "ack-held"])
def test_the_reader_on_a_finding_acknowledged_not_agreed_to(part, capsys):
    """evals/confirmation-ack-*.jsonl: answers to an offer that acknowledge what it found
    ("perfect, thanks for finding that", "ok good to know", "yes that's the charge I saw on my
    statement") and yeses with words around them. The tune half is the probe that found the rules
    reading 14 of its 20 acknowledgements as a yes (`_doubted`, `_ONLY_THANKS`); the held half was
    written blind after it and read once: 68 / 90 (5 acknowledgements read as a yes, each naming
    a charge, a day, a code or a count, which `_doubted` spares as a pointer at what the offer
    listed, "go for it, the one from the 25th"; 17 yeses asked again). The reader read it the
    same before this change: the acknowledgements the probe found are rarer in blind writing."""
    rows = _offered_rows(part)
    got = [(r, read_answer(r["text"], r.get("offer", ""))) for r in rows]
    right = sum((r["label"] == "yes") == (answer == "yes") for r, answer in got)
    with capsys.disabled():
        print(f"\nconfirmation reader, {part}: {right}/{len(rows)} right")
    read_as_yes = {r["text"] for r, answer in got if answer == "yes" and r["label"] != "yes"}
    assert read_as_yes <= (ACK_HELD_KNOWN_YES if part == "ack-held" else set())
    assert right >= {"ack-tune": 30, "ack-held": 68}[part]


@pytest.mark.parametrize("text", ["go", "go!", "gogo", "ok go", "go now pls", "make it so", "ship it", "that's a go"])
def test_a_lone_go_ahead_is_a_yes(text):
    # held-22: a plan change offered, then "go": the offer closed as "other" and nothing ran.
    assert read_answer(text, "Shall I move CUS-1004 to the team plan, starting now?") == "yes"


@pytest.mark.parametrize(
    "text",
    ["go away", "go to hell", "go back to the menu", "go home", "go?", "go pro", "make it so the plan is pro",
     "ship it tomorrow", "execute me", "don't go"],
)
def test_go_beside_other_words_is_not_a_yes(text):
    assert read_answer(text, "Shall I move CUS-1004 to the team plan, starting now?") != "yes"


@pytest.mark.parametrize(
    "text",
    # Hedged, but plainly a go-ahead: before issue 38 "guess", "suppose", "probably" or "think"
    # anywhere made the answer a no, and the desk asked twice.
    ["i guess so, do it", "ok i suppose, go ahead", "probably for the best, yes please", "i think so, yes go ahead",
     "yes please, and thank you so much for sorting this out",
     "yeah go ahead, give it back"],
)
def test_a_hedged_or_wordy_yes_is_a_yes(text):
    assert read_answer(text) == "yes"


@pytest.mark.parametrize(
    "text",
    ["i guess not", "probably not, thanks", "i suppose i could wait", "i think i'll leave it", "i guess, but not today",
     "i suppose so?", "probably yes, if it is free", "i think so, but let me ask my wife first", "i guess the other one",
     "probably, bye", "i suppose thanks"],
)
def test_a_doubt_beside_a_no_a_condition_or_a_question_is_not_a_yes(text):
    assert read_answer(text) != "yes"


@pytest.mark.parametrize(
    "text",
    # security-13: a hesitation that opens the answer is a pause, and a clear yes after it is a yes
    # (before, "hmm" anywhere was a no: "hmm ok sure" closed the reset link's offer).
    ["hmm ok sure", "mm ok go on then", "hmm ok fine", "umm yes please", "hm, yes", "hmmm yes do it"],
)
def test_a_clear_yes_after_a_hesitation_is_a_yes(text):
    assert read_answer(text, "Shall I send the reset link now?") == "yes"


@pytest.mark.parametrize(
    "text",
    # ... and anything less than a clear yes after it is none: a shrug, a no, a not-yet, a
    # question, thanks, a condition, a hesitation in the middle.
    ["hmm", "hmm ok", "hmm fine", "hmm ok ok", "ummm ok", "hmm, no wait", "hmm not sure yet, let me think", "hmm sure?",
     "uh sure, but later", "hmm yes but not today", "hmm ok thanks", "hmm ok great thanks bye", "hmm, i guess so",
     "hmm yes if it's free", "ok hmm sure", "yes umm wait", "hmm ok, what does SSO mean?"],
)
def test_a_hesitation_with_less_than_a_clear_yes_is_not_a_yes(text, monkeypatch):
    """Even with a learned reader that says yes to everything (the pause's yes is the rules' alone)."""
    from supportdesk.engine import confirmation

    always_yes = confirmation.AnswerReader({"yes": {"<len:1>": 1}, "no": {"<len:3>": 1}}, {"yes": 1000, "no": 1})
    monkeypatch.setattr(confirmation, "answer_reader", lambda: always_yes)
    assert read_answer(text, "Shall I send the reset link now?") != "yes"


@pytest.mark.parametrize(
    "text",
    ["yes, but not the duplicate", "yes if it doesn't cost more", "ok sure, the cheaper one", "yes? what does it cost",
     "ok, bye now", "yes, talk to a manager", "yes please wait", "ok thanks", "ah i see, thank you", "sure, let me try it first",
     "yes, and the january one instead", "thanks a lot",
     # "please" is politeness, not assent: a request of its own is no yes to the offer.
     "please add my colleague to the account", "please order me a new card"],
)
def test_the_vetoes_stand_against_a_learned_reader_that_reads_every_answer_as_a_yes(text, monkeypatch):
    """The learned reader may only add a yes where no veto stands: a reader that says yes to
    everything still cannot make these a yes."""
    from supportdesk.engine import confirmation

    always_yes = confirmation.AnswerReader({"yes": {"<len:1>": 1}, "no": {"<len:3>": 1}}, {"yes": 1000, "no": 1})
    monkeypatch.setattr(confirmation, "answer_reader", lambda: always_yes)
    assert always_yes.read(text)[0] == "yes"
    assert read_answer(text) != "yes"
    assert read_answer("yes, thank you so much for explaining all of that to me") == "yes"  # (no veto: the yes stands)


SECOND = "You have two charges of $29.99. Shall I refund the second one, CH-9005 (March 3)? Please answer yes or no."


@pytest.mark.parametrize("text", ["yes, the second one", "the second charge, go ahead", "yeah the second one please"])
def test_a_yes_that_points_at_what_the_offer_names_is_a_yes(text):
    assert read_answer(text, SECOND) == "yes"
    assert read_answer(text) != "yes"  # without the offer it may point at another
    assert read_answer(text, SECOND.replace("second", "first")) != "yes"
    assert read_answer("ok, just a second", SECOND) != "yes"  # a moment, not a pointer


def test_a_change_of_mind_that_names_the_other_option_is_one():
    for text in ["not pro, i want team", "no i meant the starter plan", "nope, the annual plan"]:
        assert read_answer(text) == "change_of_mind", text
    assert read_answer("no, leave my plan alone") == "no"


def test_the_learned_reader_is_read_on_first_use_not_on_import():
    probe = (
        "from supportdesk.engine import confirmation as c\n"
        "assert c.answer_reader.cache_info().currsize == 0\n"
        "assert c.read_answer('yes') == 'yes' and c.answer_reader.cache_info().currsize == 0\n"
        "assert c.read_answer('i guess so, go ahead') == 'yes' and c.answer_reader.cache_info().currsize == 1\n"
    )
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr

# --- the gate on a desk with a scripted model ----------------------------------------------------


class RefundArgs(BaseModel):
    amount: float


class CancelArgs(BaseModel):
    account: str


class Nothing(BaseModel):
    pass


def gated_tools() -> tuple[ToolRegistry, list[tuple[str, dict[str, Any]]]]:
    """A refund (money, confirmed by the customer, staff above the threshold), a cancellation
    (account) and a lookup (reads); every call that really runs is recorded."""
    registry = ToolRegistry()
    ran: list[tuple[str, dict[str, Any]]] = []

    @registry.tool("refund", "Refund", RefundArgs, effect="money", confirm="customer", limits=TEST_REFUND_LIMITS,
                   describe=lambda a: f"refund ${a.amount:.2f}")
    def refund(ctx, args: RefundArgs):
        ran.append(("refund", {"amount": args.amount}))
        return {"refunded": args.amount}

    @registry.tool("cancel", "Cancel", CancelArgs, effect="account", confirm="customer",
                   describe=lambda a: f"cancel the subscription of {a.account}")
    def cancel(ctx, args: CancelArgs):
        ran.append(("cancel", {"account": args.account}))
        return {"cancelled": args.account}

    @registry.tool("lookup", "Look", Nothing)
    def lookup(ctx, args):
        return {"found": True}

    return registry, ran


GATED_DESK = TEST_DESK.replace('tools = ["refund", "explode"]', 'tools = ["refund", "cancel", "lookup"]').replace(
    'level = 2\ntools = ["refund"]', 'level = 2\ntools = ["refund", "cancel", "lookup"]'
)


def gated_desk(extra: str = ""):
    return parse_desk(GATED_DESK + extra, "gated.toml", tool_names=["refund", "cancel", "lookup"])


def call(name: str, **arguments: Any) -> CallTools:
    return CallTools([RequestedCall(f"call_{name}", name, arguments)])


async def items_of(events) -> list[Item]:
    return [e.item for e in await drain(events) if isinstance(e, Appended)]


async def offered(db_path, script, extra: str = ""):
    """A desk whose billing agent is asked for a refund of $5 and calls it at once."""
    tools, ran = gated_tools()
    desk = await open_desk(db_path, gated_desk(extra), provider=ScriptedModel(script), tools=tools, customers=False)
    first = await items_of(desk.runner.send(None, "refund the duplicate please"))
    return desk, first[0].session_id, first, ran


async def test_a_call_that_needs_a_yes_is_offered_not_run(db_path):
    desk, sid, items, ran = await offered(db_path, [Transfer("billing", "money"), call("refund", amount=5)])
    async with desk:
        assert ran == []
        [offer] = [i for i in items if isinstance(i, Offer)]
        assert (offer.tool, offer.arguments, offer.agent) == ("refund", {"amount": 5}, "billing")
        # The customer is asked in words they can check: the action and its amount.
        said = [i for i in items if isinstance(i, Message) and i.role == "agent"][-1]
        assert said.text == offer.text and "refund $5.00" in said.text and said.meta["offer_id"] == offer.offer_id
        result = next(i for i in items if isinstance(i, ToolResult))
        assert result.is_error and result.output.startswith("not run")
        assert await desk.runner.unfinished_turn(sid) is None  # the turn ended, waiting for the customer


async def test_a_desk_that_turns_the_gate_off_for_a_tool_runs_it(db_path):
    desk, _, items, ran = await offered(db_path, [Transfer("billing", "money"), call("refund", amount=5), Answer("done")],
                                        extra='\n[confirm]\nrefund = "none"\n')
    async with desk:
        assert ran == [("refund", {"amount": 5})] and not [i for i in items if isinstance(i, Offer)]


async def test_yes_runs_exactly_the_offered_call_and_the_agent_reads_the_result(db_path):
    seen: list[Any] = []

    def answer(request):
        seen.append(request.history)
        return Answer("refunded")

    desk, sid, first, ran = await offered(db_path, [Transfer("billing", "money"), call("refund", amount=5), answer])
    async with desk:
        items = await items_of(desk.runner.send(sid, "yes please"))
        [offer] = [i for i in first if isinstance(i, Offer)]
        assert ran == [("refund", {"amount": 5})]
        confirmation, run_call, result = items[1:4]
        assert isinstance(confirmation, Confirmation) and confirmation.offer_id == offer.offer_id
        assert confirmation.source == "text" and confirmation.answer_seq == items[0].seq
        assert isinstance(run_call, ToolCall) and run_call.arguments == offer.arguments
        assert isinstance(result, ToolResult) and not result.is_error
        assert seen[-1][-1] == result  # the agent's step saw the result
        # A yes later confirms nothing more.
        await items_of(desk.runner.send(sid, "yes"))
        assert ran == [("refund", {"amount": 5})]


@pytest.mark.parametrize(
    ("answer", "why"),
    [("no", "no"), ("hold on", "no"), ("not yet", "no"), ("never mind", "no"),
     ("no, the other plan instead", "change_of_mind"), ("will I lose my files?", "question"), ("my app crashes", "other"),
     ("ok thanks, bye", "other")],
)
async def test_anything_but_a_yes_closes_the_offer_and_runs_nothing(db_path, answer, why):
    desk, sid, _, ran = await offered(db_path, [Transfer("billing", "money"), call("refund", amount=5), Answer("ok")])
    async with desk:
        items = await items_of(desk.runner.send(sid, answer))
        [decline] = [i for i in items if isinstance(i, Decline)]
        assert (decline.why, decline.source) == (why, "text")
        await items_of(desk.runner.send(sid, "yes"))  # a yes to an offer already closed
        assert ran == []


async def test_the_gate_reads_a_pointer_at_what_the_offer_names_as_its_yes(db_path):
    """The runner gives the reader the offer's words: "yes, the second one" runs the refund
    whose offer names the second charge, and no other."""
    registry = ToolRegistry()
    ran: list[float] = []

    @registry.tool("refund", "Refund", RefundArgs, effect="money", confirm="customer", limits=TEST_REFUND_LIMITS,
                   describe=lambda a: f"refund ${a.amount:.2f} on the second of your two charges")
    def refund(ctx, args: RefundArgs):
        ran.append(args.amount)
        return {"refunded": args.amount}

    script = [Transfer("billing", "money"), call("refund", amount=5), Answer("refunded")]
    desk = await open_desk(db_path, gated_desk(), provider=ScriptedModel(script), tools=registry, customers=False)
    async with desk:
        first = await items_of(desk.runner.send(None, "refund the duplicate please"))
        items = await items_of(desk.runner.send(first[0].session_id, "yes, the second one"))
        assert [i for i in items if isinstance(i, Confirmation)] and ran == [5]


async def test_an_explicit_request_after_a_no_is_offered_again(db_path):
    script = [Transfer("billing", "money"), call("refund", amount=5), call("refund", amount=7)]
    desk, sid, _, ran = await offered(db_path, script)
    async with desk:
        items = await items_of(desk.runner.send(sid, "no, refund $7 instead"))
        assert [i.why for i in items if isinstance(i, Decline)] == ["change_of_mind"]
        [again] = [i for i in items if isinstance(i, Offer)]
        assert again.arguments == {"amount": 7} and ran == []


async def test_a_yes_that_names_another_sum_runs_nothing(db_path):
    """The runner asks `names_another` of a text yes: "yes, refund $7" to an offer of $5 is no yes
    to the offer as it stands (a change of mind), so the $5 is never refunded on it."""
    script = [Transfer("billing", "money"), call("refund", amount=5), Answer("asked again")]
    desk, sid, _, ran = await offered(db_path, script)
    async with desk:
        items = await items_of(desk.runner.send(sid, "yes, refund $7"))
        assert [i.why for i in items if isinstance(i, Decline)] == ["change_of_mind"]
        assert not [i for i in items if isinstance(i, Confirmation)] and ran == []


async def test_a_call_the_policy_refuses_is_not_offered(db_path):
    desk, _, items, ran = await offered(db_path, [Transfer("billing", "money"), call("refund", amount=100), Answer("no")])
    async with desk:
        assert not [i for i in items if isinstance(i, Offer)] and ran == []
        assert any(isinstance(i, ToolResult) and i.output.startswith("refused by policy") for i in items)


async def test_the_customers_yes_then_staff_approval_then_the_refund(db_path):
    script = [Transfer("billing", "money"), Transfer("senior", "big"), call("refund", amount=300), Answer("waiting for staff"), Answer("approved and done")]
    desk, sid, first, ran = await offered(db_path, script)
    async with desk:
        assert [i.tool for i in first if isinstance(i, Offer)] == ["refund"]
        items = await items_of(desk.runner.send(sid, "yes"))
        [asked] = [i for i in items if isinstance(i, Notice) and i.notice_kind == "approval_requested"]
        assert ran == []  # the customer said yes; staff have not
        await items_of(desk.runner.decide_approval(sid, asked.data["approval_id"], True))
        assert ran == [("refund", {"amount": 300})]


async def test_a_takeover_expires_the_offer(db_path):
    desk, sid, _, ran = await offered(db_path, [Transfer("billing", "money"), call("refund", amount=5), Answer("ok")])
    async with desk:
        await desk.runner.takeover(sid)
        [decline] = await desk.store.of_kind(sid, "decline")
        assert (decline.why, decline.source) == ("expired", "staff")
        await items_of(desk.runner.send(sid, "yes"))  # held: waits for the person
        await desk.runner.release(sid)
        await items_of(desk.runner.send(sid, "yes"))
        assert ran == []


async def test_staff_withdraw_an_offer(db_path):
    desk, sid, _, ran = await offered(db_path, [Transfer("billing", "money"), call("refund", amount=5), Answer("ok")])
    async with desk:
        withdrawn = await desk.runner.withdraw_offer(sid)
        assert isinstance(withdrawn, Decline) and withdrawn.why == "withdrawn" and withdrawn.source == "staff"
        await items_of(desk.runner.send(sid, "yes"))
        assert ran == []
        with pytest.raises(TurnError, match="no offer is open"):
            await desk.runner.withdraw_offer(sid)


async def test_a_button_answers_only_its_own_offer(db_path):
    script = [Transfer("billing", "money"), call("refund", amount=5), call("cancel", account="A1"), Answer("done")]
    desk, sid, first, ran = await offered(db_path, script)
    async with desk:
        [old] = [i for i in first if isinstance(i, Offer)]
        await items_of(desk.runner.send(sid, "actually cancel my account A1 instead"))
        # A stale button (the first offer's yes) never confirms the new offer, whatever its text.
        await desk.runner.receive(sid, "Yes, refund $5.00", meta=answer_meta(old.offer_id, True))
        items = await items_of(desk.runner.retry_turn(sid))
        assert [(i.why, i.source) for i in items if isinstance(i, Decline)] == [("other", "button")]
        assert ran == []


async def test_a_button_yes_runs_the_offer(db_path):
    desk, sid, first, ran = await offered(db_path, [Transfer("billing", "money"), call("refund", amount=5), Answer("done")])
    async with desk:
        [offer] = [i for i in first if isinstance(i, Offer)]
        await desk.runner.receive(sid, "Yes, refund $5.00", meta=answer_meta(offer.offer_id, True))
        items = await items_of(desk.runner.retry_turn(sid))
        assert [i.source for i in items if isinstance(i, Confirmation)] == ["button"]
        assert ran == [("refund", {"amount": 5})]


async def test_a_yes_the_customer_took_back_before_the_desk_read_it_runs_nothing(db_path):
    """Two messages stored before a turn runs (a channel's 202): the offer answers only the first,
    and the turn answers the last, so the offer lapses rather than be read from a stale yes."""
    desk, sid, _, ran = await offered(db_path, [Transfer("billing", "money"), call("refund", amount=5), Answer("ok")])
    async with desk:
        await desk.runner.receive(sid, "yes")
        await desk.runner.receive(sid, "wait, no")
        items = await items_of(desk.runner.retry_turn(sid))
        assert [(i.why, i.source) for i in items if isinstance(i, Decline)] == [("expired", "desk")]
        assert ran == []


async def test_the_same_call_asked_again_after_the_yes_is_not_run_twice(db_path):
    script = [Transfer("billing", "money"), call("refund", amount=5), call("refund", amount=5), Answer("done")]
    desk, sid, _, ran = await offered(db_path, script)
    async with desk:
        items = await items_of(desk.runner.send(sid, "yes"))
        assert ran == [("refund", {"amount": 5})]
        assert not [i for i in items if isinstance(i, Offer)]
        assert any(isinstance(i, ToolResult) and i.output.startswith("already done") for i in items)


# --- the model's own question is the offer (one ask, not two) -------------------------------------


def asked(text: str, name: str, **arguments: Any) -> CallTools:
    """A step that asks in the model's words and makes the call in the same step."""
    return CallTools([RequestedCall(f"call_{name}", name, arguments)], text=text)


def agent_lines(items: list[Item]) -> list[str]:
    return [i.text for i in items if isinstance(i, Message) and i.role == "agent"]


async def test_a_models_question_naming_the_action_and_amount_is_the_offer_asked_once(db_path):
    question = "I found the duplicate. Shall I refund $5.00 for it?"
    desk, sid, first, ran = await offered(db_path, [Transfer("billing", "money"), asked(question, "refund", amount=5), Answer("refunded")])
    async with desk:
        [offer] = [i for i in first if isinstance(i, Offer)]
        # One question: the model's, carried by the offer (its buttons go under it).
        assert agent_lines(first) == [question] and offer.text == question
        said = next(i for i in first if isinstance(i, Message) and i.role == "agent")
        assert said.meta["offer_id"] == offer.offer_id and first.index(said) == first.index(offer) - 1
        assert ran == []
        items = await items_of(desk.runner.send(sid, "yes please"))
        assert ran == [("refund", {"amount": 5})]  # exactly the offered call, on the first yes
        assert [i for i in items if isinstance(i, Confirmation)] and agent_lines(items) == ["refunded"]


@pytest.mark.parametrize("text", [
    "Would you like me to refund it?",  # no amount: nothing the customer can check
    "Shall I refund $7.00?",  # another amount than the call's
    "I'll refund $5.00 now.",  # not a question
    "Shall I cancel $5.00?",  # another action
])
async def test_a_models_text_that_does_not_state_the_call_is_followed_by_the_engines_offer(db_path, text):
    desk, _, first, ran = await offered(db_path, [Transfer("billing", "money"), asked(text, "refund", amount=5)])
    async with desk:
        [offer] = [i for i in first if isinstance(i, Offer)]
        assert agent_lines(first) == [text, offer.text] and offer.text.startswith("Before I do anything: shall I refund $5.00?")
        assert ran == []


def test_what_a_question_must_name_comes_from_the_tool():
    from supportdesk.engine.confirmation import states_the_call
    from supportdesk.tools import registry

    refund = registry.get("refund_charge")
    plan = registry.get("change_plan")
    assert refund is not None and plan is not None
    terms = refund.offer_terms({"charge_id": "CH-9004", "amount": 29.99, "reason": "duplicate charge"})
    assert states_the_call("The one on March 3 is a duplicate of $29.99. Would you like me to refund it?", terms)
    for wrong in ("Would you like me to refund $129.99?", "Shall I refund $29.9?", "Shall I credit $29.99?", "Refund $29.99."):
        assert not states_the_call(wrong, terms), wrong
    renewal = plan.offer_terms({"customer_id": "CUS-1001", "plan": "team", "billing_period": "annual", "when": "renewal"})
    assert states_the_call("Shall I move you to the Team plan, billed annually, at your next renewal?", renewal)
    assert not states_the_call("Shall I move you to the Team plan, billed annually, now?", renewal)
    assert not states_the_call("Shall I move you to the Pro plan, billed annually, at renewal?", renewal)


# --- the property: nothing consequential runs without its confirmation ----------------------------

MODEL_MOVES = st.one_of(
    st.just(("answer",)),
    st.just(("lookup",)),
    st.tuples(st.just("refund"), st.sampled_from([5, 7, 12])),
    st.tuples(st.just("cancel"), st.sampled_from(["A1", "B2"])),
    st.tuples(st.just("both"), st.sampled_from([5, 7])),
)
CUSTOMER_MOVES = st.one_of(
    st.tuples(st.just("say"), st.sampled_from([
        "yes", "yes please", "sure, do it", "no", "hold on", "actually the other one", "will I lose my files?",
        "refund the duplicate", "hello", "not yet", "never mind", "please do",
    ])),
    st.tuples(st.just("button"), st.booleans(), st.booleans()),  # (yes?, of the newest offer or a stale one)
    st.just(("takeover",)),
    st.just(("release",)),
)


def _step(move: tuple) -> Any:
    match move:
        case ("answer",):
            return Answer("ok")
        case ("lookup",):
            return call("lookup")
        case ("refund", amount):
            return call("refund", amount=amount)
        case ("cancel", account):
            return call("cancel", account=account)
        case ("both", amount):
            return CallTools([RequestedCall("c1", "refund", {"amount": amount}), RequestedCall("c2", "cancel", {"account": "A1"})])
    raise AssertionError(move)


async def _play(db: Path, model: list[tuple], customer: list[tuple]) -> None:
    tools, ran = gated_tools()
    script = [Transfer("billing", "money"), *(_step(m) for m in model)]
    desk = await open_desk(db, gated_desk(), provider=ScriptedModel(script), tools=tools, customers=False)
    async with desk:
        sid = (await items_of(desk.runner.send(None, "hi, I need help with my bill")))[0].session_id
        for move in customer:
            held = await desk.runner.held_by(sid)
            match move:
                case ("say", text):
                    await items_of(desk.runner.send(sid, text))
                case ("button", yes, newest):
                    offers = await desk.store.of_kind(sid, "offer")
                    if not offers:
                        continue
                    target = offers[-1] if newest else offers[0]
                    await desk.runner.receive(sid, "Yes" if yes else "No", meta=answer_meta(target.offer_id, yes))
                    await items_of(desk.runner.retry_turn(sid))
                case ("takeover",):
                    if held is None:
                        await desk.runner.takeover(sid)
                case ("release",):
                    if held is not None:
                        await desk.runner.release(sid)
        log = await desk.store.range(sid, 1, await desk.store.last_seq(sid))
    _check(log, ran)


def _check(log: list[Item], ran: list[tuple[str, dict[str, Any]]]) -> None:
    """Every consequential call that ran has a confirmation that names the same tool and
    arguments as its offer and answers the customer message right after that offer; and every
    run is one confirmation's."""
    offers = {i.offer_id: i for i in log if isinstance(i, Offer)}
    runs: list[tuple[str, dict[str, Any]]] = []
    for at, item in enumerate(log):
        if not (isinstance(item, ToolResult) and item.name in ("refund", "cancel") and not item.is_error):
            continue
        call_at = next(n for n in range(at, -1, -1) if isinstance(log[n], ToolCall) and log[n].call_id == item.call_id)
        run_call = log[call_at]
        confirmation = log[call_at - 1]
        assert isinstance(confirmation, Confirmation), f"{run_call} ran without a confirmation right before it"
        offer = offers[confirmation.offer_id]
        assert (offer.tool, offer.arguments) == (confirmation.tool, confirmation.arguments) == (run_call.name, run_call.arguments)
        after_offer = [i for i in log if i.seq > offer.seq and isinstance(i, Message) and i.role == "customer"]
        assert after_offer and after_offer[0].seq == confirmation.answer_seq, "the yes is not the message right after its offer"
        between = [i for i in log if offer.seq < i.seq < confirmation.seq]
        assert not any(isinstance(i, Takeover) for i in between), "an offer was taken up after a takeover"
        runs.append((run_call.name, run_call.arguments))
    def same(calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
        return sorted(json.dumps([name, {k: float(v) if isinstance(v, int) else v for k, v in args.items()}]) for name, args in calls)

    assert same(runs) == same(ran)
    # An offer is answered at most once.
    answered = [i.offer_id for i in log if isinstance(i, (Confirmation, Decline))]
    assert len(answered) == len(set(answered))


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(MODEL_MOVES, min_size=1, max_size=16), st.lists(CUSTOMER_MOVES, min_size=1, max_size=10))
@example([("refund", 5), ("answer",)], [("say", "yes")])
@example([("refund", 5), ("refund", 7), ("answer",)], [("say", "hello"), ("say", "yes"), ("button", True, False)])
@example([("refund", 5), ("answer",)], [("takeover",), ("say", "yes"), ("release",), ("say", "yes")])
def test_no_consequential_call_runs_without_the_confirmation_of_its_offer(model, customer) -> None:
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(_play(Path(folder) / "desk.db", model, customer))


def test_the_property_check_catches_a_call_run_without_a_yes() -> None:
    """The check itself fails on a log where a refund ran with no confirmation (so the property
    above can fail)."""
    log: list[Item] = [
        Message(seq=1, role="customer", text="refund please"),
        ToolCall(seq=2, call_id="c1", name="refund", arguments={"amount": 5}),
        ToolResult(seq=3, call_id="c1", name="refund", output="{}"),
    ]
    with pytest.raises(AssertionError, match="without a confirmation"):
        _check(log, [("refund", {"amount": 5})])


# --- a real LLM's desk, in a real process ----------------------------------------------------------


def test_a_model_that_refunds_straight_away_gets_an_offer_and_the_yes_runs_it(tmp_path: Path) -> None:
    """The OpenAI-compatible path (tests/fake_llm_server.py): billing calls refund_charge on the
    first message; `run --json` shows the offer, no refund is made, and the customer's yes in
    the next run makes it once."""
    from fake_llm_server import FakeLLMServer
    from tests.test_hardening_runner import _answer, _call, _cli, _desk_file, _refunds

    db = tmp_path / "desk.db"
    refund = {"charge_id": "CH-9004", "amount": 29.99, "reason": "duplicate charge"}
    with FakeLLMServer() as server:
        server.push(_call("transfer_to_billing", {"reason": "duplicate charge"}), _call("refund_charge", refund))
        desk = _desk_file(tmp_path, server)
        ran = _cli("run", "--db", str(db), "--config", str(desk), "--json", "I'm dana@example.com, I was charged $29.99 twice, refund it")
        assert ran.returncode == 0, ran.stderr
        lines = [json.loads(line) for line in ran.stdout.splitlines()]
        [offer] = [line for line in lines if line.get("kind") == "offer"]
        assert offer["tool"] == "refund_charge" and offer["arguments"] == refund and "$29.99" in offer["text"]
        assert asyncio.run(_refunds(db)) == []
        session = next(line["session"] for line in lines if "session" in line)
        server.push(_answer("Refunded $29.99."))
        ran = _cli("run", "--db", str(db), "--config", str(desk), "--json", "--session", session, "yes please")
        assert ran.returncode == 0, ran.stderr
        lines = [json.loads(line) for line in ran.stdout.splitlines()]
        [confirmation] = [line for line in lines if line.get("kind") == "confirmation"]
        assert confirmation["offer_id"] == offer["offer_id"] and confirmation["arguments"] == refund
    assert [(r["charge_id"], r["amount"]) for r in asyncio.run(_refunds(db))] == [("CH-9004", 29.99)]


def test_an_llm_that_asks_and_calls_in_one_step_asks_the_customer_once(tmp_path: Path) -> None:
    """The OpenAI-compatible path: the model's reply names the amount and calls refund_charge in
    the same step; the customer sees that one question (no second engine sentence) and the yes
    runs the refund."""
    from fake_llm_server import Complete, FakeLLMServer
    from tests.test_hardening_runner import _answer, _call, _cli, _desk_file, _refunds

    db = tmp_path / "desk.db"
    refund = {"charge_id": "CH-9004", "amount": 29.99, "reason": "duplicate charge"}
    question = "Shall I refund $29.99 on CH-9004?"
    with FakeLLMServer() as server:
        both = _call("refund_charge", refund)
        both = Complete({**both.message, "content": question}, finish_reason="tool_calls")
        server.push(_call("transfer_to_billing", {"reason": "duplicate charge"}), both)
        desk = _desk_file(tmp_path, server)
        ran = _cli("run", "--db", str(db), "--config", str(desk), "--json", "I'm dana@example.com, I was charged $29.99 twice")
        assert ran.returncode == 0, ran.stderr
        lines = [json.loads(line) for line in ran.stdout.splitlines()]
        [offer] = [line for line in lines if line.get("kind") == "offer"]
        said = [line["text"] for line in lines if line.get("kind") == "message" and line.get("role") == "agent"]
        assert said == [question] and offer["text"] == question and offer["arguments"] == refund
        session = next(line["session"] for line in lines if "session" in line)
        server.push(_answer("Refunded $29.99."))
        ran = _cli("run", "--db", str(db), "--config", str(desk), "--json", "--session", session, "yes please")
        assert ran.returncode == 0, ran.stderr
    assert [(r["charge_id"], r["amount"]) for r in asyncio.run(_refunds(db))] == [("CH-9004", 29.99)]


# --- the TUI -------------------------------------------------------------------------------------


async def test_the_tui_shows_the_open_offer_and_staff_withdraw_it(db_path):
    from supportdesk.tui.app import SupportDeskApp
    from supportdesk.tui.widgets import ContextInspector, Conversation, Prompt
    from tests.tui_seed import until

    desk, sid, _, ran = await offered(db_path, [Transfer("billing", "money"), call("refund", amount=5), Answer("ok")])
    app = SupportDeskApp(desk=desk, session_id=sid)
    try:
        async with app.run_test(size=(140, 44)) as pilot:
            await until(pilot, lambda: app.chat is not None and app.chat.loaded == sid)
            inspector = app.chat.query_one(ContextInspector)
            await until(pilot, lambda: inspector.offer is not None)
            assert inspector.offer.action == "refund $5.00"
            assert inspector.get_row("__offer__")  # the inspector's first row: the offer, waiting
            assert any(isinstance(i, Offer) for i in app.chat.query_one(Conversation).items)
            prompt = app.chat.query_one(Prompt)
            prompt.value = "/withdraw"
            await pilot.press("enter")
            await until(pilot, lambda: inspector.offer is None)
        [decline] = await desk.store.of_kind(sid, "decline")
        assert (decline.why, decline.source) == ("withdrawn", "staff")
        await items_of(desk.runner.send(sid, "yes"))
        assert ran == []
    finally:
        await desk.close()


async def test_stats_count_offers_made_accepted_declined_and_expired_per_tool_and_agent(db_path):
    from supportdesk.items import utcnow
    from supportdesk.reports.stats import desk_stats, stats_json

    script = [Transfer("billing", "money"), call("refund", amount=5), Answer("done"),
              call("refund", amount=7), call("cancel", account="A1")]
    desk, sid, _, ran = await offered(db_path, script)
    async with desk:
        await items_of(desk.runner.send(sid, "yes"))  # accepted: the refund of $5 runs
        await items_of(desk.runner.send(sid, "and $7 more please"))  # offered again
        await items_of(desk.runner.send(sid, "no"))  # declined; the model offers a cancellation
        await desk.runner.takeover(sid)  # which lapses
        figures = stats_json(await desk_stats(desk.store, desk.config, "all", utcnow()))
    assert ran == [("refund", {"amount": 5})]
    assert figures["offers"] == [
        {"tool": "cancel", "agent": "billing", "made": 1, "accepted": 0, "declined": 0, "expired": 1},
        {"tool": "refund", "agent": "billing", "made": 2, "accepted": 1, "declined": 1, "expired": 0},
    ]


@pytest.mark.postgres
async def test_the_gate_on_postgresql(pg_url):
    """The same offer, yes and run, on PostgreSQL (the gate's reads: the offers' seqs, the log
    from the last one)."""
    tools, ran = gated_tools()
    script = [Transfer("billing", "money"), call("refund", amount=5), Answer("done")]
    async with await open_desk(pg_url, gated_desk(), provider=ScriptedModel(script), tools=tools, customers=False) as desk:
        first = await items_of(desk.runner.send(None, "refund the duplicate please"))
        sid = first[0].session_id
        [offer] = [i for i in first if isinstance(i, Offer)]
        assert ran == []
        items = await items_of(desk.runner.send(sid, "yes"))
        assert [i.offer_id for i in items if isinstance(i, Confirmation)] == [offer.offer_id]
        assert ran == [("refund", {"amount": 5})]


# --- issue 38 (offers-7): a yes in the offer's own words, with no word of assent ------------------

_RESET_OFFER = ("I can email a password reset link to the address on file for your account; it's valid for 30 minutes. "
                "Shall I send the reset link now?")
_REFUND_OFFER = "Just to be sure: shall I refund $29.99 for the charge on March 3, 2026?"


@pytest.mark.parametrize("text", ["do it", "do it.", "do it please", "do that now"])
def test_do_it_is_an_imperative_not_a_question(text):
    """"do it" after an offer is a yes (held-9 config: "do it" was read as a question opened by
    the auxiliary "do", so the reset link was offered again); "do it?" and "does it work" still ask."""
    assert read_answer(text, _RESET_OFFER) == "yes"
    assert read_answer(text + "?", _RESET_OFFER) == "question" and read_answer("does it work", _RESET_OFFER) == "question"


@pytest.mark.parametrize(
    ("text", "offer"),
    [("go on then", _REFUND_OFFER), ("fine, go on", _REFUND_OFFER), ("now the reset link pls", _RESET_OFFER),
     ("the reset link now please", _RESET_OFFER), ("can you send me the reset link please", _RESET_OFFER),
     ("could u send the link now?", _RESET_OFFER)],
)
def test_the_offers_own_words_asked_for_are_a_yes(text, offer):
    """No assent word, but nothing beyond the offer's own words and a learned go-ahead (or a
    request for the offered action): held-6's "go on then" after a list, "now the reset link pls"."""
    assert read_answer(text, offer) == "yes"


@pytest.mark.parametrize(
    ("text", "offer"),
    [("can you send it to my other email", _RESET_OFFER), ("can you tell me more?", _RESET_OFFER),
     ("please buy me the insurance", "Shall I book the hotel?"), ("could you refund the other one?", _REFUND_OFFER),
     ("can you send the reset link to my phone instead", _RESET_OFFER), ("can you do it tomorrow?", _REFUND_OFFER),
     ("now the invoice pls", _RESET_OFFER), ("can you send me my invoice", _RESET_OFFER),
     # Another action, in words the rules let stand beside a yes: no yes without one.
     ("i want to cancel", _REFUND_OFFER), ("update my card", _REFUND_OFFER), ("send me the link", _REFUND_OFFER),
     ("i want my money back", _RESET_OFFER), ("me", _REFUND_OFFER), ("reset my password", _REFUND_OFFER)],
)
def test_words_beyond_the_offer_are_no_yes(text, offer):
    assert read_answer(text, offer) != "yes"


@pytest.mark.parametrize("text", ["i guess so?", "if that's the only way i guess", "if that's the only way", "i suppose so", "i think so"])
def test_a_hedge_is_neither_a_yes_nor_a_no(text):
    """offers-7: a reluctant leaning to yes runs nothing, and is no refusal either: it is read as
    a question, and the money skill puts the same offer once more, plainly."""
    assert hedged(text)
    assert read_answer(text, _REFUND_OFFER) == "question"


@pytest.mark.parametrize("text", ["i guess not", "only if it is free", "if it's free, later", "i think i'll wait",
                                  "i guess the other one", "probably not, thanks"])
def test_doubt_beside_a_refusal_or_another_choice_is_no_hedge(text):
    # ("maybe" alone is the customer still deciding, a hedge since money-15: tests/test_money_15.py)
    assert not hedged(text)
    assert read_answer(text, _REFUND_OFFER) != "yes"
