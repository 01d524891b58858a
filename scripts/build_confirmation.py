"""Rebuild supportdesk/readers/data/confirmation.json.gz, the learned part of the reader of a
customer's answer to an offer (supportdesk/engine/confirmation.py), from public data.

    python scripts/build_confirmation.py SGD_GIT

SGD_GIT is a git directory of github.com/google-research-datasets/dstc8-schema-guided-dialogue
(Schema-Guided Dialogue, CC BY-SA 4.0), read with `git show HEAD:path` (no checkout needed);
only its train split is read. The user turns are labelled by their dialogue acts:

- right after a system turn that asks to confirm or offers (CONFIRM, OFFER_INTENT):
  AFFIRM / AFFIRM_INTENT (with THANK_YOU at most) -> yes; NEGATE / NEGATE_INTENT (with
  THANK_YOU / GOODBYE at most) -> no; NEGATE with INFORM (a correction: "no, make it ...") -> change_of_mind;
- anywhere: REQUEST_ALTS alone -> change_of_mind; REQUEST alone -> question; THANK_YOU /
  GOODBYE alone -> other.

The desk's own labelled answers are added: the tune halves evals/confirmation-tune.jsonl,
evals/confirmation-6-tune.jsonl and evals/confirmation-ack-tune.jsonl (an offer's finding
acknowledged, not agreed to; each counted WEIGHT times). No held half is ever read.

What is kept: per-label feature counts of a multinomial naive Bayes (a feature seen fewer
than twice in all is dropped) and the number of answers per label. No sentence is stored.
"""

from __future__ import annotations

import gzip
import json
import random
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from supportdesk.engine.confirmation import ANSWER_DATA, ANSWER_FORMAT, answer_features  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure_confirmation import ASKING, user_turns  # noqa: E402  (the one reader of SGD's user turns)

TUNE = ("confirmation-tune.jsonl", "confirmation-6-tune.jsonl", "confirmation-ack-tune.jsonl")
WEIGHT = 10
CAP = 3000  # answers kept per label from SGD (its mix is not the desk's)


def sgd_answers(git_dir: str) -> dict[str, list[str]]:
    found: dict[str, set[str]] = {label: set() for label in ("yes", "no", "change_of_mind", "question", "other")}
    for acts, before, text in user_turns(git_dir, "train"):
        label = _label(acts, asked=bool(before & ASKING))
        if label:
            found[label].add(text)
    rng = random.Random(38)
    return {label: rng.sample(sorted(texts), min(CAP, len(texts))) for label, texts in found.items()}


def _label(acts: set[str], asked: bool) -> str | None:
    affirm, negate = acts & {"AFFIRM", "AFFIRM_INTENT"}, acts & {"NEGATE", "NEGATE_INTENT"}
    if asked and affirm and acts <= {"AFFIRM", "AFFIRM_INTENT", "THANK_YOU"}:
        return "yes"
    if asked and negate and acts <= {"NEGATE", "NEGATE_INTENT", "THANK_YOU", "GOODBYE"}:
        return "no"
    if asked and "NEGATE" in acts and acts <= {"NEGATE", "INFORM"}:
        return "change_of_mind"
    if acts == {"REQUEST_ALTS"}:
        return "change_of_mind"
    if acts == {"REQUEST"}:
        return "question"
    if acts and acts <= {"THANK_YOU", "GOODBYE"}:
        return "other"
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python scripts/build_confirmation.py SGD_GIT", file=sys.stderr)
        return 2
    examples: list[tuple[str, str, int]] = [
        (text, label, 1) for label, texts in sgd_answers(argv[0]).items() for text in texts
    ]
    for name in TUNE:
        for line in (REPO / "evals" / name).read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                examples.append((row["text"], row["label"], WEIGHT))
    counts: dict[str, Counter[str]] = {}
    docs: Counter[str] = Counter()
    for text, label, weight in examples:
        docs[label] += weight
        bag = counts.setdefault(label, Counter())
        for feature in answer_features(text):
            bag[feature] += weight
    total: Counter[str] = Counter()
    for bag in counts.values():
        total.update(bag)
    kept = {label: {f: n for f, n in sorted(bag.items()) if total[f] >= 2} for label, bag in sorted(counts.items())}
    data = {"format": ANSWER_FORMAT, "counts": kept, "docs": dict(sorted(docs.items()))}
    raw = json.dumps(data, separators=(",", ":"), sort_keys=True).encode()
    with open(ANSWER_DATA, "wb") as out, gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9, mtime=0) as fh:
        fh.write(raw)  # the same sources give the same bytes
    print(f"{ANSWER_DATA.relative_to(REPO)}: {dict(docs)}; features {sum(len(b) for b in kept.values())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
