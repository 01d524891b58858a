"""Who gets the message (issue 38, round 20: the route20 family, evals/route20-*.jsonl).

Each test guards one protection and fails with it removed:
- tries at a thing counted ("tried 4 times already") are no repeat contact, a contact counted or
  told with its when ("i already asked you last week") is one (`cues.REPEAT_CONTACT`);
- an invoice named by its id is billing's: money to the rules (`cues.names_money_literally`),
  billing's skill in triage (`triage._SKILL_BY_CUE`), no fact of who the customer is, asked for as
  much as asked about (`asks.invoice_asked`), and no privacy request (`cues.unknown_ground`);
- a clause that disowns an alarm (owns what was seen, waves a worry off) names no matter for
  the router (`router.without_reassurance`);
- money only in what a received message asks of the customer is no money matter, so the phishing
  goes to the agent for someone else's access (`router._money_only_asked_of_them`).
"""

from __future__ import annotations

from supportdesk.models.offline import cues, router
from supportdesk.models.offline.skills.money import asks
from tests.money_turns import failures, not_run, passes


def test_tries_counted_are_no_repeat_contact():
    for tries in (
        "your id check keeps failing at the face photo part. tried 4 times already, no glasses",
        "the 2fa code keeps getting rejected, tried 5 times now",
        "retried the code 2 times now and it still says wrong",
        "the app asked me for a code 3 times already",
    ):
        assert not cues.REPEAT_CONTACT.search(tries), tries


def test_contacts_counted_or_told_with_their_when_are_a_repeat_contact():
    for contact in (
        "ive explained this THREE times already",
        "I've contacted you 3 times already and I still can't log in",
        "i already asked you last week about the app crashing",
        "wrote to you yesterday about the freezing app",
        "emailed support twice about this",
    ):
        assert cues.REPEAT_CONTACT.search(contact), contact
    assert not cues.REPEAT_CONTACT.search("i already told you my email")  # said in this conversation


def test_an_invoice_id_is_money_and_asked_for_too():
    assert cues.names_money_literally("can you resend INV-4420 to me?")
    assert asks.invoice_asked("pls resend INV-7781, dana@example.com")
    assert not asks.invoice_asked("thanks, dana@example.com")


def test_a_copy_of_a_named_invoice_is_no_privacy_request():
    assert cues.unknown_ground("could you send me a copy of INV-5002 again? dana@example.com") is None


def test_a_reassuring_clause_is_set_aside_for_the_router():
    text = "the new login alert was me on my new laptop, no worries there. what i need is my february invoice"
    assert router.without_reassurance(text) == "what i need is my february invoice"
    asking = "is there an option for 2 factor login? all fine, only asking"
    assert router.without_reassurance(asking) == asking  # all said well stays the router's evidence
    assert router.without_reassurance("the alert was me") == "the alert was me"  # nothing else to place


def test_money_in_a_received_message_ask_is_its_bait():
    assert router._money_only_asked_of_them("i just got an email 'from acme' asking me to reply with my card number and pin")
    assert not router._money_only_asked_of_them("someone has my card number and is paying for things with it")


def _one(text: str, expect: dict) -> dict:
    return {"name": "t", "turns": [{"customer": text, "expect": {**expect, "not_tools": not_run()}}]}


async def test_tries_stay_with_the_technical_agent():
    await passes(_one(
        "your id check keeps failing at the face photo part. tried 4 times already, no glasses, good light. what am i doing wrong",
        {"agent": "technical", "reply": ["Verifying your identity"], "reply_not": ["get in touch again"]},
    ))


async def test_an_unknown_invoice_id_asked_for_is_said_not_found_by_billing():
    await passes(_one("pls resend INV-7781, dana@example.com", {"agent": "billing", "reply": ["INV-7781"]}))
    await passes(_one("can you tell me what INV-9001 is for? ben.martin33@example.com", {"agent": "billing", "reply": ["INV-9001"]}))


async def test_a_known_invoice_copy_is_shown_by_billing():
    await passes(_one("could you send me a copy of INV-5002 again? dana@example.com", {"agent": "billing", "reply": ["INV-5002"]}))


async def test_an_owned_alert_beside_an_invoice_goes_to_billing_on_the_config_desk():
    await passes(_one(
        "the new login alert was me on my new laptop, no worries there. what i need is my february invoice, carmen.rossi28@example.com",
        {"agent": "billing", "reply": ["INV-5083"]},
    ), "evals/config-agent.toml")


async def test_phishing_told_to_billing_goes_on_to_security():
    conversation = {"name": "t", "turns": [
        {"customer": "can i have my january invoice? ben.martin33@example.com", "expect": {"agent": "billing", "not_tools": not_run()}},
        {"customer": "also i just got an email 'from acme' asking me to reply with my card number and pin. is it real?",
         "expect": {"agent": "security", "not_tools": not_run()}},
    ]}
    assert not await failures(conversation, "evals/config-agent.toml")
