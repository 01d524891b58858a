"""Issue 38 item 4: an agent defined only in the desk file is first-class.

Two config-only agents of different domains: the `security` agent of evals/config-agent.toml
(its tools are built-in ones), and a `privacy` agent whose `export_personal_data` tool exists only
in this test. The rules hold for any agent a desk file defines: the router learns from its
examples and description with no other agent's example outranking them, it uses its tools by
their parameters' descriptions, and a matter outside its job goes back to triage.
"""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from supportdesk.commands.evals import evaluate_conversations, read_jsonl

from supportdesk.config import load_desk
from supportdesk.engine.tools import ToolOutput
from supportdesk.items import ToolCall
from supportdesk.models.offline.router import Router, ceded, training_examples
from tests.conftest import REPO
from tests.config_desk import converse, desk_with_agent, handoffs, replies


class ExportArgs(BaseModel):
    customer: str = Field(min_length=1, description="customer id or the account's email address")


PRIVACY = '''
[agents.privacy]
title = "Privacy"
description = "Personal data requests: a copy of everything stored about the customer, who can see their data, data protection (GDPR) requests."
level = 1
instructions = "You handle personal data requests. Look the customer up and export a copy of their personal data."
tools = ["find_customer", "export_personal_data", "request_human"]
handoffs = ["triage"]
examples = [
  "send me a copy of all the personal data you hold about me",
  "I'm making a GDPR subject access request",
  "what personal information do you store about me",
  "I want to know which data you keep on me",
  "who at your company can see my data",
  "under data protection law I want my records",
  "give me an export of the data you have on me",
  "do you share my data with anyone",
]
'''


def privacy_desk():
    exports: list[str] = []

    async def export_personal_data(ctx, args: ExportArgs) -> ToolOutput:
        exports.append(args.customer)
        return ToolOutput({"export": f"EXP-{len(exports):04d}", "customer": args.customer})

    tool = ("export_personal_data", "Export a copy of the personal data stored about a customer.", ExportArgs, export_personal_data)
    config, tools = desk_with_agent("privacy", PRIVACY, tool)
    return config, tools, exports


def test_an_example_the_desk_places_surely_with_a_config_agent_is_its():
    """The technical agent's "I think my account was hacked" is the security agent's ground
    once the desk file defines one: the model taught by every example (that one included) places
    it with security at 0.99, so the example moves to security (security-9: taught to both, its
    words stayed half technical's). "I can't sign in" stays technical's alone (0.80 <
    CEDE_CONFIDENCE), and on the shipped desk nothing changes."""
    desk = load_desk(REPO / "evals" / "config-agent.toml")
    agents = [desk.agents[n] for n in ("billing", "technical", "security")]
    out = ceded(training_examples(agents), use_disk=False)
    for text in ("I think my account was hacked", "someone else logged into my account"):
        assert text in out["security"] and text not in out["technical"], text
    assert "I can't sign in to my account" not in out["security"]
    router = Router(agents, use_disk_cache=False)
    # the ex who knows the password: technical's ("password") before the examples moved
    assert router.route("i think my sister knows my pasword and logs in when im not looking").agent == "security"
    shipped = load_desk(REPO / "agents.toml")
    plain = training_examples([shipped.agents[n] for n in ("billing", "technical")])
    assert ceded(plain, use_disk=False) == plain


async def test_a_second_config_agent_of_another_domain_is_reached_and_uses_its_tool(tmp_path):
    """The privacy agent is routed to from its own examples' ground, fills its tool's parameter
    from a customer id (the parameter takes an id or an email: either one given is enough), and
    hands a billing matter back to triage with no capability list."""
    config, tools, exports = privacy_desk()
    [(first, agent)] = await converse(tmp_path, config, tools, ["under gdpr, what info do you keep on me? i want all of it. CUS-1003"])
    assert handoffs(first) == ["triage>privacy"] and agent == "privacy"
    assert [c.arguments for c in first if isinstance(c, ToolCall) and c.name == "export_personal_data"] == [{"customer": "CUS-1003"}]
    assert exports == ["CUS-1003"] and "need the customer id" not in replies(first)


async def test_a_config_agent_hands_a_matter_outside_its_job_back(tmp_path):
    config, tools, exports = privacy_desk()
    turns = await converse(tmp_path, config, tools, ["what personal data do you store about me? dana@example.com", "also, i was charged twice this month"])
    (_, first_agent), (second, second_agent) = turns
    assert first_agent == "privacy"
    assert handoffs(second) == ["privacy>triage", "triage>billing"] and second_agent == "billing"
    assert "personal data requests" not in replies(second).lower()


async def test_a_config_agent_says_what_its_tool_would_do_when_it_needs_a_detail():
    """Told a problem with no account named, the security agent says what its tool does, in the
    tool's own description's words, and asks for the account; nothing runs, nothing is offered."""
    from supportdesk.commands.evals import evaluate_conversations

    convo = {"name": "t", "turns": [{"customer": "someone is using my account", "expect": {
        "agent": "security", "reply": ["I can email a password reset link to the address on file", "email address"],
        "reply_not": ["I can do that", "never to an address"], "not_tools": ["send_password_reset"]}}]}
    [result] = await evaluate_conversations([convo], config=str(REPO / "evals" / "config-agent.toml"))
    assert result.passed, result.failures


async def test_a_verbs_particle_picks_no_lookup_over_the_agents_action():
    """security-13: "showed up" shared its "up" with find_customer's "look up", so the security
    agent looked the customer up and reported it instead of offering its reset link."""
    from supportdesk.commands.evals import evaluate_conversations

    convo = {"name": "t", "turns": [
        {"customer": "an alert about a sign in from a town i never visited showed up on my acct", "expect": {"agent": "security"}},
        {"customer": "wes.dubois22@example.com", "expect": {"agent": "security", "offers": ["send_password_reset"], "not_tools": ["send_password_reset"]}}]}
    [result] = await evaluate_conversations([convo], config=str(REPO / "evals" / "config-agent.toml"))
    assert result.passed, result.failures


def test_a_config_agent_is_reached_by_its_matter_told_in_words_its_examples_never_use(monkeypatch):
    """An agent taught a handful of examples is smoothed towards the desk's background, not by a
    uniform pseudo-count: a word its examples never say ("phone", "profile", "files") no longer
    counts as surely not its own, so its matter told in other words reaches it, on either desk
    (security on evals/config-agent.toml; privacy beside the shipped agents leans its way more
    than with a uniform pseudo-count); the agents taught hundreds of examples keep their ground
    ("how do i change my password" stays technical's)."""
    from supportdesk.models.offline import classifier

    desk = load_desk(REPO / "evals" / "config-agent.toml")
    security = Router([desk.agents[n] for n in ("billing", "technical", "security")], use_disk_cache=False)
    assert security.route("my profile has a phone number i dont recognise").agent == "security"
    assert security.route("someone nicked my account and now i cant log in").agent == "security"
    assert security.route("how do i change my password").agent == "technical"
    assert security.route("i was charged twice this month").agent == "billing"
    config, _, _ = privacy_desk()
    agents = [config.agents[n] for n in ("billing", "technical", "privacy")]
    asked = "who can see the files in my account at your company"
    privacy = Router(agents, use_disk_cache=False)
    assert privacy.route("the desktop app crashes on startup").agent == "technical"
    monkeypatch.setattr(classifier, "BACKGROUND_MASS", 0.0)
    uniform = Router(agents, use_disk_cache=False)
    assert uniform.route(asked).prediction.shares["privacy"] + 0.1 < privacy.route(asked).prediction.shares["privacy"]


def test_a_thing_named_with_no_is_denied_and_a_how_to_stays_technicals():
    """"no hack or anything" denies the hack (the noun "no" determines, and its concept), not the
    rest of the clause: the how-to after it is the technical agent's, not the security agent's."""
    from supportdesk.lexicon import normalise
    from supportdesk.models.offline.classifier import read_denials

    words, _ = read_denials(normalise("no hack or anything, i want a new password").replace(",", " , ").split())
    assert "not_hack" in words and "hack" not in words and "password" in words and "not_password" not in words
    desk = load_desk(REPO / "evals" / "config-agent.toml")
    router = Router([desk.agents[n] for n in ("billing", "technical", "security")], use_disk_cache=False)
    assert router.route("nothing's wrong, no hack or anything, i just want to change my password to a new one. how?").agent == "technical"


def test_the_customers_own_state_denied_leaves_the_security_agent_out():
    """config-15: "i'm not hacked" / "i am not compromised" deny the state as "my account is not
    compromised" does (the copula rule knew is/are/was/were only), so a forgotten password told
    beside the denial is the technical agent's."""
    from supportdesk.models.offline.classifier import denials

    for said in ("im not hacked or anything", "i am not compromised"):
        words, _ = denials(said)
        assert "not_hacked_c" in words and "hacked_c" not in words, said
    desk = load_desk(REPO / "evals" / "config-agent.toml")
    router = Router([desk.agents[n] for n in ("billing", "technical", "security")], use_disk_cache=False)
    assert router.route("im not hacked or anything, i just cant remember my password for the desktop app").agent == "technical"


def test_someone_elses_access_in_a_clause_of_its_own_goes_to_its_owner_though_the_whole_reads_as_money():
    """config-15: a phishing email told, then "is that from you?" (a charge's question to the money
    gate): the message as a whole reads as money, but the clause telling the access names none, so
    it reaches the security agent. One clause telling both (a card's number used to pay) stays the
    router's (billing)."""
    from supportdesk.readers import gates

    phishing = "weird email asking me to 'verify my account' within 24h or it gets closed. didnt click anything. is that from you?"
    assert gates.reads_money(phishing) and gates.tells_access(phishing)
    desk = load_desk(REPO / "evals" / "config-agent.toml")
    router = Router([desk.agents[n] for n in ("billing", "technical", "security")], use_disk_cache=False, desk_name=desk.desk.name)
    assert router.route(phishing).agent == "security"
    assert router.access_agent("someone has my card number and is paying for things with it") is None


async def test_a_person_asked_for_while_the_security_agent_holds_it_is_brought_by_it():
    """config-15: "can a human from your team look at this asap?" names no phrase cues.HUMAN knows and
    "team" leans to the Team plan: the security agent handed it back and billing listed the plans.
    A request for what its person tool brings (generic's reading of the tool's own words) is no
    new topic: the holder calls request_human."""
    from supportdesk.commands.evals import evaluate_conversations

    convo = {"name": "t", "turns": [
        {"customer": "someone is inside my account changing my settings, it wasnt me. dana@example.com", "expect": {"agent": "security"}},
        {"customer": "can a human from your team look at this asap?",
         "expect": {"agent": "security", "handoffs": [], "tools": [{"name": "request_human"}], "not_tools": ["list_plans", "send_password_reset"]}}]}
    [result] = await evaluate_conversations([convo], config=str(REPO / "evals" / "config-agent.toml"))
    assert result.passed, result.failures


_PRIVACY_DESK = REPO / "evals" / "config-agent-2.toml"


@pytest.mark.parametrize("conversation", read_jsonl(REPO / "evals" / "config-15-privacy.jsonl"), ids=lambda c: c["name"])
async def test_a_second_desk_files_privacy_agent_conversation(conversation):
    """config-15: a config-only agent of another domain, on a desk file of its own (shipped tools
    only), is reached, uses its tools by their descriptions and hands back what is not its job."""
    [result] = await evaluate_conversations([conversation], config=str(_PRIVACY_DESK))
    assert result.passed, "\n".join(result.failures)


async def test_ground_another_agent_says_is_its_job_goes_back_to_triage_not_up_to_a_person():
    """config-15: billing read "do you pass my info on to advertisers?" as a privacy request no tool
    covers and escalated it to a person through senior; the desk file's privacy agent says in its
    description that privacy is its job, so billing hands it back and triage brings it there. On
    the shipped desk, with no such agent, it still goes up."""
    turns = [{"customer": "what did you charge me in march? dana@example.com", "expect": {"agent": "billing"}},
             {"customer": "one more thing, do you sell my personal details to marketing firms?",
              "expect": {"handoffs": ["billing>triage", "triage>privacy"], "agent": "privacy"}}]
    [result] = await evaluate_conversations([{"name": "t", "turns": turns}], config=str(_PRIVACY_DESK))
    assert result.passed, "\n".join(result.failures)
    shipped = [turns[0], {"customer": turns[1]["customer"], "expect": {"handoffs": ["billing>senior"]}}]
    [result] = await evaluate_conversations([{"name": "t", "turns": shipped}], config=str(REPO / "agents.toml"))
    assert result.passed, "\n".join(result.failures)
