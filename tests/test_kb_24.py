"""The knowledge base, family kb-24 (issue 38): any adjective of size after "how" asks a size
(`lexicon.ASKS_SIZE`, read by `KnowledgeBase.measured`); the example model's written examples of an
app the identity provider has not assigned (single sign-on) and of a device left somewhere still
signed in (the lost device's article); and the ground reader's privacy lines, sign-in records kept
(evals/ground-lines-24-tune.jsonl), so no article answers them."""

from __future__ import annotations

from supportdesk.models.offline.cues import LEARNED_GROUND, unknown_ground
from supportdesk.tools.kb import knowledge_base  # type: ignore[attr-defined]


def _first(message: str) -> str | None:
    hits = knowledge_base().answer(message)
    return hits[0][0].slug if hits else None


def test_how_huge_or_heavy_asks_a_size():
    """Only "how big" and "how large" asked a size before: "how huge" got no article."""
    assert knowledge_base().measured("how huge may one file be for sync to take it?").slug == "sync-issues"
    assert knowledge_base().measured("how heavy can a single file get before sync skips it").slug == "sync-issues"


def test_an_app_not_assigned_by_the_identity_provider_is_single_sign_on():
    """Without the written examples the sign-in article ("Can't log in") answered."""
    assert _first("okta says i am not assigned to acme when i use our company login") == "single-sign-on"


def test_a_device_left_signed_in_is_the_lost_device_article():
    """Without the written examples the signed-out article ("Signed out again and again") answered
    these; a wrong article is worse than none, so the laptop's may stay unanswered."""
    assert _first("left my ipad at the gym still signed in to acme, how can i sign it out from my phone") == "lost-phone"
    assert _first("i left my laptop at the office party and acme is still signed in on it, how do i log it out") in (None, "lost-phone")
    assert _first("my tablet is still logged in at my ex employer, can i sign it out remotely") in (None, "lost-phone")


def test_how_long_sign_in_records_are_kept_is_a_privacy_request():
    """Without the ground reader's privacy lines the single sign-on article answered."""
    assert unknown_ground("does acme save the ip address of each login of our employees, and for how long?") == LEARNED_GROUND["privacy"]
