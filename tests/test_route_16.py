"""Route-16 (issue 38.4): a config-only agent holding the conversation hands a peer's matter back
when the router is torn between them and the job words are not: security (the tech skill, a dozen
examples) holding a break-in, then "push notifications on my android stopped" (read 51 % security
by the router's words against technical's many examples) goes back to triage for technical."""

from __future__ import annotations

from pathlib import Path

from tests.money_turns import passes

REPO = Path(__file__).resolve().parents[1]


async def test_a_peers_matter_the_router_is_torn_on_goes_to_the_peer_by_job_words():
    convo = {"name": "security holds it, then a phone's notifications stop", "turns": [
        {"customer": "someone got into my account using a browser i never touch", "expect": {"agent": "security"}},
        # (held-14's seen miss, the router's words 51 % security on it)
        {"customer": "other thing, push notifications on my android stopped completely",
         "expect": {"handoffs": ["security>triage", "triage>technical"], "agent": "technical"}},
    ]}
    await passes(convo, "evals/config-agent.toml")


async def test_a_matter_in_the_holders_own_words_stays_with_it():
    """The fallback reads job words only when none of the holder's are in the message: a second
    sign-in the customer never made, told while security holds it, stays with security."""
    convo = {"name": "security holds it, then another strange sign-in", "turns": [
        {"customer": "someone signed in to my account from a laptop that isn't mine", "expect": {"agent": "security"}},
        {"customer": "and now another login i dont recognise, from a phone this time",
         "expect": {"handoffs": [], "agent": "security"}},
    ]}
    await passes(convo, "evals/config-agent.toml")
