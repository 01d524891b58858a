"""What was said stays said, for money (issue 38 item 3, evals/money-6-*): a second matter that
waited its turn is answered for what it named; the account follows the email the customer gave
last; a reply pointing back at what the desk listed reads that list; an "ok" with a question is no
yes to an offer that was only stated; a change the agent holds no tool for goes to the agent that
does, with the account kept. Each runs the real desk on a fresh demo database."""

from __future__ import annotations

from tests.money_turns import converse
from tests.test_offline_skills import ACTIONS

MONEY = ACTIONS + ["update_payment_method"]


async def test_a_waiting_question_about_a_month_is_answered_for_that_month():
    # Handed to billing on "thanks, that fixed it": the february question is read again, not
    # the thanks (every charge on the account was listed, and the march duplicate offered).
    assert not await converse(
        ("my files wont sync on my phone, and also what was the charge in february for? dana@example.com", {"agent": "technical"}),
        ("thanks, that fixed it", {"agent": "billing", "reply": ["February 1, 2026"],
                                   "reply_not": ["January 1, 2026", "March 3, 2026"], "not_tools": MONEY}),
    )


async def test_thanks_in_words_of_its_own_settles_the_first_matter_and_hands_over_the_next():
    assert not await converse(
        ("sync not work on my computer. and also what is the charge in march? jonas.klein9@example.com", {"agent": "technical"}),
        ("good, it sync now, thank you", {"agent": "billing", "reply": ["March 21, 2026"], "not_tools": MONEY}),
    )


async def test_thanks_with_an_email_in_it_is_no_thanks_for_a_fix():
    # "ok thanks, its <email>" answers the email question: the card named before is offered.
    assert not await converse(
        ("pls swap the card you charge to amex ending 3005", {"reply": ["email"]}),
        ("ok thanks, its farid.patel5@example.com", {"offers": ["update_payment_method"], "reply_not": ["you're welcome"]}),
    )


async def test_the_account_follows_the_email_given_last():
    assert not await converse(
        ("whens my next payment? dana@example.com", {"reply": ["$29.99"]}),
        ("oops wrong account, i meant marco@example.com", {"agent": "billing", "reply": ["$129.99"], "reply_not": ["email address"]}),
    )


async def test_an_ok_with_a_question_after_a_stated_offer_is_no_yes():
    # The refund offered on the senior's behalf (money-13): "ok and why is it so much" asks why,
    # runs nothing and puts no refund to a senior colleague.
    assert not await converse(
        ("can u explain the charge of 3 march? marco@example.com", {"agent": "billing", "offers": ["refund_charge"]}),
        ("ok and why is it so much", {"agent": "billing", "reply": ["$129.99"], "reply_not": ["senior colleague", "shall i"],
                                      "not_tools": MONEY}),
    )


async def test_a_reply_pointing_back_reads_what_the_desk_last_listed():
    assert not await converse(
        ("what did u charge me in march? marco@example.com", {"reply": ["March 1, 2026", "March 3, 2026"]}),
        ("the first one, what was it for?", {"agent": "billing", "reply": ["March 1, 2026"], "reply_not": ["March 3, 2026"],
                                             "not_tools": MONEY}),
    )


async def test_a_question_pointing_at_a_listed_charge_is_answered_not_offered():
    assert not await converse(
        ("charges in march?? dana@example.com", {"offers": ["refund_charge"]}),
        ("the first charge - is that my normal monthly one", {"reply": ["March 1, 2026"], "reply_not": ["shall i refund"],
                                                              "not_tools": MONEY}),
    )


async def test_a_change_the_senior_agent_holds_no_tool_for_goes_to_its_holder_with_the_account_kept():
    assert not await converse(
        ("marco@example.com i need my money back for the double charge in march", {"agent": "senior", "offers": ["refund_charge"]}),
        ("yes", {"tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9008", "amount": 129.99}}]}),
        ("also update my card to visa ending 7777", {"agent": "billing", "offers": ["update_payment_method"],
                                                     "reply_not": ["email address", "which card"], "not_tools": MONEY}),
        ("yes", {"tools": [{"name": "update_payment_method", "arguments": {"customer_id": "CUS-1002", "method": "visa ending 7777"}}]}),
    )


async def test_the_other_charge_after_an_offer_is_the_listed_one_not_offered():
    # "actually the other charge" re-offered the same charge; a yes then refunded it.
    assert not await converse(
        ("i was charged twice in march dana@example.com", {"offers": ["refund_charge"]}),
        ("actually the other charge, not that one", {"offers": ["refund_charge"], "reply": ["March 1, 2026"], "not_tools": MONEY}),
        ("yes", {"tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9003", "amount": 29.99}}]}),
    )


async def test_the_card_had_before_is_the_one_the_change_replaced():
    # "put back the card i had before" answered that the new card was on file; it names the card
    # the change replaced (its result says which), offered, and run only on a yes.
    assert not await converse(
        ("change my card to visa ending 1111 dana@example.com", {"offers": ["update_payment_method"]}),
        ("yes", {"tools": [{"name": "update_payment_method", "arguments": {"customer_id": "CUS-1001", "method": "visa ending 1111"}}]}),
        ("hmm actually put back the card i had before", {"offers": ["update_payment_method"], "reply": ["visa ending 4242"],
                                                         "not_tools": MONEY}),
        ("yes", {"tools": [{"name": "update_payment_method", "arguments": {"customer_id": "CUS-1001", "method": "visa ending 4242"}}]}),
    )
