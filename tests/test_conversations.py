"""Every scripted conversation shipped in evals/ passes on the default desk (CI runs this)."""

from __future__ import annotations

import pytest

from supportdesk.evals import evaluate_conversations, read_jsonl
from tests.conftest import REPO

CONVERSATIONS = read_jsonl(REPO / "evals" / "conversations.jsonl")


def test_there_are_enough_conversations():
    assert len(CONVERSATIONS) >= 40
    names = [c["name"] for c in CONVERSATIONS]
    assert len(set(names)) == len(names)
    for kind in ("seed scenario", "topic switch", "clarifying", "injection", "escalat"):
        assert any(kind in n for n in names), kind


@pytest.mark.parametrize("conversation", CONVERSATIONS, ids=[c["name"] for c in CONVERSATIONS])
async def test_conversation(conversation):
    [result] = await evaluate_conversations([conversation], config=str(REPO / "agents.toml"))
    assert result.passed, "\n".join(result.failures)
