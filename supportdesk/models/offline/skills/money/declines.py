"""What the money agent does after the desk's gate closed its offer on anything but a yes (part of
the money skill, ./__init__.py): a no that changes nothing, the same call put again after a hedge,
a question about the action or a wait for someone's word, and the offer put again when the reply
told how another matter went. Apart because it reads the answer the gate already gave (issue 38)."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from supportdesk.engine.confirmation import hedged, request_clauses
from supportdesk.models.offline import cues, dialogue
from supportdesk.models.offline.skills.account import ABOUT_CANCELLING, ABOUT_CARDS
from supportdesk.models.offline.skills.common import nice_date
from supportdesk.models.offline.skills.money import asks
from supportdesk.models.offline.skills.money.base import ANYTHING_ELSE, INTENT_OF, NOT_YET, STAYS, TAKE_YOUR_TIME, MoneyBase
from supportdesk.models.offline.skills.money.plans import plan_change_facts
from supportdesk.models.offline.skills.technical import tells_trouble
from supportdesk.models.offline.view import ToolEvent
from supportdesk.readers import acts

# Said before an offer put again when the reply told how another matter went (`_offer_put_again_on_report`).
WORKING_NOW = "Glad to hear that's working now."
STILL_TROUBLE = "I'm sorry that's still giving you trouble: we'll come to it next."

# What the desk says of an offered action asked about before the yes (`_facts_of`; a plan change's
# and a cancellation's are said from the message and the account). Not a refund's: a question
# after one offered points at the charges listed with it ("the first one, what was it for?"),
# answered from them (`_answer_offer`), and one above this agent's limit is put on another's behalf.
_FACTS_OF = {"payment": ABOUT_CARDS, "cancel": ABOUT_CANCELLING, "plan": ""}


class MoneyDeclines(MoneyBase):
    def _after_decline(self, asked: set[str], text: str):
        """The desk's gate read this message as a "no" to its offer (or as no yes, and it turns
        the offer down: "i'll keep it"): say nothing changed, and do not put the same action to
        the customer again in this reply (unless this very message asks for it anew, "no,
        refund the other one")."""
        v = self.view
        if any(h.from_agent == self.me.name for h in v.turn_handoffs):
            # Passed on after the decline, in this turn, and back for the matter that pass queued
            # again (the steps' report sent to their agent, `_steps_report_elsewhere`): the
            # decline was answered then, and the matter is taken up anew, offered again.
            return None
        taken_up = self._taken_up_again(asked, text)
        if taken_up is not None:
            return taken_up
        if v.declined_tool is None and not asked and self._after_a_no_reply():
            # "ok" to our "No problem: nothing has been refunded": an acknowledgement, no request.
            return self.step.answer("Alright. Is there anything else I can help with?")
        intent = INTENT_OF.get(v.declined_tool or "")
        again = self._held_again(intent, asked, text)
        if again is not None:
            return again
        if v.offer_answer == "question" and intent == "plan" and not asked:
            return self._pricing(text)  # "hmm is starter cheaper?": what the plans cost, nothing changed
        if v.declined_tool is None or not (v.offer_answer == "no" or (v.offer_answer == "other" and dialogue.refuses(text))):
            return None
        if intent is not None and intent in asked and not cues.DROP.search(text):
            return None
        if asked - {intent, "duplicate"}:
            return None  # a request of its own: answered as such
        what = STAYS.get(intent or "", "nothing has changed")
        return self.step.answer(f"No problem: {what}. {ANYTHING_ELSE}")

    def _taken_up_again(self, asked: set[str], text: str):
        """A refund (or a cancellation) the customer turned down, asked for again in a later message that names no
        charge of its own ("actually go ahead and refund it" after "leave it"): "it" is the
        refund that was offered, so that very call is put to them again, and their yes runs it
        once (the desk's gate asks for it: a request after a no is not the yes). A message that
        names a charge, an amount or a day is read as its own request."""
        v = self.view
        if v.declined_tool is not None or not v.said_no or v.latest_facts():
            return None
        tool = v.said_no[-1][1]
        intent = dialogue.ACCOUNT_ACTIONS.get(tool)
        # Its verb said of "it" asks for it too ("go ahead and cancel it": no subscription named).
        pointed = intent is not None and re.search(rf"\b{intent}\w* (?:it|that)\b", text, re.I) and request_clauses(text)
        if intent not in ("refund", "cancel") or not (intent in asked or pointed) or asked - {intent, "duplicate"}:
            return None
        held = self._held_call(tool)  # (a cancel turned down, then "right, decided. go ahead and cancel it": held-19)
        return None if held is None else self._call_again(held)

    def _held_again(self, intent: str | None, asked: set[str], text: str):
        """The desk's gate held an action for a yes and this message neither took nor refused it:
        a hedge or the customer still deciding ("hmm not sure tbh", "let me think": confirmation
        `hedged`), or, for a plan change, its price asked ("wait how much is pro a month?"). The
        gate closed that offer, so nothing ran; the same call, arguments and all, is put again
        after the answer, and the gate asks for the yes once more: a clear yes then runs exactly
        it, once; a no turns it down (issue 38, money-15). A message that asks for anything else
        is read as its own request."""
        v = self.view
        # ("wait, how much is pro a month?" opens with a word of waiting: read as a no by the
        # gate, which runs nothing either way; a price asked with nothing refused is no refusal.)
        price_asked = intent == "plan" and asks.price_asked(text) and not dialogue.refuses(asks.PAUSE_FIRST.sub("", text))
        # "let me run it past our accountant first": no refusal, the answer waits on someone's word.
        waits = asks.waits_for_someone(text)
        about_it = self._asks_about_the_offer(intent, asked, text) and not price_asked and not waits
        if v.offer_answer not in ("question", "no") or v.offer_answer == "no" and not (price_asked or about_it or waits):
            return None
        if intent is None or asked - {intent, "pricing"} and not (about_it or waits):
            return None
        held = self._held_call(v.declined_tool)
        if held is None:
            return None
        args = dict(held.arguments)
        if waits:
            said = TAKE_YOUR_TIME
        elif about_it:
            # "will i lose my files?", "when does it end?", "what does changing the card cost?":
            # a question about the very action put to them, nothing refused and nothing else
            # asked. Answered with what the desk knows of that action, and the offer stands:
            # the same call is put again, and a later yes in any words runs it once (money-18).
            facts = self._facts_of(str(intent), args, text)
            if not isinstance(facts, str):
                return facts  # the account read first
            said = f"{facts} Nothing has changed yet."
        elif hedged(text) and "pricing" not in asked:
            said = NOT_YET
        elif price_asked and cues.plan_request(text)[0] in (None, args.get("plan")):
            read, plans = self._price_list()
            if read is not None:
                return read
            record = self._customer_record(str(args.get("customer_id", ""))) or {}
            period = str(args.get("billing_period") or record.get("billing_period") or "monthly")
            said = f"{self._change_priced(plans, str(args.get('plan')), period)}Nothing has changed yet."
        else:
            return None
        return self._call_again(held, said)

    def _held_call(self, tool: str | None) -> ToolEvent | None:
        """The call of `tool` the gate held for the yes: the latest made, never one that ran nor a
        refund of a charge refunded since (the one reading an offer put again puts)."""
        held = self.view.last_call(tool) if tool else None
        ran = held is None or held.ok or self._refunded(str(held.arguments.get("charge_id", "")))
        return None if ran else held

    def _call_again(self, held: ToolEvent, said: str | None = None):
        """The held call put again, arguments and all, with the words `said` (else a refund is put
        as any refund is, `_refund_call`): the gate asks for the yes once more."""
        if said is not None:
            return dataclasses.replace(self.step.call(held.name, dict(held.arguments)), text=said)
        return self._refund_call(dict(held.arguments)) if held.name == "refund_charge" else self.step.call(held.name, dict(held.arguments))

    def _asks_about_the_offer(self, intent: str | None, asked: set[str], text: str) -> bool:
        """The gate closed its offer on a question (or a "no" that is only the pause opening one,
        "wait, will i lose my files if i switch?") that asks about the offered action itself: it
        asks nothing else of money, names no charge of its own, and refuses nothing."""
        rest = asks.PAUSE_FIRST.sub("", text)
        return (
            intent is not None and intent in _FACTS_OF and self.view.offer_answer in ("question", "no")
            and asks.is_question(rest) and not dialogue.refuses(rest) and not hedged(text)
            and not asked - {intent, "duplicate", "next_payment"} and not self.view.latest_facts()
        )

    def _facts_of(self, intent: str, args: dict[str, Any], text: str):
        """What the desk knows of an offered action (a str), or the step that reads the account
        first: a cancellation's end of the period paid for is the account's next billing day."""
        if intent == "plan":
            return plan_change_facts(text)
        if intent != "cancel":
            return _FACTS_OF[intent]
        read, record = self._read_account(str(args.get("customer_id", "")))
        if read is not None:
            return read
        return f"{ABOUT_CANCELLING} Your current period is paid until {nice_date(self._next_due(record).isoformat())}."

    def _after_a_no_reply(self) -> bool:
        """Our last reply said a declined offer changed nothing, and this message adds no fact."""
        v = self.view
        said = v.last_agent_text()
        return said.startswith("No problem: ") and said.endswith(ANYTHING_ELSE) and not v.latest_facts()

    def _offer_put_again_on_report(self, text: str):
        """The desk's gate closed this agent's money offer on a reply that tells how something
        else went ("awesome, the app opens now" or "still crashing" after "would you like me to
        refund it?", a crash told beside the refund: `cues.reports_on_steps`): neither a yes nor a
        no to it, so the offer is put again, not dropped for the matter the reply spoke of (that
        one comes next, as it waited). None for any other reply."""
        v = self.view
        failed = cues.STEPS_FAILED.search(text) is not None
        # (the gate reads "still crashing though" as a no: a no to the crash, not to the refund)
        if v.offer_answer not in ("other", "no" if failed else "other") or v.declined_tool not in dialogue.ACCOUNT_ACTIONS:
            return None
        offer = dialogue.open_offer(v.context, len(v.customer_messages))
        if offer is None or dialogue.refuses(text):
            return None
        if _thanks_for_the_finding(text) and not cues.WORKS_NOW.search(text):
            # "perfect, thanks for finding that": thanks for what the offer found, no yes to it
            # (the gate's reading); the action they came for is put to them again, not dropped.
            return self._asked_plainly(offer, lead="You're welcome.", question=self._put_again(offer))
        if not cues.reports_on_steps(text):
            return None
        if failed:
            return self._asked_plainly(offer, lead=STILL_TROUBLE, question=self._put_again(offer))
        action = self._asked_plainly(offer, lead=WORKING_NOW, question=self._put_again(offer))
        # Working now: the trouble told beside the refund, still waiting its turn, is settled by
        # the customer's word ("the app opens now"), not taken up after the yes with its steps.
        waiting = dialogue.pending_issues(v.context)
        left = [m for m in waiting if not tells_trouble(m["text"])]
        if len(left) < len(waiting):
            action.context[dialogue.PENDING_ISSUES] = left or None
        return action


def _thanks_for_the_finding(text: str) -> bool:
    """Every clause of the message thanks, the act reader sure of each ("perfect, thanks for finding
    that", "cool thanks for the info"), none taking leave ("ok thanks, bye", "thanks, that is all")."""
    said = [acts.read_act(clause) for clause in acts.clauses(text)]
    return bool(said) and all(r.act == "thanks" and r.confidence >= THANKS_SURE for r in said)


# How sure the act reader must be that a clause thanks (`_thanks_for_the_finding`).
THANKS_SURE = 0.9
