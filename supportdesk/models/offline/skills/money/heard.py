"""What the money skill hears asked for in words no cue lists (part of the money skill,
./__init__.py): the learned readers' duplicate, money back and cancellation, each counted only
behind the structural guards that keep their defaults out (a charge named, no question asked, the
money gate). Apart from ./intents.py, which carries what was heard over a conversation."""

from __future__ import annotations

import re

from supportdesk.engine import confirmation
from supportdesk.models.offline import cues
from supportdesk.models.offline import slots as slot_extraction
from supportdesk.models.offline.skills.money import asks
from supportdesk.readers import acts, gates
from supportdesk.patterns import LazyPattern

# How sure the act reader (readers/acts.py) must be that a message about refunds or a cancellation
# is asked about, not asked for.
QUESTION_CONFIDENCE = 0.9


# How sure the learned intent reader (readers/acts.py: Banking77's train split and the desk's
# labelled examples) must be that a message tells of a duplicate charge for it to count when no
# cue heard any request, and the message speaks of charges or names a month: "charged two time
# for march month, the 24 and 25, give back one", "i was charged 2 times". Only its "duplicate"
# is heard: its "refund" is where Banking77's money messages fall by default ("what do i pay a
# month for my plan?" reads refund 0.975).
LEARNED_DUPLICATE_CONFIDENCE = 0.95


# How sure the learned intent reader must be that one clause asks for money back, told in words no
# cue lists ("I am not happy with speed of the app, please return me the money of february": the
# whole message reads cancel, its second clause refund 0.996). Its "refund" is where money
# questions fall by default (above), so only a clause that asks nothing (no question), names the
# charge (its month, an amount, a charge word) and passes the money gate counts.
LEARNED_REFUND_CONFIDENCE = 0.98


# A clause's opening connective ("so pls give back february's payment", "and then refund it"):
# a closed class that links it to what came before; the act reader hears "so ..." as a problem
# told, so the clause is read from the word after it (money-17).
_OPENING_LINK = LazyPattern(r"^\W*(?:(?:so|and|but|then|anyway|therefore|thus)\b[\s,]*)+", re.I)


def heard_refund(text: str) -> bool:
    """A clause of the message, or the message whole, asks for a named charge's money back in
    words no cue lists. (Whole, for a charge named in one clause and asked back in another:
    "january i barely used it, can i get that month back?"; the refusal then says why.)"""
    if next_payment_asked(text):
        return False  # (the day it was last taken, told beside the next one asked: its context)
    for clause in dict.fromkeys([*(_OPENING_LINK.sub("", c) for c in gates.clauses(text)), text]):
        # (The rules first: they are cheap, and most clauses name no charge.)
        if not (cues.ABOUT_CHARGES.search(clause) or slot_extraction.months_named(clause) or slot_extraction.extract(clause).amounts):
            continue
        if acts.asks_about_rather_than_for(clause):
            continue
        # A question counts only where both readers hear money back and the act reader a request
        # ("can i get that month back?" asks for it), below; Banking77's alone hears any money question.
        asked = asks.is_question(clause)
        # A clause that names a plan or a billing period is about the plan: the intent reader
        # has no plan change among its intents (Banking77's), and reads "from my next renewal i
        # want starter but paid yearly" as refund 0.99 (held-8).
        if cues.PLAN_NAME.search(clause) or cues.PERIOD.search(clause):
            continue
        reading = acts.read_intent(clause)
        if not asked and reading.act == "refund" and reading.confidence >= LEARNED_REFUND_CONFIDENCE and gates.reads_money(clause):
            return True
        # Banking77's reader knows money back in a bank's words; the desk intents reader, trained
        # on the desk's own examples too, hears it in a customer's ("give back the 129.99 from
        # march 13th"): when both lean to refund (Banking77's, less surely: "send me the february
        # one" reads refund to the desk's alone) on a clause the act reader reads as a request.
        desk = acts.read_desk_intent(clause)
        if (
            reading.act == "refund" and desk.act == "refund" and desk.confidence >= LEARNED_REFUND_CONFIDENCE
            and acts.read_act(clause).act == "request" and gates.reads_money(clause)
        ):
            return True
    return False


def heard_duplicate(text: str) -> bool:
    """A learned reader hears a duplicate charge told in words no cue lists: Banking77's intent
    reader, or the desk's own (its duplicate examples: "two 9.99s went out in march, 24th and
    25th" is no Banking77 wording)."""
    if asks.is_question(text) and _one_period_asked(text):
        return False  # "and the one for january?" after an invoice: one month's, no second charge
    if next_payment_asked(text):
        return False  # "it usually goes out at the month's end. when is the next one?": a habit told
    reading = acts.read_intent(text)
    if reading.act == "duplicate" and reading.confidence >= LEARNED_DUPLICATE_CONFIDENCE:
        # (Banking77 hears "was anything taken on the 5th of this month" as one: a day's charges
        # asked for, as the desk's reader surely reads it, tell of no duplicate.)
        return not asks.asks_charges(text)
    if asks.is_question(text):
        return False  # (the desk's reader hears "did acme bill me anything on 4 march?" as one)
    desk = acts.read_desk_intent(text)
    return desk.act == "duplicate" and desk.confidence >= DESK_DUPLICATE_CONFIDENCE


def next_payment_asked(text: str) -> bool:
    """A sentence of the message asks when the next payment is ("when is the next one exactly?"):
    what the others tell (when it usually goes out, the day it was last taken) is its context,
    no second charge a learned reader may hear in the day or the month (held-26)."""
    return any(asks.is_question(part) and asks.read(part).payment for part in cues.clauses(text))


def _one_period_asked(text: str) -> bool:
    """One month or day named and no amount: a duplicate is two charges, told by two days, an
    amount or a word of twice (the cues'); a question about one period asks about its charge or
    invoice (Banking77's reader hears "the one for january?" as a charge taken twice)."""
    periods = len(slot_extraction.months_named(text)) + len(slot_extraction.bare_days(text)) + len(slot_extraction.extract(text).dates)
    return periods == 1 and not slot_extraction.extract(text).amounts


# The desk intents reader's duplicate, heard only in a statement where the caller found charges,
# a month or an amount spoken of: as sure as its held examples' duplicates read (0.99 and above).
DESK_DUPLICATE_CONFIDENCE = 0.99


# How sure the desk intents reader (readers/acts.py `read_desk_intent`: the desk's labelled examples, what its tools
# say they do, Banking77's terminate_account) must be that a request asks to stop paying, when the cues heard
# nothing ("i'd like to stop paying for acme from now on", "stop billing me", "make sure acme never takes money from
# me again"). Its plan_change is a label of its own, so "Starter please" and "i want the second one" read
# plan_change, not cancel: no list of verbs of ending is needed beside it. Where a cue heard only a billing period
# ("I no longer want to be charged every month, please stop it"), the reading replaces the cue's only when surer
# than any period change of the tune halves ("we dont want to pay monthly anymore, yearly please" reads
# plan_change).
LEARNED_CANCEL_CONFIDENCE = 0.6
LEARNED_CANCEL_OVER_PERIOD = 0.99


def heard_cancel_request(text: str, *, over_period: bool = False) -> bool:
    """A request to stop paying told in words no cue lists ("stop billing me"): the desk intents reader
    reads cancel, the act reader no question, the disclaims reader no "leave it", the money gate reads
    money ("stop the sync" is none), and it is more than a bare go-ahead ("please do", read cancel 0.97
    on "please" alone, answers what came before). Like any cancellation it is offered, for a yes."""
    intent = acts.read_desk_intent(text)
    floor = LEARNED_CANCEL_OVER_PERIOD if over_period else LEARNED_CANCEL_CONFIDENCE
    if intent.act != "cancel" or intent.confidence < floor or confirmation.assents_only(text):
        return False
    act = acts.read_act(text)
    if act.act == "question" and act.confidence >= QUESTION_CONFIDENCE:
        return False  # asked about, not asked for
    if cues.disclaims_action(text):
        return False  # "no actually leave it", "no, dont cancel": the disclaims reader's no action
    return gates.reads_money(text)


# What the desk sells, by its nouns (cues' _TIER without "one" and "option", which point at anything)
PLAN_NOUN = LazyPattern(r"\b(?:plans?|tiers?|levels?|packages?|subscriptions?)\b", re.I)
# Things asked side by side in one line ("my plan and which card", "plan + card"): grammar, a
# closed class of joining words.
_SIDE_BY_SIDE = LazyPattern(r"\s*(?:\band\b|\+|&)\s*", re.I)


def plan_beside_card(text: str) -> bool:
    """The account's plan and the card that pays for it asked in one line ("my plan and which card
    pays for it?", "whats my plan + card on file?"; controls-h18): asked (a question, or one said
    as a request to be told), one of its joined parts naming the desk's plan noun and no payment
    method, another a payment method; no plan of the price list nor a card by its last four named
    (a change told, or a card asked about by name), no charge's day or amount."""
    if not (asks.is_question(text) or asks.told_questions(text)):
        return False
    if cues.PLAN_NAME.search(text) or cues.card_description(text) or slot_extraction.names_a_day_or_month(text):
        return False
    if slot_extraction.extract(text).amounts:
        return False
    joined = _SIDE_BY_SIDE.split(text)
    plan_alone = any(PLAN_NOUN.search(part) and not cues.NAMES_PAYMENT_METHOD.search(part) for part in joined)
    return plan_alone and any(cues.NAMES_PAYMENT_METHOD.search(part) for part in joined)


def card_told(text: str) -> bool:
    """A payment method named by its brand and last four (the rules read it: cues.card_description,
    which passes over the one being left) in a message that asks nothing, which the desk intents
    reader hears about the card ("drop paypal, bill my visa ending in 4417 from now on": its
    card_on_file, since "bill my" names no change verb): the card to put on file, as a card so
    told beside "card on file" is (understand-18). A question about the card is its card_on_file."""
    if cues.card_description(text) is None or asks.is_question(text):
        return False
    return acts.read_desk_intent(text).act in ("update_card", "card_on_file")
