"""Ground no tool covers, read by a learned reader where public data holds that ground (issue 38,
scope-10): an account the provider blocked, froze or put on hold, and another language than the
desk's, are read by readers/gates.py `ground` (CLINC150's account_blocked, translate and
change_language against every other CLINC150 and Banking77 intent and the desk's own messages),
not by rules of words. The rules' grounds with no public data (privacy, ownership, legal,
discounts, deletion, invoice details) stay cues.UNKNOWN_GROUND's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def test_the_learned_grounds_have_no_rules_left():
    from supportdesk.models.offline import cues

    assert set(cues.LEARNED_GROUND.values()).isdisjoint(cues.UNKNOWN_GROUND)
    # the callers' check of a desk whose tools do cover the ground still knows their words
    assert set(cues.LEARNED_GROUND.values()) <= set(cues.UNKNOWN_GROUND_WORDS)


@pytest.mark.parametrize(
    ("text", "ground"),
    [
        # a suspension told in words the old rules had no slot for (frozen, locked by the provider)
        ("our workspace has been frozen pending a review by your team", "question about a suspended account"),
        ("you locked our company account over the unpaid invoice, who can lift it", "question about a suspended account"),
        # another language, named or not after "in"
        ("could your replies come in korean from now on", "request for another language"),
        # the desk's own matters near those words stay the desk's
        ("my PIN got blocked after three tries", None),
        ("i switched off two-step login and now i am stuck at the sign in page", None),
        ("the app froze and my account page will not load", None),
        ("Can acme translate my documents to spanish?", None),
    ],
)
def test_ground_read_by_the_learned_reader(text, ground):
    from supportdesk.models.offline import cues

    assert cues.unknown_ground(text) == ground


def test_the_ground_reader_on_its_held_half():
    """evals/unknown-ground-held.jsonl is never trained on (data/TRAINING.json pins the tune half
    only): 15 of its 20 lines read right when the reader was built (the misses: 'deactivated
    account restored', 'froze my account' under the threshold, 'customer service in swedish',
    'receipts translated to german', and 'the language of the date format' read as a language)."""
    from supportdesk.readers import gates

    rows = [json.loads(line) for line in (REPO / "evals" / "unknown-ground-held.jsonl").read_text().splitlines() if line.strip()]
    right = sum((gates.ground(r["text"]) or gates.NO_GROUND) == r["ground"] for r in rows)
    assert right >= 15, f"{right}/{len(rows)}"
    # none of the held half's desk matters is sent to a person but the one known
    wrong_grounds = [r["text"] for r in rows if r["ground"] == gates.NO_GROUND and gates.ground(r["text"]) is not None]
    assert len(wrong_grounds) <= 1, wrong_grounds


def test_the_held_half_is_not_trained_on():
    training = json.loads((REPO / "supportdesk" / "readers" / "data" / "TRAINING.json").read_text())
    pinned = {p for files in training.values() if isinstance(files, list) for p in files}
    assert "evals/unknown-ground-tune.jsonl" in pinned and "evals/unknown-ground-held.jsonl" not in pinned


def test_the_sparse_ground_reader_reads_as_the_plain_naive_bayes():
    """gates.SparseReader scores through the features each label saw (some 300 labels: a read
    costs 0.2 ms, not 7): the same reading as the plain naive Bayes, to rounding."""
    from supportdesk.readers import gates

    plain = gates.GateReader(gates._data()["ground"], gates.FEATURES["ground"])
    sparse = gates.ground_reader()
    assert isinstance(sparse, gates.SparseReader)
    texts = [json.loads(line)["text"] for line in (REPO / "evals" / "unknown-ground-held.jsonl").read_text().splitlines() if line.strip()]
    for text in [*texts, "", "zzqq xxvv", "thanks!"]:
        a, b = sparse.read(text), plain.read(text)
        assert a.act == b.act and abs(a.confidence - b.confidence) < 1e-9, text


def test_another_language_is_asked_for_only_when_one_is_named():
    """The ground reader learnt the request's shape ("does anyone there speak ...") and is as sure
    of a customer checking someone is there: no language named, no language ground."""
    from supportdesk.models.offline import cues

    for text in ("hello? is anyone there?", "can someone answer me", "anyone there?"):
        assert cues.unknown_ground(text) is None, text
    for text in ("does anyone there speak polish", "can i get help in spanish"):
        assert cues.unknown_ground(text) == "request for another language", text
