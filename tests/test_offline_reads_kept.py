"""What the offline model keeps between steps to read a turn's message once: each cue's answers
for recent texts, and the slots found in recent messages. Both are pure functions of what they
are keyed by; these tests fail if a kept answer outlives its key (another text, the agent's
question for the amount, a later message of the same conversation)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from supportdesk.config import load_desk
from supportdesk.engine.events import Appended
from supportdesk.engine.protocol import StepRequest
from supportdesk.items import Message
from supportdesk.models.offline import OfflineModel, cues, view
from supportdesk.tools import registry
from supportdesk.wiring import open_desk
from tests.conftest import REPO

WRITTEN = datetime(2026, 4, 2, 9, 30, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def desk():
    return load_desk(REPO / "agents.toml")


def test_a_cue_answers_each_text_for_itself_and_keeps_few():
    cue = cues.Cue(r"\brefund")
    first = cue.search("refund me")
    assert first is not None and first.string == "refund me"
    # Same length, other words: its own answer, not the one kept for the text before.
    assert cue.search("hello you") is None
    # An equal text (another string object, as the next step's history brings) gets the kept answer.
    again = "".join(["refund", " me"])
    assert cue.search(again) is first
    assert cue.search("please REFUND it").group(0) == "REFUND"
    for n in range(cues.SEARCHES_KEPT + 20):
        cue.search(f"text number {n}")
    assert len(cue._found) <= cues.SEARCHES_KEPT
    # A long text is searched every time, never kept.
    long_text = "refund " * (cues.SEARCH_KEPT_CHARS // 7 + 1)
    assert cue.search(long_text) is not None and long_text not in cue._found


def _view(desk, texts: list[tuple[str, str]]) -> view.View:
    history = [
        Message(role=role, text=text, seq=n + 1, agent="billing", created_at=WRITTEN) for n, (role, text) in enumerate(texts)
    ]
    agent = desk.agents["billing"]
    return view.View(StepRequest("s1", agent, desk, registry.specs(agent.tools), [], history, {}))


def test_slots_kept_for_a_text_depend_on_whether_the_amount_was_asked_for(desk):
    # Read first without the question: a bare number is no amount ...
    plain = _view(desk, [("customer", "it was 29.99 each time")])
    assert plain.facts.amounts == []
    # ... and the same words answering "what was the amount?" are one, read afresh.
    asked = _view(desk, [("agent", "What was the amount of the charge?"), ("customer", "it was 29.99 each time")])
    assert asked.facts.amounts == [29.99]
    # And the other way round, after the asked reading was kept.
    assert _view(desk, [("customer", "it was 29.99 each time")]).facts.amounts == []


def test_the_latest_facts_handed_out_are_the_callers_own(desk):
    text = "my email is dana@example.com, charged $29.99 on March 3"
    found = _view(desk, [("customer", text)]).latest_facts()
    assert found.emails == ["dana@example.com"] and [a.value for a in found.amounts] == [29.99]
    found.emails.append("someone@else.example")
    found.amounts.clear()
    again = _view(desk, [("customer", text)]).latest_facts()
    assert again.emails == ["dana@example.com"] and [a.value for a in again.amounts] == [29.99]
    assert _view(desk, [("customer", text)]).facts.emails == ["dana@example.com"]


async def test_a_new_message_after_kept_reads_is_read_for_what_it_says(desk, tmp_path: Path):
    """One model, one desk: the same message read again and again (every step, every session),
    then other messages, in another session and later in the same one, get their own answers."""
    model = OfflineModel(desk, use_disk_cache=False)
    async with await open_desk(tmp_path / "desk.db", desk, provider=model) as d:

        async def send(sid: str, text: str) -> list:
            return [e.item async for e in d.runner.send(sid, text) if isinstance(e, Appended)]

        for _ in range(3):
            charged = await send(await d.runner.new_session(), "I was charged twice this month, my email is dana@example.com")
            assert [i.name for i in charged if i.kind == "tool_call"] == ["find_charges", "refund_charge"]
        sid = await d.runner.new_session()
        login = await send(sid, "I can't log in to the app, it says my password is wrong")
        assert [i.to_agent for i in login if i.kind == "handoff"] == ["technical"]
        assert not any(i.kind == "tool_call" and i.name == "find_charges" for i in login)
        # A charge question without the email, then the email in the next message of the same
        # conversation: that message is read for what it says.
        sid = await d.runner.new_session()
        first = await send(sid, "I was charged twice this month")
        asked = [i.text for i in first if i.kind == "message" and i.role == "agent"][-1]
        assert "email" in asked.lower()
        second = await send(sid, "it's dana@example.com")
        assert [i.arguments for i in second if i.kind == "tool_call" and i.name == "find_charges"] == [
            {"customer": "dana@example.com"}
        ]


def _features_word_by_word(text: str) -> dict[str, float]:
    """The classifier's features as first written: each vote added as it is read."""
    from supportdesk.lexicon import normalise
    from supportdesk.models.offline import classifier as c

    words = c._WORD.findall(normalise(text))
    out: dict[str, float] = {}

    def add(feature: str, weight: float) -> None:
        out[feature] = out.get(feature, 0.0) + weight

    for w in words:
        if w in c.STOPWORDS:
            continue
        if w.endswith("_c"):
            add(w, c.CONCEPT_WEIGHT)
            continue
        add(w, c.WORD_WEIGHT)
        pieces = c._char_pieces(w)
        for piece in pieces:
            add(piece, c.CHAR_WEIGHT / len(pieces))
    for a, b in zip(words, words[1:]):
        if a not in c.STOPWORDS or b not in c.STOPWORDS:
            add(f"{a}+{b}", c.BIGRAM_WEIGHT)
    return out


@pytest.mark.parametrize(
    "text",
    [
        "I was charged twice this month, my email is dana@example.com",
        "charged charged charged again, the app app crashes",  # a word's votes kept, added each time
        "hi the a it",  # stopwords only
        "refund my money back please, i can't log in",  # concepts and contractions
        "",
    ],
)
def test_the_classifiers_features_are_the_word_by_word_sums(desk, text):
    from supportdesk.models.offline import classifier as c

    assert c.features(text) == _features_word_by_word(text)
    model = OfflineModel(desk, use_disk_cache=False).router_for(desk, desk.entry).model
    found = c.features(text)
    known = {f: w for f, w in found.items() if f in model._vocabulary}
    for label in model.labels:
        table, unseen = model._log_prob[label], model._log_unseen[label]
        assert model.predict(text).scores[label] == sum(w * table.get(f, unseen) for f, w in known.items())


def test_a_message_read_as_meant_is_kept_per_text_and_per_desk_vocabulary():
    from supportdesk.readers.spelling import corrected

    # "refnd" is one edit from "refund"; a desk whose own examples say "refnd" keeps it as written.
    assert view._read_as_meant("please refnd my charge", frozenset()) == "please refund my charge"
    assert view._read_as_meant("please refnd my charge", frozenset({"refnd"})) == "please refnd my charge"
    assert view._read_as_meant("please refnd my charge", frozenset()) == "please refund my charge"
    # Other texts (the same length too) are read for themselves.
    for text in ("please rfund my charge", "please help my charge", "I want a refnd for my charge"):
        for vocabulary in (frozenset(), frozenset({"refnd"})):
            assert view._read_as_meant(text, vocabulary) == corrected(text, vocabulary)
    assert view._read_as_meant("please help my charge", frozenset()) == "please help my charge"


def test_a_misspelt_message_in_a_view_is_read_as_meant_every_step(desk):
    seen = _view(desk, [("customer", "I want a refnd for my charge")])
    assert seen.latest == "I want a refund for my charge"
    assert _view(desk, [("customer", "I want a refnd for my charge")]).latest == "I want a refund for my charge"
    assert _view(desk, [("customer", "I want a refund for my order")]).latest == "I want a refund for my order"
