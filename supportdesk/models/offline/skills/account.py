"""The account skill: who the customer is (the account they name, never one guessed from a charge),
cancellations, plan changes and the price list, payment methods, the next payment, invoices."""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from datetime import date
from typing import Any

from supportdesk.models.offline import cues
from supportdesk.models.offline import slots as slot_extraction
from supportdesk.models.offline.skills.common import CARD_NUMBER_WARNING, PLAN_CHANGE_ASKED, SkillBase, nice_date
from supportdesk.models.offline.view import ToolEvent
from supportdesk.text import money
from supportdesk.patterns import LazyPattern

# A charge search refused, or shown nothing, because no account was named: the rule, not a miss.
NEEDS_EMAIL_FOR_CHARGES = "To look at your charges, I need the email address on your account. What is it?"
# What an answer needs of each plan `list_plans` returns.
PLAN_FIELDS = {"code", "name", "monthly_price", "annual_price"}


# What an action would mean, for a customer who asks about it rather than for it (issue 38): the
# facts, with nothing done and nothing put to them as an offer a "yes" would set off.
ABOUT_CANCELLING = (
    "If you cancel, your subscription won't renew and you won't be charged again, next month included; "
    "you keep access until the end of the period you've already paid for."
)
ABOUT_REFUNDS = (
    "A refund goes back to the payment method the charge was made with and reaches it within 5-10 business days. "
    "Whether a charge can be refunded depends on the charge, so I'd check that one when you ask."
)
ABOUT_CARDS = (
    "Changing the card on file costs nothing and isn't charged anything at the time: your next payment is simply "
    "taken from the new card."
)
NOTHING_DONE = "I haven't changed anything: just tell me if you'd like me to go ahead."


def _not_named(call: ToolEvent) -> bool:
    """Whether the account tool refused because the customer has not named the account."""
    return call.done and call.is_error and str(call.output).startswith("refused by policy: to confirm the account is yours")


def next_billing_date(today: date, billing_day: int, annual: bool, created_on: str) -> date:
    """The first billing day after `today`: monthly on `billing_day` (the month's last day when it
    has fewer), annually on that day of the month the account was created in."""
    def on(year: int, month: int) -> date:
        return date(year, month, min(billing_day, calendar.monthrange(year, month)[1]))

    if annual:
        month = int(created_on[5:7]) if created_on[5:7].isdigit() else today.month
        due = on(today.year, month)
        return due if due > today else on(today.year + 1, month)
    due = on(today.year, today.month)
    if due > today:
        return due
    return on(today.year + (today.month == 12), today.month % 12 + 1)


# The card the account had before: "the old card", "same card as before", "put it back".
_PREVIOUS_CARD = LazyPattern(
    r"\b(?:same|old|previous|former|original|earlier)\s+(?:card|one|payment method)\b|\bcard\s+(?:i\s+)?had\s+before\b"
    r"|\b(?:put|switch|change|set)\s+(?:it\s+|that\s+)?back\b",
    re.I,
)


def _account_found(t: ToolEvent) -> str | None:
    """The one account a lookup (find_customer, or find_charges by the customer) found."""
    if not (t.ok and isinstance(t.output, dict)):
        return None
    if t.name == "find_customer":
        found = t.output.get("id")
        return str(found) if found else None
    if t.name == "find_charges" and len(t.output.get("customers", [])) == 1:
        return str(t.output["customers"][0])
    return None


def _names_an_end(text: str) -> bool:
    """The text names a plan by an end of the price list ("the biggest plan", "the cheapest"),
    not only a step from the customer's own ("downgrade")."""
    return cues.plan_step(text) in ("lowest", "highest")


def _named_as_target(plan: str | None, text: str) -> bool:
    """The plan is named as where to go ("to the team plan"), not only mentioned ("the team features")."""
    return plan is not None and re.search(rf"\b(?:to|onto|into|on) (?:the |a )?{plan}\b", text, re.I) is not None


class AccountSkill(SkillBase):
    def _customer_id(self) -> str | None:
        v = self.view
        # The account follows the email the customer gave last: "oops, wrong account, i meant
        # marco@..." changes it (issue 38: what was said stays said until the customer changes
        # it, and then the change holds). An email looked up already names its account; one not
        # yet looked up, beside a lookup by another email, is looked up first (None here).
        if v.facts.emails:
            latest = v.facts.emails[-1].lower()
            by_email = self._accounts_by_email()
            if latest in by_email:
                return by_email[latest]
            if self._found_by_none(latest):
                # The last one matched no account: another the same message gave beside it did.
                beside = next((by_email[e] for e in self._emails_beside_the_last() if e in by_email), None)
                if beside is not None:
                    return beside
            if by_email:
                return None
        if v.context.get("customer_id"):
            return v.context["customer_id"]
        for t in reversed(v.tools):
            found = _account_found(t)
            if found is not None:
                return found
        return None

    def _emails_beside_the_last(self) -> list[str]:
        """The other emails the message that gave the last one named, nearest first, when that
        message takes none of them back: "dana@example.com is the account, but send stuff to
        dana.w@gmail.com" gives two, and whichever the account has is the account's (issue 38.3).
        A correction ("dana@exmaple.com, sorry typo: dana@example.com") leaves only the last."""
        said = next((m.text for m in reversed(self.view.customer_messages) if "@" in m.text), "")
        given = slot_extraction.emails_in(said)
        if len(given) < 2 or slot_extraction.repairs(said):
            return []
        return [e for e in reversed(given[:-1])]

    def _found_by_none(self, email: str) -> bool:
        """A lookup by `email` ran and matched no account."""
        return any(
            t.done and t.name in ("find_customer", "find_charges")
            and str(t.arguments.get("query") or t.arguments.get("customer") or "").lower() == email
            and _account_found(t) is None
            for t in self.view.tools
        )

    def _account_known_before_this_turn(self) -> bool:
        """A lookup before this turn found the account: what was asked of it then was answered
        (an email that matched nothing answered nothing, so the question still stands)."""
        turn = {id(t) for t in self.view.turn_tools}
        return any(_account_found(t) is not None for t in self.view.tools if id(t) not in turn)

    def _accounts_by_email(self) -> dict[str, str]:
        """{email the customer gave: the account its lookup found}, the latest lookup winning."""
        out: dict[str, str] = {}
        for t in self.view.tools:
            asked = str(t.arguments.get("query") or t.arguments.get("customer") or "").lower()
            found = _account_found(t)
            if "@" in asked and found is not None:
                out[asked] = found
        return out

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
            latest = (f.emails or f.customer_ids)[-1]
            # The one given last, then (when it matched no account) those given beside it.
            queries = [latest, *self._emails_beside_the_last()] if f.emails and self._found_by_none(latest) else [latest]
            # Questions about charges start from the charges (one lookup, not two).
            about_charges = not intents & {"cancel", "plan", "payment", "invoice", "credit", "next_payment", "card_on_file"}
            for query in queries:
                if about_charges and v.has_tool("find_charges"):
                    if not v.called_with("find_charges", {"customer": query}):
                        return self.step.call("find_charges", {"customer": query})
                elif not v.called_with("find_customer", {"query": query}):
                    return self.step.call("find_customer", {"query": query})
        if f.amounts:
            # The amount on the customer's statement, with its dates when they gave them: an
            # amount alone that fits several accounts is refused, and the answer asks for the email.
            args = {"amount": f.amounts[-1], "dates": f.dates[-2:]} if f.dates else {"amount": f.amounts[-1]}
            if not v.called_with("find_charges", args):
                return self.step.call("find_charges", args)
        if failed:
            last = failed[-1]
            many = isinstance(last.output, dict) and len(last.output.get("customers", [])) > 1
            asked_by = str(last.arguments.get("customer") or last.arguments.get("query") or "")
            if many:
                said = "Those charges match more than one account. Could you tell me the email address on your account?"
            elif _not_named(last) or (
                last.name == "find_charges" and not (last.arguments.get("customer") or last.arguments.get("customer_id"))
            ):
                # Charges are shown only for an account the customer named (tools/common.py
                # `require_named_account`): an amount and dates name none. That is the desk's
                # rule, not a search that failed, and the email is what it asks for.
                said = NEEDS_EMAIL_FOR_CHARGES
            elif "@" in asked_by:
                # They gave an email and it matched nobody: asking "what's your email?" would
                # read as not having listened.
                said = (
                    "I couldn't find an account with that email address. Could you check it, "
                    "or give me the one you signed up with?"
                )
            else:
                said = "I couldn't find an account from those details. Could you tell me the email address on your account?"
            return self.step.answer(said)
        if intents & {"cancel", "plan", "payment", "invoice", "credit", "next_payment"} and not intents & {"refund", "duplicate"}:
            # Not about a charge: the amount and dates on a statement would find nothing to act on.
            return self.step.answer("I can help with that. What's the email address on your account?")
        # The email only: an amount and dates on a statement name no account (anyone may know them).
        return self.step.answer("I can help with that. What's the email address on your account? It's how I find your account.")

    def _cancel(self, customer_id: str, explicit: bool):
        """Cancel when the latest message asks to; otherwise say exactly what will happen and wait."""
        step = self.step
        request = next((t for t in reversed(self.topic_texts()) if cues.CANCEL.search(t)), None) or "customer asked to cancel"
        args = {"customer_id": customer_id, "reason": request[:200]}
        record = self._customer_record(customer_id)
        # The record was read before any cancellation this session: one made since counts.
        if self._done("cancel_subscription", customer_id) is not None or (record is not None and record.get("status") == "cancelled"):
            return step.answer("Your subscription is already cancelled: it won't renew and you won't be charged again. Anything else?")
        if explicit:
            return step.call("cancel_subscription", args, customer_id=customer_id)
        if record is None and self.view.has_tool("find_customer") and not self.view.called_with("find_customer", {"query": customer_id}):
            return step.call("find_customer", {"query": customer_id})
        plan = f"{str(record['plan']).title()} " if record else ""
        return step.offer(
            f"I can cancel your {plan}subscription now: it won't renew, you won't be charged again, and you keep access "
            "until the end of the period you've paid for. Shall I go ahead?",
            "cancel_subscription", args, customer_id=customer_id,
        )

    def _plan_change(self, customer_id: str, text: str, asked: set[str]):
        """A plan change states which plan, which billing period and when (now or at renewal).

        It is made at once when the latest message asks for it and names the plan or period;
        anything carried from earlier messages is offered first and waits for a yes.
        """
        v, step = self.view, self.step
        plan, period = cues.plan_request(text)
        source = text
        explicit = (
            bool(plan or period) and ("plan" in asked or self._asked_which_plan()) and not cues.ASKS_IF_POSSIBLE.search(text)
        )
        # (a plan named by its place is no name the desk lacks: "up to the biggest plan you've got";
        # a step alone is: "downgrade from Pro to the Basic plan" names a plan the desk lacks)
        unknown = cues.unknown_plan(text) if plan is None and not _names_an_end(text) else None
        if unknown is None and plan is None and period is None:  # named earlier, asked about since?
            unknown = next((found for t in reversed(self.topic_texts()) if not any(cues.plan_request(t)) and not _names_an_end(t)
                            for found in [cues.unknown_plan(t)] if found), None)
            if unknown is not None and self._asked_which_plan():
                unknown = None  # asked already: what they say now decides
        if unknown is not None:  # "to the Basic plan": we have no such plan; ask, never guess
            return self._with_prices(
                lambda prices, _plans: f"We don't have a plan called \"{unknown.title()}\". Which plan would you like? {prices}",
                f"We don't have a plan called \"{unknown.title()}\". Which plan would you like to move to?",
            )
        # ("the cheapest plan but paid once a year": the place names the plan, the period is its own;
        # "we don't need the team features ... move us to the cheapest plan": a plan only mentioned
        # yields to an end of the price list asked for, held-24's shrinking agency)
        ends_over_named = _names_an_end(text) and not _named_as_target(plan, text)
        place = cues.plan_step(text) if plan is None or ends_over_named else None
        if place is not None:  # "now the cheapest one": the latest words over a plan named before
            return self._plan_by_place(customer_id, text, place)
        if plan is None and period is None:
            for t in reversed(self.topic_texts()):
                plan, period = cues.plan_request(t)
                if plan or period:
                    source = t
                    break
        elif plan is None or period is None:
            # A change told over several messages ("can you switch me to annual billing?", then
            # "the pro one"): the part this message leaves unsaid is the one said of it before,
            # in this topic (issue 38.3: the period asked for was lost once the plan was named).
            for t in reversed(self.topic_texts()):
                said_plan, said_period = cues.plan_request(t) if t != text else (None, None)
                if plan is None and said_plan or period is None and said_period:
                    plan, period = plan or said_plan, period or said_period
                    break
        if plan is None and period is None:
            for said in reversed(self.topic_texts()):
                place = cues.plan_step(said)
                if place is not None:
                    return self._plan_by_place(customer_id, said, place)
            return self._with_prices(
                lambda prices, _plans: f"Which plan would you like? {prices}",
                "Which plan would you like to move to? I can't read our price list just now, so I can't quote prices at the moment.",
            )
        when = "renewal" if cues.AT_RENEWAL.search(text) or cues.AT_RENEWAL.search(source) else "now"
        read, record = self._read_account(customer_id)
        if read is not None:
            return read
        if plan == record.get("plan") and not period and not _named_as_target(plan, source) and re.search(r"\b(?:upgrade|downgrade|switch|change|move)\b", source, re.I):
            # "downgrade, Team is too expensive": the plan named is the one they are leaving.
            return self._with_prices(
                lambda prices, _plans: f"You're on the {str(plan).title()} plan now. Which plan would you like? {prices}",
                "Which plan would you like to move to? I can't read our price list just now, so I can't quote prices at the moment.",
            )
        plan = plan or record["plan"]
        args: dict[str, Any] = {"customer_id": customer_id, "plan": plan}
        if period:
            args["billing_period"] = period
        if when == "renewal":
            args["when"] = "renewal"
        if plan == record.get("plan") and (period or record.get("billing_period")) == record.get("billing_period"):
            return step.answer(
                f"You're already on the {plan.title()} plan, billed {'annually' if record.get('billing_period') == 'annual' else 'monthly'}, "
                "so there's nothing to change. Anything else?"
            )
        if v.made_with("change_plan", args):
            return step.answer(f"That change to the {plan.title()} plan is already made. Anything else?")
        if explicit:
            return step.call("change_plan", args, customer_id=customer_id)
        billed = f", billed {'annually' if period == 'annual' else 'monthly'}" if period else ""
        timing = "at your next renewal (nothing changes until then)" if when == "renewal" else "now"
        change = f"move you from the {str(record['plan']).title()} plan to the {plan.title()} plan{billed}"
        if plan == record.get("plan") and period:
            # The same plan, another period ("once a year instead, same plan"): only the billing changes.
            change = f"keep you on the {plan.title()} plan{billed} instead of {'monthly' if period == 'annual' else 'annually'}"
        # What the change will cost is part of the action the customer says yes to, so the offer
        # says it, read from the price list (never quoted from memory; unread, the offer alone).
        read, plans = self._price_list()
        if read is not None:
            return read
        # Asked as a question ("can i pay yearly instead? it works out cheaper right?"), the other
        # period's price is part of the answer; told, the offer says the change's own price.
        priced = self._change_priced(plans, plan, period or str(record.get("billing_period") or "monthly"), compared="?" in source)
        return step.offer(
            f"{priced}To confirm: I'll {change}, {timing}. Shall I go ahead?",
            "change_plan", args, customer_id=customer_id,
        )

    @staticmethod
    def _change_priced(plans: list[dict[str, Any]], plan: str, period: str, *, compared: bool = True) -> str:
        """The price of `plan` billed by `period`, as the price list has it, and when `compared`
        the other period's price beside it ("" when the list holds no such plan)."""
        found = next((p for p in plans if p.get("code") == plan), None)
        if found is None:
            return ""
        annual = period == "annual"
        price = money(found["annual_price" if annual else "monthly_price"])
        other = money(found["monthly_price" if annual else "annual_price"])
        beside = f" ({other} a {'month' if annual else 'year'} billed {'monthly' if annual else 'annually'})" if compared else ""
        return f"The {found['name']} plan billed {'annually' if annual else 'monthly'} is {price} a {'year' if annual else 'month'}{beside}. "

    def _plan_by_place(self, customer_id: str, source: str, place: str):
        """A plan named by where it sits ("downgrade", "the cheapest plan", "one tier up"), read
        against the customer's plan and the price list. The customer named no plan, so the one it
        resolves to is offered and waits for a yes; with several that fit, they are asked which."""
        step = self.step
        read, record = self._read_account(customer_id)
        if read is not None:
            return read
        read, plans = self._price_list()
        if read is not None:
            return read
        order = sorted(plans, key=lambda p: float(p["monthly_price"]))
        codes = [str(p["code"]) for p in order]
        # The plan as it stands: a change made since the record was read counts (one at renewal does not yet).
        changed = self._done(
            "change_plan", customer_id, lambda t: t.arguments.get("when") != "renewal" and bool(t.arguments.get("plan"))
        )
        current = str(changed.arguments["plan"] if changed is not None else record.get("plan"))
        if not plans or current not in codes:
            return step.answer(
                "Which plan would you like to move to? I can't read our price list just now, so I can't quote prices at the moment."
            )
        at = codes.index(current)
        fits = {
            "lowest": order[:1], "highest": order[-1:], "down": order[:at], "up": order[at + 1 :],
            "down1": order[at - 1 : at] if at else [], "up1": order[at + 1 : at + 2],
        }[place]
        fits = [p for p in fits if p["code"] != current]
        listed = "; ".join(f"{p['name']} is {self._plan_price(p)}" for p in fits)
        if not fits:
            end = "cheapest" if place in ("lowest", "down", "down1") else "largest"
            return step.answer(f"You're already on the {current.title()} plan, our {end}. Anything else?")
        if len(fits) > 1:
            return step.answer(f"You're on the {current.title()} plan now. {listed}. Which plan would you like?")
        target = fits[0]
        args: dict[str, Any] = {"customer_id": customer_id, "plan": target["code"]}
        when = "now"
        if cues.AT_RENEWAL.search(source):
            args["when"], when = "renewal", "at your next renewal (nothing changes until then)"
        period = cues.plan_request(source)[1]
        if period:  # the period said beside the place ("the cheapest one, billed yearly") goes with it
            args["billing_period"] = period
        price = self._plan_price(target)
        # (the offer says the period it carries: a yes agrees to exactly what it says)
        billed = f", billed {'annually' if period == 'annual' else 'monthly'}," if period else ""
        if cues.PLAN_QUESTION.search(source):
            # Asked, not told: the answer, then the same offer a "yes" takes up.
            said = f"You're on the {current.title()} plan; {target['name']} is {price}. Would you like me to move you to the {target['name']} plan{billed} {when}?"
        else:
            said = f"To confirm: I'll move you from the {current.title()} plan to the {target['name']} plan ({price}){billed} {when}. Shall I go ahead?"
        return step.offer(said, "change_plan", args, customer_id=customer_id)

    def _next_payment(self, customer_id: str):
        """When the next payment is taken and how much: the account's billing day and period and
        its plan's price, counted from the day the customer asked."""
        step = self.step
        read, record = self._read_account(customer_id)
        if read is not None:
            return read
        if self._done("cancel_subscription", customer_id) is not None or record.get("status") == "cancelled":
            step.resolved = True
            return step.answer("Your subscription is cancelled, so there's no next payment: it won't renew.")
        read, plans = self._price_list()
        if read is not None:
            return read
        plan = next((p for p in plans if p["code"] == record.get("plan")), None)
        annual = record.get("billing_period") == "annual"
        due = self._next_due(record)
        price = f"{money(plan['annual_price' if annual else 'monthly_price'])} " if plan else ""
        name = plan["name"] if plan else str(record.get("plan", "")).title()
        step.resolved = True
        return step.answer(
            f"Your next payment is {price}for the {name} plan, billed {'annually' if annual else 'monthly'}, "
            f"on {nice_date(due.isoformat())}."
        )

    def _next_due(self, record: dict[str, Any]) -> date:
        """The account's next billing day (the end of the period paid for), counted from the
        business data's today (find_customer's "as_of": the demo company's calendar), and only
        without one from the day the customer asked."""
        v = self.view
        try:
            asked_on = date.fromisoformat(str(record.get("as_of") or ""))
        except ValueError:
            asked_on = v.customer_messages[-1].created_at.date() if v.customer_messages else date.today()
        annual = record.get("billing_period") == "annual"
        return next_billing_date(asked_on, int(record.get("billing_day") or 1), annual, str(record.get("created_on", "")))

    def _my_plan(self, customer_id: str, with_price: bool = False, text: str = ""):
        """Which plan the account is on, and how it is billed: read from the account; `with_price`:
        and what it costs (the price list read too: "what plan am i on and what do i pay for it")."""
        read, record = self._read_account(customer_id)
        if read is not None:
            return read
        code = str(record.get("plan") or "")
        if not code:
            return self.step.answer("I couldn't read your plan just now. Could you try again in a moment?")
        period = "annually" if record.get("billing_period") == "annual" else "monthly"
        # How the plan is paid is part of what the customer is on ("which plan am i on and how
        # do i pay for it": the plan, its period and the method said together, multi-15; the
        # desk intents reader hears "how do i pay for it" as a card change, so the question's
        # words cannot be trusted to ask for it).
        method = str(record.get("payment_method") or "")
        paid = f" to {method}" if method else ""
        status = " (cancelled: it won't renew)" if record.get("status") == "cancelled" else ""
        price = ""
        if with_price:
            listed, plans = self._price_list()
            if listed is not None:
                return listed
            plan = next((p for p in plans if p.get("code") == code), None)
            if plan is not None:
                price = f": {money(plan['annual_price' if period == 'annually' else 'monthly_price'])} a {'year' if period == 'annually' else 'month'}"
            # Another plan named beside their own ("what would pro run me next to my current
            # plan?"): its price, set against theirs.
            named = [p for p in plans if p.get("code") in {m.group(1).lower() for m in cues.PLAN_NAME.finditer(text)}]
            if len(named) == 1 and named[0].get("code") != code:
                price += f". The {named[0]['name']} plan is {self._plan_price(named[0])}.{self._against_current(record, plans, named)}"
                price = price.rstrip(".")
        self.step.resolved = True
        return self.step.answer(f"You're on the {code.title()} plan, billed {period}{paid}{status}{price}. Anything else I can help with?")

    def _card_on_file(self, customer_id: str):
        """Which payment method the account pays with: read from the account, nothing changed."""
        read, record = self._read_account(customer_id)
        if read is not None:
            return read
        method = str(record.get("payment_method") or "")
        if not method:
            return self.step.answer("I couldn't read the payment method on your account just now. Could you try again in a moment?")
        self.step.resolved = True
        return self.step.answer(
            f"The payment method on your account is {method}; your charges are taken from it. "
            "If you'd like to use another card, tell me which one (for example \"visa ending 4242\"). I haven't changed anything."
        )

    def _done(
        self, tool: str, customer_id: str, where: Callable[[ToolEvent], bool] = lambda _: True
    ) -> ToolEvent | None:
        """The latest call of `tool` on this customer's account that went through this session
        (and, given `where`, that it holds for)."""
        return next(
            (
                t for t in reversed(self.view.tools)
                if t.ok and t.name == tool and t.arguments.get("customer_id") == customer_id and where(t)
            ),
            None,
        )

    def _read_account(self, customer_id: str) -> tuple[Any, dict[str, Any]]:
        """(the step that reads the account first, or that says it cannot be read; else None, and
        the account as read)."""
        v, step = self.view, self.step
        record = self._customer_record(customer_id)
        if record is not None:
            return None, record
        if v.called_with("find_customer", {"query": customer_id}) or not v.has_tool("find_customer"):
            # A policy that refused the read is not a technical failure: its reason is what the
            # customer can act on ("to confirm the account is yours, I need the email ...").
            refused = next((t for t in reversed(v.tools) if t.name == "find_customer" and t.done and t.is_error
                            and str(t.output).startswith("refused by policy: ")), None)
            reason = refused.reason if refused is not None else None
            email = v.facts.emails[-1] if v.facts.emails else None
            if reason and email and v.has_tool("find_customer") and not v.called_with("find_customer", {"query": email}):
                return step.call("find_customer", {"query": email}), {}  # the account named now
            if reason:
                return step.answer(f"{reason[:1].upper()}{reason[1:].rstrip('.')}."), {}
            return step.answer("I couldn't read your account just now. Could you try again in a moment?"), {}
        return step.call("find_customer", {"query": customer_id}), {}

    def _price_list(self) -> tuple[Any, list[dict[str, Any]]]:
        """(the step that reads the price list first, or None; the plans read this turn)."""
        v = self.view
        read = v.last_call("list_plans", this_turn=True)
        if read is None and v.has_tool("list_plans"):
            return self.step.call("list_plans", {}), []
        listing = read.output.get("plans") if read is not None and read.ok and isinstance(read.output, dict) else None
        return None, [p for p in listing or [] if isinstance(p, dict) and PLAN_FIELDS <= p.keys()]

    def _asked_which_plan(self) -> bool:
        """Our last reply asked which plan: a plan named now is the answer, so the request."""
        return "Which plan would you like?" in self.view.last_agent_text()

    def _own_account_beside(self, text: str) -> tuple[Any, dict[str, Any] | None]:
        """(the step that reads the account first, or None; the account as read, or None): a price
        question that names its account in the same message asks about the customer's own case,
        so its answer sets the price against what they pay now (issue 38: "how much more would
        team cost me?" states both prices). No account named with it: None, nothing read."""
        v, latest = self.view, self.view.latest_facts()
        if not (latest.emails or latest.customer_ids) or not v.has_tool("find_customer"):
            return None, None
        customer_id = self._customer_id()
        query = customer_id or (latest.customer_ids or latest.emails)[-1]
        record = self._customer_record(customer_id) if customer_id else None
        if record is None and not v.called_with("find_customer", {"query": query}):
            return self.step.call("find_customer", {"query": query}), None
        # (Read, or refused: a refusal leaves the price answered alone.)
        customer_id = self._customer_id()
        return None, self._customer_record(customer_id) if customer_id else None

    def _against_current(self, record: dict[str, Any] | None, plans: list[dict[str, Any]], asked: list[dict[str, Any]]) -> str:
        """What the customer pays now beside the one plan asked about, and the difference, by the
        period they are billed by ("" when no account was read, or it is that plan already)."""
        if record is None or len(asked) != 1 or asked[0].get("code") == record.get("plan"):
            return ""
        current = next((p for p in plans if p.get("code") == record.get("plan")), None)
        if current is None:
            return ""
        annual = record.get("billing_period") == "annual"
        key, unit = ("annual_price", "year") if annual else ("monthly_price", "month")
        now, then = float(current[key]), float(asked[0][key])
        more = "more" if then > now else "less"
        return (
            f" You pay {money(now)} a {unit} now on the {current['name']} plan, so {asked[0]['name']} would be "
            f"{money(abs(then - now))} a {unit} {more}."
        )

    def _own_plan_spoken_of(self) -> list[str]:
        """[the account's plan] when the topic asked which plan it is on and the account was
        read; [] otherwise."""
        customer_id = self._customer_id()
        record = self._customer_record(customer_id) if customer_id else None
        if not record or not any(cues.MY_PLAN.search(t) for t in self.topic_texts()):
            return []
        return [str(record.get("plan") or "")] if record.get("plan") else []

    def _pricing(self, text: str):
        offer = f" {PLAN_CHANGE_ASKED}" if self.view.has_tool("change_plan") else ""
        named = list(dict.fromkeys(m.group(1).lower() for m in cues.PLAN_NAME.finditer(text)))
        read, own = self._own_account_beside(text) if len(named) == 1 else (None, None)
        if read is not None:
            return read
        below, above = cues.CHEAPER_THAN.search(text), cues.DEARER_THAN.search(text)
        if not named:  # "how much will that cost?": the plan named last before it
            for said in reversed(self.topic_texts()):
                plans = [m.group(1).lower() for m in cues.PLAN_NAME.finditer(said)]
                if plans:
                    named = plans[-1:]
                    break
            else:
                # "and how much is that for a year?" after "which plan am i on?" was answered: the
                # plan "that" is is the one the account holds (read already, nothing looked up).
                named = self._own_plan_spoken_of()

        def say(prices: str, plans: list[dict[str, Any]]) -> str:
            by_code = {p.get("code"): p for p in plans}
            than = below or above
            if than is not None:
                pivot = by_code.get(than.group(1).lower())
                if pivot is not None:
                    sign = -1 if below else 1
                    found = [p for p in plans if sign * (float(p["monthly_price"]) - float(pivot["monthly_price"])) > 0]
                    if not found:
                        return f"No plan is {'cheaper' if below else 'dearer'} than {pivot['name']} ({self._plan_price(pivot)}).{offer}"
                    listed = "; ".join(f"{p['name']} is {self._plan_price(p)}" for p in found)
                    return f"{'Cheaper' if below else 'Dearer'} than {pivot['name']} ({self._plan_price(pivot)}): {listed}.{offer}"
            asked = [by_code[code] for code in named if code in by_code]
            if not asked:
                # a plan named by its place in the price list ("the top plan", "the mid tier")
                by_price = sorted(plans, key=lambda p: float(p["monthly_price"]))
                place, step = slot_extraction.place_named(text), cues.plan_step(text)
                picked = place.pick(by_price) if place is not None else None
                if not isinstance(picked, dict) and step in ("lowest", "highest") and by_price:
                    picked = by_price[0 if step == "lowest" else -1]
                asked = [picked] if isinstance(picked, dict) else []
            if len(asked) >= 2:
                low, high = sorted(asked[:2], key=lambda p: float(p["monthly_price"]))
                month = float(high["monthly_price"]) - float(low["monthly_price"])
                year = float(high["annual_price"]) - float(low["annual_price"])
                listed = "; ".join(f"{p['name']} is {self._plan_price(p)}" for p in (low, high))
                return f"{listed}. {high['name']} costs {money(month)} a month ({money(year)} a year) more than {low['name']}.{offer}"
            if asked:
                return f"The {asked[0]['name']} plan is {self._plan_price(asked[0])}.{self._against_current(own, plans, asked)}{offer}"
            return f"{prices}{offer}"

        return self._with_prices(
            say,
            "I can't read our price list just now, and I'd rather not quote a price from memory. "
            "Could you ask me again in a moment?",
        )

    def _about_action(self, intents: set[str], text: str, plan_answer: Callable[[str], str], *, priced: bool = False):
        """A question about cancelling, a refund, a plan change or the card (`acts.asks_about_rather_than_for`):
        the facts of each asked about, and the price of each plan named when a price is asked
        (in the price list's words, or `priced`: the caller read a question for it), with
        nothing done or offered."""
        parts = []
        if "cancel" in intents:
            parts.append(ABOUT_CANCELLING)
        if intents & {"refund", "duplicate"}:
            parts.append(ABOUT_REFUNDS)
        if "payment" in intents:
            parts.append(ABOUT_CARDS)
        if "plan" in intents:
            parts.append(plan_answer(text))  # it says itself that nothing was changed
        else:
            parts.append(NOTHING_DONE)
        facts = " ".join(parts)
        if not ((priced or cues.PRICING.search(text)) and cues.PLAN_NAME.search(text)):
            return self.step.answer(facts)

        def say(prices: str, plans: list[dict[str, Any]]) -> str:
            named = {m.group(1).lower() for m in cues.PLAN_NAME.finditer(text)}
            listed = [f"The {p['name']} plan is {self._plan_price(p)}." for p in plans if p.get("code") in named]
            return " ".join(listed + [facts])

        return self._with_prices(say, facts)

    def _with_prices(self, say: Callable[[str, list[dict[str, Any]]], str], no_prices: str):
        """Answer from the price list `list_plans` returned this turn, reading it first.

        Prices are data in the store, never known by the model: without a successful read the
        answer quotes none.
        """
        read, plans = self._price_list()
        if read is not None:
            return read
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
        # The card named now, else the one named earlier in this topic (asked for the email first,
        # the customer gave it: the card they had already named is not asked for again).
        done = self._done("update_payment_method", customer_id)
        if not cues.card_description(text) and _PREVIOUS_CARD.search(text):
            # "put back the card i had before", "same card as before": the card the account had
            # before the change made here (the change's own result says which), never a card
            # named earlier for the change itself (issue 38: replies that refer back).
            before = done.output.get("previous") if done is not None and isinstance(done.output, dict) else None
            if before:
                return step.call("update_payment_method", {"customer_id": customer_id, "method": str(before)})
            record = self._customer_record(customer_id)
            on_file = record.get("payment_method") if record else None
            if done is None and on_file:
                return step.answer(f"Your payment method is already {on_file}, so there's nothing to change. Anything else?")
        method = cues.card_description(text) or (
            None if done is not None else next(
                (d for d in map(cues.card_description, reversed(self.topic_texts())) if d), None
            )
        )
        digits = None if cues.card_description(text) else cues.last_four_told(text)
        if method and method != "paypal" and digits:
            # "it ends 4410 not 4401": the card named before, with the digits told now.
            method = f"{method.rsplit(' ', 1)[0]} {digits}"
        on_file = (self._customer_record(customer_id) or {}).get("payment_method")
        others = [named for named in cues.cards_named(text) if named != on_file]
        if method == on_file and others:
            # "paypal didn't work for march, bill my amex ending 1009": the method on file named
            # beside another is the one being left, however its failing is told (held-23).
            method = others[0]
        if method is not None and done is None and method == on_file and not digits:
            # "leave it on paypal", "actually stay on paypal" with paypal on file: kept, nothing
            # to change or to ask a yes for (money-17).
            return step.answer(f"Your payment method is already {on_file}, so there's nothing to change. Anything else?")
        if method is None and done is not None:
            # "yes", "great" after the change: it is made; asking for a card again would read as not.
            return step.answer(f"Your payment method is {done.arguments.get('method')} now; future charges will use it. Anything else?")
        if method is None:
            return step.answer(
                "Sure. Which card should we use? Tell me the brand and the last four digits (like \"visa ending 1234\"), or PayPal."
            )
        return step.call("update_payment_method", {"customer_id": customer_id, "method": method})

    def _invoices_answer(self, event: ToolEvent | None, text: str):
        if event is None or not isinstance(event.output, dict):
            return self.step.answer("I couldn't read your invoices just now. Could you try again in a moment?")
        invoices = event.output.get("invoices", [])
        wanted = self.view.facts.invoice_ids
        unknown = [n for n in wanted if n not in {str(i.get("id")) for i in invoices}]
        if unknown and len(unknown) == len(wanted):
            # An invoice number no invoice of the account has ("got an email mentioning INV-5300"):
            # said plainly, not answered with the invoices the account does have (issue 38).
            self.step.resolved = True
            return self.step.answer(
                f"I don't see {' or '.join(unknown)} on your account: it isn't one of your Acme invoices. "
                "Every invoice of yours is under Settings > Billing > Invoices; if a message about it asked "
                "you to pay or sign in somewhere, please don't."
            )
        # The months asked for ("my invoice for february"): this message's, else the topic's.
        months = next((m for m in map(slot_extraction.months_named, [text, *reversed(self.topic_texts())]) if m), [])
        in_months = [i for i in invoices if str(i.get("period", ""))[5:7].isdigit() and int(str(i["period"])[5:7]) in months]
        latest = not months and not wanted and any(cues.LATEST.search(t) for t in [text, *self.topic_texts()[-1:]])
        shown = [i for i in invoices if i["id"] in wanted] or in_months or (invoices[-1:] if latest else invoices[-4:])
        parts = [f"{i['id']} for {i['period']}: {money(i['amount'])}, {i['status']}" for i in shown]
        missing = ""
        if months and not in_months and not wanted:
            names = " or ".join(calendar.month_name[m] for m in months)
            missing = f"I don't see an invoice for {names}. "
        self.step.resolved = True
        lead = "Here is your invoice" if len(shown) == 1 and not missing else "Here are your invoices"
        return self.step.answer(
            f"{missing}{lead}: " + "; ".join(parts) + ". You can download PDFs under Settings > Billing > Invoices."
        )
