"""A month named after an invoice is that month's invoice (issue 38, held-24's kind: kept facts).
Each test fails with its guard removed: the price list's read of a follow-up skipped when a month is
named (skills/money/intents.py), and a question about one period heard as no duplicate
(skills/money/heard.py `_one_period_asked`)."""

from __future__ import annotations

from tests.money_turns import MONEY, conversation_passes

MARCH_INVOICE = {"customer": "umar.cohen20@example.com whats the number on my march invoice",
                 "expect": {"agent": "billing", "reply": ["INV-5060"], "not_tools": MONEY}}


async def test_a_month_asked_after_an_invoice_is_its_invoice_not_the_price_list():
    await conversation_passes([
        MARCH_INVOICE,
        {"customer": "and january's?", "expect": {"reply": ["INV-5058"], "reply_not": ["a year", "change your plan"], "not_tools": MONEY}},
    ])


async def test_the_one_for_a_month_is_its_invoice_not_a_duplicate_refused():
    await conversation_passes([
        MARCH_INVOICE,
        {"customer": "ok and the one for january?",
         "expect": {"reply": ["INV-5058"], "reply_not": ["can't refund", "duplicate"], "not_tools": MONEY}},
    ])
