"""The senior skill: what a level-1 agent passes up a level (a refund above its limit, ground no
tool covers, a repeat contact, lost data) and what the level-2 agent takes from it, using the
shared context so the customer never repeats anything."""

from __future__ import annotations

import re
from typing import Any

from supportdesk.engine.protocol import Transfer
from supportdesk.models.offline import cues
from supportdesk.models.offline.skills.common import SkillBase, with_article
from supportdesk.readers import acts
from supportdesk.text import clip_words, money
from supportdesk.patterns import LazyPattern


# A plan spoken of, by its name or asked which: a feature question about one asks what it comes
# with. ("team" only as the plan, "on team": "our compliance team" is people; "my plan" is the
# customer's own, "someone who speaks italian to talk about my plan" asks for a person.)
_A_PLAN = LazyPattern(r"\b(?:starter|pro)\b|\bon team\b|\b(?:which|what) (?:of (?:your|the) )?plans?\b", re.I)


class SeniorSkill(SkillBase):
    def _articles_first(self, text: str, ground: str) -> bool:
        """A question about a plan's feature (a plan named, no price asked) the learned ground reader
        reads as ground no tool covers, naming none of that ground's own words, is searched in the
        articles first (the technical skill's, when none
        answers, brings the ground back: `_beyond_me(searched=True)`): "how long do you keep old
        versions of files?" and "which plan do we need for sso?" read as privacy requests by their
        shape (data kept, what we need), and an article answers each (kbfacts15)."""
        words = cues.UNKNOWN_GROUND_WORDS.get(ground, ())
        return (
            self.view.has_tool("search_kb") and "tech" in self.skills and acts.asks_rather_than_reports(text)
            and bool(_A_PLAN.search(text)) and not cues.PRICING.search(text)
            and not any(w in text.lower() for w in words)
        )

    def escalation_target(self, tool: str) -> str | None:
        for name in self.me.handoffs:
            agent = self.view.desk.agents.get(name)
            if agent and agent.level > self.me.level and tool in agent.tools:
                return name
        return None

    def _beyond_me(self, text: str, searched: bool = False):
        """What a level-1 agent should not handle alone: ground no tool or article covers, a
        repeat contact, lost data. Up to a higher level when there is one; else a person.
        `searched`: the articles were searched for it and none answers."""
        v = self.view
        ground = cues.unknown_ground(text, v.desk.desk.name)
        repeat = bool(cues.REPEAT_CONTACT.search(text))
        lost = cues.data_loss_told(text)
        if ground is not None and self._covered(ground):
            ground = None
        if ground is not None and not searched and self._articles_first(text, ground):
            ground = None
        owner = self.ground_owner(ground) if ground is not None else None
        if owner is not None:
            return self._hand_back(text, for_agent=owner)
        if ground is None and not repeat and not (lost and "tech" in self.skills):
            return None
        up = self._higher_agent()
        if up is None:
            if ground is not None:
                return self._ask_human(f"{ground}: nothing in our tools or help articles covers it", {"escalation_reason": ground})
            return None  # the most senior agent: handle what it can
        if ground is not None:
            why, say = ground, (
                f"That's {with_article(ground)}, and it isn't something I can do or look up from here, so I won't guess. "
            )
        elif lost:
            why, say = "possible data loss", "Lost files need our engineers' attention straight away. "
        else:
            why, say = "repeat contact", "I'm sorry you've had to get in touch again about this. "
        extra: dict[str, Any] = {"escalation_reason": why}
        if lost:
            extra["bug_summary"] = self._bug_summary(text, text, [])
        title = v.desk.agents[up].title.lower()
        return Transfer(
            to_agent=up,
            reason=f"{why}: {clip_words(text, 100)}",
            handoff_kind="escalate",
            text=say + f"I'm passing this to a {title} colleague, who will see everything you've told me.",
            context=self.step.context(extra),
        )

    def _higher_agent(self) -> str | None:
        for name in self.me.handoffs:
            agent = self.view.desk.agents.get(name)
            if agent is not None and agent.level > self.me.level:
                return name
        return None

    def _escalated_refund(self):
        """Level 1 passed up a refund above its limit this turn: ask the customer about it, once,
        with the call (the desk's gate holds it, and the first yes runs it; then staff approval,
        where the policy asks for it). Where the gate would not hold the call (a desk that turned
        it off for refunds) and the customer asked for or confirmed the refund, it is made."""
        v = self.view
        arrived = any(h.to_agent == self.me.name and h.handoff_kind == "escalate" for h in v.turn_handoffs)
        charge_id, amount = v.context.get("charge_id"), v.context.get("refund_amount")
        if not arrived or not charge_id or not amount or not v.has_tool("refund_charge"):
            return None
        if self._refunded(charge_id) or self._pending_refund() is not None or v.calls("refund_charge", this_turn=True):
            return None
        if v.offer_answer is not None:
            return None  # the customer answered our question: that answer is what is read now
        reason = v.context.get("refund_reason") or "customer request"
        args = {"charge_id": charge_id, "amount": round(float(amount), 2), "reason": reason}
        over_mine = args["amount"] > v.amount_limit("refund_charge") + 1e-9
        if over_mine or (v.context.get("refund_asked") and not self.step.gated("refund_charge", args)):
            return self._refund_call(args)
        # A duplicate's question names both days of its pair, as the reply that found them did:
        # "yes, the second one" then answers it (money-17).
        pair = self._duplicate_question(str(charge_id), args["amount"])
        what = self._charge_label(str(charge_id))
        return self.step.offer(
            f"I can make this refund myself. {pair}" if pair
            else f"I can refund {money(args['amount'])} for {what} myself. Shall I go ahead with the refund?",
            "refund_charge", args, [str(charge_id)], customer_id=self._customer_id(),
        )

    def _escalate_refund(self, target: str, args: dict[str, Any], why: str, found: str | None = None):
        """Pass a refund above this agent's limit up a level. `found` (what was found, when the
        refund was not yet asked about) goes first in the sentence the customer reads; without
        it the customer asked for or confirmed the refund already."""
        amount = float(args.get("amount", 0))
        reason = str(args.get("reason", "refund"))
        context = self.step.context(
            {
                "refund_amount": amount,
                "refund_reason": reason,
                "charge_id": args.get("charge_id"),
                "customer_id": self._customer_id(),
                "escalation_reason": f"refund of {money(amount)}: {why}",
                "refund_asked": found is None,
            }
        )
        title = self.view.desk.agents[target].title.lower()
        limit = self.view.amount_limit("refund_charge")
        if found is None:
            said = (
                f"A refund of {money(amount)} is more than I can approve myself, so I'm passing this to a {title} colleague "
                "with all the details; you won't need to repeat anything."
            )
        else:
            said = (
                f"{found} Refunds above {money(limit)} are made by a {title} colleague, so I'm passing this to them "
                "with all the details; you won't need to repeat anything."
            ).strip()
        return Transfer(
            to_agent=target,
            reason=f"refund of {money(amount)} ({reason}) is {why}",
            handoff_kind="escalate",
            text=said,
            context=context,
        )
