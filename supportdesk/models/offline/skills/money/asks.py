"""What a money question asks (part of the money skill, ./__init__.py): which thing it is about
(the renewal, a plan of the price list, the charges) and whether it asks at all, so the answer
is the one asked for (the renewal's date and price, a plan's price) rather than the charge list
or the skill's capabilities. Issue 38: read by the message's shape (a question, what it is
about), not by one phrasing at a time; the question itself is the act reader's
(readers/acts.py, learned), the things talked of are the desk's own nouns.

Apart from intents.py because reading what a question is about is one job, and which request
it makes of the account (intents.py) another."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from supportdesk.engine.confirmation import read_answer
from supportdesk.models.offline import cues, dialogue
from supportdesk.models.offline import slots as slot_extraction
from supportdesk.readers import acts
from supportdesk.patterns import LazyPattern

# The renewal as the thing asked about: the account renewing, or being billed again. (Said as
# when a change takes effect, "from my next renewal", it is a time: cues.AT_RENEWAL, cut first.)
_RENEWAL = LazyPattern(
    r"\brenew(?:s|ed|ing|al|als)?\b|\b(?:bill|charg|debit|pay|tak)\w*\b[^.?!]{0,40}\bagain\b", re.IGNORECASE
)


# A yes/no question about losing money already paid ("would we lose what we already paid?", "do
# i get the rest of the month back?", "is anything prorated?"): an auxiliary and its subject
# (grammar, a closed class), then a word of money lost or given back (cues' consequences of a
# change, the same class `cues.PLAN_CHANGE_QUESTION` reads after an "if").
_ASKS_WHAT_IS_LOST = LazyPattern(
    r"\b(?:do|does|did|will|would|could|can|am|are|is|was)\s+(?:i|we|it|that|this|anything|my|our)\b[^.?!]*"
    r"\b(?:lose|lost|losing|forfeit\w*|refund\w*|prorat\w*|back|wasted?)\b",
    re.IGNORECASE,
)


def asks_what_is_lost(text: str) -> bool:
    """One of the message's questions asks whether money already paid is lost or given back: beside
    a plan's price ("how much would starter be and would we lose what we already paid?"), what a
    change does to the period paid for is asked too, and answered (`plans.plan_change_answer`)."""
    return any(_ASKS_WHAT_IS_LOST.search(m.group(0)) for m in _QUESTION_SENTENCE.finditer(text))


# A sentence that ends with a question mark (what a question asks is said in it).
_QUESTION_SENTENCE = LazyPattern(r"[^.?!]*\?")


# How sure the desk intents reader (readers/acts.py `read_desk_intent`) must be that the message,
# or one of its clauses, asks what it is read to ask (a plan's price, the next payment). Chosen on
# evals/desk-intents-tune.jsonl and the intents-8 tune half: price questions read 0.95 to 1.0, a
# change asked for reads plan_change.
PART_CONFIDENCE = 0.9


# (Read of a reply to an offer, ./offers.py.)
# A question word in a reply ("why", "how come", "what ... for"): it asks something of its own.
ASKS_BESIDE = LazyPattern(r"\b(?:why|how come|how much|what|when|which|where)\b|\?", re.I)
# A question about what a reply points at ("is that my normal one", "what was it for").
ASKS_ABOUT = LazyPattern(r"\b(?:why|how come|what|which|when)\b|\b(?:is|was|are|were|does|did)\s+(?:that|this|it|these|those)\b", re.I)
# A pause the customer opens with to ask something ("wait, how much is pro?", "hold on - ..."):
# it asks for time, it turns nothing down.
PAUSE_FIRST = LazyPattern(r"^\W*(?:wait|hold on|hang on)\b[\s,.!:-]*", re.I)


def parts(text: str) -> list[str]:
    """The message, the clauses that carry its question, and its clauses of four words or more:
    what the desk intents reader reads (a bag of words hears a preamble as loudly as the question)."""
    found = [text, *acts.question_clauses(text), *(c for c in acts.clauses(text) if len(acts.tokens(c)) > 3)]
    return list(dict.fromkeys(found))


def a_part_reads(text: str, intent: str, *, unless: LazyPattern | None = None) -> bool:
    """The desk intents reader reads `intent` surely in the message or one of its `parts` (of
    those `unless` finds nothing in)."""
    return any(
        (r := acts.read_desk_intent(part)).act == intent and r.confidence >= PART_CONFIDENCE
        for part in parts(text) if unless is None or not unless.search(part)
    )


# A time gone by, as grammar says it (a closed class): the payment asked about is one taken (the
# desk intents reader reads a payment asked about, not when: "what day did the last payment come
# out?" reads next_payment).
PAST = LazyPattern(r"\b(?:last|latest|most recent|previous|did|was|were|went)\b", re.I)
# The time asked, or the next one named (grammar: a question word of time, a closed class): the
# next payment is what the learned reader's next_payment asks only with one of them, since it
# hears a payment in "can you explain my bill?" and "what will that cost me?" alike.
_WHEN_OR_NEXT = LazyPattern(r"\b(?:when\w*|next|what (?:day|date)|which (?:day|date))\b", re.I)
# Not the next payment: a payment told in the past, or how often one is taken ("how often do you
# bill me?" asks the billing period, which the plan's answer states; the reader hears a payment).
_NOT_THE_NEXT = LazyPattern(rf"{PAST.pattern}|\bhow often\b", re.I)


# A question said as a request to be told (grammar, a closed class: a verb of telling to the one
# asking, or wanting to know): "..., and tell me how much the year costs", "let me know the price",
# "remind me my plan".
_TELL_ME = LazyPattern(
    r"\b(?:(?:tell|show|give|remind)\s+(?:me|us)|let\s+(?:me|us)\s+know|(?:i'?d|i\s+would|we'?d)\s+like\s+to\s+know"
    r"|(?:i|we)\s+(?:want|need)\s+to\s+know)\b[^.?!]*",
    re.IGNORECASE,
)


def told_questions(text: str) -> list[str]:
    """The message's questions said as requests to be told, from the verb of telling to the end
    of their sentence ("switch me to pro and tell me how much the year costs": "tell me how much
    the year costs"): a question asked as surely as one ending in "?", with no "?" to find it by."""
    return [m.group(0).strip() for m in _TELL_ME.finditer(text) if len(acts.tokens(m.group(0))) > 3]


def price_asked(text: str) -> bool:
    """One of the message's questions asks what something costs, whatever else it asks for or
    about ("switch us to team billed annually - what's the total per year?", "if I moved down to
    pro, what would I pay and would I lose what I paid?"): the desk intents reader reads pricing
    in the clause that carries the question, or in a clause of four words or more of a sentence
    that asks (two questions in one: "what would I pay and would I lose ..."; the whole message
    when nothing comes before its question), or in a question said as a request to be told
    (`told_questions`: "..., and tell me how much the year costs")."""
    told = told_questions(text)
    if not is_question(text) and not told:
        return False
    asking = [c for m in _QUESTION_SENTENCE.finditer(text) for c in acts.clauses(m.group(0)) if len(acts.tokens(c)) > 3]
    return any(
        (r := acts.read_desk_intent(part)).act == "pricing" and r.confidence >= PART_CONFIDENCE
        for part in dict.fromkeys([*acts.question_clauses(text), *asking, *told] or [text])
    )


@dataclass(frozen=True)
class Asked:
    """What a message asks about money: `question` (it asks rather than asks for or reports),
    `renewal` (the account's renewal is what it is about), `plan` (a plan of the price list is
    what it is about: its name said, no day, month, amount or charge of the customer's),
    `payment` (the account's next payment is what one of its questions asks, its day or amount:
    a plan or a period named in it is the payment's, "when's my next team payment and how much?",
    "our yearly subscription, when does that come out next?")."""

    question: bool
    renewal: bool
    plan: bool
    payment: bool = False


def asks_about(text: str) -> bool:
    """The act reader reads the message as asking about an action rather than for it, once the
    time the change should start is cut (cues.AT_RENEWAL: a date, read by the rules): "when my
    current month runs out, move us up to team" opens with a time's "when", and asks for the move."""
    if goes_ahead_after(text):
        return False
    return acts.asks_about_rather_than_for(cues.AT_RENEWAL.sub(" ", text))


def goes_ahead_after(text: str) -> bool:
    """A proposal asked, then its go-ahead told ("what if we just went down to pro instead of
    leaving? do that"): the last clause, after others, is a yes as the desk's one reader of a yes
    reads it (engine/confirmation.py), asking nothing. It asks for the action proposed; the act
    reader alone hears the question."""
    said = acts.clauses(text)
    return len(said) > 1 and not is_question(said[-1]) and read_answer(said[-1]) == "yes"


def asks_what_it_would_do(text: str) -> bool:
    """The message asks about an action rather than for it: the act reader's reading
    (`asks_about`), or a question about what the action would do, which triage already tells
    apart ("if i cancel my plan whats gonna happen with all my notes and files?", "what would
    cancelling do to my documents?": its grammar of a consequence asked about, with the act reader
    reading a question). The act reader's margin alone (`acts.ABOUT_MARGIN`, kept high so "how do
    I stop my subscription from auto-renewing?" is offered) reads those at 5 to 9, and they were
    offered the very action they wonder about (issue 38, money-12)."""
    return asks_about(text) or asks_what_an_account_action_does(text)


# A question about what an account action would do ("does cancelling delete my files?", "if I
# delete the app, do I keep paying?", "will upgrading lose anything?"): the action asked about is
# the matter, not the words of the consequence it wonders about ("delete my files" is the
# technical agent's words when it is a problem told). Grammar only: a conditional (with "if", or
# a supposition opening a clause: "say i cancel, can i still ...?", "suppose we downgrade"), or an
# action named by its -ing form after an auxiliary, in a message the act reader reads as a question.
# "is" before an -ing word asks only in the question's order, opening its clause or after its
# wh-word ("is cancelling instant?", "what is renewing going to cost"): after its subject it is a
# progressive told ("our studio is closing down, please end the subscription"), the reason of a
# request, not a question (issue 38, cancel-18).
_NOT_ACTION = r"(?!the\b|anything\b|something\b|nothing\b)"
_CONSEQUENCE_QUESTION = LazyPattern(
    r"\bif\b|(?:^|[,.;!?]\s*)(?:say|suppose|supposing|assuming)\s+(?:i|we)\b|\bwhat happens\b"
    rf"|\b(?:does|do|will|would|could|can|might)\s+{_NOT_ACTION}[a-z]+ing\b"
    rf"|(?:^|[,.;:!?]\s*|\b(?:what|how|why|when|where|which|who)(?:\s+[a-z]+)?\s+)is\s+{_NOT_ACTION}[a-z]+ing\b",
    re.IGNORECASE,
)
# The account actions and their money, in any form ("cancelling", "subscripton", "keep paying").
_ACCOUNT_ACTION = LazyPattern(r"\b(?:cancel\w*|subscri\w*|plans?|upgrad\w*|downgrad\w*|renew\w*|paying|billed|charged)\b", re.IGNORECASE)


def asks_what_an_account_action_does(text: str, names_money: Callable[[str], bool] = lambda text: False) -> bool:
    """A question about the consequences of an account action, with no trouble told (`names_money`:
    what else the caller hears as money asked about, triage's requests)."""
    return bool(
        _CONSEQUENCE_QUESTION.search(text)
        and (_ACCOUNT_ACTION.search(text) or names_money(text))
        and not cues.APP_TROUBLE.search(text)
        and acts.asks_rather_than_tells(text)
    )


# A billing period named by its own noun rather than by which one it is ("billing cycle", "billing
# frequency"): what a customer calls the period they are billed by (a rule's, as a period's name is).
_BILLING_PERIOD_ITSELF = LazyPattern(r"\bbilling\s+(?:cycle|period|frequency|interval|schedule)s?\b", re.IGNORECASE)


def names_the_billing_period(text: str) -> bool:
    """The billing period is talked of by its own noun ("what's my billing cycle?"), not as the
    time a change starts ("from the next billing cycle", cues.AT_RENEWAL, cut first)."""
    return _BILLING_PERIOD_ITSELF.search(cues.AT_RENEWAL.sub(" ", text)) is not None


# Cancelling named in any of its forms ("cancelling", "cancellation", "unsubscribing"): the action's
# name, as a plan's name is a rule's; the cancel cue lists how it is asked for, not how it is talked of.
_CANCELLING_NAMED = LazyPattern(r"\b(?:cancel\w*|unsubscrib\w*)", re.IGNORECASE)


def cancelling_asked_about(text: str) -> bool:
    """A question about what cancelling would do that names it in words no request cue lists ("im
    thinking about cancelling at some point, what happens to all my files if i do?"): answered with
    what cancelling means, nothing offered (the capability list answered it before)."""
    return bool(_CANCELLING_NAMED.search(text)) and asks_what_it_would_do(text)


# A payment of the account's own that did not go through, told: a charge's status as the business
# data records it ("failed") in the words customers use for it, said of what the desk bills (a
# payment, a charge, the renewal, the subscription) in one clause. A card refused at a checkout
# or a top-up that failed names no such payment: those are the app's (the card and top-up
# articles), and `_NOT_THE_SUBSCRIPTION` keeps them out. (Issue 38, bill-18: "got an email saying
# my payment failed", "my card was declined when pro renewed" were answered with the next
# payment, or routed to the card article.)
_FAILED = (
    r"(?:fail(?:ed|s|ing|ure)?|declined?|bounced?|rejected|refused|did(?:n'?t|nt| not) (?:go through|work)|"
    r"(?:(?:was|were)(?:n'?t|nt)|not) succes+ful|unsucces+ful|"
    r"(?:could|can|was|were)(?:n'?t|nt| not)(?: be)? (?:processed|collected|taken))"
)
_BILLED_THING = r"(?:payments?|charges?|renewals?|subscriptions?|invoices?)"
# Grammar, not phrasings: the billed thing as the subject of the failure ("my payment failed",
# "the renewal payment could not be processed"), the failure before it as its adjective or verb
# ("a failed payment", "declined the team renewal"), or a failure at the renewal ("my card was
# declined when pro renewed"). A card declined "and payment wouldn't go through" at a restaurant
# is the card's trouble, told of a purchase elsewhere: no subject here, no match.
# (The billed thing may carry its time, "my payment in march bounced", and a question may put
# its auxiliary first, "why didn't the march payment go through?".)
_WHEN_OF_IT = r"(?:\s+(?:in|for|on|from)\s+(?:the\s+)?\w+(?:\s+\d{1,2}\w{0,2})?)?"
_PAYMENT_FAILED = LazyPattern(
    rf"\b{_BILLED_THING}{_WHEN_OF_IT}\W{{0,2}}\s+(?:(?:was|were|got|has|had|is|did|just|been|have|apparently)\s+){{0,3}}{_FAILED}\b"
    rf"|\bdid(?:n'?t|nt)\s+(?:(?:the|my|our|your|this|that|last|latest|\w+)\s+){{0,2}}{_BILLED_THING}{_WHEN_OF_IT}\s+(?:go through|work)\b"
    rf"|\b{_FAILED}\s+(?:(?:the|my|our|your|this|that|last|latest|recent|monthly|yearly|annual|starter|pro|team)\s+){{0,2}}{_BILLED_THING}\b"
    rf"|\b{_FAILED}\s+(?:when|as|at)\s+(?:\w+\s+){{0,2}}renew\w*"
    # why a thing billed is left unpaid ("why does the march one say unpaid?"): its payment failed
    r"|\b(?:why|how come)\b[^.?!]{0,40}\b(?:unpaid|not paid|outstanding|overdue)\b",
    re.IGNORECASE,
)
_NOT_THE_SUBSCRIPTION = LazyPattern(r"\btop[- ]?ups?\b|\btopp?(?:ed|ing) up\b|\bcheckout\b|\bcredits?\b(?! card)", re.IGNORECASE)


def payment_failed_told(text: str) -> bool:
    """The message tells of a payment of the account's that failed (`_PAYMENT_FAILED`): its charge
    is the answer (which one, when, how much, what settles it), not the next payment nor an
    article about cards in the app."""
    return bool(_PAYMENT_FAILED.search(text)) and not _NOT_THE_SUBSCRIPTION.search(text)


def is_question(text: str) -> bool:
    """The message asks: a sentence ends with "?", or the act reader reads a question by its
    margin over a request and a problem (a bare "when ..." opening a statement of when a change
    should start reads as a question without it: "when our period ends we want pro")."""
    # (The time a change should start is cut first: "when my current month runs out, move us up to
    # team" asks for the move; its opening "when" is a time, not a question word.)
    return "?" in text or asks_about(text)


def read(text: str) -> Asked:
    """What `text` asks about money (see `Asked`)."""
    untimed = cues.AT_RENEWAL.sub(" ", text)
    said = slot_extraction.extract(text)
    own_charge = bool(said.dates or said.amounts or said.invoice_ids or slot_extraction.months_named(text)
                      or cues.CHARGE_ID.search(text))
    question = is_question(text)
    return Asked(
        question=question,
        renewal=_RENEWAL.search(untimed) is not None,
        plan=cues.PLAN_NAME.search(text) is not None and not own_charge,
        # (Read only of a question that names no charge's day: "what will I be charged on the
        # 15th?" asks about that day's charge, not the next payment; nor of a part told in the
        # past or asking how often; the time a change starts, "from my next payment", is cut
        # first as the renewal's is.)
        payment=(
            question and _WHEN_OR_NEXT.search(untimed) is not None and not own_charge and not dialogue.bare_days(text)
            and a_part_reads(untimed, "next_payment", unless=_NOT_THE_NEXT)
        ),
    )


# How sure the desk intents reader must be that a message asks what was charged ("what did you
# take from me on the tenth of february?": no charge word a rule lists) for it to be about charges.
CHARGES_ASKED_CONFIDENCE = 0.95


def asks_charges(text: str) -> bool:
    """The message asks what was charged, read by the desk intents reader, with a month or a day
    of the charge named (the rules read those)."""
    if not (slot_extraction.names_a_day_or_month(text) or slot_extraction.names_relative_day(text)):
        return False
    reading = acts.read_desk_intent(text)
    return reading.act == "charges" and reading.confidence >= CHARGES_ASKED_CONFIDENCE


# Someone else to be asked before the customer answers ("let me check with our finance person
# before you do anything", "i need to run it past my partner first", "our finance guy has to
# approve it first"): grammar, a verb of consulting or of another's approval then, later in the
# clause, "first" or "before" (closed classes).
CONSULTS_FIRST = LazyPattern(
    r"\b(?:check|ask|asking|run (?:it|this|that) (?:past|by)|talk|speak|clear (?:it|this|that) with"
    r"|approve|sign (?:it |this |that )?off)\b"
    r"[^.?!]*?\b(?:first|before)\b", re.I,
)


def waits_for_someone(text: str) -> bool:
    """The answer to an offer waits on someone else's word: not a no to the action, which stays
    offered for a later yes."""
    return CONSULTS_FIRST.search(text) is not None


def plan_needed(text: str) -> bool:
    """A plan change told as a need or a consequence, no change verb a cue lists ("we hired 6
    people so we need team now", "it's just me again, pro is plenty"; issue 38): a plan of the
    price list named (the rules read it), the desk intents reader surely reading plan_change in
    the whole message (a part alone reads it in "pro vs starter monthly, how much each"; a card
    named "from now on" beside a plan reads update_card, the card's change). Told, not asked: a question naming a plan ("would changing to starter make me lose my storage?",
    "pro cheaper if paid yearly?") is about it; a change asked for in a question has the plan
    cue's verbs."""
    if cues.PLAN_NAME.search(text) is None or is_question(text) or cues.disclaims_action(text):
        # (nor one said not to be wanted: "thinking about team next quarter, dont switch anything")
        return False
    if cues.PRICING.search(text):
        # A price asked for by its noun is asked, not told as a need ("pro vs team, yearly prices
        # pls": the plans weighed, the reader's plan_change hearing the plans and the period).
        return False
    reading = acts.read_desk_intent(text)
    return reading.act == "plan_change" and reading.confidence >= PART_CONFIDENCE


# A question whose question word asks for a plan ("and which plan is that invoice for?", "what
# tier was that one"): grammar, the interrogative's noun is what is asked (issue 38, held-13).
_WHICH_PLAN = LazyPattern(r"^\W*(?:(?:and|so|ok|but)\W+)?(?:which|what)\s+(?:plan|tier|subscription|package)\b", re.I)


def asks_which_plan(text: str) -> bool:
    """The message opens by asking which plan (what it asks of an invoice or a charge shown)."""
    return bool(_WHICH_PLAN.match(text))


# The customer's own change told, done, denied or left undone ("i didn't upgrade or buy anything",
# "we never switched plans", "i went down from pro to starter in march", "i forgot to cancel before
# it renewed"): a subject, at most one word, then a negated auxiliary, a verb of an intention not
# carried out, or a change verb in the past (grammar, closed classes; "what if we went down to pro"
# supposes, it tells nothing). Told beside a charge it says why the charge is wrong or what it is
# about; it asks for no change (money-17).
_OWN_CHANGE_TOLD = LazyPattern(
    r"(?<!\bif )\b(?:i|we)\s+(?:\w+\s+)?(?:did\s*n[o']?t|didnt|never|have\s*n[o']?t|havent|had\s*n[o']?t|hadnt|forgot|meant\s+to"
    r"|went|moved|switched|changed(?!\s+(?:my|our)\s+minds?)|upgraded|downgraded|dropped|stepped)\b",
    re.IGNORECASE,
)


def without_own_change_told(text: str) -> str:
    """`text` without the parts (`cues.parts`) that tell the customer's own change, done or not
    (the rest as it was said: "instead of monthly" keeps its "instead")."""
    for told in (p for p in cues.parts(text) if _OWN_CHANGE_TOLD.search(p)):
        text = text.replace(told, " ")
    return text


def asks_price(text: str) -> bool:
    """The message asks what a plan costs, and asks for no change: the whole of it does not read
    plan_change, and it or one of its clauses reads pricing."""
    if acts.read_desk_intent(text).act == "plan_change":
        return False
    return a_part_reads(text, "pricing")


def invoice_asked(text: str) -> bool:
    """An invoice named by its number (the slot rule) and asked about ("what is INV-7777 on my
    statement?"): the invoice asked, shown when it is the account's and said plainly not found
    when it is not (account._invoices_answer), with no other matter heard (issue 38, cancel-18);
    asked for too, the act reader's request ("pls resend INV-7781": route20)."""
    if not slot_extraction.extract(text).invoice_ids:
        return False
    return is_question(text) or acts.read_act(text).act == "request"
