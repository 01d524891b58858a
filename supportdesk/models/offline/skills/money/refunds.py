"""Refunds (part of the money skill, ./__init__.py): which charge a refund is for (duplicates, a
charge named or pointed back at), the offer and the call within this level's limit (above it,
passed up: ../senior.py), the reason the policy lists, and the refusals it forces (no listed
reason, a failed or disputed charge, one already refunded). Apart because it is the one part that
moves money back."""

from __future__ import annotations

import re
from typing import Any

from supportdesk.items import Notice
from supportdesk.models.offline import cues, dialogue
from supportdesk.models.offline import slots as slot_extraction
from supportdesk.models.offline.skills.common import nice_date
from supportdesk.models.offline.skills.money.base import MoneyBase
# (charge_ids_not_held is read here, and importable from here as before the reads had it.)
from supportdesk.models.offline.skills.money.reads import charge_ids_not_held, not_held_said
from supportdesk.models.offline.view import ToolEvent
from supportdesk.text import money
from supportdesk.patterns import LazyPattern

# "it", "that one", "this charge": a charge named before.
_ANAPHOR = LazyPattern(r"\b(?:it|that|this)(?:\s+(?:one|charge|payment))?\b", re.I)


class MoneyRefunds(MoneyBase):
    def _refunds(self) -> list[ToolEvent]:
        return [t for t in self.view.tools if t.name == "refund_charge" and t.ok]

    def _refunded(self, charge_id: str | None) -> bool:
        return bool(charge_id) and any(
            isinstance(t.output, dict) and t.output.get("charge_id") == charge_id for t in self._refunds()
        )

    def _pending_refund(self) -> ToolEvent | None:
        """A refund waiting for staff, with no decision yet."""
        v = self.view
        decided = {n.data.get("approval_id") for n in v.history if isinstance(n, Notice) and n.notice_kind in ("approval_granted", "approval_denied")}
        for t in v.tools:
            if t.name == "refund_charge" and t.waiting and t.call_id not in decided:
                return t
        return None

    def _refunds_explained(self, cancelling: bool = False) -> str:
        reasons = list(self.view.tool_limits("refund_charge").reasons or ())
        if cancelling:
            return (
                "If you cancel, your plan doesn't renew and nothing more is charged; you keep access until the end of the "
                "period you've already paid for, and that period isn't refunded. "
                + (f"Refunds are made for these reasons only: {', '.join(reasons)}. " if reasons else "")
                + "I haven't changed anything: just tell me if you'd like to cancel."
            )
        which = f"Refunds are made for these reasons only: {', '.join(reasons)}. " if reasons else ""
        return (
            "A refund goes back to the original payment method and usually shows there within 5-10 business days "
            f"of being made. {which}If you're asking about a particular charge, tell me which one (its date or amount) "
            "and I'll look at it. I haven't changed anything."
        )

    def _offer_refund(
        self, found: str, question: str, args: dict[str, Any], options: list[str], asked_for: bool = True, **context: Any
    ):
        """Offer one refund: what was found, then the question, which goes with the call.

        A refund above this agent's limit is made by the agent it passes refunds up to. When the
        customer came about the charge (`asked_for`), it goes up a level at once, saying why, and
        that agent asks the one question (senior.py's `_escalated_refund`). A refund the customer
        did not come for (a duplicate seen while answering a question about charges) is put to
        them here, the exact charge and amount, on that agent's behalf (the gate's offer for it,
        issue 38: their yes hands over and that agent makes exactly this refund, never asking
        again); where the gate would not hold it, it is mentioned and their "yes" passes it up."""
        limit = self.view.amount_limit("refund_charge")
        target = self.escalation_target("refund_charge")
        if float(args.get("amount") or 0) > limit + 1e-9 and target is not None:
            if asked_for:
                return self._escalate_refund(target, args, f"above the {money(limit)} limit for level {self.me.level}", found=found)
            title = self.view.desk.agents[target].title.lower()
            if self._refund_passed_up_to(args):
                what = self._charge_label(str(args.get("charge_id", "")))
                return self.step.offer(
                    f"{found} Refunds above {money(limit)} are made by a {title} colleague, who makes it as soon as you "
                    f"say yes: shall I have them refund {money(float(args['amount']))} for {what}?",
                    "refund_charge", args, options, for_agent=target, **context,
                )
            return self.step.offer(
                f"{found} If you'd like it refunded, just say so: refunds above {money(limit)} are made by a {title} "
                "colleague, and I'll pass it to them.",
                "refund_charge", args, options, **context,
            )
        return self.step.offer(f"{found} {question}".strip(), "refund_charge", args, options, **context)

    def _refund_passed_up_to(self, args: dict[str, Any]) -> str:
        """The agent a refund above this agent's limit is offered on behalf of (the gate holds
        it for that agent: its limit covers it), or "" when it is within this agent's limit or
        no agent it hands to may make it."""
        if float(args.get("amount") or 0) <= self.view.amount_limit("refund_charge") + 1e-9:
            return ""
        target = self.escalation_target("refund_charge")
        return target if target is not None and self.step.gated("refund_charge", args, target) else ""

    @staticmethod
    def _failed_charge_text(charge: dict[str, Any], when: str) -> str:
        """What is true of a failed charge (issue 38): the payment did not go through, so no money
        was taken and there is nothing to refund; never "it has been refunded"."""
        return (
            f"The charge of {money(charge['amount'])} on {when} failed: the payment didn't go through, so no money was "
            "taken and there's nothing to refund. Is there anything else I can help with?"
        )

    def _refund_args(self, charge: dict[str, Any]) -> dict[str, Any]:
        return {"charge_id": charge["id"], "amount": round(charge["refundable"], 2), "reason": self._refund_reason(charge)}

    def _refund_reason(self, charge: dict[str, Any]) -> str:
        """The desk's listed refund reason that fits this charge (the tool checks it is true)."""
        v = self.view
        limits = v.tool_limits("refund_charge")

        def listed(*words: str) -> str | None:
            return next((r for r in limits.reasons or () if all(w in r.casefold() for w in words)), None)

        dup_family = bool(charge.get("duplicate_of")) or any(
            c.get("duplicate_of") == charge["id"] for c in (self._charges(charge.get("customer_id", "")) or [])
        )
        record = self._customer_record(charge.get("customer_id", "")) or {}
        cancelled = record.get("status") == "cancelled" or any(t.name == "cancel_subscription" and t.ok for t in v.tools)
        ticket = any(t.name == "create_ticket" and t.ok for t in v.tools)
        for fits, reason in (
            (dup_family, listed("duplicate")),
            (cancelled, listed("cancel")),
            (ticket, listed("ticket")),
        ):
            if fits and reason:
                return reason
        said = limits.reason(str(v.context.get("refund_reason") or ""))
        return said or "customer request"  # no listed reason fits: the tool will say so

    def _refund_call(self, args: dict[str, Any]):
        amount = float(args.get("amount", 0))
        limit = self.view.amount_limit("refund_charge")
        if amount > limit + 1e-9:
            target_agent = self.escalation_target("refund_charge")
            if target_agent:
                return self._escalate_refund(target_agent, args, f"above the {money(limit)} limit for level {self.me.level}")
            return self._ask_human(
                f"a refund of {money(amount)} is above what I can approve", {"refund_amount": amount, "charge_id": args.get("charge_id")}
            )
        if self.step.gated("refund_charge", args):
            # Asked for, not yet confirmed (the desk's gate holds the call for the customer's
            # yes): the question goes with the call, in this agent's words, and is asked once.
            return self.step.offer(
                f"Shall I refund {money(amount)} for {self._charge_label(str(args.get('charge_id', '')))}?",
                "refund_charge", args, [str(args.get("charge_id", ""))], customer_id=self._customer_id(),
            )
        return self.step.call("refund_charge", args, customer_id=self._customer_id())

    def _refund_flow(self, customer_id: str, charges: list[dict[str, Any]], intents: set[str], text: str, explicit: bool):
        v, step, f = self.view, self.step, self.view.facts
        latest = v.latest_facts()
        # The latest message says which charge: an amount, a date, an invoice, "the duplicate".
        pointed = bool(
            cues.DUPLICATE.search(text) or latest.amounts or latest.dates or latest.invoice_ids or v.context.get("charge_id")
        )
        # A month alone names a charge too ("refund my january payment"), when the account was
        # charged in it; the topic's month counts when this message names none. Vaguer than a
        # date, it chooses the charge to offer, never one refunded without a yes.
        months = next((m for m in map(slot_extraction.months_named, [text, *reversed(self.topic_texts())]) if m), [])
        in_months = [c for c in charges if c["charged_on"][5:7].isdigit() and int(c["charged_on"][5:7]) in months]
        pending = self._pending_refund()
        if pending is not None:
            return step.answer(
                f"The refund of {money(pending.arguments.get('amount', 0))} is waiting for a supervisor's approval; "
                "you'll see the result here as soon as they decide."
            )
        unheld = charge_ids_not_held(text, charges)
        if unheld:
            # "refund CH-9999": an id this account does not hold (a typo, or another customer's
            # charge) is said to be no charge of theirs, and their own charges listed to choose
            # from; never another charge offered in its place, and nothing read of whose it is.
            return step.answer(
                f"{not_held_said(unheld)}, so I can't refund {'it' if len(unheld) == 1 else 'them'}. "
                + self._charges_summary(charges) + " Which of these would you like refunded, and why?"
            )
        ctx_charge = v.context.get("charge_id")
        dups = [c for c in charges if c.get("duplicate_of")]
        target = None
        if ctx_charge:
            target = next((c for c in charges if c["id"] == ctx_charge), None)
            if target is not None and latest.dates and not any(
                target["charged_on"].endswith(d.iso()[1:]) or target["charged_on"] == d.iso() for d in latest.dates
            ):
                # The latest message names another day than the charge talked of ("could you also
                # refund the one from march 1st?" after the 3rd's refund): that day's charge it is.
                target = None
        if target is None:
            named = self._charge_named(text, charges, months, "duplicate" in intents)
            if isinstance(named, list):
                return self._which_charge(named)
            target = named
        if target is None and _ANAPHOR.search(dialogue.without_repeated(text)):
            # "refund that one" / "refund it": the charge the customer last named, never another
            # found for them (issue 38); several named at once, and it is asked which.
            last = self._last_named_charges(charges, text)
            if last is not None and len(last) > 1:
                return self._which_charge(last)
            target = last[0] if last else None
        if target is None:
            pool = [c for c in dups if c["refundable"] > 0] or dups
            named = self._charges_matching(charges) if (f.dates or f.invoice_ids) else []
            dup_family = {c["id"] for c in dups} | {c.get("duplicate_of") for c in dups}
            if named and not any(c["id"] in dup_family for c in self._charges_named(charges)):
                pool = named  # the customer pointed at a charge that is not a duplicate
            elif not named and in_months and not f.amounts and not any(c["id"] in dup_family for c in in_months):
                pool = [c for c in in_months if c["refundable"] > 0] or in_months  # a month with no duplicate in it
            if not pool and "refund" in intents:  # a day named with nothing to refund (failed, refunded) is still the one meant
                pool = self._charges_matching(charges) or self._charges_named(charges)
            if f.amounts:
                pool = [c for c in pool if any(abs(c["amount"] - a) < 0.005 for a in f.amounts)] or pool
            if f.dates:
                pool = [c for c in pool if any(c["charged_on"].endswith(d[1:]) or c["charged_on"] == d for d in f.dates)] or pool
            target = pool[-1] if pool else None

        if target is None:
            if "duplicate" in intents:
                return step.answer(
                    "I've checked your account and I don't see a duplicate charge. " + self._charges_summary(charges)
                    + " Which charge looks wrong to you?"
                )
            refused = self._refused_for_every_charge(customer_id, charges)
            if refused is not None:
                return refused
            return step.answer(
                self._charges_summary(charges) + " Which of these would you like refunded, and why?"
            )
        when = nice_date(target["charged_on"])
        is_dup = bool(target.get("duplicate_of"))
        label = "the duplicate charge" if is_dup else "the charge"
        if target.get("status") == "failed" and not self._refunded(target["id"]):
            # A failed charge was never taken: nothing was refunded, and nothing is to refund.
            return step.answer(self._failed_charge_text(target, when))
        if target["refundable"] <= 0.004 or self._refunded(target["id"]):
            done = next((t.output for t in self._refunds() if isinstance(t.output, dict) and t.output.get("charge_id") == target["id"]), None)
            ref = f" (refund {done['refund_id']})" if done else ""
            return step.answer(
                f"That's already taken care of: {label} of {money(target['amount'])} on {when} has been refunded{ref}. "
                "There's nothing more you need to do; it reaches your original payment method within 5-10 business days."
            )
        refunded_copy = next(
            (c for c in charges if c.get("duplicate_of") == target["id"] and (self._refunded(c["id"]) or c["refundable"] <= 0.004)), None
        )
        if refunded_copy is not None:
            # The original of a pair whose duplicate was already refunded ("and the march 1 one
            # too"): it is the one payment for the period, not a second duplicate; said so, with
            # nothing offered (issue 38).
            step.resolved = True
            return step.answer(
                f"The charge of {money(target['amount'])} on {when} is the original payment for \"{target['description']}\": "
                f"its duplicate on {nice_date(refunded_copy['charged_on'])} has already been refunded, so you've now paid once "
                "for that period. Refunding this one too would leave it unpaid, so I haven't refunded it. "
                "If something else about it looks wrong, tell me what happened."
            )
        first = next((c for c in charges if c["id"] == target.get("duplicate_of")), None)
        options = [first["id"], target["id"]] if is_dup and first else [target["id"]]
        offered = self._refund_args(target)
        # Offered, or asked outright but held by the desk's gate for a yes (within this agent's
        # limit): either way the customer would hear "shall I refund?" first.
        would_offer = (
            not explicit or not pointed or target.get("status") == "disputed"
            or (target["refundable"] <= v.amount_limit("refund_charge") + 1e-9 and step.gated("refund_charge", offered))
        )
        # Above this agent's limit, the refund would go to a senior colleague. No reason the desk
        # refunds for fits it (no copy of a charge called a duplicate, "not happy with the
        # features, refund march"): the desk's reasons are the same at every level, so it is said
        # here why, not passed up to be offered there and refused by the tool (issue 38, held-11).
        escalated = target["refundable"] > v.amount_limit("refund_charge") + 1e-9
        if (would_offer or escalated) and offered["reason"] not in (v.tool_limits("refund_charge").reasons or ()) and not v.context.get("refund_reason"):
            # No reason the desk refunds for fits this charge: say so, and why, instead of
            # offering a refund the policy would refuse ("I forgot to cancel before it renewed,
            # refund it": a "shall I refund?" the policy then refuses reads as a promise broken;
            # issue 38). This only declines: a refund is still the tool's to allow (not held
            # for a yes, or passed up, the tool is called and its refusal says why). Whether
            # the account is cancelled (a reason that fits) is read from the account first.
            read, _record = self._read_account(customer_id)
            if read is not None:
                return read
            offered = self._refund_args(target)
            if offered["reason"] not in (v.tool_limits("refund_charge").reasons or ()):
                return step.answer(self._refund_refused(target, label, when, dups))
        if not explicit or not pointed:
            if is_dup and first:
                return self._offer_refund(
                    f"I found it: two charges of {money(target['amount'])} for \"{target['description']}\", on "
                    f"{nice_date(first['charged_on'])} and {when}. The one on {when} is a duplicate.",
                    "Would you like me to refund it?", offered, options, customer_id=customer_id,
                )
            return self._offer_refund(
                f"I see a charge of {money(target['amount'])} on {when} for \"{target['description']}\".",
                "Would you like me to refund it?", offered, options,
            )
        asked = [a.value for a in latest.amounts]
        requested = [a for a in asked if a <= target["refundable"] + 0.005]
        if asked and not requested and not ctx_charge:
            # Asked for more than the charge: refunds follow what was paid, not what is asked.
            return self._offer_refund(
                f"I can't refund {money(max(asked))}: a refund is made against a specific charge, up to what was paid. "
                f"{label.capitalize()} of {money(target['amount'])} on {when} can be refunded "
                f"({money(target['refundable'])}).",
                "Would you like me to refund it?", offered, options,
            )
        amount = round(min(requested[-1] if requested and not is_dup else target["refundable"], target["refundable"]), 2)
        return self._refund_call(offered | {"amount": amount})

    def _refused_for_every_charge(self, customer_id: str, charges: list[dict[str, Any]]):
        """A refund asked for with no charge named ("can i get a refund for my last payment? i
        dont use the app anymore"), when no charge of the account fits a reason the policy lists
        (none a duplicate, the account not cancelled, no ticket): whichever they meant, the refund
        would be refused, so that is said, and why, with the charges; never "which one?" as if
        one could go through (issue 38). None when one could, or a reason was told."""
        v = self.view
        reasons = v.tool_limits("refund_charge").reasons
        taken = [c for c in charges if c["refundable"] > 0 and c.get("status") != "failed"]
        if not reasons or not taken or v.context.get("refund_reason"):
            return None
        read, _record = self._read_account(customer_id)
        if read is not None:
            return read  # whether the account is cancelled (a reason that fits) is read first
        if any(self._refund_reason(c) in reasons for c in taken):
            return None
        return self.step.answer(
            f"I'm sorry, I can't refund these: our policy allows refunds only for a {self._reasons_listed()}, and your "
            "account doesn't show any of its charges as one of those. " + self._charges_summary(charges)
            + " If you think one of them is, tell me what happened; or I can ask a member of our staff to review it."
        )

    def _reasons_listed(self) -> str:
        reasons = list(self.view.tool_limits("refund_charge").reasons or ())
        return ", ".join(reasons[:-1]) + f" or {reasons[-1]}" if len(reasons) > 1 else "".join(reasons) or "no reason at all"

    def _refund_refused(self, target: dict[str, Any], label: str, when: str, dups: list[dict[str, Any]]) -> str:
        if target.get("status") == "disputed":
            # Already disputed with the bank (held-4): that, not the list of reasons, is why.
            return (
                f"I'm sorry, I can't refund {label} of {money(target['amount'])} on {when}: it is already disputed with "
                "your bank, and while a dispute is open the bank decides it, so a refund from us as well would pay it back "
                "twice. If you withdraw the dispute, I can look at it again; or I can ask a member of our staff to review it."
            )
        listed = self._reasons_listed()
        other = next((d for d in dups if d["id"] != target["id"] and d.get("refundable", 0) > 0), None)
        also = (
            f" The charge of {money(other['amount'])} on {nice_date(other['charged_on'])} is a duplicate, though: I can refund that one if you'd like."
            if other else ""
        )
        return (
            f"I'm sorry, I can't refund {label} of {money(target['amount'])} on {when}. Our policy allows refunds only for a "
            f"{listed}, and your account doesn't show this charge as one of those.{also} If you think it is, tell me what "
            "happened; or I can ask a member of our staff to review it."
        )

    def _charges_named(self, charges: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Every charge on the dates or invoices the customer named, refundable or not."""
        f = self.view.facts
        return [
            c
            for c in charges
            if c.get("invoice_id") in f.invoice_ids
            or any(c["charged_on"].endswith(d[1:]) or c["charged_on"] == d for d in f.dates)
        ]

    def _charges_matching(self, charges: list[dict[str, Any]]) -> list[dict[str, Any]]:
        f = self.view.facts
        pool = [c for c in charges if c["refundable"] > 0]
        if f.invoice_ids:
            by_invoice = [c for c in pool if c.get("invoice_id") in f.invoice_ids]
            if by_invoice:
                return by_invoice
        if f.amounts or f.dates:
            hits = [
                c
                for c in pool
                if (not f.amounts or any(abs(c["amount"] - a) < 0.005 for a in f.amounts))
                and (not f.dates or any(c["charged_on"].endswith(d[1:]) or c["charged_on"] == d for d in f.dates))
            ]
            return hits
        return []
