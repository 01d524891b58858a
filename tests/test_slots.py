"""Slot extraction: amounts, dates, emails, invoice/order/customer ids from free text."""

from __future__ import annotations

import pytest

from supportdesk.models.offline.slots import Amount, Date, extract, extract_amounts, extract_dates


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("two charges of $29.99 on March 1st", [Amount(29.99, "USD")]),
        ("I paid 29.99 USD yesterday", [Amount(29.99, "USD")]),
        ("they took €12 from me", [Amount(12.0, "EUR")]),
        ("a £1 fee and then 40 pounds", [Amount(1.0, "GBP"), Amount(40.0, "GBP")]),
        ("refund $1,299.50 please", [Amount(1299.5, "USD")]),
        ("EUR 15.5 charged", [Amount(15.5, "EUR")]),
        ("$29.99 and again $29.99", [Amount(29.99, "USD")]),
        ("I have 3 seats and 2 users", []),
    ],
)
def test_amounts(text, expected):
    assert extract_amounts(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("on March 1st and March 3rd", [Date(3, 1), Date(3, 3)]),
        ("charged on 2026-03-03", [Date(3, 3, 2026)]),
        ("on 1 March 2026", [Date(3, 1, 2026)]),
        ("on the 3rd of March", [Date(3, 3)]),
        ("Feb. 28, 2026 and Dec 31", [Date(2, 28, 2026), Date(12, 31)]),
        ("on 03/01/2026", [Date(3, 1, 2026)]),
        ("on 13/01/2026", [Date(1, 13, 2026)]),
        ("it may be fine", []),
        ("march 45th", []),
        # A US-style short date with no year, month first (cal-14): any year's February 16.
        ("what's the 2/16 charge on my card?", [Date(2, 16)]),
        ("the 1/21 payment and 3/4/2026", [Date(1, 21), Date(3, 4, 2026)]),
        # A share, a rate or a run of numbers is no short date.
        ("1/2 of my files are gone, support 24/7, ratio 10/20/30, 50/50", []),
        # Written day-first when the first number cannot be a month (money-16): 21/3 is March 21.
        ("what was taken 21/3? and the 15/03 one", [Date(3, 21), Date(3, 15)]),
        ("the 3/4 charge", [Date(3, 4)]),
        # A day in words, with "the" before it or "of" after it.
        ("on january the seventeenth", [Date(1, 17)]),
        ("the twenty-first of march 2026 and thirty first of may", [Date(3, 21, 2026), Date(5, 31)]),
        ("twentyfirst of march", [Date(3, 21)]),
        # An ordinal counting charges beside a month is no day.
        ("a second march payment, my first march invoice", []),
        ("the thirty-second of march", []),
    ],
)
def test_dates(text, expected):
    assert extract_dates(text) == expected


def test_date_iso_forms():
    assert Date(3, 1, 2026).iso() == "2026-03-01"
    assert Date(3, 1).iso() == "--03-01"


def test_emails_and_ids():
    found = extract(
        "I'm Bob.Smith+x@Example.co.uk, invoice INV-1042 and invoice number 5531, order #ORD-77, account CUS-1001"
    )
    assert found.emails == ["bob.smith+x@example.co.uk"]
    assert found.invoice_ids == ["INV-1042", "INV-5531"]
    assert found.order_ids == ["ORD-77"]
    assert found.customer_ids == ["CUS-1001"]


def test_email_digits_are_not_amounts_or_ids():
    found = extract("write to jo2026@example.com")
    assert found.emails == ["jo2026@example.com"]
    assert found.amounts == [] and found.dates == []


def test_seed_message_slots():
    found = extract("Yes, I can see two charges of $29.99 on March 1st and March 3rd.")
    assert found.amounts == [Amount(29.99)]
    assert [d.iso() for d in found.dates] == ["--03-01", "--03-03"]
    assert not extract("nothing useful here")


def test_amount_str():
    assert str(Amount(29.99)) == "$29.99"
    assert str(Amount(12, "EUR")) == "€12.00"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Written without a currency, beside a word about money: read in the desk's currency.
        ("why was I charged 49.99 on March 3rd??", [49.99]),
        ("You took 129.99 off my card", [129.99]),
        ("a 9.99 charge from March 3", [9.99]),
        ("29.99 was debited twice", [29.99]),
        ("a payment of 129.99 on the 1st", [129.99]),
        ("charged me 1,299.99 twice", [1299.99]),
        ("refund 29.99 please", [29.99]),
        # Numbers that are not money: versions, sizes, percentages, dates, whole numbers.
        ("the app crashes on version 2.13", []),
        ("since update 4.20 the sync spins", []),
        ("uploads stop at 12.50 MB", []),
        ("it costs 12.50% more", []),
        ("I was charged on 03.03 and 04.03", []),
        ("charged 3 times this month", []),
        ("paid 29.99.1 build", []),
    ],
)
def test_amounts_written_without_a_currency(text, expected):
    found = extract_amounts(text)
    assert [a.value for a in found] == expected
    assert all(a.currency == "USD" for a in found)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # In answer to an agent asking for the amount, a number with cents is the amount.
        ("it was 29.99 each time", [29.99]),
        ("129.99", [129.99]),
        ("I see 29.99 twice", [29.99]),
        ("1,299.00 both times", [1299.0]),
        # Still not: a day and a month written with a dot, a version, a whole number.
        ("on 03.01 and 03.03", []),
        ("the app says version 4.20", []),
        ("it was 30 I think", []),
    ],
)
def test_an_amount_given_when_asked_for(text, expected):
    assert [a.value for a in extract(text, amount_asked=True).amounts] == expected
    if expected:  # not asked for, a bare number stays unread (a version, a size ...)
        assert [a.value for a in extract(text).amounts] == []


def test_what_asks_for_an_amount():
    from supportdesk.models.offline.slots import ASKS_FOR_AMOUNT

    for text in (
        "What's the email address on your account? If that's easier, tell me the amount and the dates",
        "That didn't go through: to confirm the account is yours, I need the email address on it, or the amount of the charge.",
        "How much was it?",
    ):
        assert ASKS_FOR_AMOUNT.search(text), text
    for text in ("I've refunded the full amount.", "A refund of $29.99 is more than I can approve myself."):
        assert not ASKS_FOR_AMOUNT.search(text), text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("March 1st and 3rd", ["--03-01", "--03-03"]),
        ("march 1 & 3", ["--03-01", "--03-03"]),
        ("the 1st and the 3rd of March", ["--03-01", "--03-03"]),
        ("1 and 3 March", ["--03-01", "--03-03"]),
        ("on the 1st and 3rd of march 2026", ["2026-03-01", "2026-03-03"]),
        ("March 1st and 3rd of April", ["--03-01", "--04-03"]),  # the second day has its own month
        # a number that counts something is no day
        ("March 1st and 3 more times since", ["--03-01"]),
        ("March 1st and 2 days later", ["--03-01"]),
        ("charged 2 times, last on 3 March", ["--03-03"]),
    ],
)
def test_two_days_sharing_one_month(text, expected):
    assert [d.iso() for d in extract_dates(text)] == expected


@pytest.mark.parametrize(
    ("text", "months"),
    [
        ("my invoice for february", [2]),
        ("the feb invoice and the March one", [2, 3]),
        ("may I get my invoice?", []),  # a verb
        ("the invoice for May", [5]),
        ("invoices please", []),
    ],
)
def test_months_named(text, months):
    from supportdesk.models.offline.slots import months_named

    assert months_named(text) == months


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A day of the week gone by: the latest one before the calendar's today (a Friday).
        ("whats last tuesdays charge?", [Date(3, 17, 2026)]),
        ("what did you charge me last friday??", [Date(3, 13, 2026)]),  # said on a Friday: a week back
        ("monday's payment, and the one on sunday", [Date(3, 16, 2026), Date(3, 15, 2026)]),
        ("we work mondays, see you friday", []),
        # A day of the month with no month said: the calendar's month (money-16).
        ("what is the one on the 16th?", [Date(3, 16, 2026)]),
        ("the payment from the 8th", [Date(3, 8, 2026)]),
        # A month said after it is a date of its own (extract_dates), and an ordinal pointing at a
        # list ("the 2nd one") names no day.
        ("charged on the 3rd of march", []),
        ("the 2nd one looks like a dupe", []),
    ],
)
def test_days_named_from_the_calendars_today(text, expected):
    from datetime import date

    from supportdesk.models.offline.slots import names_a_day_or_month, relative_days

    assert relative_days(text, date(2026, 3, 20)) == expected
    if expected:
        assert names_a_day_or_month(text)
