"""Every scripted conversation shipped in evals/ passes on the default desk (CI runs this)."""

from __future__ import annotations

import re

import pytest

from supportdesk.commands.evals import evaluate_conversations, read_jsonl
from tests.conftest import REPO
from tests.money_turns import passes

CONVERSATIONS = read_jsonl(REPO / "evals" / "conversations.jsonl")
# The conversational moves: the half tuned on and the half held back (evals/README.md).
MOVES_TUNE = read_jsonl(REPO / "evals" / "moves-tune.jsonl")
MOVES_HELD = [c for n in ("", "-2", "-3", "-4", "-5") for c in read_jsonl(REPO / "evals" / f"moves-held{n}.jsonl")]
# Amounts written without a currency, and numbers that are not money: tuned on and held back.
AMOUNTS = read_jsonl(REPO / "evals" / "amounts-tune.jsonl") + read_jsonl(REPO / "evals" / "amounts-held.jsonl")
# Pairs taught since, each written and committed before the model changed for it (evals/README.md).
PAIRS = {
    name: (read_jsonl(REPO / "evals" / f"{name}-tune.jsonl"), read_jsonl(REPO / "evals" / f"{name}-held.jsonl"))
    for name in ("asked-amount", "day-list", "relative-plan", "reset-missing", "card-routing", "invoice-month", "discount", "next-payment", "current-plan",
                 "person-someone", "terse-still", "offer-taken", "no-tool-ground", "detail-ack", "dated-charge", "account-after-steps",
                 "introduced", "plan-question", "invoice-where",
                 "other-language", "price-followup",
                 "cancel-question", "deleted-files", "team-invite", "account-deletion", "change-password", "remove-card", "apps-devices",
                 "question-or-problem")
}
# Held halves whose misses were left as they were measured (evals/README.md says why), and
# second held halves written after a first one was spent. Their known misses stay visible.
HELD_AS_MEASURED = [
    c for name in ("change-password-held-2", "sign-in-error-held", "sign-in-error-held-2")
    for c in read_jsonl(REPO / "evals" / f"{name}.jsonl")
]
KNOWN_MISSES = {
    # Pins the old wait (technical active, the duplicate pending until the steps worked) and is a
    # pinned training file of the readers (evals/moves-tune.jsonl: its opening's "agent" is a
    # routing and money-gate example): since two20 (issue 38, the lead's call) a duplicate told
    # beside a trouble is offered in the steps' reply, so turn 1 ends with billing. It misses by
    # design; its later turns still go as before (the report on the steps to technical, the offer
    # put again, the yes running exactly it), the charges not read a second time.
    "two problems: sync first, then the duplicate charge without asking",
    # "Can't sign into the desktop app": the search found no sign-in article to prefer.
    "sign-in error (held-2): the desktop app, not the web",
    # (Since ground-13: "bring my business partner onto our workspace", read as an ownership
    # transfer since ground-12, and "wipe my account completely", read as no ground, pass: the
    # ground reader learnt a partner invited as its own near matter, and an account wiped.)
}
EVERY = (
    CONVERSATIONS + MOVES_TUNE + MOVES_HELD + AMOUNTS + [c for tune, held in PAIRS.values() for c in tune + held]
    + read_jsonl(REPO / "evals" / "sign-in-error-tune.jsonl") + HELD_AS_MEASURED
)
ALL = [c for c in EVERY if c["name"] not in KNOWN_MISSES]


def test_there_are_enough_conversations():
    assert len(CONVERSATIONS) >= 40
    names = [c["name"] for c in CONVERSATIONS]
    assert len(set(names)) == len(names)
    for kind in ("seed scenario", "topic switch", "clarifying", "injection", "escalat"):
        assert any(kind in n for n in names), kind


def test_the_moves_are_split_and_varied():
    assert len(MOVES_TUNE) + len(MOVES_HELD) >= 60
    names = [c["name"] for c in ALL]
    assert len(set(names)) == len(names)
    def move(c):  # "offer 2: ..." belongs to the move "offer"
        return re.sub(r"\s+\d+$", "", c["name"].split(":")[0])

    for name in {move(c) for c in MOVES_TUNE + MOVES_HELD}:
        # at least three paraphrases of each move, and both halves hold some
        assert sum(move(c) == name for c in MOVES_TUNE + MOVES_HELD) >= 3, name
        assert any(move(c) == name for c in MOVES_HELD), name
    # outcomes only: the move files never check a reply's wording
    assert not any("reply" in t.get("expect", {}) or "reply_not" in t.get("expect", {}) for c in MOVES_TUNE + MOVES_HELD for t in c["turns"])


def test_the_amounts_are_split_and_check_outcomes_only():
    held = [c for c in AMOUNTS if "(held)" in c["name"]]
    assert len(held) >= 5 and len(AMOUNTS) - len(held) >= 5
    assert any("not money" in c["name"] for c in held) and any("not money" in c["name"] for c in AMOUNTS if c not in held)
    assert not any("reply" in t.get("expect", {}) for c in AMOUNTS for t in c["turns"])


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_each_taught_pair_has_a_tune_and_a_held_half(name):
    tune, held = PAIRS[name]
    assert len(tune) >= 5 and len(held) >= 5
    assert all("(tune)" in c["name"] for c in tune) and all("(held)" in c["name"] for c in held)
    assert (REPO / "evals" / "README.md").read_text().count(f"`{name}-held.jsonl`") == 2  # described and measured


@pytest.mark.parametrize("conversation", ALL, ids=[c["name"] for c in ALL])
async def test_conversation(conversation):
    await passes(conversation)


@pytest.mark.parametrize(
    "conversation", [c for c in EVERY if c["name"] in KNOWN_MISSES], ids=lambda c: c["name"]
)
async def test_a_known_miss_still_misses(conversation):
    """Known misses are reported in evals/README.md; one that starts passing moves to ALL."""
    [result] = await evaluate_conversations([conversation], config=str(REPO / "agents.toml"))
    assert not result.passed
