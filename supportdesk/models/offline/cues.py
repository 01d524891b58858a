"""Conversational cues the offline agents react to, whatever the desk routes on.

Routing between specialists is learned (classifier.py); these are the few things every
support agent recognises the same way: a greeting, thanks, a request for a person, a
question nobody on a software desk should answer, an attempt to talk an agent out of its
rules, and the customer's "yes, go ahead" or "that didn't help".
"""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE


def _any(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), _FLAGS)


GREETING = _any(
    r"^\s*(?:hi|hello|hey|hiya|howdy|good (?:morning|afternoon|evening)|greetings)\b[\s!,.]*(?:there)?[\s!,.]*$",
    r"^\s*(?:hi|hello|hey)[\s,!.]+(?:is )?any(?:one|body) (?:there|around)\??\s*$",
)
SMALL_TALK = _any(
    r"^\s*how are (?:you|u)(?: doing)?(?: today)?\??\s*$",
    r"^\s*(?:who|what) (?:am i talking to|are you)\??\s*$",
    r"^\s*are you (?:a )?(?:bot|robot|human|real person|ai)\??\s*$",
    r"^\s*what(?:'s| is) your name\??\s*$",
    r"^\s*what can you (?:help (?:me )?with|do)\??\s*$",
)
THANKS = _any(
    r"^\s*(?:ok(?:ay)?[,!. ]*)?(?:thanks|thank you|thx|cheers|great|perfect|awesome|brilliant)\b[^?]*$",
    r"^\s*(?:that(?:'s| is) all|bye|goodbye|have a (?:good|nice) day)\b",
    r"\bthat (?:worked|fixed it|did it|helped)\b",
)
HUMAN = _any(
    r"\b(?:speak|talk|chat)(?:ing)? (?:to|with) (?:a |an |your |the )?(?:human|person|real person|someone real|agent|manager|supervisor|representative|staff)\b",
    r"\b(?:human|real person|live agent|actual person)\b.*\b(?:please|now|need|want)\b",
    r"\b(?:want|need|get) (?:a |an )?(?:human|real person|live agent|manager|supervisor)\b",
)
OUT_OF_SCOPE = _any(
    r"\bweather\b", r"\btell me a joke\b", r"\bjoke\b", r"\brecipe\b", r"\bpoem\b", r"\bhomework\b",
    r"\b(?:stock|crypto|bitcoin)\b", r"\bfootball\b|\bsoccer\b|\bbasketball\b", r"\belection\b|\bpolitic",
    r"\bwrite (?:me )?(?:an? )?(?:essay|story|song|code|program)\b", r"\bmeaning of life\b",
    r"\b(?:capital|president) of\b",
)
INJECTION = _any(
    r"\bignore (?:all |any |your |the |previous |prior |these |those )*(?:rules|instructions|polic(?:y|ies)|limits?|guidelines|restrictions)\b",
    r"\b(?:disregard|forget|bypass|override) (?:all |any |your |the |previous )*(?:rules|instructions|polic(?:y|ies)|limits?)\b",
    r"\byou are now\b", r"\bsystem prompt\b", r"\bdeveloper mode\b", r"\bjailbreak\b",
    r"\bpretend (?:you are|to be)\b", r"\bas an? (?:admin|administrator)\b",
)
AFFIRM = _any(
    r"^\s*(?:yes|yeah|yep|yup|sure|ok(?:ay)?|please do|go ahead|do it|sounds good|correct|that's right|right)\b",
    r"\b(?:please|can you|could you|would you)\b.*\b(?:process|proceed|go ahead|do (?:it|that)|refund it)\b",
    r"\bprocess (?:it|that|the refund)\b",
)
DECLINE = _any(r"^\s*(?:no|nope|nah|don't|do not|not now|no thanks)\b")
STEPS_FAILED = _any(
    r"\b(?:did not|didn't|does not|doesn't|did nothing|not) (?:work|help|fix)",
    r"\b(?:still|again) (?:not|doesn't|does not|won't|can't|cannot|fails?|failing|crash|broken|the same|stuck|happening|get)",
    r"\b(?:already )?tried (?:that|those|this|everything|all|it|the steps)\b",
    r"\bno luck\b", r"\bsame (?:problem|issue|error)\b", r"\bkeeps? (?:happening|crashing|failing)\b",
)
BUG = _any(
    r"\bbug\b", r"\bdata loss\b", r"\blost (?:all )?my (?:files|data|work)\b", r"\b(?:deleted|wiped|erased) my (?:files|data)\b",
    r"\berror (?:5\d\d|code)\b", r"\bcrash(?:es|ed)? every time\b", r"\bcorrupt",
)

# Billing requests (the money skill's own vocabulary).
REFUND = _any(r"\brefund", r"\bmoney back\b", r"\breimburs", r"\breturn (?:the|my) money\b", r"\breverse (?:the|that) charge\b")
DUPLICATE = _any(r"\btwice\b", r"\bdouble[- ]?charged?\b", r"\bduplicate", r"\btwo (?:identical )?charges\b", r"\bcharged again\b", r"\btwo times\b")
CANCEL = _any(r"\bcancel(?:l?ing|l?ed)? (?:my |the |our )?(?:subscription|plan|account|renewal|membership)\b", r"\bstop (?:the )?(?:automatic )?renewal\b", r"^\s*(?:please )?cancel\b", r"\bi want to cancel\b")
PLAN_CHANGE = _any(r"\b(?:upgrade|downgrade|switch|change|move)\b.*\b(?:plan|starter|pro|team|annual|yearly|monthly)\b")
PAYMENT_METHOD = _any(
    r"\b(?:update|change|replace|new|add|switch)\b.*\b(?:payment method|card on file|billing card|credit card|card|paypal)\b",
    r"\b(?:card|payment method) (?:has )?expired\b",
)
INVOICE = _any(r"\binvoices?\b", r"\breceipts?\b")
PRICING = _any(r"\bhow much (?:is|does|do|are)\b", r"\bprices?\b|\bpricing\b", r"\bwhat (?:do|does) .* cost\b")
EXPLAIN = _any(r"\bexplain\b", r"\bwhat (?:is|was|are) (?:this|these|that) (?:charge|payment|fee)", r"\bdon'?t recogni[sz]e\b", r"\bnot recogni[sz]e\b", r"\bwhy (?:was|am|did|were) (?:i|we)\b.*\bcharged?\b")
CREDIT = _any(r"\bcredit\b(?! card)", r"\bcompensat", r"\boutage\b", r"\bdowntime\b")

# Technical requests (the tech skill's own vocabulary).
RESET = _any(
    r"\breset (?:my |the )?(?:password|passcode|pin)\b", r"\bpassword reset\b", r"\breset link\b",
    r"\bforg[oe]t(?:ten)? (?:my |the )?(?:password|passcode|pin)\b", r"\bsend (?:me )?(?:a |the )?(?:new )?(?:password|reset)\b",
)
LOGIN = _any(r"\b(?:can ?not|can't|cannot|unable to|couldn't|can't) (?:log|sign) ?in\b", r"\blog ?in (?:fails?|problem|issue)", r"\blocked out\b")

CLAUSE_SPLIT = re.compile(r"(?<=[.!?;])\s+|\s*(?:,|\.)?\s*\b(?:also|and also|another thing|one more thing|by the way|btw|plus)\b[,:]?\s*", _FLAGS)
CARD_DESCRIPTION = re.compile(
    r"\b(visa|mastercard|master card|amex|american express|discover)\b[^.\d]{0,30}?(?:ending(?: in)?|last four(?: digits)?(?: are| is)?|\*+|x+)\s*(\d{4})\b|\b(paypal)\b",
    _FLAGS,
)
CARD_NUMBER = re.compile(r"\b(?:\d[ -]?){13,19}\b")
PLAN_NAME = re.compile(r"\b(starter|pro|team)\b", _FLAGS)
PERIOD = re.compile(r"\b(annual(?:ly)?|yearly|monthly)\b", _FLAGS)


def clauses(text: str) -> list[str]:
    """A message split where customers change subject ("..., also I can't log in")."""
    return [c.strip(" ,.") for c in CLAUSE_SPLIT.split(text) if c and c.strip(" ,.")]


def card_description(text: str) -> str | None:
    m = CARD_DESCRIPTION.search(text)
    if not m:
        return None
    if m.group(3):
        return "paypal"
    brand = m.group(1).lower().replace("master card", "mastercard").replace("american express", "amex")
    return f"{brand} ending {m.group(2)}"


def plan_request(text: str) -> tuple[str | None, str | None]:
    plan = PLAN_NAME.search(text)
    period = PERIOD.search(text)
    period_value = None
    if period:
        period_value = "monthly" if period.group(1).lower() == "monthly" else "annual"
    return (plan.group(1).lower() if plan else None, period_value)
