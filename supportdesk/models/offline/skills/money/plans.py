"""Plan changes as the money agent meets them (part of the money skill, ./__init__.py): what a
change would mean for money already paid, a yes to a quoted price, and another plan named in
reply to an offered change. Apart from offers.py because the plan is read from the reply's words,
whatever its yes/no reading."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from supportdesk.engine.confirmation import read_answer, request_clauses
from supportdesk.engine.protocol import CallTools
from supportdesk.models.offline import cues, dialogue
from supportdesk.models.offline import slots as slot_extraction
from supportdesk.models.offline.skills.account import PLAN_FIELDS
from supportdesk.models.offline.skills.common import PLAN_CHANGE_ASKED
from supportdesk.models.offline.skills.money import asks
from supportdesk.models.offline.skills.money.base import MoneyBase
from supportdesk.patterns import LazyPattern


def _change_verb(text: str) -> str:
    return "downgrade" if cues.PLAN_DOWN.search(text) else "upgrade" if cues.PLAN_UP.search(text) else "change plans"


def plan_change_facts(text: str) -> str:
    """What a plan change made now or at renewal means for money already paid."""
    verb = _change_verb(text)
    return (
        f"If you {verb} now, the change takes effect straight away: what you've already paid for this period "
        "isn't refunded or prorated, and nothing extra is charged today; from your next payment you pay the new plan's price. "
        "If you'd rather keep everything you've paid for, the change can be made at your next renewal instead, and nothing "
        "changes until then."
    )


def plan_change_answer(text: str) -> str:
    """What a plan change made now or at renewal means for money already paid (no change made)."""
    return f"{plan_change_facts(text)} I haven't changed anything: just tell me if you'd like to {_change_verb(text)}, and when."


# A move asked for without the plan's name ("ok move me to it", "switch me then").
_MOVE = LazyPattern(r"\b(?:move|switch|put|upgrade|downgrade|change)\b", re.I)
# A plan had: moved to, or wanted ("put me on ...", "we only need ...", "i'd like ...").
_HAVE = LazyPattern(r"\b(?:move|switch|put|upgrade|downgrade|change|swap|go|want|wanna|need|like|prefer|take|choose|pick)\b", re.I)
# What a plan is spoken of as when its name is not said: "the big plan for teams", "the 9.99 one".
_PLAN_NOUN = LazyPattern(r"\b(?:plans?|tiers?|ones?|packages?|options?|subscriptions?|levels?)\b", re.I)
# A price written bare ("the 9.99 one"), its cents always said; an email's digits are no price.
_PRICE = LazyPattern(r"(?<![\w.@-])(\d{1,5}\.\d\d)(?![\w@-]|\.\d)")
# The plan wanted, right after the verb that wants it ("we want pro, team is too much"): the
# plan's name is a rule's (cues.PLAN_NAME); which one is wanted, the sentence's shape.
_WANTED = LazyPattern(
    r"\b(?:want|wanna|need|like|prefer|take|choose|pick)\s+(?:to\s+(?:be\s+on|have|go\s+(?:to|with))\s+)?(?:only\s+|just\s+)?"
    r"(?:the\s+)?(starter|pro|team)\b", re.I,
)

# The wanted verb's plan said as the one exchanged for another ("we'd like team swapped for pro",
# "we need team changed to pro", "want team down to pro"): the plan it goes to is the one wanted.
_EXCHANGED_FOR = LazyPattern(r"\s+(?:\w+\s+)?(?:for|to|with|into)\s+(?:the\s+)?(starter|pro|team)\b", re.I)


def wanted_plan(text: str) -> str | None:
    """The plan the wanting verb asks for (`_WANTED`: "we want pro, team is too much"), or the one
    it is exchanged for when the words go on to say so (`_EXCHANGED_FOR`); None when no plan is
    named right after a verb of wanting."""
    wanted = _WANTED.search(text)
    if wanted is None:
        return None
    exchanged = _EXCHANGED_FOR.match(text, wanted.end())
    return (exchanged or wanted).group(1).lower()


# A plan's own nouns, without "one": "the second one" points into whatever list was shown last.
_PLAN_ITSELF = LazyPattern(r"\b(?:plans?|tiers?|packages?|levels?|subscriptions?)\b", re.I)


def names_plan_by_place(text: str) -> bool:
    """The words name a plan by its place in the price list: a middle or an end counted from
    ("the middle plan", "the one in between", "the second cheapest one"), or an ordinal with a
    plan's own noun ("the second plan"; "the second one" alone points into any list)."""
    place = slot_extraction.place_named(text)
    if place is None:
        return False
    return bool(_PLAN_ITSELF.search(text)) or (not place.by_order and bool(_PLAN_NOUN.search(text) or place.end == "middle"))


def plan_in_catalogue(text: str, plans: list[dict[str, Any]]) -> str | None:
    """The one plan of the price list `plans` the words name by what it is rather than by its
    name as the rules know it: the catalogue's own name in another form ("the big plan for
    teams", "the pro one"), or its monthly or annual price ("the 9.99 one", "the one that costs
    29.99 a month"), or its place in the price list's order of prices ("the middle plan", "the
    one in between", "the second cheapest": slots.place_named). None when no plan, or more than
    one, fits."""
    place = slot_extraction.place_named(text)
    if place is not None:
        picked = place.pick(sorted(plans, key=lambda p: float(p["monthly_price"])))
        return str(picked["code"]) if isinstance(picked, dict) else None
    words = [w.lower() for w in re.findall(r"[A-Za-z]+(?:'s)?", text)]
    stems = {re.sub(r"(?:'s|s)$", "", w) for i, w in enumerate(words) if i == 0 or words[i - 1] not in ("my", "our", "whole")}
    # A price said bare is a price here ("the 9.99 one"): the words are about plans.
    amounts = {a.value for a in slot_extraction.extract(text).amounts} | {float(n) for n in _PRICE.findall(text)}
    fits = set()
    for p in plans:
        names = {str(p.get("code", "")).lower(), str(p.get("name", "")).lower()}
        prices = {round(float(p["monthly_price"]), 2), round(float(p["annual_price"]), 2)}
        if names & stems or prices & amounts:
            fits.add(str(p["code"]))
    return fits.pop() if len(fits) == 1 else None


class MoneyPlans(MoneyBase):
    def _change_with_its_price(self, customer_id: str, text: str, asked: set[str]):
        """The plan change with its price ("switch us to team but billed annually - what's the
        total per year?" asks it; "put me on pro billed once a year" does not, and is told it
        too): read from the price list and said before the desk's gate asks for the yes to the
        change asked outright. (A change put as a question is offered with its price already:
        account.py `_plan_change`.)"""
        action = self._plan_change(customer_id, text, asked)
        if not isinstance(action, CallTools) or action.text.strip():
            return action
        # (Said whether or not it was asked: the yes the gate asks for is to a plan at its price,
        # "put me on pro billed once a year" commits to $299.99 a year, and the customer should
        # hear that before answering, as a change put as a question already is.)
        call = next((c for c in action.calls if c.name == "change_plan"), None)
        if call is None:
            return action
        # The price list read in an earlier turn (for the next payment, say) still holds: read
        # again only when none was (a plan's prices do not change within a conversation).
        earlier = self.view.last_call("list_plans")
        listing = earlier.output.get("plans") if earlier is not None and earlier.ok and isinstance(earlier.output, dict) else None
        plans = [p for p in listing or [] if isinstance(p, dict) and PLAN_FIELDS <= p.keys()]
        if not plans:
            read, plans = self._price_list()
            if read is not None:
                return read
        args, record = call.arguments or {}, self._customer_record(customer_id) or {}
        period = str(args.get("billing_period") or record.get("billing_period") or "monthly")
        priced = self._change_priced(plans, str(args.get("plan")), period).strip()
        if not asks.price_asked(text) and any(priced in m.text for m in self.view.agent_messages):
            return action  # (unasked, and this very price told in an earlier reply: not said again)
        return dataclasses.replace(action, text=priced)

    def _priced_and_asked_for(self, text: str):
        """A plan's price asked and, in a clause of its own, the move to it asked for ("whats ur
        cheapest plan? put me on that one", "how much is team, and switch me to it"): both parts
        are answered, the price said and the change asked for put to the desk's gate (issue 38,
        money-15), rather than the price alone with "would you like to change?" asked back. The
        clause is a request to the act reader with a verb of having or moving (`_HAVE`) and no
        question of its own, in a message that does not say it asks for no change."""
        if cues.disclaims_action(text):
            return None  # "just curious, dont switch me": a price asked, the change refused outright
        if not any(_HAVE.search(c) and not asks.is_question(c) for c in request_clauses(text)):
            return None
        customer_id = self._customer_id()
        if customer_id is None:
            return self._identify({"plan"})
        return self._change_with_its_price(customer_id, text, {"plan", "pricing"})

    def _plan_told(self, asked: set[str], text: str):
        """`_plan_told_in` this message; or, when it only gives the account the desk asked for
        ("dev@example.com" after "what's the email on your account?"), the message before it:
        what was said stays said (issue 38), the change told there is offered now."""
        told = self._plan_told_in(asked, text)
        if told is not None or asked or not text or not cues.only_facts(text):
            return told
        if "email" not in self.view.last_agent_text().lower():
            return None
        earlier = [t for t in self.topic_texts() if t != text]
        return self._plan_told_in(self._asked(earlier[-1]), earlier[-1]) if earlier else None

    def _plan_told_in(self, asked: set[str], text: str):
        """A plan change told in words the request cues do not read as one (issue 38): a plan
        named with when it should start ("from my next renewal i want pro, not team anymore"), or
        a plan named by what it is ("the big plan for teams", "the 9.99 one"), resolved against
        the price list. The customer named no change in the desk's words, so it is offered and
        waits for a yes; a question about a plan is not one (./asks.py answers it)."""
        if not text or asked - {"plan", "pricing"} or "pricing" in asked and asks.is_question(text):
            return None
        if cues.PLAN_CHANGE_QUESTION.search(text) or asks.asks_about(text):
            return None  # asked about ("can I"... is asking for it: the desk's convention)
        plan, _period = cues.plan_request(text)
        # A plan named by its place in the price list ("the team plan is too much, i want the
        # one in between"): the place is the plan wanted, whatever plan the words also name.
        placed = names_plan_by_place(text) and bool(_HAVE.search(text))
        if plan is not None and not placed:
            if "plan" in asked or not cues.AT_RENEWAL.search(text):
                return None
            plan = wanted_plan(text) or plan  # "we want pro, team is too much"
        else:
            if not _HAVE.search(text) or not (_PLAN_NOUN.search(text) or _PRICE.search(text)):
                return None
            if cues.PLAN_NAME.search(text) and not placed:
                return None  # a plan named as the rules know it ("I'm on team, down one plan"): theirs
            if cues.CHARGE_TROUBLE.search(text) or slot_extraction.extract_dates(text) or slot_extraction.months_named(text):
                return None  # "you took 9.99 on march 18, i want it back": a charge's amount, no plan
            if self._customer_id() is None:
                return None  # the account first (asked for as any plan change asks): then this
            read, plans = self._price_list()
            if read is not None:
                return read
            # (By its name in the catalogue's words before its place: "upgrade me to the big plan
            # for teams" names Team; "the cheapest" alone is read by the plan change.)
            plan = plan_in_catalogue(text, plans)
            if plan is None:
                return None
        customer_id = self._customer_id()
        if customer_id is None:
            return self._identify({"plan"})
        return self._plan_change(customer_id, f"{text} (to the {plan} plan)", set())

    def _plan_question_taken(self, asked: set[str], text: str):
        """Our last reply quoted a plan's price and asked whether they'd like to change plans: a
        yes, a move asked with no plan named ("ok move me to it": the plan just quoted), or another
        plan named ("actually, starter instead") is that change, offered with the plan the topic
        holds, never the price quoted again (a clear yes is not asked twice)."""
        v = self.view
        if not v.last_agent_text().endswith(PLAN_CHANGE_ASKED) or asked - {"plan", "pricing"}:
            return None
        reading = read_answer(text)
        if asked == {"pricing"} and asks.is_question(text) and reading != "yes" and not _MOVE.search(text):
            # "and the pro price?": a plan named in a question asking its price asks the price
            # (again), it takes no change (two19: the price answered beside a trouble's steps)
            return None
        # A plan picked by its place in the list just given ("the second one sounds right for
        # me"): that plan (issue 38, what was said stays said: the list is the one shown).
        placed = slot_extraction.place_named(text) is not None and reading != "no" and not asks.is_question(text)
        if not (reading == "yes" or "plan" in asked or _MOVE.search(text) or placed or (cues.plan_request(text)[0] and reading != "no")):
            return None
        customer_id = self._customer_id()
        if customer_id is None:
            return self._identify({"plan"})  # the account first (a price needs none): then the change
        if placed and cues.plan_request(text)[0] is None:
            read, plans = self._price_list()
            if read is not None:
                return read
            plan = plan_in_catalogue(text, plans)
            if plan is not None:
                return self._plan_change(customer_id, f"{text} (to the {plan} plan)", set())
        return self._plan_change(customer_id, text, set())

    def _another_plan_named(self, offer: dialogue.Offer | None, text: str):
        """A reply to a plan change we offered (or the desk's gate held) that names another plan
        or another billing period ("yes but starter pls, not team", "actually no, the yearly
        one"): whatever its yes/no reading, the offer corrected is offered in the offered one's
        place, with what the reply does not name kept from the offer it corrects (issue 38: "the
        yearly one" after Pro monthly is Pro yearly, never the account's own plan yearly); never
        the offered change run, nor the new one without its own yes. The plan and period they are
        on ("no, I'll stay on pro", "no, I'll stay monthly") are no correction."""
        offered = self._offered(offer, "plan", "change_plan")
        if offered is None:
            return None
        plan, period = cues.plan_request(text)
        customer_id = self._customer_id()
        if customer_id is None or (plan is None and period is None):
            return None
        record = self._customer_record(customer_id) or {}
        if plan is None or plan == offered.get("plan"):
            # Only the period named: a correction when it is not the one offered (nor, offered
            # none, the one they are billed by now).
            if period is None or period == (offered.get("billing_period") or record.get("billing_period")):
                return None
        elif plan == record.get("plan") and period is None:
            return None
        changed = self._plan_change(customer_id, corrected_request(offered, text), set())
        if period is None or period == offered.get("billing_period") or not getattr(changed, "text", ""):
            return changed
        # Another period is another price: the corrected offer says it ("wait, i meant the annual
        # one" is $299.99 a year), so the yes agrees to a price it was told.
        read, plans = self._price_list()
        if read is not None:
            return read
        priced = self._change_priced(plans, str(plan or offered.get("plan") or record.get("plan")), period)
        return dataclasses.replace(changed, text=f"{priced}{changed.text}")

    def _offered(self, offer: dialogue.Offer | None, intent: str, tool: str) -> dict[str, Any] | None:
        """The arguments of the change of `intent` we offered, or of `tool`'s call the desk's gate
        held and the customer's reply declined; None when neither is there to correct."""
        if offer is not None and offer.intent == intent:
            return dict(offer.arguments)
        if self.view.declined_tool == tool:
            held = next((t for t in reversed(self.view.tools) if t.name == tool), None)
            return dict(held.arguments) if held else {}
        return None

    def _another_card_named(self, offer: dialogue.Offer | None, text: str):
        """A reply to a card change we offered (or the desk's gate held) that names another card
        or corrects its last four ("sorry typo, its 7712 not 7721", "wait, the visa ending
        1881"): whatever its yes/no reading, the corrected card is offered in the offered one's
        place, its brand kept when only the digits are told; the first card is never put on
        file, nor the corrected one without its own yes (issue 38)."""
        offered = self._offered(offer, "payment", "update_payment_method")
        if offered is None:
            return None
        before, customer_id = str(offered.get("method") or ""), self._customer_id()
        method = cues.card_description(text)
        digits = slot_extraction.four_digits_meant(text)
        if method is None and digits and " ending " in before:
            method = f"{before.rsplit(' ', 1)[0]} {digits}"
        if method is None or method == before or customer_id is None:
            return None
        if self._keeps_method_on_file(text):
            return None  # read as the answer it is
        return self.step.call("update_payment_method", {"customer_id": customer_id, "method": method})


    def _keeps_method_on_file(self, text: str) -> bool:
        """The one payment method the message names is the one already on file ("forget it, leave
        it on paypal"): it is kept, no change asked for (money-17)."""
        customer_id = self._customer_id()
        method = cues.card_description(text)
        return bool(method and customer_id and method == (self._customer_record(customer_id) or {}).get("payment_method"))


def corrected_request(offered: dict[str, Any], text: str) -> str:
    """A correction's words with the offer's parts it does not name said after them: the plan,
    the billing period and when (read by the plan change as one request)."""
    plan, period = cues.plan_request(text)
    said = [text]
    if plan is None and offered.get("plan"):
        said.append(f"to the {offered['plan']} plan")
    if period is None and offered.get("billing_period"):
        said.append("billed annually" if offered["billing_period"] == "annual" else "billed monthly")
    if offered.get("when") == "renewal" and not cues.AT_RENEWAL.search(text) and not re.search(r"\b(?:now|today|right away)\b", text, re.I):
        said.append("at renewal")
    return " ".join(said)
