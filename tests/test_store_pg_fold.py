"""The PostgreSQL store folds a message's words for its search index in Python (SQLite's FTS5
tokenizer does it in C): lower case without accents. ASCII text, most messages, takes a short
way (its casefold is its lower case, it is its own NFKD form, it has no combining marks) that
must give what the walk over every character gives."""

from __future__ import annotations

import unicodedata

import pytest

pytest.importorskip("asyncpg")

from supportdesk.store import postgres  # noqa: E402


def _walked(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@pytest.mark.parametrize("text", [
    "".join(chr(i) for i in range(128)),
    "Hi, I was charged TWICE for my subscription: $29.99 on March 1st. dana@example.com",
    "Crème brûlée ÉCOLE Straße ﬁne Ｆｕｌｌ naïve",
    "",
])
def test_the_fold_is_the_walk_over_every_character(text):
    assert postgres._fold(text) == _walked(text)


def test_ascii_text_is_folded_without_a_call_a_character(monkeypatch):
    calls: list[str] = []
    real = unicodedata.combining

    def counted(ch: str) -> int:
        calls.append(ch)
        return real(ch)

    monkeypatch.setattr(postgres.unicodedata, "combining", counted)
    assert postgres._search_words("I was charged twice this month, dana@example.com") != ""
    assert calls == []
    postgres._fold("crème")  # (non-ASCII still walks)
    assert calls
