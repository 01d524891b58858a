"""The triage router: a small text classifier trained on the desk's own examples.

Features are word unigrams and bigrams plus character n-grams of each word, taken after
the domain lexicon has folded synonyms onto concepts (see lexicon.py). The model is a
multinomial naive Bayes with tf-idf-like down-weighting of features every class shares:
it trains in one pass over a few hundred examples (a few milliseconds, pure Python) and
scores a message in microseconds, which is what lets triage start instantly and `eval
routing` run thousands of messages a second.

Trained models are cached in memory and on disk (under $XDG_CACHE_HOME/supportdesk),
keyed by a hash of the examples, so a desk with other examples gets its own model.
"""

from __future__ import annotations

import hashlib
import json
import math
import operator
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import repeat

from supportdesk.folders import cache_dir
from supportdesk.lexicon import CONCEPTS, normalise
from supportdesk.patterns import LazyPattern

_FORMAT = 9  # bump when features or the model change, so stale disk caches are ignored
_WORD = LazyPattern(r"[a-z][a-z0-9_]*")
# Words that carry no routing signal whatever the desk.
STOPWORDS = frozenset(
    """a an the i me my mine we our you your it its is are was were be been being am to of in
    on at for from by with and or but so if this that these those there here do does did
    have has had will would can could should please hi hello hey thanks thank just
    what why how when where which who whom whose some any something anything possible
    get got need want like know help able also still yet very really""".split()
)
ALPHA = 1.0  # additive smoothing, for the class taught the most
# How a class taught less is smoothed: ALPHA * (its weight of examples / the most taught's) ** this.
# 0 is one pseudo-count for all (an eight-example agent, one defined only in the desk file, loses
# each word a two-hundred-example agent also uses more than it deserves), 1 trusts a handful of
# examples as much as hundreds ("I can't log in" went to the eight-example security agent; from
# 0.15 "I forgot my password" did). Chosen on evals/config-hand-back-tune.jsonl ("someone enter
# in my account, i not do this" reaches security only with it); Banking77 routing is unchanged
# by it (the two shipped agents are taught about as much). Part of the cache key.
SMOOTHING_DAMPING = 0.1
# A class taught little (under SMALL_CLASS of the most taught class's weight of examples: an agent
# with eight examples defined only in the desk file, beside agents with two hundred) is smoothed
# towards the desk's background distribution (Dirichlet smoothing with BACKGROUND_MASS of pseudo
# weight spread as all the examples' features are), not by a uniform pseudo-count: a word its few
# examples never say ("phone", "lost", "profile") then counts about as often as it does in every
# agent's examples together, neither for it nor against it, instead of as a word it would surely
# never hear. Its own examples' words still vote for it (issue 38: security was reached only near
# its examples' words; a stolen laptop or a phone "not mine" went to the technical agent on the
# strength of "phone" and "lost" alone). The agents taught much are smoothed as before, so the
# shipped desk's routing is unchanged. Chosen on the config desk's families (evals/config-agent.toml)
# and tests/test_offline_router.py: from 800 "i can't log in" leans to the technical agent too
# mildly for a two-word message (0.60, triage asks), from 2000 "i just forgot my password" goes to
# security; 600 keeps every passing conversation. Part of the cache key.
BACKGROUND_MASS = 600.0
SMALL_CLASS = 0.25


# How much each kind of feature counts. A word's character pieces share one vote between
# them (so long words do not outvote short ones), and a lexicon concept counts triple: it
# stands for every phrasing of the idea. (Weights chosen on half of a held-out set and
# checked on the other half.)
WORD_WEIGHT = 1.0
CHAR_WEIGHT = 2.0
BIGRAM_WEIGHT = 0.25
CONCEPT_WEIGHT = 3.0


@lru_cache(maxsize=8192)
def _char_pieces(word: str) -> tuple[str, ...]:
    """Character 4- and 5-grams of a word with its boundaries marked ("<char", "arged>")."""
    if len(word) <= 3:
        return ()
    padded = f"<{word}>"
    return tuple("#" + padded[i : i + n] for n in (4, 5) for i in range(len(padded) - n + 1))


# A calendar month named is a date, whatever its letters: "march" is no kin of "search" (its
# character pieces leaned "what did i pay in march" to the app's troubles, issue 38), and the
# examples say "last month", "this month". A month's name votes as the word "month" does, its
# letters not at all. ("may" is left out: it is mostly the verb.)
MONTHS = frozenset(
    """january february march april june july august september october november december
    jan feb febuary mar apr jun jul aug sep sept oct nov dec""".split()
)


@lru_cache(maxsize=8192)
def _word_votes(word: str) -> tuple[tuple[str, float], ...]:
    """The (feature, weight) pairs one word adds, in the order `features` adds them."""
    if word in STOPWORDS:
        return ()
    if word.endswith("_c"):
        return ((word, CONCEPT_WEIGHT),)
    if word.startswith("not_"):
        return ((word, WORD_WEIGHT),)  # a denied word: one vote as its denial, no letters
    if word in MONTHS:
        return _word_votes("month")
    pieces = _char_pieces(word)
    if not pieces:
        return ((word, WORD_WEIGHT),)
    share = CHAR_WEIGHT / len(pieces)
    return ((word, WORD_WEIGHT), *((piece, share) for piece in pieces))


# Denials, read by their grammar (issue 38): what a negation does to the words it governs.
# - A matter denied ("nobody hacked me", "no one broke into anything", "i was not hacked"): a
#   negated subject, or the customer's own negated passive, says the thing did NOT happen, so the words it governs
#   up to the clause's end vote as their denial ("not_hacked"), not as the matter itself.
# - A thing disowned ("i did NOT sign in from brazil", "i never asked for that", "a number i do
#   not know", "that laptop is not mine"): the customer's own doing or owning negated says someone
#   else did it, so the words keep their votes and the message also votes as the concept the
#   desk's examples use for it ("a sign-in I don't recognise", "a login I never made").
# - A thing named with "no" ("no hack or anything"): the noun it determines (and the concept the
#   lexicon reads in it) votes as its denial; the rest of the clause is left alone.
# A concept whose phrasings are themselves a negation ("not working", "not recognise") is what the
# negation says, never denied. Receiving verbs are no doing of the customer's ("i never got the
# email" is a problem, not a disowning); "can not" / "will not" / "does not" are inability, read
# by the lexicon ("not working") and left alone.
_CLAUSE_END = frozenset(".,;:!?")
_SCOPE_END = frozenset({"but", "and", "just", "only", "i", "we", "so", "because", "cause", "though"})
_NEGATED_SUBJECTS = frozenset({"nobody", "noone"})
# The negative determiners: "no hack", and "nothing" before what it names ("nothing suspicious"):
# the thing named did not happen.
_NEGATED_DETERMINERS = frozenset({"no", "nothing"})
_PASSIVE = frozenset({"was", "were"})
_AUXILIARIES = frozenset({"been", "was", "is", "has", "had", "got", "gets"})
_RELATIVE = frozenset({"that", "which"})
# ("im" and "am": the customer's own state, "i'm not hacked", "i am not compromised", config-15)
_COPULA = frozenset({"is", "are", "was", "were", "am", "im"})
_FIRST_PERSON = frozenset({"i", "we"})
# "nobody else can get in", "no one should see it": a wish about who may, no denial of what did
_WISHED = frozenset({"else", "can", "could", "will", "would", "should", "may", "must"})
# "nobody on our team", "no one here", "none of us", "nobody in the office": a negated subject
# narrowed to the customer's own side says none of them did it, so someone outside did: a
# disowning ("nobody on our team started an export", "a webhook none of us ever set up"), where a
# bare negated subject ("nobody hacked me") denies the thing happened (config-18). The words that
# narrow it are a closed class: "here", or a preposition before the customer's side.
_OUR_SIDE_PREPOSITIONS = frozenset({"on", "in", "at", "from", "of"})
_OUR_SIDE = frozenset({"us", "our", "my", "the", "this"})
# what follows the narrowed subject is a deed, not a lack or a wish ("no one here can log in",
# "nobody on the team has access" tell a problem): an auxiliary is passed over to its verb
_PASSED_OVER = frozenset({"ever", "even", "actually", "has", "have", "had", "did"})
_NO_DEED = frozenset({"is", "are", "was", "were", "am", "access", "permission", "permissions", "rights", "idea", "a", "an", "the", "any", "got", "gets", "get", "seems"})
# "when someone mentions me", "if anybody shares a file with us": a person named in a condition is
# anyone at all, whoever does the thing the customer's setting is about, not someone else at work
# in the account: neither the word nor the concept the lexicon reads in it ("someone_c") votes
# (the security agent's and billing's "someone used my card"; config-18: "i simply never get your
# notification emails when someone mentions me" leaned to billing on them).
_ANY_PERSON = frozenset({"someone", "somebody", "anyone", "anybody"})
_CONDITIONS = frozenset({"when", "whenever", "if"})
_WH = frozenset({"what", "why", "how", "where", "when", "who", "which", "if", "whether"})
_OWN = frozenset({"mine", "ours"})
_ARTICLES = frozenset({"a", "an", "any"})
_RECEIVING = frozenset({"get", "got", "gotten", "receive", "received", "recieve", "recieved", "arrive", "arrived", "see", "saw"})
DISOWNED_CONCEPTS = ("someone_c",)
_NOT_DENIED = frozenset(
    f"{concept}_c" for concept, phrases in CONCEPTS.items()
    if any(p.startswith(("not ", "never ", "un")) or " not " in p for p in phrases)
)
def _said_as_negation(tokens: Sequence[str], i: int) -> bool:
    """Whether the concept token at `i` was read from a phrasing that is itself a negation ("not
    working", "unrecognised"): that concept is what the negation says, never denied. The same
    concept read from a plain word ("suspicious") is denied with it ("nothing suspicious")."""
    if tokens[i] not in _NOT_DENIED:
        return False
    before = tokens[max(0, i - 3):i]
    return any(w in ("not", "never") or (w.startswith("un") and not w.endswith("_c")) for w in before)


_TOKEN = LazyPattern(r"[a-z][a-z0-9_]*|[.,;:!?]")


def _narrowed_to_our_side(tokens: Sequence[str], i: int) -> bool:
    """Whether the negated subject at `i` is narrowed to the customer's side and does something
    ("nobody on our team started", "none of us ever set up", "no one here ran")."""
    j = i + 1
    if j < len(tokens) and tokens[j] == "here":
        j += 1
    elif j + 1 < len(tokens) and tokens[j] in _OUR_SIDE_PREPOSITIONS and tokens[j + 1] in _OUR_SIDE:
        # (the side's one noun, "our team", "the office", "my family"; "of us" names none)
        j += 2 if tokens[j + 1] == "us" else 3
    else:
        return False
    while j < len(tokens) and tokens[j] in _PASSED_OVER:
        j += 1
    return j < len(tokens) and tokens[j] not in _CLAUSE_END and tokens[j] not in _WISHED and tokens[j] not in _NO_DEED


def read_denials(tokens: Sequence[str]) -> tuple[list[str], bool]:
    """`tokens` (words and clause punctuation) as words, those a denial governs as "not_<word>",
    and whether the message disowns something (see above)."""
    words: list[str] = []
    denied = False
    disowns = False
    determined: set[int] = set()
    n = len(tokens)
    for i, t in enumerate(tokens):
        if t in _CLAUSE_END:
            denied = False
            continue
        prev = tokens[i - 1] if i else ""
        nxt = tokens[i + 1] if i + 1 < n else ""
        if denied and t in _SCOPE_END:
            denied = False
        negated_subject = t in _NEGATED_SUBJECTS or (t == "one" and prev == "no") or (t == "none" and nxt == "of")
        if negated_subject and nxt not in _WISHED and (_RELATIVE.intersection(tokens[max(0, i - 2):i]) or _narrowed_to_our_side(tokens, i)):
            # "an api token that no one on the team made", "a rule which nobody added": the thing
            # is there and the negated subject, in a clause about it, says none of the customer's
            # side made it, so someone else did: a disowning, as "a login i never made" is
            disowns = True
            words.append(t)
            continue
        if (t in _NEGATED_SUBJECTS or (t == "one" and prev == "no") or (t == "nothing" and nxt in _AUXILIARIES)) and nxt not in _WISHED:
            # ("nothing's been hacked": "nothing" the subject of what did not happen, as "nobody" is)
            denied = True
            words.append(t)
            continue
        # ("this isn't about a scam email": what the clause is about, denied as "not a" denies it)
        after_about = 1 if t == "not" and nxt == "about" else 0
        article = tokens[i + 1 + after_about] if i + 1 + after_about < n else ""
        negated_article = t == "not" and article in _ARTICLES and i + 2 + after_about < n and tokens[i + 2 + after_about] not in STOPWORDS and tokens[i + 2 + after_about] not in _CLAUSE_END
        if (t in _NEGATED_DETERMINERS and nxt != "one" and nxt not in STOPWORDS and nxt not in _CLAUSE_END) or negated_article:
            # "no" as a determiner ("no hack or anything"), or "not" before an article ("this isnt a
            # hacking thing", the same denial): the thing it names did not happen; only that noun
            # (and the concept the lexicon reads in it) is denied, not the clause
            words.append(t)
            j = i + 2 + after_about if negated_article else i + 1
            nouns = 0
            while j < n and tokens[j] not in _CLAUSE_END and (nouns == 0 or tokens[j].endswith("_c")):
                nouns += 1
                j += 1
            determined = set(range(j - nouns, j))
            continue
        if (t in _ANY_PERSON and prev in _CONDITIONS) or (t == "someone_c" and prev in _ANY_PERSON and i >= 2 and tokens[i - 2] in _CONDITIONS):
            continue  # anyone, in a condition (see _ANY_PERSON)
        if i in determined:
            words.append(t if _said_as_negation(tokens, i) else "not_" + t)
            continue
        if t == "not" and prev in _PASSIVE and i >= 2 and tokens[i - 2] in _FIRST_PERSON and nxt.endswith("ing"):
            # "i wasn't trying to sign in", "we were not using it": the customer's own doing going
            # on, negated, as "i did not" is: someone else's doing (config-18), no passive denied
            disowns = True
        elif t == "not" and prev in _PASSIVE and i >= 2 and tokens[i - 2] in _FIRST_PERSON:
            denied = True
            words.append(t)
            continue
        if t == "not" and prev in _COPULA and i + 2 < n and tokens[i + 2].endswith("_c") and tokens[i + 2] not in _NOT_DENIED:
            # "my account is not compromised": a state the lexicon reads as a concept, said not to
            # hold; the word and its concept are denied as "no hack" denies its noun (route-14)
            words.append(t)
            determined = {i + 1, i + 2}
            continue
        if t in ("not", "never") and not denied:
            # the customer's own doing ("i did not", "i never", "we have not") or owning negated
            subject = tokens[i - 2] if t == "not" and i >= 2 else prev
            if subject not in _FIRST_PERSON and i >= 2 and tokens[i - 2] not in _CLAUSE_END:
                # one word between the customer and their verb ("i definitely did not", "i honestly
                # never"): the subject is the word before it
                subject = tokens[i - 3] if t == "not" and i >= 3 else tokens[i - 2]
            helper = prev if t == "not" else "did"
            verb = nxt
            if verb in _OWN or (verb == "one" and tokens[i + 2 : i + 4] in (["of", "mine"], ["of", "ours"])):
                # "it isn't mine", "it isn't one of mine": owning negated, one of a kind or not
                disowns = True
            elif subject in _FIRST_PERSON and helper in ("did", "have", "had", "never", "do") and verb not in _RECEIVING:
                # "a number i do not know" disowns; "i do not know what this charge is" asks
                after = tokens[i + 2] if i + 2 < n else ""
                # "a browser i do not use", "a phone i dont own": a thing named, then the customer's
                # own use of it denied with nothing after the verb (the thing is its object, said
                # before it: a relative clause), disowns that thing as "a number i do not know" does;
                # "i do not use the app" (an object after the verb) and ", i dont understand" (no
                # thing before) tell a habit or a state, no one else's doing
                thing = tokens[i - 3] if i >= 3 else ""
                relative = (after == "" or after in _CLAUSE_END) and thing not in STOPWORDS and thing not in _CLAUSE_END and thing != ""
                if helper != "do" or (verb in ("know", "recognise", "recognize") and after not in _WH) or relative:
                    disowns = True
            elif t == "never" and prev in _FIRST_PERSON and verb not in _RECEIVING:
                disowns = True
        if denied and t not in STOPWORDS and t not in _NOT_DENIED:
            words.append("not_" + t)
        else:
            words.append(t)
    return words, disowns or _owns_another(tokens)


# A thing of one kind seen, and the customer's own thing of that kind named otherwise ("a session
# from an android phone, i have an iphone", "a login from a chromebook, i only use a macbook"):
# the thing seen is not theirs, so the message disowns it as "that phone is not mine" does. The
# kind is the lexicon's concept both nouns read as (the concept follows its noun in the tokens);
# what the customer owns is told by their own verb of having or using with the noun as its object.
# The other thing is brought in as new, with "a", "an" or "some"; one said to be the customer's
# too ("my phone") or referred back to ("the phone") is no other thing: "i have an iphone and the
# app crashes on my phone" disowns nothing, nor "i got a new phone and my old phone has the codes"
# (one noun said twice names no other thing).
_OWNING = frozenset({"have", "use", "own"})
_OWNING_BEFORE = frozenset({"only", "just", "do", "also", "still", "actually"})
_THEIRS = frozenset({"my", "our", "mine", "ours"})
_DETERMINERS = frozenset({"the", "this", "that", "from", "on", "of", "in", "some"})
# the other thing is one brought in as new ("an android phone", "some tablet"), not one referred
# back to ("the phone": the customer's own, said before)
_NEW_THING = frozenset({"a", "an", "some", "another"})


def _noun_phrase(tokens: Sequence[str], concept_at: int) -> tuple[tuple[str, ...], str]:
    """The words before a concept back to its determiner, and that determiner ("" if none)."""
    j = concept_at - 1
    phrase: list[str] = []
    while j >= 0 and len(phrase) < 3 and tokens[j] not in _CLAUSE_END and not tokens[j].endswith("_c"):
        if tokens[j] in _ARTICLES or tokens[j] in _THEIRS or tokens[j] in _DETERMINERS or tokens[j] in _NEW_THING:
            return tuple(reversed(phrase)), tokens[j]
        phrase.append(tokens[j])
        j -= 1
    return tuple(reversed(phrase)), ""


def _owns_another(tokens: Sequence[str]) -> bool:
    owned: dict[str, set[tuple[str, ...]]] = {}
    for i, t in enumerate(tokens):
        if t not in _OWNING or i == 0:
            continue
        k = i - 1
        while k > 0 and tokens[k] in _OWNING_BEFORE:
            k -= 1
        if tokens[k] not in _FIRST_PERSON:
            continue
        for c in range(i + 1, min(i + 5, len(tokens))):
            if tokens[c] in _CLAUSE_END:
                break
            if tokens[c].endswith("_c"):
                owned.setdefault(tokens[c], set()).add(_noun_phrase(tokens, c)[0])
                break
    if not owned:
        return False
    for c, t in enumerate(tokens):
        if t in owned:
            phrase, determiner = _noun_phrase(tokens, c)
            if phrase and determiner in _NEW_THING and phrase not in owned[t]:
                return True
    return False


def denials(text: str) -> tuple[list[str], bool]:
    """`read_denials` of a message as the router reads it (normalised: the lexicon's concepts in)."""
    return read_denials(_TOKEN.findall(normalise(text)))


def features(text: str, read_disowning: bool = False) -> dict[str, float]:
    """The weighted features of one message (a customer's, read for what it disowns, when
    `read_disowning`: see `message_features`)."""
    words, disowns = denials(text)
    if disowns and read_disowning and "unrecognised_c" not in words:
        # (what the lexicon already reads as not recognised says it: "logins i do not recognise")
        words.extend(c for c in DISOWNED_CONCEPTS if c not in words)
    out: dict[str, float] = {}
    get = out.get
    # Each word's votes are worked out once per word (_word_votes), then added in order: the
    # same sums, in the same order, as adding them one by one.
    for w in words:
        for feature, weight in _word_votes(w):
            out[feature] = get(feature, 0.0) + weight
    for a, b in zip(words, words[1:]):
        if a not in STOPWORDS or b not in STOPWORDS:
            bigram = f"{a}+{b}"
            out[bigram] = get(bigram, 0.0) + BIGRAM_WEIGHT
    return out


def message_features(text: str) -> dict[str, float]:
    """A customer's message's features: a disowning in it also votes as "someone" (another's
    doing, the concept the examples use for it). Examples are trained on their words alone: the
    desk's examples disown mostly charges ("a payment I never made"), and their words already say
    so; taught "someone" too, every disowned sign-in or message leaned towards billing."""
    return features(text, read_disowning=True)


@dataclass(frozen=True)
class Prediction:
    label: str
    # Posterior-like probability of the label among the candidates (0..1).
    confidence: float
    # How many of the message's features the model had seen in training.
    known_features: int
    scores: dict[str, float]
    # Each candidate's share of that probability (the label's is `confidence`).
    shares: dict[str, float] = field(default_factory=dict)


class TextClassifier:
    def __init__(self, log_prior: dict[str, float], log_prob: dict[str, dict[str, float]], log_unseen: dict[str, float]):
        self.labels = sorted(log_prior)
        self._log_prior = log_prior
        self._log_prob = log_prob
        self._log_unseen = log_unseen
        self._vocabulary = frozenset(f for table in log_prob.values() for f in table)

    # --- training ------------------------------------------------------------------------

    @classmethod
    def train(cls, examples: Mapping[str, Sequence[str]]) -> TextClassifier:
        counts: dict[str, Counter[str]] = {}
        doc_freq: Counter[str] = Counter()
        for label, texts in examples.items():
            c: Counter[str] = Counter()
            for text in texts:
                feats = features(text)
                for f, w in feats.items():
                    c[f] += w  # type: ignore[assignment]  # weights are floats: a Counter adds them fine
                doc_freq.update(feats.keys())
            counts[label] = c
        n_docs = sum(len(t) for t in examples.values()) or 1
        # Inverse document frequency: character pieces of common words ("<the", "ing>") say
        # little; a feature seen in few examples but all of one class says a lot.
        idf = {f: math.log(1 + n_docs / df) for f, df in doc_freq.items()}
        vocab = len(idf) or 1
        log_prior: dict[str, float] = {}
        log_prob: dict[str, dict[str, float]] = {}
        log_unseen: dict[str, float] = {}
        weighted_by = {label: {f: n * idf[f] for f, n in c.items()} for label, c in counts.items()}
        mass = {label: sum(w.values()) for label, w in weighted_by.items()}
        largest = max(mass.values(), default=0.0) or 1.0
        # every agent's examples together: where a class taught little is smoothed towards
        everything: dict[str, float] = {}
        for table in weighted_by.values():
            for f, w in table.items():
                everything[f] = everything.get(f, 0.0) + w
        all_mass = sum(mass.values()) or 1.0
        background = {f: w / all_mass for f, w in everything.items()}
        for label, weighted in weighted_by.items():
            # Smoothing in step with how much the class was taught, damped: with one pseudo-count
            # for every class, an agent with eight examples (one defined only in the desk file)
            # is drowned by it, and loses every word a class with two hundred examples also uses.
            alpha = ALPHA * (max(mass[label], 1e-9) / largest) ** SMOOTHING_DAMPING
            total = mass[label] + alpha * vocab
            log_prior[label] = math.log(max(len(examples[label]), 1) / n_docs)
            log_unseen[label] = math.log(alpha / total)
            if BACKGROUND_MASS and mass[label] < SMALL_CLASS * largest:
                mu = BACKGROUND_MASS
                log_unseen[label] = math.log(alpha / (total + mu))
                log_prob[label] = {f: math.log((weighted.get(f, 0.0) + alpha + mu * b) / (total + mu)) for f, b in background.items()}
            else:
                log_prob[label] = {f: math.log((w + alpha) / total) for f, w in weighted.items()}
        return cls(log_prior, log_prob, log_unseen)

    # --- prediction ----------------------------------------------------------------------

    def predict(self, text: str, candidates: Iterable[str] | None = None) -> Prediction:
        labels = [l for l in (candidates or self.labels) if l in self._log_prior] or self.labels
        feats = message_features(text)
        vocabulary = self._vocabulary
        known = [f for f in feats if f in vocabulary]
        weights = [feats[f] for f in known]
        scores: dict[str, float] = {}
        for label in labels:
            table = self._log_prob[label]
            unseen = self._log_unseen[label]
            # Only features some class has seen vote; the prior is not used because the desk's
            # example counts say nothing about how often customers write about each topic.
            # (The products summed in the features' order, as a loop over them would.)
            scores[label] = sum(map(operator.mul, weights, map(table.get, known, repeat(unseen, len(known)))))
        best = max(labels, key=lambda l: (scores[l], l))
        # Per-feature average log-odds -> a calibrated-enough confidence for "should I ask?".
        n = max(sum(weights), 1.0)
        top = scores[best]
        spread = {label: math.exp((s - top) / math.sqrt(n)) for label, s in scores.items()}
        z = sum(spread.values())
        return Prediction(best, 1.0 / z, len(known), scores, {label: e / z for label, e in spread.items()})

    # --- persistence ---------------------------------------------------------------------

    def to_json(self) -> dict:
        return {
            "format": _FORMAT,
            "log_prior": self._log_prior,
            "log_prob": self._log_prob,
            "log_unseen": self._log_unseen,
        }

    @classmethod
    def from_json(cls, data: dict) -> TextClassifier:
        if data.get("format") != _FORMAT:
            raise ValueError("stale classifier cache")
        return cls(data["log_prior"], data["log_prob"], data["log_unseen"])


# --- caching -------------------------------------------------------------------------------

_MEMORY: dict[str, TextClassifier] = {}


def examples_key(examples: Mapping[str, Sequence[str]]) -> str:
    # The lexicon is part of the features: a model trained before a concept was added would
    # never see it (the words it folds read as unknown), so a changed lexicon is a new model.
    blob = json.dumps(
        {"format": _FORMAT, "lexicon": CONCEPTS, "damping": SMOOTHING_DAMPING, "background": [BACKGROUND_MASS, SMALL_CLASS], "examples": {k: list(v) for k, v in sorted(examples.items())}},
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def classifier_for(examples: Mapping[str, Sequence[str]], use_disk: bool = True) -> TextClassifier:
    """The trained classifier for these examples: from memory, disk, or trained now."""
    key = examples_key(examples)
    cached = _MEMORY.get(key)
    if cached is not None:
        return cached
    path = cache_dir() / f"router-{key}.json"
    model: TextClassifier | None = None
    if use_disk:
        try:
            model = TextClassifier.from_json(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            model = None
    if model is None:
        model = TextClassifier.train(examples)
        if use_disk:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps(model.to_json()), encoding="utf-8")
                os.replace(tmp, path)  # atomic: a reader never sees half a file
            except OSError:
                pass  # a read-only cache dir only costs the next start-up a few ms
    _MEMORY[key] = model
    return model
