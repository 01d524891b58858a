"""The money skill (an agent holding `refund_charge` / `find_charges`): what the customer asks of
their money, the charges as read, duplicates, refunds within the desk's limit for the agent's
level (above it, passed up: see senior.py), credits, and the offers a "yes" takes up."""

from __future__ import annotations

import calendar
import dataclasses
import re
from typing import Any

from supportdesk.engine.confirmation import read_answer
from supportdesk.engine.protocol import Answer, CallTools, Transfer
from supportdesk.items import Notice
from supportdesk.models.offline import cues, dialogue
from supportdesk.models.offline import slots as slot_extraction
from supportdesk.models.offline.skills.common import PLAN_CHANGE_ASKED, SkillBase, nice_date
from supportdesk.models.offline.view import ON_OUR_SIDE, ToolEvent
from supportdesk.readers import acts
from supportdesk.text import money

# A card on file cannot just be taken away: the subscription is paid with it.
REMOVE_CARD_REPLY = (
    "I can't remove the card on file while your subscription is active: the plan is paid with it. "
    "I can replace it with another card: tell me which one (for example \"visa ending 4242\"). "
    "If you'd rather stop paying altogether, I can cancel the subscription instead."
)
CREDIT_AMOUNT_QUESTION = "What amount of credit are you asking for?"


# The intents whose action a question can be about rather than ask for (`acts.asks_about_rather_than_for`).
ACTION_INTENTS = {"cancel", "refund", "plan", "payment"}
ANYTHING_ELSE = "Is there anything else I can help with?"
WHICH_CHARGE = "More than one charge fits that:"  # (issue 38: a charge named ambiguously is asked about)



# "it", "that one", "this charge": a charge named before.
_ANAPHOR = re.compile(r"\b(?:it|that|this)(?:\s+(?:one|charge|payment))?\b", re.I)
# "the next one" / "the next 1": after a charge, the charge that comes next.
_NEXT_ONE = re.compile(r"\bnext (?:one|1)\b", re.I)


def plan_change_answer(text: str) -> str:
    """What a plan change made now or at renewal means for money already paid (no change made)."""
    verb = "downgrade" if cues.PLAN_DOWN.search(text) else "upgrade" if cues.PLAN_UP.search(text) else "change plans"
    return (
        f"If you {verb} now, the change takes effect straight away: what you've already paid for this period "
        "isn't refunded or prorated, and nothing extra is charged today; from your next payment you pay the new plan's price. "
        "If you'd rather keep everything you've paid for, the change can be made at your next renewal instead, and nothing "
        f"changes until then. I haven't changed anything: just tell me if you'd like to {verb}, and when."
    )

# How sure the learned intent reader (readers/acts.py: Banking77's train split and the desk's
# labelled examples) must be that a message tells of a duplicate charge for it to count when no
# cue heard any request, and the message speaks of charges or names a month: "charged two time
# for march month, the 24 and 25, give back one", "i was charged 2 times". Only its "duplicate"
# is heard: its "refund" is where Banking77's money messages fall by default ("what do i pay a
# month for my plan?" reads refund 0.975).
LEARNED_DUPLICATE_CONFIDENCE = 0.95


def heard_duplicate(text: str) -> bool:
    """The learned intent reader hears a duplicate charge told in words no cue lists."""
    reading = acts.read_intent(text)
    return reading.act == "duplicate" and reading.confidence >= LEARNED_DUPLICATE_CONFIDENCE


# How sure the act reader (readers/acts.py) must be that a message about refunds is no request.
QUESTION_CONFIDENCE = 0.9
_CHARGE_ID = re.compile(r"\bch[- ]?\d{3,}\b", re.I)
# A move asked for without the plan's name ("ok move me to it", "switch me then").
_MOVE = re.compile(r"\b(?:move|switch|put|upgrade|downgrade|change)\b", re.I)
# What changes the account (as against what is only read: invoices, prices, the next payment).
_CHANGES = {"payment", "cancel", "plan"}
_READS = {"invoice", "next_payment", "my_plan", "card_on_file"}
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


# The request each account action carries out (a refund answers a duplicate too).
_INTENT_OF = {
    "refund_charge": "refund", "cancel_subscription": "cancel", "change_plan": "plan",
    "update_payment_method": "payment", "issue_credit": "credit",
}


class MoneySkill(SkillBase):
    def _charges(self, customer_id: str) -> list[dict[str, Any]] | None:
        """The customer's charges as last read, with refunds made since subtracted."""
        found: dict[str, dict[str, Any]] = {}
        for t in self.view.tools:
            if t.ok and t.name == "find_charges" and isinstance(t.output, dict):
                for ch in t.output.get("charges", []):
                    if ch.get("customer_id") == customer_id:
                        found[ch["id"]] = dict(ch)
        if not found:
            return None
        for t in self.view.tools:
            if t.name == "refund_charge" and t.ok and isinstance(t.output, dict) and not t.output.get("replayed"):
                ch = found.get(t.output.get("charge_id", ""))
                if ch is not None and t.seq > 0:
                    ch["refundable"] = round(ch["amount"] - t.output.get("refunded_total", 0.0), 2)
        return sorted(found.values(), key=lambda c: (c["charged_on"], c["id"]))

    def _refunds(self) -> list[ToolEvent]:
        return [t for t in self.view.tools if t.name == "refund_charge" and t.ok]

    def _refunded(self, charge_id: str | None) -> bool:
        return bool(charge_id) and any(
            isinstance(t.output, dict) and t.output.get("charge_id") == charge_id for t in self._refunds()
        )

    def _pending_refund(self) -> ToolEvent | None:
        """A refund waiting for staff, with no decision yet."""
        v = self.view
        decided = {n.data.get("approval_id") for n in v.history if isinstance(n, Notice) and n.notice_kind in ("approval_granted", "approval_denied")}
        for t in v.tools:
            if t.name == "refund_charge" and t.waiting and t.call_id not in decided:
                return t
        return None

    def _money(self, text: str):
        v, step = self.view, self.step
        latest_results = self._money_results()
        if latest_results is not None:
            return self._and_the_rest(latest_results)

        escalated = self._escalated_refund()
        if escalated is not None:
            return escalated

        asked = self._asked(text)
        offer = dialogue.open_offer(v.context, len(v.customer_messages))
        instead = self._another_plan_named(offer, text) if text and v.offer_answer != "yes" else None
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

        if not asked and self._strays(text):
            # A new matter of its own that asks nothing of money ("my account's been compromised"):
            # not a follow-up to carry the last request into, and not ours to answer.
            return self._hand_back(text)
        if not asked and _NEXT_ONE.search(text) and self._about_charges():
            # "and when is the next one?" after a charge: the one after it is the next payment.
            asked = {"next_payment"}
        # "Which plan am I on?" is answered once: a later message asking nothing is not it again.
        intents = asked or (self._carried_intents() - {"my_plan"})
        if not intents and self._outside_my_scope(text):
            return self._hand_back(text)
        if "refund" in asked and asked <= {"refund", "cancel"} and self._asks_how_refunds_work(text):
            # "how long does a refund take to reach my card?", "do you give refunds if i cancel
            # mid month?": a question about refunds, naming no charge; answered as asked, with
            # nothing offered that a "yes" would set off.
            return step.answer(self._refunds_explained(cancelling="cancel" in asked))
        if intents == {"pricing"}:
            return self._pricing(text)
        if asked & ACTION_INTENTS and acts.asks_about_rather_than_for(text):
            # "if I cancel today, am I billed for May?", "how would a refund work?": asked about,
            # not asked for (the act reader's reading; issue 38): the facts, nothing done or offered.
            return self._about_action(asked, text, plan_change_answer)
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

        customer_id = self._customer_id()
        if customer_id is None:
            return self._identify(intents)
        ctx = {"customer_id": customer_id}
        done = self._done_this_turn()
        if done:
            # What this turn already carried out is not asked about again (two requests in one
            # message: after the first is done, the step goes on with the other; held-5 money).
            intents, asked = intents - done, asked - done
        reads = asked & _READS
        if reads and asked & _CHANGES:
            # Two requests in one message ("send me my february invoice and change my card to
            # ...", "upgrade me to team, and when's my next payment?"): what is only read (it
            # changes nothing) is answered first, then the change is put to the customer in the
            # same reply, as it would be alone.
            said = []
            for read in sorted(reads):
                shown = self._read_only(read, customer_id, text)
                if not isinstance(shown, Answer):
                    return shown  # a lookup first; the next step answers with what it read
                said.append(shown.text)
            step.resolved = False  # the change is still to come
            rest = self._money_for(intents - reads, asked - reads, customer_id, text)
            return _said_first(" ".join(said), rest)
        return self._money_for(intents, asked, customer_id, text)

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
            return self._my_plan(customer_id)
        if intents == {"card_on_file"}:
            return self._card_on_file(customer_id)
        if "credit" in intents:
            return self._credit(customer_id, text)
        if "cancel" in intents:
            # "is it possible to cancel?" asks whether, not yet to: offered first, as a plan change is.
            return self._cancel(customer_id, explicit="cancel" in asked and not cues.ASKS_IF_POSSIBLE.search(text))
        if "plan" in intents:
            return self._plan_change(customer_id, text, asked)
        if "payment" in intents:
            return self._payment_method(customer_id, text)
        if "invoice" in intents:
            if not v.last_call("list_invoices", this_turn=True):
                return step.call("list_invoices", {"customer_id": customer_id}, **ctx)
            return self._invoices_answer(v.last_call("list_invoices", this_turn=True), text)

        charges = self._charges(customer_id)
        if charges is None:
            if v.called_with("find_charges", {"customer_id": customer_id}):
                return step.answer(f"I can't find any charges for account {customer_id}. Could you check the email address on the account?")
            return step.call("find_charges", {"customer_id": customer_id}, **ctx)
        if "refund" in intents or "duplicate" in intents:
            return self._refund_flow(customer_id, charges, intents, text, explicit="refund" in asked)
        if not self._about_charges(text):
            # Nothing says what they want, nor that it is about a charge: ask, rather than
            # propose something of our own that a "yes" would then set off.
            return step.answer(
                "I can help with charges and refunds, invoices, plan changes, cancellations and payment methods. "
                "What would you like me to do?"
            )
        return self._charges_answer(charges, text)

    @staticmethod
    def _past_charge_asked(text: str) -> str | None:
        """The part of a message that asks about a charge already taken, by its day or month,
        beside a question about the next payment; None when there is none."""
        past = [
            c for c in re.split(r"[;?!]+|,\s*(?=(?:and|but|also|plus)\b)|\s+(?:and|also|plus)\s+(?=when\b|what\b|how\b)", text)
            if not cues.NEXT_PAYMENT.search(c) and not _NEXT_ONE.search(c)
            and (slot_extraction.extract_dates(c) or slot_extraction.months_named(c)) and cues.ABOUT_CHARGES.search(c)
        ]
        return " ".join(past) or None

    def _done_this_turn(self) -> set[str]:
        """The requests an account action carried out this turn ("refund" covers "duplicate")."""
        done = {_INTENT_OF[t.name] for t in self.view.turn_tools if t.name in _INTENT_OF and t.ok and not t.waiting}
        return done | {"duplicate"} if "refund" in done else done

    def _and_the_rest(self, action: Any) -> Any:
        """After an action's result, the other action the same message asked for ("refund the
        duplicate and cancel my subscription"): said after the result, and put to the customer
        as it would be alone (one offer at a time: the desk's gate asks one question)."""
        done = self._done_this_turn()
        if not done or not isinstance(action, Answer):
            return action
        left = (self._intents_of(self.view.latest) & (set(_INTENT_OF.values()) | {"duplicate"})) - done
        customer_id = self._customer_id()
        if not left or customer_id is None:
            return action
        return _said_first(action.text, self._money_for(left, left, customer_id, self.view.latest), before_lookup=True)

    def _plan_question_taken(self, asked: set[str], text: str):
        """Our last reply quoted a plan's price and asked whether they'd like to change plans: a
        yes, a move asked with no plan named ("ok move me to it": the plan just quoted), or another
        plan named ("actually, starter instead") is that change, offered with the plan the topic
        holds, never the price quoted again (a clear yes is not asked twice)."""
        v = self.view
        if not v.last_agent_text().endswith(PLAN_CHANGE_ASKED) or asked - {"plan", "pricing"}:
            return None
        reading = read_answer(text)
        if not (reading == "yes" or "plan" in asked or _MOVE.search(text) or (cues.plan_request(text)[0] and reading != "no")):
            return None
        customer_id = self._customer_id()
        if customer_id is None:
            return self._identify({"plan"})  # the account first (a price needs none): then the change
        return self._plan_change(customer_id, text, set())

    def _asks_how_refunds_work(self, text: str) -> bool:
        """The message asks about refunds (the act reader reads no request: "can I get a refund?"
        reads as one; and between question and problem, a question) and names no charge of theirs."""
        reading = acts.read_act(text)
        if reading.act not in ("question", "problem") or reading.confidence < QUESTION_CONFIDENCE:
            return False
        if not acts.asks_rather_than_reports(text):
            return False  # "where is my refund, it's been two weeks": something wrong, not a question
        said = slot_extraction.extract(text)
        return not (said.amounts or said.dates or said.invoice_ids or slot_extraction.months_named(text)
                    or _CHARGE_ID.search(text) or cues.DUPLICATE.search(text))

    def _refunds_explained(self, cancelling: bool = False) -> str:
        reasons = list(self.view.tool_limits("refund_charge").reasons or ())
        if cancelling:
            return (
                "If you cancel, your plan doesn't renew and nothing more is charged; you keep access until the end of the "
                "period you've already paid for, and that period isn't refunded. "
                + (f"Refunds are made for these reasons only: {', '.join(reasons)}. " if reasons else "")
                + "I haven't changed anything: just tell me if you'd like to cancel."
            )
        which = f"Refunds are made for these reasons only: {', '.join(reasons)}. " if reasons else ""
        return (
            "A refund goes back to the original payment method and usually shows there within 5-10 business days "
            f"of being made. {which}If you're asking about a particular charge, tell me which one (its date or amount) "
            "and I'll look at it. I haven't changed anything."
        )

    def _about_charges(self, text: str = "") -> bool:
        """The topic is about charges: it speaks of them, or names a day (to billing, "how much
        did you take on 5 feb?" asks about that day's charge; issue 38)."""
        return any(cues.ABOUT_CHARGES.search(t) or slot_extraction.extract_dates(t) for t in self.topic_texts() + [text])

    @staticmethod
    def _intents_of(t: str) -> set[str]:
        found = set()
        for name, pattern in (
            ("refund", cues.REFUND), ("duplicate", cues.DUPLICATE), ("cancel", cues.CANCEL),
            ("plan", cues.PLAN_CHANGE), ("payment", cues.PAYMENT_METHOD), ("invoice", cues.INVOICE),
            ("pricing", cues.PRICING), ("credit", cues.CREDIT), ("next_payment", cues.NEXT_PAYMENT),
            ("my_plan", cues.MY_PLAN),
        ):
            if pattern.search(t):
                found.add(name)
        if cues.REMOVE_CARD.search(t) and not cues.card_description(t):
            found.add("remove_card")  # taken away, no card named to put in its place
            found.discard("payment")
        if cues.CARD_ON_FILE_QUESTION.search(t) and not found & {"payment", "remove_card"}:
            found.add("card_on_file")  # which card pays: read from the account, nothing changed
        if "next_payment" in found:
            found -= {"invoice", "pricing"}  # "how much is my next invoice going to be?"
        if cues.plan_step(t):
            found.add("plan")  # "I'd like the cheapest plan"
        if not found and (
            cues.ABOUT_CHARGES.search(t) or slot_extraction.months_named(t) or slot_extraction.extract(t).amounts
        ) and heard_duplicate(t):
            # A duplicate told in the customer's own words, about charges, the month they were
            # taken in, or the amount taken ("you take my 9.99 two time": an amount is a charge).
            found.add("duplicate")
        if "payment" in found and "refund" in found:
            found.discard("payment")  # "refund to my card" is a refund
        if found & {"refund", "duplicate"}:
            found -= {"pricing", "invoice"}
        if (
            cues.PRICE_COMPARISON.search(t) and cues.PLAN_NAME.search(t)
            and not re.search(r"\b(?:switch|move|upgrade|downgrade|change|put)\b", t, re.I)
        ):
            # "is there a cheaper plan than pro?" weighs named plans; it moves nothing. ("A
            # cheaper plan than mine" is about their own plan: the plan change's offer.)
            found.discard("plan")
            found.add("pricing")
        if found & ACTION_INTENTS and cues.DISCLAIMS_ACTION.search(t):
            # "I'm not asking you to change anything, I just need Team's monthly price": no
            # action asked for; a plan talked of is asked about for its price.
            if "plan" in found or cues.PRICING.search(t):
                found.add("pricing")
            found -= ACTION_INTENTS
        if "plan" in found:
            found.discard("pricing")  # "how much would the Team plan cost if I switch"
            found.discard("cancel")  # "cancel my plan and move me to Starter" is a plan change
        return found

    def _asked(self, text: str) -> set[str]:
        """What the customer's latest message itself asks for (nothing carried over)."""
        return self._intents_of(text) if text else set()

    def _carried_intents(self) -> set[str]:
        """Nothing new in this message: carry on with what the topic is about, latest first.
        An offer answered with no yes is not carried past that answer: an "ok" after a "no" is
        no request for what was declined (issue 38)."""
        dropped: set[str] = set()
        for t in reversed(self.topic_texts()):
            found = self._intents_of(t) - dropped
            if found:
                return found
            for text, tool in self.view.said_no:
                intent = dialogue.ACCOUNT_ACTIONS.get(tool)
                if text == t and intent is not None:
                    dropped |= {intent, "duplicate"} if intent == "refund" else {intent}
        return set()

    # --- after a no (issue 38) ----------------------------------------------------------------
    _STAYS = {
        "refund": "nothing has been refunded",
        "cancel": "your subscription stays as it is",
        "plan": "your plan stays as it is",
        "credit": "no credit has been added",
    }

    def _after_decline(self, asked: set[str], text: str):
        """The desk's gate read this message as a "no" to its offer (or as no yes, and it turns
        the offer down: "i'll keep it"): say nothing changed, and do not put the same action to
        the customer again in this reply (unless this very message asks for it anew, "no,
        refund the other one")."""
        v = self.view
        if v.declined_tool is None and not asked and self._after_a_no_reply():
            # "ok" to our "No problem: nothing has been refunded": an acknowledgement, no request.
            return self.step.answer("Alright. Is there anything else I can help with?")
        intent = dialogue.ACCOUNT_ACTIONS.get(v.declined_tool or "")
        if v.offer_answer == "question" and intent == "plan" and not asked:
            return self._pricing(text)  # "hmm is starter cheaper?": what the plans cost, nothing changed
        if v.declined_tool is None or not (v.offer_answer == "no" or (v.offer_answer == "other" and dialogue.refuses(text))):
            return None
        if intent is not None and intent in asked and not cues.DROP.search(text):
            return None
        if asked - {intent, "duplicate"}:
            return None  # a request of its own: answered as such
        what = self._STAYS.get(intent or "", "nothing has changed")
        return self.step.answer(f"No problem: {what}. {ANYTHING_ELSE}")

    def _after_a_no_reply(self) -> bool:
        """Our last reply said a declined offer changed nothing, and this message adds no fact."""
        v = self.view
        said = v.last_agent_text()
        return said.startswith("No problem: ") and said.endswith(ANYTHING_ELSE) and not v.latest_facts()

    def _answer_offer(self, offer: dialogue.Offer, asked: set[str], text: str):
        """The customer's reply to an open offer, or None when it is a new request.

        The desk's confirmation reader has read it (engine/confirmation.py, the one reader of a
        yes): where the gate held the offered call, its reading is on record (a yes ran the call
        and its result is answered before this); an offer the gate did not hold (no call went
        with it) is read here by the same reader."""
        reading = self.view.offer_answer or read_answer(text)
        if reading == "yes" and self.view.offer_answer == "yes":
            return None  # the desk ran the offered call: its result is answered, not asked again
        actions = {"refund", "cancel", "plan", "credit", "payment", "invoice", "pricing"}
        other = (asked & actions) - {offer.intent}
        if offer.intent == "refund":
            other -= {"duplicate"}
        if other:
            return None  # a new request replaces the offer (the reply to it clears it)
        other_charge = self._other_charge_named(offer, reading, text)
        if other_charge is not None:
            return other_charge
        # Not a yes (the reader's "no" is any doubt at all): whether it turns the offer down is
        # this model's understanding of the reply, as for any other message.
        if dialogue.refuses(text) and not (offer.intent in asked and not cues.DROP.search(text)):
            what = {
                "refund": "nothing has been refunded",
                "cancel": "your subscription stays as it is",
                "plan": "your plan stays as it is",
                "credit": "no credit has been added",
            }.get(offer.intent or "", "nothing has changed")
            return self.step.answer(f"No problem: {what}. Is there anything else I can help with?")
        wants = offer.intent in asked
        pointed = None
        if offer.intent == "refund" and offer.options:
            pointed = self._options_pointed(offer, text)
        if reading == "change_of_mind" and offer.intent == "plan" and any(cues.plan_request(text)):
            # "yes but make it starter instead": the plan now named is offered in the old one's
            # place (never the old one run, nor the new one run without its own yes).
            customer_id = str(offer.arguments.get("customer_id", "")) or self._customer_id()
            if customer_id:
                return self._plan_change(customer_id, text, set())
        if reading == "change_of_mind" and not pointed:
            # "no wait, make it the cheaper one": another choice than the one offered. Read as a
            # request of its own (a new offer, if it comes to one), never this offer carried out.
            return None
        if pointed and not wants:
            # "the second one", "both": which charge is now clear, but not that they want it
            # refunded (a plain "yes" to one charge is no yes to another): ask about exactly these.
            return self._offer_refund_of(pointed, offer)
        if not (wants or reading == "yes"):
            return None
        return self._carry_out(offer, pointed)

    def _another_plan_named(self, offer: dialogue.Offer | None, text: str):
        """A reply to a plan change we offered (or the desk's gate held) that names another plan
        ("yes but starter pls, not team", "yes, though make it starter"): whatever its yes/no
        reading, that plan is offered in the offered one's place; never the offered change run,
        nor the new one without its own yes. The plan they are on ("no, I'll stay on pro") is
        no other plan."""
        v = self.view
        if offer is not None and offer.intent == "plan":
            offered = offer.arguments.get("plan")
        elif v.declined_tool == "change_plan":
            held = next((t for t in reversed(v.tools) if t.name == "change_plan"), None)
            offered = held.arguments.get("plan") if held else None
        else:
            return None
        plan, _ = cues.plan_request(text)
        customer_id = self._customer_id()
        if plan is None or plan == offered or customer_id is None:
            return None
        if plan == (self._customer_record(customer_id) or {}).get("plan"):
            return None
        return self._plan_change(customer_id, text, set())

    def _charge_named(
        self, text: str, charges: list[dict[str, Any]], months: list[int], duplicate: bool
    ) -> dict[str, Any] | list[dict[str, Any]] | None:
        """The one charge the customer's words name by its id, date, amount or day of the month
        ("the one on the 1st is the double", of the months they named); the charges it may be
        when a day of the month fits several (to ask which; of a duplicate pair, when they speak
        of one, the one of the pair on that day); None when they name none (issue 38): the
        named charge is the one offered, never its neighbour."""
        wanted = [c for c in re.split(r"[,;.!?]+|\bbut\b", text) if not re.search(r"\b(?:not|don'?t|never)\b", c, re.I)]
        said = " ".join(wanted)
        asked = self.view.last_agent_text()
        if asked.startswith(WHICH_CHARGE):
            # The answer to our question which: one of the charges it listed, by month or place.
            listed = [c for c in charges if c["id"] in asked]
            in_month = [c for c in listed if int(c["charged_on"][5:7]) in slot_extraction.months_named(text)]
            picked = in_month if len(in_month) == 1 else dialogue.point_at(said, listed)
            if picked is not None and len(picked) == 1:
                return picked[0]
        pool = [c for c in charges if not months or int(c["charged_on"][5:7]) in months]
        if len(pool) < 2 or dialogue.days_named(said) > 1 or dialogue.BOTH.search(text):
            return None
        # Named outright (id, date, amount, day): a position ("the later one", "the duplicate")
        # leaves the choice to the duplicate found below.
        named = dialogue.point_at(said, pool, positions=False)
        if named is not None and len(named) == 1:
            return named[0]
        days = dialogue.bare_days(said)
        on_day = [c for c in pool if int(c["charged_on"][8:10]) in days]
        if len(on_day) < 2:
            return None
        family = {c["id"] for c in pool if c.get("duplicate_of")} | {c.get("duplicate_of") for c in pool}
        paired = [c for c in on_day if c["id"] in family]
        if duplicate and len(paired) == 1:
            return paired[0]
        return on_day

    def _last_named_charges(self, charges: list[dict[str, Any]], text: str) -> list[dict[str, Any]] | None:
        """The charges the customer's latest earlier message about charges named (by id, date,
        amount or day); None when that message spoke of charges by no single one ("charged twice
        in march") or none named any."""
        earlier = self.topic_texts()
        # This message is not an earlier one, whole or in part ("both for the Team plan, could
        # someone sort that out?" points at nothing before it; held-4).
        whole = self.view.customer_messages[-1].text if self.view.customer_messages else text
        while earlier and (earlier[-1] in (text, whole) or text in earlier[-1] or earlier[-1].strip() in whole):
            earlier = earlier[:-1]
        for said in reversed(earlier):
            hits = dialogue.point_at(dialogue.without_repeated(said), charges, positions=False)
            if hits:
                return hits
            if slot_extraction.months_named(said) or cues.DUPLICATE.search(said):
                return None
        return None

    def _which_charge(self, charges: list[dict[str, Any]]):
        """Several charges fit what the customer named: ask which, offering none."""
        each = [f"{money(c['amount'])} on {nice_date(c['charged_on'])} ({c['id']})" for c in charges]
        listed = ", ".join(each[:-1]) + f" or {each[-1]}"
        return self.step.answer(f"{WHICH_CHARGE} {listed}. Which one do you mean?")

    def _other_charge_named(self, offer: dialogue.Offer, reading: str, text: str):
        """"no, not that one: the one on the 1st is the double": not a yes to the offered refund,
        and it names another listed charge by its date, amount, id or place (issue 38). That one
        is asked about, never the one offered. Clauses that say "not" name what is not wanted."""
        if offer.intent != "refund" or reading == "yes" or not offer.options:
            return None
        wanted = [c for c in re.split(r"[,;:.!?]+|\bbut\b", text) if c.strip() and not cues.DECLINE.search(c)
                  and not re.search(r"\b(?:not|don'?t|never)\b", c, re.I)]
        pointed = self._options_pointed(offer, " ".join(wanted)) if wanted else None
        if not pointed or [c["id"] for c in pointed] == [offer.arguments.get("charge_id")]:
            return None
        return self._offer_refund_of(pointed, offer)

    def _offer_refund_of(self, charges: list[dict[str, Any]], offer: dialogue.Offer):
        ordered = sorted(charges, key=lambda c: not c.get("duplicate_of"))
        each = [self._refund_args(c) for c in ordered]
        if len(each) > 1:
            return self._offer_batch(each, offer.options)
        return self._offer_refund(
            "", f"Just to be sure: shall I refund {money(ordered[0]['refundable'])} for the charge on {nice_date(ordered[0]['charged_on'])}?",
            each[0], offer.options,
        )

    def _offer_refund(
        self, found: str, question: str, args: dict[str, Any], options: list[str], asked_for: bool = True, **context: Any
    ):
        """Offer one refund: what was found, then the question, which goes with the call.

        A refund above this agent's limit is not asked about here (the gate would not hold a call
        this level may not make, so the yes would only pass it up, and the agent that may make it
        would ask again). When the customer came about the charge (`asked_for`), it goes up a
        level at once, saying why, and that agent asks the one question (senior.py's
        `_escalated_refund`); a refund the customer did not come for (a duplicate seen while
        answering a question about charges) is mentioned, not asked about: their "yes" or "refund
        it" passes it up, and the agent that may make it asks."""
        limit = self.view.amount_limit("refund_charge")
        target = self.escalation_target("refund_charge")
        if float(args.get("amount") or 0) > limit + 1e-9 and target is not None:
            if asked_for:
                return self._escalate_refund(target, args, f"above the {money(limit)} limit for level {self.me.level}", found=found)
            title = self.view.desk.agents[target].title.lower()
            # (No call goes with it: the gate would refuse a refund above this level's limit.)
            return self.step.offer(
                f"{found} If you'd like it refunded, just say so: refunds above {money(limit)} are made by a {title} "
                "colleague, and I'll pass it to them.",
                "refund_charge", args, options, **context,
            )
        return self.step.offer(f"{found} {question}".strip(), "refund_charge", args, options, **context)

    def _offer_batch(self, each: list[dict[str, Any]], options: list[str], done: str = ""):
        """Several refunds: one question per call, asked in turn (the desk's gate holds one offer
        at a time, and a yes runs exactly the call it was asked about). The first is asked now;
        the rest wait in the offer's batch and are asked after its answer."""
        def label(args: dict[str, Any]) -> str:
            return f"{money(float(args['amount']))} for {self._charge_label(str(args['charge_id']))}"

        # A duplicate pair is refunded once (tools/billing.py refuses the second of a pair): of
        # the two, the duplicate is offered, and the customer is told why not both.
        charges = {c["id"]: c for c in self._charges(self._customer_id() or "") or []}
        paired = {charges[str(a["charge_id"])].get("duplicate_of") for a in each if str(a["charge_id"]) in charges}
        once = [a for a in each if a["charge_id"] in paired]
        each = [a for a in each if a["charge_id"] not in paired]
        first, rest = each[0], each[1:]
        if done:
            said = f"{done} Shall I also refund {label(first)}?"
        elif once:
            said = (
                f"A charge and its duplicate are refunded once, so I can't refund both {label(once[0]).split(' for ')[0]} "
                f"charges: shall I refund {label(first)}?"
            )
        else:
            said = f"Let's take them one at a time: shall I refund {label(first)}?"
        if rest:
            said += f" Then I'll ask you about {' and '.join(label(a) for a in rest)}."
        return self.step.offer(said, "refund_charge", first, options, each if len(each) > 1 else None)

    def _batch_rest(self) -> tuple[list[dict[str, Any]], list[str]]:
        """The refunds of a confirmed batch offer still to ask about (and its options)."""
        v = self.view
        offer = dialogue.open_offer(v.context, len(v.customer_messages))
        if offer is None or not offer.batch or v.offer_answer != "yes" or offer.action != "refund_charge":
            return [], []
        rest = [b for b in offer.batch if b != offer.arguments and not self._refunded(str(b.get("charge_id", "")))]
        return rest, offer.options

    def _options_pointed(self, offer: dialogue.Offer, text: str) -> list[dict[str, Any]] | None:
        customer_id = self._customer_id()
        charges = self._charges(customer_id) if customer_id else None
        if not charges:
            return None
        by_id = {c["id"]: c for c in charges}
        options = [by_id[o] for o in offer.options if o in by_id]
        return dialogue.point_at(text, options)

    def _carry_out(self, offer: dialogue.Offer, pointed: list[dict[str, Any]] | None):
        """Do exactly what was offered (or, for a refund, the listed charges the customer picked)."""
        step = self.step
        if offer.action == "refund_charge":
            targets = pointed or []
            if not targets and not offer.batch:
                return self._refund_call(dict(offer.arguments))
            # The duplicate first: of a pair, only one may be refunded as a duplicate.
            targets = sorted(targets, key=lambda c: not c.get("duplicate_of"))
            args = [self._refund_args(c) for c in targets] if targets else [dict(b) for b in offer.batch]
            done = [a for a in args if self._refunded(a["charge_id"])]
            args = [a for a in args if not self._refunded(a["charge_id"]) and a["amount"] > 0]
            if not args:
                return step.answer("That's already been refunded, so there's nothing more to do. Anything else?" if done else "There's nothing left to refund on that charge. Anything else?")
            if len(args) == 1:
                return self._refund_call(args[0])
            limit = self.view.amount_limit("refund_charge")
            if any(a["amount"] > limit + 1e-9 for a in args):
                return self._refund_call(args[0])
            if self.step.gated("refund_charge", args[0]):
                return self._offer_batch(args, offer.options)
            return step.calls([("refund_charge", a) for a in args], customer_id=self._customer_id())
        if offer.action == "issue_credit":
            customer_id = self._customer_id()
            if customer_id:
                return self._credit(customer_id, self.view.latest, confirmed=True)
        if offer.action in self.view.tool_names():
            return step.call(offer.action, dict(offer.arguments))
        return step.answer("I'm sorry, I can't do that from here. Is there anything else I can help with?")

    @staticmethod
    def _failed_charge_text(charge: dict[str, Any], when: str) -> str:
        """What is true of a failed charge (issue 38): the payment did not go through, so no money
        was taken and there is nothing to refund; never "it has been refunded"."""
        return (
            f"The charge of {money(charge['amount'])} on {when} failed: the payment didn't go through, so no money was "
            "taken and there's nothing to refund. Is there anything else I can help with?"
        )

    def _refund_args(self, charge: dict[str, Any]) -> dict[str, Any]:
        return {"charge_id": charge["id"], "amount": round(charge["refundable"], 2), "reason": self._refund_reason(charge)}

    def _refund_reason(self, charge: dict[str, Any]) -> str:
        """The desk's listed refund reason that fits this charge (the tool checks it is true)."""
        v = self.view
        limits = v.tool_limits("refund_charge")

        def listed(*words: str) -> str | None:
            return next((r for r in limits.reasons or () if all(w in r.casefold() for w in words)), None)

        dup_family = bool(charge.get("duplicate_of")) or any(
            c.get("duplicate_of") == charge["id"] for c in (self._charges(charge.get("customer_id", "")) or [])
        )
        record = self._customer_record(charge.get("customer_id", "")) or {}
        cancelled = record.get("status") == "cancelled" or any(t.name == "cancel_subscription" and t.ok for t in v.tools)
        ticket = any(t.name == "create_ticket" and t.ok for t in v.tools)
        for fits, reason in (
            (dup_family, listed("duplicate")),
            (cancelled, listed("cancel")),
            (ticket, listed("ticket")),
        ):
            if fits and reason:
                return reason
        said = limits.reason(str(v.context.get("refund_reason") or ""))
        return said or "customer request"  # no listed reason fits: the tool will say so

    def _refund_call(self, args: dict[str, Any]):
        amount = float(args.get("amount", 0))
        limit = self.view.amount_limit("refund_charge")
        if amount > limit + 1e-9:
            target_agent = self.escalation_target("refund_charge")
            if target_agent:
                return self._escalate_refund(target_agent, args, f"above the {money(limit)} limit for level {self.me.level}")
            return self._ask_human(
                f"a refund of {money(amount)} is above what I can approve", {"refund_amount": amount, "charge_id": args.get("charge_id")}
            )
        if self.step.gated("refund_charge", args):
            # Asked for, not yet confirmed (the desk's gate holds the call for the customer's
            # yes): the question goes with the call, in this agent's words, and is asked once.
            return self.step.offer(
                f"Shall I refund {money(amount)} for {self._charge_label(str(args.get('charge_id', '')))}?",
                "refund_charge", args, [str(args.get("charge_id", ""))], customer_id=self._customer_id(),
            )
        return self.step.call("refund_charge", args, customer_id=self._customer_id())

    def _money_results(self):
        """Answer what a tool did this turn (or escalate when the tool refused)."""
        v, step = self.view, self.step
        decisions = [n for n in v.turn_notices if n.notice_kind in ("approval_granted", "approval_denied")]
        if decisions:
            n = decisions[-1]
            approved = next((t for t in v.turn_tools if t.call_id == f"{n.data.get('approval_id')}-approved"), None)
            if n.notice_kind == "approval_denied":
                return step.answer(
                    "I'm sorry: our staff reviewed the request and did not approve it, so nothing was refunded or "
                    "credited. If you'd like, I can ask a member of staff to explain the decision."
                )
            if approved is not None and approved.ok and isinstance(approved.output, dict):
                return step.answer(self._done_text(approved.output, approved=True))
            if approved is not None:
                why = approved.reason
                if why is None:
                    return step.answer(
                        f"Our staff approved it, but {ON_OUR_SIDE}: nothing was refunded or credited yet. "
                        "A member of our staff can see what happened and will follow up."
                    )
                return step.answer(f"The request was approved, but it could not be completed: {why}")
        if not v.turn_tools:
            return None
        last = v.turn_tools[-1]
        # Lookups feed the decision that follows rather than being answered on their own.
        if not last.done or last.name in ("find_customer", "find_charges", "list_invoices", "list_plans", "request_human"):
            return None
        if last.name in ("refund_charge", "issue_credit"):
            if last.waiting:
                amount = last.arguments.get("amount", 0)
                what = "refund" if last.name == "refund_charge" else "credit"
                return step.answer(
                    f"A {what} of {money(amount)} needs a supervisor's approval, so I've sent it to our staff with all the "
                    "details. You'll see the outcome here as soon as they decide."
                )
            this_step = [t for t in v.turn_tools if t.name == last.name and t.seq >= self._step_start(last)]
            made = [t for t in this_step if t.ok and isinstance(t.output, dict)]
            refused = [t for t in this_step if t.done and t.is_error]
            over_limit = [t for t in refused if "limit for level" in str(t.output)]
            if over_limit and not made:
                # Above this level's limit: a higher level may make it.
                target = self.escalation_target(last.name)
                if target:
                    return self._escalate_refund(target, over_limit[-1].arguments, str(over_limit[-1].output))
            said = " ".join(self._done_text(t.output) for t in made)
            for t in refused:
                # The tool's policy decides, and says why: pass it on, and offer a person.
                what = self._charge_label(str(t.arguments.get("charge_id", ""))) if last.name == "refund_charge" else "that"
                why = (t.reason or ON_OUR_SIDE).split(" If the customer")[0].rstrip(". ")
                said += f" I couldn't refund {what}: {why}."
            if refused:
                said += " If you'd like, I can ask a member of our staff to look at it."
                step.resolved = bool(made)
                return step.answer(said.strip())
            rest, options = self._batch_rest() if last.name == "refund_charge" else ([], [])
            if rest and made:
                return self._offer_batch(rest, options, done=said.strip())
            step.resolved = True
            return step.answer(said or self._done_text(last.output))
        if last.is_error:
            return step.answer(f"That didn't go through: {(last.reason or ON_OUR_SIDE).rstrip('. ')}.")
        out = last.output if isinstance(last.output, dict) else {}
        step.resolved = True
        if last.name == "cancel_subscription":
            if out.get("previous_status") == "cancelled":
                return step.answer(
                    f"Your {str(out.get('plan', '')).title()} subscription was already cancelled, so nothing has changed: "
                    "it won't renew, and you keep access until the end of the period you've paid for."
                )
            return step.answer(
                f"Your {str(out.get('plan', '')).title()} subscription is cancelled: it won't renew and you won't be charged again. "
                "You keep access until the end of the period you've paid for."
            )
        if last.name == "change_plan":
            plan = str(out.get("plan", "")).title()
            billed = "annually" if out.get("billing_period") == "annual" else "monthly"
            status = out.get("status", "changed")
            if status == "unchanged":
                return step.answer(f"You're already on the {plan} plan, billed {billed}, so nothing needed changing.")
            if status == "scheduled":
                return step.answer(
                    f"Done: you'll move from the {str(out.get('from_plan', '')).title()} plan to the {plan} plan at your next "
                    f"renewal, billed {billed}. Until then nothing changes."
                )
            return step.answer(f"Done: you're now on the {plan} plan, billed {billed}. The change shows on your next invoice.")
        if last.name == "update_payment_method":
            return step.answer(f"Your payment method is now {out.get('payment_method')}; future charges will use it.")
        step.resolved = False
        return None

    def _step_start(self, event: ToolEvent) -> int:
        """The seq of the first call requested in the same step as `event` (one batch)."""
        batch = [t for t in self.view.turn_tools if t.call_id.rsplit("_", 1)[0] == event.call_id.rsplit("_", 1)[0]]
        return min((t.seq for t in batch), default=event.seq)

    def _charge_label(self, charge_id: str) -> str:
        for t in reversed(self.view.tools):
            if t.ok and t.name == "find_charges" and isinstance(t.output, dict):
                for ch in t.output.get("charges", []):
                    if ch.get("id") == charge_id:
                        kind = "the duplicate charge" if ch.get("duplicate_of") else "the charge"
                        return f"{kind} on {nice_date(ch['charged_on'])} (charge {charge_id})"
        return f"charge {charge_id}"

    def _done_text(self, out: dict[str, Any], approved: bool = False) -> str:
        if "refund_id" in out:
            what = self._charge_label(out["charge_id"])
            if approved:
                return (
                    f"Good news: the refund was approved and processed: {money(out['amount'])} back for {what}, "
                    f"refund {out['refund_id']}. It reaches your original payment method within 5-10 business days."
                )
            return (
                f"Done: I've refunded {money(out['amount'])} for {what}, refund {out['refund_id']}. "
                "It goes back to your original payment method within 5-10 business days."
            )
        if "credit_id" in out:
            return f"I've added {money(out['amount'])} of credit to your account ({out['credit_id']}); it comes off your next invoice."
        return "Done."

    def _refund_flow(self, customer_id: str, charges: list[dict[str, Any]], intents: set[str], text: str, explicit: bool):
        v, step, f = self.view, self.step, self.view.facts
        latest = v.latest_facts()
        # The latest message says which charge: an amount, a date, an invoice, "the duplicate".
        pointed = bool(
            cues.DUPLICATE.search(text) or latest.amounts or latest.dates or latest.invoice_ids or v.context.get("charge_id")
        )
        # A month alone names a charge too ("refund my january payment"), when the account was
        # charged in it; the topic's month counts when this message names none. Vaguer than a
        # date, it chooses the charge to offer, never one refunded without a yes.
        months = next((m for m in map(slot_extraction.months_named, [text, *reversed(self.topic_texts())]) if m), [])
        in_months = [c for c in charges if c["charged_on"][5:7].isdigit() and int(c["charged_on"][5:7]) in months]
        pending = self._pending_refund()
        if pending is not None:
            return step.answer(
                f"The refund of {money(pending.arguments.get('amount', 0))} is waiting for a supervisor's approval; "
                "you'll see the result here as soon as they decide."
            )
        ctx_charge = v.context.get("charge_id")
        dups = [c for c in charges if c.get("duplicate_of")]
        target = None
        if ctx_charge:
            target = next((c for c in charges if c["id"] == ctx_charge), None)
            if target is not None and latest.dates and not any(
                target["charged_on"].endswith(d.iso()[1:]) or target["charged_on"] == d.iso() for d in latest.dates
            ):
                # The latest message names another day than the charge talked of ("could you also
                # refund the one from march 1st?" after the 3rd's refund): that day's charge it is.
                target = None
        if target is None:
            named = self._charge_named(text, charges, months, "duplicate" in intents)
            if isinstance(named, list):
                return self._which_charge(named)
            target = named
        if target is None and _ANAPHOR.search(dialogue.without_repeated(text)):
            # "refund that one" / "refund it": the charge the customer last named, never another
            # found for them (issue 38); several named at once, and it is asked which.
            last = self._last_named_charges(charges, text)
            if last is not None and len(last) > 1:
                return self._which_charge(last)
            target = last[0] if last else None
        if target is None:
            pool = [c for c in dups if c["refundable"] > 0] or dups
            named = self._charges_matching(charges) if (f.dates or f.invoice_ids) else []
            dup_family = {c["id"] for c in dups} | {c.get("duplicate_of") for c in dups}
            if named and not any(c["id"] in dup_family for c in self._charges_named(charges)):
                pool = named  # the customer pointed at a charge that is not a duplicate
            elif not named and in_months and not f.amounts and not any(c["id"] in dup_family for c in in_months):
                pool = [c for c in in_months if c["refundable"] > 0] or in_months  # a month with no duplicate in it
            if not pool and "refund" in intents:
                pool = self._charges_matching(charges)
            if f.amounts:
                pool = [c for c in pool if any(abs(c["amount"] - a) < 0.005 for a in f.amounts)] or pool
            if f.dates:
                pool = [c for c in pool if any(c["charged_on"].endswith(d[1:]) or c["charged_on"] == d for d in f.dates)] or pool
            target = pool[-1] if pool else None

        if target is None:
            if "duplicate" in intents:
                return step.answer(
                    "I've checked your account and I don't see a duplicate charge. " + self._charges_summary(charges)
                    + " Which charge looks wrong to you?"
                )
            return step.answer(
                self._charges_summary(charges) + " Which of these would you like refunded, and why?"
            )
        when = nice_date(target["charged_on"])
        is_dup = bool(target.get("duplicate_of"))
        label = "the duplicate charge" if is_dup else "the charge"
        if target.get("status") == "failed" and not self._refunded(target["id"]):
            # A failed charge was never taken: nothing was refunded, and nothing is to refund.
            return step.answer(self._failed_charge_text(target, when))
        if target["refundable"] <= 0.004 or self._refunded(target["id"]):
            done = next((t.output for t in self._refunds() if isinstance(t.output, dict) and t.output.get("charge_id") == target["id"]), None)
            ref = f" (refund {done['refund_id']})" if done else ""
            return step.answer(
                f"That's already taken care of: {label} of {money(target['amount'])} on {when} has been refunded{ref}. "
                "There's nothing more you need to do; it reaches your original payment method within 5-10 business days."
            )
        refunded_copy = next(
            (c for c in charges if c.get("duplicate_of") == target["id"] and (self._refunded(c["id"]) or c["refundable"] <= 0.004)), None
        )
        if refunded_copy is not None:
            # The original of a pair whose duplicate was already refunded ("and the march 1 one
            # too"): it is the one payment for the period, not a second duplicate; said so, with
            # nothing offered (issue 38).
            step.resolved = True
            return step.answer(
                f"The charge of {money(target['amount'])} on {when} is the original payment for \"{target['description']}\": "
                f"its duplicate on {nice_date(refunded_copy['charged_on'])} has already been refunded, so you've now paid once "
                "for that period. Refunding this one too would leave it unpaid, so I haven't refunded it. "
                "If something else about it looks wrong, tell me what happened."
            )
        first = next((c for c in charges if c["id"] == target.get("duplicate_of")), None)
        options = [first["id"], target["id"]] if is_dup and first else [target["id"]]
        offered = self._refund_args(target)
        # Offered, or asked outright but held by the desk's gate for a yes (within this agent's
        # limit): either way the customer would hear "shall I refund?" first.
        would_offer = (
            not explicit or not pointed or target.get("status") == "disputed"
            or (target["refundable"] <= v.amount_limit("refund_charge") + 1e-9 and step.gated("refund_charge", offered))
        )
        if would_offer and offered["reason"] not in (v.tool_limits("refund_charge").reasons or ()) and not v.context.get("refund_reason"):
            # No reason the desk refunds for fits this charge: say so, and why, instead of
            # offering a refund the policy would refuse ("I forgot to cancel before it renewed,
            # refund it": a "shall I refund?" the policy then refuses reads as a promise broken;
            # issue 38). This only declines: a refund is still the tool's to allow (not held
            # for a yes, or passed up, the tool is called and its refusal says why). Whether
            # the account is cancelled (a reason that fits) is read from the account first.
            read, _record = self._read_account(customer_id)
            if read is not None:
                return read
            offered = self._refund_args(target)
            if offered["reason"] not in (v.tool_limits("refund_charge").reasons or ()):
                return step.answer(self._refund_refused(target, label, when, dups))
        if not explicit or not pointed:
            if is_dup and first:
                return self._offer_refund(
                    f"I found it: two charges of {money(target['amount'])} for \"{target['description']}\", on "
                    f"{nice_date(first['charged_on'])} and {when}. The one on {when} is a duplicate.",
                    "Would you like me to refund it?", offered, options, customer_id=customer_id,
                )
            return self._offer_refund(
                f"I see a charge of {money(target['amount'])} on {when} for \"{target['description']}\".",
                "Would you like me to refund it?", offered, options,
            )
        asked = [a.value for a in latest.amounts]
        requested = [a for a in asked if a <= target["refundable"] + 0.005]
        if asked and not requested and not ctx_charge:
            # Asked for more than the charge: refunds follow what was paid, not what is asked.
            return self._offer_refund(
                f"I can't refund {money(max(asked))}: a refund is made against a specific charge, up to what was paid. "
                f"{label.capitalize()} of {money(target['amount'])} on {when} can be refunded "
                f"({money(target['refundable'])}).",
                "Would you like me to refund it?", offered, options,
            )
        amount = round(min(requested[-1] if requested and not is_dup else target["refundable"], target["refundable"]), 2)
        return self._refund_call(offered | {"amount": amount})

    def _refund_refused(self, target: dict[str, Any], label: str, when: str, dups: list[dict[str, Any]]) -> str:
        if target.get("status") == "disputed":
            # Already disputed with the bank (held-4): that, not the list of reasons, is why.
            return (
                f"I'm sorry, I can't refund {label} of {money(target['amount'])} on {when}: it is already disputed with "
                "your bank, and while a dispute is open the bank decides it, so a refund from us as well would pay it back "
                "twice. If you withdraw the dispute, I can look at it again; or I can ask a member of our staff to review it."
            )
        reasons = list(self.view.tool_limits("refund_charge").reasons or ())
        listed = ", ".join(reasons[:-1]) + f" or {reasons[-1]}" if len(reasons) > 1 else "".join(reasons) or "no reason at all"
        other = next((d for d in dups if d["id"] != target["id"] and d.get("refundable", 0) > 0), None)
        also = (
            f" The charge of {money(other['amount'])} on {nice_date(other['charged_on'])} is a duplicate, though: I can refund that one if you'd like."
            if other else ""
        )
        return (
            f"I'm sorry, I can't refund {label} of {money(target['amount'])} on {when}. Our policy allows refunds only for a "
            f"{listed}, and your account doesn't show this charge as one of those.{also} If you think it is, tell me what "
            "happened; or I can ask a member of our staff to review it."
        )

    def _charges_named(self, charges: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Every charge on the dates or invoices the customer named, refundable or not."""
        f = self.view.facts
        return [
            c
            for c in charges
            if c.get("invoice_id") in f.invoice_ids
            or any(c["charged_on"].endswith(d[1:]) or c["charged_on"] == d for d in f.dates)
        ]

    def _charges_matching(self, charges: list[dict[str, Any]]) -> list[dict[str, Any]]:
        f = self.view.facts
        pool = [c for c in charges if c["refundable"] > 0]
        if f.invoice_ids:
            by_invoice = [c for c in pool if c.get("invoice_id") in f.invoice_ids]
            if by_invoice:
                return by_invoice
        if f.amounts or f.dates:
            hits = [
                c
                for c in pool
                if (not f.amounts or any(abs(c["amount"] - a) < 0.005 for a in f.amounts))
                and (not f.dates or any(c["charged_on"].endswith(d[1:]) or c["charged_on"] == d for d in f.dates))
            ]
            return hits
        return []

    def _credit(self, customer_id: str, text: str, confirmed: bool = False):
        """A credit is made (or passed up to whoever may make it) only when the latest message
        asks for it or confirms our offer of it; otherwise it is offered, amount and all."""
        v, step = self.view, self.step
        request = next((t for t in reversed(self.topic_texts()) if cues.CREDIT.search(t)), text)
        arrived = any(h.to_agent == self.me.name and h.handoff_kind == "escalate" for h in v.turn_handoffs) and bool(v.context.get("credit_reason"))
        go = confirmed or arrived or "credit" in self._asked(text)
        asked_amounts = [a.value for a in slot_extraction.extract(request).amounts]
        amount = v.context.get("credit_amount") if arrived else None
        amount = amount or (asked_amounts[-1] if asked_amounts else None)
        if amount is None and v.last_agent_text().endswith(CREDIT_AMOUNT_QUESTION):
            # "$20" answers our question for the amount.
            said = [a.value for a in v.latest_facts().amounts]
            amount = said[-1] if said else None
        made = [t for t in v.tools if t.name == "issue_credit" and t.ok and not t.waiting]
        if made and not confirmed and not ("credit" in self._asked(text) and not arrived):
            # The credit asked for is made: a later "yes" or thanks confirms nothing more.
            step.resolved = True
            return step.answer(f"That credit is already on your account ({made[-1].output.get('credit_id')}); it comes off your next invoice. Is there anything else I can help with?")
        if not v.has_tool("issue_credit"):
            target = self.escalation_target("issue_credit")
            if target is None:
                return self._ask_human("an account credit was requested", {})
            # Not asked about here: the yes would only pass it up, and the agent that may add it
            # would ask again. Passed up at once; that agent asks the one question, with the call.
            title = v.desk.agents[target].title.lower()
            return Transfer(
                to_agent=target,
                reason="account credit requested",
                handoff_kind="escalate",
                text=f"Credits are added by a {title} colleague, so I'm passing this on with the details; "
                "you won't need to repeat anything.",
                context=step.context(
                    {"credit_reason": request[:300], "credit_amount": amount, "customer_id": customer_id, "credit_asked": go}
                ),
            )
        if amount is None:
            return step.answer(CREDIT_AMOUNT_QUESTION)
        reason = v.context.get("credit_reason") or request[:300] or "service credit"
        args = {"customer_id": customer_id, "amount": round(float(amount), 2), "reason": reason}
        question = f"I can add {money(amount)} of credit to your account, taken off your next invoice. Shall I go ahead?"
        if step.gated("issue_credit", args):
            return step.offer(question, "issue_credit", args)  # asked once, with the call
        if confirmed or (go and (not arrived or v.context.get("credit_asked"))):
            return step.call("issue_credit", args)
        return step.offer(question, "issue_credit", args)

    def _charges_summary(self, charges: list[dict[str, Any]], lead: str = "Your recent charges: ") -> str:
        lines = []
        for c in charges[-6:]:
            flags = []
            if c.get("duplicate_of"):
                flags.append("duplicate")
            if c["status"] in ("failed", "disputed"):
                flags.append(c["status"])
            if c["refundable"] < c["amount"] and c["status"] != "failed":
                flags.append("refunded" if c["refundable"] <= 0 else "partly refunded")
            extra = f" ({', '.join(flags)})" if flags else ""
            lines.append(f"{nice_date(c['charged_on'])}: {money(c['amount'])}, {c['description']}{extra}")
        return lead + "; ".join(lines) + "."

    def _days_asked(self, text: str) -> list[slot_extraction.Date]:
        """The days the customer asks about charges on: this message's, else the topic's latest."""
        return next((d for d in (slot_extraction.extract_dates(t) for t in [text, *reversed(self.topic_texts())]) if d), [])

    def _charges_answer(self, charges: list[dict[str, Any]], text: str = ""):
        # "what was the charge on february 1st?": the charges of the days asked about, not the list.
        days = self._days_asked(text)
        on_days = [c for c in charges if any(d.matches(str(c["charged_on"])) for d in days)]
        # "when was I charged in feb?": no day named, a month is: that month's charges.
        months = [] if days else slot_extraction.months_named(text)
        if months:
            on_days = [c for c in charges if str(c["charged_on"])[5:7].isdigit() and int(str(c["charged_on"])[5:7]) in months]
        lead, missing = "Your recent charges: ", ""
        if on_days:
            lead = "Here is that charge — " if len(on_days) == 1 else "Here are those charges — "
        elif days:
            missing = f"I don't see a charge on {' or '.join(d.spoken() for d in days)}. "
        elif months:
            missing = f"I don't see a charge in {' or '.join(calendar.month_name[m] for m in months)}. "
        shown = on_days or charges
        dups = [c for c in shown if c.get("duplicate_of") and c["refundable"] > 0]
        failed = [c for c in shown if c["status"] == "failed"]
        summary = missing + self._charges_summary(shown, lead)
        if dups and any(cues.CHARGE_TROUBLE.search(t) for t in self.topic_texts()):
            # The offer is about the duplicated pair: "the second one" is the second of those two.
            dup = dups[-1]
            pair = [c["id"] for c in charges if c["id"] == dup.get("duplicate_of")] + [dup["id"]]
            tail = f" The charge on {nice_date(dup['charged_on'])} is a duplicate."
            return self._offer_refund(summary + tail, "Would you like me to refund it?", self._refund_args(dup), pair, asked_for=False)
        if dups:
            tail = f" The charge on {nice_date(dups[-1]['charged_on'])} looks like a duplicate; tell me if you'd like it refunded."
            return self.step.answer(summary + tail)
        tail = ""
        if failed:
            tail = f" The payment on {nice_date(failed[-1]['charged_on'])} failed, so you weren't charged for it; updating your payment method will settle that invoice."
        return self.step.answer(summary + tail)
