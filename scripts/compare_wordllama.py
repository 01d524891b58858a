"""Measure wordllama's embeddings against the knowledge base's BM25 with abstention.

    python -m venv /tmp/wl && /tmp/wl/bin/pip install wordllama==0.4.0.post1
    /tmp/wl/bin/python scripts/compare_wordllama.py

Not a dependency of the desk: a measurement, kept so it can be repeated. Each question of
evals/kb-questions-tune.jsonl and -held.jsonl is answered by the article whose embedding is
nearest (cosine), when the similarity reaches a threshold chosen on the tune half (a wrong
article costing three missed ones), as for BM25 (tools/kb.py).

wordllama 0.4.0.post1 ships its weights (16 MB, 256 dimensions) and tokenizer inside the wheel
but looks for the tokenizer in a folder named differently from the one it ships, then tries to
download it: a cache folder holding links to the shipped files avoids the download.

Measured (2 cores): load 0.3 s warm, 1.1 s cold; 33 MB installed (numpy and tokenizers
besides). Threshold 0.43 from the tune half. Held half: precision 19/22, abstention 12/13, 19 of
27 answerable questions answered right (24/27 right as top match without a threshold). BM25 with coverage, same half: precision 26/27, abstention 12/13,
26 of 27 answered, pure Python, no install. BM25 is kept.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    import numpy as np
    import wordllama
    from wordllama import WordLlama

    shipped = Path(wordllama.__file__).parent
    with tempfile.TemporaryDirectory() as cache:
        for folder in ("tokenizers", "tokenizer", "weights"):
            (Path(cache) / folder).mkdir()
        for f in (shipped / "tokenizers").glob("*.json"):
            (Path(cache) / "tokenizers" / f.name).symlink_to(f)
            (Path(cache) / "tokenizer" / f.name).symlink_to(f)
        for f in (shipped / "weights").glob("*.safetensors"):
            (Path(cache) / "weights" / f.name).symlink_to(f)
        started = time.perf_counter()
        model = WordLlama.load(disable_download=True, cache_dir=cache)
        load = time.perf_counter() - started
    articles = [(p.stem, p.read_text(encoding="utf-8")) for p in sorted((REPO / "supportdesk/tools/kb").glob("*.md"))]
    docs = model.embed([text for _, text in articles])
    docs = docs / np.linalg.norm(docs, axis=1, keepdims=True)

    def best(question: str) -> tuple[str, float]:
        e = model.embed([question])[0]
        sims = docs @ (e / np.linalg.norm(e))
        i = int(sims.argmax())
        return articles[i][0], float(sims[i])

    def rows(half: str) -> list[dict]:
        path = REPO / "evals" / f"kb-questions-{half}.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def measure(scored: list, threshold: float) -> tuple[int, int, int, int]:
        right = wrong = abstained = missed = 0
        for row, (slug, sim) in scored:
            shown = sim >= threshold
            if row["article"] is None:
                wrong += shown
                abstained += not shown
            elif shown:
                right += slug == row["article"]
                wrong += slug != row["article"]
            else:
                missed += 1
        return right, wrong, abstained, missed

    tune = [(r, best(r["text"])) for r in rows("tune")]
    held = [(r, best(r["text"])) for r in rows("held")]
    threshold = max((x / 100 for x in range(100)), key=lambda t: (lambda m: m[0] + m[2] - 3 * m[1])(measure(tune, t)))
    print(f"load {load:.2f} s; threshold {threshold:.2f}")
    for name, scored in (("tune", tune), ("held", held)):
        right, wrong, abstained, missed = measure(scored, threshold)
        print(f"{name}: precision {right}/{right + wrong}, abstained {abstained} on unanswerable, missed {missed} answerable")
    return 0


if __name__ == "__main__":
    sys.exit(main())
