"""Security matters on the config desk and resets asked in slang (issue 38, family sec17): a person
asked for beside a long trouble, a login alert the customer owns, reset emails nobody asked for, a
company impersonated while the technical agent holds the conversation, a reset link asked as
"hook me up w a reset link"."""

from __future__ import annotations

from supportdesk.models.offline.skills.technical import without_denied_trouble
from supportdesk.readers import gates
from supportdesk.tools.technical import _reset_asked_for
from tests.money_turns import MONEY, passes

CONFIG = "evals/config-agent.toml"
NOT_TOOLS = [*MONEY, "send_password_reset"]


def test_a_person_asked_in_a_clause_of_its_own_beside_a_long_trouble():
    """Read whole, the trouble's words drown the ask; read clause by clause, it is heard."""
    text = "whole projects keep getting removed from our workspace as we watch and none of us is doing it. put a human on this immediately"
    assert gates.reads_person_asked(text)
    # answers to an offer are still no person asked for, whole or by clause
    assert not gates.reads_person_asked("yes please, now")
    assert not gates.reads_person_asked("no, not now")
    # a letter's salutation is a greeting, not a person asked for (moves-held-5)
    assert not gates.reads_person_asked("Dear support, my card was debited twice this month. Regards, Marco")


def test_a_sign_in_the_customer_owns_is_set_aside_from_the_search():
    query = "the new-login email was just me on my new tablet, no worries. but the app crashes there now"
    assert without_denied_trouble(query) == "but the app crashes there now"
    # what the customer did themself, told as the matter, stays: it is what they ask about
    kept = "it was me who deleted the folder, can i get it back?"
    assert without_denied_trouble(kept) == kept


def test_reset_emails_nobody_asked_for_tell_someone_else_is_trying_the_account():
    """Trained on evals/access-lines-17-tune.jsonl; none of these lines is in it (before: 0.42 and
    0.00, read as no one's access)."""
    assert gates.tells_access("2 password reset emails arrived overnight and i requested neither of them, should i worry?")
    assert gates.tells_access("got several reset password emails this morning, i didn't ask for any")
    assert not gates.tells_access("the new-login email was just me on my new tablet, but the app crashes there now")


def test_a_reset_link_asked_in_slang_is_asked_for():
    """"hook" leads the articles to integrations; the reset named and its article among the
    answers make it the request for the link. Without "reset", a new password is no such request."""
    assert _reset_asked_for("CUS-1020 locked outta my acct, hook me up with a reset link")
    assert not _reset_asked_for("i need a new password")
    assert not _reset_asked_for("please help me change my password")


async def test_slang_reset_with_an_id_is_sent_without_asking_first():
    await passes({"name": "t", "turns": [{"customer": "CUS-1020 locked outta my acct, hook me up with a reset link", "expect": {
        "tools": [{"name": "send_password_reset", "arguments": {"customer": "CUS-1020"}}], "reply_not": ["shall i"], "not_tools": MONEY}}],
        "expect": {"tool_counts": {"send_password_reset": 1}}})


async def test_an_impersonating_email_while_technical_holds_it_goes_to_security():
    """The answer reader hears "confirm my password" as a yes; someone else's access told is no
    answer, and the security agent (a peer of technical's) is whose it is."""
    await passes({"name": "t", "turns": [
        {"customer": "the desktop app freezes every time i open a big folder", "expect": {"agent": "technical", "not_tools": NOT_TOOLS}},
        {"customer": "btw a mail posing as acme wanted me to confirm my password on their page", "expect": {
            "handoffs": ["technical>triage", "triage>security"], "agent": "security", "not_tools": NOT_TOOLS}},
    ]}, CONFIG)


async def test_a_phishing_link_leaning_little_to_security_while_technical_holds_it_goes_there():
    """The words lean to security under the switch's bar; the access reader is sure."""
    await passes({"name": "t", "turns": [
        {"customer": "sync stopped on my laptop yesterday", "expect": {"agent": "technical", "not_tools": NOT_TOOLS}},
        {"customer": "also got an email claiming to be from acme asking me to log in through their link to keep my account, is that phishing?",
         "expect": {"handoffs": ["technical>triage", "triage>security"], "agent": "security", "not_tools": NOT_TOOLS}},
    ]}, CONFIG)
