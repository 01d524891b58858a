"""The knowledge base, family kb-24 (issue 38): any adjective of size after "how" asks a size
(`lexicon.ASKS_SIZE`, read by `KnowledgeBase.measured`)."""

from __future__ import annotations

from supportdesk.tools.kb import knowledge_base  # type: ignore[attr-defined]


def test_how_huge_or_heavy_asks_a_size():
    """Only "how big" and "how large" asked a size before: "how huge" got no article."""
    assert knowledge_base().measured("how huge may one file be for sync to take it?").slug == "sync-issues"
    assert knowledge_base().measured("how heavy can a single file get before sync skips it").slug == "sync-issues"
