"""The customer's reply to what the money agent offered (part of the money skill, ./__init__.py):
a "no" that changes nothing, a yes carried out exactly as offered, another charge pointed at, and
several refunds asked one at a time. Apart because an offer's answer is read before any new
request."""

from __future__ import annotations

import re
from typing import Any

from supportdesk.engine.confirmation import hedged, read_answer
from supportdesk.models.offline import cues, dialogue
from supportdesk.models.offline import slots as slot_extraction
from supportdesk.models.offline.skills.common import nice_date
from supportdesk.models.offline.skills.money import asks
from supportdesk.models.offline.skills.money.base import NOT_YET, STAYS, TAKE_YOUR_TIME, MoneyBase
from supportdesk.models.offline.skills.money.plans import corrected_request
from supportdesk.text import money





class MoneyOffers(MoneyBase):
    def _answer_offer(self, offer: dialogue.Offer, asked: set[str], text: str):
        """The customer's reply to an open offer, or None when it is a new request.

        The desk's confirmation reader has read it (engine/confirmation.py, the one reader of a
        yes): where the gate held the offered call, its reading is on record (a yes ran the call
        and its result is answered before this); an offer the gate did not hold (no call went
        with it) is read here by the same reader."""
        reading = self.view.offer_answer or read_answer(text)
        if reading == "yes" and self.view.offer_answer == "yes":
            return None  # the desk ran the offered call: its result is answered, not asked again
        if reading == "question" and hedged(text) and offer.intent is not None:
            return self._asked_plainly(offer)
        actions = {"refund", "cancel", "plan", "credit", "payment", "invoice", "pricing"}
        other = (asked & actions) - {offer.intent}
        if offer.intent == "refund":
            other -= {"duplicate"}
        if other:
            return None  # a new request replaces the offer (the reply to it clears it)
        if reading != "yes" and offer.intent is not None and asks.waits_for_someone(text):
            # "let me check with our finance person first": no yes (the gate ran nothing) and no
            # no either; the same offer waits for their word ("first" here is a time, not the
            # first charge listed), and a later yes runs exactly it, once (issue 38).
            return self._asked_plainly(offer, lead=TAKE_YOUR_TIME, question=self._put_again(offer))
        if (
            offer.intent == "refund" and offer.options and reading != "yes" and offer.intent not in asked
            and asks.ASKS_ABOUT.search(text) and not dialogue.refuses(text) and self._options_pointed(offer, text)
        ):
            # "the first charge - is that my normal monthly one", "the first one, what was it
            # for?": a question about a charge the reply listed, answered as asked (the charges'
            # answer reads the list); nothing offered on it (issue 38).
            return None
        other_charge = self._other_charge_named(offer, reading, text)
        if other_charge is not None:
            return other_charge
        # Not a yes (the reader's "no" is any doubt at all): whether it turns the offer down is
        # this model's understanding of the reply, as for any other message.
        if dialogue.refuses(text) and not (offer.intent in asked and not cues.DROP.search(text)):
            what = STAYS.get(offer.intent or "", "nothing has changed")
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
                return self._plan_change(customer_id, corrected_request(dict(offer.arguments), text), set())
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
        if not wants and self._question_beside_statement(text):
            return None
        return self._carry_out(offer, pointed)

    def _put_again(self, offer: dialogue.Offer) -> str:
        """The offer's question put again after a wait, pointing where it did (`_duplicate_question`)."""
        args = offer.arguments
        pair = self._duplicate_question(str(args.get("charge_id")), float(args.get("amount") or 0)) if offer.intent == "refund" else ""
        return pair or offer.summary

    def _duplicate_question(self, charge_id: str, amount: float) -> str:
        """The question of a duplicate's refund naming both days of its pair, the duplicate's
        last, so "yes, refund the second one" is the yes to it (engine/confirmation.py reads a
        pointer against the days an offer lists); "" when the charge repeats none."""
        charges = {c["id"]: c for c in self._charges(self._customer_id() or "") or []}
        charge = charges.get(charge_id, {})
        first = charges.get(str(charge.get("duplicate_of")))
        if first is None:
            return ""
        day, first_day = nice_date(charge["charged_on"]), nice_date(first["charged_on"])
        return (f"Of the charges on {first_day} and {day}, the one on {day} is the duplicate: shall I refund "
                f"{money(amount)} for it (charge {charge['id']})?")

    def _asked_plainly(self, offer: dialogue.Offer, lead: str = NOT_YET, question: str = ""):
        """A hedge ("i guess so?", "if that's the only way i guess") is neither a yes nor a no
        (engine/confirmation.py `hedged`): nothing runs on it, and the same offer is put once
        more in plain words, with its amount or plan, for a clear yes or no (issue 38)."""
        args = offer.arguments
        what = {
            "refund": f"refund {money(float(args.get('amount') or 0))} on charge {args.get('charge_id')}",
            "credit": f"add a credit of {money(float(args.get('amount') or 0))}",
            "plan": f"move you to the {str(args.get('plan', '')).title()} plan",
            "cancel": "cancel your subscription",
        }.get(offer.intent or "", "go ahead")
        # A refund above this agent's limit is put again on behalf of the agent it goes to, so
        # the clear yes runs it there rather than being asked a third time (money-13).
        up = self._refund_passed_up_to(args) if offer.intent == "refund" else ""
        return self.step.offer(
            f"{lead} {question or f'Shall I {what}? A plain yes or no is all I need.'}",
            offer.action, dict(args), list(offer.options), for_agent=up,
        )

    def _question_beside_statement(self, text: str) -> bool:
        """An "ok" with a question of its own ("ok and why is it so much"), after a reply that
        asked nothing ("if you'd like it refunded, just say so"): the ok acknowledges what was
        said and the question is what they want answered; no yes to the action (issue 38: a
        refund was put to a senior colleague on "ok and why is it so much"). Only where the desk's
        gate held no call: a yes the gate read is its reading."""
        if self.view.offer_answer is not None or self.view.last_agent_text().rstrip().endswith("?"):
            return False
        return bool(asks.ASKS_BESIDE.search(text))

    def _other_charge_named(self, offer: dialogue.Offer, reading: str, text: str):
        """"no, not that one: the one on the 1st is the double": not a yes to the offered refund,
        and it names another listed charge by its date, amount, id or place (issue 38). That one
        is asked about, never the one offered. Clauses that say "not" name what is not wanted."""
        if offer.intent != "refund" or reading == "yes" or not offer.options:
            return None
        wanted = [c for c in re.split(r"[,;:.!?]+|\bbut\b", text) if c.strip() and not cues.DECLINE.search(c)
                  and not re.search(r"\b(?:not|don'?t|never)\b", c, re.I)]
        pointed = self._options_pointed(offer, " ".join(wanted)) if wanted else None
        if not pointed and slot_extraction.repairs(text):
            # A repair ("sorry, I meant the one on the 3rd") names the charge meant instead of the
            # one offered, among all the account's charges, not only those the reply listed; a day
            # said without its month is read in the month of the charge spoken of (issue 38.3).
            days = self.view.latest_facts().dates
            charges = self._charges(self._customer_id() or "") or []
            pointed = [c for c in charges if any(d.matches(str(c["charged_on"])) for d in days)] or None
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
        return dialogue.point_at(text, options, offered=str(offer.arguments.get("charge_id", "")) or None)

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
