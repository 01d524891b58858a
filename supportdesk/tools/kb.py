"""The knowledge base: Markdown articles shipped in supportdesk/tools/kb/, searched by words.

An article is `# Title`, a `Tags:` line and numbered steps. Search scores articles with
BM25 over title, tags and body, after the same lexicon the router uses, so "PIN" finds
the passcode article and "2FA" the two-factor one.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from supportdesk.lexicon import normalise

KB_DIR = Path(__file__).resolve().parent / "kb"
# Words that find no article. The knowledge base's own list (it began as the router's): search
# must not change, or break, when the offline model's classifier does.
STOPWORDS = frozenset(
    """a an the i me my mine we our you your it its is are was were be been being am to of in
    on at for from by with and or but so if this that these those there here do does did
    have has had will would can could should please hi hello hey thanks thank just
    what why how when where which who whom whose some any something anything possible
    get got need want like know help able also still yet very really
    stopped working work works worked anymore""".split()
)
# ("stopped working" says that something fails, not what: in an article's title it outweighed
# the thing the customer named, and "sync stopped working" found the notifications article.)
_WORD = re.compile(r"[a-z0-9][a-z0-9_]*")
_STEP = re.compile(r"^\s*\d+\.\s+(.*)$")


@dataclass(frozen=True)
class Article:
    slug: str
    title: str
    tags: tuple[str, ...]
    body: str
    steps: tuple[str, ...]


def _terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(normalise(text)) if w not in STOPWORDS and len(w) > 1]


def parse_article(slug: str, text: str) -> Article:
    lines = text.strip().splitlines()
    title = lines[0].lstrip("# ").strip() if lines else slug
    tags: tuple[str, ...] = ()
    body_lines = []
    for line in lines[1:]:
        if line.lower().startswith("tags:"):
            tags = tuple(t.strip() for t in line.split(":", 1)[1].split(",") if t.strip())
        else:
            body_lines.append(line)
    body = "\n".join(body_lines).strip()
    steps = tuple(m.group(1).strip() for line in body_lines if (m := _STEP.match(line)))
    return Article(slug, title, tags, body, steps)


class KnowledgeBase:
    def __init__(self, articles: list[Article]):
        self.articles = articles
        # Title and tags say what an article is about; they count three times the body.
        self._docs = [
            Counter(_terms(a.title) * 3 + _terms(" ".join(a.tags)) * 3 + _terms(a.body)) for a in articles
        ]
        self._avg_len = sum(sum(d.values()) for d in self._docs) / max(len(self._docs), 1)
        df: Counter[str] = Counter()
        for d in self._docs:
            df.update(d.keys())
        n = len(articles)
        self._idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def search(self, query: str, limit: int = 3) -> list[tuple[Article, float]]:
        terms = set(_terms(query))
        scored = []
        for article, doc in zip(self.articles, self._docs):
            length = sum(doc.values())
            score = 0.0
            for t in terms:
                tf = doc.get(t, 0)
                if tf:
                    score += self._idf[t] * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / self._avg_len))
            if score > 0:
                scored.append((article, round(score, 3)))
        scored.sort(key=lambda pair: (-pair[1], pair[0].slug))
        return scored[:limit]

    def get(self, slug: str) -> Article | None:
        return next((a for a in self.articles if a.slug == slug), None)


@lru_cache(maxsize=1)
def knowledge_base() -> KnowledgeBase:
    articles = [parse_article(p.stem, p.read_text(encoding="utf-8")) for p in sorted(KB_DIR.glob("*.md"))]
    return KnowledgeBase(articles)
