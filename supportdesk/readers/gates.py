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
  those of the articles about paying left out) as none, the desk's lines written for routing
  (evals/route-lines-13-tune.jsonl, by desk intent as desk-intents-tune's are), and
  evals/money-gate-tune.jsonl and gates-7-tune.jsonl. The files read
  are pinned in data/TRAINING.json (tests/test_readers.py checks the data were built from them).
- ground: does the message ask for ground no tool or article of the desk covers (`GROUNDS`):
  of a kind public data holds, an account the provider blocked, froze, suspended or put on hold
  (CLINC150's account_blocked), or another language than the desk's English (CLINC150's translate
  and change_language); of a kind only the desk's own lines hold, a privacy request, an account's
  ownership, a legal matter, a discount, what an invoice says about the customer, or the account
  deleted (evals/unknown-ground-tune.jsonl, ground-lines-12-tune.jsonl and ground-lines-13-tune.jsonl;
  their held halves are never read). Every other CLINC150 and Banking77 train message is none, each
  topic its own label, and so are the desk's own money intents, the tune halves' turns that must not
  reach a person and the labelled lines' near matters, each named one under its own label ("near:invite"
  for a partner brought onto the workspace, "near:branding", "near:export", "near:sharing",
  "near:files"), the rest "desk:near". A ground is read only from a word taught it
  (`said_in_words_that_mean`), and only when sure at a calibrated temperature
  (scripts/measure_ground.py); cues.unknown_ground keeps rules for names and amounts beside it.
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
import operator
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from supportdesk.readers import acts
from supportdesk.readers.acts import EMAIL, ActReader, tokens
from supportdesk.patterns import LazyPattern
from supportdesk.text import clauses

DATA = Path(__file__).resolve().parent / "data" / "gates.json.gz"
FORMAT = 1
MONEY, NO_MONEY = "money", "no_money"
DISCLAIMS, ASKS = "disclaims", "asks"
# The grounds no tool or article covers that the ground reader learns (cues.LEARNED_GROUND names
# them for the customer); any other label it reads (a corpus topic, the desk's own) is no ground.
SUSPENDED, LANGUAGE, NO_GROUND = "suspended", "language", "none"
PRIVACY, OWNERSHIP, LEGAL, DISCOUNT, INVOICE_DETAILS, DELETION = "privacy", "ownership", "legal", "discount", "invoice_details", "deletion"
GROUNDS = (SUSPENDED, LANGUAGE, PRIVACY, OWNERSHIP, LEGAL, DISCOUNT, INVOICE_DETAILS, DELETION)
# Someone else has the account or what opens it (the access reader's label; its other labels are topics).
ACCESS = "access"

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


# A word of letters and digits both: "2fa" is a word of its own (`tokens` keeps only its "fa"),
# and a code made of a word and a number ("SPRING20", "WELCOME10") is one whatever it spells (a
# promo code named, not the season). Rules read such ids well (cues.names_money's charge ids).
_MIXED = LazyPattern(r"\b(?!\d+(?:st|nd|rd|th)\b)(?=[a-z]*\d)(?=\d*[a-z])[a-z\d]+\b")
_CODE = LazyPattern(r"^[a-z]{3,}\d+$")


def ground_features(text: str) -> list[str]:
    """`features`, and each word of letters and digits as one (`_MIXED`): "2fa", or "<code>"."""
    mixed = _MIXED.findall(text.lower())
    return features(text) + ["<code>" if _CODE.match(w) else w for w in mixed]


class GateReader(ActReader):
    """The act reader's naive Bayes, over `features` (the money gate) or the act reader's own
    (the disclaimer: how a clause opens, "not now", says it; FEATURES names which)."""

    def __init__(self, part: dict[str, Any], featurize: Callable[[str], list[str]]):
        super().__init__(part["counts"], part["totals"], part["docs"], part["alpha"])
        self._featurize = featurize

    def featurize(self, text: str) -> list[str]:
        return self._featurize(text)


FEATURES: dict[str, Callable[[str], list[str]]] = {"money": features, "disclaims": acts.features, "ground": ground_features, "access": features}


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


@lru_cache(maxsize=4096)
def disclaims_action(text: str, clause_counts: Callable[[str], bool] = lambda clause: True) -> bool:
    """The customer says they ask for no action (yet), in the message or one of its clauses (those
    `clause_counts` lets speak for the message): what they ask is a question about it."""
    if disclaims_probability(text) >= DISCLAIMS_THRESHOLD:
        return True
    parts = clauses(text)
    return len(parts) > 1 and any(clause_counts(c) and disclaims_probability(c) >= DISCLAIMS_CLAUSE_THRESHOLD for c in parts)


# A ground no tool covers sends the message to a person instead of an article or a tool. The
# threshold and the temperature (below) are chosen together by `scripts/measure_ground.py
# --calibrate` on its dev readings: the labelled tune lines read five-fold (each fifth by a reader
# trained without it) and the tune conversations' turns that must name a ground, precision first
# (a desk matter sent to a person costs three grounds missed; among settings within 2 % of the
# least cost, the fewest desk matters sent). Since ground-13's near matters: 0.9 at 1.5 reads 118
# of 207 grounds right and sends 7 of the 176 desk matters to a person; 0.9 at 1.25 (the least
# cost) reads 128 and sends 10; 0.9 at 1.0 (ground-12's setting) reads 133 and sends 13. The held lines (never read to choose):
# ground-lines-13-held precision 1.00, recall 0.96, none of its 24 desk matters sent.
GROUND_THRESHOLD = 0.9
# Naive Bayes counts each of a message's words as if it were news, so its probabilities sit at 0
# and 1 ("bring my business partner onto our workspace": ownership at 1.00); its log scores are
# divided by this before they are read as probabilities, so the threshold has a range to choose in.
GROUND_TEMPERATURE = 1.5


class SparseReader(GateReader):
    """The same naive Bayes, scored through the features a label saw: a label's score is what an
    unseen feature gives it, times the message's features, plus what each seen one adds. The
    ground reader has some 300 labels (each topic of the corpora its own), and a message's few
    features were seen by few of them: a read costs their count, not labels x features."""

    def __init__(self, part: dict[str, Any], featurize: Callable[[str], list[str]]):
        super().__init__(part, featurize)
        alpha = part["alpha"]
        self._unseen = [math.log(alpha / self._denominator[label]) for label in self.labels]
        self._prior_row = [self._log_prior[label] for label in self.labels]
        index = {label: i for i, label in enumerate(self.labels)}
        self._seen: dict[str, list[tuple[int, float]]] = {}
        for label, counts in part["counts"].items():
            for feature, n in counts.items():
                self._seen.setdefault(feature, []).append((index[label], math.log((n + alpha) / alpha)))
        # A word most labels saw ("my", "the", "account") is added as one row over all of them,
        # zeros where unseen (x + 0.0 is x), in C's loop rather than one Python step per label:
        # such words were most of a read's cost. Only for them, so the rows stay few (some 500).
        self._dense: dict[str, list[float]] = {}
        for feature, gains in self._seen.items():
            if len(gains) >= DENSE_LABELS:
                row = [0.0] * len(self.labels)
                for i, gain in gains:
                    row[i] = gain
                self._dense[feature] = row

    def read(self, text: str, ignore: Callable[[str], bool] | None = None) -> acts.Reading:
        feats = [f for f in self.featurize(text) if f in self._vocab and not (ignore is not None and ignore(f))]
        n = len(feats)
        scores = [prior + n * unseen for prior, unseen in zip(self._prior_row, self._unseen)]
        for f in feats:
            dense = self._dense.get(f)
            if dense is not None:
                scores = list(map(operator.add, scores, dense))
                continue
            for i, gain in self._seen[f]:
                scores[i] += gain
        by_label = dict(zip(self.labels, scores))
        best = max(self.labels, key=lambda label: by_label[label])
        return acts.Reading(best, acts.probabilities(by_label)[best], by_label)


# How many of the sparse reader's labels must have seen a feature for it to be added as a whole row.
DENSE_LABELS = 64


@lru_cache(maxsize=1)
def ground_reader() -> GateReader | None:
    """None when the shipped data predate the ground reader (built before it: rebuild them)."""
    part = _data().get("ground")
    return SparseReader(part, FEATURES["ground"]) if part else None


@lru_cache(maxsize=4096)
def ground(text: str) -> str | None:
    """The ground no tool covers the message asks for (one of `GROUNDS`), or None."""
    reader = ground_reader()
    if reader is None:
        return None
    read = ground_reading(reader, text)
    return read[0] if read is not None and read[1] >= GROUND_THRESHOLD else None


def ground_reading(reader: GateReader, text: str, temperature: float | None = None) -> tuple[str, float] | None:
    """The ground `reader` reads in `text` and how sure it is (its probability among all labels,
    the scores divided by `temperature`, GROUND_TEMPERATURE unless given), or None when the
    likeliest label is no ground or is not said in words taught it. (scripts/measure_ground.py
    reads its folds' readers through this, so the measure is the desk's own reading.)"""
    text = EMAIL.sub(" ", text)
    reading = reader.read(text)
    if reading.act not in GROUNDS or not said_in_words_that_mean(reader, text, reading):
        return None
    t = GROUND_TEMPERATURE if temperature is None else temperature
    return reading.act, acts.probabilities({label: score / t for label, score in reading.scores.items()})[reading.act]


# How common (acts.commonness: 0 never seen, 1 in every message) a word may be and still say what
# a message is about: "is", "or", "my", "account", "we", "us", "plan" (0.5 to 0.9) say nothing of
# a ground ("too pricey for us, we want the cheap plan" read as a discount on them at 0.98);
# "close" (0.38), "code" (0.35), "data" (0.16) may.
COMMON_WORD = 0.45
# How much likelier under the ground than under the average label such a word must be (e: log 1).
WORD_EVIDENCE = 1.0


def said_in_words_that_mean(reader: acts.ActReader, text: str, reading: acts.Reading) -> bool:
    """One of the message's uncommon words (or a pair or stem with one) was taught the label read
    (a ground, a person asked for) and is likelier under it than under the average label: it is
    asked for in words. A message read on its function words alone ("is there a timeline or gantt
    view for projects or nah": "is there a", "for", "or"; "yes please", "no, not now") takes the
    label whose lines are short and alike (the desk's few discount questions, its lines asking
    for a person), not what is asked."""
    ground = reading.act
    for f in reader.featurize(text):
        if not reader._counts[ground].get(f) or all(acts.commonness(w) >= COMMON_WORD for w in acts.feature_words(f)):
            continue
        average = sum(reader.likelihood(label, f) for label in reader.labels) / len(reader.labels)
        if math.log(reader.likelihood(ground, f) / average) >= WORD_EVIDENCE:
            return True
    return False


# How sure the desk intents reader must be that a message asks for a person (`reads_person_asked`).
# Chosen on route-15's tune half and evals/route-lines-15-tune.jsonl's near lines ("can someone
# explain why my bill is higher", "a stranger is using my account" stay below it).
PERSON_CONFIDENCE = 0.8


def reads_person_asked(text: str) -> bool:
    """The desk intents reader reads the message as a person asked for ("real person pls", "a staff
    member immediately", "escalate this"), learnt from evals/route-lines-15-tune.jsonl beside the
    desk's other intents, and in words that mean it: its short lines' "please", "now", "right"
    alone made answers to offers ("yes please", "no, not now") and "are there any exchange fees"
    read as a person asked for. Read whole, then clause by clause: a trouble told at length
    beside it ("our shared folders are disappearing one after another right now and nobody here is
    doing it. get me a human this minute") drowns the clause that asks (sec17), as a long message
    drowns a disclaimer (`disclaims_action`). A clause alone speaks for the message only when the
    act reader reads it as a request: a letter's "Dear support," reads as a person to the desk
    intents reader, and is a greeting."""
    text = EMAIL.sub(" ", text)
    parts = clauses(text)
    return _person_asked_in(text) or (
        len(parts) > 1 and any(acts.read_act(c).act == "request" and _person_asked_in(c) for c in parts)
    )


@lru_cache(maxsize=4096)
def _person_asked_in(text: str) -> bool:
    reading = acts.read_desk_intent(text)
    return (reading.act == "person" and reading.confidence >= PERSON_CONFIDENCE
            and said_in_words_that_mean(acts.desk_intent_reader(), text, reading))


# Someone else has the account or what opens it: the probability the access reader must give
# ACCESS, among all its topics, for the message to tell it. Chosen on evals/security-12-tune.jsonl
# and the config desk's other tune halves (where a forgotten password, a lost authenticator phone
# told as a sign-in problem and a charge disowned must not read so).
ACCESS_THRESHOLD = 0.5


@lru_cache(maxsize=1)
def access_reader() -> GateReader | None:
    """None when the shipped data predate the access reader (built before it: rebuild them)."""
    part = _data().get("access")
    return SparseReader(part, FEATURES["access"]) if part else None


def access_probability(text: str) -> float:
    reader = access_reader()
    return 0.0 if reader is None else reader.read(EMAIL.sub(" ", text)).share((ACCESS,))


@lru_cache(maxsize=4096)
def tells_access(text: str) -> bool:
    """The message tells of someone else having the account or what opens it (a password known,
    leaked or typed into a fake page, a device gone with the account signed in), in words the
    reader learnt from Banking77's compromised cards and lost phones, CLINC150's frozen accounts
    and the desk's own lines."""
    return access_probability(text) >= ACCESS_THRESHOLD
