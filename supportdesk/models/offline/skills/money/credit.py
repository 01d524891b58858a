"""Account credits (part of the money skill, ./__init__.py): made on a request or a yes, offered
otherwise, or passed up to the agent that may add them. Apart because a credit follows its own
rule: asked for its amount, never read from a charge."""

from __future__ import annotations

from supportdesk.engine.protocol import Transfer
from supportdesk.models.offline import cues
from supportdesk.models.offline import slots as slot_extraction
from supportdesk.models.offline.skills.money.base import MoneyBase
from supportdesk.text import money

CREDIT_AMOUNT_QUESTION = "What amount of credit are you asking for?"


class MoneyCredit(MoneyBase):
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
