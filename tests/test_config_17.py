"""The config desk's security agent, family config-17 (issue 38): a denial is not the matter, an
address dressed up as the desk's, a token no one on the team made, and the hand-back when the
security agent is torn with a peer on a matter that is not its own."""

from __future__ import annotations

from supportdesk.config import load_desk
from supportdesk.models.offline.classifier import denials
from supportdesk.models.offline.router import Router, dressed_up_address
from supportdesk.models.offline.specialist import skills_of
from tests.money_turns import MONEY, passes

CONFIG = "evals/config-agent.toml"
NOT_TOOLS = [*MONEY, "send_password_reset"]


def _entry_router(config: str) -> Router:
    desk = load_desk(config)
    entry = desk.agents[desk.desk.entry]
    return Router([desk.agents[n] for n in entry.handoffs if skills_of(desk.agents[n])], use_disk_cache=False, desk_name=desk.desk.name)


def test_a_clause_denying_the_security_matter_is_read_apart():
    """Read whole, the denied scam email's words pulled the how-to after it to security (0.75)."""
    router = _entry_router(CONFIG)
    assert router.route("this isn't about a scam email. your emails telling me i was mentioned stopped arriving weeks ago").agent == "technical"
    # a message that is only a denial is read whole; a disowning is no denial
    assert router.without_denials("nobody hacked me") == "nobody hacked me"
    assert router.route("there is a login from brazil on my account, it was not me").agent == "security"


def test_a_denial_of_anything_else_keeps_its_words():
    """Only a clause denying the access owner's matter is left out: a trouble told with "no" keeps
    its words, and the shipped desk (no agent taught little) reads every message whole."""
    shipped = _entry_router("agents.toml")
    text = "No transactions are being accepted, what's wrong with my card?"
    assert shipped.without_denials(text) == text
    assert shipped.route(text).agent == "technical"
    assert _entry_router(CONFIG).without_denials(text) == text


def test_the_denial_reading_reads_these_denials_and_this_disowning():
    assert "not_hacked" in denials("nothing's been hacked, i just want to change the pin")[0]
    assert "not_scam" in denials("this isn't about a scam email")[0]
    words, disowns = denials("there's an api token on our account that no one on the team made")
    assert disowns and not any(w.startswith("not_") for w in words)
    # the plain negated subject still denies
    assert "not_hacked" in denials("nobody hacked me")[0] and not denials("nobody hacked me")[1]


def test_an_address_dressed_up_as_the_desks_is_read_by_rule():
    name = "Acme Cloud support"
    assert dressed_up_address("pay at acme-billing-help.xyz. is that you??", name)
    assert dressed_up_address("renew at www.acme-storage-renew.top", name)
    # the desk's own addresses, its name's words alone, and emails are not
    assert not dressed_up_address("sign in at app.acmecloud.example", name)
    assert not dressed_up_address("see acme.com or www.acme-cloud.com", name)
    assert not dressed_up_address("write to dana@acme-help.com", name)
    assert not dressed_up_address("our webhook posts to hooks.my-company.com", name)
    router = _entry_router(CONFIG)
    assert router.route("got a text saying my storage is full and i must pay at acme-storage-renew.top, is this real?").agent == "security"


async def test_security_torn_with_a_peer_on_a_matter_not_its_own_hands_back():
    """No example of either agent says "quits" or "launches": the router is torn (technical 0.50,
    security 0.50), and the security agent kept it and offered its reset."""
    await passes({"name": "t", "turns": [
        {"customer": "my acme password stopped working and the recovery email was changed, not by me", "expect": {"agent": "security", "not_tools": NOT_TOOLS}},
        {"customer": "separate thing, acme on my ipad quits the second it launches", "expect": {
            "handoffs": ["security>triage", "triage>technical"], "agent": "technical", "not_tools": NOT_TOOLS}},
    ]}, CONFIG)


async def test_security_keeps_a_follow_up_about_its_own_matter():
    """The hand-back is for a matter not the security agent's: someone else's access told next stays."""
    await passes({"name": "t", "turns": [
        {"customer": "my acme password stopped working and the recovery email was changed, not by me", "expect": {"agent": "security", "not_tools": NOT_TOOLS}},
        {"customer": "and now there is a login from a laptop in another country too", "expect": {"agent": "security", "handoffs": [], "not_tools": NOT_TOOLS}},
    ]}, CONFIG)
