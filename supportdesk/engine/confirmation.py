"""The one reader of a customer's answer to an offer: yes, no, a change of mind, a question, or
something else. Every model's offers are answered through it (the runner's gate); it calls no
model and is the same on every desk.

The error that matters is a "no" read as a yes: a yes runs the offered call, moving money or
changing an account. The hand-written rules read a yes only from a short answer made of assent
and the offer's own words, with no negation, hesitation, condition, alternative or question
anywhere in it. The next error is a clear yes read as not-a-yes (the desk asks twice): a learned
reader (naive Bayes trained on the Schema-Guided Dialogue's user answers and the tune halves,
readers/data/confirmation.json.gz, read on first use) may read a hedged or wordy go-ahead the
rules missed as a yes, but only with a word of assent and with none of the rules' vetoes
(`_vetoed`) against it: the vetoes can only turn a yes into not-a-yes. evals/confirmation-tune,
-held, -6-tune and -6-held measure it (tests/test_confirmation.py).
"""

from __future__ import annotations

import functools
import gzip
import json
import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from supportdesk.items import Confirmation, Decline, Item, Message, Offer, Takeover, ToolResult
from supportdesk.text import EMAIL_ADDRESS
from supportdesk.patterns import LazyPattern

Reading = Literal["yes", "no", "change_of_mind", "question", "other"]
READINGS: tuple[Reading, ...] = ("yes", "no", "change_of_mind", "question", "other")

# Longest first where one holds another ("go ahead" before "go").
_ASSENT = (
    "yes", "yeah", "yea", "yep", "yup", "ya", "yes please", "y", "sure", "sure thing", "ok", "okay", "k", "kk",
    "alright", "all right", "go ahead", "go for it", "do it", "do that", "please do", "proceed", "confirm",
    "confirmed", "i confirm", "correct", "that's right", "thats right", "right", "sounds good", "sounds great",
    "perfect", "great", "absolutely", "definitely", "of course", "fine", "that's fine", "thats fine",
    "that works", "works for me", "agreed", "i agree", "approved", "i approve", "affirmative", "let's do it",
    "lets do it", "let's do that", "yes do it", "please", "👍", "✅",
    # Approval in a word, as the public dialogues (SGD's AFFIRM turns) give it.
    # ("good" and "nice" are not: "I'm good for now" declines, "good morning" greets.)
    "cool", "exactly", "indeed", "excellent", "awesome",
)
# A go-ahead in a verb of its own ("go", "gogo", "make it so", "ship it"), with politeness and
# nothing else: words beside it may say something else ("go away", "make it so the plan is pro"),
# so it is no assent word but a whole answer.
_LONE_GO = LazyPattern(
    r"^(?:(?:ok|okay|so|just|then|yes|yeah|yep|sure)[ ,!]+)*"
    r"(?:go+(?:[ ,!]*go+)*|goahead|make it so|that'?s a go|hit it|ship it|execute)"
    r"(?:[ ,!]+(?:now|please|pls|plz|then))*[ !.]*$"
)
# The verbs of the desk's actions, as a yes or a request names them ("yes please refund it").
_VERB_WORDS = "refund|cancel|change|switch|update|reset|send|remove|add|credit"
# Words that may stand next to the assent without changing it: politeness, the offer's own
# action named back ("yes, refund it"), pointers at the offer.
_FILLER = {
    "please", "thanks", "thank", "you", "ty", "cheers", "that", "it", "this", "them", "the", "a", "one", "and",
    "now", "so", "then", "just", "go", "ahead", "with", "for", "me", "my", "i", "would", "like", "want", "to",
    "be", "great", "good", "fine", "do", "please", "on", "duplicate", "charge", "refund", "cancel", "change",
    "reset", "send", "link", "plan", "switch", "move", "credit", "update", "process", "apply", "subscription",
    "payment", "method", "card", "password", "email", "account", "much", "lot", "very", "is", "that's", "thats",
    "right", "correct", "exactly", "sure", "ok", "okay", "yes", "yeah", "yep", "yup", "all", "of", "course",
    "proceed", "confirm", "confirmed", "absolutely", "definitely", "perfect", "works", "sounds", "let's", "lets",
    "agreed", "agree", "approve", "approved", "alright", "thing", "y", "k", "kk", "ya", "yea", "hi", "hello",
    "there", "team", "pro", "starter", "monthly", "annual", "annually", "yearly", "in", "as", "offered", "said",
    "described", "was", "its", "it's", "money", "back", "yes,", "amount", "full",
    # Permission in the customer's own words ("you can go on with it", "u may proceed", "pls").
    "you", "u", "can", "may", "pls", "plz", "make", "happen", "feel", "free", "yourself", "by",
}
# A sound of hesitation ("hmm", "umm", "uh", "er"): the customer pauses. Anywhere in an answer it
# is a not-yet (`_NEGATION`); opening one, it is only the pause before the answer, and what follows
# is read for a clear yes (`_clear_yes_after_pause`).
_HESITATION = r"(?:h?m{2,}|hm+|u+m+|u+h+|er+m?)"
# A no, or not yet: any of these anywhere and the answer is not a yes.
_NEGATION = LazyPattern(
    r"\b(?:no|nope|nah|not|never|don'?t|do not|doesn'?t|didn'?t|won'?t|can'?t|cannot|shouldn'?t|wouldn'?t|"
    r"isn'?t|aren'?t|stop|wait|hold|hang|cancel that|forget|skip|later|maybe|perhaps|unsure|"
    r"think about|think it over|thinking|let me think|changed my mind|change of mind|rather not|leave it|leave things|" + _HESITATION + "|"
    r"nevermind|mind|moment|sec|second|minute|first|before|until|yet|refuse|decline|reject|no thanks|"
    r"but|however|though|although|except|unless|if|only if|depends|worried|concerned|afraid|"
    r"dunno|idk|possibly|kinda|sort of|whatever|either way|whichever|up to you|your call|"
    # Another time than now.
    r"tomorrow|tonight|next (?:week|month|year|time)|after|afterwards|weekend|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|at \d{1,2}(?::\d\d)?(?: ?[ap]m)?|"
    # Nothing more wanted: "that's all I needed" declines what is offered.
    r"that'?s all|that is all|for now)\b"
)
# A word of doubt: the rules read it as not a yes; the learned reader may still read a plain
# go-ahead around it ("i guess that's fine, go ahead") as one (read_answer).
_DOUBT = LazyPattern(r"\b(?:think|guess|suppose|probably)\b")
# Another choice than the one offered.
_ALTERNATIVE = LazyPattern(
    r"\b(?:instead|other|another(?! question)|rather|different|cheaper|dearer|pricier|bigger|smaller|wrong|"
    r"(?:switch|change|move) (?:it |me |that |this )?to|make it(?! ?(?:$|[.,!]|please|pls|plz|now|happen|so\b))|change it to|prefer|not that one|the first|the second|"
    r"(?:rather|not) (?:than|that))\b"
)
# Asked, not answered.
_QUESTION_START = LazyPattern(
    r"^(?:will|would|can|could|is|are|am|do(?! (?:it|that|this)\b)|does|did|how|what|when|where|why|which|"
    r"who|whom|whose|should|shall|may|might|has|have|was|were)\b"
)  # ("do it", "do that": an imperative; asked, it would be "does it")
# "could you go ahead?" asks for the action: a yes however it is punctuated (when the rest of
# the message is only the offer's own words: "the amount is $29.99, can you process that?").
_ASKED_TO_ACT = LazyPattern(
    r"(?:^|[^\w'])(?:can|could|would|will) you(?: please)? (?:go ahead|do it|do that|proceed|process it|process that)"
    r"(?: now)?(?: please)?[?.! ]*$"
)
# Said about nothing in particular: the assent phrases (a phrase before its words).
_ASSENT_RE = LazyPattern(
    r"(?<![\w'])(?:" + "|".join(re.escape(a) for a in sorted(_ASSENT, key=len, reverse=True)) + r")(?![\w'])"
)
# An answer longer than this, beyond its assent and filler, says something else too.
_MAX_OTHER_WORDS = 3
_MONEY_OR_ID = LazyPattern(r"^(?:[$€£]?\d[\d.,]*|[a-z]{2,4}-\d+)$")


# Going to try something (the steps beside the offer, say): an answer about that, not the offer.
_ATTEMPT = LazyPattern(r"\b(?:try|trying|tried|let me|give it a (?:go|try|shot)|attempt)\b")
# How a try went (the steps beside the offer: issue 38, round 20 offers a refund asked beside a
# trouble in the steps' reply): "ok that worked thanks", "ok, still crashing", "ok it works now"
# report on the steps, not the offer's yes. A stricter gate, never a looser one: these only turn
# a yes into not-a-yes. ("that works for me" is a yes: "works" counts only with "now"/"again";
# "that sorted it, syncing fine now" and "that did the trick" report too: h30 found the first
# running a refund offered beside the steps.) Since then `asked_beside` closes that hole as a
# mechanism, in the runner: measured without this list, every conversation still passed, and only
# the reader's own unit tests failed ("ok that worked thanks" read as a yes). It is kept for an
# offer made alone, in a reply of its own, where a report on earlier steps is no yes either; so
# is a thing told running (a subject, "it", "everything", "all", "the app", and a verb of running;
# or fine again): "ok great it works", "awesome, the app opens now", "cool, it's fine now" after
# "would you like me to refund it?" ran the refund while the crash told beside it waited its turn.
# ("that works for me", "all good, go ahead": no state of a thing, a yes.)
_OUTCOME = LazyPattern(
    r"\b(?:worked|fixed|solved|sorted it|did (?:it|the trick)|(?:works|working|syncing|loading|opening) (?:now|again|fine|properly)"
    r"|(?:it|it's|its|it is|everything(?:'s| is)?|all|the \w+(?: \w+)?) (?:(?:is|are) )?(?:works|working|opens|opening|loads|loading|"
    r"syncs|syncing|runs|running|launches|launching|starts|starting)(?! for (?:me|us))"
    r"|(?:it's|its|it is|everything(?:'s| is)?|all) (?:fine|ok|okay|good|normal|sorted) (?:now|again)"
    r"|crash(?:es|ed|ing)?|freez(?:es|ing)"
    r"|still (?:not|no|nothing|the same|same|broken|stuck|crash\w*|freez\w*|fail\w*|doesn'?t|does not|won'?t|will not|isn'?t|is not|can'?t|can not|cannot))\b"
)
# Thanks and nothing else ("ok thanks"): an acknowledgement of what was said, not consent.
# (Or thanks for what the desk did, "perfect, thanks for finding that", "great, thanks for
# checking": for the finding, not the action offered after it.)
_ONLY_THANKS = LazyPattern(
    r"^(?:(?:ok|okay|k|alright|all right|great|perfect|cool|got it|noted|nice|awesome|wow|brilliant)[ ,!.]*)*"
    r"(?:thanks|thank you|thx|ty|cheers|many thanks)(?: (?:so much|a lot|very much))?"
    r"(?: for (?:finding|checking|looking|spotting|explaining|clarifying|letting me know|the (?:info|information|update|explanation))\b[^,.!?]*)?[ !.]*$"
)
# Politeness, read past by the learned reader's doubt (`_doubted`): its thanks alone would tip
# "that would be great thank you so much" to "other".
_POLITENESS = LazyPattern(
    r"\b(?:thanks|thank you|thank u|thx|ty|cheers|many thanks)\b(?: (?:so much|very much|a lot|a million|heaps|loads))?|\bso much\b"
)


# "ok, i understand", "i see", "got it": what was said is heard, nothing is agreed to.
_ONLY_HEARD = LazyPattern(
    r"^(?:(?:ok|okay|k|alright|all right|right|ah|oh)[ ,!.]*)*(?:i )?(?:see|understand|understood|got it|get it|noted|"
    r"know|makes sense|fair enough)[ ,!.]*(?:(?:thanks|thank you|thx|ty)[ !.]*)?$"
)


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    text = text.replace("’", "'").replace("‘", "'").replace("`", "'")
    return " ".join(text.split())


# A negation of an obstacle is no negation of the offer: "no problem", "not a problem", "no
# worries", "i don't mind", "why not" say go ahead. Read as an assent word, unless a verb in
# -ing follows ("i don't mind waiting": about something else) or a condition does ("no problem
# if ...": the condition is read as one, below).
_NO_OBSTACLE = LazyPattern(
    r"\b(?:(?:no|not an?|never an?) (?:problem|problems|prob|probs|worries|worry|issue|issues|objections?|bother|trouble)"
    r"|(?:i )?(?:don'?t|do not|wouldn'?t|would not) mind|why not(?! ?\?))\b(?! \w+ing\b)"
)
# The words of assent a misspelling is read back to ("okey", "yess", "shure", "yeh").
_ASSENT_WORDS = ("ok", "okay", "yes", "yeah", "yep", "yup", "sure", "alright")
_WORD_RE = LazyPattern(r"[a-z]+")


def _respelled(said: str) -> str:
    """Misspelt assent words read as what they spell: "okkk" and "yesss" (letters repeated),
    and a word nobody writes in the public corpora the readers were trained on (supportdesk/
    readers: how common each word is) that is one or two letters from an assent word and starts
    with its letter ("okey", "yeh", "shure"). A real word ("year", "find") is never respelt."""

    def one(m: re.Match[str]) -> str:
        word = m.group(0)
        collapsed = re.sub(r"(.)\1+", r"\1", word)
        if collapsed != word and collapsed in _ASSENT_WORDS:
            return collapsed
        if len(word) < 3 or word in _ASSENT_WORDS or word in _FILLER:
            return word
        close = [
            a for a in _ASSENT_WORDS
            if a[0] == word[0] and _distance(word, a) <= (2 if len(a) >= 4 and len(word) >= 4 else 1)
        ]
        if not close or _known_word(word):
            return word
        return close[0]

    return _WORD_RE.sub(one, said)


def _distance(a: str, b: str) -> int:
    """Levenshtein distance (short words only)."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


_KNOWN_DF = 3  # a word in more customer messages than this is a word of its own, no typo


def _known_word(word: str) -> bool:
    from supportdesk.readers import acts  # lazy: its data is read on first use

    df, _n = acts.background_counts()
    return df.get(word, 0) > _KNOWN_DF


def read_answer(text: str, offer: str = "") -> Reading:
    """How a customer's message answers the offer made right before it (`offer`: what the
    customer was asked, when known: a pointer at what it names, "the second one", is then
    that offer, no other choice).

    The hand-written rules read first; a yes of theirs stands. What they do not read as a yes
    the learned reader (naive Bayes on public dialogues' answers and the desk's tune halves,
    `answer_reader`) may read as one, a yes hedged or wordy ("i guess that's fine, go ahead",
    "yes, thank you so much, please refund the $29.99"), but only when it holds a word of
    assent and no veto stands against it (`_vetoed`: a negation, a condition, another time or
    option, a question, a goodbye, thanks alone, a person asked for). The vetoes can only turn
    a yes into not-a-yes; they never make one."""
    offered = normalise(offer)
    said = _pointed(_NO_OBSTACLE.sub("sure", _respelled(normalise(text))), offered)
    if not said:
        return "other"
    ruled = _by_rules(said)
    if ruled == "yes" or _clear_yes_after_pause(said):
        if not _doubted(said, offered):
            return "yes"
        ruled = "other"  # what the offer found acknowledged, not agreed to: it is put again
    if ruled == "question" and _asks_for_the_offer(said, offered):
        return "yes"  # "can you send me the reset link please" after "shall I send the reset link?"
    learned, confidence = answer_reader().read(said)
    if learned == "yes" and confidence >= _LEARNED_YES and not _vetoed(said, offered):
        return "yes"
    if ruled == "other" and _asks_the_offered_action(said, offered):
        return "yes"  # "refund it then, thanks a lot" after "shall I have them refund $129.99 ...?"
    if ruled == "no" and learned == "change_of_mind" and _OPTION.search(said) and not _starts_wait(said):
        return "change_of_mind"  # "not pro, i want team": another choice named, not only a no
    if ruled == "no" and hedged(said):
        return "question"  # "i guess so?": neither a yes nor a no; the offer is put again, plainly
    return ruled


# The offer's action asked for in the imperative ("refund it then", "ok send it pls").
_ACTION_FIRST = LazyPattern(r"^(?:(?:ok|okay|so|then|please|pls|plz|oh|well)[ ,]+)*(" + _VERB_WORDS + r")\b")


def _asks_the_offered_action(said: str, offered: str) -> bool:
    """An answer that asks for the offer's own action in its own words and nothing else beside
    politeness ("refund it then, thanks a lot"): the verb opens it and is the offer's, and no
    veto stands against it (`_vetoed`: another amount or time, a condition, a question ...)."""
    first = _ACTION_FIRST.match(said)
    return (
        first is not None and first.group(1) in _offer_words(offered)
        and _only_the_offer(said, offered) and not _vetoed(said, offered)
    )


_PAUSE = LazyPattern(r"^" + _HESITATION + r"\b[\s,.!]*")


def _clear_yes_after_pause(said: str) -> bool:
    """An answer that opens with a hesitation ("hmm ok sure", "mm ok go on then", "hmm ok fine")
    and then clearly assents: what follows the pause is a yes by the rules alone, said with an
    unmistakable word of it (`_STRONG_YES`) or with two words of assent ("hmm ok" alone is no
    more than a shrug): the same rules that read an answer with no pause. The learned reader is
    not asked: a hesitation followed by anything less stays not-a-yes."""
    pause = _PAUSE.match(said)
    if pause is None:
        return False
    rest = said[pause.end():]
    clear = _STRONG_YES.search(rest) is not None or len(set(_ASSENT_RE.findall(rest))) >= 2
    return bool(rest) and clear and _by_rules(rest) == "yes"


# A condition: "if that's the only way", "only if it's free".
_CONDITION = LazyPattern(r"\b(?:if|only if)\b")


def hedged(text: str) -> bool:
    """A reluctant, doubtful leaning to yes with nothing refusing in it ("i guess so?", "if
    that's the only way i guess", "i suppose so"), or the customer still deciding (`undecided`:
    "hmm not sure tbh", "let me think"): not a yes (nothing runs on it), and not a no either; the
    offer is asked again in plain words, so a clear yes after it runs that same action once
    (issue 38, offers-7, money-15). Any refusal, other time or option ("i guess not", "if it's
    free, later") makes it no hedge."""
    said = normalise(text)
    if undecided(said):
        return True
    if _DOUBT.search(said) is None and _CONDITION.search(said) is None:
        return False
    rest = _CONDITION.sub(" ", said)
    return _NEGATION.search(rest) is None and _ALTERNATIVE.search(said) is None and not _beyond_hedge(rest)


# Still deciding: words that say the answer is not made yet, neither way ("not sure", "idk",
# "let me think", a bare "hmm"). Alone in `_NEGATION` they make an answer no yes; with nothing
# else refusing, they make it no "no" either (`undecided`).
_UNDECIDED = LazyPattern(
    r"\b(?:not (?:so |too |that |really |quite |100% )?sure|unsure|undecided|not decided|maybe|perhaps|"
    r"idk|dunno|i don'?t know|i do not know|"
    r"(?:let me |i(?:'ll| will| need to| have to| must| gotta)? ?)?(?:think(?:ing)? (?:about|it over|on)(?: it| that| this)?|think)|"
    # time asked for to decide: "gimme a minute", "give me a sec", "one moment" ("hold on" is a no:
    # tests/test_confirmation.py labels it so)
    r"(?:(?:give|gimme|gimmie) (?:me )?|just |one )?(?:a |one )?(?:min(?:ute)?s?|moment|sec(?:ond)?s?)(?= |$|[,.!])|"
    + _HESITATION + r")(?: yet)?\b"
)
# A question of its own ("not sure why i was charged"): asked, not undecided about the offer.
_QUESTION_WORD = LazyPattern(r"\b(?:why|what|how|which|when|where|who|whose|whom)\b")


def undecided(text: str) -> bool:
    """The customer says they have not decided yet ("hmm not sure tbh", "idk, maybe", "not
    sure honestly, my boss may still want it, let me think"), and nothing else in the message
    refuses, defers to another time, names another option, asks a question of its own or asks
    for something more: with the words of not deciding taken out, nothing of `_NEGATION`,
    `_ALTERNATIVE`, a question word or `_MORE_ASKED` is left."""
    said = normalise(text)
    if _UNDECIDED.search(said) is None:
        return False
    rest = _UNDECIDED.sub(" ", said)
    return (
        _NEGATION.search(rest) is None and _ALTERNATIVE.search(said) is None and _QUESTION_WORD.search(rest) is None
        and _QUESTION_START.match(rest.strip(" ,.;:!?")) is None and _MORE_ASKED.search(rest) is None
    )


# What a hedge may say besides its doubt: "that's the only way", "it's fine", "so".
_HEDGE_WORDS = frozenset({"so", "that's", "thats", "the", "only", "way", "it's", "its", "it", "is", "fine", "ok", "okay", "i",
                          "guess", "think", "suppose", "probably", "then", "well", "yes", "yeah", "sure", "alright"})


def _beyond_hedge(said: str) -> bool:
    return any(w.strip(".,!?") not in _HEDGE_WORDS for w in _words(said) if w.strip(".,!?"))


def _by_rules(said: str) -> Reading:
    if _ALTERNATIVE.search(said) and not re.search(r"\brather not\b", said):
        # Another choice, whatever else it says: never this offer's yes (asked about, a question).
        return "question" if _asks(said) else "change_of_mind"
    negated = _NEGATION.search(said) is not None or _DOUBT.search(said) is not None
    if negated:
        # A "no" (or not yet) about the offer; a question that says no is still a no.
        return "no" if _short(said) or _starts_no(said) else ("question" if _asks(said) else "no")
    if _ATTEMPT.search(said) or _OUTCOME.search(said) or _ONLY_THANKS.match(said) or _ONLY_HEARD.match(said):
        return "other"  # (the agent asks again: a message, not an action nobody agreed to)
    if _leaves(said):
        return "other"  # "ok thanks, bye" takes leave of the offer; it does not take it up
    asked_to_act = _ASKED_TO_ACT.search(said)
    if asked_to_act is not None and not _others(said[: asked_to_act.start()], allowed=0):
        return "yes"
    split = _split_yes(said)
    if split:
        return "yes"
    if split is False:
        return "other"
    if _asks(said):
        return "question"
    if _plain_yes(said) or _LONE_GO.match(said):
        return "yes"
    return "other"


def _leaves(said: str) -> bool:
    """Taking leave, with no unmistakable yes beside it (the "ya" of "see ya" is none)."""
    return _CLOSING.search(said) is not None and not _STRONG_YES.search(_CLOSING.sub(" ", said))


def _vetoed(said: str, offered: str = "") -> bool:
    """Whether anything in the answer stands against reading it as a yes, whatever a learned
    reader thinks of it: no word of assent but "please" and words of something else than the
    offer ("please buy me the insurance" asks for something else: SGD's test split; "go on
    then" and "now the reset link pls" after "shall I send the reset link?" say only the
    offer's own words), a negation or not-yet, another option, a question, a condition,
    taking leave, thanks or "i see" alone, an attempt, a person or something more asked for,
    or a second part that may change the offer."""
    return (
        ({m.group(0) for m in _ASSENT_RE.finditer(said)} <= {"please"} and not _only_the_offer(said, offered))
        or _NEGATION.search(said) is not None
        or _ALTERNATIVE.search(said) is not None
        or _asks(said)
        or _leaves(said)
        or _ONLY_THANKS.match(said) is not None
        or _ONLY_HEARD.match(said) is not None
        or _ATTEMPT.search(said) is not None
        or _OUTCOME.search(said) is not None
        or _MORE_ASKED.search(said) is not None
        or _split_yes(said) is False
    )


def _offer_words(offered: str) -> set[str]:
    """The words the offer itself says ("shall I send the reset link now?")."""
    return {w.strip(".,!?:;()\"") for w in _words(offered)} - {""}


def _beyond_the_offer(said: str, offered: str) -> bool:
    """Whether the answer says a word that is neither assent, a word that names no action
    (`_FILLER_ONLY`), an amount or id, nor one of the offer's own words (or asks): something
    else than the offer is spoken of ("i want to cancel", "update my card" after a refund's offer)."""
    own = _offer_words(offered)
    rest = _ASSENT_RE.sub(" ", said)
    others = [
        w for w in (w.strip(".,!-—") for w in _words(rest))
        if w and w not in _FILLER_ONLY and w not in own and not _MONEY_OR_ID.match(w)
    ]
    return bool(others) or "?" in said


def _only_the_offer(said: str, offered: str) -> bool:
    """An answer with no word of assent that still takes the offer up: nothing beyond the
    offer's own words, and either one of its action's words ("now the reset link pls" after
    "shall I send the reset link now?") or a go ("go on then")."""
    if _beyond_the_offer(said, offered):
        return False
    named = {w.strip(".,!") for w in _words(said)} & (_offer_words(offered) - _FILLER_ONLY)
    return bool(named) or _STRONG_YES.search(said) is not None


# "can you send me the reset link please": asking for the action, in the offer's own words.
_ASKS_YOU_TO = LazyPattern(r"^(?:(?:ok|okay|so|then|and|well)[ ,]+)?(?:can|could|would|will) (?:you|u)\b(?P<rest>.*)$")


def _asks_for_the_offer(said: str, offered: str) -> bool:
    """A question that asks the desk to do what it offered, in the offer's own words and
    nothing else ("could you send the link now please?" after "shall I send the reset link
    now?"): the offered action asked for is a yes to it. It must name a word of the offer's
    action (not only "it"), and say nothing the offer does not."""
    m = _ASKS_YOU_TO.match(said.strip())
    if m is None or not offered:
        return False
    rest = m.group("rest").replace("?", " ")
    own = _offer_words(offered) - _FILLER_ONLY
    named = {w.strip(".,!") for w in _words(rest)} & own
    return bool(named) and not _beyond_the_offer(rest, offered)


# Filler that names no action: a question made only of these asks nothing in particular.
_FILLER_ONLY = frozenset(
    {"the", "a", "it", "that", "this", "them", "now", "please", "pls", "plz", "me", "my", "for", "to", "with", "i", "you",
     "u", "so", "then", "just", "shall", "go", "ahead", "on", "and", "of", "is", "be", "do",
     # Thanks beside the offer's own words ("refund it then, thanks a lot"): politeness, no other
     # matter (thanks alone is still no yes: `_ONLY_THANKS`).
     "thanks", "thank", "thx", "ty", "cheers", "lot", "much", "very", "many"}
)


def _starts_wait(said: str) -> bool:
    return re.match(r"^(?:wait|hold|hang|stop)\b", said) is not None


# How sure the learned reader must be of a yes the rules did not read (chosen on the tune halves).
_LEARNED_YES = 0.8
# How sure it must be of anything else to stand against a wordy yes of the rules (`_doubted`).
_LEARNED_DOUBT = 0.9


def _doubted(said: str, offered: str) -> bool:
    """A yes of the rules that says words beyond assent and the offer's own (`_beyond_the_offer`),
    which the learned reader is sure is no yes: "perfect, thanks for finding that", "ok good to
    know", "yes that's the one I saw on my statement" acknowledge what the offer found, with an
    assent word and a short rest the rules allow. A veto, so a stricter reading only; a plain
    "yes please" or "ok do it" says nothing beyond, and stands."""
    if not _beyond_the_offer(said, offered):
        return False
    # (not a yes that names the action, points at a charge or day the offer listed, or asks for
    # more after its yes: "yes do it, and also my next payment" is read with its rest, `rest_after_yes`)
    if names_the_action(said, offered) or _OPTION.search(said) or _split_yes(said):
        return False
    learned, confidence = answer_reader().read(" ".join(_POLITENESS.sub(" ", said).split()))
    return learned != "yes" and confidence >= _LEARNED_DOUBT


# Another option named: a plan, a billing period, a card or charge, a number.
_OPTION = LazyPattern(
    r"\d|\b(?:starter|pro|team|basic|premium|business|enterprise|annual|annually|yearly|monthly|weekly|card|charge|"
    r"(?:first|second|third|last|other|cheaper) (?:one|charge|card|plan))\b"
)
# Pointers at one of several things listed: the offer's own when the offer says it ("shall I
# refund the second one, CH-9005?" answered "yes, the second one").
_ORDINALS = ("first", "second", "third", "fourth", "last", "latter", "former")
_THING = "(?:one|charge|payment|card|plan|option)"


def _pointed(said: str, offer: str) -> str:
    """`said` with a pointer that names what the offer itself names put as "that one"; a
    pointer at another item the offer lists ("the first one, yes" when it asks about the second)
    put as "another one" (no yes to the offered item)."""
    for word in _ORDINALS:
        if offer and re.search(rf"\b{word}\b", offer):
            said = re.sub(rf"\b(?:the {word}(?: {_THING})?|{word} {_THING})\b", "that one", said)
    listed, asked = _listed_and_asked(offer)
    if asked is None:
        return said
    # The offered item pointed at is the offer's yes only beside a word of assent ("the second
    # one, yes"); without one ("refund the second one") the reply is read as before.
    assents = {m.group(0) for m in _ASSENT_RE.finditer(said)} - {"please"}

    def placed(m: re.Match[str]) -> str:
        rank = _RANKS[m.group("rank")]
        at = rank - 1 if rank > 0 else len(listed) + rank
        if 0 <= at < len(listed) and listed[at] == asked:
            return "that one" if assents else m.group(0)
        return "another one"

    return _LIST_POINTER.sub(placed, said)


# A pointer into a list by its place, with the thing pointed at ("the second one", "2nd charge",
# "the last one"); "on the third" is a day of the month, no pointer.
_RANKS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "last": -1}
_LIST_POINTER = LazyPattern(rf"\b(?:the )?(?P<rank>{'|'.join(_RANKS)}) {_THING}\b")


def _listed_and_asked(offer: str) -> tuple[list[tuple[int, int]], tuple[int, int] | None]:
    """The days an offer's own text lists, in its order, and the one its question is about: the
    last day it names, named again after the list ("March 5: ...; March 6: ... The charge on
    March 6 is a duplicate. Would you like me to refund it?"). None for the second when the text
    lists fewer than two days or names none again: a pointer then points at nothing of the offer."""
    named = [(_MONTHS.index((m1 or m2)[:3]) + 1, int(d1 or d2)) for m1, d1, d2, m2 in _MONTH_DAY.findall(offer)]
    listed = list(dict.fromkeys(named))
    if len(listed) < 2 or named.count(named[-1]) < 2:
        return listed, None
    return listed, named[-1]


# --- the learned reader --------------------------------------------------------------------------

# Its parameters: per-label feature counts of a naive Bayes, built by scripts/build_confirmation.py
# from the Schema-Guided Dialogue's user answers (CC BY-SA 4.0; readers/data/CONFIRMATION.md)
# and the desk's tune halves. Read on the first answer to an offer, never at start-up.
ANSWER_DATA = Path(__file__).resolve().parent.parent / "readers" / "data" / "confirmation.json.gz"
ANSWER_FORMAT = 1
_ANSWER_TOKEN = LazyPattern(r"[a-z]+(?:'[a-z]+)?|[?!]|[\u2600-\u27bf\U0001f300-\U0001faff]")
_ANSWER_MONEY = LazyPattern(r"[$€£]\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*\.\d\d\b")
_ANSWER_NUMBER = LazyPattern(r"\b\d+(?:st|nd|rd|th)?\b")


def answer_features(text: str) -> list[str]:
    """Words and word pairs of an answer (its start and end marked), amounts and numbers
    folded to one token each, whether it asks, and how long it is."""
    t = _ANSWER_NUMBER.sub(" zznum ", _ANSWER_MONEY.sub(" zzmoney ", normalise(text)))
    words = [w.replace("'", "") for w in _ANSWER_TOKEN.findall(t)]
    plain = [w for w in words if w not in ("?", "!")]
    out = list(plain)
    out += [f"{a}_{b}" for a, b in zip(["^", *plain], [*plain, "$"])]
    if "?" in words:
        out.append("<?>")
    n = len(plain)
    out.append("<len:1>" if n <= 1 else "<len:3>" if n <= 3 else "<len:8>" if n <= 8 else "<len:many>")
    return out


class AnswerReader:
    """Multinomial naive Bayes with add-alpha smoothing over `answer_features`."""

    def __init__(self, counts: dict[str, dict[str, int]], docs: dict[str, int], alpha: float = 0.5) -> None:
        self.labels = sorted(counts)
        self._counts = counts
        self._alpha = alpha
        self._vocab = frozenset(f for c in counts.values() for f in c)
        self._denominator = {l: sum(counts[l].values()) + alpha * len(self._vocab) for l in self.labels}
        n = sum(docs.values()) or 1
        # A flattened prior: the corpus's mix of answers is not the desk's.
        self._log_prior = {l: 0.3 * math.log(max(docs.get(l, 0), 1) / n) for l in self.labels}

    def read(self, text: str) -> tuple[str, float]:
        """The most likely label and its probability among all labels (0..1)."""
        feats = [f for f in answer_features(text) if f in self._vocab]
        scores = {
            l: self._log_prior[l] + sum(math.log((self._counts[l].get(f, 0) + self._alpha) / self._denominator[l]) for f in feats)
            for l in self.labels
        }
        top = max(scores.values())
        weights = {l: math.exp(v - top) for l, v in scores.items()}
        best = max(self.labels, key=lambda l: scores[l])
        return best, weights[best] / sum(weights.values())


@functools.cache
def answer_reader() -> AnswerReader:
    with gzip.open(ANSWER_DATA, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    if data.get("format") != ANSWER_FORMAT:
        raise RuntimeError(f"{ANSWER_DATA}: format {data.get('format')}, expected {ANSWER_FORMAT}: run scripts/build_confirmation.py")
    return AnswerReader(data["counts"], data["docs"])


def _plain_yes(said: str) -> bool:
    found = {m.group(0) for m in _ASSENT_RE.finditer(said)}
    if not found:
        return False
    if found == {"please"}:
        # Politeness, no assent: "please" and words of another choice ("please make that 3
        # rooms", "I'd like 4 tickets please" answer an offer with a correction in the public
        # dialogues of SGD) is no yes; "please" with the offer's own words and one pointer at
        # it ("please refund the latter") is one. A count is another choice, not a pointer.
        counts = len(re.findall(r"(?<![\w$€£.,])\d+(?![\w.,]*\d)(?!\w)", said))
        dated = _MONTH.sub(" ", said)  # "the 3rd march one": a date is one pointer, its month no word more
        return not _others(dated, 1 - counts) and len(_words(said)) <= 14 and not _MORE_ASKED.search(said)
    return _rest_is_filler(said)


# Taking leave, or only noting what was said: never consent unless an unmistakable yes stands
# beside it ("yes do it, bye"; "noted, go ahead").
_CLOSING = LazyPattern(
    r"\b(?:bye+|goodbye|good bye|cya|see (?:you|ya|u)|ttyl|take care|good ?night|night|noted|"
    r"(?:speak|talk|chat) (?:soon|later|tomorrow)|catch you|"
    r"have a (?:good|nice|great|lovely) (?:day|one|evening|night|weekend))\b"
)


_MONTH = LazyPattern(
    r"\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|"
    r"nov(?:ember)?|dec(?:ember)?)\b"
)


# A yes, then a request of its own ("yes do it, and also send me the invoice too"): the yes
# answers the offer; the rest is a new request, answered after the offered call ran.
_ADDED = LazyPattern(r"(?:[,;]\s*|\s)(?:and\s+(?:also\s+)?|also\s+|plus\s+|(?=and\b))|[.!]\s+(?=\w)")
# An unmistakable yes or go: a yes that goes on to something else must hold one ("ok, and
# what happens to my files?" may be asking before deciding).
_STRONG_YES = LazyPattern(
    r"\b(?:yes|yeah|yep|yup|ya|yea|sure|absolutely|definitely|of course|go ahead|go for it|go on|do it|do that|"
    r"please do|proceed|confirm(?:ed)?|refund it|cancel it|change it)\b"
)
# What may change the offer itself rather than add to it ("yes, and I'd like the annual one",
# "yes and 3 tickets" in SGD's corrections): a plan, a billing period, a number, a date.
_RESHAPES = LazyPattern(
    r"\d|\b(?:starter|pro|team|basic|premium|business|enterprise|economy|annual|annually|yearly|monthly|weekly|"
    r"one|ones|instead|extra|more|less|fewer|first|second|third|last|later|earlier|"
    r"january|february|march|april|may|june|july|august|september|october|november|december)\b"
)
# Words that put the rest on top of the offer rather than in its place.
_ADDITIVE = LazyPattern(r"\b(?:too|as well|also|in addition|besides|on top)\b")
_INSTEAD = LazyPattern(r"\b(?:instead|rather|only|make it|change it)\b")
_PERSON = LazyPattern(r"\b(?:person|people|human|someone|somebody|staff|manager|supervisor|agent|representative|operator)\b")


def _split_yes(said: str) -> tuple[str, str] | None | Literal[False]:
    """(the yes, the request after it) when the answer is a clear yes followed by a request
    of its own; False when what follows may change the offer itself; None otherwise. The whole answer has passed the checks for a no, a change of
    mind and an attempt (read_answer), so the rest says nothing against the offer."""
    for m in _ADDED.finditer(said):
        head, tail = said[: m.start()].strip(" ,;.!"), said[m.end() :].strip()
        tail = re.sub(r"^(?:(?:and|also|plus)\b[\s,]*)+", "", tail)
        if not head or len(_words(tail)) < 2:
            continue
        if _RESHAPES.search(tail) and not (_ADDITIVE.search(said[m.start() :]) and not _INSTEAD.search(tail)):
            # It may change what was offered: no yes to the offer as it stands. Said to come on
            # top ("and refund january too"), it is a request of its own (issue 38).
            return False
        if _STRONG_YES.search(head) and _plain_yes(head) and not _asks(head) and not _PERSON.search(tail):
            return head, tail
        return None  # the first break decides: what comes before it is the answer, or it is none
    return None


def assents_only(text: str) -> bool:
    """A yes and nothing more ("please do", "yes please", "go on then"): it answers what was
    said before it, and names nothing to do of its own ("yes, cancel it" does)."""
    said = _NO_OBSTACLE.sub("sure", _respelled(normalise(text)))
    return read_answer(text) == "yes" and not _beyond_the_offer(said, "")


def rest_after_yes(text: str) -> str:
    """What a yes to an offer asks for besides ("yes go ahead, and also when is my next
    payment?" -> "when is my next payment?"); "" when the answer is a yes and nothing more, or
    no yes at all."""
    said = _NO_OBSTACLE.sub("sure", _respelled(normalise(text)))
    if read_answer(text) != "yes":
        return ""
    split = _split_yes(said)
    if not split:
        return ""
    head, tail = split
    verb = _VERB.search(head)
    if verb is not None and _NO_VERB.match(tail):
        # "yes refund it, and the february one too": the rest borrows the yes's verb (issue 38).
        return f"{verb.group(0)} {tail}"
    return tail


# The verb of a yes that says what to do ("yes please refund it"), and a rest that has none of
# its own ("the february one as well").
_VERB = LazyPattern(r"\b(?:" + _VERB_WORDS + r")\b")
_NO_VERB = LazyPattern(r"^(?:the|my|that|this|those|these|them|our)\b")


# A question asked after a first clause ("ok, can i get a discount"; "ok and why is it so much",
# unpunctuated: an acknowledgement, then the question, is no yes to anything): an auxiliary and
# a person, or a question word, at a clause's start.
_CLAUSE_QUESTION = LazyPattern(
    r"(?:[,;.!]\s*|\b(?:and|so|then)\s+|^(?:(?:ok|okay|k|alright|right|oh|ah|hmm+|well)[ ,]+)+)(?:(?:can|could|will|would|do|does|did|is|are|should|shall|may|might|have|has)\s+(?:i|you|u|we|they|he|she)\b"
    r"|(?:how|what|when|where|why|which|who)\b)"
)


def asks(text: str) -> bool:
    """Whether a customer's message is put as a question (a question mark, or a clause that
    opens with a question word or an auxiliary), its email addresses aside."""
    return _asks(normalise(EMAIL_ADDRESS.sub(" ", text)).strip(" ,.;:"))


def _asks(said: str) -> bool:
    return "?" in said or _QUESTION_START.match(said) is not None or _CLAUSE_QUESTION.search(said) is not None


def _starts_no(said: str) -> bool:
    return re.match(r"^(?:no|nope|nah|not|don'?t|wait|hold|hang|stop|never)\b", said) is not None


def _short(said: str) -> bool:
    return len(_words(said)) <= 6


def _words(said: str) -> list[str]:
    return [w for w in re.split(r"[^\w'$€£.,-]+", said) if w.strip(".,!-")]


def _others(said: str, allowed: int) -> bool:
    """Whether `said` holds more than `allowed` words that are neither assent nor the offer's
    own (or any question mark)."""
    rest = _ASSENT_RE.sub(" ", said)
    others = [w for w in (w.strip(".,!-—") for w in _words(rest)) if w and w not in _FILLER and not _MONEY_OR_ID.match(w)]
    return len(others) > allowed or "?" in said


def _rest_is_filler(said: str) -> bool:
    return not _others(said, _MAX_OTHER_WORDS) and len(_words(said)) <= 14 and not _MORE_ASKED.search(said)


# A yes that goes on to ask for something more is not only a yes ("yes, and also ..."), nor
# is a request for a person with "please" in it ("I want to talk to a real person please").
_MORE_ASKED = LazyPattern(
    r"\b(?:also|another|too|as well|one more|else|besides|person|people|human|someone|somebody|anyone|staff|"
    r"manager|supervisor|agent|representative|rep|operator|talk|speak|call me|phone)\b"
)


# --- whether a yes names the offered thing or another ---------------------------------------------

_ID = LazyPattern(r"\b([a-z]{2,4})[- ]?(\d{3,})\b")
# An amount: with its cents, or with its currency sign ("$70": a yes to another sum than offered).
_AMOUNT = LazyPattern(r"(?<![\w.])(?:[$€£](\d[\d,]*(?:\.\d\d)?)|(\d+\.\d\d))(?![\d])")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH_DAY = LazyPattern(
    r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(?:the\s+)?([0-3]?\d)(?:st|nd|rd|th)?\b"
    r"|\b([0-3]?\d)(?:st|nd|rd|th)?\s+(?:of\s+)?(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b"
)
_DAY = LazyPattern(r"\b(?:the|on|from|of|dated)\s+([0-3]?\d)(?:st|nd|rd|th)\b")
_ISO = LazyPattern(r"^\d{4}-(\d\d)-(\d\d)")


def names_another(text: str, arguments: dict[str, Any], records: Sequence[dict[str, Any]]) -> bool:
    """Whether a yes names something other than what the offered call acts on: an id that is
    none of the call's arguments, an amount that is not its amount, or a date or day of the
    month that is not the date of the record the call acts on (a record of `records`, the
    tools' results in the log, whose "id" is one of the call's arguments). A date that cannot
    be checked counts as another: "yes, the one on the 1st" after the offer of the March 3rd
    refund runs nothing (issue 38); the agent asks about the charge named. So does a month that
    is not the record's ("yes, refund the february one"). Only the yes is read: a request after
    it ("yes, and the february one too") is taken as a request of its own."""
    said = normalise(text)
    split = _split_yes(said)
    if split:
        said = split[0]  # "yes, and the february one too": the rest is a request of its own
    values = {str(v).casefold() for v in arguments.values() if isinstance(v, str | int | float)}
    for prefix, num in _ID.findall(said):
        if f"{prefix}-{num}" not in values:
            return True
    amounts = [float(v) for v in arguments.values() if isinstance(v, int | float) and not isinstance(v, bool)]
    said_amounts = [float((signed or cents).replace(",", "")) for signed, cents in _AMOUNT.findall(said)]
    if amounts and any(all(abs(a - b) > 0.005 for b in amounts) for a in said_amounts):
        return True
    dates = [(_MONTHS.index((m1 or m2)[:3]) + 1, int(d1 or d2)) for m1, d1, d2, m2 in _MONTH_DAY.findall(said)]
    days = [int(d) for d in _DAY.findall(_MONTH_DAY.sub(" ", said))]
    # A month named alone ("yes, refund the february one"); "may" alone is the verb far more often.
    months = [_MONTHS.index(m[:3]) + 1 for m in _MONTH.findall(_MONTH_DAY.sub(" ", said)) if m != "may"]
    if not dates and not days and not months:
        return False
    target = [r for r in records if str(r.get("id", "")).casefold() in values]
    on = {(int(m.group(1)), int(m.group(2))) for r in target for v in r.values() if isinstance(v, str) and (m := _ISO.match(v))}
    if not on:
        return True
    return (
        any(d not in on for d in dates)
        or any(day not in {d for _, d in on} for day in days)
        or any(month not in {m for m, _ in on} for month in months)
    )


def records_in(outputs: Sequence[str]) -> list[dict[str, Any]]:
    """Every JSON object with an "id" in tool results' outputs (nested in lists and objects)."""
    found: list[dict[str, Any]] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if "id" in value:
                found.append(value)
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for output in outputs:
        try:
            walk(json.loads(output))
        except ValueError:
            continue
    return found


# --- an action asked for: confirm = "request" (engine/tools.py) ---------------------------------

# How many of the customer's latest messages a request is looked for in: the request, then the
# email the desk asked for, then perhaps a correction of it.
REQUEST_WINDOW = 3


def asks_for_something(clause: str, *, put_as_question: bool = False) -> bool:
    """Whether one clause of a customer's message asks for something to be done, as the act
    reader (readers/acts.py: trained on public dialogues and the desk's examples) reads it: read
    as a request, or, when it is not put as a question, more a request than a problem told
    (a short fragment such as "need a new one" the reader is unsure of). A request said without
    its verb ("my password reset link please", "a new invoice for march thx") is the reader's own
    reading (trained on the corpora's short requests and the desk's examples, money-10): no rule
    for "please" sits beside it, so "my card got declined again pls" stays a problem told."""
    from supportdesk.readers import acts  # lazy: its data is read on first use

    if _WHO_ONLY.match(clause):
        return False  # "CUS-1018", "dana@example.com": who writes, not what to do (read as a request)
    reading = acts.read_act(clause)
    if reading.act == "request":
        # Put with a "?", a request asks for the action with its verb ("can you send me a reset
        # link?", "is possible you send me a link to make new one?") or names only the thing asked
        # for ("password reset?", "reset link pls?"). A noun phrase saying something about that
        # thing is a question about it, however sure the reader is: "min password length?" (0.76),
        # "reset link expiry?" (1.00), "reset email from you guys legit?" (0.87) each sent a reset
        # link nobody asked for (controls-h18; the mutation run after round 16).
        return not put_as_question or _ACTION_ASKED.search(clause) is not None or _only_the_thing_asked(clause)
    if put_as_question or asks(clause):
        return False
    said = acts.probabilities(reading.scores)
    request = said.get("request", 0.0)
    return request >= _FRAGMENT_REQUEST and request > said.get("problem", 0.0)


_FRAGMENT_REQUEST = 0.1
# An action's verb used as one, on what it is done to or for: "send me", "reset my", "get a new";
# in any of its forms, as a learner writes it ("can you sending me the mail for to change
# password?", understand-held-17: the verb's form is grammar, the request the same).
_ACTION_ASKED = LazyPattern(
    rf"\b(?:{_VERB_WORDS}|e?mail|get|give|need|want)(?:s|es|ed|ing|d)?\s+(?:me|us|my|our|a|an|the|it|one|another|new)\b", re.IGNORECASE
)
# What a request put as a bare noun phrase may hold: the words of the thing asked for (the reset
# link's: the one tool a request alone may run) and the words around any request.
_THING_ASKED = frozenset(
    "password passwords pw pwd passcode reset link links email mail new another one a an the my our "
    "pls please plz thx thanks ty again now asap quick just hey hi hello ok to for".split()
) | frozenset(_VERB_WORDS.split("|"))


# A question word asked on its own ("why?", "how come?").
_WH_ALONE = LazyPattern(r"\W*(?:why|how come|how so|what for|since when)\W*$", re.IGNORECASE)
# Who writes: a customer id or an email address.
_WHO_PATTERN = rf"[a-z]{{2,4}}-?\d{{3,}}|{EMAIL_ADDRESS.pattern}"
_WHO = LazyPattern(rf"\b(?:{_WHO_PATTERN})", re.IGNORECASE)
# A clause of customer ids and email addresses only: the act reader reads "CUS-1018" as a verbless
# request, and a problem told beside it ("typed my password into a fake page. CUS-1018") counted as
# asking for the reset link its article names, which then went out unasked (held-11, config desk).
_WHO_ONLY = LazyPattern(rf"^[\s.,;:!?()-]*(?:(?:{_WHO_PATTERN})[\s.,;:!?()-]*)+$", re.IGNORECASE)


def _only_the_thing_asked(clause: str) -> bool:
    """Whether the clause names only the thing asked for ("password reset", "Pw reset -
    <email>", "reset to <email>"), who writes aside."""
    words = [w.strip(".,!-'").lower() for w in _words(_WHO.sub(" ", clause))]
    return any(words) and all(w in _THING_ASKED for w in words if w)


def request_clauses(text: str) -> list[str]:
    """The clauses of a message that ask for something (`asks_for_something`)."""
    from supportdesk.readers import acts

    return [c for c in acts.clauses(text) if asks_for_something(c, put_as_question=_put_as_question(text, c))]


def requests_apart(text: str) -> list[str]:
    """The clauses of a message that ask for something (`request_clauses`) when no other clause of
    it asks a question, else none: "forgot my pw again 🙄 link to <email>" asks for the link after
    telling the problem; "out of curiosity, when i get a reset email, how long does the link keep
    working?" and "2 questions about the reset mail: is it valid for long, and is the first link
    still usable?" ask about it (the act reader hears "out of curiosity" and "2 questions about
    ..." as requests). A question about money beside the request is a matter of its own, as the
    money reader reads it ("send a reset link to <email> please, and where would i find my
    receipts?" asks for the link, held-9); so is a problem told ("can't get in at all, can you
    send me one of those password emails", held-15). The one reading of a request for the reset link: the
    reset tool's (tools/technical.py) and the technical skill's."""
    from supportdesk.readers import acts, gates

    requested = request_clauses(text)
    # (put as a question and read as one: "can't get in at all" opens with an auxiliary, a problem
    # told; a question word asked on its own is one however the reader hears it: "reset link says
    # expired, why?" reads "why" as a problem, and a link went out)
    if any(
        asks(c) and acts.read_act(c).act == "question" and not gates.reads_money(c)
        or _put_as_question(text, c) and _WH_ALONE.match(c)  # (naming no matter, money or other)
        for c in acts.clauses(text) if c not in requested
    ):
        return []
    return requested


def _put_as_question(text: str, clause: str) -> bool:
    """The clause ends with a "?", its own or the one right after it in the message (the clause
    reader leaves a clause's "?" out when more follows: "min password length? <email>")."""
    if clause.rstrip().endswith("?"):
        return True
    at = text.find(clause)
    return at >= 0 and text[at + len(clause):].lstrip().startswith("?")


def _stem_of(word: str) -> str:
    return re.sub(r"(?:ing|ed|es|s)$", "", word) if len(word) > 4 else word


def asks_for_by_name(tool: str, text: str) -> bool:
    """A tool with no reader of its own is asked for when a clause that asks for something
    names its verb and another word of its name ("unlock_account": "please unlock my account")."""
    words = [_stem_of(w) for w in tool.casefold().split("_") if w]
    if len(words) < 2:
        return False
    for clause in request_clauses(text):
        said = {_stem_of(w) for w in _WORD_RE.findall(normalise(clause))}
        if words[0] in said and any(w in said for w in words[1:]):
            return True
    return False


def request_scan_start(items: Sequence[Item], tool: str) -> int | None:
    """Where `requested` stops reading back for `tool`: the index of the tool's last successful
    run, of the last answer to its offer, or of the REQUEST_WINDOW-th customer message back,
    whichever is newest; None when `items` hold none of these (all of them are read). A turn's
    held items answer for the whole log when this is not None (`TurnReads.since_request`)."""
    customer = 0
    for at in range(len(items) - 1, -1, -1):
        item = items[at]
        if isinstance(item, ToolResult) and item.name == tool and not item.is_error:
            return at
        if isinstance(item, Confirmation | Decline) and item.tool == tool:
            return at
        if isinstance(item, Message) and item.role == "customer":
            customer += 1
            if customer >= REQUEST_WINDOW:
                return at
    return None


def requested(items: Sequence[Item], tool: str, asked: Callable[[str], bool]) -> bool:
    """Whether the customer's latest messages ask for `tool`'s action (`asked` reads one
    message): the last REQUEST_WINDOW of them since the action was last done or its offer
    answered (a request is spent once it ran, or once the customer said no to it). The latest
    message taking it back ("no, don't") withdraws it."""
    start = request_scan_start(items, tool)
    said = [i.text for i in reversed(items[start or 0:]) if isinstance(i, Message) and i.role == "customer"]
    if not said:
        return False
    if asked(said[0]):
        return True
    if read_answer(said[0]) in ("no", "change_of_mind"):
        return False  # the latest message, not asking for it, takes it back
    return any(asked(text) for text in said[1:])


# --- where an offer stands, from the log --------------------------------------------------------


@dataclass(frozen=True)
class OpenOffer:
    """The last offer of a session, not yet confirmed or declined on record."""

    offer: Offer
    # The customer message right after it (the only one that may answer it), if any yet.
    answer: Message | None
    # A person took the conversation over since, or the customer wrote again after the answer
    # message without that answer being read: the offer can no longer be taken up.
    expired: bool


# A question put to the customer: "?", or the steps' "let me know whether that works".
_ASKS_CUSTOMER = LazyPattern(r"\?|\blet me know\b")
_ACTION_VERB = LazyPattern(rf"\b(?:{_VERB_WORDS})\b")


def asked_beside(turn: Sequence[Item], offer: Offer) -> bool:
    """Whether the turn that made `offer` (its items before the offer, `offers_exchange`) also asked the customer
    something of another agent's: the steps for a trouble ("let me know whether that works"),
    then the refund or cancellation asked beside it offered by billing. A yes after such a reply
    may answer either question ("great, all sorted now" reports on the steps), so it confirms the
    offer only when it names the offer's action (`names_the_action`) or is assent and nothing
    else (`assents_only`: "yes", "sure go ahead" answer the offer's question, asked last)."""
    return any(
        isinstance(i, Message) and i.role == "agent" and i.agent != offer.agent and _ASKS_CUSTOMER.search(i.text.lower()) is not None
        for i in turn
    )


# What a customer gives when an agent asks who they are: an email, an id ("CUS-1001"), a card's
# last four; and the words said around it ("sure, it's dana@example.com").
_DETAIL = LazyPattern(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b[a-z]{2,4}-\d+\b|\b\d{4}\b")
_AROUND_DETAILS = frozenset(
    "it's its it is my the email e-mail mail address account login on under registered i use used here you go "
    "sure ok okay yes yeah thanks thank ty thx that this one".split()
)


def gives_only_details(text: str) -> bool:
    """The message only gives an email, an id or a card's last four (and the words around them):
    an answer to the agent that asked for it, and to no other question asked before it."""
    said = normalise(text)
    if _DETAIL.search(said) is None:
        return False
    return all(w in _AROUND_DETAILS for w in (w.strip(".,!?:;") for w in _DETAIL.sub(" ", said).split()) if w)


def offers_exchange(before: Sequence[Item]) -> list[Item] | None:
    """The items before an offer (`before`, oldest first, ending where the offer stands) that
    `asked_beside` reads: from the customer message the offer's turn answered, or further back
    while that message only gave details the offering agent asked for (`gives_only_details`):
    steps given for a trouble, then "what's your email?", "dana@example.com", then the refund
    offered, still leave the steps' "let me know whether that works" unanswered beside the offer.
    The agent message each such detail answered (the last one before it, "what's your email?")
    is left out: answered, it is asked beside nothing, whoever makes the offer (billing asks, a
    senior offers). None when `before` holds no customer message to start from."""
    start, answered = None, set()
    for at in range(len(before) - 1, -1, -1):
        item = before[at]
        if isinstance(item, Message) and item.role == "customer":
            start = at
            if not gives_only_details(item.text):
                break
            asked = next((b for b in range(at - 1, -1, -1) if _said_by_an_agent(before[b])), None)
            if asked is not None:
                answered.add(asked)
    return [before[at] for at in range(start, len(before)) if at not in answered] if start is not None else None


def _said_by_an_agent(item: Item) -> bool:
    return isinstance(item, Message) and item.role == "agent"


def names_the_action(text: str, offered: str) -> bool:
    """The answer names a verb of the offer's own action ("yes refund it" after "would you like me
    to refund it?"; "refunded" counts as "refund"): a yes that answers this offer, not another
    question asked beside it. An offer that names no such verb is named by none."""
    said = normalise(text)
    return any(re.search(rf"\b{re.escape(verb)}", said) for verb in {m.group(0) for m in _ACTION_VERB.finditer(normalise(offered))})


def open_offer(since: Sequence[Item]) -> OpenOffer | None:
    """The state of the offer `since` starts with (the log from the session's last offer on),
    or None when it is closed (or `since` does not start with an offer)."""
    if not since or not isinstance(since[0], Offer):
        return None
    offer, answer, expired = since[0], None, False
    # A scan for three things, not a dispatch over every kind: the rest pass by.
    for item in since[1:]:
        if isinstance(item, Confirmation | Decline) and item.offer_id == offer.offer_id:
            return None
        if isinstance(item, Takeover):
            expired = True
        elif isinstance(item, Message) and item.role == "customer":
            if answer is None:
                answer = item
            else:
                expired = True
    return OpenOffer(offer, answer, expired)


# The meta key a channel's structured answer is kept under on the customer's message:
# {"offer_id": ..., "yes": true|false} (a button pressed under the offer).
ANSWER_META = "answer"


def structured_answer(message: Message) -> tuple[str, bool] | None:
    """(offer id, yes?) when a channel sent this message as a button answer, else None."""
    said = message.meta.get(ANSWER_META) if message.meta else None
    if not isinstance(said, dict):
        return None
    offer_id, yes = said.get("offer_id"), said.get("yes")
    if not isinstance(offer_id, str) or not isinstance(yes, bool):
        return None
    return offer_id, yes


def answer_meta(offer_id: str, yes: bool) -> dict[str, Any]:
    """The meta a channel stores with a button's answer (`structured_answer` reads it back)."""
    return {ANSWER_META: {"offer_id": offer_id, "yes": yes}}


def offer_sentence(action: str) -> str:
    """What the customer is asked: the action in checkable words, and how to answer."""
    return f"Before I do anything: shall I {action}? Please answer yes or no."


def states_the_call(text: str, terms: Sequence[Sequence[str]]) -> bool:
    """Whether a model's own words can stand as the offer of a call: a question that names
    each of `terms` (the tool's `offer_terms`: the action and its amount / plan / target) in
    one of its spellings, as whole words. Nothing to check is never enough."""
    said = normalise(text)
    if "?" not in said or not terms:
        return False
    return all(any(_names(said, normalise(word)) for word in group if word.strip()) for group in terms)


def _names(said: str, word: str) -> bool:
    return re.search(rf"(?<![\w.,-]){re.escape(word)}(?![\w]|[.,]\d)", said) is not None


def yes_label(action: str) -> str:
    """A button's label ("Yes, refund $29.99 on charge CH-9004 (duplicate charge)")."""
    return f"Yes, {action}"


def same_call(tool_a: str, args_a: dict[str, Any] | None, tool_b: str, args_b: dict[str, Any] | None) -> bool:
    """Two calls are the same when the tool and every argument are (key order aside)."""
    return tool_a == tool_b and json.dumps(args_a or {}, sort_keys=True, default=str) == json.dumps(
        args_b or {}, sort_keys=True, default=str
    )
