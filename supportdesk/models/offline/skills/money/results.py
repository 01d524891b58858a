"""What the money agent says after an action's result (part of the money skill, ./__init__.py):
refunds and credits made, held for a supervisor or refused, cancellations, plan changes and
payment methods changed. Apart because it answers what a tool did, not what the customer asked."""

from __future__ import annotations

from typing import Any

from supportdesk.engine.confirmation import offer_sentence
from supportdesk.items import Confirmation, Decline, Offer
from supportdesk.models.offline.skills.money.base import MoneyBase
from supportdesk.models.offline.view import ON_OUR_SIDE, ToolEvent
from supportdesk.text import money


class MoneyResults(MoneyBase):
    def _money_results(self):
        """Answer what a tool did this turn (or escalate when the tool refused)."""
        v, step = self.view, self.step
        decisions = [n for n in v.turn_notices if n.notice_kind in ("approval_granted", "approval_denied")]
        if decisions:
            n = decisions[-1]
            approved = next((t for t in v.turn_tools if t.call_id == f"{n.data.get('approval_id')}-approved"), None)
            if n.notice_kind == "approval_denied":
                return step.answer(
                    "I'm sorry: our staff reviewed the request and did not approve it, so nothing was refunded or "
                    "credited. If you'd like, I can ask a member of staff to explain the decision."
                )
            if approved is not None and approved.ok and isinstance(approved.output, dict):
                return step.answer(self._done_text(approved.output, approved=True))
            if approved is not None:
                why = approved.reason
                if why is None:
                    return step.answer(
                        f"Our staff approved it, but {ON_OUR_SIDE}: nothing was refunded or credited yet. "
                        "A member of our staff can see what happened and will follow up."
                    )
                return step.answer(f"The request was approved, but it could not be completed: {why}")
        if not v.turn_tools:
            return None
        last = v.turn_tools[-1]
        standing = self._standing_offer(last)
        if standing is not None:
            # The desk's gate held the call for the customer's yes: asked, not refused. Its offer
            # stands (a message before it cannot answer it: the one this turn answers came
            # meanwhile, issue 34), so the reply asks the question, never the gate's words.
            return step.answer(offer_sentence(standing.action))
        # Lookups feed the decision that follows rather than being answered on their own.
        if not last.done or last.name in ("find_customer", "find_charges", "list_invoices", "list_plans", "request_human"):
            return None
        if last.name in ("refund_charge", "issue_credit"):
            if last.waiting:
                amount = last.arguments.get("amount", 0)
                what = "refund" if last.name == "refund_charge" else "credit"
                return step.answer(
                    f"A {what} of {money(amount)} needs a supervisor's approval, so I've sent it to our staff with all the "
                    "details. You'll see the outcome here as soon as they decide."
                )
            this_step = [t for t in v.turn_tools if t.name == last.name and t.seq >= self._step_start(last)]
            made = [t for t in this_step if t.ok and isinstance(t.output, dict)]
            refused = [t for t in this_step if t.done and t.is_error]
            over_limit = [t for t in refused if "limit for level" in str(t.output)]
            if over_limit and not made:
                # Above this level's limit: a higher level may make it.
                target = self.escalation_target(last.name)
                if target:
                    return self._escalate_refund(target, over_limit[-1].arguments, str(over_limit[-1].output))
            said = " ".join(self._done_text(t.output) for t in made)
            for t in refused:
                # The tool's policy decides, and says why: pass it on, and offer a person.
                what = self._charge_label(str(t.arguments.get("charge_id", ""))) if last.name == "refund_charge" else "that"
                why = (t.reason or ON_OUR_SIDE).split(" If the customer")[0].rstrip(". ")
                said += f" I couldn't refund {what}: {why}."
            if refused:
                said += " If you'd like, I can ask a member of our staff to look at it."
                step.resolved = bool(made)
                return step.answer(said.strip())
            rest, options = self._batch_rest() if last.name == "refund_charge" else ([], [])
            if rest and made:
                return self._offer_batch(rest, options, done=said.strip())
            step.resolved = True
            return step.answer(said or self._done_text(last.output))
        if last.is_error:
            return step.answer(f"That didn't go through: {(last.reason or ON_OUR_SIDE).rstrip('. ')}.")
        out = last.output if isinstance(last.output, dict) else {}
        step.resolved = True
        if last.name == "cancel_subscription":
            if out.get("previous_status") == "cancelled":
                return step.answer(
                    f"Your {str(out.get('plan', '')).title()} subscription was already cancelled, so nothing has changed: "
                    "it won't renew, and you keep access until the end of the period you've paid for."
                )
            return step.answer(
                f"Your {str(out.get('plan', '')).title()} subscription is cancelled: it won't renew and you won't be charged again. "
                "You keep access until the end of the period you've paid for."
            )
        if last.name == "change_plan":
            plan = str(out.get("plan", "")).title()
            billed = "annually" if out.get("billing_period") == "annual" else "monthly"
            status = out.get("status", "changed")
            if status == "unchanged":
                return step.answer(f"You're already on the {plan} plan, billed {billed}, so nothing needed changing.")
            if status == "scheduled":
                return step.answer(
                    f"Done: you'll move from the {str(out.get('from_plan', '')).title()} plan to the {plan} plan at your next "
                    f"renewal, billed {billed}. Until then nothing changes."
                )
            return step.answer(f"Done: you're now on the {plan} plan, billed {billed}. The change shows on your next invoice.")
        if last.name == "update_payment_method":
            return step.answer(f"Your payment method is now {out.get('payment_method')}; future charges will use it.")
        step.resolved = False
        return None

    def _standing_offer(self, event: ToolEvent) -> Offer | None:
        """The desk's offer of `event` (a call its gate held for a yes: the offer names the call)
        when this turn shows it and nothing closed it since (a yes, a no, a newer question)."""
        turn = self.view.turn
        offer = next((i for i in turn if isinstance(i, Offer) and i.call_id == event.call_id), None)
        if offer is None or any(isinstance(i, Confirmation | Decline) and i.offer_id == offer.offer_id for i in turn):
            return None
        return offer

    def _step_start(self, event: ToolEvent) -> int:
        """The seq of the first call requested in the same step as `event` (one batch)."""
        batch = [t for t in self.view.turn_tools if t.call_id.rsplit("_", 1)[0] == event.call_id.rsplit("_", 1)[0]]
        return min((t.seq for t in batch), default=event.seq)

    def _done_text(self, out: dict[str, Any], approved: bool = False) -> str:
        if "refund_id" in out:
            what = self._charge_label(out["charge_id"])
            if approved:
                return (
                    f"Good news: the refund was approved and processed: {money(out['amount'])} back for {what}, "
                    f"refund {out['refund_id']}. It reaches your original payment method within 5-10 business days."
                )
            return (
                f"Done: I've refunded {money(out['amount'])} for {what}, refund {out['refund_id']}. "
                "It goes back to your original payment method within 5-10 business days."
            )
        if "credit_id" in out:
            return f"I've added {money(out['amount'])} of credit to your account ({out['credit_id']}); it comes off your next invoice."
        return "Done."
