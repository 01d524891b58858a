"""The shipped guardrails: hooks that check a customer's message before any model sees it.

Local and cheap (regular expressions and the domain lexicon, well under a millisecond a message),
unlike the Agents SDK demo's two LLM guardrail calls per message. Each is turned on in the desk
file (`[hooks.guardrails] relevance = true`, `injection = true`) and, when it trips, vetoes the
turn: the conversation shows a notice naming the guardrail and why, and the agent answers with
a fixed, polite reply; no model is called.

The patterns start from the offline agents' own cues (`models/offline/cues.py`: one definition
of an out-of-scope question and of an attempt to talk an agent out of its rules) and add the
phrasings of prompt injection and jailbreaks that aim at any model, not only the embedded one.
Measured in tests/test_hooks_guardrails.py: false positives on tests/data/triage/dev.jsonl
and hits on a collected set of injection phrasings.
"""

from __future__ import annotations

import re

from supportdesk.engine.hooks import DeskHook, TurnStarted, Veto
from supportdesk.lexicon import normalise
from supportdesk.models.offline.cues import INJECTION, OUT_OF_SCOPE

_FLAGS = re.IGNORECASE


def _any(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), _FLAGS)


# Aimed at a model's instructions rather than at an agent's rules: role-play frames, fake
# system turns, requests to print the prompt, token-smuggling markers.
MORE_INJECTION = _any(
    r"\b(?:ignore|disregard|forget|override|bypass)\b[^.?!]{0,40}\b(?:instructions?|prompts?|rules|guidelines|guardrails|safety|filters?|programming|training|directives?)\b",
    r"\b(?:reveal|show|print|repeat|output|tell me|what (?:is|are))\b[^.?!]{0,30}\b(?:your|the) (?:system |initial |hidden |original )?(?:prompt|instructions|rules|configuration)\b",
    r"\b(?:do anything now|\bDAN\b|no restrictions|without (?:any )?(?:restrictions|limits|filters|rules)|unfiltered|uncensored)\b",
    r"\b(?:act|behave|respond|answer) as (?:if you (?:were|are) )?(?:an? )?(?:unrestricted|unfiltered|evil|different|new) ",
    r"\bfrom now on\b[^.?!]{0,60}\b(?:you (?:are|will|must)|respond|answer|act)\b",
    r"\bnew (?:instructions|rules|system prompt)\s*:",
    r"(?:^|\n)\s*(?:system|assistant|developer)\s*:",
    r"<\|?(?:im_start|im_end|system|endoftext)\|?>|\[/?(?:INST|SYS)\]|###\s*(?:system|instruction)",
    r"\b(?:roleplay|role-play|role play)\b[^.?!]{0,40}\b(?:no rules|anything|unrestricted)\b",
    r"\bsudo mode\b|\bgod mode\b|\badmin mode\b|\bmaintenance mode\b",
    r"\byour (?:new )?(?:goal|task|job|purpose) is now\b",
    r"\bapprove (?:the |this |my )?refund without (?:checking|approval|limits?)\b",
)

# Asked of a support desk but for someone else: trivia, creative writing, advice outside it.
MORE_OFF_TOPIC = _any(
    r"\b(?:lyrics|horoscope|sudoku|crossword)\b",
    r"\b(?:translate|summari[sz]e) (?:this|the following)\b",
    r"\bwho (?:won|will win)\b", r"\bmovie recommendations?\b", r"\brecommend (?:a|some) (?:movie|book|restaurant)s?\b",
    r"\b(?:medical|legal) advice\b", r"\bdiagnos(?:e|is)\b.*\b(?:symptoms?|rash|pain)\b",
)

# Words that make a message the desk's business even if it also asks something else.
_DOMAIN = re.compile(
    r"\b(?:account|plan|subscription|invoice|bill|billing|receipt|payment|pay|paid|price|pricing|charge|"
    r"refund|money|login|log in|sign in|password|app|upgrade|downgrade|cancel|renew|trial|order|support)\b",
    _FLAGS,
)
_CONCEPT = re.compile(r"\b\w+_c\b")

INJECTION_REPLY = (
    "I can't change how I work or share my instructions, but I'm happy to help with your account, "
    "billing or a technical problem."
)
RELEVANCE_REPLY = (
    "I can only help with questions about your account, billing and our product. "
    "Is there something about those I can do for you?"
)


def looks_like_injection(text: str) -> bool:
    return bool(INJECTION.search(text) or MORE_INJECTION.search(text))


def looks_off_topic(text: str) -> bool:
    if not (OUT_OF_SCOPE.search(text) or MORE_OFF_TOPIC.search(text)):
        return False
    return not (_DOMAIN.search(text) or _CONCEPT.search(normalise(text)))


class InjectionGuardrail(DeskHook):
    """Vetoes a turn whose message tries to rewrite the agents' instructions."""

    def before_turn(self, event: TurnStarted) -> Veto | None:
        if event.text and looks_like_injection(event.text):
            return Veto("the message tries to change the agents' instructions", reply=INJECTION_REPLY)
        return None


class RelevanceGuardrail(DeskHook):
    """Vetoes a turn whose message is for someone other than a support desk."""

    def before_turn(self, event: TurnStarted) -> Veto | None:
        if event.text and looks_off_topic(event.text):
            return Veto("the message is not about the product or the customer's account", reply=RELEVANCE_REPLY)
        return None
