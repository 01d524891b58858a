"""Misspelt words read as the word meant, from how often words occur in customers' messages.

A word customers in general never write (not in the background frequencies of
supportdesk/readers, learned from Banking77, CLINC150 and SGD: "refnd", "febuary") is read as
the one frequent word a single edit away from it (a letter dropped, added, changed, or two
swapped: "refund", "february"), when exactly one such word is frequent enough. Everything else
is left as written: short words (too many words are one letter from "data"), words with digits
or inside an email address, other forms of a known word ("relates"), and words with no or several
likely neighbours sharing their first letter. A word of English is never corrected either, however
rare among customers ("tablet" is not "table", "auction" not "action"): the English words of at
least MIN_LENGTH letters that the background lacks ship in words/english.txt.gz (SCOWL's size-50
American list, as Debian's wamerican package has it; licence in words/LICENSE.md), rebuilt by
`python -m supportdesk.readers.spelling /usr/share/dict/american-english`.
"""

from __future__ import annotations

import gzip
import re
import sys
from functools import lru_cache
from pathlib import Path

from supportdesk.readers.acts import _background
from supportdesk.patterns import LazyPattern

# A word at least this long is corrected (four-letter words have too many neighbours: "dana").
MIN_LENGTH = 5
# ... and at most this long: no word customers write is longer, and a word's one-edit neighbours
# are about 54 strings of its own length per letter, so a run of 5,000 letters took minutes.
MAX_LENGTH = 30
# A word seen in fewer messages than this is unknown; a neighbour needs at least this many to be
# the word meant (the background keeps words seen twice or more, in about 137,000 messages).
UNKNOWN_BELOW = 2
LIKELY_FROM = 20
# How many times more often customers write a word with a letter doubled than the word as written
# for the written one to be that word's slip ("acount": 3 messages, "account": about 3,000).
DOUBLED_MORE_OFTEN = 50
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
# Endings of a word's other forms, and what the base ends with instead ("relates" <- "relate").
_INFLECTIONS = (("s", ""), ("es", ""), ("ed", ""), ("ed", "e"), ("d", ""), ("ing", ""), ("ing", "e"), ("er", ""), ("ers", ""), ("ly", ""))
# Whole addresses and words: an address's parts are never corrected.
_TOKEN = LazyPattern(r"\S+@\S+|[A-Za-z]+(?:'[A-Za-z]+)?")
ENGLISH = Path(__file__).resolve().parent / "words" / "english.txt.gz"


@lru_cache(maxsize=1)
def english() -> frozenset[str]:
    """The English words (lower case, MIN_LENGTH letters or more) customers in general rarely write."""
    return frozenset(gzip.decompress(ENGLISH.read_bytes()).decode("utf-8").split())


def build_english(source: Path) -> list[str]:
    """From a word list (one word a line, such as /usr/share/dict/american-english): its plain
    lower-case words of MIN_LENGTH letters or more that the background does not already know."""
    df, _ = _background()
    words = (w.strip() for w in source.read_text(encoding="utf-8").splitlines())
    return sorted({w for w in words if len(w) >= MIN_LENGTH and w.isascii() and w.isalpha() and w.islower() and df.get(w, 0) < UNKNOWN_BELOW})


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
    if not MIN_LENGTH <= len(word) <= MAX_LENGTH or not word.isalpha() or word in vocabulary:
        return word
    df, _ = _background()

    def known(w: str) -> bool:
        return w in vocabulary or df.get(w, 0) >= UNKNOWN_BELOW

    def known_often(w: str) -> bool:
        return w in vocabulary or df.get(w, 0) >= LIKELY_FROM

    if not known(word):
        # A consonant left single where it doubles ("stoped", "droping"): the doubled form, when
        # frequent, is the word meant, not another form of the stem ("stop" + "ed"; held-4).
        for end in ("ed", "ing"):
            stem = word[: -len(end)]
            if word.endswith(end) and len(stem) >= 3 and stem[-1] not in "aeiouwxy" and stem[-2] in "aeiou":
                doubled = stem + stem[-1] + end
                if known_often(doubled):
                    return doubled
        # A letter written twice where it is single ("cancell", "refundd"): the one frequent word
        # with it once. Such a slip reads as the stem of a form that doubles it ("cancelled"), so
        # the check for another form of a known word below kept it (issue 38, cancel-18).
        written_once = [w for w in _one_edit(word) if _one_letter_doubled(w, word) and known_often(w)]
        if len(set(written_once)) == 1:
            return written_once[0]
    if word in english():
        # A word of English, however rare among customers ("tablet" is no "table"; issue 38,
        # held-7): after the doubled consonant, since "stoped" is a mining word too.
        return word
    # A doubled letter written once is the commonest slip ("acount", "adress"): customers write it
    # often enough to count as known, and "acount" is one edit from "amount" too; the one word
    # with a letter doubled that customers write far more often is the word meant.
    written_twice = [
        w for w in _one_edit(word)
        if _one_letter_doubled(word, w) and (w in vocabulary or df.get(w, 0) >= max(LIKELY_FROM, DOUBLED_MORE_OFTEN * df.get(word, 0)))
    ]
    if len(written_twice) == 1:
        return written_twice[0]
    if known(word) or any(
        (word.endswith(end) and known(word[: -len(end)] + back)) or (word.endswith(back) and known(word[: len(word) - len(back)] + end))
        for end, back in _INFLECTIONS
    ):
        return word  # a word, or another form of one ("debits", "enabled"; "nonprofit" of "nonprofits")
    # Typos keep the first letter: "tacked" is not "hacked", nor "crying" "trying".
    likely = [w for w in _one_edit(word) if w[0] == word[0] and known_often(w)]
    return likely[0] if len(likely) == 1 else word


def _one_letter_doubled(written: str, meant: str) -> bool:
    """`meant` is `written` with one of its letters written twice ("acount" -> "account")."""
    return len(meant) == len(written) + 1 and any(
        meant[i] == meant[i + 1] and meant[:i] + meant[i + 1:] == written for i in range(len(meant) - 1)
    )


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


if __name__ == "__main__":  # rebuild words/english.txt.gz from a word list
    built = build_english(Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/dict/american-english"))
    ENGLISH.write_bytes(gzip.compress(("\n".join(built) + "\n").encode("utf-8"), 9, mtime=0))
    print(f"{len(built)} words -> {ENGLISH}")
