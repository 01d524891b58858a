"""What a message asks of money (part of the money skill, ./__init__.py): the intents its cues and
the learned readers hear, carried over from the topic or dropped after a "no", and whether it
asks about refunds rather than for one. Apart because reading the request is one job and
answering it another."""

from __future__ import annotations

import math
import re

from supportdesk.models.offline import cues, dialogue
from supportdesk.models.offline.kept import kept_by_text
from supportdesk.models.offline import slots as slot_extraction
from supportdesk.models.offline.skills.money import asks
from supportdesk.models.offline.skills.money.asks import asks_charges, asks_price
from supportdesk.models.offline.skills.money.base import MoneyBase
from supportdesk.models.offline.skills.money.heard import (
    PLAN_NOUN, QUESTION_CONFIDENCE, card_told, heard_cancel_request, heard_duplicate, heard_refund, next_payment_asked, plan_beside_card,
)
from supportdesk.models.offline.skills.money.plans import names_plan_by_place
from supportdesk.readers import acts, gates
from supportdesk.patterns import LazyPattern

# The intents whose action a question can be about rather than ask for (`acts.asks_about_rather_than_for`).
ACTION_INTENTS = {"cancel", "refund", "plan", "payment"}
# "the next one" / "the next 1": after a charge, the charge that comes next.
NEXT_ONE = LazyPattern(r"\bnext (?:one|1)\b", re.I)


# (How sure the desk intents reader must be of a part: ./asks.py, where the parts are read.)
PRICE_ASKED_CONFIDENCE = asks.PART_CONFIDENCE


# A question by its word order: an auxiliary before its subject pronoun after the question's
# opening words ("wat tier am i paying for", "which one are we on"): grammar, a closed class.
_INVERTED = LazyPattern(r"^\W*\w+(?:\s+\w+)?\s+(?:am\s+i|are\s+(?:we|you)|do\s+(?:i|we)|does\s+(?:it|my|our))\b", re.I)


# The account's own plan, said by its owner ("our plan", "my current subscription"): grammar, a
# possessive before the desk's nouns of what it sells.
_OWN_PLAN = LazyPattern(r"\b(?:my|our)\s+(?:current\s+)?(?:plan|subscription|tier)\b", re.I)
# A question whose answer is yes, no or how often: it opens with an auxiliary verb or "how often"
# (grammar, a closed class), not with a question word asking for an amount or a day.
_ASKS_WHETHER = LazyPattern(
    r"\s*(?:(?:hi|hello|hey|so|ok|quick question)[,!.:]?\s+)?(?:am|are|is|do|does|did|will|was|were|how often)\b", re.I
)
# Two payment methods offered as alternatives ("card or paypal", "visa or the amex"): grammar (a
# disjunction) over the payment methods' nouns the rules know (cues.NAMES_PAYMENT_METHOD).
_METHODS_OFFERED = LazyPattern(
    rf"\b{cues.CARD_ON_FILE_WORDS}\s*(?:,\s*)?or\s+(?:(?:the|a|my|by|via|with)\s+)?{cues.CARD_ON_FILE_WORDS}\b", re.I
)
# "can i pay by card or paypal?" asks what is possible, not which one pays now.
_ASKS_POSSIBLE = LazyPattern(r"\s*(?:can|could|may|do you (?:take|accept))\b", re.I)
# A time gone by: the payment asked about is one taken (./asks.py, where the next one is read).
_PAST = asks.PAST
# How sure the desk intents reader must be that a clause asks about a payment (its next_payment
# and charges together: "and what day did my latest payment go through?" reads each 0.43) for the
# clause to ask about the last one taken (the past said in the clause, and another read asked
# beside it, keep it narrow; "what was the date of the previous payment?" reads charges 0.67).
PAYMENT_ASKED_CONFIDENCE = 0.6


def asks_last_payment(text: str) -> bool:
    """One of the message's questions asks about the payment last taken: the desk intents reader
    reads a payment asked about (next_payment or charges: it does not tell a time), the clause
    speaks of it in the past, and names no day or month (those are the charges of that day) nor
    the next one (cues.NEXT_PAYMENT)."""
    if not asks.is_question(text) or slot_extraction.names_a_day_or_month(text):
        return False
    for clause in dict.fromkeys([*acts.question_clauses(text), *acts.clauses(text)]):
        if not _PAST.search(clause) or cues.NEXT_PAYMENT.search(clause) or NEXT_ONE.search(clause):
            continue
        reading = acts.read_desk_intent(clause)
        if reading.act in ("next_payment", "charges") and _share(reading, "next_payment", "charges") >= PAYMENT_ASKED_CONFIDENCE:
            return True
    return False


# Requests of their own that a question's topic (./asks.py) does not replace.
_NAMED_REQUESTS = {"credit", "duplicate", "remove_card", "card_on_file", "invoice", "my_plan", "failed_payment"}
_CHARGE_ID = LazyPattern(r"\bch[- ]?\d{3,}\b", re.I)
# The desk intents reader's reads of the account or price list ("and by the year, how much?": held-23).
_READ_OF_READER = {"next_payment": "next_payment", "my_plan": "my_plan", "card_on_file": "card_on_file", "invoice": "invoice", "pricing": "pricing"}
# How sure the reader must be of a follow-up's read to replace the topic's: as of a charge's day.
FOLLOW_UP_CONFIDENCE = asks.CHARGES_ASKED_CONFIDENCE


class MoneyIntents(MoneyBase):
    @staticmethod
    def _past_charge_asked(text: str) -> str | None:
        """The part of a message that asks about a charge already taken, by its day or month,
        beside a question about the next payment; None when there is none."""
        past = [
            c for c in re.split(r"[;?!]+|,\s*(?=(?:and|but|also|plus)\b)|\s+(?:and|also|plus)\s+(?=when\b|what\b|how\b)", text)
            if not cues.NEXT_PAYMENT.search(c) and not NEXT_ONE.search(c)
            and (slot_extraction.extract_dates(c) or slot_extraction.months_named(c)) and cues.ABOUT_CHARGES.search(c)
        ]
        return " ".join(past) or None

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

    def _about_charges(self, text: str = "") -> bool:
        """The topic is about charges: it speaks of them, names a day ("how much did you take on 5
        feb?"; issue 38), or asks about a month or a day ("whats on march?", "the one on the 16th?")."""
        return any(
            cues.ABOUT_CHARGES.search(t) or slot_extraction.extract_dates(t) or asks_charges(t)
            or (asks.is_question(t) and slot_extraction.names_a_day_or_month(t))
            for t in self.topic_texts() + [text]
        )

    @staticmethod
    def _intents_of(t: str) -> set[str]:
        return set(_intents_in(t))  # (a copy: the kept reading is shared by every step)

    def _card_for_the_change(self, text: str) -> bool:
        """A card named alone after a request to change how the customer pays, told in words the
        cues do not hear as one (cues.card_change_told): the card to put on file."""
        earlier = [t for t in self.topic_texts() if t != text]
        return bool(earlier) and cues.card_change_told(earlier[-1], text)

    def _asked(self, text: str) -> set[str]:
        """What the customer's latest message itself asks for (nothing carried over; nothing it
        turned down: `_without_declined`)."""
        if not text:
            return set()
        found = self._without_declined(text, self._intents_of(text))
        if not found and self._card_asked_of_what_was_shown(text):
            found = {"card_on_file"}
        return found

    def _card_asked_of_what_was_shown(self, text: str) -> bool:
        """"and what is it paid with?" after an invoice or the charges were shown: which card pays,
        asked of what was shown with no payment method's noun. `cues.asks_card_on_file` wants the
        noun (the desk intents reader alone hears "do you have keyboard shortcuts?" as
        card_on_file); here what was shown and the money gate stand in for it."""
        v = self.view
        this_turn = {id(t) for t in v.turn_tools}
        shown = any(t.ok and t.name in ("list_invoices", "find_charges") and id(t) not in this_turn for t in v.tools)
        if not shown or not asks.is_question(text):
            return False  # (shown in an earlier turn: this turn's lookup only found the account)
        if _CHARGE_ID.search(text) or slot_extraction.extract(text).amounts or slot_extraction.names_a_day_or_month(text):
            return False  # "what's ch-9059 for?": a question about one charge, answered from it
        reading = acts.read_desk_intent(text)
        return reading.act == "card_on_file" and reading.confidence >= cues.CARD_ON_FILE_CONFIDENCE and gates.reads_money(text)

    def _read_asked_by_the_reader(self, text: str) -> set[str]:
        """A question no rule hears, after a read of the account: the read the desk intents reader
        surely hears, when not the topic's ("and when do you charge it next" after the card)."""
        carried = self._carried_intents()
        if not carried or not carried <= _READ_OF_READER.keys() | {"last_payment", "failed_payment"}:
            return set()
        if acts.read_act(text).act != "question":
            return set()
        reading = acts.read_desk_intent(text)
        read = _READ_OF_READER.get(reading.act) if reading.confidence >= FOLLOW_UP_CONFIDENCE else None
        # A price has no month: one named ("and february's?") asks of that month's invoice or charge.
        return {read} if read and read not in carried and not (read == "pricing" and slot_extraction.names_a_day_or_month(text)) else set()

    def _carried_intents(self) -> set[str]:
        """Nothing new in this message: carry on with what the topic is about, latest first.
        An offer answered with no yes is not carried past that answer: an "ok" after a "no" is
        no request for what was declined (issue 38)."""
        dropped: set[str] = set()
        for t in reversed(self.topic_texts()):
            found = self._without_declined(t, self._intents_of(t)) - dropped
            if found:
                return found
            for text, tool in self.view.said_no:
                intent = dialogue.ACCOUNT_ACTIONS.get(tool)
                if text == t and intent is not None:
                    dropped |= {intent, "duplicate"} if intent == "refund" else {intent}
        return set()

    def _without_declined(self, text: str, found: set[str]) -> set[str]:
        """`found` without a cancellation the learned reader alone heard in a message the gate read
        as no yes to the offer of it: "keep my subscription" reads cancel by its topic, and a no
        is never a request for the very action it turned down. (One that says it in a cue's
        words, "no, I said cancel it", still asks.)"""
        if "cancel" in found and not cues.CANCEL.search(text) and (text, "cancel_subscription") in self.view.said_no:
            return found - {"cancel"}
        return found


def _share(reading: acts.Reading, *labels: str) -> float:
    """How sure the desk intents reader is of any of `labels` together (the scores are
    log-likelihoods; normalised over every intent): its pricing and next_payment are both an
    amount the plan costs; its next_payment and charges both a payment, told apart by time only."""
    top = max(reading.scores.values())
    weights = {k: math.exp(v - top) for k, v in reading.scores.items()}
    return sum(weights.get(label, 0.0) for label in labels) / sum(weights.values())


@kept_by_text(256)
def _intents_in(t: str) -> frozenset[str]:
    """The money intents a text's words name (rules, and the desk intents reader behind guards),
    read once per text: every step of a turn asks again for the same messages."""
    found = set()
    for name, pattern in (
        ("refund", cues.REFUND), ("duplicate", cues.DUPLICATE), ("cancel", cues.CANCEL),
        ("plan", cues.PLAN_CHANGE), ("payment", cues.PAYMENT_METHOD), ("invoice", cues.INVOICE),
        ("pricing", cues.PRICING), ("credit", cues.CREDIT), ("next_payment", cues.NEXT_PAYMENT),
        ("my_plan", cues.MY_PLAN),
    ):
        if pattern.search(t):
            found.add(name)
    # A change the customer tells of, made or not ("i didn't upgrade or buy anything", "i forgot to
    # cancel"), says what a charge is about; it asks for no such change (./asks.py).
    told = asks.without_own_change_told(t)
    found -= {name for name, cue in (("plan", cues.PLAN_CHANGE), ("cancel", cues.CANCEL)) if not cue.search(told)}
    if cues.REMOVE_CARD.search(t) and not cues.card_description(t):
        found.add("remove_card")  # taken away, no card named to put in its place
        found.discard("payment")
    if "remove_card" not in found and cues.asks_card_on_file(t) and not ("payment" in found and cues.card_description(t)):
        # Which card pays: read from the account, nothing changed. The learned reader tells
        # it from a change (its update_card) where the payment cue hears "card" either way
        # ("i got a new bank last year, what card is paying now?"); a card named after a
        # change word is the change ("switch to paypal").
        found.discard("payment")
        # A card told by its brand and last four, asked nothing ("the card on file is getting
        # replaced, bill my amex ending 3007 going forward"): the card to put on file, not a
        # question about the one there (the reader hears "card on file" loudest).
        found.add("payment" if cues.card_description(t) and not asks.is_question(t) else "card_on_file")
    if (
        "remove_card" not in found and _METHODS_OFFERED.search(t) and asks.is_question(t)
        and not _ASKS_POSSIBLE.match(t) and not re.search(r"\d{4}", t)
    ):
        # "how am i billed, card or paypal?": two payment methods offered as the answer's
        # alternatives (the rules name them) in a question: which one pays, read from the
        # account (the desk intents reader hears "billed" and a card as a change of card; the
        # payment cue hears the card either way).
        found.discard("payment")
        found.add("card_on_file")
    if "next_payment" in found and not cues.NEXT_PAYMENT.search(cues.AT_RENEWAL.sub(" ", t)):
        # "starting next billing cycle we only need starter": when a change should start,
        # not a question about the next payment.
        found.discard("next_payment")
    if "next_payment" in found:
        found -= {"invoice", "pricing"}  # "how much is my next invoice going to be?"
    if "my_plan" in found:
        # "what plan am i on and what do i pay for it": what it costs, or the next payment
        # (its day and price), asked too, as the desk intents reader reads the second question
        for part in cues.QUESTIONS_JOINED.split(t)[1:]:
            if asks_price(part):
                found.add("pricing")
            elif (r := acts.read_desk_intent(part)).act == "next_payment" and r.confidence >= PRICE_ASKED_CONFIDENCE:
                found.add("next_payment")
            elif r.act in ("pricing", "next_payment") and _share(r, "pricing", "next_payment") >= PRICE_ASKED_CONFIDENCE:
                # "what do i pay for it": the reader torn between the plan's price and the next
                # payment, both an amount the plan costs; together sure of it: its price
                found.add("pricing")
        if asks.is_question(t) and asks_price(t) and cues.PLAN_NAME.search(t):
            # "what would pro run me per month next to my current plan?": a plan of the price
            # list named beside their own, its price asked (the desk intents reader's pricing).
            found.add("pricing")
    # Two days or more told ("came out on the 10th and again on the 11th"): a place said after them,
    # "i'd like the second one reversed", points at the second of those days, not at a plan.
    days_listed = len(slot_extraction.bare_days(t)) + len(slot_extraction.extract(t).dates) > 1
    placed = names_plan_by_place(told) and not days_listed
    if (cues.plan_step(told) or placed) and asks_price(t):
        # "how much is the top plan a month?", "the mid tier, paid yearly - what's that come
        # to?": a plan named by its place, its price asked (the desk intents reader's pricing)
        found.add("pricing")
    elif cues.plan_step(told) or (placed and not asks.is_question(t)):
        found.add("plan")  # "I'd like the cheapest plan", "the middle plan please"
    if not found and (
        cues.ABOUT_CHARGES.search(t) or slot_extraction.names_a_day_or_month(t) or slot_extraction.extract(t).amounts
    ) and re.search(r"[^\W\d_]{2,}", t) and heard_duplicate(t) and (
        slot_extraction.place_named(t) is None or days_listed
    ):
        # (A place in a list is a pointer, not a second charge: "the second one, yearly"; nor figures
        # alone: "$20". Unless the list is the message's own days, above.)
        # A duplicate told in the customer's own words, about charges, the month or the days they
        # were taken on ("hit the account on the 24th and a second time on the 25th"), or the
        # amount taken ("you take my 9.99 two time": an amount is a charge).
        found.add("duplicate")
    if not found and (cues.asks_card_change(t) or card_told(t)):
        # "i'd like to pay with paypal from now on": another way to pay asked for with no change
        # verb the payment cue lists, read as triage reads it to route here (learned, update_card).
        found.add("payment")
    if not found & ACTION_INTENTS and asks.plan_needed(t) and not cues.AT_RENEWAL.search(t):
        # "we hired 6 people so we need team now", "it's just me again, pro is plenty": a plan of
        # the price list told as a need or a consequence, no change verb the plan cue lists
        # (issue 38): offered like any plan change, done on the yes. (Told with when it should
        # start, "when our period ends we want pro, team is too much", it is plans._plan_told_in's,
        # which reads which of the plans named is wanted.)
        found = (found - {"pricing", "my_plan", "next_payment"}) | {"plan"}
    if not found and heard_refund(t):
        found.add("refund")  # "please return me the money of february": money back asked for
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
    if found & ACTION_INTENTS and cues.disclaims_action(t):
        # "I'm not asking you to change anything, I just need Team's monthly price": no
        # action asked for; a plan talked of is asked about for its price.
        if "plan" in found or cues.PRICING.search(t):
            found.add("pricing")
        # Only what the disclaiming clauses speak of is taken back: "no wait, don't cancel. just
        # move me down to starter instead" asks the plan change in a clause of its own.
        clauses = [c for c in acts.clauses(t) if c != t]
        asked_beside = set().union(*(_intents_in(c) & ACTION_INTENTS for c in clauses if not cues.disclaims_action(c)))
        found = (found - ACTION_INTENTS) | asked_beside
        if asked_beside:
            found.discard("pricing")
    if "plan" in found:
        found.discard("pricing")  # "how much would the Team plan cost if I switch"
        found.discard("cancel")  # "cancel my plan and move me to Starter" is a plan change
    plan_named, period_named = cues.plan_request(t)
    period_only = found == {"plan"} and plan_named is None and period_named is not None
    period_only = period_only and not cues.plan_step(t) and not placed
    if (not found or period_only) and heard_cancel_request(t, over_period=period_only):
        # "stop billing me", "I no longer want to be charged every month, please stop it": a
        # request to end paying is a cancellation request (offered, done on the yes).
        found = {"cancel"}
    if (
        not found and (asks.is_question(t) or asks.told_questions(t) or _INVERTED.search(t)) and PLAN_NOUN.search(t)
        and not slot_extraction.names_a_day_or_month(t) and not slot_extraction.extract(t).amounts
        and asks.a_part_reads(t, "my_plan")
    ):
        # Which plan the account is on, asked in words the rule (cues.MY_PLAN) does not list
        # ("which of your plans am i paying for": the desk intents reader's my_plan, route-14).
        # A plan's noun said, and no charge's day or amount: the reader hears "which one is the
        # real one?" of two charges of 129.99 as the plan asked too. A question said as a request
        # to be told asks as surely ("remind me my plan + the card it's billed to", controls-h18:
        # the charges were listed; the plan's answer says the card too, account._my_plan), and so
        # does one whose verb comes before its subject with no "?" and its question word in chat
        # spelling ("wat tier am i paying for rn", held-19: the act reader, not knowing "wat",
        # reads a problem by a hair).
        found.add("my_plan")
    if found == {"invoice"} and asks.is_question(t) and asks.asks_which_plan(t):
        found = {"my_plan"}  # "and which plan is that invoice for?": the plan asked, of what was shown
    if found <= {"card_on_file"} and plan_beside_card(t):
        # "my plan and which card pays for it?": the plan asked beside the card (the reader hears
        # the card loudest); the plan's answer says the card too (account._my_plan).
        found |= {"my_plan"}
    if (
        not found and asks.is_question(t) and _OWN_PLAN.search(t) and cues.PLAN_NAME.search(t) is None
        and not slot_extraction.names_a_day_or_month(t) and not slot_extraction.extract(t).amounts and asks_price(t)
    ):
        # What the account's own plan costs ("what are we paying per month on our plan, and which
        # plan is it?"): the plan said by its owner, not by a name of the price list, with its
        # price read by the desk intents reader: the account's plan and its price, read from both.
        found |= {"my_plan", "pricing"}
    if not found & (ACTION_INTENTS | _NAMED_REQUESTS) and asks.payment_failed_told(t):
        # "my card was declined when pro renewed, what happens now?": the payment that failed is
        # what is asked about, not the renewal to come (a refund or a new card asked beside it
        # is its own request, read above).
        found = (found - {"next_payment", "pricing"}) | {"failed_payment"}
    if not found & (ACTION_INTENTS | _NAMED_REQUESTS):
        # No request heard: what the question is about answers it (./asks.py). The renewal
        # asked about ("does our yearly plan renew this year or next, and for how much?") is
        # the next payment, its day and price; a plan of the price list asked about ("whats
        # team if we paid yearly instead?") is its price, nothing changed.
        what = asks.read(t)
        if what.question and (what.renewal or what.payment or next_payment_asked(t)):
            # (A plan or a period named in a question about the next payment is the payment's:
            # "when's my next team payment and how much?" asks its day and amount, no price list.)
            found.add("next_payment")
            found -= {"invoice", "pricing"}
            if asks.names_the_billing_period(t):
                found.add("my_plan")  # "what's my billing cycle, and when does the next one start?"
        elif what.plan and "next_payment" not in found and (what.question or asks_price(t)):
            # (A price read by the desk intents reader asks as surely as a "?": "pro vs starter
            # monthly, how much each" weighs the plans of the price list and moves nothing.)
            found.add("pricing")
        elif what.question and not found and plan_named is None and asks.names_the_billing_period(t):
            found.add("my_plan")  # "what's my billing cycle?": the account's period, the plan's answer states it
        elif what.question and not found and period_named is not None and plan_named is None and _ASKS_WHETHER.match(t):
            # "am i paying monthly or yearly?", "do you bill me every month?": a billing period
            # named (the rules read it) in a yes/no or how-often question that asks nothing
            # else and names no plan is about the account's own period, which the plan's
            # answer states. ("what do i pay every month?" asks an amount: not this.)
            found.add("my_plan")
    if found and not found - {"my_plan", "card_on_file", "pricing"} and asks_last_payment(t):
        # "am i on monthly or annual? and what's the date of my last payment?": a read too,
        # beside whatever else the message asks (each answered in one reply)
        found -= {"pricing", "invoice"}
        found.add("last_payment")
    if not found and asks.invoice_asked(t):
        found.add("invoice")
    return frozenset(found)
