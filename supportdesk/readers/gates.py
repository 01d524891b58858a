"""Learned readers that replace word lists in models/offline/cues.py (issue 38).

Readings of a customer message (two yes/no, one of a few grounds), each a multinomial naive Bayes (acts.ActReader's),
trained by `scripts/build_readers.py`; the money gate reads what the message is about (`features`:
its words, their first five letters, word pairs; not its shape: a question about refunds is as
much about money as a complaint), the disclaimer reads the act reader's features, clause by clause:

- money: does the message speak of money in some form (a charge, a payment taken, a price, a
  plan, a refund), however it is said ("my bank shows acme twice", "why do i owe you",
  "overcharged")? It is billing's gate: a message that names none of it ("is there a plan to
  support linux?", "how do I cancel sharing a folder") is a product question or a problem,
  however the router leans. Trained on Banking77's train split (money intents only, and none of
  the 24 intents /work/shared/data/triage/dev.jsonl measures routing on), CLINC150's train split
  (its banking, card, bill and pay intents as money; its assistant and travel talk as none), and
  the desk's own messages: the specialists' examples in agents.toml, what the billing and
  technical tools say they do (their names and descriptions: "change plan", "cancel
  subscription", a refund), the opening messages of the conversation evals' tune halves by the
  agent they must reach, the desk's labelled intents (evals/desk-intents-tune.jsonl: its money
  intents money, "reset" and "other" none), the product's own questions (tools/kb/examples.txt,
  those of the articles about paying left out) as none, and evals/money-gate-tune.jsonl and
  gates-7-tune.jsonl. The files read
  are pinned in data/TRAINING.json (tests/test_readers.py checks the data were built from them).
- ground: does the message ask for ground no tool or article of the desk covers, of a kind
  public data holds: an account the provider blocked, froze, suspended or put on hold (CLINC150's
  account_blocked), or another language than the desk's English (CLINC150's translate and
  change_language); every other CLINC150 and Banking77 train message is none, and so are the
  desk's own money intents and the tune halves' openings that must not reach a person; plus the
  desk's labelled evals/unknown-ground-tune.jsonl (its held half, unknown-ground-held.jsonl, is
  never read). cues.unknown_ground asks it beside the rules kept for grounds no public data holds.
- disclaims: does the customer say outright that they ask for no action (yet) ("i'm not asking
  you to change anything", "dont switch nothing, only curious", "no, not right now")? Trained on
  the Schema-Guided Dialogue user turns that decline an offered action (NEGATE_INTENT) against
  those that ask for one (INFORM_INTENT), and the desk's own requests and
  evals/disclaims-tune.jsonl.

Rules stay for what rules read well (amounts, charge ids, plan names, periods, card numbers: see
cues.names_money). The parameters ship as data/gates.json.gz (licences: data/LICENSES.md) and are
read on first use, never at import.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from supportdesk.readers import acts
from supportdesk.readers.acts import EMAIL, ActReader, tokens

DATA = Path(__file__).resolve().parent / "data" / "gates.json.gz"
FORMAT = 1
MONEY, NO_MONEY = "money", "no_money"
DISCLAIMS, ASKS = "disclaims", "asks"
# The grounds no tool or article covers that a reader learns (cues.UNKNOWN_GROUND names them).
SUSPENDED, LANGUAGE, NO_GROUND = "suspended", "language", "none"

# The probability of money a message needs to pass billing's gate. Chosen on
# evals/money-gate-tune.jsonl and the conversation evals' tune halves: a false billing sends a
# product question to an agent that cannot answer it, a false technical sends a money matter to
# one that hands it on; both cost a turn, neither moves money.
MONEY_THRESHOLD = 0.5
# A disclaimer turns a request into a question (nothing offered): chosen on
# evals/disclaims-tune.jsonl, where requests must keep their offer.
DISCLAIMS_THRESHOLD = 0.5
# A clause read alone is short, and short clauses sound like SGD's declines ("nevermind that"
# 0.72, "don't need it" 0.77 beside a request); the disclaimers of the tune half's clauses and of
# tests/test_money_understanding.py's long messages read 0.89 and more.
DISCLAIMS_CLAUSE_THRESHOLD = 0.85


def features(text: str) -> list[str]:
    """Words ("refunds"), their first five letters ("refun", so "refunded" and "refunds" meet),
    and word pairs ("owe_you"); amounts, numbers and emails folded as in `acts.tokens`."""
    words = [w for w in tokens(text) if w not in ("?", "!")]
    out = list(words)
    out += [w[:5] + "~" for w in words if len(w) > 5]
    out += [f"{a}_{b}" for a, b in zip(words, words[1:])]
    return out


class GateReader(ActReader):
    """The act reader's naive Bayes, over `features` (the money gate) or the act reader's own
    (the disclaimer: how a clause opens, "not now", says it; FEATURES names which)."""

    def __init__(self, part: dict[str, Any], featurize: Callable[[str], list[str]]):
        super().__init__(part["counts"], part["totals"], part["docs"], part["alpha"])
        self._featurize = featurize

    def featurize(self, text: str) -> list[str]:
        return self._featurize(text)


FEATURES: dict[str, Callable[[str], list[str]]] = {"money": features, "disclaims": acts.features, "ground": features}


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    return acts.load_parameters(DATA, FORMAT)


def _reader(name: str) -> GateReader:
    return GateReader(_data()[name], FEATURES[name])


@lru_cache(maxsize=1)
def money_reader() -> GateReader:
    return _reader("money")


@lru_cache(maxsize=1)
def disclaims_reader() -> GateReader:
    return _reader("disclaims")


def money_probability(text: str) -> float:
    # (Emails are taken out as in training: an address says who writes, not what about.)
    return money_reader().read(EMAIL.sub(" ", text)).share((MONEY,))


@lru_cache(maxsize=4096)
def reads_money(text: str) -> bool:
    """The message speaks of money, in words the reader learnt (amounts and ids are the rules')."""
    return money_probability(text) >= MONEY_THRESHOLD


def disclaims_probability(text: str) -> float:
    return disclaims_reader().read(EMAIL.sub(" ", text)).share((DISCLAIMS,))


# Where a clause ends: a disclaimer is said in one ("..., I'm not asking you to change anything
# yet, I just need the monthly price ..."), and a long message's other words drown it when the
# message is read whole. (An email's dots are followed by no space: it stays one clause.)
_CLAUSE = re.compile(r"[.?!;:,]+\s+|\s+[-\u2013\u2014]+\s+|\n+")


def clauses(text: str) -> list[str]:
    return [c for c in _CLAUSE.split(text) if c.strip()]


@lru_cache(maxsize=4096)
def disclaims_action(text: str, clause_counts: Callable[[str], bool] = lambda clause: True) -> bool:
    """The customer says they ask for no action (yet), in the message or one of its clauses (those
    `clause_counts` lets speak for the message): what they ask is a question about it."""
    if disclaims_probability(text) >= DISCLAIMS_THRESHOLD:
        return True
    parts = clauses(text)
    return len(parts) > 1 and any(clause_counts(c) and disclaims_probability(c) >= DISCLAIMS_CLAUSE_THRESHOLD for c in parts)


# A ground no tool covers sends the message to a person instead of an article or a tool: chosen on
# evals/unknown-ground-tune.jsonl and the conversation tune halves, where a locked sign-in, a
# frozen app or a PIN blocked must stay the desk's.
GROUND_THRESHOLD = 0.9


class SparseReader(GateReader):
    """The same naive Bayes, scored through the features a label saw: a label's score is what an
    unseen feature gives it, times the message's features, plus what each seen one adds. The
    ground reader has some 300 labels (each topic of the corpora its own), and a message's few
    features were seen by few of them: a read costs their count, not labels x features."""

    def __init__(self, part: dict[str, Any], featurize: Callable[[str], list[str]]):
        super().__init__(part, featurize)
        alpha = part["alpha"]
        self._unseen = {label: math.log(alpha / self._denominator[label]) for label in self.labels}
        self._seen: dict[str, list[tuple[str, float]]] = {}
        for label, counts in part["counts"].items():
            for feature, n in counts.items():
                self._seen.setdefault(feature, []).append((label, math.log((n + alpha) / alpha)))

    def read(self, text: str, ignore: Callable[[str], bool] | None = None) -> acts.Reading:
        feats = [f for f in self.featurize(text) if f in self._vocab and not (ignore is not None and ignore(f))]
        scores = {label: self._log_prior[label] + len(feats) * self._unseen[label] for label in self.labels}
        for f in feats:
            for label, gain in self._seen[f]:
                scores[label] += gain
        best = max(self.labels, key=lambda label: scores[label])
        return acts.Reading(best, acts.probabilities(scores)[best], scores)


@lru_cache(maxsize=1)
def ground_reader() -> GateReader | None:
    """None when the shipped data predate the ground reader (built before it: rebuild them)."""
    part = _data().get("ground")
    return SparseReader(part, FEATURES["ground"]) if part else None


@lru_cache(maxsize=4096)
def ground(text: str) -> str | None:
    """The ground no tool covers the message asks for (SUSPENDED, LANGUAGE), or None."""
    reader = ground_reader()
    if reader is None:
        return None
    reading = reader.read(EMAIL.sub(" ", text))
    return reading.act if reading.act in (SUSPENDED, LANGUAGE) and reading.confidence >= GROUND_THRESHOLD else None
