"""Slot extraction: the facts a support agent picks out of a customer's sentence.

Amounts ($29.99, 29.99 USD, €12, and "charged 29.99" beside a word about money), dates
(March 1st, 2026-03-03, 1 March, 03/01/2026), emails, invoice ids (INV-1042) and order ids
(ORD-77). Pure regular expressions: the offline model runs them on every message, so they must
be cheap and never raise.
"""

from __future__ import annotations

import bisect
import calendar
import re
from dataclasses import dataclass, field
from datetime import date, timedelta

from supportdesk.models.offline.kept import kept_by_text
from supportdesk.text import EMAIL_ADDRESS
from supportdesk.patterns import LazyPattern

MONTHS = {
    name: i
    for i, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH_RE = "|".join(sorted(MONTHS, key=len, reverse=True))
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(?P<year>20\d\d))?"

_SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP"}
_CODES = ("usd", "eur", "gbp", "dollars", "dollar", "euros", "euro", "pounds", "pound", "bucks")
_CODE_TO_CURRENCY = {
    "usd": "USD", "dollars": "USD", "dollar": "USD", "bucks": "USD",
    "eur": "EUR", "euros": "EUR", "euro": "EUR",
    "gbp": "GBP", "pounds": "GBP", "pound": "GBP",
}
_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?|\d+(?:\.\d{1,2})?"
_AMOUNT_SYMBOL = LazyPattern(rf"(?P<sym>[$€£])\s?(?P<num>{_NUMBER})(?![\d])")
_AMOUNT_CODE = LazyPattern(
    rf"(?<![\w.])(?P<num>{_NUMBER})\s?(?P<code>{'|'.join(_CODES)})\b", re.IGNORECASE
)
_AMOUNT_CODE_FIRST = LazyPattern(
    rf"\b(?P<code>usd|eur|gbp)\s?(?P<num>{_NUMBER})(?![\d])", re.IGNORECASE
)
# An amount written without a currency ("charged 49.99", "a 9.99 charge", "29.99 was debited"):
# only a number with cents, and only beside a word about money, so a version ("2.13"), a size
# ("12.50 MB") or a date ("on 03.03") is not read as one. It is in the desk's currency.
_CENTS = r"(?<![\w.,$€£])(?P<num>\d{1,3}(?:,\d{3})+\.\d\d|\d+\.\d\d)(?![\d.,]\d|\s*(?:%|[kmgt]b\b))"
_MONEY_VERB = (
    r"charg\w*|bill(?:ed|ing)?|paid|pay(?:ing|ment)?s?|debit\w*|took|taken|tak(?:e|es|ing)|deduct\w*|"
    r"withdr[ae]w\w*|cost(?:s|ing)?|spent|refund(?:ed)?|fee"
)
_AMOUNT_AFTER_WORD = LazyPattern(rf"\b(?:{_MONEY_VERB})\b(?:\s+(?!on\b)[a-z']{{1,8}}){{0,3}}\s+{_CENTS}", re.IGNORECASE)
# An amount with cents made plural ("two 9.99s went out", "both 29.99s"): several charges of it.
# (Counted: "the 1.50s timeout" is seconds, "version 2.13s" no money.)
_AMOUNT_PLURAL = LazyPattern(
    r"\b(?:two|three|both|2|3|several|multiple|those|these)\s+(?P<num>\d{1,3}(?:,\d{3})+\.\d\d|\d+\.\d\d)'?s\b",
    re.IGNORECASE,
)
_AMOUNT_BEFORE_WORD = LazyPattern(
    rf"{_CENTS}\s+(?:(?:charge|payment|debit|fee|transaction|refund)s?\b"
    r"|(?:was|were|got|has been|have been|had been)\s+(?:charged|debited|billed|taken|deducted|withdrawn)\b)",
    re.IGNORECASE,
)

# In answer to a question for the amount, a number with cents is the amount even with no money
# word beside it ("it was 29.99 each time", "129.99"); one that reads as a day and a month
# ("03.01", "1.03") is left out: the question asked for dates too.
_ASKED_CENTS = LazyPattern(_CENTS)
_DAY_DOT_MONTH = LazyPattern(r"(?:0?[1-9]|[12]\d|3[01])\.(?:0[1-9]|1[0-2])")
_VERSION_BEFORE = LazyPattern(r"\b(?:version|update|build|release|v)\s*$", re.IGNORECASE)
# What an agent writes when it asks the customer for an amount ("tell me the amount and the dates",
# "I need the email address on it, or the amount of the charge", "how much was it?").
ASKS_FOR_AMOUNT = LazyPattern(
    r"\b(?:tell me|I need|what(?:'s| is| was)|which|give me|share)\b[^.?!]*\bamount\b|\bhow much\b[^.!?]*\?", re.IGNORECASE
)

_ISO_DATE = LazyPattern(r"\b(?P<year>20\d\d)-(?P<month>[01]?\d)-(?P<day>[0-3]?\d)\b")
# (A day may stand in brackets after its month: "march (10th & 11th)".)
_MONTH_DAY = LazyPattern(rf"\b(?P<month>{_MONTH_RE})\.?\s+\(?(?:the\s+)?{_DAY}\b{_YEAR}", re.IGNORECASE)
_DAY_MONTH = LazyPattern(
    rf"\b(?:the\s+)?{_DAY}\s+(?:of\s+)?(?P<month>{_MONTH_RE})\b{_YEAR}", re.IGNORECASE
)
# Two days sharing one month: "March 1st and 3rd", "march 1 & 3" (the month first), "the 1st and
# the 3rd of March", "1 and 3 March" (the month last). Between the days: a comma, "&", "and" or
# "or" ("+" as terse messages say "and": "mid march (15th + 16th)", h32), and up to two more words
# ("and again on the 3rd"). A number that counts something ("3 more times", "2 days later") is no day.
_LISTED = r"\s*(?:,|&|\+|\band\b|\bor\b)\s+(?:[a-z]+\s+){0,2}?(?:the\s+)?"
_COUNTED = r"(?!\s*(?:more|other|times?|days?|weeks?|months?|years?|hours?|minutes?|charges?|payments?|x)\b)"
_MONTH_DAYS = LazyPattern(
    rf"\b(?P<month>{_MONTH_RE})\.?\s+\(?(?:the\s+)?(?P<first>[0-3]?\d)(?:st|nd|rd|th)?{_LISTED}"
    rf"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?\b{_COUNTED}{_YEAR}",
    re.IGNORECASE,
)
_DAYS_MONTH = LazyPattern(
    rf"\b(?:the\s+)?(?P<first>[0-3]?\d)(?:st|nd|rd|th)?{_LISTED}{_DAY}\s+(?:of\s+)?(?P<month>{_MONTH_RE})\b{_YEAR}",
    re.IGNORECASE,
)
# 03/01/2026 is read month-first (the product bills in US format); 13/01/2026 is day-first.
_SLASH_DATE = LazyPattern(r"\b(?P<a>[0-3]?\d)/(?P<b>[0-3]?\d)/(?P<year>20\d\d)\b")
# A short date with no year ("the 2/16 charge"): month first, as above (the product bills in US
# format), in no year said (so any of the charges' years). Not a part of a longer run ("1/2/3",
# "10/20/30"), a share ("1/2 of my files", "3/4 off") nor a rate ("24/7": no month 24).
_SHORT_SLASH_DATE = LazyPattern(
    r"(?<![\d/.])(?P<month>1[0-2]|0?[1-9])/(?P<day>[0-3]?\d)\b(?![/.]\d)(?!\s*(?:of|off|price|done|way)\b)",
    re.IGNORECASE,
)
# The same short date written day-first, as most of the world writes it ("what was taken 21/3?"):
# only when the first number cannot be a month (13 to 31), so "3/4" stays March 4; never "24/7"
# (a rate, not July 24).
_SHORT_SLASH_DAY_FIRST = LazyPattern(
    r"(?<![\d/.])(?!24/7\b)(?P<day>1[3-9]|2\d|3[01])/(?P<month>1[0-2]|0?[1-9])\b(?![/.]\d)"
    r"(?!\s*(?:of|off|price|done|way)\b)",
    re.IGNORECASE,
)
# A day said in words ("the seventeenth of january", "january the twenty-first"): the ordinal
# words are a closed set, like months. Only with "the" before it or "of" after it, so "a second
# march payment" or "my first march invoice" names no day.
_FIRST_ORDINALS = (
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
    "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
    "eighteenth", "nineteenth",
)
# Keyed by the words run together ("twentyfirst"): said with a hyphen, a space or neither.
_ORDINAL_WORDS = {word: i for i, word in enumerate(_FIRST_ORDINALS, start=1)} | {"twentieth": 20, "thirtieth": 30}
_ORDINAL_WORDS |= {f"twenty{word}": 20 + i for i, word in enumerate(_FIRST_ORDINALS[:9], start=1)} | {"thirtyfirst": 31}
_ONE_WORD_DAYS = "|".join(sorted((*_FIRST_ORDINALS, "twentieth", "thirtieth"), key=len, reverse=True))
_DAY_WORD = rf"(?P<day_word>twenty[- ]?(?:{'|'.join(_FIRST_ORDINALS[:9])})|thirty[- ]?first|{_ONE_WORD_DAYS})"
_MONTH_THE_DAY_WORD = LazyPattern(rf"\b(?P<month>{_MONTH_RE})\.?\s+the\s+{_DAY_WORD}\b{_YEAR}", re.IGNORECASE)
_DAY_WORD_OF_MONTH = LazyPattern(
    rf"(?:\bthe\s+{_DAY_WORD}\s+(?:of\s+)?|(?<!-)\b{_DAY_WORD.replace('day_word', 'day_word_of')}\s+of\s+)(?P<month>{_MONTH_RE})\b{_YEAR}",
    re.IGNORECASE,
)


def _day_in_words(words: str) -> int:
    """The day of the month an ordinal in words names ("twenty-first": 21)."""
    return _ORDINAL_WORDS[re.sub(r"[- ]", "", words.lower())]


_EMAIL = EMAIL_ADDRESS
_INVOICE = LazyPattern(r"\b(?:INV|inv|Inv)[-#\s]?(?P<num>\d{3,})\b|\binvoice\s+(?:no\.?|number|#)?\s*#?(?P<num2>\d{3,})\b", re.IGNORECASE)
_ORDER = LazyPattern(r"\b(?:ORD|ord|Ord)[-#\s]?(?P<num>\d{2,})\b|\border\s+(?:no\.?|number|#)?\s*#?(?P<num2>\d{3,})\b", re.IGNORECASE)
CUSTOMER_ID = LazyPattern(r"\bCUS[-_]?(?P<num>\d{3,})\b", re.IGNORECASE)


@dataclass(frozen=True)
class Amount:
    value: float
    currency: str = "USD"

    def __str__(self) -> str:
        symbol = {"USD": "$", "EUR": "€", "GBP": "£"}.get(self.currency, "")
        return f"{symbol}{self.value:,.2f}" if symbol else f"{self.value:,.2f} {self.currency}"


@dataclass(frozen=True)
class Date:
    """A calendar date; `year` is None when the customer did not say it."""

    month: int
    day: int
    year: int | None = None

    def iso(self) -> str:
        """'2026-03-01', or '--03-01' (ISO 8601's form for a date without a year)."""
        if self.year is None:
            return f"--{self.month:02d}-{self.day:02d}"
        return f"{self.year:04d}-{self.month:02d}-{self.day:02d}"

    def matches(self, iso: str) -> bool:
        """Whether the ISO calendar date `iso` ('2026-03-01') is this day (any year, if none was said)."""
        if len(iso) < 10:
            return False
        return iso[5:10] == f"{self.month:02d}-{self.day:02d}" and (self.year is None or iso[:4] == f"{self.year:04d}")

    def spoken(self) -> str:
        """'April 10', or 'April 10, 2026' when the year was said."""
        name = f"{calendar.month_name[self.month]} {self.day}"
        return name if self.year is None else f"{name}, {self.year}"


@dataclass
class Slots:
    amounts: list[Amount] = field(default_factory=list)
    dates: list[Date] = field(default_factory=list)
    emails: list[str] = field(default_factory=list)
    invoice_ids: list[str] = field(default_factory=list)
    order_ids: list[str] = field(default_factory=list)
    customer_ids: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return any((self.amounts, self.dates, self.emails, self.invoice_ids, self.order_ids, self.customer_ids))


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _valid(month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= 31


def _add_unique(seq: list, value) -> None:
    if value not in seq:
        seq.append(value)


class _Spans:
    """Spans of the text already read, none overlapping another: whether a new one overlaps is
    a binary search (a message of thousands of "$1" stays linear-logarithmic, not quadratic)."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []

    def overlaps(self, start: int, end: int) -> bool:
        # Held spans are disjoint, so sorted by start they are sorted by end too: of those
        # starting before `end`, the last ends latest.
        i = bisect.bisect_left(self._starts, end)
        return i > 0 and self._ends[i - 1] > start

    def add(self, start: int, end: int) -> None:
        i = bisect.bisect_left(self._starts, start)
        self._starts.insert(i, start)
        self._ends.insert(i, end)


def extract_amounts(text: str, *, asked: bool = False) -> list[Amount]:
    """The amounts of money in `text`; `asked`: the text answers a question for the amount."""
    found: list[tuple[int, Amount]] = []
    taken = _Spans()
    patterns = (_AMOUNT_SYMBOL, _AMOUNT_CODE_FIRST, _AMOUNT_CODE, _AMOUNT_AFTER_WORD, _AMOUNT_BEFORE_WORD, _AMOUNT_PLURAL)
    for pattern in (*patterns, _ASKED_CENTS) if asked else patterns:
        for m in pattern.finditer(text):
            start, end = m.span("num")
            if taken.overlaps(start, end):
                continue
            if pattern is _ASKED_CENTS and (
                _DAY_DOT_MONTH.fullmatch(m.group("num")) or _VERSION_BEFORE.search(text, 0, start)
            ):
                continue
            if m.groupdict().get("sym"):
                currency = _SYMBOLS[m.group("sym")]
            elif m.groupdict().get("code"):
                currency = _CODE_TO_CURRENCY[m.group("code").lower()]
            else:
                currency = "USD"  # written bare: the desk's own (the demo desk bills in dollars)
            taken.add(start, end)
            found.append((start, Amount(round(_number(m.group("num")), 2), currency)))
    return list(dict.fromkeys(amount for _, amount in sorted(found, key=lambda pair: pair[0])))


def extract_dates(text: str) -> list[Date]:
    found: list[tuple[int, Date]] = []
    taken = _Spans()

    def keep(start: int, end: int, date: Date) -> None:
        if taken.overlaps(start, end):
            return
        if _valid(date.month, date.day):
            taken.add(start, end)
            found.append((start, date))

    for m in _ISO_DATE.finditer(text):
        keep(m.start(), m.end(), Date(int(m.group("month")), int(m.group("day")), int(m.group("year"))))
    for m in _SLASH_DATE.finditer(text):
        a, b = int(m.group("a")), int(m.group("b"))
        month, day = (a, b) if a <= 12 else (b, a)
        keep(m.start(), m.end(), Date(month, day, int(m.group("year"))))
    for pattern in (_SHORT_SLASH_DATE, _SHORT_SLASH_DAY_FIRST):
        for m in pattern.finditer(text):
            keep(m.start(), m.end(), Date(int(m.group("month")), int(m.group("day"))))
    for pattern in (_MONTH_THE_DAY_WORD, _DAY_WORD_OF_MONTH):
        for m in pattern.finditer(text):
            year = int(m.group("year")) if m.group("year") else None
            # (One of the two is always there: the month-first pattern has only the first.)
            said = m.group("day_word") or m.group("day_word_of")
            keep(m.start(), m.end(), Date(MONTHS[m.group("month").lower()], _day_in_words(said), year))
    for pattern in (_MONTH_DAY, _DAY_MONTH):
        for m in pattern.finditer(text):
            month_word = m.group("month").lower()
            # "may" is also a verb: only take it when a day number sits right beside it.
            year = int(m.group("year")) if m.group("year") else None
            keep(m.start(), m.end(), Date(MONTHS[month_word], int(m.group("day")), year))
    # The day a list shares its month with: the other day was read above, as a date of its own.
    for pattern, listed in ((_MONTH_DAYS, "day"), (_DAYS_MONTH, "first")):
        for m in pattern.finditer(text):
            year = int(m.group("year")) if m.group("year") else None
            keep(*m.span(listed), Date(MONTHS[m.group("month").lower()], int(m.group(listed)), year))
    return list(dict.fromkeys(date for _, date in sorted(found, key=lambda pair: pair[0])))


# A day named from the day it is said on: "today", "yesterday", "the day before yesterday",
# "3 days ago", "this morning" (dates: what rules read well). Counted from a calendar the caller
# gives (the business data's today), never from the machine's clock.
_WORD_NUMBER = {"one": 1, "a": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
# A day of a month named from today's ("the 15th this month", "the 7th of last month"): the day is
# said, its month is the calendar's (this one, the one before or after it).
_DAY_OF_A_MONTH_FROM_TODAY = (
    r"(?:\bthe\s+(?P<nth>\d{1,2})(?:st|nd|rd|th)?|\b(?P<nth_bare>\d{1,2})(?:st|nd|rd|th))"
    r"\s+(?:of\s+)?(?P<month_from_today>this|last|next)\s+month\b"
)
# A day of the week gone by ("last tuesday's charge", "on friday", "monday's payment"): the latest
# such day before today. Said with "last", "past" or "on" before it, or owning something after it,
# so "I work mondays" names no day.
_WEEKDAY_NAMES = tuple(name.lower() for name in calendar.day_name)
_WEEKDAY_RE = "|".join(_WEEKDAY_NAMES)
_WEEKDAY_GONE_BY = (
    rf"\b(?:(?:last|past|on)\s+(?P<weekday>{_WEEKDAY_RE})(?:['\u2019]?s)?"
    rf"|(?P<weekday_owns>{_WEEKDAY_RE})['\u2019]s|(?P<weekday_gone>{_WEEKDAY_RE})\s+(?:just\s+)?gone)\b"
)
# A day of the month with no month said ("the one on the 16th", "what's the payment on the 24th
# for?"): the calendar's month, as "the 16th this month" would say. Only after "on", "from", "for"
# or "dated", so "the 2nd one" still points at a list, and never with a month after it (read as a
# date above: "on the 3rd of march").
_DAY_OF_THIS_MONTH = (
    r"\b(?:on|from|for|dated)\s+the\s+(?P<bare_day>\d{1,2})(?:st|nd|rd|th)\b"
    # A second day listed with it ("on the 10th and the 11th"): the same month's.
    r"(?:\s*(?:,|&|\band\b|\bor\b)\s*(?:(?:on|then)\s+)?the\s+(?P<bare_day_listed>\d{1,2})(?:st|nd|rd|th)\b)?"
    rf"(?!\s+(?:of\s+)?(?:{_MONTH_RE}|this|last|next)\b)"
)
# Days spoken of together, counted from today (money-18): "last weekend" (the Saturday and Sunday
# of the latest weekend gone by), "earlier this week" (this week's Monday to yesterday), "this
# week" (to today), "last week" (the week before's Monday to Sunday), "at the start of the month"
# (its first week: this month's, or last month's when said so).
_DAYS_FROM_TODAY = (
    r"\b(?P<weekend_before>(?:the\s+)?weekend\s+before\s+last)\b"
    r"|\b(?P<weekend>last\s+weekend|(?:the\s+)?weekend\s+(?:just\s+)?gone)\b"
    r"|\b(?P<earlier_week>earlier\s+this\s+week|(?:at\s+)?the\s+start\s+of\s+(?:this|the)\s+week)\b"
    r"|\b(?P<this_week>this\s+week)\b|\b(?P<last_week>last\s+week|the\s+week\s+before\s+last)\b(?!\s*end)"
    r"|\b(?P<month_start>(?:start|beginning|first\s+week)\s+of\s+(?:the|this|(?P<start_last>last))\s+month"
    r"|early\s+(?:this|(?P<early_last>last))\s+month)\b"
)
# A day counted back from today by a number of days or weeks ("10 days ago", "two weeks back", "a
# fortnight ago", "the day before yesterday").
_DAYS_BACK = (
    r"\b(?P<before>(?:the )?day before yesterday)\b"
    r"|\b(?P<n>\d{1,2}|one|a|two|three|four|five|six|seven) days? (?:ago|back)\b"
    r"|\b(?P<weeks>\d|one|a|two|three|four) weeks? (?:ago|back)\b"
    r"|\b(?P<fortnight>a|one) fortnight (?:ago|back)\b"
)
_RELATIVE_DAY = LazyPattern(
    r"\b(?P<yesterday>yesterday(?:'?s)?|yday)\b"
    r"|\b(?P<today>today(?:'?s)?|tonight|this (?:morning|afternoon|evening))\b"
    rf"|{_DAYS_BACK}|{_DAYS_FROM_TODAY}|{_DAY_OF_A_MONTH_FROM_TODAY}|{_WEEKDAY_GONE_BY}|{_DAY_OF_THIS_MONTH}",
    re.IGNORECASE,
)
# The days named from today that only a charge's day is named by (not "today", which a change is
# asked for too: "cancel it today"; nor "yesterday", which tells of anything that happened).
_MONTH_DAY_FROM_TODAY = LazyPattern(
    rf"{_DAYS_BACK}|{_DAYS_FROM_TODAY}|{_DAY_OF_A_MONTH_FROM_TODAY}|{_WEEKDAY_GONE_BY}|{_DAY_OF_THIS_MONTH}", re.IGNORECASE
)
_MONTHS_FROM_TODAY = {"last": -1, "this": 0, "next": 1}


def _day_of_month_from(today: date, day: int, months_on: int) -> Date | None:
    """Day `day` of the month `months_on` months from `today`'s; None when that month has no such day."""
    year, month = divmod(today.year * 12 + today.month - 1 + months_on, 12)
    if not 1 <= day <= calendar.monthrange(year, month + 1)[1]:
        return None
    return Date(month + 1, day, year)


@kept_by_text(256)
def names_relative_day(text: str) -> bool:
    """Whether `text` names a day from today ("yesterday", "2 days ago", "the 15th this month")."""
    return _RELATIVE_DAY.search(text) is not None


@kept_by_text(256)
def counts_a_day_from_today(text: str) -> bool:
    """Whether `text` names a day counted from today in words that say so ("yesterday", "last
    tuesday", "the 15th this month"): a day with no month at all ("the one on the 3rd") is not
    one. It is read in the month the conversation spoke of when there is one (a repair of a
    March charge's day, `view.dated_days`), and in the calendar's month only when there is none."""
    return any(m.group("bare_day") is None for m in _RELATIVE_DAY.finditer(text))


def relative_days(text: str, today: date) -> list[Date]:
    """The days `text` names from `today` ("yesterday" is the day before it, "the 15th this
    month" and "the one on the 15th" the 15th of its month, "last tuesday" the latest Tuesday
    before it), in order."""
    found: list[Date] = []
    for m in _RELATIVE_DAY.finditer(text):
        spanned = _days_spanned(m, today)
        if spanned is not None:
            for day in spanned:
                _add_unique(found, Date(day.month, day.day, day.year))
            continue
        if m.group("month_from_today") or m.group("bare_day"):
            months_on = _MONTHS_FROM_TODAY[m.group("month_from_today").lower()] if m.group("month_from_today") else 0
            days = [m.group("nth") or m.group("nth_bare") or m.group("bare_day"), m.group("bare_day_listed")]
            for named in (_day_of_month_from(today, int(day), months_on) for day in days if day):
                if named is not None:
                    _add_unique(found, named)
            continue
        weekday = m.group("weekday") or m.group("weekday_owns") or m.group("weekday_gone")
        if weekday:
            # The latest one before today: said on a Friday, "last friday" is a week back.
            back = (today.weekday() - _WEEKDAY_NAMES.index(weekday.lower()) - 1) % 7 + 1
        elif m.group("before"):
            back = 2
        elif m.group("yesterday"):
            back = 1
        elif m.group("today"):
            back = 0
        elif m.group("fortnight"):
            back = 14
        elif m.group("weeks"):
            n = m.group("weeks").lower()
            back = 7 * (int(n) if n.isdigit() else _WORD_NUMBER[n])
        else:
            n = m.group("n").lower()
            back = int(n) if n.isdigit() else _WORD_NUMBER[n]
        day = today - timedelta(days=back)
        _add_unique(found, Date(day.month, day.day, day.year))
    return found


def _days_spanned(m: re.Match[str], today: date) -> list[date] | None:
    """The days a `_DAYS_FROM_TODAY` match names, none after today; None for a single day's match."""
    monday = today - timedelta(days=today.weekday())
    if m.group("weekend") or m.group("weekend_before"):
        # The latest Sunday before today (on a Sunday, the weekend before this one); a week
        # earlier for "the weekend before last".
        sunday = today - timedelta(days=((today.weekday() - 6) % 7 or 7) + (7 if m.group("weekend_before") else 0))
        return [sunday - timedelta(days=1), sunday]
    if m.group("earlier_week") or m.group("this_week"):
        last = today - timedelta(days=1) if m.group("earlier_week") else today
        return [monday + timedelta(days=n) for n in range((last - monday).days + 1)]
    if m.group("last_week"):
        return [monday - timedelta(days=7 - n) for n in range(7)]
    if m.group("month_start"):
        first = today.replace(day=1)
        if m.group("start_last") or m.group("early_last"):
            first = (first - timedelta(days=1)).replace(day=1)
        return [d for d in (first + timedelta(days=n) for n in range(7)) if d <= today]
    return None


def _ids(pattern: LazyPattern, prefix: str, text: str) -> list[str]:
    out: dict[str, None] = {}  # in order, without repeats, in linear time
    for m in pattern.finditer(text):
        num = m.groupdict().get("num") or m.groupdict().get("num2")
        if num:
            out.setdefault(f"{prefix}-{num}")
    return list(out)


def emails_in(text: str) -> list[str]:
    """The email addresses in `text`, lower-cased, in order, without repeats."""
    return list(dict.fromkeys(m.group("address").lower() for m in _EMAIL.finditer(text)))


@kept_by_text(256)
def extract(text: str, *, amount_asked: bool = False) -> Slots:
    """Every slot found in `text`, each list in order of appearance, without repeats.
    `amount_asked`: the text answers an agent that asked for the amount."""
    emails = emails_in(text)
    # An email's digits are not amounts or ids: blank emails out before the other passes.
    rest = _EMAIL.sub(" ", text)
    return Slots(
        amounts=extract_amounts(without_dates(rest) if amount_asked else rest, asked=amount_asked),
        dates=extract_dates(rest),
        emails=emails,
        invoice_ids=_ids(_INVOICE, "INV", rest),
        order_ids=_ids(_ORDER, "ORD", rest),
        customer_ids=_ids(CUSTOMER_ID, "CUS", rest),
    )


# A day of the month named without its month ("the one on the 3rd", "from the 16th", "on the 24th
# and 25th"): an ordinal after a preposition or "the", so "3rd time" or "the 2nd try" is no day.
_BARE_DAY = LazyPattern(
    r"\b(?:the|on|from|of|dated)\s+[0-3]?\d(?:st|nd|rd|th)\b"
    # the days said with it in one list ("on the 24th and 25th", "the 10th, 11th"): grammar, a
    # coordination, each day an ordinal of its own (issue 38, offers-7: the 25th went unread, and
    # the refund went to the 24th's charge, the original of the pair, not the duplicate)
    r"(?:\s*(?:,\s*and|,|and|&|\+|or)\s*(?:the\s+)?[0-3]?\d(?:st|nd|rd|th)\b)*"
    r"(?!\s+(?:time|try|attempt))",
    re.I,
)
_ORDINAL_DAY = LazyPattern(r"([0-3]?\d)(?:st|nd|rd|th)\b", re.I)


@kept_by_text(256)
def bare_days(text: str) -> frozenset[int]:
    """Every day of the month `text` names without its month, in lists too ("the 24th and 25th")."""
    untimed = without_dates(text)
    return frozenset(int(d) for m in _BARE_DAY.finditer(untimed) for d in _ORDINAL_DAY.findall(m.group(0)) if 1 <= int(d) <= 31)


# A self-repair: the speaker takes back what they just said and says it again ("sorry, I meant the
# 3rd", "no wait, the march one", "actually it's the work address", "wrong one", "typo, it's ...").
# Its markers are a closed class of the language, like months and ordinals: a rule reads them, and
# what the message names then replaces what was said of the same kind (an added fact keeps both).
_REPAIR = LazyPattern(
    r"\b(?:i\s+meant|i\s+mean|meant\s+to\s+(?:say|write|type)|no\s+wait|wait\s+no|actually|correction|my\s+(?:bad|mistake)"
    r"|typo|scratch\s+that|wrong\s+(?:one|date|day|month|email|address|account|charge|amount))\b",
    re.I,
)


@kept_by_text(256)
def repairs(text: str) -> bool:
    """Whether `text` corrects what the customer said before ("sorry, I meant the 3rd")."""
    return _REPAIR.search(text) is not None


# Four digits (a card's last four) told right after a repair's "not": "it's 3380, not 3308", "not
# 7721 but 7712". Those are the digits taken back; the others told are the ones meant.
_FOUR_DIGITS = LazyPattern(r"(?<![\d.,/-])\b\d{4}\b(?![.,/-]?\d)")
_TAKEN_BACK = LazyPattern(r"\b(?:not|instead\s+of|rather\s+than|isn'?t|wasn'?t)\s+(?:the\s+)?$", re.I)


def four_digits_meant(text: str) -> str | None:
    """The four digits `text` tells as the right ones, those not taken back after "not" or
    "instead of" ("sorry typo, its 7712 not 7721" is 7712); None unless exactly one such number."""
    meant = {m.group() for m in _FOUR_DIGITS.finditer(text) if not _TAKEN_BACK.search(text[max(0, m.start() - 20):m.start()])}
    return meant.pop() if len(meant) == 1 else None


# (A full month's name may carry a possessive, its apostrophe typed or not: "januarys invoice",
# "february's bill"; an abbreviation may not: "mars", "jans" are other words.)
_FULL_MONTH_RE = "|".join(sorted((m for m in MONTHS if len(m) > 3), key=len, reverse=True))
_MONTH_WORD = LazyPattern(rf"\b({_MONTH_RE})\b|\b({_FULL_MONTH_RE})['\u2019]?s\b", re.IGNORECASE)


@kept_by_text(256)
def names_a_day_or_month(text: str) -> bool:
    """Whether a text names a charge's day or a month ("the 24th", "in february", "the 7th of this
    month"): asked by the
    desk intents' guards of every step for the same texts, so found once per text (its dates
    are `extract`'s, kept for the same text: one extraction serves both)."""
    return bool(extract(text).dates or months_named(text) or _MONTH_DAY_FROM_TODAY.search(text))


@kept_by_text(256)  # (shared by every reader of the same text: read, never changed)
def months_named(text: str) -> list[int]:
    """The months a text names, dated or not ("my invoice for february", "the March 1st one"),
    in order, without repeats. "may" counts only written "May": it is also a verb."""
    found: list[int] = []
    for m in _MONTH_WORD.finditer(text):
        word = m.group(1) or m.group(2)
        if word.lower() == "may" and word != "May":
            continue
        _add_unique(found, MONTHS[word.lower()])
    return found


@kept_by_text(256)
def without_dates(text: str) -> str:
    """`text` with its dates blanked out, so "March 3rd" is not read as "the third one"."""
    for pattern in (_ISO_DATE, _SLASH_DATE, _SHORT_SLASH_DATE, _MONTH_THE_DAY_WORD, _DAY_WORD_OF_MONTH, _MONTH_DAY, _DAY_MONTH):
        text = pattern.sub(" ", text)
    return text


# A place in an ordered list, named instead of the item (issue 38): "the middle plan", "the one in
# between", "the second cheapest", "2nd most expensive", "the second one from the top". Ordinals
# and the two ends of an order are a closed set of words, like months: a rule reads them; which
# item sits at the place is read from the list itself (the price list's prices, say).
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_ORDINAL = r"(?P<ord>first|1st|second|2nd|third|3rd|fourth|4th)"
_LOW_END = r"cheapest|lowest|smallest|least expensive|most basic|bottom"
_HIGH_END = r"most expensive|priciest|highest|biggest|largest|top"
_END = rf"(?:(?P<low>{_LOW_END})|(?P<high>{_HIGH_END}))"
# ("mid march", "the middle of the month": a time of a month or a week, not a place in a list: a
# duplicate told as "two payments mid march, one has to go" named no plan; h32.)
_PLACE_MIDDLE = LazyPattern(
    r"\b(?:middle|mid(?:[- ]?(?:priced|price|range|level|tier|size|sized))?|in[- ]?between|intermediate)\b"
    r"(?![- ]?(?:of\s{1,3})?(?:the\s{1,3}|this\s{1,3}|last\s{1,3})?(?:(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]{0,6}|month|week|year)\b)",
    re.I,
)
_PLACE_FROM_END = LazyPattern(rf"\b{_ORDINAL}[- ](?:{_END}|(?:one|plan|tier|option)?\s*from the (?P<end>top|bottom))\b", re.I)
# A place is definite ("the second one", "2nd one"): after "a" or "another" the ordinal counts one
# more of the same ("took a second one on march 11": the charge again, no item of a list).
_PLACE_IN_LIST = LazyPattern(rf"(?<!\ba\s)(?<!\banother\s)\b{_ORDINAL}\s+(?:one|plan|tier|option|package|level)s?\b", re.I)
# The list's own end, counted the other way: "the last one", "the final option", "the second to
# last plan" (an ordinal, a closed class of the grammar like "first" and "second"; a noun of the
# list follows, so "last month" is a date's word, not a place).
_PLACE_LAST = LazyPattern(
    r"\b(?P<second>second[- ](?:to[- ])?)?(?:last|final)\s+(?:one|plan|tier|option|package|level)s?\b", re.I
)


@dataclass(frozen=True)
class Place:
    """Where in an ordered list: `rank` counted from `end` ("low": the cheapest or the first
    listed; "high": the dearest; "middle": the one between the others)."""

    rank: int
    end: str
    # Counted in the order a list was shown ("the second one"), not by an end or a middle its
    # words name: any list's pointer, so what list it points into is the reply's to say.
    by_order: bool = False

    def pick(self, ordered: list) -> object | None:
        """The item at this place of `ordered` (listed from low to high); None when the place
        is not in it, or the list has no one middle."""
        if self.end == "middle":
            return ordered[len(ordered) // 2] if len(ordered) % 2 == 1 and len(ordered) > 1 else None
        if not 1 <= self.rank <= len(ordered):
            return None
        return ordered[self.rank - 1] if self.end == "low" else ordered[-self.rank]


def place_named(text: str) -> Place | None:
    """The place in an ordered list the words name instead of an item ("the middle plan", "the
    second cheapest", "2nd from the top"); None when they name none. An end alone ("the
    cheapest") is no place here: the plan change reads it against the customer's own plan."""
    m = _PLACE_FROM_END.search(text)
    if m:
        high = bool(m.group("high")) or (m.group("end") or "").lower() == "top"
        return Place(_ORDINALS[m.group("ord").lower()], "high" if high else "low")
    if _PLACE_MIDDLE.search(text):
        return Place(0, "middle")
    m = _PLACE_IN_LIST.search(text)
    if m:
        return Place(_ORDINALS[m.group("ord").lower()], "low", by_order=True)
    m = _PLACE_LAST.search(text)
    if m:
        return Place(2 if m.group("second") else 1, "high", by_order=True)
    return None
