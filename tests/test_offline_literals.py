"""A cue skips its search when the text holds none of the strings every match contains
(models/offline/literals.py). The shortcut must never say "no" where the search says "yes"."""

from __future__ import annotations

import json
import re

import pytest

from supportdesk.models.offline import cues
from supportdesk.models.offline.literals import cannot_match, required_literals
from tests.conftest import REPO


@pytest.mark.parametrize(
    ("source", "matching", "other"),
    [
        # An optional part asks for nothing: "cancel" alone matches.
        (r"(?:please )?cancel\b", ["Cancel it", "CANCEL", "please cancel"], "stop my plan"),
        (r"\bcolou?r\b", ["Color", "COLOUR"], "paint"),
        # A literal written in capitals still matches any case.
        (r"\bRefund\b", ["refund", "REFUND please"], "money"),
        # One of the alternatives is enough.
        (r"\b(?:did not|didn't|not) (?:work|help)", ["it did NOT WORK", "didn't help"], "all good now"),
        # Repeated at least once: the repeated part is in every match.
        (r"(?:ha)+ funny", ["HAHA funny"], "very amusing"),
    ],
)
def test_a_text_is_ruled_out_only_when_it_holds_none_of_the_needed_strings(source, matching, other):
    needs = required_literals(source, re.IGNORECASE)
    assert needs
    for text in matching:
        assert re.search(source, text, re.IGNORECASE), text
        assert not cannot_match(needs, text), text
    assert not re.search(source, other, re.IGNORECASE)
    assert cannot_match(needs, other)


@pytest.mark.parametrize("source", [r"refund|\d+", r"[abc]x", r"(?:x)?", r"(?=refund)\w+", r"a|", r"\d{3}"])
def test_a_pattern_with_nothing_certain_asks_for_nothing(source):
    assert required_literals(source, re.IGNORECASE) is None


def test_non_ascii_text_is_always_searched():
    # Case-insensitively "ſ" (long s) is an "s" and the Kelvin sign a "k": lower-casing says otherwise.
    for source, text in ((r"\bstop\b", "ſtop"), (r"\bkeep\b", "\u212aeep")):
        needs = required_literals(source, re.IGNORECASE)
        assert needs and re.search(source, text, re.IGNORECASE)
        assert not cannot_match(needs, text)
        assert cues.Cue(source).search(text) is not None


def _texts() -> list[str]:
    out: list[str] = []

    def walk(value) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    files = [REPO / "tests" / "data" / "triage" / "dev.jsonl", *sorted((REPO / "evals").glob("*.jsonl"))]
    for path in files:
        if "held-3" in path.name:
            continue  # a held-out set nobody else reads
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                walk(json.loads(line))
    texts = list(dict.fromkeys(out))
    return texts + [t.upper() for t in texts[::3]]


def test_no_cue_skips_a_text_its_search_matches():
    """Every cue of the offline model, on every customer text the repo ships (and capitals):
    where the shortcut rules a text out, the search finds nothing either."""
    texts = _texts()
    assert len(texts) > 3_000
    every = {name: cue for name, cue in vars(cues).items() if isinstance(cue, cues.Cue)}
    skipped = 0
    for name, cue in every.items():
        pattern = cue.pattern
        needs = cue._needs
        for text in texts:
            if cannot_match(needs, text):
                skipped += 1
                assert pattern.search(text) is None, (name, text)
    # The shortcut does something: most searches of most cues are skipped.
    assert skipped > len(every) * len(texts) // 2


def test_the_lexicon_grouped_by_first_letter_folds_as_the_flat_alternation():
    """lexicon.py groups its phrases by first letter for speed; every shipped text (and a few
    made to tempt a shorter phrase inside a longer one) folds exactly as the plain longest-first
    alternation of all phrases folds it."""
    from supportdesk import lexicon

    phrases = sorted((p for ps in lexicon.CONCEPTS.values() for p in ps), key=len, reverse=True)
    flat = re.compile(r"\b(?:" + "|".join(re.escape(p) for p in phrases) + r")\b")
    tricky = [f"{p} {p}s {p}x x{p} {p}-{p}" for p in phrases[:: max(1, len(phrases) // 60)]]
    for text in _texts() + tricky:
        low = text.lower()
        assert [(m.span(), m.group(0)) for m in lexicon._LEXICON_RE.finditer(low)] == [
            (m.span(), m.group(0)) for m in flat.finditer(low)
        ], text
