"""Issue 38's held-out conversations (evals/<family>-tune|held.jsonl), written before the model
changed for them: each family's both halves pass, but for the misses listed here, which are
measured as misses so that one which starts passing is moved into the passing set."""

from __future__ import annotations

import pytest

from supportdesk.commands.evals import evaluate_conversations, read_jsonl
from tests.conftest import REPO

FAMILIES = ("article-choice", "act-kind", "said-stays", "refund-refused", "demo-calendar", "hand-back", "money-5")
CONFIG_FAMILIES = ("config-agent", "config-hand-back")  # run on evals/config-agent.toml: an agent only the config knows

KNOWN_MISSES = {
    # Measured after the knowledge base's abstention and the demo calendar; each one that
    # starts passing moves out of this set.
    # Written with the fixes of issue 38's article-choice misses (which fixed "an older copy saved
    # over" and "previous version overwritten"; "bring back the earlier one" of a "presentation"
    # passes since the restore article's tags say "earlier version"):
    # "overwrited my notes by mistake ... go back" leans billing ("mistake", "back") in the router
    # and in the agents' job words alike, so billing keeps it and asks for the email.
    'article choice (tune): non-native, overwrited notes',
    # Written with the router's fairness to config-only agents (which fixed the two config hand
    # backs once listed here): "it wasn't me" is a negation a bag of words does not read, and
    # the words left ("email address changed") are the technical agent's.
    'config hand back (tune): typo, email changed not by me',
    # Held-3 (17/37 and 6/9 before its round, 26/37 and 8/9 on its first run after, now seen):
    # the same negation ("it wasnt me") of a password change reads as the technical agent's words.
    'understand 3 config (held): password changed, not by me',
    # Held-4 (32/45 and 7/9 before, 32/45 and 8/9 on its first run after the round that fixed
    # held-3's misses; then the gate learnt a bare month, so it is seen; 44/45 after the round on
    # its failure kinds: questions about a change, changes inside a yes, duplicates told without
    # the word, charge ids, disputes, deletions, a single consonant). What each still misses:
    'understand 4 (held): no article: scheduled sending',  # "automatically" in the signed-out article's steps clears the threshold
    'understand 4 config (held): sync trouble, then a login alert',  # technical keeps a security matter
}
# Held-back sets with no tune half: written and committed before the model changed, measured
# once (evals/README.md), then kept passing like the rest.
HELD_ONLY = ("understand-held-2", "understand-held-3", "understand-held-4")
HELD_ONLY_CONFIG = ("understand-held-3-config", "understand-held-4-config")  # run on evals/config-agent.toml


def _load(names: tuple[str, ...]) -> list[dict]:
    return [c for name in names for half in ("tune", "held") for c in read_jsonl(REPO / "evals" / f"{name}-{half}.jsonl")]


DEFAULT = _load(FAMILIES) + [c for name in HELD_ONLY for c in read_jsonl(REPO / "evals" / f"{name}.jsonl")]
CONFIGURED = _load(CONFIG_FAMILIES) + [c for name in HELD_ONLY_CONFIG for c in read_jsonl(REPO / "evals" / f"{name}.jsonl")]


def test_each_family_has_two_halves_in_varied_wording():
    for name in FAMILIES + CONFIG_FAMILIES:
        tune = read_jsonl(REPO / "evals" / f"{name}-tune.jsonl")
        held = read_jsonl(REPO / "evals" / f"{name}-held.jsonl")
        assert len(tune) >= 5 and len(held) >= 5, name
        assert all("(tune)" in c["name"] or "(tune):" in c["name"] for c in tune), name
        assert all("(held)" in c["name"] or "(held):" in c["name"] for c in held), name
    names = [c["name"] for c in DEFAULT + CONFIGURED]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("conversation", [c for c in DEFAULT if c["name"] not in KNOWN_MISSES], ids=lambda c: c["name"])
async def test_conversation(conversation):
    [result] = await evaluate_conversations([conversation], config=str(REPO / "agents.toml"))
    assert result.passed, "\n".join(result.failures)


@pytest.mark.parametrize("conversation", [c for c in CONFIGURED if c["name"] not in KNOWN_MISSES], ids=lambda c: c["name"])
async def test_config_only_agent_conversation(conversation):
    [result] = await evaluate_conversations([conversation], config=str(REPO / "evals" / "config-agent.toml"))
    assert result.passed, "\n".join(result.failures)


@pytest.mark.parametrize("conversation", [c for c in DEFAULT + CONFIGURED if c["name"] in KNOWN_MISSES], ids=lambda c: c["name"])
async def test_a_known_miss_still_misses(conversation):
    config = "evals/config-agent.toml" if conversation in CONFIGURED else "agents.toml"
    [result] = await evaluate_conversations([conversation], config=str(REPO / config))
    assert not result.passed


async def test_the_plan_question_is_answered_once_not_for_every_later_message():
    convo = {"name": "plan then something else", "turns": [
        {"customer": "what plan am i on? dana@example.com", "expect": {"agent": "billing", "reply": ["Pro plan"]}},
        {"customer": "my account's been compromised", "expect": {"reply_not": ["You're on the Pro plan"]}},
    ]}
    [result] = await evaluate_conversations([convo], config=str(REPO / "agents.toml"))
    assert result.passed, "\n".join(result.failures)
