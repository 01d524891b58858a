"""Untrusted text (customers', models') made safe to show on a terminal or in an export.

Rich markup is never parsed from it (callers build `rich.text.Text`, not markup strings);
this module takes care of the other half: control characters and escape sequences that
a terminal would obey, and the bidirectional-text controls that reorder what a reader sees
("Trojan Source"), are replaced by visible stand-ins.
"""

from __future__ import annotations

import re

from supportdesk.patterns import LazyPattern

# An email address: the one definition the readers, the slots, the tools and the confirmation
# reader share. It starts where a run of its characters starts (after any leading dots): tried
# from every position inside a long run ("1.1.1.1...") it was quadratic in the run.
EMAIL_ADDRESS = re.compile(
    r"(?<![A-Za-z0-9._%+-])[.%+-]*+\b(?P<address>[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})\b"
)

# C0 controls except tab and newline, DEL, and C1 controls (ESC, CSI, OSC ... live here),
# and the invisible bidi controls: ALM, LRM, RLM, the embeddings/overrides and the isolates.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode "control picture": ␛ for ESC, ␇ for BEL ...
    if code == 0x7F:
        return "␡"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def safe_text(text: str) -> str:
    """The text with every terminal control character made visible and inert."""
    return _CONTROL.sub(_visible, text)


def money(value: float) -> str:
    """An amount as the desk writes it to people: `$1,234.50`."""
    return f"${value:,.2f}"


def one_line(text: str, width: int) -> str:
    """The text on one line (whitespace runs become one space), at most `width` characters;
    when it had to be cut, the last character is "…" so a cut word never reads as whole."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "…"


def clip_words(text: str, width: int) -> str:
    """The text at most `width` characters, cut after a whole word and ended with "…" when it
    had to be cut: text a customer reads (or that an agent repeats to one) never ends mid-word."""
    text = text.strip()
    if len(text) <= width:
        return text
    cut = text[: max(0, width - 1)]
    if not text[len(cut)].isspace() and not cut[-1:].isspace():  # the cut fell inside a word
        cut = re.sub(r"\s*\S*$", "", cut) or cut  # drop it (one over-long word: cut it after all)
    return cut.rstrip(" \t\n,;:-(\"'") + "…"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n noun`, with the noun plural unless n is 1: "1 item", "2 items", "1,204 handoffs"."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


# An agent's reply is Markdown: a line of it shown as one line (the inbox's last line, a search
# hit) reads as the conversation draws it, without the emphasis and code marks. The line is
# never parsed as markup: these are plain replacements.
_EMPHASIS = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_CODE = re.compile(r"`([^`\n]+)`")


def plain_line(text: str) -> str:
    """A Markdown line as plain words: `**strong**` and `__strong__` lose their marks, and so
    does `inline code`. Any other character stays, markers inside a span included."""
    return _CODE.sub(r"\1", _EMPHASIS.sub(r"\2", text))


# Where a clause ends inside a message: after a sentence's end, a comma, a colon or a semicolon
# followed by a space (an email's dots are followed by none: it stays in one clause), a dash
# between spaces, a line break, or an emoji, which ends a sentence in chat as "!" does ("forgot
# my password AGAIN", an eye-roll, "reset to <email>": a report, then a request; acct17). The
# one definition of a message's clauses: the act reader's, the gates' and the offline model's
# (models/offline/cues.py passes its own ends: where the subject changes).
# A run of marks or spaces is read up to 64 long (longer runs are no punctuation anyone writes):
# unbounded, every place in a run of 16,000 spaces or dots read the rest of it, seconds a split.
CLAUSE_END = LazyPattern(
    r"[.?!;:,]{1,64}\s+|\s{1,64}[-\u2013\u2014]{1,64}\s+|\n+|\s{0,64}[\U0001F300-\U0001FAFF\u2600-\u27BF]+\s*"
)


def clauses(text: str, ends: LazyPattern = CLAUSE_END, strip: str | None = None) -> list[str]:
    """The message's non-empty clauses, split where `ends` matches, each stripped of `strip`'s
    characters (whitespace when None)."""
    return [c.strip(strip) for c in ends.split(text) if c and c.strip(strip)]
