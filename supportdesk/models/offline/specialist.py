"""The specialists: what an agent does is decided by the tools it holds and its level.

- the money skill (it holds `refund_charge` / `find_charges`): find the customer, explain
  charges, spot duplicates, refund within the desk's limit for its level, invoices, plans
  (their prices read from the store with `list_plans`), payment methods, cancellations;
- the tech skill (it holds `search_kb` / `send_password_reset`): walk the customer through
  the knowledge base, send password resets, report bugs;
- a level-2 agent with both (senior) takes what level 1 escalated, using the shared context
  and the whole history, so the customer never repeats anything.

Every agent hands a new topic it has no skill for back to the entry agent, answers
out-of-scope requests politely and records a request for a person.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

from supportdesk.config import AgentConfig
from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, Transfer
from supportdesk.items import Handoff, Message
from supportdesk.models.offline import cues
from supportdesk.models.offline.router import Router
from supportdesk.models.offline.view import ToolEvent, View

MONEY_TOOLS = ("refund_charge", "find_charges")
TECH_TOOLS = ("search_kb", "send_password_reset")
TOPIC_SWITCH_CONFIDENCE = 0.8
LOGIN_ARTICLES = ("login-problems", "password-reset", "account-locked")
POLICY_NOTE = (
    "Just so you know, I can't set aside our policies: they are enforced by our systems for every customer. "
)
HUMAN_REQUESTED = (
    "I've asked a member of our staff to join; they'll see this whole conversation, so you won't need "
    "to repeat anything. I'm still here in the meantime."
)
CARD_NUMBER_WARNING = (
    "Please don't send full card numbers in chat. Tell me the card brand and its last four digits "
    "(for example \"visa ending 1234\"), and add the card itself under Settings > Billing."
)

# What an answer needs of each plan `list_plans` returns.
PLAN_FIELDS = {"code", "name", "monthly_price", "annual_price"}


def money(value: float) -> str:
    return f"${value:,.2f}"


def nice_date(iso: str) -> str:
    try:
        d = date.fromisoformat(iso)
    except ValueError:
        return iso
    return f"{d.strftime('%B')} {d.day}, {d.year}"


def skills_of(agent: AgentConfig) -> set[str]:
    out = set()
    if any(t in agent.tools for t in MONEY_TOOLS):
        out.add("money")
    if any(t in agent.tools for t in TECH_TOOLS):
        out.add("tech")
    return out


@dataclass
class Step:
    """One decision under construction: the action plus what to add to every action."""

    view: View
    note: str = ""

    def context(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        out = self.view.facts.context_writes(self.view.context)
        for k, v in (extra or {}).items():
            if self.view.context.get(k) != v:
                out[k] = v
        return out

    def answer(self, text: str, **context: Any) -> Answer:
        return Answer(self.note + text, context=self.context(context))

    def call(self, name: str, arguments: dict[str, Any], **context: Any) -> CallTools:
        return CallTools([RequestedCall(self.view.call_id(), name, arguments)], context=self.context(context))


class Specialist:
    def __init__(self, view: View, router: Router | None):
        self.view = view
        self.router = router
        self.me = view.agent
        self.skills = skills_of(self.me)
        self.step = Step(view)
        if view.latest and cues.INJECTION.search(view.latest) and not view.answered_this_turn(view.agent.name):
            self.step.note = POLICY_NOTE

    # --- topics ---------------------------------------------------------------------------------

    def skill_for_agent(self, name: str | None) -> str | None:
        agent = self.view.desk.agents.get(name or "")
        if agent is None:
            return None
        found = skills_of(agent)
        return next(iter(found)) if len(found) == 1 else None

    def topic(self, text: str, min_confidence: float = 0.0) -> str | None:
        if self.router is None or not text.strip():
            return None
        route = self.router.route(text)
        if route.agent is None or route.confidence < min_confidence:
            return None
        return self.skill_for_agent(route.agent)

    def topic_texts(self) -> list[str]:
        """The customer's messages on the current topic: since triage last routed it."""
        entry = self.view.desk.desk.entry
        history = self.view.history
        start = 0
        for k, item in enumerate(history):
            if isinstance(item, Handoff) and item.from_agent == entry:
                start = k
        before = [i for i in history[:start] if isinstance(i, Message) and i.role == "customer"]
        first_seq = before[-1].seq if before else 0
        return [m.text for m in self.view.customer_messages if m.seq >= first_seq]

    def escalation_target(self, tool: str) -> str | None:
        for name in self.me.handoffs:
            agent = self.view.desk.agents.get(name)
            if agent and agent.level > self.me.level and tool in agent.tools:
                return name
        return None

    def return_target(self) -> str | None:
        entry = self.view.desk.desk.entry
        return entry if entry in self.me.handoffs else None

    # --- the decision -----------------------------------------------------------------------------

    def decide(self):
        v = self.view
        text = v.latest

        if v.turn_tools and v.turn_tools[-1].name == "request_human" and v.turn_tools[-1].done:
            return self.step.answer(HUMAN_REQUESTED)
        if text and not v.turn_tools:
            early = self._conversational(text)
            if early is not None:
                return early

        focus, switch_clause, own_text = self._focus(text)
        if switch_clause is not None and own_text is None:
            return self._return(switch_clause, "")

        if focus == "money":
            action = self._money(own_text if own_text is not None else text)
        elif focus == "tech":
            action = self._tech(own_text if own_text is not None else text)
        else:
            action = self.step.answer(
                "I'm sorry, that's not something I can do from here. I've noted it; is there anything else I can help with?"
            )
        if switch_clause is not None and isinstance(action, Answer):
            return self._return(switch_clause, action.text, action.context)
        if self.step.note and isinstance(action, Transfer) and action.text and not action.text.startswith(self.step.note):
            action.text = self.step.note + action.text
        return action

    def _conversational(self, text: str):
        """A request for a person, small talk, thanks or out-of-scope questions."""
        v = self.view
        if cues.HUMAN.search(text):
            if v.has_tool("request_human") and not v.calls("request_human", this_turn=True):
                return self.step.call("request_human", {"reason": text[:300]})
        route = self.router.route(text) if self.router else None
        unsure = route is None or route.agent is None
        if cues.HUMAN.search(text):
            return self.step.answer(HUMAN_REQUESTED)
        if cues.CARD_NUMBER.search(text):
            return self.step.answer(CARD_NUMBER_WARNING)
        if unsure and cues.GREETING.search(text):
            return self.step.answer("Hello again! What else can I help you with?")
        if unsure and cues.THANKS.search(text):
            return self.step.answer("You're welcome! Is there anything else I can help with?")
        if cues.OUT_OF_SCOPE.search(text) and not self._has_own_request(text, any_skill=True):
            return self.step.answer(
                "I'm afraid that's outside what I can help with: I can only help with your account, billing and the app. "
                "Is there anything there I can do for you?"
            )
        return None

    def _focus(self, text: str) -> tuple[str | None, str | None, str | None]:
        """(skill to use, a clause on a topic this agent has no skill for, the rest of the text)."""
        v = self.view
        switch_clause = None
        own: list[str] = []
        # Just handed this conversation for a topic: the rest of the message was dealt with
        # before the handoff, so there is no switching away from it again this turn.
        arrived = any(h.to_agent == self.me.name for h in v.turn_handoffs)
        if text and self.router is not None and not arrived:
            for clause in cues.clauses(text):
                skill = self.topic(clause, TOPIC_SWITCH_CONFIDENCE)
                if skill is not None and skill not in self.skills and switch_clause is None and not self._has_own_request(clause):
                    switch_clause = clause
                else:
                    own.append(clause)
        own_text = " ".join(own) if switch_clause is not None else text
        if switch_clause is not None and not any(self.topic(c) in self.skills or self._has_own_request(c) for c in own):
            own_text = None
        if len(self.skills) == 1:
            return next(iter(self.skills)), switch_clause, own_text
        if not self.skills:
            return None, switch_clause, own_text
        # Several skills (a senior agent): what was escalated first, then what the customer asks now.
        ctx = v.context
        if ctx.get("refund_amount") and not self._refunded(ctx.get("charge_id")) and not self._pending_refund():
            return "money", switch_clause, own_text
        if ctx.get("credit_reason") and not v.calls("issue_credit"):
            return "money", switch_clause, own_text
        if ctx.get("bug_summary") and not v.calls("create_ticket"):
            return "tech", switch_clause, own_text
        if v.turn_tools:
            last = v.turn_tools[-1].name
            if last in ("search_kb", "send_password_reset", "create_ticket"):
                return "tech", switch_clause, own_text
            if last not in ("request_human",):
                return "money", switch_clause, own_text
        now = self.topic(text) if text else None
        if now in self.skills:
            return now, switch_clause, own_text
        category = self.skill_for_agent(ctx.get("category"))
        return (category if category in self.skills else sorted(self.skills)[0]), switch_clause, own_text

    def _has_own_request(self, clause: str, any_skill: bool = False) -> bool:
        if ("money" in self.skills or any_skill) and any(
            p.search(clause)
            for p in (cues.REFUND, cues.DUPLICATE, cues.CANCEL, cues.PLAN_CHANGE, cues.PAYMENT_METHOD, cues.INVOICE, cues.CREDIT, cues.CARD_NUMBER, cues.CARD_DESCRIPTION)
        ):
            return True
        if ("tech" in self.skills or any_skill) and any(p.search(clause) for p in (cues.RESET, cues.LOGIN, cues.BUG)):
            return True
        return False

    def _return(self, clause: str, said: str, context: dict[str, Any] | None = None):
        target = self.return_target()
        line = "You also mentioned something my colleagues handle, so I'm passing you back to triage for that."
        text = f"{said} {line}".strip() if said else "That's one for a different team, so I'm passing you back to triage."
        if target is None:
            return self.step.answer(
                f"{said} For the other matter you mentioned, please start a new conversation so the right team can help.".strip()
            )
        ctx = dict(context or {})
        ctx.update(self.step.context({"pending_topic": clause}))
        return Transfer(to_agent=target, reason=f"new topic: {clause[:120]}", handoff_kind="return", text=text, context=ctx)

    # --- the money skill ---------------------------------------------------------------------------

    def _customer_id(self) -> str | None:
        v = self.view
        if v.context.get("customer_id"):
            return v.context["customer_id"]
        for t in reversed(v.tools):
            if t.ok and t.name == "find_customer" and isinstance(t.output, dict):
                return t.output.get("id")
            if t.ok and t.name == "find_charges" and isinstance(t.output, dict) and len(t.output.get("customers", [])) == 1:
                return t.output["customers"][0]
        return None

    def _customer_record(self, customer_id: str) -> dict[str, Any] | None:
        for t in reversed(self.view.tools):
            if t.ok and t.name == "find_customer" and isinstance(t.output, dict) and t.output.get("id") == customer_id:
                return t.output
        return None

    def _identify(self, intents: set[str]) -> Any:
        """Look the customer up from what they told us, or ask (once per lookup) for the email."""
        v, f = self.view, self.view.facts
        failed = [t for t in v.turn_tools if t.name in ("find_customer", "find_charges") and t.done]
        if f.customer_ids or f.emails:
            query = (f.emails or f.customer_ids)[-1]
            # Questions about charges start from the charges (one lookup, not two).
            about_charges = not intents & {"cancel", "plan", "payment", "invoice", "credit"}
            if about_charges and v.has_tool("find_charges"):
                if not v.called_with("find_charges", {"customer": query}):
                    return self.step.call("find_charges", {"customer": query})
            elif not v.called_with("find_customer", {"query": query}):
                return self.step.call("find_customer", {"query": query})
        if f.amounts and f.dates:
            args = {"amount": f.amounts[-1], "dates": f.dates[-2:]}
            if not v.called_with("find_charges", args):
                return self.step.call("find_charges", args)
        if failed:
            last = failed[-1]
            many = isinstance(last.output, dict) and len(last.output.get("customers", [])) > 1
            why = (
                "Those charges match more than one account."
                if many
                else "I couldn't find an account from those details."
            )
            return self.step.answer(f"{why} Could you tell me the email address on your account?")
        return self.step.answer(
            "I can help with that. What's the email address on your account? If that's easier, tell me the amount "
            "and the dates of the charges you can see, and I'll find them."
        )

    def _charges(self, customer_id: str) -> list[dict[str, Any]] | None:
        """The customer's charges as last read, with refunds made since subtracted."""
        found: dict[str, dict[str, Any]] = {}
        for t in self.view.tools:
            if t.ok and t.name == "find_charges" and isinstance(t.output, dict):
                for ch in t.output.get("charges", []):
                    if ch.get("customer_id") == customer_id:
                        found[ch["id"]] = dict(ch)
        if not found:
            return None
        for t in self.view.tools:
            if t.name == "refund_charge" and t.ok and isinstance(t.output, dict) and not t.output.get("replayed"):
                ch = found.get(t.output.get("charge_id", ""))
                if ch is not None and t.seq > 0:
                    ch["refundable"] = round(ch["amount"] - t.output.get("refunded_total", 0.0), 2)
        return sorted(found.values(), key=lambda c: (c["charged_on"], c["id"]))

    def _refunds(self) -> list[ToolEvent]:
        return [t for t in self.view.tools if t.name == "refund_charge" and t.ok]

    def _refunded(self, charge_id: str | None) -> bool:
        return bool(charge_id) and any(
            isinstance(t.output, dict) and t.output.get("charge_id") == charge_id for t in self._refunds()
        )

    def _pending_refund(self) -> ToolEvent | None:
        """A refund waiting for staff, with no decision yet."""
        v = self.view
        decided = {n.data.get("approval_id") for n in v.history if getattr(n, "kind", "") == "notice" and n.notice_kind in ("approval_granted", "approval_denied")}
        for t in v.tools:
            if t.name == "refund_charge" and t.waiting and t.call_id not in decided:
                return t
        return None

    def _money(self, text: str):
        v, step = self.view, self.step
        latest_results = self._money_results()
        if latest_results is not None:
            return latest_results

        intents = self._money_intents(text)
        if intents == {"pricing"}:
            return self._pricing(text)

        customer_id = self._customer_id()
        if customer_id is None:
            return self._identify(intents)
        ctx = {"customer_id": customer_id}

        if "credit" in intents:
            return self._credit(customer_id, text)
        if "cancel" in intents:
            return step.call("cancel_subscription", {"customer_id": customer_id, "reason": text[:200] or "customer asked to cancel"}, **ctx)
        if "plan" in intents:
            return self._plan_change(customer_id, text)
        if "payment" in intents:
            return self._payment_method(customer_id, text)
        if "invoice" in intents:
            if not v.last_call("list_invoices", this_turn=True):
                return step.call("list_invoices", {"customer_id": customer_id}, **ctx)
            return self._invoices_answer(v.last_call("list_invoices", this_turn=True))

        charges = self._charges(customer_id)
        if charges is None:
            if v.called_with("find_charges", {"customer_id": customer_id}):
                return step.answer(f"I can't find any charges for account {customer_id}. Could you check the email address on the account?")
            return step.call("find_charges", {"customer_id": customer_id}, **ctx)
        if "refund" in intents or "duplicate" in intents or "affirm" in intents:
            return self._refund_flow(customer_id, charges, intents, text)
        return self._charges_answer(charges)

    def _money_intents(self, text: str) -> set[str]:
        def of(t: str) -> set[str]:
            found = set()
            for name, pattern in (
                ("refund", cues.REFUND), ("duplicate", cues.DUPLICATE), ("cancel", cues.CANCEL),
                ("plan", cues.PLAN_CHANGE), ("payment", cues.PAYMENT_METHOD), ("invoice", cues.INVOICE),
                ("pricing", cues.PRICING), ("credit", cues.CREDIT),
            ):
                if pattern.search(t):
                    found.add(name)
            if "payment" in found and "refund" in found:
                found.discard("payment")  # "refund to my card" is a refund
            if found & {"refund", "duplicate"}:
                found -= {"pricing", "invoice"}
            return found

        now = of(text)
        if cues.AFFIRM.search(text) and not cues.DECLINE.search(text):
            now.add("affirm")
        if now - {"affirm"}:
            return now
        # Nothing new in this message: carry on with what the topic is about.
        carried: set[str] = set()
        for t in self.topic_texts():
            carried |= of(t)
        if self.view.context.get("refund_amount"):
            carried.add("refund")
        return carried | now

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
                return step.answer(f"The request was approved, but it could not be completed: {approved.output}")
        if not v.turn_tools:
            return None
        last = v.turn_tools[-1]
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
            if last.is_error:
                if isinstance(last.output, str) and last.output.startswith("refused by policy"):
                    target = self.escalation_target(last.name)
                    if target:
                        return self._escalate_refund(target, last.arguments, str(last.output))
                return step.answer(f"I wasn't able to do that: {last.output}. Is there anything else I can check?")
            return step.answer(self._done_text(last.output))
        if last.is_error:
            return step.answer(f"That didn't go through: {last.output}")
        out = last.output if isinstance(last.output, dict) else {}
        if last.name == "cancel_subscription":
            return step.answer(
                f"Your {str(out.get('plan', '')).title()} subscription is cancelled: it won't renew and you won't be charged again. "
                "You keep access until the end of the period you've paid for."
            )
        if last.name == "change_plan":
            return step.answer(
                f"Done: you're now on the {str(out.get('plan', '')).title()} plan, billed "
                f"{'annually' if out.get('billing_period') == 'annual' else 'monthly'}. "
                "The change shows on your next invoice."
            )
        if last.name == "update_payment_method":
            return step.answer(f"Your payment method is now {out.get('payment_method')}; future charges will use it.")
        return None

    def _charge_label(self, charge_id: str) -> str:
        for t in reversed(self.view.tools):
            if t.ok and t.name == "find_charges" and isinstance(t.output, dict):
                for ch in t.output.get("charges", []):
                    if ch.get("id") == charge_id:
                        kind = "the duplicate charge" if ch.get("duplicate_of") else "the charge"
                        return f"{kind} on {nice_date(ch['charged_on'])} (charge {charge_id})"
        return f"charge {charge_id}"

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

    def _refund_flow(self, customer_id: str, charges: list[dict[str, Any]], intents: set[str], text: str):
        v, step, f = self.view, self.step, self.view.facts
        wants_refund = "refund" in intents or ("affirm" in intents and self._offered_refund())
        # A bare "refund" with nothing saying which charge: confirm the one we found first.
        pointed = bool(
            "duplicate" in intents or f.amounts or f.dates or f.invoice_ids or v.context.get("charge_id")
            or ("affirm" in intents and self._offered_refund())
        )
        pending = self._pending_refund()
        if pending is not None:
            return step.answer(
                f"The refund of {money(pending.arguments.get('amount', 0))} is waiting for a supervisor's approval; "
                "you'll see the result here as soon as they decide."
            )
        ctx_charge = v.context.get("charge_id")
        dups = [c for c in charges if c.get("duplicate_of")]
        target = None
        if ctx_charge:
            target = next((c for c in charges if c["id"] == ctx_charge), None)
        if target is None:
            pool = [c for c in dups if c["refundable"] > 0] or dups
            named = self._charges_matching(charges) if (f.dates or f.invoice_ids) else []
            dup_family = {c["id"] for c in dups} | {c.get("duplicate_of") for c in dups}
            if named and not any(c["id"] in dup_family for c in self._charges_named(charges)):
                pool = named  # the customer pointed at a charge that is not a duplicate
            if not pool and wants_refund:
                pool = self._charges_matching(charges)
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
            return step.answer(
                self._charges_summary(charges) + " Which of these would you like refunded, and why?"
            )
        when = nice_date(target["charged_on"])
        is_dup = bool(target.get("duplicate_of"))
        label = "the duplicate charge" if is_dup else "the charge"
        if target["refundable"] <= 0.004 or self._refunded(target["id"]):
            done = next((t.output for t in self._refunds() if isinstance(t.output, dict) and t.output.get("charge_id") == target["id"]), None)
            ref = f" (refund {done['refund_id']})" if done else ""
            return step.answer(
                f"That's already taken care of: {label} of {money(target['amount'])} on {when} has been refunded{ref}. "
                "There's nothing more you need to do; it reaches your original payment method within 5-10 business days."
            )
        if not wants_refund or not pointed:
            first = next((c for c in charges if c["id"] == target.get("duplicate_of")), None)
            if is_dup and first:
                return step.answer(
                    f"I found it: two charges of {money(target['amount'])} for \"{target['description']}\", on "
                    f"{nice_date(first['charged_on'])} and {when}. The one on {when} is a duplicate. Would you like me to refund it?",
                    customer_id=customer_id,
                )
            return step.answer(
                f"I see a charge of {money(target['amount'])} on {when} for \"{target['description']}\". Would you like me to refund it?"
            )
        asked = [a.value for a in v.latest_facts().amounts]
        requested = [a for a in asked if a <= target["refundable"] + 0.005]
        if asked and not requested and not ctx_charge:
            # Asked for more than the charge: refunds follow what was paid, not what is asked.
            return step.answer(
                f"I can't refund {money(max(asked))}: a refund is made against a specific charge, up to what was paid. "
                f"{label.capitalize()} of {money(target['amount'])} on {when} can be refunded "
                f"({money(target['refundable'])}). Would you like me to refund it?"
            )
        amount = round(min(requested[-1] if requested and not is_dup else target["refundable"], target["refundable"]), 2)
        reason = f"duplicate of {target['duplicate_of']}" if is_dup else (v.context.get("refund_reason") or "customer request")
        limit = v.desk.policy.refund_limit(self.me.level)
        args = {"charge_id": target["id"], "amount": amount, "reason": "duplicate charge" if is_dup else reason}
        if amount > limit + 1e-9:
            target_agent = self.escalation_target("refund_charge")
            if target_agent:
                return self._escalate_refund(target_agent, args, f"above the {money(limit)} limit for level {self.me.level}")
            return self._ask_human(
                f"a refund of {money(amount)} is above what I can approve", {"refund_amount": amount, "charge_id": target["id"]}
            )
        return step.call("refund_charge", args, customer_id=customer_id)

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

    def _offered_refund(self) -> bool:
        return "would you like me to refund" in self.view.last_agent_text().lower()

    def _escalate_refund(self, target: str, args: dict[str, Any], why: str):
        amount = float(args.get("amount", 0))
        reason = str(args.get("reason", "refund"))
        context = self.step.context(
            {
                "refund_amount": amount,
                "refund_reason": reason,
                "charge_id": args.get("charge_id"),
                "customer_id": self._customer_id(),
                "escalation_reason": f"refund of {money(amount)}: {why}",
            }
        )
        title = self.view.desk.agents[target].title.lower()
        return Transfer(
            to_agent=target,
            reason=f"refund of {money(amount)} ({reason}) is {why}",
            handoff_kind="escalate",
            text=f"A refund of {money(amount)} is more than I can approve myself, so I'm passing this to a {title} colleague "
            "with all the details; you won't need to repeat anything.",
            context=context,
        )

    def _ask_human(self, why: str, context: dict[str, Any]):
        if self.view.has_tool("request_human") and not self.view.calls("request_human", this_turn=True):
            return self.step.call("request_human", {"reason": why}, **context)
        return self.step.answer(f"I've asked a member of staff to help, because {why}. They'll see everything we've discussed.")

    def _credit(self, customer_id: str, text: str):
        v, step, f = self.view, self.step, self.view.facts
        if not v.has_tool("issue_credit"):
            target = self.escalation_target("issue_credit")
            if target:
                title = v.desk.agents[target].title.lower()
                return Transfer(
                    to_agent=target,
                    reason="account credit requested",
                    handoff_kind="escalate",
                    text=f"Credits are handled by a {title} colleague; I'm passing this on with the details.",
                    context=step.context({"credit_reason": text[:300], "customer_id": customer_id}),
                )
            return self._ask_human("an account credit was requested", {})
        amount = f.amounts[-1] if f.amounts else None
        if amount is None:
            charges = self._charges(customer_id)
            if charges is None:
                return step.call("find_charges", {"customer_id": customer_id}, customer_id=customer_id)
            paid = [c for c in charges if c["status"] == "succeeded"]
            amount = paid[-1]["amount"] if paid else None
        if amount is None:
            return step.answer("What amount of credit are you asking for?")
        reason = v.context.get("credit_reason") or text[:300] or "service credit"
        return step.call("issue_credit", {"customer_id": customer_id, "amount": round(amount, 2), "reason": reason})

    def _plan_change(self, customer_id: str, text: str):
        v, step = self.view, self.step
        plan, period = cues.plan_request(text)
        if plan is None and period is None:
            for t in reversed(self.topic_texts()):
                plan, period = cues.plan_request(t)
                if plan or period:
                    break
        if plan is None and period is None:
            return self._with_prices(
                lambda prices, _plans: f"Which plan would you like? {prices}",
                "Which plan would you like to move to? I can't read our price list just now, so I can't quote prices at the moment.",
            )
        if plan is None:
            record = self._customer_record(customer_id)
            if record is None:
                return step.call("find_customer", {"query": customer_id})
            plan = record["plan"]
        args: dict[str, Any] = {"customer_id": customer_id, "plan": plan}
        if period:
            args["billing_period"] = period
        if v.called_with("change_plan", args):
            return step.answer(f"You're already moved to the {plan.title()} plan. Anything else?")
        return step.call("change_plan", args)

    def _pricing(self, text: str):
        offer = " Would you like to change your plan?" if self.view.has_tool("change_plan") else ""
        named, _ = cues.plan_request(text)

        def say(prices: str, plans: list[dict[str, Any]]) -> str:
            asked = next((p for p in plans if p.get("code") == named), None)
            if asked is not None:
                return f"The {asked['name']} plan is {self._plan_price(asked)}.{offer}"
            return f"{prices}{offer}"

        return self._with_prices(
            say,
            "I can't read our price list just now, and I'd rather not quote a price from memory. "
            "Could you ask me again in a moment?",
        )

    def _with_prices(self, say: Callable[[str, list[dict[str, Any]]], str], no_prices: str):
        """Answer from the price list `list_plans` returned this turn, reading it first.

        Prices are data in the store, never known by the model: without a successful read the
        answer quotes none.
        """
        v = self.view
        read = v.last_call("list_plans", this_turn=True)
        if read is None and v.has_tool("list_plans"):
            return self.step.call("list_plans", {})
        listing = read.output.get("plans") if read is not None and read.ok and isinstance(read.output, dict) else None
        plans = [p for p in listing or [] if isinstance(p, dict) and PLAN_FIELDS <= p.keys()]
        if not plans:
            return self.step.answer(no_prices)
        listed = [f"{p['name']} is {self._plan_price(p)}" for p in plans]
        prices = ("; ".join(listed[:-1]) + "; and " + listed[-1] if len(listed) > 1 else listed[0]) + "."
        return self.step.answer(say(prices, plans))

    @staticmethod
    def _plan_price(plan: dict[str, Any]) -> str:
        return f"{money(plan['monthly_price'])} a month or {money(plan['annual_price'])} a year"

    def _payment_method(self, customer_id: str, text: str):
        step = self.step
        if cues.CARD_NUMBER.search(text):
            return step.answer(CARD_NUMBER_WARNING)
        method = cues.card_description(text)
        if method is None:
            return step.answer(
                "Sure. Which card should we use? Tell me the brand and the last four digits (like \"visa ending 1234\"), or PayPal."
            )
        return step.call("update_payment_method", {"customer_id": customer_id, "method": method})

    def _charges_summary(self, charges: list[dict[str, Any]]) -> str:
        lines = []
        for c in charges[-6:]:
            flags = []
            if c.get("duplicate_of"):
                flags.append("duplicate")
            if c["status"] in ("failed", "disputed"):
                flags.append(c["status"])
            if c["refundable"] < c["amount"] and c["status"] != "failed":
                flags.append("refunded" if c["refundable"] <= 0 else "partly refunded")
            extra = f" ({', '.join(flags)})" if flags else ""
            lines.append(f"{nice_date(c['charged_on'])}: {money(c['amount'])}, {c['description']}{extra}")
        return "Your recent charges: " + "; ".join(lines) + "."

    def _charges_answer(self, charges: list[dict[str, Any]]):
        dups = [c for c in charges if c.get("duplicate_of") and c["refundable"] > 0]
        failed = [c for c in charges if c["status"] == "failed"]
        tail = ""
        if dups:
            tail = f" The charge on {nice_date(dups[-1]['charged_on'])} is a duplicate. Would you like me to refund it?"
        elif failed:
            tail = f" The payment on {nice_date(failed[-1]['charged_on'])} failed, so you weren't charged for it; updating your payment method will settle that invoice."
        return self.step.answer(self._charges_summary(charges) + tail)

    def _invoices_answer(self, event: ToolEvent | None):
        if event is None or not isinstance(event.output, dict):
            return self.step.answer("I couldn't read your invoices just now. Could you try again in a moment?")
        invoices = event.output.get("invoices", [])
        wanted = self.view.facts.invoice_ids
        shown = [i for i in invoices if i["id"] in wanted] or invoices[-4:]
        parts = [f"{i['id']} for {i['period']}: {money(i['amount'])}, {i['status']}" for i in shown]
        return self.step.answer(
            "Here are your invoices: " + "; ".join(parts) + ". You can download PDFs under Settings > Billing > Invoices."
        )

    # --- the tech skill ----------------------------------------------------------------------------

    def _tech(self, text: str):
        v, step = self.view, self.step
        results = self._tech_results()
        if results is not None:
            return results
        topic_texts = self.topic_texts()
        issue = v.context.get("issue") or (topic_texts[0] if topic_texts else text)
        searched_before = [t for t in v.tools if t.name == "search_kb" and t.ok]

        bug = bool(cues.BUG.search(text))
        failed = bool(cues.STEPS_FAILED.search(text)) and bool(searched_before) and not v.turn_tools
        if v.context.get("bug_summary") and not v.calls("create_ticket") and v.has_tool("create_ticket"):
            return self._ticket(v.context["bug_summary"])
        login_issue = any(cues.LOGIN.search(t) or cues.RESET.search(t) for t in topic_texts + [text]) or any(
            isinstance(t.output, dict) and (t.output.get("articles") or [{}])[0].get("id") in LOGIN_ARTICLES
            for t in searched_before
        )
        reset_sent = any(t.name == "send_password_reset" and t.ok for t in v.tools)
        if failed and login_issue and not bug and not reset_sent and v.has_tool("send_password_reset"):
            # The usual next step for a refused password is a reset, not an engineering ticket.
            failed = False
            force_reset = True
        else:
            force_reset = False
        if bug or failed:
            summary = self._bug_summary(text if bug else issue, text, [] if bug else searched_before)
            if v.has_tool("create_ticket"):
                return self._ticket(summary)
            target = self.escalation_target("create_ticket")
            if target:
                title = v.desk.agents[target].title.lower()
                steps_tried = [a["id"] for t in searched_before for a in (t.output or {}).get("articles", [])[:1]]
                why = "the customer reports a bug" if bug else "the knowledge-base steps did not fix it"
                return Transfer(
                    to_agent=target,
                    reason=f"{why}: {summary[:120]}",
                    handoff_kind="escalate",
                    text=("Thanks for reporting this. " if bug else "Thanks for trying that. ")
                    + f"This needs a closer look, so I'm passing it to a {title} colleague "
                    "who can get engineering involved; they'll have everything you've told me.",
                    context=step.context({"bug_summary": summary, "steps_tried": steps_tried, "escalation_reason": why}),
                )
            return self._ask_human("the steps did not fix the problem", {"bug_summary": summary})

        wants_reset = force_reset or any(cues.RESET.search(t) for t in ([text] + topic_texts[-2:])) or (
            "reset link" in v.last_agent_text().lower() and (cues.AFFIRM.search(text) or v.facts.emails)
        )
        if wants_reset and v.has_tool("send_password_reset"):
            who = v.context.get("customer_id") or (v.facts.emails[-1] if v.facts.emails else None) or v.context.get("customer_email")
            if who is None:
                return step.answer(
                    "I can send you a password reset link. What's the email address on your account? "
                    "The link always goes to the address we have on file."
                )
            sent = [t for t in v.tools if t.name == "send_password_reset" and t.ok]
            if sent and not v.facts.emails[-1:] == [who]:
                return step.answer(
                    f"I've already sent a reset link to {self._mask(sent[-1].output.get('email', ''))}; it's valid for 30 minutes. "
                    "Only the newest link works, so use the latest email."
                )
            if not v.called_with("send_password_reset", {"customer": who}):
                return step.call("send_password_reset", {"customer": who})
        if v.has_tool("search_kb"):
            just_arrived = bool(v.turn_handoffs) and v.turn_handoffs[-1].to_agent == self.me.name
            if just_arrived and v.context.get("issue"):
                query = v.context["issue"]  # what triage understood, without the small talk around it
            else:
                query = text if len(text.split()) > 3 or not topic_texts else " ".join(topic_texts[-2:])
            if not v.called_with("search_kb", {"query": query}):
                return step.call("search_kb", {"query": query}, issue=issue[:300])
        return step.answer("Could you tell me a bit more about what happens, and what you see on screen?")

    def _tech_results(self):
        v, step = self.view, self.step
        if not v.turn_tools:
            return None
        last = v.turn_tools[-1]
        if not last.done:
            return None
        if last.name == "send_password_reset":
            if last.is_error:
                return step.answer(
                    "I couldn't find an account with that email address. Could you check it, or give me the one you signed up with?"
                )
            email = self._mask(last.output.get("email", "")) if isinstance(last.output, dict) else "your email"
            return step.answer(
                f"I've sent a password reset link to {email}. It's valid for 30 minutes; check your spam folder if it hasn't "
                "arrived in a few minutes. Let me know if anything goes wrong."
            )
        if last.name == "create_ticket":
            if last.is_error:
                return step.answer(f"I couldn't open the ticket: {last.output}")
            out = last.output if isinstance(last.output, dict) else {}
            return step.answer(
                f"I've opened engineering ticket {out.get('ticket_id')} with everything you've described "
                f"(\"{str(out.get('summary', ''))[:120]}\"). "
                + (
                    "Our engineers will follow up by email; you don't need to repeat anything."
                    if out.get("customer_id")
                    else "If you tell me the email on your account, I'll add it so our engineers can reach you."
                )
            )
        if last.name == "search_kb":
            articles = last.output.get("articles", []) if isinstance(last.output, dict) else []
            if not articles:
                return step.answer(
                    "I couldn't find a help article for that. Could you describe what happens, step by step, and any error message you see?"
                )
            top = articles[0]
            # A Markdown list: the TUI renders agent text as Markdown, so each step gets its own line.
            steps = "\n".join(f"{i}. {s}" for i, s in enumerate(top["steps"][:5], start=1))
            closing = "Let me know whether that works."
            if top["id"] in LOGIN_ARTICLES and v.has_tool("send_password_reset"):
                closing = (
                    "If you'd like, I can also send you a password reset link: just tell me the email "
                    f"on your account. {closing}"
                )
            return step.answer(
                f"Here's what usually fixes this (from our article \"{top['title']}\"):\n\n{steps}\n\n{closing}"
            )
        return None

    def _bug_summary(self, issue: str, text: str, searched: list[ToolEvent]) -> str:
        tried = ""
        if searched and isinstance(searched[-1].output, dict) and searched[-1].output.get("articles"):
            tried = f" Steps from '{searched[-1].output['articles'][0]['title']}' did not help."
        first = issue.strip().rstrip(".") + "."
        latest = "" if text.strip() == issue.strip() else f" Then: {text.strip().rstrip('.')}."
        return f"{first}{latest}{tried}"[:480]

    def _ticket(self, summary: str):
        v = self.view
        # Attach the account when the customer has told us who they are, so engineering can
        # reach them without anyone asking again.
        email = v.facts.emails[-1] if v.facts.emails else v.context.get("customer_email")
        if not v.context.get("customer_id") and email and v.has_tool("find_customer"):
            if not v.called_with("find_customer", {"query": email}):
                return self.step.call("find_customer", {"query": email})
        severity = "high" if cues.BUG.search(summary) and any(w in summary.lower() for w in ("data", "lost", "deleted", "corrupt")) else "normal"
        args: dict[str, Any] = {"summary": summary[:480], "severity": severity}
        customer = v.context.get("customer_id") or self._customer_id()
        if customer:
            args["customer_id"] = customer
        return self.step.call("create_ticket", args)

    @staticmethod
    def _mask(email: str) -> str:
        name, _, domain = email.partition("@")
        if not domain:
            return "the email on file"
        return f"{name[:1]}***@{domain}"
