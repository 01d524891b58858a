"""Misspelt words read as the word meant, from how often words occur in customers' messages.

A word customers in general never write (not in the background frequencies of
supportdesk/readers, learned from Banking77, CLINC150 and SGD: "refnd", "febuary") is read as
the one frequent word a single edit away from it (a letter dropped, added, changed, or two
swapped: "refund", "february"), when exactly one such word is frequent enough. Everything else
is left as written: short words (too many words are one letter from "data"), words with digits
or inside an email address, other forms of a known word ("relates"), and words with no or several
likely neighbours sharing their first letter.
"""

from __future__ import annotations

import re
from functools import lru_cache

from supportdesk.readers.acts import _background

# A word at least this long is corrected (four-letter words have too many neighbours: "dana").
MIN_LENGTH = 5
# A word seen in fewer messages than this is unknown; a neighbour needs at least this many to be
# the word meant (the background keeps words seen twice or more, in about 137,000 messages).
UNKNOWN_BELOW = 2
LIKELY_FROM = 20
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
# Endings of a word's other forms, and what the base ends with instead ("relates" <- "relate").
_INFLECTIONS = (("s", ""), ("es", ""), ("ed", ""), ("ed", "e"), ("d", ""), ("ing", ""), ("ing", "e"), ("er", ""), ("ers", ""), ("ly", ""))
# Whole addresses and words: an address's parts are never corrected.
_TOKEN = re.compile(r"\S+@\S+|[A-Za-z]+(?:'[A-Za-z]+)?")


def _one_edit(word: str) -> set[str]:
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    deletes = {a + b[1:] for a, b in splits if b}
    swaps = {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    changes = {a + c + b[1:] for a, b in splits if b for c in _LETTERS}
    inserts = {a + c + b for a, b in splits for c in _LETTERS}
    return (deletes | swaps | changes | inserts) - {word}


@lru_cache(maxsize=4096)
def correction(word: str, vocabulary: frozenset[str] = frozenset()) -> str:
    """The word meant by a (lower-case) word, or the word itself. `vocabulary`: the desk's own
    words (its agents' examples), known and likely however rare among customers in general."""
    if len(word) < MIN_LENGTH or not word.isalpha() or word in vocabulary:
        return word
    df, _ = _background()

    def known(w: str) -> bool:
        return w in vocabulary or df.get(w, 0) >= UNKNOWN_BELOW

    if not known(word):
        # A consonant left single where it doubles ("stoped", "droping"): the doubled form, when
        # frequent, is the word meant, not another form of the stem ("stop" + "ed"; held-4).
        for end in ("ed", "ing"):
            stem = word[: -len(end)]
            if word.endswith(end) and len(stem) >= 3 and stem[-1] not in "aeiouwxy" and stem[-2] in "aeiou":
                doubled = stem + stem[-1] + end
                if doubled in vocabulary or df.get(doubled, 0) >= LIKELY_FROM:
                    return doubled
    if known(word) or any(
        (word.endswith(end) and known(word[: -len(end)] + back)) or (word.endswith(back) and known(word[: len(word) - len(back)] + end))
        for end, back in _INFLECTIONS
    ):
        return word  # a word, or another form of one ("debits", "enabled"; "nonprofit" of "nonprofits")
    # Typos keep the first letter: "tacked" is not "hacked", nor "crying" "trying".
    likely = [w for w in _one_edit(word) if w[0] == word[0] and (w in vocabulary or df.get(w, 0) >= LIKELY_FROM)]
    return likely[0] if len(likely) == 1 else word


def corrected(text: str, vocabulary: frozenset[str] = frozenset()) -> str:
    """`text` with each misspelt word replaced by the word meant (in lower case)."""

    def fix(m: re.Match[str]) -> str:
        token = m.group(0)
        if "@" in token:
            return token
        better = correction(token.lower(), vocabulary)
        return token if better == token.lower() else better

    return _TOKEN.sub(fix, text)


@lru_cache(maxsize=8)
def words_of(texts: tuple[str, ...]) -> frozenset[str]:
    """The lower-case words of some texts (a desk's examples: its vocabulary)."""
    return frozenset(w.lower() for t in texts for w in re.findall(r"[A-Za-z]+", t))
