"""The customer's charges (part of the money skill, ./__init__.py): as last read (refunds made since
subtracted), which one the customer's words name, and the answer to a question about them. Apart
because it only reads: nothing here changes an account."""

from __future__ import annotations

import calendar
import re
from datetime import date
from typing import Any

from supportdesk.engine.confirmation import asks, request_clauses
from supportdesk.models.offline import cues, dialogue
from supportdesk.models.offline import slots as slot_extraction
from supportdesk.models.offline.skills.common import nice_date
from supportdesk.readers import acts
from supportdesk.models.offline.skills.money.base import MoneyBase
from supportdesk.text import money
from supportdesk.patterns import LazyPattern

# A reply that points back at what was just shown ("why is it so much", "what's that for").
_POINTS_BACK = LazyPattern(r"\b(?:it|its|it's|that|this|that one|this one)\b", re.I)
# "why is it so much", "how come it's that high": a question about a charge's amount.
_WHY_AMOUNT = LazyPattern(r"\b(?:why|how come)\b.*\b(?:much|high|expensive|big|large|more)\b|\bso (?:much|high|expensive)\b", re.I)
# A charge told as coming again after the day named ("on the 24th and then again the next day"):
# both of a pair told, the day named being the first's (a relative day, a rule's to read).
_AGAIN_LATER = LazyPattern(r"\b(?:again|the (?:next|following) day|the day after|a day later)\b", re.I)
WHICH_CHARGE = "More than one charge fits that:"  # (issue 38: a charge named ambiguously is asked about)


# A charge id written in the desk's own form, however short its number ("CH-12": a typo or a
# truncated id is still an id the customer names; an id is a rule's, issue 38). Spaced or
# unhyphenated, an id needs the length of a real one (cues.CHARGE_ID), so "ch 2" stays words.
_SHORT_CHARGE_ID = LazyPattern(r"\bch-\d{1,3}\b", re.I)


def charge_ids_not_held(text: str, charges: list[dict[str, Any]]) -> list[str]:
    """The charge ids a message names ("CH-9999", "ch 9040", "CH-12") that are not among the
    account's charges, in the order named (issue 38: such an id is no charge of theirs)."""
    held = {str(c["id"]).upper() for c in charges}
    found = sorted([*cues.CHARGE_ID.finditer(text), *_SHORT_CHARGE_ID.finditer(text)], key=lambda m: m.start())
    named = dict.fromkeys("CH-" + re.sub(r"\D", "", m.group(0)) for m in found)
    return [i for i in named if i not in held]


def not_held_said(unheld: list[str]) -> str:
    """The charge ids named that the account does not hold, said plainly to be none of its charges."""
    return f"{' and '.join(unheld)} {'is not a charge' if len(unheld) == 1 else 'are not charges'} on this account"


class MoneyReads(MoneyBase):
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

    def _last_payment(self, customer_id: str):
        """The payment last taken from the account (its day, amount and what it paid for), read
        from its charges; a later payment that failed is said too."""
        charges = self._charges(customer_id)
        if charges is None:
            if self.view.called_with("find_charges", {"customer_id": customer_id}):
                return self.step.answer(f"I can't find any payments for account {customer_id}.")
            return self.step.call("find_charges", {"customer_id": customer_id}, customer_id=customer_id)
        paid = [c for c in charges if c["status"] != "failed"]
        if not paid:
            return self.step.answer("I don't see a payment taken from your account yet.")
        last = paid[-1]
        said = f"Your last payment was {money(last['amount'])} on {nice_date(last['charged_on'])} ({last['description']})."
        failed = [c for c in charges if c["status"] == "failed" and c["charged_on"] > last["charged_on"]]
        if failed:
            said += f" The payment on {nice_date(failed[-1]['charged_on'])} failed, so you weren't charged for it."
        self.step.resolved = True
        return self.step.answer(said)

    def _failed_payment(self, customer_id: str):
        """A payment the customer tells us failed (asks.payment_failed_told): the account's last
        failed charge, its day and amount, that nothing was taken, and what settles its invoice
        (a new payment method, which the desk changes only on the customer's yes); never the
        in-app card article's steps, and never the next payment in its place (issue 38, bill-18)."""
        charges = self._charges(customer_id)
        if charges is None:
            if self.view.called_with("find_charges", {"customer_id": customer_id}):
                return self.step.answer(f"I can't find any payments for account {customer_id}.")
            return self.step.call("find_charges", {"customer_id": customer_id}, customer_id=customer_id)
        failed = [c for c in charges if c["status"] == "failed"]
        if not failed:
            return self.step.answer(
                "I don't see a failed payment on your account. " + self._charges_summary(charges)
                + " If your bank shows one that didn't go through, tell me its date and amount."
            )
        charge = failed[-1]
        invoice = f", and invoice {charge['invoice_id']} is still unpaid" if charge.get("invoice_id") else ""
        self.step.resolved = True
        return self.step.answer(
            f"The payment of {money(charge['amount'])} on {nice_date(charge['charged_on'])} ({charge['description']}) failed: "
            f"it didn't go through, so no money was taken{invoice}. Updating your payment method will settle it: tell me "
            "the card to use (for example \"visa ending 4242\") and I'll change it once you confirm, or change it yourself "
            "under Settings > Billing."
        )

    def _charge_label(self, charge_id: str) -> str:
        for t in reversed(self.view.tools):
            if t.ok and t.name == "find_charges" and isinstance(t.output, dict):
                for ch in t.output.get("charges", []):
                    if ch.get("id") == charge_id:
                        kind = "the duplicate charge" if ch.get("duplicate_of") else "the charge"
                        return f"{kind} on {nice_date(ch['charged_on'])} (charge {charge_id})"
        return f"charge {charge_id}"

    def _charge_named(
        self, text: str, charges: list[dict[str, Any]], months: list[int], duplicate: bool
    ) -> dict[str, Any] | list[dict[str, Any]] | None:
        """The one charge the customer's words name by its id, date, amount or day of the month
        ("the one on the 1st is the double", of the months they named); the charges it may be
        when a day of the month fits several (to ask which; of a duplicate pair, when they speak
        of one, the one of the pair on that day); None when they name none (issue 38): the
        named charge is the one offered, never its neighbour."""
        wanted = [c for c in re.split(r"[,;.!?]+|\bbut\b", text) if not re.search(r"\b(?:not|don'?t|never)\b", c, re.I)]
        said = " ".join(wanted)
        asked = self.view.last_agent_text()
        if asked.startswith(WHICH_CHARGE):
            # The answer to our question which: one of the charges it listed, by month or place.
            listed = [c for c in charges if c["id"] in asked]
            in_month = [c for c in listed if int(c["charged_on"][5:7]) in slot_extraction.months_named(text)]
            picked = in_month if len(in_month) == 1 else dialogue.point_at(said, listed)
            if picked is not None and len(picked) == 1:
                return picked[0]
        pool = [c for c in charges if not months or int(c["charged_on"][5:7]) in months]
        if len(pool) < 2 or dialogue.days_named(said) > 1 or dialogue.BOTH.search(text):
            return None
        # Named outright (id, date, amount, day): a position ("the later one", "the duplicate")
        # leaves the choice to the duplicate found below.
        named = dialogue.point_at(said, pool, positions=False)
        if named is not None and len(named) == 1:
            return self._the_duplicate_of(named[0], charges, said) if duplicate and _AGAIN_LATER.search(said) else named[0]
        days = dialogue.bare_days(said)
        on_day = [c for c in pool if int(c["charged_on"][8:10]) in days]
        if len(on_day) < 2:
            return None
        family = {c["id"] for c in pool if c.get("duplicate_of")} | {c.get("duplicate_of") for c in pool}
        paired = [c for c in on_day if c["id"] in family]
        if duplicate and len(paired) == 1:
            return paired[0]
        return on_day

    @staticmethod
    def _the_duplicate_of(charge: dict[str, Any], charges: list[dict[str, Any]], said: str) -> dict[str, Any]:
        """Of a duplicated pair told by its first day and the repeat after it ("9.99 on the 24th
        and then again the next day"; issue 38, held-11), the charge the refund is for: the later
        one (the repeat); the charge itself when it is no pair's first, its repeat is refunded
        already, or the customer named it by its id."""
        repeat = next((c for c in charges if c.get("duplicate_of") == charge["id"] and c["refundable"] > 0), None)
        if repeat is None or str(charge["id"]).casefold() in said.casefold():
            return charge
        return repeat

    def _last_named_charges(self, charges: list[dict[str, Any]], text: str) -> list[dict[str, Any]] | None:
        """The charges the customer's latest earlier message about charges named (by id, date,
        amount or day); None when that message spoke of charges by no single one ("charged twice
        in march") or none named any."""
        earlier = self.topic_texts()
        # This message is not an earlier one, whole or in part ("both for the Team plan, could
        # someone sort that out?" points at nothing before it; held-4).
        whole = self.view.customer_messages[-1].text if self.view.customer_messages else text
        while earlier and (earlier[-1] in (text, whole) or text in earlier[-1] or earlier[-1].strip() in whole):
            earlier = earlier[:-1]
        for said in reversed(earlier):
            hits = dialogue.point_at(dialogue.without_repeated(said), charges, positions=False)
            repeats = [c for c in hits or [] if c.get("duplicate_of") in {h["id"] for h in hits or []}]
            if hits and len(hits) == 2 and len(repeats) == 1:
                # Both days of a duplicated pair told ("twice, on the 5th and on the 6th"): the
                # charge meant is the repeat, as the duplicate is the one offered back (held-12).
                return repeats
            if hits:
                return hits
            if slot_extraction.months_named(said) or cues.DUPLICATE.search(said):
                return None
        return None

    def _which_charge(self, charges: list[dict[str, Any]]):
        """Several charges fit what the customer named: ask which, offering none. A failed one is
        said to have failed as it is listed ("the team payment from the 9th", March's failed):
        no money was taken, so it is no refund to choose (held-18)."""
        each = [
            f"{money(c['amount'])} on {nice_date(c['charged_on'])} ({c['id']}{', failed: no money was taken' if c['status'] == 'failed' else ''})"
            for c in charges
        ]
        listed = ", ".join(each[:-1]) + f" or {each[-1]}"
        return self.step.answer(f"{WHICH_CHARGE} {listed}. Which one do you mean?")

    def _charges_summary(self, charges: list[dict[str, Any]], lead: str = "Your recent charges: ") -> str:
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
        return lead + "; ".join(lines) + "."

    def _days_asked(self, text: str) -> list[slot_extraction.Date]:
        """The days the customer asks about charges on: this message's, else the topic's latest.
        A day named from today ("yesterday") is counted on the business data's calendar."""
        today = self._business_today()

        def days(t: str) -> list[slot_extraction.Date]:
            named = slot_extraction.extract_dates(t)
            return named + slot_extraction.relative_days(t, today) if today is not None else named

        return next((d for d in (days(t) for t in [text, *reversed(self.topic_texts())]) if d), [])

    def _business_today(self) -> date | None:
        """The business data's today (find_customer's "as_of": the demo company's calendar), once
        the account is read; None before (the machine's clock is never the customer's today)."""
        customer_id = self._customer_id()
        record = self._customer_record(customer_id) if customer_id else None
        try:
            return date.fromisoformat(str((record or {}).get("as_of") or ""))
        except ValueError:
            return None

    def _reads_today_first(self, customer_id: str, text: str):
        """A day named from today ("anything charged yesterday?") needs the business data's
        calendar: the step that reads the account for it, or None when nothing is to be read."""
        if not any(slot_extraction.names_relative_day(t) for t in [text, *self.topic_texts()[-1:]]):
            return None
        if self._customer_record(customer_id) is not None:
            return None
        read, _record = self._read_account(customer_id)
        return read

    def _last_listed(self, charges: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The charges the desk's last reply listed, in its order (by the day each was taken)."""
        said = self.view.last_agent_text()
        return [c for c in charges if nice_date(str(c["charged_on"])) in said]

    def _pointed_back(self, charges: list[dict[str, Any]], text: str) -> list[dict[str, Any]] | None:
        """The charges of the desk's last list a reply points back at when it names no day or
        month of its own: "the first one, what was that for?", "the 2nd", "the duplicate", or
        "why is it so much" when one charge was shown (issue 38: what was said stays said)."""
        if not text or slot_extraction.extract_dates(text) or slot_extraction.months_named(text):
            return None
        listed = self._last_listed(charges)
        if not listed:
            return None
        pointed = dialogue.point_at(text, listed)
        if pointed:
            return pointed
        if len(listed) == 1 and _POINTS_BACK.search(text):
            return listed
        return None

    def _charges_answer(self, charges: list[dict[str, Any]], text: str = ""):
        unheld = charge_ids_not_held(text, charges)
        if unheld:
            # "there's a charge CH-4410 i don't understand": an id the account does not hold is
            # said to be none of its charges, and the account's own listed; no other charge is
            # taken for it, nor offered back in its place (issue 38).
            return self.step.answer(f"{not_held_said(unheld)}. " + self._charges_summary(charges) + " Which of these did you mean?")
        pointed = self._pointed_back(charges, text)
        # "what was the charge on february 1st?": the charges of the days asked about, not the list.
        days = [] if pointed else self._days_asked(text)
        on_days = pointed or [c for c in charges if any(d.matches(str(c["charged_on"])) for d in days)]
        # "when was I charged in feb?": no day named, a month is: that month's charges.
        months = [] if days or pointed else slot_extraction.months_named(text)
        if not (days or pointed or months) and cues.only_facts(text):
            # The account given in answer to our question ("how much was the february charge?",
            # then the email): the month that question named is still the one asked about
            # (issue 38.3), as its days are (`_days_asked`).
            months = next((m for m in map(slot_extraction.months_named, reversed(self.topic_texts())) if m), [])
        if months:
            on_days = [c for c in charges if str(c["charged_on"])[5:7].isdigit() and int(str(c["charged_on"])[5:7]) in months]
        lead, missing = "Your recent charges: ", ""
        if on_days:
            lead = "Here is that charge — " if len(on_days) == 1 else "Here are those charges — "
        elif days:
            # (Days said together, "earlier this week": the span, not each of its days.)
            spoken = [d.spoken() for d in days] if len(days) <= 2 else [f"between {days[0].spoken()} and {days[-1].spoken()}"]
            missing = f"I don't see a charge {'on ' if len(days) <= 2 else ''}{' or '.join(spoken)}. "
        elif months:
            missing = f"I don't see a charge in {' or '.join(calendar.month_name[m] for m in months)}. "
        shown = on_days or charges
        dups = [c for c in shown if c.get("duplicate_of") and c["refundable"] > 0]
        failed = [c for c in shown if c["status"] == "failed"]
        summary = missing + self._charges_summary(shown, lead)
        if pointed and len(shown) == 1 and _WHY_AMOUNT.search(text):
            # "why is it so much": what the amount pays for.
            summary += f" {money(shown[0]['amount'])} is the price of the {shown[0]['description']}."
        said = self.view.last_agent_text()
        if pointed and dups and f"on {nice_date(dups[-1]['charged_on'])} is a duplicate" in said:
            # Pointed back at what the last reply showed: its duplicate was told, and its refund
            # put to the customer, already; said once, not offered again on a question about it.
            return self.step.answer(f"{summary} As I said, the charge on {nice_date(dups[-1]['charged_on'])} is a duplicate.")
        # What the customer asked for on this matter stays said (issue 38), in the message that
        # named the charges or one before the email that found them: something done ("pls sort",
        # as the act reader reads a request) about the duplicate's own day they named, or the
        # money back ("i want it back": a request the intent reader reads as a refund). A request
        # to list charges names no day of a duplicate and asks for no refund.
        texts = [text, *self.topic_texts()]
        trouble = any(cues.CHARGE_TROUBLE.search(t) for t in texts)
        asking = [c for t in texts for c in request_clauses(t)]
        dup_day = any(d.matches(str(c["charged_on"])) for d in days for c in dups)
        came_for = not asks(text) and bool(asking) and (dup_day or any(acts.read_intent(c).act == "refund" for c in asking))
        if dups and (came_for or trouble or dup_day):
            # The offer is about the duplicated pair: "the second one" is the second of those two.
            # A question about the duplicate's own day is answered with the offer too: the
            # customer's "yes, refund it" then answers the desk's question, rather than asking
            # for a refund that is put to them a second time (issue 38.1, money-13).
            dup = dups[-1]
            pair = [c["id"] for c in charges if c["id"] == dup.get("duplicate_of")] + [dup["id"]]
            tail = f" The charge on {nice_date(dup['charged_on'])} is a duplicate."
            # The customer told both days of the pair ("it hit my card on 10 and 11 march, same
            # amount"; a question about them only asks), or asked for something about them: they
            # came about the duplicate, so a refund above this agent's limit goes
            # up at once and the agent that may make it asks the one question, which their yes
            # then answers (issue 38, offers-7: a yes to a stated offer was asked again).
            told = (came_for or bool(days) and set(pair) <= {c["id"] for c in on_days}) and not asks(text)
            told = told and (came_for or trouble)
            return self._offer_refund(summary + tail, "Would you like me to refund it?", self._refund_args(dup), pair, asked_for=told)
        if dups:
            # A duplicate seen in charges asked about for another reason ("what do i pay next
            # month?", "just asking, not asking you to do anything"): said, not offered.
            tail = f" The charge on {nice_date(dups[-1]['charged_on'])} looks like a duplicate; tell me if you'd like it refunded."
            return self.step.answer(summary + tail)
        tail = ""
        if failed:
            tail = f" The payment on {nice_date(failed[-1]['charged_on'])} failed, so you weren't charged for it; updating your payment method will settle that invoice."
        return self.step.answer(summary + tail)
