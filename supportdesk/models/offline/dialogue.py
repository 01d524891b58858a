"""Dialogue state: what an offline agent has offered, what the customer points at, what is
still to do.

A competent agent keeps three things in mind between messages, and so do ours, in the shared
context where staff see them in the inspector:

- `pending_offer`: the one action the agent's last reply proposed and is waiting for a "yes"
  on (the tool, its exact arguments, what was said, and the things the reply listed, which
  "the second one" or "both" point at, and a batch still to ask about). Where the desk's gate
  holds the call, the call went with the question and the question is the desk's offer
  (issue 33): the gate reads the answer and runs exactly that call on a yes, and the agent
  reads the gate's reading from the log (`View.offer_answer`). An offer the gate did not hold
  is read with the same one reader (engine/confirmation.py). A new request replaces it; a
  refusal, or any reply that proposes nothing, clears it. An offer answers one customer
  message: a "yes" two messages later confirms nothing.
- `pending_issues`: problems the customer raised that another agent owns, handed over once
  the current one is resolved.
- the facts (emails, amounts, ISO dates ...), written by `view.Facts`.

Everything here is a pure function of the log and the context, like the rest of the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from supportdesk.models.offline import cues
from supportdesk.models.offline import slots as slot_extraction
from supportdesk.patterns import LazyPattern

PENDING_OFFER = "pending_offer"
PENDING_ISSUES = "pending_issues"
# Whose steps for a trouble still await the customer's report, after a question asked beside the
# trouble was answered in the same reply by another agent: {"agent": ..., "at": customer messages
# then}. The next message, if it reports on the steps, goes back to that agent (issue 38, two19).
STEPS_OUT = "steps_out"

# The actions that change an account or move money: executed only when the customer's latest
# message asked for that action or confirmed that exact offer.
ACCOUNT_ACTIONS = {
    "refund_charge": "refund",
    "issue_credit": "credit",
    "change_plan": "plan",
    "cancel_subscription": "cancel",
}


@dataclass(frozen=True)
class Offer:
    action: str
    arguments: dict[str, Any]
    summary: str
    turn: int  # how many customer messages there were when it was made
    agent: str
    options: list[str] = field(default_factory=list)  # ids the reply listed, in order
    # The same action on several things at once ("refund both"): each one's arguments.
    batch: list[dict[str, Any]] = field(default_factory=list)

    @property
    def intent(self) -> str | None:
        return ACCOUNT_ACTIONS.get(self.action)

    def as_context(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "action": self.action,
            "arguments": dict(self.arguments),
            "summary": self.summary,
            "turn": self.turn,
            "agent": self.agent,
        }
        if self.options:
            out["options"] = list(self.options)
        if self.batch:
            out["batch"] = [dict(b) for b in self.batch]
        return out

    @classmethod
    def from_context(cls, value: Any) -> Offer | None:
        if not isinstance(value, dict) or not isinstance(value.get("action"), str) or not isinstance(value.get("arguments"), dict):
            return None
        return cls(
            action=value["action"],
            arguments=dict(value["arguments"]),
            summary=str(value.get("summary", "")),
            turn=int(value.get("turn", -1)) if str(value.get("turn", "")).lstrip("-").isdigit() else -1,
            agent=str(value.get("agent", "")),
            options=[str(o) for o in value.get("options", []) if isinstance(o, str)],
            batch=[dict(b) for b in value.get("batch", []) if isinstance(b, dict)],
        )


def open_offer(context: dict[str, Any], customer_messages: int) -> Offer | None:
    """The offer made in reply to the previous customer message, if it is still open."""
    offer = Offer.from_context(context.get(PENDING_OFFER))
    if offer is None or offer.turn != customer_messages - 1:
        return None
    return offer


# --- what the customer's message does --------------------------------------------------------------


def refuses(text: str) -> bool:
    """The reply turns something down ("no thanks", "don't"). A yes is read by the desk's one
    confirmation reader (engine/confirmation.py `read_answer`), never here."""
    return bool(cues.DECLINE.search(text))


BOTH = LazyPattern(r"\b(?:both|all (?:of )?(?:them|those|these|the charges|the payments)|each of them|them all|the two of them)\b", re.I)
_ORDINALS = (
    (LazyPattern(r"\b(?:first|1st|earlier|earliest|former|older|original)\b(?! time)", re.I), 0),
    (LazyPattern(r"\b(?:second|2nd)\b(?! time)", re.I), 1),
    (LazyPattern(r"\b(?:third|3rd)\b(?! time)(?=\s*(?:one|charge|payment)\b)", re.I), 2),
    (LazyPattern(r"\b(?:last|later|latest|latter|newer|newest|most recent|duplicate|double|extra|repeat(?:ed)?)\b(?! (?:month|week|year|time))", re.I), -1),
)


# A charge named by its id ("CH-9003").
_CHARGE_ID = LazyPattern(r"\b(ch[- ]?\d{3,})\b", re.I)
# "a double of the march 1st one", "the same charge as march 1", "a copy of CH-9003": what follows
# names the charge this one repeats, not the one meant (issue 38: "that's a double of the march
# 1st one, refund it" refunded March 1). Read up to the end of its clause.
_REPEATED = LazyPattern(
    r"\b(?:same(?:\s+(?:charge|payment|amount|thing|one))?\s+as|(?:double|duplicate|dupe|copy|repeat|repetition|twin)\s+of)\b"
    r".*?(?=$|[,;:.!?]|\s[-\u2013\u2014]\s|\b(?:and|but|so|refund|please|i\s+want|i'?d\s+like|give|can|could)\b)",
    re.I,
)


def without_repeated(text: str) -> str:
    """The text less what names the charge another one repeats ("same as march 1")."""
    return _REPEATED.sub(" ", text)


# The days of the month a text names without their month ("the one on the 3rd"): a slot rule,
# read where the facts are read too (a bare day in the month of the date said before it).
bare_days = slot_extraction.bare_days


def days_named(text: str) -> int:
    """How many days (dated, or a day of the month alone: "on the 3rd") the text names."""
    return len(slot_extraction.extract(text).dates) + len(slot_extraction.bare_days(text))


# "the other one", "the other charge": of two listed, the one not offered.
_THE_OTHER = LazyPattern(r"\b(?:the\s+)?other\s+(?:one|charge|payment|1)\b|\bthe\s+other\b(?!\s+(?:day|thing|way|team|issue|problem|matter|question))", re.I)


def point_at(
    text: str, options: list[dict[str, Any]], date_key: str = "charged_on", *, positions: bool = True, offered: str | None = None
) -> list[dict[str, Any]] | None:
    """Which of `options` (what the agent last listed, in order) the customer points at.

    "both" / "all of them" -> every option; "the March 3rd one" -> by date; "the 29.99 one" ->
    by amount; "the second one", "the later one", "the duplicate" -> by position. None when the
    message points at nothing in particular ("it", "that charge" are the offer itself).
    """
    if not options:
        return None
    text = without_repeated(text)
    if BOTH.search(text) and len(options) > 1:
        return list(options)
    found = slot_extraction.extract(text)
    ids = {"CH-" + re.sub(r"\D", "", m) for m in _CHARGE_ID.findall(text)}
    if ids:
        hits = [o for o in options if str(o.get("id", "")).upper() in ids]
        if hits:
            return hits
    if found.dates:
        hits = [o for o in options if any(d.matches(str(o.get(date_key, ""))) for d in found.dates)]
        if hits:
            return hits
    if found.amounts and len({o.get("amount") for o in options}) > 1:
        hits = [o for o in options if any(abs(float(o.get("amount", 0)) - a.value) < 0.005 for a in found.amounts)]
        if hits:
            return hits
    # A day without its month ("the one on the 3rd"): the listed charge made on that day, when
    # exactly one was (issue 38); else it may be a position ("the 2nd one"), read below.
    days = slot_extraction.bare_days(text)
    if days:
        hits = [o for o in options if str(o.get(date_key, ""))[8:10].isdigit() and int(str(o.get(date_key))[8:10]) in days]
        if len(hits) == 1:
            return hits
    # "actually the other charge": of two listed, the one not offered (issue 38: a change of
    # mind about which charge re-offered the same one).
    if offered and len(options) == 2 and _THE_OTHER.search(text):
        rest = [o for o in options if str(o.get("id", "")) != offered]
        if len(rest) == 1:
            return rest
    if not positions:
        return None
    # Ordinals without a date beside them ("the 3rd" alone is a date only with a month).
    stripped = slot_extraction.without_dates(text)
    for pattern, index in _ORDINALS:
        if pattern.search(stripped) and (index < len(options) or index == -1):
            return [options[index]]
    return None


# --- issues raised for someone else ---------------------------------------------------------------------


def pending_issues(context: dict[str, Any]) -> list[dict[str, Any]]:
    value = context.get(PENDING_ISSUES)
    if not isinstance(value, list):
        return []
    return [i for i in value if isinstance(i, dict) and isinstance(i.get("agent"), str) and isinstance(i.get("text"), str)]
