"""Plan changes as the money agent meets them (part of the money skill, ./__init__.py): what a
change would mean for money already paid, a yes to a quoted price, and another plan named in
reply to an offered change. Apart from offers.py because the plan is read from the reply's words,
whatever its yes/no reading."""

from __future__ import annotations

import re
from typing import Any

from supportdesk.engine.confirmation import read_answer
from supportdesk.models.offline import cues, dialogue
from supportdesk.models.offline.skills.common import PLAN_CHANGE_ASKED
from supportdesk.models.offline.skills.money.base import MoneyBase


def plan_change_answer(text: str) -> str:
    """What a plan change made now or at renewal means for money already paid (no change made)."""
    verb = "downgrade" if cues.PLAN_DOWN.search(text) else "upgrade" if cues.PLAN_UP.search(text) else "change plans"
    return (
        f"If you {verb} now, the change takes effect straight away: what you've already paid for this period "
        "isn't refunded or prorated, and nothing extra is charged today; from your next payment you pay the new plan's price. "
        "If you'd rather keep everything you've paid for, the change can be made at your next renewal instead, and nothing "
        f"changes until then. I haven't changed anything: just tell me if you'd like to {verb}, and when."
    )


# A move asked for without the plan's name ("ok move me to it", "switch me then").
_MOVE = re.compile(r"\b(?:move|switch|put|upgrade|downgrade|change)\b", re.I)


class MoneyPlans(MoneyBase):
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

    def _another_plan_named(self, offer: dialogue.Offer | None, text: str):
        """A reply to a plan change we offered (or the desk's gate held) that names another plan
        or another billing period ("yes but starter pls, not team", "actually no, the yearly
        one"): whatever its yes/no reading, the offer corrected is offered in the offered one's
        place, with what the reply does not name kept from the offer it corrects (issue 38: "the
        yearly one" after Pro monthly is Pro yearly, never the account's own plan yearly); never
        the offered change run, nor the new one without its own yes. The plan and period they are
        on ("no, I'll stay on pro", "no, I'll stay monthly") are no correction."""
        v = self.view
        if offer is not None and offer.intent == "plan":
            offered = dict(offer.arguments)
        elif v.declined_tool == "change_plan":
            held = next((t for t in reversed(v.tools) if t.name == "change_plan"), None)
            offered = dict(held.arguments) if held else {}
        else:
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
        return self._plan_change(customer_id, corrected_request(offered, text), set())


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
