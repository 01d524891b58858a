"""The knowledge base, family kb-17 (issue 38): a question about a size or a time is answered
from the one article whose step states that kind of quantity, of the matter the question names
(`KnowledgeBase.measured`), where the readers found no article sure; an upload's size, which no
article states, stays unanswered."""

from __future__ import annotations

from supportdesk.tools.kb import knowledge_base  # type: ignore[attr-defined]


def _first(message: str) -> str | None:
    hits = knowledge_base().answer(message)
    return hits[0][0].slug if hits else None


def test_a_size_asked_of_sync_gets_the_step_that_states_it():
    """The example model reads file sizes and videos as no article's (its upload examples): without
    `measured` these got no article."""
    assert _first("how big can one file get before sync skips it? i shoot long 4k clips") == "sync-issues"
    # And before an article the readers chose that states no size: the export article by "large".
    assert _first("how large can a single file be for sync to take it?") == "sync-issues"
    assert _first("is there a size limit on one file before syncing skips it, my raw footage is huge") == "sync-issues"


def test_a_size_no_article_states_gets_none():
    """An upload's size: "files" is two titles' word, so names neither article's matter (counting
    it, the sync article would answer)."""
    assert knowledge_base().measured("what is the biggest file i can upload?") is None
    assert _first("whats the largest upload you accept in one go?") is None


def test_a_time_needs_a_step_sharing_the_question_s_words():
    """"how long do you keep my data after i cancel?" names the export article's "data", and its
    "7 days" is a download link's: no step word of the question, no answer (without that check
    the export article answered)."""
    assert knowledge_base().measured("how long do you keep my data after i cancel?") is None
    assert knowledge_base().measured("how many days until credits paid by bank transfer arrive?").slug == "credits-top-up"
