"""Triage's routing decision: which handoff target a message belongs with, or "ask".

The classifier is trained on every handoff target's `examples` (falling back to its
description when it has none), so another desk with other agents routes its own way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from supportdesk.config import AgentConfig
from supportdesk.models.offline.classifier import SMALL_CLASS, STOPWORDS, Prediction, TextClassifier, classifier_for, denials, examples_key
from supportdesk.models.offline.cues import CHARGE_ID, names_money_literally, reassures, without_introduction
from supportdesk.models.offline.slots import CUSTOMER_ID, extract_amounts
from supportdesk.models.offline.kept import keep
from supportdesk.lexicon import normalise
from supportdesk.readers import gates
from supportdesk.patterns import LazyPattern

_WORD = LazyPattern(r"[a-z][a-z0-9_]*")

# When is triage unsure enough to ask instead of guessing? The two classes are near a
# coin toss, or the message holds (almost) nothing the examples know, or it is very short
# and only mildly leaning one way ("my account", "can you process that?").
MIN_CONFIDENCE = 0.52
SHORT_MESSAGE_WORDS = 2
SHORT_MESSAGE_CONFIDENCE = 0.6


@dataclass(frozen=True)
class Route:
    agent: str | None  # None: ask a clarifying question
    confidence: float
    prediction: Prediction | None


def content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(normalise(text)) if w not in STOPWORDS and not w.endswith("_c")]


def training_examples(targets: Sequence[AgentConfig]) -> dict[str, list[str]]:
    """Each agent's examples and its description, one more example: what the desk file says
    an agent is for feeds the router alike for built-in and config-only agents."""
    return {a.name: [*a.examples, a.description] if a.examples else [a.description, a.title] for a in targets}


# An example one agent holds that the model taught by every agent's examples (that example
# included, so it leans its own way) still places with another agent this surely is that agent's:
# a desk file that adds a `security` agent ("my account has been compromised") hears the technical
# agent's "I think my account was hacked" as its own, without anyone editing the technical agent's
# list, so no example of the built-in agents outranks the new agent's own description (issue 38).
# Moved, not taught to both (security-9): kept with the technical agent too, "hacked" and
# "someone" stayed half its words, and a stranger's sign-in told beside a phone or a password
# leaned to it ("the recovery phone number on my account got swapped to a number i dont know").
# A denial still keeps a how-to where it was: "no hack or anything, i just want to change my
# password" (classifier.read_denials). On the shipped desk no example is that sure of another
# agent (the closest, 0.54), so its routing is unchanged; on evals/config-agent.toml two examples
# move to security (0.99 each).
CEDE_CONFIDENCE = 0.95


# The examples each desk's router was taught, by the key of the examples it was given: every desk
# opened in a process (an eval opens one a conversation) reads its examples once, not each time.
_CEDED: dict[str, dict[str, list[str]]] = {}
DESKS_KEPT = 16


def ceded(examples: dict[str, list[str]], use_disk: bool = True) -> dict[str, list[str]]:
    """`examples` with each example the desk's own model places surely with another agent
    moved to that agent."""
    key = examples_key(examples)
    known = _CEDED.get(key)
    if known is None:
        known = keep(_CEDED, key, _ceded(examples, use_disk), DESKS_KEPT)
    return {label: list(texts) for label, texts in known.items()}


def _ceded(examples: dict[str, list[str]], use_disk: bool) -> dict[str, list[str]]:
    model = classifier_for(examples, use_disk=use_disk)
    out = {label: list(texts) for label, texts in examples.items()}
    labels = list(examples)
    for label, texts in examples.items():
        for text in texts:
            p = model.predict(text, labels)
            if p.label != label and p.confidence >= CEDE_CONFIDENCE:
                out[p.label].append(text)
                if len(out[label]) > 1:  # (an agent keeps one example at least)
                    out[label].remove(text)
    return out


# How many recent (text, candidates) routes a router remembers. A turn routes its customer's
# message more than once (triage, then the specialist telling topics apart), each time the same
# pure function of the same text; a few hundred covers every turn in flight in one worker.
ROUTES_KEPT = 256


# Who the customer writes to and who they are say nothing of which agent a matter is for: every
# agent serves the desk's own company ("acme", in the config desk's technical examples a dozen
# times and in the security agent's ten never, leaned "my ex knows my login and keeps getting into
# my acme" to the technical agent), and an account id says who writes, as an email does (the
# normaliser already drops emails; "CUS-1005" voted as "number", the phone number's word). The
# words of the desk's name and the customer and charge ids are taken out of a message before it
# is routed (issue 38, security-9).
# (A word of the name that says what an agent is for, in its title or description, is kept: a
# desk called "Acme Billing" still routes "billing".)
def name_pattern(name: str, targets: Sequence[AgentConfig] = ()) -> re.Pattern[str] | None:
    jobs = {w for a in targets for w in _WORD.findall(f"{a.title} {a.description}".lower())}
    words = sorted({w for w in _WORD.findall(name.lower()) if len(w) >= 3} - jobs, key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b", re.IGNORECASE) if words else None


def without_names(text: str, names: re.Pattern[str] | None) -> str:
    """`text` without the desk's own name's words and the account and charge ids in it."""
    text = CHARGE_ID.sub(" ", CUSTOMER_ID.sub(" ", text))
    return names.sub(" ", text) if names is not None else text


# A price written bare ("my amex shows an acme 9.99 dated the 25th that i can't place") is an amount
# of money as "$9.99" is, which the lexicon marks "amount" (billing's word, 3.4 against technical's),
# when the message speaks of money: the rule that reads a number with cents as an amount when one
# was asked for (slots.extract_amounts, asked) reads it so when the money reader hears money in the
# message (gates.reads_money); a version ("4.12") or a size beside no money stays a number. Read
# bare, "9.99" voted as "number" and the card's and "can't"'s words placed the unplaced charge with
# technical (0.55; config-18). The reader is asked only when a bare number with cents is there.
def with_bare_amount(text: str) -> str:
    """`text`, with the word "amount" added when it names a price without a currency in words of money."""
    if "amount" in normalise(text).split() or extract_amounts(text) or not extract_amounts(text, asked=True):
        return text
    return f"{text} (amount)" if gates.reads_money(text) else text


# "Switch" with "on" or "off" after it toggles a setting ("where do i switch on 2fa", "switched
# off my notifications"): the phrasal verb is "turn on/off", no plan switched. Read as "switch" the
# desk's plan switches pull it to billing (0.80 for "where do i switch on 2fa", a setting's place;
# understand-held-28). English grammar, a closed class (the particle right after, or after "it"/"them").
_TOGGLE = LazyPattern(r"\bswitch(ed|es|ing)?(?=\s{1,3}(?:(?:it|them|this|that)\s{1,3})?(?:on|off)\b)", re.IGNORECASE)
_TURNED = {None: "turn", "ed": "turned", "es": "turns", "ing": "turning"}


def with_toggles_turned(text: str) -> str:
    """`text` with "switch on/off" read as "turn on/off" (in the same form: "switched" -> "turned")."""
    return _TOGGLE.sub(lambda m: _TURNED[m.group(1) and m.group(1).lower()], text) if "switch" in text.lower() else text


# A web address dressed up as the desk's: the desk's own name joined by hyphens to other words
# ("pay at acme-billing-help.xyz", "renew at acme-storage-renew.top") is how a message passing
# for ours sends a customer elsewhere, whatever it asks them to do there (pay an invoice, renew
# storage: money words the money reader hears; config-17). An address is a thing rules read well,
# as an email is; the desk's real addresses do not join its name to other words with hyphens.
# (Read before the name's words are taken out of the message for routing.)
_HOST = LazyPattern(r"(?<![\w@.-])(?:[a-z0-9-]+\.)+[a-z]{2,}\b", re.IGNORECASE)


def dressed_up_address(text: str, desk_name: str) -> bool:
    """Whether `text` names a web address that joins a word of the desk's name to other words."""
    name = {w for w in _WORD.findall(desk_name.lower()) if len(w) >= 3}
    for host in _HOST.findall(text.lower()):
        # (the name's own words hyphenated, "acme-cloud.com", is the desk's name, joined to nothing)
        if any(name.intersection(label.split("-")) and set(label.split("-")) - name for label in host.split(".")[:-1]):
            return True
    return False



# A device the customer does not own, seen on the account (config19): "acme shows 'last active on
# Android phone', but I have only iPhone", "a pixel logged in to my account, never had a pixel" is a
# stranger's session told by the device alone. The learned access reader heard it in some words
# (a tablet on the devices list) and not in others (0.13 for the Android told in non-native
# English), and the word model heard the technical agent's phone and app words in it (1.0). Three
# things read by rule, as an address is: the account's own record of where it is used (sessions,
# devices, last active, signed in), a device named, and the customer disowning a device (only
# having another, never having had one, none at home). Each alone is a how-to ("which devices can
# i use", "i only have an iphone, is there an app?"); together they are someone else's way in.
_ACCOUNT_RECORD = LazyPattern(
    r"\b(?:last\s+(?:active|seen|used|login|sign[\s-]?in)|active\s+now|sessions?|devices?\s+list|"
    r"(?:my|the|our)\s+devices|login\s+history|sign[\s-]?in\s+history|activity|"
    r"(?:logged|signed|signing|logging)\s+in(?:to)?|sign[\s-]?ins|logins)\b",
    re.I,
)
_DEVICE = LazyPattern(
    r"\b(?:android|iphone|ipad|pixel|samsung|galaxy|huawei|xiaomi|oneplus|windows|mac|macbook|imac|linux|"
    r"ubuntu|chromebook|tablet|phone|laptop|pc|computer|desktop|device)s?\b",
    re.I,
)
_DISOWNS_DEVICE = LazyPattern(
    r"\b(?:(?:i|we)\s+(?:(?:only|just)\s+)?(?:have|own|use|got|possess)\s+only|"
    r"(?:i|we)\s+(?:only|just)\s+(?:have|own|use|got|possess)|"
    r"(?:never|not\s+ever)\s+(?:had|owned|have|own|used|bought)|"
    r"(?:don'?t|dont|do\s+not|didn'?t|didnt|did\s+not)\s+(?:have|own|possess)\s+(?:an?|any|one)\b|"
    r"no\s+\w{2,20}(?:\s+\w{2,20})?\s+(?:in|at)\s+(?:my|our|the)\s+(?:house|home|family|flat|place))",
    re.I,
)


def device_not_owned(text: str) -> bool:
    """Whether `text` tells of a device the customer does not own seen on the account (`_DISOWNS_DEVICE`)."""
    return bool(_ACCOUNT_RECORD.search(text) and _DEVICE.search(text) and _DISOWNS_DEVICE.search(text))

# Someone else having the account or what opens it (a password known to a flatmate, leaked on a
# forum or typed into a fake page, a laptop gone with the account signed in) is told in words no
# handful of examples holds, and the word model hears the technical agent's password, login and
# device words in it (issue 38.4). The learned access reader (readers/gates.py `tells_access`)
# reads that kind, and the message goes to the agent whose own examples (and description) tell of
# it: the one agent taught little (fewer than the classifier's SMALL_CLASS of the most taught
# agent's examples: one defined only in the desk file, beside built-in agents with two hundred)
# the reader reads at least OWNER_SHARE of whose examples as someone else's access. That agent is
# found in the desk file's words, never by its name. An agent taught much holds the words of its
# matters itself, and the shipped desk has none taught little, so its routing is unchanged and its
# router never loads the reader; on evals/config-agent.toml the security agent is the one. A
# message that speaks of money (gates.reads_money: "someone has my card number and is paying for
# things with it") stays the router's.
OWNER_SHARE = 0.5
_OWNERS: dict[str, str | None] = {}


def access_owner(examples: dict[str, list[str]]) -> str | None:
    """The one agent taught little whose examples mostly tell of someone else having the account,
    or None (without reading anything when no agent is taught little)."""
    key = examples_key(examples)
    if key not in _OWNERS:
        largest = max((len(texts) for texts in examples.values()), default=0)
        owners = [
            label for label, texts in examples.items()
            if texts and len(texts) < SMALL_CLASS * largest
            and sum(gates.tells_access(t) for t in texts) >= OWNER_SHARE * len(texts)
        ]
        keep(_OWNERS, key, owners[0] if len(owners) == 1 else None, DESKS_KEPT)
    return _OWNERS[key]


# What a message the customer received asks of them ("an email 'from acme' asking me to reply with
# my card number and pin", "someone texted me as acme wanting the 3 digits on the back"): the
# sender's ask, not the customer's. Its card or payment words are the bait, so money read only in
# it is no money matter (understand-held-29 config, route20: the learned money gate heard the card
# number and left the phishing with the word model, which placed it with the technical agent). A
# closed class of grammar: who or what sent it (kept), then a verb of asking; the ask (taken out)
# runs to the clause's end.
_REPORTED_ASK = LazyPattern(
    r"(\b(?:e-?mails?|mails?|texts?|sms|messages?|msgs?|whatsapps?|calls?|dms?|letters?|someone|somebody|they)\b"
    r"[^.?!,;]{0,60}?)\b(?:ask(?:s|ed|ing)|want(?:s|ed|ing)|request(?:s|ed|ing)|demand(?:s|ed|ing)|(?:tell|told|telling) me to)\b"
    r"[^.?!,;]{0,160}",
    re.I,
)


def _money_only_asked_of_them(text: str) -> bool:
    """A received message's ask holds the message's money (`_REPORTED_ASK`): with it taken out, no
    amount, id, plan, period or card number is left (the rules: the learned gate reads money in a
    fragment as short as "i just got an email", 0.83)."""
    rest = _REPORTED_ASK.sub(r"\1", text)
    return rest != text and not names_money_literally(rest)


def _tells_access_without_money(text: str) -> bool:
    """The message tells of someone else's access and names no money, or money is read only
    beside it: a clause of its own tells the access, naming no money ("weird email asking me to
    verify my account or it gets closed. didnt click anything. is that from you?": the last
    question reads as a charge's to the money gate, the message as a whole as money; config-15).
    "someone has my card number and is paying for things with it" tells both in one clause: the
    router's, as before."""
    if not gates.tells_access(text):
        return False
    if not gates.reads_money(text) or _money_only_asked_of_them(text):
        return True
    parts = gates.clauses(text)
    return len(parts) > 1 and any(gates.tells_access(c) and not gates.reads_money(c) for c in parts)


# Words that announce a new matter before saying it ("another question: ...", "other thing -",
# "unrelated, ...", "diff topic, ..."): a closed class of discourse markers, as the words that
# open a condition are (readers/acts.py _CONDITION), naming no matter. The word model heard them
# as the agent taught the fewest examples (a word none of its examples says costs it least:
# "another question" leaned 0.90 to a config-only security agent), and the matter after them
# lost its lean ("another question: how much is pro per year?" 0.55 to billing, 0.91 without;
# reset15). What follows them is routed; so is what follows the count of matters to come.
_ANNOUNCED = LazyPattern(
    r"^\W*(?:(?:ok(?:ay)?|so|and|oh|also|but|thx|thanks)\W+)*"
    r"(?:(?:(?:an)?other|different|diff|separate|unrelated|new|next|second|one\s+more|"
    # how many matters follow ("two things: ...", "2 questions about the reset mail: ..."): their
    # count names none of them ("two" read as the two-factor article's word; tech-20)
    r"two|three|2|3|(?:a\s+)?(?:couple|few)(?:\s+of)?)\s+"
    r"(?:question|q|thing|topic|issue|matter|point|subject)s?|unrelated)\b[\s:,.;!\-\u2013\u2014]*",
    re.I,
)


def without_announcement(text: str) -> str:
    """The message without words that only announce a new matter (`_ANNOUNCED`), when more follows."""
    found = _ANNOUNCED.match(text)
    rest = text[found.end():] if found else ""
    return rest if re.search(r"[a-z]{2}", rest, re.I) else text


# An alarm set aside is not the matter (understand-held-29 config, route20): "the new login alert
# was me on my new laptop, no worries there. what i need is my february invoice" names a sign-in's
# words in a clause that only owns it, and they pulled the message to the technical agent (0.82)
# though the invoice is all it asks. A clause that owns what was seen (cues.reassures) names no
# agent's matter, and the message is placed on the rest, when the rest says something.
def without_reassurance(text: str) -> str:
    """`text` without the clauses that own what was seen (`cues.reassures`), when one with words is left."""
    parts = gates.clauses(text)
    if len(parts) < 2:
        return text
    kept = [c for c in parts if not reassures(c)]
    if len(kept) == len(parts) or not any(content_words(c) for c in kept):
        return text
    return ". ".join(kept)


# A denial is not the matter (issue 38, config-17): "it's not a phishing thing, i simply never get
# your notification emails", "this isn't about a scam email. your emails ... stopped arriving". The
# clause that denies something names the very words of the matter denied (phishing, scam), and
# read with the rest it pulled the message to the agent whose matter that is, the word model's
# and the access reader's alike. A clause the denial reading (classifier.read_denials) finds
# denying a thing, whose words alone place it with the agent whose examples tell of someone
# else's access (`access_owner`), is read as a clause of its own and left out, when another
# clause is left to say the matter; a message that is only a denial ("nobody hacked me") is read
# whole, as before. A denial of anything else is left in: "no transactions are being accepted,
# what's wrong with my card?" tells its trouble in it, and the shipped desk (no agent taught
# little) reads every message whole as before.
# The clause is placed on what it denies, its words with the denial undone: read as the denial
# reading gives them ("not_phishing"), the denied words are words no example holds, and "it's not a
# phishing thing" leaned to the technical agent on "thing" alone (0.34), "not a security issue" to
# billing, so the clause stayed in and its denied word pulled the whole message to the security
# agent (config-18).
_NEGATIONS = frozenset({"not", "no", "never"})


def _denied(clause: str) -> str:
    """`clause` with its denial undone ("it's a phishing thing" for "it's not a phishing thing"), or
    "" when it denies nothing or disowns something (someone else's doing is the matter, not a
    denial of it). (The lexicon's concepts are left out: placing the words reads them again.)"""
    words, disowns = denials(clause)
    if disowns or not any(w.startswith("not_") for w in words):
        return ""
    return " ".join(w.removeprefix("not_") for w in words if w not in _NEGATIONS and not w.endswith("_c"))


def _unsure(text: str, p: Prediction) -> bool:
    """The words place the message too little to route it on them (it is asked about, or placed
    by `Router.best` after a question)."""
    return (
        p.known_features == 0
        or p.confidence < MIN_CONFIDENCE
        or (len(content_words(text)) <= SHORT_MESSAGE_WORDS and p.confidence < SHORT_MESSAGE_CONFIDENCE)
    )


class Router:
    def __init__(self, targets: Sequence[AgentConfig], use_disk_cache: bool = True, desk_name: str = ""):
        self.targets = [a.name for a in targets]
        self._names = name_pattern(desk_name, targets)
        self._desk_name = desk_name
        self._examples = ceded(training_examples(targets), use_disk=use_disk_cache)
        self.model: TextClassifier = classifier_for(self._examples, use_disk=use_disk_cache)
        self._routes: dict[tuple[str, tuple[str, ...]], Route] = {}
        self._owner: list[str | None] = []  # access_owner(self._examples), found on first need

    @property
    def access_owner(self) -> str | None:
        """The agent whose examples tell of someone else's access (`access_owner`), or None."""
        if not self._owner:
            self._owner.append(access_owner(self._examples))
        return self._owner[0]

    def by_rule(self, text: str) -> bool:
        """Someone else's way in read by rule: an address dressed up as ours, a device not owned."""
        return dressed_up_address(text, self._desk_name) or device_not_owned(text)

    def access_agent(self, text: str, candidates: Sequence[str] | None = None) -> str | None:
        """The candidate whose examples tell of someone else's access, when the message does (and
        names no money), or None."""
        dressed_up = self.by_rule(text)
        text = without_names(without_introduction(text), self._names)
        return self._access_agent(text, self.targets if candidates is None else candidates, dressed_up)

    def _access_agent(self, text: str, candidates: Sequence[str], dressed_up: bool = False) -> str | None:
        owner = self.access_owner
        if owner is None or owner not in candidates or not (dressed_up or _tells_access_without_money(text)):
            return None
        return owner

    def without_denials(self, text: str) -> str:
        """`text` without its clauses that deny the access owner's matter (`_denies`, placed with
        the owner on their own words), when a clause with words is left."""
        owner = self.access_owner
        parts = gates.clauses(text) if owner is not None else []
        if len(parts) < 2:
            return text
        kept = [c for c in parts if not ((denied := _denied(c)) and self.model.predict(denied, self.targets).label == owner)]
        if len(kept) == len(parts) or not any(content_words(c) for c in kept):
            return text
        return ". ".join(kept)

    def _without_denied_owner(self, text: str, candidates: list[str]) -> list[str]:
        """`candidates` without the agent whose examples tell of someone else's access, when the
        message denies something ("my account's safe, nothing weird happened - i just want a longer
        password", "nobody's messing with my account, but chrome forgets my login"), disowns
        nothing, and the access reader reads no one else's access in it: a denial of that matter
        leaves the message's own words (a password, a login, a browser) to the agents they are
        for, where the word model heard the denied matter's words and the owner's few examples
        said "account" and "password" too (route-14). (Read on the message as routed: names out.)"""
        owner = self.access_owner
        if owner is None or owner not in candidates or len(candidates) < 2:
            return candidates
        words, disowns = denials(text)
        if disowns or not any(w.startswith("not_") for w in words) or gates.tells_access(self.without_denials(text)):
            return candidates
        if device_not_owned(text):
            return candidates  # ("no android in my house" denies owning the device seen, not a break-in)
        return [c for c in candidates if c != owner]

    def _by_access(self, text: str, candidates: Sequence[str], p: Prediction, dressed_up: bool = False) -> Route | None:
        """To the candidate whose examples tell of someone else's access, when the message does
        and the words placed it elsewhere, or leaned there too little to place it (how surely:
        the access reader's probability). "I have receive notification of entering to my account
        from Brazil, I am not in Brazil" leaned 0.46 to the security agent and was left unplaced,
        though the reader read someone else's access at 0.96. Where the words place it there
        themselves, their route stands, confidence and all (triage's split of a message into
        matters weighs it)."""
        owner = self._access_agent(text, candidates, dressed_up)
        if owner is None or (owner == p.label and not _unsure(text, p)):
            return None
        # (an address dressed up as ours or a device not owned is read by rule, surely, as an email address is)
        return Route(owner, 1.0 if dressed_up else gates.access_probability(text), p)

    def route(self, text: str, exclude: Sequence[str] = ()) -> Route:
        candidates = [t for t in self.targets if t not in exclude] or self.targets
        if len(candidates) == 1:
            return Route(candidates[0], 1.0, None)
        key = (text, tuple(candidates))
        known = self._routes.get(key)
        if known is None:
            known = keep(self._routes, key, self._route(text, candidates), ROUTES_KEPT)
        return known

    def _route(self, text: str, candidates: list[str]) -> Route:
        dressed_up = self.by_rule(text)
        text = with_bare_amount(without_names(without_introduction(without_announcement(with_toggles_turned(text))), self._names))
        candidates = self._without_denied_owner(text, candidates)
        text = without_reassurance(self.without_denials(text))  # (after the denials' reading of the candidates)
        p = self.model.predict(text, candidates)
        placed = self._by_access(text, candidates, p, dressed_up)
        if placed is not None:
            return placed
        return Route(None if _unsure(text, p) else p.label, p.confidence, p)

    def best(self, text: str, exclude: Sequence[str] = ()) -> Route:
        """The most likely target even when unsure (after one clarifying question)."""
        candidates = [t for t in self.targets if t not in exclude] or self.targets
        dressed_up = self.by_rule(text)
        text = with_bare_amount(without_names(without_introduction(without_announcement(with_toggles_turned(text))), self._names))
        candidates = self._without_denied_owner(text, candidates)
        text = without_reassurance(self.without_denials(text))  # (after the denials' reading of the candidates)
        p = self.model.predict(text, candidates)
        return self._by_access(text, candidates, p, dressed_up) or Route(p.label, p.confidence, p)
