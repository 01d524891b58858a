"""The entry agent: greet, understand, write down what was learned, hand to a specialist."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, Transfer
from supportdesk.config import AgentConfig
from supportdesk.models.offline import cues, dialogue, scope
from supportdesk.models.offline.classifier import denials
from supportdesk.models.offline.kept import kept_by_text
from supportdesk.models.offline.skills.money import asks
from supportdesk.models.offline.router import SHORT_MESSAGE_CONFIDENCE, Route, Router, content_words, without_announcement
from supportdesk.models.offline.specialist import OTHER_LANGUAGE_REPLY, skills_of
from supportdesk.models.offline.view import View
from supportdesk.readers import acts
from supportdesk.lexicon import ASKS_ADDRESS, ASKS_TIME, CONCEPTS, normalise, terms
from supportdesk.patterns import LazyPattern

CLARIFY_OPENING = "So I can bring in the right colleague:"


def _describe(view: View, name: str) -> str:
    agent = view.desk.agents[name]
    return f"{agent.title.lower()} ({agent.description.rstrip('.').lower()})"


# Asked "which?", the customer hears only the agents the message could be for: those whose share of
# the router's belief is at least this (never fewer than two). With the two shipped agents that
# is both; a desk with more agents no longer lists one the message has nothing to do with.
CLARIFY_MIN_SHARE = 0.1


def close_candidates(route: Route, candidates: list[str]) -> list[str]:
    """The candidates the router is torn between, in the desk's order (at least two)."""
    p = route.prediction
    if p is None or len(candidates) <= 2:
        return candidates
    shares = {c: p.shares.get(c, 0.0) for c in candidates}
    close = [c for c in candidates if shares[c] >= CLARIFY_MIN_SHARE]
    if len(close) >= 2:
        return close
    best_two = sorted(candidates, key=lambda c: -shares[c])[:2]
    return [c for c in candidates if c in best_two]


def clarifying_question(view: View, candidates: list[str]) -> str:
    options = [_describe(view, n) for n in candidates]
    listed = ", or ".join(options) if len(options) <= 2 else ", ".join(options[:-1]) + ", or " + options[-1]
    return f"Happy to help. {CLARIFY_OPENING} is this about {listed}?"


OUT_OF_SCOPE_REPLY = (
    "I'm afraid that's outside what I can help with here: I'm the {desk} assistant. "
    "If there's anything about your account, billing or the app, I'm glad to help."
)
# Small talk said to the assistant (the weather, "how's your day", "are you a bot?", "you guys are
# great"): answered as a person at a desk would, in a friendly line with what the desk is for,
# never as a request refused (talk-17); another domain's request, and a word of the off-topic
# list (cues.OUT_OF_SCOPE: "tell me a joke about cats", the weather in Paris), stay OUT_OF_SCOPE_REPLY's.
CHIT_CHAT_REPLY = (
    "Nice to hear from you! I'm the {desk} assistant, a program rather than a person. "
    "I'm here for charges, refunds, plans and invoices, and for anything in the app that isn't "
    "working. What can I do for you today?"
)
# (lost data named too: "all our documents were deleted overnight, nobody here did it" is never
# small talk, however its other clause reads)
_DOMAIN_CUES = (cues.REFUND, cues.DUPLICATE, cues.CANCEL, cues.PLAN_CHANGE, cues.PAYMENT_METHOD, cues.INVOICE, cues.RESET, cues.LOGIN, cues.BUG, cues.DATA_LOSS)


def _domain_request(text: str) -> bool:
    return any(p.search(text) for p in _DOMAIN_CUES)


# How surely the act reader hears each clause of a message as a greeting, thanks or goodbye for
# the message to say nothing else (a clause it is less sure of may ask something).
SOCIAL_CONFIDENCE = 0.8
_SOCIAL_ACTS = ("greeting", "thanks", "goodbye")
# What a social message is answered as, by what its clauses say: a hello is welcomed, small talk
# said to the assistant gets the friendly introduction, thanks or a goodbye alone "you're welcome".
GREETED, CHATTED, THANKED = "greeting", "chit_chat", "thanks"
THANKS_REPLY = "You're welcome! Is there anything else I can help you with?"


def _trouble_denied(clause: str) -> bool:
    """A trouble said not to be there ("nothing wrong", "no problems today", "no issues at all"):
    the clause reads as a problem with the words the denial governs (the router's grammar of
    denials, classifier.denials) and as no problem, question or request without them. A denied
    word that carries no trouble ("no sync since monday", "no email came") still leaves a matter."""
    words, _ = denials(clause)
    denied = {w.removeprefix("not_") for w in words if w.startswith("not_")}
    if not denied or acts.read_act(clause).act != "problem":
        return False
    rest = acts.act_reader().read(clause, ignore=lambda f: any(w in denied for w in acts.feature_words(f)))
    return rest.act in _SOCIAL_ACTS and rest.confidence >= SOCIAL_CONFIDENCE


# A clause of this many words or fewer may lean on its neighbour: an interjection before what it
# reacts to ("sweet, all sorted now"), an afterthought after what it follows up ("you working all
# the night, never tired?"). Read alone such a clause has too few words for the readers to place
# ("never tired?" reads as the desk's): `_fragment`.
FRAGMENT_WORDS = 3


def _words(clause: str) -> list[str]:
    return [w for w in acts.tokens(clause) if w not in ("?", "!")]


def _surely(clause: str, act: str) -> bool:
    reading = acts.read_act(clause)
    return reading.act == act and reading.confidence >= SOCIAL_CONFIDENCE


# The weight of meaning-bearing words (scope.share_in_scope: a rare word weighs about 1) below
# which a clause's share of a job says nothing: "how are you today" (0.34) and "that did it"
# (0.25) are all common words, one of which a job happens to use.
JOB_WEIGHT = 0.5


def _names_a_concept(clause: str) -> bool:
    """Names one of the desk's matters as the lexicon folds them ("acct hacked": hacked)."""
    return any(word.endswith("_c") for word in normalise(clause).split())


def _in_a_job(clause: str, agents: Sequence[AgentConfig]) -> bool:
    """Said mostly in one agent's job words (scope.CLAIMED_SHARE: "upload failing", "billing?",
    "so slow?"), words enough to tell (JOB_WEIGHT)."""
    for agent in agents:
        share, weight = scope.share_in_scope(agent, clause)
        if weight >= JOB_WEIGHT and share >= scope.CLAIMED_SHARE:
            return True
    return False


# A terse matter after a hello ("hey, sync down?", "morning, 2fa broken") is heard as a second
# hello by the act reader (0.87, 0.88: short clauses beside a greeting lean to it), yet its words
# are a job's: words enough to weigh (TERSE_WEIGHT, about one rare word) leaning mostly to one
# agent's job (TERSE_SHARE). A hello's own words weigh little ("happy friday!" 0.7, "hope you're
# well" 0.85) and a greeting word is never a matter (config19).
TERSE_WEIGHT = 1.0
TERSE_SHARE = 0.6


def _terse_matter(clause: str, agents: Sequence[AgentConfig]) -> bool:
    """A clause the act reader hears as a hello that says a job's matter in few words."""
    if cues.GREETING.search(clause):
        return False
    for agent in agents:
        share, weight = scope.share_in_scope(agent, clause)
        if weight >= TERSE_WEIGHT and share >= TERSE_SHARE:
            return True
    return False


def _social_clause(part: str, agents: Sequence[AgentConfig]) -> list[str] | None:
    """What one clause says socially (the sure acts and small talk it holds; empty for a trouble
    denied or the customer's day told), or None when it says something the desk acts on."""
    # (a question asked mostly in one agent's job words asks of the desk's matter, however the
    # act reader hears its few words: "so slow?" as a greeting; told, "no problems today" names
    # the job's words to deny them)
    asks_of_a_job = "?" in part and _in_a_job(part, agents)
    kinds = [] if asks_of_a_job else [act for act in _SOCIAL_ACTS if _surely(part, act)]
    if kinds == [GREETED] and _terse_matter(part, agents):
        kinds = []
    if agents and _small_talk(part, agents):
        kinds.append(CHATTED)
    if kinds:
        return kinds
    # "nothing wrong", or the day told beside a hello ("my toddler grabbed my phone haha": no
    # agent's job in its words, scope.life_told), is no matter of the desk's; a question is
    # ("there is option for to put watermark on the photos?" names no job's words either)
    if _trouble_denied(part) or ("?" not in part and agents and scope.life_told(list(agents), part)):
        return []
    return None


def _small_talk(clause: str, agents: Sequence[AgentConfig]) -> bool:
    """Small talk said to the assistant (scope.chit_chat, the clause read whole)."""
    return scope.chit_chat(list(agents), clause, whole=True)


def _fragment(part: str, neighbour: str, agents: Sequence[AgentConfig]) -> list[str] | None:
    """A short clause the act reader is unsure of, beside social ones, said mostly in no agent's
    job words (scope.CLAIMED_SHARE: "upload failing", "billing?" name the desk's matters however
    unsure the act) and naming none of the lexicon's matters ("acct hacked"): an interjection that
    leans to hello, thanks or goodbye ("sweet", "ha") says nothing more; an afterthought asked
    ("never tired?") is small talk when the scope reader reads it, with the clause it follows up,
    as small talk surely. Only the scope reader reads the pair: to the act reader a hello before
    "app crashing" would make the pair a hello; and only a question is an afterthought ("do u
    ever sleep? app keeps crashing" tells a matter after it)."""
    reading = acts.read_act(part)
    if reading.confidence >= SOCIAL_CONFIDENCE or not agents:
        return None  # placed alone ("my sync broke"), and not socially
    if _in_a_job(part, agents) or _names_a_concept(part):
        return None
    if reading.act in _SOCIAL_ACTS:
        return []
    if "?" in part and _small_talk(f"{neighbour}, {part}", agents):
        return [CHATTED]
    return None


def social_kind(text: str, agents: Sequence[AgentConfig] = ()) -> str | None:
    """What a message that says nothing the desk acts on says (GREETED, CHATTED or THANKED), or
    None when it says something: every clause says hello, thanks or goodbye (the act reader's
    learned reading, surely), is small talk said to the assistant (scope.chit_chat: "how are you
    today", "you work all night?"), denies a trouble ("nothing wrong") or tells of the customer's
    day, with no request of the desk's and no money named. Read clause by clause (read whole, "hi
    there! my sync broke" is a greeting too; "hiya from cape town, nothing wrong, just waving" was
    a problem told), a short clause with its neighbour when it is not placed alone
    (`FRAGMENT_WORDS`). Read whole, the scope reader heard "just saying hi" as the desk's matter
    and it was searched (held-20)."""
    parts = acts.clauses(text)
    # (a number, an address or an amount named is a fact for the desk: "hi there, CUS-1001 here",
    # "hi its tara@example.com, what did you charge me in february" tell who is writing, for a
    # matter; the scope reader hears small talk in a question asked of "you")
    if not parts or _domain_request(text) or not acts.FACT_TOKENS.isdisjoint(acts.tokens(text)):
        return None
    kinds: list[str] = []
    for i, part in enumerate(parts):
        said = _social_clause(part, agents)
        if said is None and len(parts) > 1 and len(_words(part)) <= FRAGMENT_WORDS:
            said = _fragment(part, parts[i - 1] if i else parts[1], agents)
        if said is None:
            return None
        if cues.names_money_literally(part) and not _surely(part, GREETED):
            return None  # money named; in a hello, a plan's name is who is greeted ("hiya team")
        kinds += said
    # (a greeting, thanks or small talk among them: the act reader's goodbye, taught little, also
    # hears "talk me through modifying my details", a matter of the dev set's)
    for kind in (GREETED, CHATTED, THANKED):
        if kind in kinds:
            return kind
    return None


def _only_social(text: str) -> bool:
    """Every clause says hello (one at least), thanks or goodbye, or denies a trouble, in words no
    greeting cue lists ("g'day from sydney, just saying hi before my coffee"): `social_kind`
    without the small talk, which needs the desk's agents."""
    return social_kind(text) is not None


def greeting(view: View) -> str:
    return (
        f"Hello, and welcome to {view.desk.desk.name}! I can help with charges, refunds, plans and "
        "invoices, and with anything in the app that isn't working. What can I do for you?"
    )


def _title_mentioned(view: View, text: str, candidates: list[str]) -> str | None:
    lowered = f" {text.lower()} "
    hits = [n for n in candidates if f" {n.lower()}" in lowered or f" {view.desk.agents[n].title.lower()}" in lowered]
    return hits[0] if len(hits) == 1 else None


# What the timeline says a handoff is about, first match wins: a short topic, not the message.
_TOPICS = (
    (cues.DUPLICATE, "duplicate charge"),
    (cues.REFUND, "refund request"),
    (cues.CANCEL, "cancellation"),
    (cues.PLAN_CHANGE, "plan change"),
    (cues.PAYMENT_METHOD, "payment method"),
    (cues.INVOICE, "invoice question"),
    (cues.EXPLAIN, "unrecognised charge"),
    (cues.CREDIT, "credit request"),
    (cues.RESET, "password reset"),
    (cues.LOGIN, "cannot log in"),
    (cues.BUG, "possible bug"),
)


def topic(text: str, target_title: str) -> str:
    for pattern, name in _TOPICS:
        if pattern.search(text):
            return name
    return f"{target_title.lower()} question"


# Where one message carries two problems: only where the customer marks a second one ("also",
# "and also", ", and I ...", "plus" or "+", "by the way", "two things:"). Sentences that follow up on
# one problem ("How can I fix this?") are not a second problem.
# Linear in the text: a match takes a whitespace run whole (possessive \s*+) from where the run
# starts ((?<!\s)), or begins where it ends (an earlier split took it), never inside it: so
# "refund" + 16,000 spaces + "me" is one pass, not the cube of the run it was when every
# position inside the run was tried with every split of it.
# Words that add one more matter to those told (a closed class of additive connectives): the
# part before them is a matter too, not a preamble to the question after them.
_ADDITIVE = r"\b(?:and also|but also|also|plus|btw|by the way|another thing(?: is)?|one more thing|on top of that|as well as that)\b"
# Sentence adverbs that add a matter, opening a sentence and followed by a comma ("... on my work
# laptop. Separately, I was charged twice ...", two20); elsewhere they are no connective ("billed
# separately", "an unrelated charge").
_ADDED_APART = (
    r"(?:^|(?<=[.!?;]))\s*+(?:separately|additionally|in addition|apart from that|aside from that|on another note"
    r"|unrelated(?: to that)?),\s*+"
)
# ("... to our workspace. and how much is pro for a year?": a sentence opened by "and" adds one too)
# (an interjection may come first: "... on my android anymore. oh and can you downgrade me")
_AND_OPENS = r"(?:(?:oh|ah|um|so),?\s++)?and"
_ADDS_A_MATTER = LazyPattern(rf"{_ADDITIVE}|[.!?]\s+{_AND_OPENS}\b|{_ADDED_APART}", re.IGNORECASE)
_ISSUE_SPLIT = LazyPattern(
    rf"(?:(?<!\s)\s*+[,;.]?\s*+|(?<=\s)(?:[,;.]\s*+)?){_ADDITIVE}[,:]?\s*+"
    # (a stance word may stand between "and" and the new subject: "... and honestly i want to cancel")
    r"|(?:(?<!\s)\s*+|(?<=\s)),\s*+and\s++|(?<!\s)\s++and\s++(?=(?:(?:honestly|frankly|seriously|tbh|to be honest|quite frankly)[,]?\s++)?"
    r"(?:i|i'm|im|i've|my|the|it|we|our)\b)"
    # "+" written between words for "plus" ("two 29.99 charges + i want a reset link"), never a
    # number's sign ("+44 20 ...": no space after it)
    r"|(?<!\s)\s++\+\s++"
    # matters numbered off ("1) two charges for march 2) the app crashes", "(a) ... (b) ..."): a
    # list's marker, a digit or letter closed by ")" after a space or the start, never a price
    r"|(?:^|(?<=\s))\(?+(?:[1-9]|[a-c])\)\s*+"
    r"|^\s*+(?:two|2|a couple of) (?:things|problems|issues|questions)\s*+[:.,]\s*+"
    # matters counted off at the start of a sentence ("first, ... second, my laptop ...", "second
    # thing my app ..."): an ordinal that numbers a matter, not a charge ("the second one")
    r"|(?:^|(?<=[.;!?]))\s*+(?:first|second|third|then|finally)(?:ly)?(?:\s*+[,:]|\s++(?:thing|question|issue|problem)\b[,:]?)\s*+"
    # one question asked, then another ("how much is starter? and can i use it on two phones?")
    # (the next sentence a question too: "... sort that out? My login is <email>" is a fact told)
    r"|(?<=\?)\s++(?:and\s++)?(?=[a-z][^.!?]*\?)"
    # a sentence opened by "and" adds a matter (`_ADDS_A_MATTER`), asked or told ("... stay valid?
    # and pls send me the march invoice", "... on my iphone. and you billed my pro plan twice")
    rf"|(?<=[.!?])\s++{_AND_OPENS}\s++|{_ADDED_APART}",
    re.IGNORECASE,
)
# Each part must route this surely, and say enough, to count as a problem of its own.
ISSUE_CONFIDENCE = 0.8
# A part that is a question sentence of its own needs only the router's placing (it asks something
# whoever it is for; held-6: "how much is the team plan per month, and can i add my accountant to
# our workspace?", technical 0.57).
ISSUE_QUESTION_CONFIDENCE = 0.0
ISSUE_MIN_WORDS = 1
# A second question joined by "and" names at least this many things to be a matter of its own
# ("and can i use it on my ipad": use, ipad; "and how much?" asks on about the first).
JOINED_MIN_WORDS = 2
ISSUE_ASK_SHARE = 0.6  # the act reader's: a part asks, requests or tells a problem (no greeting, no thanks)


# The words of the lexicon's "someone" (a disowning, "not me", reads as it too): a part that names
# nothing but who did it names no matter of its own.
_WHO_WORDS = frozenset(w for phrase in CONCEPTS["someone"] for w in phrase.split())


# A question whose subject points back at the part before it ("can i pay for starter yearly
# instead? it works out cheaper right?"): its matter is that part's, whatever its own words lean
# the router to. Grammar, a closed class (the pronouns that point back).
_POINTS_BACK = LazyPattern(r"^\s*(?:and\s+|so\s+)?(?:it|that|this)(?:'s|'d|'ll)?\b", re.IGNORECASE)


# A list's marker ("1)", "(b)") before a matter, as `_ISSUE_SPLIT` reads one.
_LIST_MARKER = LazyPattern(r"(?:^|(?<=\s))\(?(?:[1-9]|[a-c])\)", re.IGNORECASE)


def counts_matters(text: str) -> bool:
    """The customer counts their matters: announced ("two things: ...") or numbered off ("1) ... 2) ...", "1. ... 2. ...")."""
    return without_announcement(text) != text or len(_LIST_MARKER.findall(text)) >= 2 or len(_DOTTED_MARKER.findall(text)) >= 2


def _only_who(part: str) -> bool:
    words = content_words(part)
    return bool(words) and all(w in _WHO_WORDS for w in words)


def _asked(part: str, after: str | None) -> bool:
    """The part is asked: its own "?", or the one it shares with the question joined right
    after it (`after`, the next part, opening as a question and asked: "how long do deleted
    files stay, and when is my next payment? <email>")."""
    return "?" in part or (after is not None and "?" in after and bool(cues.OPENS_AS_QUESTION.search(after)))


def _cancel_apart(piece: str) -> list[str]:
    """The piece, with a cancellation asked for in a clause of its own after it taken apart: "the
    windows app keeps crashing ... and tbh im over it, cancel my plan" joins the two matters with a
    comma only, and read whole the trouble's words route it all to the technical agent, where the
    cancellation is never offered (issue 38, cancel-18). Only a request of the clause's own (the
    act reader's), so "... crashes when i try to cancel my plan" stays one matter."""
    told = acts.clauses(piece)
    for n, clause in enumerate(told[1:], start=1):
        if cues.CANCEL.search(clause) and acts.read_act(clause).act == "request":
            return [", ".join(told[:n]), ", ".join(told[n:])]
    return [piece]


# A list's marker written with a full stop ("1. how much ... 2. where ..."): read as "1)" when the
# message numbers two matters so, never one alone ("version 2. the app" is no list).
_DOTTED_MARKER = LazyPattern(r"(?:^|(?<=\s))([1-9])\.(?=\s)")


def _pieces(text: str) -> list[str]:
    """The message's pieces that may each be a matter (`_ISSUE_SPLIT`, then `_cancel_apart`)."""
    if len(_DOTTED_MARKER.findall(text)) >= 2:
        text = _DOTTED_MARKER.sub(r"\1)", text)
    return [part for piece in _ISSUE_SPLIT.split(text) for part in _cancel_apart(piece or "")]


def issues(text: str, router: Router, unsure: Callable[[str], str | None] | None = None) -> list[tuple[Route, str]]:
    """[(route, part of the message)] when the message raises problems for more than one agent;
    [(route, the message)] when those are someone else's access and the lockout it caused
    (`_access_with_its_lockout`): one matter, for the access's agent. `unsure` places a part the
    router cannot, as a whole message would be (`decide`: a product question naming no money is
    the articles' agent's, `_product_matter`: "how long are old versions of files kept? and when
    will i be billed next", two20)."""
    pieces = _pieces(text)
    if not (len(pieces) > 1 or cues.QUESTIONS_JOINED.search(text)):
        return []
    # (two questions joined by "and", the second opening as a question does: "whats the price of
    # team and can i use it on my ipad", multi-15; each part must still be a matter of its own)
    parts: list[str] = []
    joined: set[int] = set()  # the parts that are the second of two questions joined by "and"
    for piece in pieces:
        for k, question in enumerate(cues.QUESTIONS_JOINED.split(piece or "")):
            if question.strip(" ,.;:"):
                if k:
                    joined.add(len(parts))
                parts.append(question.strip(" ,.;:"))
    if len(parts) < 2:
        return []
    found: list[tuple[Route, str]] = []
    loose: list[str] = []  # parts about nothing in particular ("dana@example.com") join a neighbour
    # A message whose question is said in one clause, the rest asking for nothing ("I've been a
    # customer for years and money is tight: if we downgraded, would we lose anything?"): the rest
    # is its preamble, a matter of its own only where it tells a problem or names money.
    # (Not when the customer adds a matter ("..., plus how much is starter per year?") or counts
    # them ("two things: ..."): what they tell before the question is one of them.)
    counted = without_announcement(text) != text
    added = bool(_ADDS_A_MATTER.search(text))
    preamble_only = acts.carries_its_question(text) and not counted and not added
    for n, part in enumerate(parts):
        if (found or loose) and n in joined and len(content_words(part)) < JOINED_MIN_WORDS:
            # "when is my next payment and how much?", "what does two-factor do and how do i
            # switch it on?": a joined question naming one thing at most asks on about the first
            if found:
                found[-1] = (found[-1][0], f"{found[-1][1]} and {part}")
            else:
                loose.append(part)
            continue
        if _only_who(part) and (found or loose):
            # "... was changed, and it was not me who did it": who did what the part before told,
            # naming nothing else, is that part's, not a matter of its own (scope-9)
            if found:
                found[-1] = (found[-1][0], f"{found[-1][1]}, {part}")
            else:
                loose.append(part)
            continue
        if found and "?" in part and _POINTS_BACK.match(part):
            found[-1] = (found[-1][0], f"{found[-1][1]} {part}")  # the question before it, asked on
            continue
        # "my email is dana@example.com" is a fact, not a problem of its own.
        # A part is a matter of its own when it tells a problem or asks something of the desk
        # ("... and also what did you charge me in march?"): a question is a matter as much as a
        # problem is (issue 38: two questions in one message).
        # A question asked in a sentence of its own ("..., and can i add my accountant to our
        # workspace?") is a matter of its own wherever the router places it, surely or not.
        own_question = _asked(part, parts[n + 1] if n + 1 < len(parts) else None) and acts.read_act(part).act == "question"
        # (read clause by clause: "hey, sync stopped on my macbook" read whole is a greeting)
        asks = cues.PROBLEM.search(part) or _asks_money(part) or (
            (not preamble_only or "?" in part or own_question)
            and max(acts.read_act(c).share(("question", "request", "problem")) for c in acts.clauses(part) or [part]) >= ISSUE_ASK_SHARE
        )
        substantial = bool(asks) and not cues.only_facts(part) and len(content_words(part)) >= ISSUE_MIN_WORDS
        route = router.route(part) if substantial else None
        if route is not None and route.agent is None and unsure is not None and (placed := unsure(part)) is not None:
            route = Route(placed, route.confidence, route.prediction)
        # (matters counted first are each one, wherever the router places them: "two things: the
        # windows app won't even start since yesterday's update, and ...", technical 0.74, held-12)
        # (so is what is told before a matter the customer adds, "..., also whats team per month?":
        # "the invites i sent ran out before they clicked them" is technical 0.7, held-24; the part
        # added last is placed as surely as any, talk-17's "btw can two people edit ..." billing 0.74)
        told_before_one_added = added and n + 1 < len(parts)
        needed = ISSUE_QUESTION_CONFIDENCE if own_question or counted or told_before_one_added else ISSUE_CONFIDENCE
        if route is not None and route.agent is not None and route.confidence >= needed:
            if found and found[-1][0].agent == route.agent:
                found[-1] = (found[-1][0], f"{found[-1][1]}. {part}")
            else:
                found.append((route, " ".join(loose + [part])))
            loose = []
        elif found:
            found[-1] = (found[-1][0], f"{found[-1][1]}. {part}")
        else:
            loose.append(part)
    if len({route.agent for route, _ in found}) < 2:
        return []
    owner = _access_with_its_lockout(found, router)
    if owner is not None:
        return [(owner, text)]
    return found


# The concepts of the account's way in (lexicon): a password or a sign-in.
_WAY_IN = ("password_c", "login_c")


def _access_with_its_lockout(found: list[tuple[Route, str]], router: Router) -> Route | None:
    """The route of the matter that tells someone else's access (router.access_agent), when every
    other matter tells the customer's own way in failing (a problem naming a password or a
    sign-in): "my acme password stopped working and the recovery email was changed, not by me"
    is one matter, the lockout what that access did, for the agent whose matter the access is
    (a sign-in refused alone stays the technical agent's; tech-20 config)."""
    owners = [route for route, part in found if route.agent is not None and router.access_agent(part) == route.agent]
    if len(owners) != 1:
        return None
    others = [part for route, part in found if route is not owners[0]]
    locked_out = all(
        acts.read_act(part).act == "problem" and "?" not in part and any(t in _WAY_IN for t in terms(part)) for part in others
    )
    return owners[0] if locked_out else None


_SKILL_REQUESTS = {
    "money": (
        cues.REFUND, cues.DUPLICATE, cues.CANCEL, cues.PLAN_CHANGE, cues.PAYMENT_METHOD, cues.INVOICE, cues.CREDIT, cues.PRICING,
        cues.PLAN_LOWEST, cues.PLAN_HIGHEST, cues.PLAN_DOWN, cues.PLAN_UP,
    ),
    "tech": (cues.RESET, cues.LOGIN, cues.BUG, cues.DATA_LOSS),
}


@kept_by_text(256)  # (a pure reading of the message, asked again each step)
def _stops_paying(text: str) -> bool:
    from supportdesk.models.offline.skills.money.heard import heard_cancel_request

    # (Read as a request by the act reader, paying or billing spoken of (cues.ABOUT_CHARGES) or what
    # the desk bills for named (`_PAID_FOR`: "can u turn off my acme plan for good", route-13): to
    # triage, where every message arrives, the learned cancel reading alone also hears "problem
    # verifying my account" and "I want to change my account details" as ending the account; the
    # dev set's Banking77 messages measured it. An account is not what is paid for: "close my
    # account" is its deletion, a person's matter.)
    # (Read in the clause that asks it too: a circumstance told first is no request, `_read_whole_or_apart`.)
    def asks_to_stop(part: str) -> bool:
        said_paying = cues.ABOUT_CHARGES.search(part) or _PAID_FOR.search(part)
        return bool(said_paying) and acts.read_act(part).act == "request" and heard_cancel_request(part)

    return _read_whole_or_apart(text, asks_to_stop)


# What the desk bills for, named: a closed class of nouns (the subscription, a plan, a membership,
# its renewal), as a rule reads it; whether its end is asked for is the learned readers' call.
# ("my acme sub": the subscription's short form, a word of its own, h30)
_PAID_FOR = LazyPattern(r"\b(?:subscri(?:ption|bed|be)s?|subs?|plans?|membership|renewals?)\b", re.IGNORECASE)


def _asks_money(text: str) -> bool:
    # (or which card pays, asked: the money skill reads it from the account, its "card_on_file")
    return (
        any(p.search(text) for p in _SKILL_REQUESTS["money"]) or cues.asks_card_on_file(text) or cues.asks_card_change(text)
        or asks.plan_needed(text)  # a plan told as a need ("we hired 6 people so we need team now")
    )


# A plan named with what names it ("the team plan", "our pro tier", "starter"): taken out, what is
# left of a question says whether it asks about the plan (its price, what it includes) or a feature.
_PLAN_NAMED = LazyPattern(rf"(?:\b(?:the|our|a|your|my) )?{cues.PLAN_NAME.pattern}(?: (?:plans?|tiers?|subscriptions?)\b)?", re.I)


@kept_by_text(256)  # (a pure reading of the message, asked again each step)
def asks_feature_of_a_plan(text: str) -> bool:
    """A question naming a plan that asks no price and no paying, about a feature: with the plan
    named taken out, what is left names no money (the rules and the learned gate) and the learned
    desk intents reader reads no money intent in it ("is sso something we get on the team plan?",
    "how much storage do i get on pro?": the technical agent answers from the articles or says it
    does not know). "team" and "pro" lean the router to billing, and "get on the team plan" reads
    as a plan change (kbfacts15); "what does the team plan include?" (a plan's price to that
    reader), "how much is team" and "can i switch to pro" (a request) stay billing's."""
    if not cues.PLAN_NAME.search(text) or cues.PRICING.search(text) or cues.ABOUT_CHARGES.search(text):
        return False
    if acts.read_act(text).act == "request" or not _asks_in_a_sentence(text):
        return False
    feature = _PLAN_NAMED.sub(" ", text)
    return not (_asks_money(feature) or cues.names_money(feature) or acts.reads_money_intent(feature))


def _asks_in_a_sentence(text: str) -> bool:
    """The message asks rather than reports (the act reader, topic words aside), read whole or in
    a sentence of its own put as a question: "on pro, how far back can i go in a document's version
    history? a teammate says 180 days but we're not on team" asks first, then tells why (kb-18)."""
    return acts.asks_rather_than_reports(text) or any(
        c.endswith("?") and acts.asks_rather_than_reports(c) for c in cues.clauses(text)
    )


def asks_how_long_credits_take(text: str) -> bool:
    """A time asked (`lexicon.ASKS_TIME`) of a top-up or a transfer's credits, with no charge, fee
    or refund in it ("how long may a card top-up sit pending?", "credits payed by bank transfer,
    how long it take?"); a top-up's fee or a refund of one stays billing's."""
    return bool(ASKS_TIME.search(text)) and _of_credits_alone(text)


@kept_by_text(256)  # (a pure reading of the message, asked again each step)
def tells_of_credits_not_arrived(text: str) -> bool:
    """Credits or a top-up told as a trouble (the act reader's problem), with no charge, fee or
    refund in it and no card to change: "bought credits two hours ago, the money left my bank but
    the balance still says 0", "paid for a top up this morning, card charged, still 0 credits".
    The credits article says what a pending or failed top-up does and when to ask billing;
    billing's tools read the account's charges, never its credits, and it asked for the email.
    (Not triage's money rules whole: their "credit" is compensation asked, and "my credit balance
    hasnt moved" names the credits' balance.)"""
    # Credits or a top-up named, not a transfer alone: a transfer told as a trouble is money sent
    # (a fee taken, less received: the routing eval's billing), a transfer's credits only asked of.
    return (
        bool(set(terms(text)) & _PUT_IN) and _of_credits_alone(text)
        and acts.read_act(text).act == "problem" and not cues.asks_card_change(text)
    )


def _of_credits_alone(text: str) -> bool:
    """The message names credits put in (a top-up, a transfer's credits) and no money taken (a
    fee, a refund, a charge twice or unknown, a charge's id): those stay billing's."""
    said = set(terms(text))
    return bool(said & _CREDITS_TERMS) and not said & _CHARGE_TERMS and not cues.CHARGE_ID.search(text)


# The lexicon's concepts (`lexicon.CONCEPTS`) of credits put in, and of money taken.
_CREDITS_TERMS = frozenset({"topup_c", "transfer_c", "credits"})
_PUT_IN = frozenset({"topup_c", "credits"})
_CHARGE_TERMS = frozenset({"fee_c", "refund_c", "twice_c", "unrecognised_c"})


# The skill of answering from the knowledge base: holding its search tool.
ARTICLES = "articles"


# Requests whose words lean the router the wrong way, and the skill that answers them whatever
# it says; the first that matches and whose skill an agent holds decides (money words or
# trouble named keep a request off).
_SKILL_BY_CUE: tuple[tuple[str, Callable[[str], object]], ...] = (
    # what an account action would do, asked: the action is the matter, whatever it would touch
    ("money", lambda t: asks_what_an_account_action_does(t)),
    # files removed or overwritten, wanted back: the restore article ("get it back" sounds like money)
    ("tech", lambda t: cues.FILES_BACK.search(t) and not _asks_money(cues.without_file_names(t))),
    # a payment of the account's that failed, told ("you emailed me my payment didnt go
    # through"): only billing's tools read the failed charge ("go through", "declined" lean to
    # the in-app card article; a card refused at a checkout or a top-up names no such payment)
    ("money", lambda t: asks.payment_failed_told(t) and not cues.APP_TROUBLE.search(t)),
    # a charge or an invoice named by its id ("what is CH-9006?", "resend INV-4420"): only
    # billing's tools read charges and invoices ("resend" and "a copy" lean elsewhere; route20)
    ("money", lambda t: (cues.CHARGE_ID.search(t) or cues.INVOICE_ID.search(t)) and not cues.APP_TROUBLE.search(t)),
    # the card on file taken away ("delete my card details" leans towards the app's card troubles)
    ("money", lambda t: cues.REMOVE_CARD.search(t) and not cues.APP_TROUBLE.search(t)),
    # what the product runs on, asked with no money and no trouble in it: the apps article
    ("tech", lambda t: cues.ASKS_ABOUT_DEVICES.search(t) and not cues.APP_TROUBLE.search(t)
     and not cues.ABOUT_CHARGES.search(t) and not _asks_money(t)),
    # someone to add to the team, with no money in it: how to invite them (the team article)
    ("tech", lambda t: cues.ADDS_A_PERSON.search(t) and not cues.ABOUT_CHARGES.search(t) and not _asks_money(t)),
    # a feature asked about on a plan named ("how far back does team keep versions?"): the feature's fact
    # (the agent with the articles: a desk file's security agent holds the reset tool, "tech", too)
    (ARTICLES, asks_feature_of_a_plan),
    # how long credits take to arrive or a top-up may stay pending: the credits article says;
    # billing's tools read the account's charges, never its credits (held-16/20/22)
    (ARTICLES, asks_how_long_credits_take),
    # credits paid for and not arrived, told: the same article (kb-18)
    (ARTICLES, tells_of_credits_not_arrived),
)



def asks_what_an_account_action_does(text: str) -> bool:
    """A question about the consequences of an account action, with no trouble told (the money
    skill's reading, `asks.asks_what_an_account_action_does`, with triage's money requests too)."""
    return asks.asks_what_an_account_action_does(text, _asks_money)


def _placed_surely(router: Router, text: str) -> bool:
    """What the message says besides who the customer is reads as filler ("someone", "in"), yet
    the router, taught by the agents' examples, places it: "someone is in my account, <email>" is
    a matter (issue 38, held-5: it was noted and asked about); "hi, my email is <email>" leaves
    nothing to place."""
    about = cues.beside_facts(text)
    return bool(about) and router.route(about).agent is not None


def _money_without_money(view: View, agent: str, text: str) -> bool:
    """`agent` has only the money skill and the message names no money (`_names_money_somewhere`),
    in what it asks when it asks an address (`_address_asked`, read whole: "... so i can put it on
    our allowed senders list" says why it is asked, and its "put it on" read apart is a charge)."""
    if skills_of(view.desk.agents[agent]) != {"money"}:
        return False
    asked = _address_asked(text)
    return not (cues.names_money(asked) if asked is not None else _names_money_somewhere(text))


# Where a message's sentences end.
_SENTENCE = LazyPattern(r"(?<=[.!?])\s+")


def _address_asked(text: str) -> str | None:
    """The sentence asking an address (`lexicon.ASKS_ADDRESS`: the sender to allow, the page to
    check), in a message of several sentences: what is asked says whether it is money, not the
    circumstance told around it ("our mail filter eats everything unknown. what address do the
    notification emails come from ..." read as money by the learned gate for "eats everything",
    facts19). An address of money asked is money in its own sentence ("which address do invoices
    come from?")."""
    sentences = [s for s in _SENTENCE.split(text.strip()) if s.strip()]
    if len(sentences) < 2:
        return None
    return next((s for s in sentences if ASKS_ADDRESS.search(s)), None)


# Where what was told gives way to what it leads to: a conjunction of result (a closed class of
# grammar: "so", "hence", "which is why"), spoken without a comma as often as with. (Not every
# clause: the learned money gate hears money in a short "Help." or "Please advise." read alone.)
_CONSEQUENCE = LazyPattern(r"[,;]?\s+(?:so|hence|therefore|(?:which|that'?s) is why|thats why)\s+", re.IGNORECASE)


def _names_money_somewhere(text: str) -> bool:
    """The message names money (cues.names_money), read whole or in one of its clauses: a
    circumstance told first ("our project wrapped up so please end my acme subscription",
    "changed jobs in feb and never logged in after that, so pls give back february's payment")
    is no money and drowns the clause that asks for it when the learned money gate reads the
    whole message (held-18, held-20: handed to the technical agent as a message naming no money)."""
    return _read_whole_or_apart(text, cues.names_money)


def _read_whole_or_apart(text: str, reads: Callable[[str], object]) -> bool:
    """`reads` hears it in the message read whole, or in what is told or what it leads to apart
    (`_CONSEQUENCE`): a learned reader's words of a circumstance told outweigh those of the
    clause that asks."""
    if reads(text):
        return True
    parts = [part for part in _CONSEQUENCE.split(text) if part.strip()]
    return len(parts) > 1 and any(reads(part) for part in parts)


def _without_money_agents(view: View, router: Router, text: str, candidates: list[str]) -> Route | None:
    """Unsure between agents, for a message that names no money: the money-only agents step
    aside (billing needs money named, as for a sure route: `_money_without_money`) and the
    router places it among the rest, when at least two remain to tell apart ("CUS-1001 here, my
    account sent messages to my contacts that i never wrote": billing 0.45, security 0.46; on a
    desk of billing and technical alone the question is still asked)."""
    money_only = [n for n in candidates if _money_without_money(view, n, text)]
    rest = [n for n in candidates if n not in money_only]
    if not money_only or len(rest) < 2:
        return None
    again = router.route(text, exclude=money_only)
    return again if again.agent is not None else None


def _product_matter(view: View, text: str, candidates: list[str]) -> str | None:
    """Unsure between agents, for a question about the product or a problem with it that names
    no money ("is there a timeline or gantt view?", "does it handle right-to-left text?"): the
    money-only agents step aside (billing needs money named, `_money_without_money`) and, when
    the one agent left holds the technical skill, it is that agent's, who answers from the
    articles or says it does not know and offers a person; asking "billing or technical?" first
    would be one question more about a matter the message already placed. A request is left to
    the request's own readers (`_by_request`, the clarifying question), thanks and goodbyes to
    triage; several agents left, to the router (`_without_money_agents`). Money named in a
    file's name ("my budget sheet") is no money (cues.without_file_names)."""
    if acts.read_act(text).act not in ("question", "problem") or _asks_money(text) or _names_money_somewhere(cues.without_file_names(text)):
        return None
    rest = [n for n in candidates if not _money_without_money(view, n, text)]
    if len(rest) != 1 or len(rest) == len(candidates):
        return None
    return _skill_owner(view, "tech", rest)


def _by_request(view: View, text: str, candidates: list[str]) -> str | None:
    skills = {skill for skill, patterns in _SKILL_REQUESTS.items() if any(p.search(text) for p in patterns)}
    if cues.asks_card_on_file(text) or cues.asks_card_change(text):
        skills.add("money")  # which card pays, asked, or another asked for (the learned desk intents reader)
    if asks.plan_needed(text):
        skills.add("money")  # a plan told as a need or a consequence (the learned desk intents reader)
    if _stops_paying(text):
        skills.add("money")  # paying no more, asked for (the money skill's learned reading)
    if len(skills) != 1:
        return None
    (skill,) = skills
    return _skill_owner(view, skill, candidates)


def _skill_owner(view: View, skill: str, candidates: list[str]) -> str | None:
    """The one candidate agent with `skill` (ARTICLES: the search_kb tool), or None when none or
    several have it."""
    if skill == ARTICLES:
        owners = [n for n in candidates if "search_kb" in view.desk.agents[n].tools]
        return owners[0] if len(owners) == 1 else None
    owners = [n for n in candidates if skill in skills_of(view.desk.agents[n])]
    return owners[0] if len(owners) == 1 else None


def _transfer(view: View, route: Route, text: str, extra: dict[str, Any] | None = None) -> Transfer:
    target = view.desk.agents[route.agent]  # type: ignore[index]
    context = view.facts.context_writes(view.context)
    context["category"] = target.name
    context["issue"] = text[:300]
    if view.context.get(dialogue.PENDING_OFFER) is not None:
        context[dialogue.PENDING_OFFER] = None  # a new routing starts a new exchange
    context.update(extra or {})
    meta: dict[str, Any] = {"router": "offline", "routing_confidence": round(route.confidence, 3)}
    if route.prediction is not None:
        meta["scores"] = {k: round(v, 2) for k, v in route.prediction.scores.items()}
    return Transfer(
        to_agent=target.name,
        reason=topic(text, target.title),
        text=f"Thanks, I'm bringing in our {target.title.lower()} team to help with this.",
        context=context,
        meta=meta,
    )


def decide(view: View, router: Router):
    me = view.agent.name
    text = view.latest
    candidates = list(router.targets)

    # Handed back this turn with a new topic: route it, never back to whoever returned it.
    returned_by = [h.from_agent for h in view.turn_handoffs if h.to_agent == me and h.handoff_kind == "return"]
    if returned_by:
        pending = view.context.get("pending_topic") or text
        owner = view.context.get("pending_agent")
        if owner in candidates and owner not in returned_by:
            route = Route(owner, 1.0, None)  # handed over for a problem already placed
        else:
            route = router.route(pending, exclude=returned_by)
            if route.agent is None:
                route = router.best(pending, exclude=returned_by)
        extra: dict[str, Any] = {"pending_topic": None, "pending_agent": None}
        out = view.context.get(dialogue.STEPS_OUT)
        if isinstance(out, dict) and out.get("agent") == route.agent and out.get("issue"):
            # The customer's report on that agent's steps (`Specialist._steps_report_elsewhere`):
            # the trouble stays the issue, so a ticket it leads to names the trouble, not "still".
            extra.update({"issue": str(out["issue"])[:300], dialogue.STEPS_OUT: None})
        return _transfer(view, route, pending, extra)

    if not text.strip():
        return Answer(greeting(view))
    if cues.asks_for_person(text):
        if view.has_tool("request_human") and not view.calls("request_human", this_turn=True):
            return CallTools(
                [RequestedCall(view.call_id(), "request_human", {"reason": text[:300]})],
                context=view.facts.context_writes(view.context),
            )
        # The customer asked for a person: the reply says "a person" plainly (understand-held-26
        # config), not a title they must translate back into what they asked for.
        return Answer(
            "I've asked a person from our support staff to join this conversation; they'll see everything "
            "we've discussed. While you wait, feel free to tell me more about what's going on."
        )
    language = cues.other_language(text)
    if language is not None:
        if view.has_tool("request_human") and not view.calls("request_human", this_turn=True):
            return CallTools(
                [RequestedCall(view.call_id(), "request_human", {"reason": f"writes in {language}: {text[:250]}"})],
                context=view.facts.context_writes(view.context),
            )
        return Answer(OTHER_LANGUAGE_REPLY)
    if cues.GREETING.search(text):
        return Answer(greeting(view))
    if cues.SMALL_TALK.search(text):
        return Answer(
            f"I'm the {view.desk.desk.name} assistant. I can sort out billing questions (charges, refunds, "
            "plans, invoices) and technical problems (login, passwords, sync, the app). What do you need help with?"
        )
    desk_agents = [view.desk.agents[n] for n in candidates if n in view.desk.agents]
    social = social_kind(text, desk_agents)
    # (after small talk's cue: "how are you?" is asked of the assistant, whom the reply introduces)
    if social == GREETED:
        return Answer(greeting(view))
    if social == THANKED:
        return Answer(THANKS_REPLY)
    about_nothing_here = not _domain_request(text) and not cues.names_money(text) and scope.outside_every_job(desk_agents, text)
    # Chit-chat said to the assistant ("do you like your job?"), as the scope reader reads it surely
    # (it learnt the desk's money requests as in scope, so the learned money gate's weaker reading
    # is not asked; an amount, a charge or a plan named still is): the friendly out-of-scope word,
    # never an article search.
    chatting = not _domain_request(text) and not cues.names_money_literally(text) and scope.chit_chat(desk_agents, text)
    if about_nothing_here or (scope.listed_outside(text) and not _domain_request(text)):
        return Answer(OUT_OF_SCOPE_REPLY.format(desk=view.desk.desk.name))
    if chatting or social == CHATTED:
        # (small talk read clause by clause, `social_kind`, after the refusal: "can you tell me a
        # joke about cats?" is said to the assistant, and a request of another domain)
        return Answer(CHIT_CHAT_REPLY.format(desk=view.desk.desk.name))
    known, category = view.context.get("issue"), view.context.get("category")
    if isinstance(known, str) and known and category in candidates and cues.only_facts(text) and not cues.THANKS.search(text):
        # Back with triage (a release, a limit) on a problem already told, the customer says who
        # they are or that it is urgent: that problem goes on to its agent, asked about no more.
        return _transfer(view, Route(str(category), 1.0, None), known)
    asked_before = view.last_agent_text().startswith("Happy to help. " + CLARIFY_OPENING)
    if (
        not asked_before and cues.only_facts(text) and not cues.THANKS.search(text) and not cues.GREETING.search(text) and text.strip()
        and not _placed_surely(router, text) and not asks.invoice_asked(text)
    ):
        # (An invoice's id asked about or for is no fact of who they are: "can you tell me what
        # INV-9001 is for? <email>" asks after the invoice, billing's to look up; route20.)
        # Who they are, but not yet what about ("hi, my email is ..."): note it, and ask.
        if not cues.vague(text):
            return Answer(
                "Thanks, I've noted that. What can I help you with today?",
                context=view.facts.context_writes(view.context),
            )
    if not asked_before and cues.vague(text) and not cues.THANKS.search(text) and router.access_agent(text) is None:
        # Nothing says what about ("I have a problem", "it doesn't work"): ask, don't guess.
        # (Someone else in the account, told in few words, says it: "somebody else has been in my
        # account i'm sure of it" goes to the agent whose examples tell of that, router.access_agent.)
        return Answer(clarifying_question(view, candidates), meta={"router": "offline", "clarifying": True})
    several = issues(text, router, lambda part: _product_matter(view, part, candidates))
    if several:
        # Two problems at once: the first goes to its agent now, the others wait their turn
        # in the shared context and are handed over when the first is resolved.
        (first, first_text), *rest = several
        # (a matter the customer counted off, "two things: 1) ... 2) ...", is one by their word, not
        # a part split off unsurely: `Specialist._question_after_answer` takes it up however the
        # router leans, understand-held-28)
        counted = {"counted": True} if counts_matters(text) else {}
        waiting = dialogue.pending_issues(view.context) + [
            {"agent": r.agent, "topic": topic(part, view.desk.agents[r.agent].title), "text": part[:300], **counted}  # type: ignore[index]
            for r, part in rest
        ]
        return _transfer(view, first, first_text, {dialogue.PENDING_ISSUES: waiting})
    route = router.route(text)
    if route.agent is None:
        route = _without_money_agents(view, router, text, candidates) or route
    # A payment method change that names the new card ("update my card to visa ending 4444") is
    # billing's however the words lean: cards come up in the app's own troubles too.
    # (Unless the app itself is in trouble: "the pro version crashes when I upgrade the app".)
    trouble = bool(cues.APP_TROUBLE.search(text))
    names_new_card = not trouble and bool(
        (cues.PAYMENT_METHOD.search(text) and cues.card_description(text))
        # or asks which card pays ("what card do you have saved for me?"): the account's payment
        # method is billing's to read, though "card" leans to the app's card troubles (held-7)
        or cues.asks_card_on_file(text)
        # or another card asked for in words no cue lists ("i'd like to pay with a different card
        # from now on"): the learned desk intents reader's update_card, as a request (held-9)
        or cues.asks_card_change(text)
    )
    # So is a question or a change about one of the plans by name ("on pro right now, what's
    # cheaper?"): "team" and "pro" lean the router towards the app's team features.
    # So is a request to stop paying in words no cue lists ("i dont want to pay for acme anymore,
    # shut it down pls"): the money skill's learned reading of one (the desk intents reader's
    # cancel, read as no question, money read by the gate), though "shut it down" leans to the app.
    # So is an idiom of ending said of the subscription ("pull the plug on my acme sub pls"), which
    # the act reader hears as a problem told (cues.CANCEL_IDIOM, h30).
    stops_paying = not trouble and (_stops_paying(text) or bool(cues.CANCEL_IDIOM.search(text)))
    names_a_plan = not trouble and bool(
        cues.PLAN_NAME.search(text) and (cues.PRICING.search(text) or cues.PLAN_CHANGE.search(text) or cues.plan_step(text))
        or asks.plan_needed(text) or cues.PLAN_END_NAMED.search(text)
        # or a plan one step from their own ("bump me up a tier", "my plan down a notch"): a plan
        # named by its place, as the ends are (held-26: "bump" leaned the router to the app)
        or cues.PLAN_ONE_STEP.search(text)
    )
    for skill, told in _SKILL_BY_CUE:
        owner = _skill_owner(view, skill, candidates) if told(text) else None
        if owner is not None:
            return _transfer(view, Route(owner, route.confidence, route.prediction), text)
    if route.agent is not None and _money_without_money(view, route.agent, text):
        # The words lean to billing, yet the message speaks of no money at all ("can I print from
        # the app?", "the site shows a blank page"): a product question or a problem is the
        # technical agent's, who answers it from the articles or says it doesn't know.
        owner = _skill_owner(view, "tech", candidates)
        if owner is not None:
            return _transfer(view, Route(owner, route.confidence, route.prediction), text)
    # A message that tells of someone else's way in by rule, placed with the agent for it (an email
    # that passes for ours and asks to "confirm my card at acme-billing-verify.com or the account
    # is deleted"), holds a request the customer never made: what the fake message asks (a card, a
    # payment) is the phishing told, not a card change for billing (config19). (Only by rule: the
    # learned reading also hears "an email titled 'security notice' says my invoice is overdue, is
    # it unpaid?", a billing question the request reading rightly places; config-15.)
    phished = route.agent is not None and router.by_rule(text) and router.access_agent(text) == route.agent
    if route.agent is not None and not phished and (route.confidence < SHORT_MESSAGE_CONFIDENCE or names_new_card or names_a_plan or stops_paying):
        # Only mildly leaning, against what the request itself names: the request wins.
        by_request = _by_request(view, text, candidates)
        if by_request is not None and by_request != route.agent:
            return _transfer(view, Route(by_request, route.confidence, route.prediction), text)
    if route.agent is None and asked_before:
        # One question only: route on the answer, read together with what came before.
        named = _title_mentioned(view, text, candidates)
        if named:
            return _transfer(view, Route(named, 1.0, None), text)
        previous = view.customer_messages[-2].text if len(view.customer_messages) > 1 else ""
        combined = f"{previous} {text}".strip()
        route = router.route(text)
        if route.agent is None:
            route = router.best(combined)
        return _transfer(view, route, combined)
    if route.agent is None and not asked_before:
        # The statistics can't tell, but the request names what it wants done ("upgrade me to
        # Team", "cancel my plan", "reset my password"): the agent whose skill that is.
        by_request = _by_request(view, text, candidates)
        if by_request is not None:
            return _transfer(view, Route(by_request, route.confidence, route.prediction), text)
    if route.agent is None and not asked_before and (owner := _product_matter(view, text, candidates)) is not None:
        return _transfer(view, Route(owner, route.confidence, route.prediction), text)
    if route.agent is None and cues.unknown_ground(text, view.desk.desk.name) is not None:
        # Ground no tool or article covers ("delete my account"): whoever takes it brings in a
        # person, so asking "billing or technical?" first would only be one question more.
        return _transfer(view, router.best(text), text)
    if route.agent is None:
        if cues.THANKS.search(text):
            return Answer(THANKS_REPLY)
        if cues.INJECTION.search(text):
            return Answer(
                "I can't set aside how this desk works: our policies are enforced by our systems for every "
                "customer. Tell me what you need with your account and I'll get the right person on it."
            )
        return Answer(
            clarifying_question(view, close_candidates(route, candidates)),
            meta={"router": "offline", "routing_confidence": round(route.confidence, 3), "clarifying": True},
        )
    return _transfer(view, route, text)
