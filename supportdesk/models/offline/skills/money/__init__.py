"""The money skill (an agent holding `refund_charge` / `find_charges`): what the customer asks of
their money, the charges as read, duplicates, refunds within the desk's limit for the agent's
level (above it, passed up: see ../senior.py), credits, and the offers a "yes" takes up.

This module holds the skill's entry (`MoneySkill._money`) and its dispatch by what is asked;
the parts it dispatches to are modules of this folder, each a mixin of `MoneySkill`:
`intents.py` (what a message asks, with `asks.py`: what a question is about), `plans.py` (plan
changes met here, a plan found in the price list by its words), `offers.py` (the reply
to an offer), `reads.py` (the charges as read and named), `refunds.py` (which charge, the offer,
the call, the policy's refusals), `results.py` (what a tool did), `credit.py` (account credits);
`base.py` declares what the parts use of one another."""

from __future__ import annotations

import dataclasses
from typing import Any

from supportdesk.engine.protocol import Answer, CallTools, Transfer
from supportdesk.models.offline import cues, dialogue
from supportdesk.models.offline import slots as slot_extraction
from supportdesk.models.offline.skills.common import PLAN_CHANGE_ASKED
from supportdesk.models.offline.skills.money.credit import CREDIT_AMOUNT_QUESTION, MoneyCredit
from supportdesk.models.offline.skills.money.heard import LEARNED_DUPLICATE_CONFIDENCE, QUESTION_CONFIDENCE, heard_duplicate
from supportdesk.models.offline.skills.money.intents import NEXT_ONE, ACTION_INTENTS, MoneyIntents
from supportdesk.models.offline.skills.money import asks
from supportdesk.models.offline.skills.money.base import INTENT_OF
from supportdesk.models.offline.skills.money.base import ANYTHING_ELSE
from supportdesk.models.offline.skills.money.declines import MoneyDeclines
from supportdesk.models.offline.skills.money.offers import MoneyOffers
from supportdesk.models.offline.skills.money.plans import MoneyPlans, plan_change_answer
from supportdesk.models.offline.skills.money.reads import WHICH_CHARGE, MoneyReads
from supportdesk.models.offline.skills.money.refunds import MoneyRefunds
from supportdesk.models.offline.skills.money.results import MoneyResults
from supportdesk.readers import acts

# The names the module had before it was split, still importable from here.
__all__ = [
    "ACTION_INTENTS", "ANYTHING_ELSE", "CREDIT_AMOUNT_QUESTION", "LEARNED_DUPLICATE_CONFIDENCE", "QUESTION_CONFIDENCE",
    "REMOVE_CARD_REPLY", "WHICH_CHARGE", "MoneySkill", "heard_duplicate", "plan_change_answer",
]

# A card on file cannot just be taken away: the subscription is paid with it.
REMOVE_CARD_REPLY = (
    "I can't remove the card on file while your subscription is active: the plan is paid with it. "
    "I can replace it with another card: tell me which one (for example \"visa ending 4242\"). "
    "If you'd rather stop paying altogether, I can cancel the subscription instead."
)
# What changes the account (as against what is only read: invoices, prices, the next payment).
_CHANGES = {"payment", "cancel", "plan"}
_READS = {"invoice", "next_payment", "my_plan", "card_on_file", "last_payment", "failed_payment"}
_BESIDE = {"invoice", "next_payment", "pricing"}  # the reads said beside a refund's offer
_LOOKUPS = {"find_customer", "find_charges", "list_invoices", "list_plans"}


def _said_first(said: str, action: Any, *, before_lookup: bool = False) -> Any:
    """`action` with `said` said before it (its own text after, or before its calls). Before a
    lookup nothing is said unless `before_lookup` (otherwise the step after it says it, with
    what it leads to)."""
    if not said:
        return action
    if isinstance(action, Answer):
        return dataclasses.replace(action, text=f"{said} {action.text}".strip())
    if isinstance(action, CallTools) and (before_lookup or any(c.name not in _LOOKUPS for c in action.calls)):
        return dataclasses.replace(action, text=f"{said} {action.text}".strip())
    return action


_TOOL_OF = {intent: tool for tool, intent in INTENT_OF.items()}


class MoneySkill(MoneyIntents, MoneyPlans, MoneyOffers, MoneyDeclines, MoneyReads, MoneyRefunds, MoneyResults, MoneyCredit):
    def _money(self, text: str):
        v, step = self.view, self.step
        # A matter that waited its turn, handed here on a message about the one before it: what
        # the waiting text asks is what is answered (its month, its charge), not the thanks.
        # (A request for an action is carried from the topic as before, and offered, not taken
        # as asked by the thanks: only what it reads is read from it.)
        handed = self.handed_matter()
        if handed and not self._intents_of(handed) & (ACTION_INTENTS | {"credit", "duplicate"}):
            text = handed
        latest_results = self._money_results()
        if latest_results is not None:
            return self._and_the_rest(latest_results)

        escalated = self._escalated_refund()
        if escalated is not None:
            return escalated

        asked = self._asked(text)
        joined = self._joined_reads(text, asked)
        asked |= joined
        offer = dialogue.open_offer(v.context, len(v.customer_messages))
        instead = (self._another_plan_named(offer, text) or self._another_card_named(offer, text)) if text and v.offer_answer != "yes" else None
        if instead is not None:
            return instead
        if offer is not None and text:
            answer = self._answer_offer(offer, asked, text)
            if answer is not None:
                return answer

        declined = self._after_decline(asked, text)
        if declined is not None:
            return declined

        taken = self._plan_question_taken(asked, text)
        if taken is not None:
            return taken

        told = self._plan_told(asked, text)
        if told is not None:
            return told

        if not asked and asks.cancelling_asked_about(text):
            # What cancelling would do, asked in words no cue reads as the cancellation: the
            # facts of it, before the message is taken for another team's matter (issue 38).
            return self._about_action({"cancel"}, text, plan_change_answer)
        if not asked and self._strays(text):
            # A new matter of its own that asks nothing of money ("my account's been compromised"):
            # not a follow-up to carry the last request into, and not ours to answer.
            return self._hand_back(text)
        if not asked and NEXT_ONE.search(text) and (self._about_charges() or self._carried_intents() & _READS):
            # "and when is the next one?" after a charge, or after a read of how the account pays
            # (its card, its invoices): the one after it is the next payment.
            asked = {"next_payment"}
        if not asked:
            # A follow-up question in words no rule lists ("ok and when do you charge it next"
            # after the card): the desk intents reader's read of the account, not the topic's.
            asked = self._read_asked_by_the_reader(text)
        # "Which plan am I on?" is answered once: a later message asking nothing is not it again.
        # Until the account is found it is not answered: "sorry typo: sami.meyer18@..." after an
        # email that matched nothing is the question's account, and the question stands (issue 38).
        answered = {"my_plan"} if self._account_known_before_this_turn() else set()
        intents = asked or (self._carried_intents() - answered)
        if not intents and self._card_for_the_change(text):
            intents = {"payment"}
        if not intents and not self._about_charges(text) and self._outside_my_scope(text):
            # (A question about a month's or a day's charges, "whats on my account for march?
            # CUS-1018", is this job's with no charge word: answered from the charges below.)
            return self._hand_back(text)
        if "refund" in asked and asked <= {"refund", "cancel"} and self._asks_how_refunds_work(text):
            # "how long does a refund take to reach my card?", "do you give refunds if i cancel
            # mid month?": a question about refunds, naming no charge; answered as asked, with
            # nothing offered that a "yes" would set off.
            return step.answer(self._refunds_explained(cancelling="cancel" in asked))
        if intents == {"pricing"}:
            moved = self._priced_and_asked_for(text)
            if moved is not None:
                return moved
            priced = self._pricing(text)
            if isinstance(priced, Answer) and asks.asks_what_is_lost(text):
                # "how much would starter be, and would we lose what we already paid?": two
                # questions, the price and what a change does to the period paid for; both are
                # answered (the change's facts end with their own "tell me if you'd like to").
                said = priced.text.removesuffix(f" {PLAN_CHANGE_ASKED}")
                return dataclasses.replace(priced, text=f"{said} {plan_change_answer(text)}")
            return priced
        if asked & ACTION_INTENTS and asks.asks_what_it_would_do(text):
            # "if I cancel today, am I billed for May?", "how would a refund work?": asked about,
            # not asked for (the act reader's reading; issue 38): the facts, nothing done or offered.
            return self._about_action(asked, text, plan_change_answer, priced=asks.price_asked(text))
        if "plan" in asked and cues.PLAN_CHANGE_QUESTION.search(text):
            # "if I downgrade now do I lose what I paid?": what a change would mean, not the change.
            return step.answer(plan_change_answer(text))
        if intents == {"remove_card"}:
            # No tool removes a card, and nothing is changed: what can be done, so they can choose.
            return step.answer(REMOVE_CARD_REPLY)
        known = self._customer_id() or v.facts.emails or v.facts.customer_ids
        if intents == {"invoice"} and cues.WHERE_TO_FIND.search(text) and not known:
            # Where invoices are needs no account; listing them does (and is done once we know it).
            return step.answer(
                "You can download every invoice and receipt as a PDF under Settings > Billing > Invoices. "
                "If you'd like, tell me the email on your account and I'll list them here."
            )

        if "pricing" in intents and len(intents) > 1 and intents - {"pricing"} <= _READS - {"my_plan"}:
            # A price and a read of the account asked together ("how much is team and what's my
            # february invoice number?"): the price needs no account and is said first, then the
            # rest is read as it would be alone, in the one reply (issue 38, two19).
            priced = self._pricing(text)
            if isinstance(priced, CallTools):
                return priced  # the price list (or the account it is set against) is read first
            if isinstance(priced, Answer):
                said = priced.text.removesuffix(f" {PLAN_CHANGE_ASKED}")
                customer_id = self._customer_id()
                if customer_id is None:
                    return _said_first(said, self._identify(intents - {"pricing"}))
                answers, lookup = self._reads_answered(intents - {"pricing"}, customer_id, text)
                if lookup is not None:
                    return lookup  # (the step after it says the price and the read together)
                return _said_first(" ".join([said] + [a.text for a in answers[:-1]]), answers[-1])
        customer_id = self._customer_id()
        if customer_id is None:
            return self._identify(intents)
        done = self._done_this_turn()
        if done:
            # What this turn already carried out is not asked about again (two requests in one
            # message: after the first is done, the step goes on with the other; held-5 money).
            intents, asked = intents - done, asked - done
        if len(joined & _READS) > 1 and intents <= _READS - {"my_plan"}:
            # Two reads of the account asked in one message ("when's our next payment, and can
            # you send me the january invoice too?"): each answered as it would be alone, in the
            # one reply, not the first rule's one only (issue 38, held-26, two26). (The plan's
            # answer already says the card it bills, and is left to `_money_for`'s joined answer.)
            answers, lookup = self._reads_answered(intents, customer_id, text)
            if lookup is not None:
                return lookup
            return _said_first(" ".join(a.text for a in answers[:-1]), answers[-1])
        reads = asked & _READS
        if reads and asked & _CHANGES:
            # Two requests in one message ("send me my february invoice and change my card to
            # ...", "upgrade me to team, and when's my next payment?"): what is only read (it
            # changes nothing) is answered first, then the change is put to the customer in the
            # same reply, as it would be alone.
            answers, lookup = self._reads_answered(reads, customer_id, text)
            if lookup is not None:
                return lookup
            step.resolved = False  # the change is still to come
            rest = self._money_for(intents - reads, asked - reads, customer_id, text)
            return _said_first(" ".join(a.text for a in answers), rest)
        beside = self._reads_beside_refund(text) if asked & {"refund", "duplicate"} else {}
        if beside:
            # A read of the account asked beside a refund ("billed twice in march, and when is my
            # next payment?"): said first, the refund's offer after it, so its question is last
            # and the customer's yes answers it (issue 38, h32). Each read from its own clause.
            read_out: list[str] = []
            for read, part in sorted(beside.items()):
                shown = self._pricing(part) if read == "pricing" else self._read_only(read, customer_id, part)
                if not isinstance(shown, Answer):
                    return shown  # (a lookup first: the step after it says the read and the offer)
                read_out.append(shown.text.removesuffix(f" {PLAN_CHANGE_ASKED}"))
            step.resolved = False  # the refund is still to come
            rest = self._money_for(intents - set(beside), asked - set(beside), customer_id, text)
            return _said_first(" ".join(read_out), rest)
        return self._money_for(intents, asked, customer_id, text)

    def _reads_beside_refund(self, text: str) -> dict[str, str]:
        """The reads (an invoice, the next payment, a price) asked in a clause of their own beside a
        refund, each with its clause: the clause alone names what it reads ("pro" is the price's)."""
        # (each piece once, its edges' punctuation dropped: the two splits overlap, and a piece
        # read twice costs a second extraction of its slots, tests/test_turn_cpu.py)
        parts = dict.fromkeys(p.strip(" ,.;") for p in (*acts.clauses(text), *cues.QUESTIONS_JOINED.split(text)))
        return {i: p for p in parts if p and (got := self._intents_of(p)) and got <= _BESIDE for i in got}

    def _joined_reads(self, text: str, asked: set[str]) -> set[str]:
        """Two questions joined in one message ("how much does pro cost monthly and when is my
        next charge?"), each read on its own: what each part asks that only reads (a price, the next
        payment, an invoice, the plan), though the whole's rules keep one ("next payment" drops the
        price of "how much is my next invoice"). Nothing is added beside an action asked."""
        parts = cues.QUESTIONS_JOINED.split(text)
        if len(parts) < 2 or asked & (ACTION_INTENTS | {"duplicate", "credit"}):
            return set()
        found: set[str] = set()
        for part in parts:
            got = self._intents_of(part)
            if got and got <= _READS | {"pricing"}:
                found |= got
        return found

    def _reads_answered(self, reads: set[str], customer_id: str, text: str) -> tuple[list[Answer], Any]:
        """Each request that changes nothing answered in turn, or the lookup one of them needs
        first (the next step answers with what it read)."""
        answers: list[Answer] = []
        for read in sorted(reads):
            shown = self._read_only(read, customer_id, text)
            if not isinstance(shown, Answer):
                return answers, shown
            answers.append(shown)
        return answers, None

    def _read_only(self, read: str, customer_id: str, text: str):
        """The answer to a request that changes nothing (invoices, the next payment, the plan)."""
        if read == "invoice":
            listed = self.view.last_call("list_invoices", this_turn=True)
            if listed is None:
                return self.step.call("list_invoices", {"customer_id": customer_id}, customer_id=customer_id)
            return self._invoices_answer(listed, text)
        if read == "next_payment":
            return self._next_payment(customer_id)
        if read == "card_on_file":
            return self._card_on_file(customer_id)
        if read == "last_payment":
            return self._last_payment(customer_id)
        if read == "failed_payment":
            return self._failed_payment(customer_id)
        return self._my_plan(customer_id)

    def _money_for(self, intents: set[str], asked: set[str], customer_id: str, text: str):
        """What the customer asks of an account we know, by what they ask for."""
        v, step = self.view, self.step
        ctx = {"customer_id": customer_id}
        if "next_payment" in intents and not intents & {"refund", "duplicate", "cancel", "plan"}:
            past = self._past_charge_asked(text)
            if past is None:
                return self._next_payment(customer_id)
            # Two questions in one message ("when was I charged in feb, and when is the next
            # one?"): the charges asked about, then the next payment, in one reply.
            charges = self._charges(customer_id)
            if charges is None:
                return step.call("find_charges", {"customer_id": customer_id}, **ctx)
            said = self._charges_answer(charges, past)
            if not isinstance(said, Answer):
                return said
            return _said_first(said.text, self._next_payment(customer_id))
        if intents == {"my_plan"} or intents == {"my_plan", "pricing"}:
            return self._my_plan(customer_id, with_price="pricing" in intents, text=text)
        if len(intents) > 1 and intents <= _READS:
            # Two questions that change nothing in one message ("which card is on my account and
            # what plan am i on?"): each read from the account, answered in one reply (the plan's
            # answer says the payment method too: `_my_plan`, so it is not read twice).
            reads = intents - {"card_on_file"} if "my_plan" in intents else intents
            answers, lookup = self._reads_answered(reads, customer_id, text)
            if lookup is not None:
                return lookup
            return _said_first(" ".join(a.text for a in answers[:-1]), answers[-1])
        unheld = [i for i in ("cancel", "plan", "payment") if i in asked and not v.has_tool(_TOOL_OF[i])]
        if unheld and self.return_target() is not None and not intents & {"refund", "duplicate", "credit"}:
            # A change this agent holds no tool for (a senior agent asked for a new card): back to
            # triage with the request, for the agent that holds it; the account found stays in
            # the shared context, so nobody asks for the email again (issue 38).
            return self._hand_to_holder(text, _TOOL_OF[unheld[0]])
        if intents == {"card_on_file"}:
            return self._card_on_file(customer_id)
        if intents == {"last_payment"}:
            return self._last_payment(customer_id)
        if intents == {"failed_payment"}:
            return self._failed_payment(customer_id)
        if "credit" in intents:
            return self._credit(customer_id, text)
        if "cancel" in intents:
            # "is it possible to cancel?" asks whether, not yet to: offered first, as a plan change is.
            return self._cancel(customer_id, explicit="cancel" in asked and not cues.ASKS_IF_POSSIBLE.search(text))
        if "plan" in intents and "refund" in asked:
            read, record = self._read_account(customer_id)
            if read is not None:
                return read
            if cues.plan_request(text)[0] == record.get("plan"):
                # "i went down from pro to starter mid march, refund me the pro days i didn't use":
                # the plan the words would move to is the one the account holds, so no change is
                # asked; the refund is, and the refund policy answers it (money-16).
                intents = intents - {"plan"}
        if "plan" in intents:
            return self._change_with_its_price(customer_id, text, asked)
        if "payment" in intents:
            return self._payment_method(customer_id, text)
        if "invoice" in intents:
            if not v.last_call("list_invoices", this_turn=True):
                return step.call("list_invoices", {"customer_id": customer_id}, **ctx)
            return self._invoices_answer(v.last_call("list_invoices", this_turn=True), text)

        today = self._reads_today_first(customer_id, text)
        if today is not None:
            return today  # "yesterday" is a day of the business data's calendar: read it first
        charges = self._charges(customer_id)
        if charges is None:
            if v.called_with("find_charges", {"customer_id": customer_id}):
                return step.answer(f"I can't find any charges for account {customer_id}. Could you check the email address on the account?")
            return step.call("find_charges", {"customer_id": customer_id}, **ctx)
        if "refund" in intents or "duplicate" in intents:
            return self._refund_flow(customer_id, charges, intents, text, explicit="refund" in asked)
        if not self._about_charges(text) and not slot_extraction.names_a_day_or_month(text):
            # (A day or a month named to billing with nothing else asked, "this past wednesday,
            # what came off my amex", is a charge's day: its charges are shown; issue 38.)
            # Nothing says what they want, nor that it is about a charge: ask, rather than
            # propose something of our own that a "yes" would then set off.
            return step.answer(
                "I can help with charges and refunds, invoices, plan changes, cancellations and payment methods. "
                "What would you like me to do?"
            )
        return self._charges_answer(charges, text)

    def _hand_to_holder(self, text: str, tool: str):
        """Back to triage with a request for `tool`, naming the agent triage hands to that holds it."""
        v = self.view
        action = self._hand_back(text)
        entry = v.desk.agents.get(v.desk.desk.entry)
        holders = [n for n in (entry.handoffs if entry else []) if n in v.desk.agents and tool in v.desk.agents[n].tools]
        if len(holders) == 1 and isinstance(action, Transfer):
            action.context = {**action.context, "pending_agent": holders[0]}
        return action

    def _done_this_turn(self) -> set[str]:
        """The requests an account action carried out this turn ("refund" covers "duplicate")."""
        done = {INTENT_OF[t.name] for t in self.view.turn_tools if t.name in INTENT_OF and t.ok and not t.waiting}
        return done | {"duplicate"} if "refund" in done else done

    def _and_the_rest(self, action: Any) -> Any:
        """After an action's result, the other action the same message asked for ("refund the
        duplicate and cancel my subscription"): said after the result, and put to the customer
        as it would be alone (one offer at a time: the desk's gate asks one question)."""
        done = self._done_this_turn()
        if not done or not isinstance(action, Answer):
            return action
        left = (self._intents_of(self.view.latest) & (set(INTENT_OF.values()) | {"duplicate"})) - done
        customer_id = self._customer_id()
        if not left or customer_id is None:
            return action
        return _said_first(action.text, self._money_for(left, left, customer_id, self.view.latest), before_lookup=True)
