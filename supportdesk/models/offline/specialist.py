"""The specialists: what an agent does is decided by the tools it holds and its level.

This module holds what every specialist shares (the `Step` a decision is built on, the topics,
the dispatch to a skill, hand-backs to triage, requests for a person); each skill is a module of
`skills/`:

- money (`skills/money/`, it holds `refund_charge` / `find_charges`): explain charges, spot
  duplicates, refund within the desk's limit for its level, credits;
- account (`skills/account.py`): find the customer, plans (their prices read from the store with
  `list_plans`), payment methods, cancellations, the next payment, invoices;
- technical (`skills/technical.py`, it holds `search_kb` / `send_password_reset`): walk the
  customer through the knowledge base, send password resets, report bugs;
- senior (`skills/senior.py`): a level-2 agent with both takes what level 1 escalated, using the
  shared context and the whole history, so the customer never repeats anything;
- generic (`skills/generic.py`): an agent defined only in the desk file uses its own tools.

Every agent hands a new topic it has no skill for back to the entry agent, answers
out-of-scope requests politely and records a request for a person.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from supportdesk.config import AgentConfig
from supportdesk.engine.confirmation import hedged, read_answer
from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, Transfer
from supportdesk.items import Confirmation, Decline, Handoff, Message
from supportdesk.models.offline import cues, dialogue, scope
from supportdesk.models.offline import slots as slot_extraction
from supportdesk.models.offline.router import Router, content_words
from supportdesk.models.offline.skills import generic
from supportdesk.models.offline.skills.account import AccountSkill, next_billing_date
from supportdesk.models.offline.skills.common import ANSWERS_QUESTION, CARD_NUMBER_WARNING, PLAN_CHANGE_ASKED, nice_date, with_article
from supportdesk.models.offline.skills.money import MoneySkill, asks
from supportdesk.models.offline.skills.senior import SeniorSkill
from supportdesk.models.offline.skills.technical import POINTS_BACK, REPORT_BACK, TechSkill, points_back, tells_trouble
from supportdesk.models.offline.view import View
from supportdesk.models.offline.kept import keep
from supportdesk.readers import acts
from supportdesk.text import clip_words
from supportdesk.patterns import LazyPattern

__all__ = ["ANSWERS_QUESTION", "OTHER_LANGUAGE_REPLY", "Specialist", "Step", "next_billing_date", "nice_date", "skills_of"]

# The tools whose holder the skills below drive as a money agent (skills/money/) or a technical
# one (skills/technical.py): what `skills_of` reads. Not the tools that move money (those
# declare effect="money": engine/tools.py; the figures' copy is store/figures.MONEY_TOOLS).
MONEY_SKILL_TOOLS = ("refund_charge", "find_charges")
TECH_SKILL_TOOLS = ("search_kb", "send_password_reset")
GENERAL_TOOLS = ("request_human",)  # every agent may hold it; it is no skill
TOPIC_SWITCH_CONFIDENCE = 0.8
# Mid-conversation, a message on a matter of its own that asks nothing of the agent holding the
# conversation goes back to triage when the router leans elsewhere at least this much, or when
# another agent's job covers its words this much better (scope.share_in_scope).
STRAY_CONFIDENCE = 0.5
# A question waiting behind an answered one is taken up in the same reply only when the router
# places it on its agent at least this surely (`Specialist._question_after_answer`): a part split
# off unsurely ("and do i have to pay it all upfront", 0.90 technical's on three known words) is
# the answered matter's own more often than another team's, and waits as before.
WAITING_QUESTION_CONFIDENCE = 0.95
STRAY_SHARE_MARGIN = 0.2
_THANKS_WORD = LazyPattern(r"\b(?:thanks|thank you|thank u|thx|ty|tysm|cheers)\b", re.I)
THANKS_FOR_A_FIX_CONFIDENCE = 0.85  # the act reader's: thanks, and nothing else asked or told
STRAY_ACT_CONFIDENCE = 0.6  # the act reader's (supportdesk/readers): a problem or a request, clearly
# Words that point back at what was just said ("is that the cheapest?", "why is it so high?"):
# a short message with one follows up on our answer; one that says much on its own (at least
# scope.MIN_WEIGHT of rare words: "someone changed my password and it wasn't me") is read on its own.
POLICY_NOTE = (
    "Just so you know, I can't set aside our policies: they are enforced by our systems for every customer. "
)
HUMAN_REQUESTED = (
    "I've asked a member of our staff to join; they'll see this whole conversation, so you won't need "
    "to repeat anything. I'm still here in the meantime."
)
# The embedded model reads and writes English only: a message in another language gets a person.
OTHER_LANGUAGE_REPLY = (
    "I'm sorry, I can only read and write English. I've asked a member of our staff to join this "
    "conversation; they'll see your message. If you can, you're welcome to write to me in English meanwhile."
)
TRYING_REPLY = (
    "Sounds good. Let me know how it goes: if it doesn't fix things, tell me what you see and I'll take it further."
)
# (It names a person, as the knowledge base's abstention does: the customer hears that someone,
# not something, takes it from here.)
UNKNOWN_GROUND_REPLY = (
    "That's {what}, and nothing in our tools or help articles covers it, so I won't guess. I've asked a person "
    "from our team to take it from here; they'll see this whole conversation and get back to you."
)


def skills_of(agent: AgentConfig) -> frozenset[str]:
    """What an agent can do, from the tools it holds: "money", "tech", or, for an agent with
    tools of its own that are neither (defined only in the desk file), "own:<name>".
    Asked several times a step: kept by the agent's name and tools (issue 34)."""
    key = (agent.name, tuple(agent.tools))
    found = _SKILLS.get(key)
    if found is None:
        found = keep(_SKILLS, key, _skills_of(agent), 256)
    return found


_SKILLS: dict[tuple[str, tuple[str, ...]], frozenset[str]] = {}


def _skills_of(agent: AgentConfig) -> frozenset[str]:
    out: set[str] = set()
    if any(t in agent.tools for t in MONEY_SKILL_TOOLS):
        out.add("money")
    if any(t in agent.tools for t in TECH_SKILL_TOOLS):
        out.add("tech")
    if not out and any(t not in GENERAL_TOOLS for t in agent.tools):
        out.add(f"own:{agent.name}")
    return frozenset(out)



_SIGNED_IN = LazyPattern(r"\b(?:log(?:ged|s)? ?(?:in|on)(?:to)?|logins?|sign(?:ed|s)? ?(?:in|on)(?:to)?|sign-?ins?)\b", re.I)


def about_charges(text: str) -> bool:
    """The message speaks of charges. "a login from russia i don't recognise" does not: a
    sign-in not recognised is no charge (issue 38), though "recognise" alone speaks of one."""
    words = {m.group(0).lower() for m in cues.ABOUT_CHARGES.finditer(text)}
    if words and all(w.startswith("recogni") for w in words) and _SIGNED_IN.search(text):
        return False
    return bool(words)

@dataclass
class Step:
    """One decision under construction: the action plus what to add to every action."""

    view: View
    note: str = ""
    # Set when this reply closes what the customer came for (a refund made, steps that worked):
    # the moment to hand over an issue they raised for someone else.
    resolved: bool = False

    def context(self, extra: dict[str, Any] | None = None, *, keep_offer: bool = False) -> dict[str, Any]:
        out = self.view.facts.context_writes(self.view.context)
        # A reply that proposes nothing closes the offer before it: a later "yes" confirms nothing.
        if not keep_offer and self.view.context.get(dialogue.PENDING_OFFER) is not None:
            out[dialogue.PENDING_OFFER] = None
        for k, v in (extra or {}).items():
            if self.view.context.get(k) != v:
                out[k] = v
        return out

    def answer(self, text: str, **context: Any) -> Answer:
        return Answer(self.note + text, context=self.context(context))

    def offer(
        self, text: str, action: str, arguments: dict[str, Any], options: list[str] | None = None,
        batch: list[dict[str, Any]] | None = None, for_agent: str = "", **context: Any,
    ) -> Answer | CallTools:
        """A reply that proposes one account action and waits for the customer's yes.

        Where the desk's gate holds the call (issue 33), the call goes with the question: the
        question is the desk's offer, the customer is asked once, and the gate runs the call on
        their yes. `for_agent`: the agent the action is passed up to (a refund above this
        agent's limit); the gate offers it on that agent's behalf, and the yes hands over to it
        and it runs the call. Otherwise (a desk that turned the gate off for the tool, an amount
        above the limit of the agent that would run it) only the question is sent, and the yes
        is read next turn."""
        v = self.view
        made = dialogue.Offer(
            action, dict(arguments), text[:300], len(v.customer_messages), v.agent.name, list(options or []), list(batch or [])
        )
        context[dialogue.PENDING_OFFER] = made.as_context()
        if self.gated(action, arguments, for_agent):
            return CallTools(
                [RequestedCall(v.call_id(), action, dict(arguments), for_agent=for_agent)], text=self.note + text,
                context=self.context(context),
            )
        return Answer(self.note + text, context=self.context(context))

    def gated(self, action: str, arguments: dict[str, Any], for_agent: str = "") -> bool:
        """Whether the desk's gate will hold this call for the customer's yes (rather than run
        it, or refuse it for an amount above the limit of the agent that would run it: this
        one, or `for_agent`, the one it is passed up to)."""
        v = self.view
        if not any(t.name == action and t.confirm for t in v.request.tools):
            return False
        runs_as = v.desk.agents.get(for_agent) if for_agent else v.agent
        if runs_as is None or action not in runs_as.tools:
            return False
        amount = arguments.get("amount")
        limit = v.tool_limits(action).per_call(runs_as.level)
        if limit is not None:  # a tool whose amounts are limited
            if not isinstance(amount, int | float) or amount > limit + 1e-9:
                return False
        return True

    def call(self, name: str, arguments: dict[str, Any], **context: Any) -> CallTools:
        # Lookups keep an open offer for the rest of the turn; carrying out an action closes it.
        keep = name not in dialogue.ACCOUNT_ACTIONS
        return CallTools([RequestedCall(self.view.call_id(), name, arguments)], context=self.context(context, keep_offer=keep))

    def calls(self, calls: list[tuple[str, dict[str, Any]]], **context: Any) -> CallTools:
        requested = [RequestedCall(self.view.call_id(k), name, args) for k, (name, args) in enumerate(calls)]
        return CallTools(requested, context=self.context(context))


def asks_where_we_are(text: str) -> bool:
    """"any update?", "so, any news?", "ok what now": the act reader hears a greeting, thanks or
    goodbye, or a question naming one thing at most (a status check is the question it is to the act
    reader since money-10's short requests; the router alone hears "update" as the app's)."""
    act = acts.read_act(text).act
    return act in ("greeting", "thanks", "goodbye") or (act == "question" and len(content_words(text)) <= 1)


# Requests for an action of the desk's tools (money's and the reset link): a matter asking one
# waits for a trouble's steps, even worded as a question ("can you refund the march charge?").
_ACTION_ASKED = (cues.REFUND, cues.DUPLICATE, cues.CANCEL, cues.PLAN_CHANGE, cues.CREDIT, cues.RESET, cues.PAYMENT_METHOD)
# Of those, the money skill's: an account action asked beside a trouble is offered in the same
# reply (`Specialist._action_waits`); the reset link is the steps' own agent's to send.
_MONEY_ACTION_ASKED = tuple(p for p in _ACTION_ASKED if p is not cues.RESET)
# What the account's reads give (an invoice or receipt, the next payment, a price, the plan on):
# asked for as a request ("pls send me the march invoice"), it is information all the same, a
# look-up that moves no money (understand-held-29). Rules, as the desk's things are named by
# rules: the learned desk intents reader hears "could you send me my february invoice" as a refund.
_READ_ASKED = (cues.INVOICE, cues.NEXT_PAYMENT, cues.PRICING, cues.MY_PLAN)
# A question of how long, how soon or how many about an action's thing ("how long is a password
# reset link valid for?", "how many days does a refund take?") asks a fact of it, not the action:
# the action's cue names its thing, and the question's opening says what is asked (held-30).
_FACT_OF_ACTION = LazyPattern(r"^\W*(?:and |also |so |but )?(?:for )?how (?:long|soon|quickly|fast|many)\b", re.I)


def asks_information(text: str) -> bool:
    """A matter that only asks for information ("also whats team per month?", "when is my next
    payment due?", "the invoice number for march", "and pls send me the march invoice"): the act
    reader hears a question, or a request of what the account's reads give (`_READ_ASKED`), and
    no request of an action is in it (`_ACTION_ASKED`). Such a matter is answered beside a
    trouble's steps (`Specialist._question_waits`); anything else waits its turn."""
    fact_asked = bool(_FACT_OF_ACTION.search(text))
    if not fact_asked and any(p.search(text) for p in _ACTION_ASKED):
        return False
    # (read beside who the customer is: "CUS-1003" or an email after the question leans the act
    # reader, which knows no address, to a request or a problem)
    act = acts.read_act(cues.beside_facts(text) or text).act
    if act in ("request", "question") and any(p.search(text) for p in _READ_ASKED):
        return True
    # (and asked in a question's form: a "?" or a question's opening word; the act reader alone
    # hears "made changes at work today, got home" as a question)
    asked = "?" in text or bool(cues.OPENS_AS_QUESTION.search(text)) or asks.is_question(text)
    return asked and act == "question"


def _gave_steps(action) -> bool:
    """The reply ends with a trouble's steps or an article, asking nothing but how they went (a
    reply asking a choice of its own keeps its question last, and what waits after it waits)."""
    return action.text.rstrip().endswith((REPORT_BACK, ANSWERS_QUESTION))


def closing_clauses(text: str) -> bool:
    """"got it, thx", "received, ta": each clause is, to the act reader, thanks or leave-taking
    (an acknowledgement reads as a goodbye), and one is thanks. Read clause by clause, since the
    whole short message may lean to neither ("got it, thx" leans to goodbye, "received, ta" to
    nothing clearly): with nothing asked or told beside it, it closes what the desk did."""
    said = [acts.read_act(clause).act for clause in acts.clauses(text)]
    return bool(said) and "thanks" in said and all(act in ("thanks", "goodbye") for act in said)


# Said once, after the first reply to a message that raised another matter waiting its turn.
# The close of a settled matter; when another matter is taken up next in the same reply the
# question gives way to it ("You're welcome! Now for the other thing ...", `_hand_over_next`).
ANYTHING_ELSE = "Is there anything else I can help with?"
OTHER_MATTER_FOLLOWS = "I haven't forgotten the other thing you mentioned: it comes next, once this is settled."


class Specialist(MoneySkill, AccountSkill, TechSkill, SeniorSkill):
    def __init__(self, view: View, router: Router | None):
        self.view = view
        self.router = router
        self.me = view.agent
        self.skills = skills_of(self.me)
        self.step = Step(view)
        if view.latest and cues.INJECTION.search(view.latest) and not view.answered_this_turn(view.agent.name):
            self.step.note = POLICY_NOTE

    def skill_for_agent(self, name: str | None) -> str | None:
        agent = self.view.desk.agents.get(name or "")
        if agent is None:
            return None
        found = skills_of(agent)
        return next(iter(found)) if len(found) == 1 else None

    def topic(self, text: str, min_confidence: float = 0.0) -> str | None:
        if self.router is None or not text.strip():
            return None
        route = self.router.route(text)
        if route.agent is None or route.confidence < min_confidence:
            return None
        return self.skill_for_agent(route.agent)

    def peer_for(self, text: str, min_confidence: float) -> str | None:
        """Another agent at this agent's level that the entry agent's router sends `text` to
        surely, though it holds the same skill as this one: a config-only "security" agent
        with the tech skill, while the technical agent holds the conversation. Whose matter it
        is follows the router (trained on each agent's own description and examples), not the
        skill the two share (issue 38: no built-in rule outranks a config agent)."""
        if self.router is None or not text.strip():
            return None
        # Whose matter it is among this agent's peers (same level, a skill shared): an agent at
        # another level the words also lean to ("the app closes by itself" leans a little to the
        # senior agent) must not hide that the technical agent's examples know it, not security's.
        agents = self.view.desk.agents
        others = [
            n for n in self.router.targets
            if n != self.me.name and (n not in agents or agents[n].level != self.me.level or not (skills_of(agents[n]) & self.skills))
        ]
        if len(others) >= len(self.router.targets) - 1:
            return None  # no peer at all
        route = self.router.route(text, exclude=others)
        other = agents.get(route.agent or "")
        # Leaning to the peer less surely, the message is still the peer's when this agent's job
        # (its description and examples) has none of its meaning-bearing words: an agent taught a
        # handful of examples is never surely wrong about a matter (classifier: BACKGROUND_MASS).
        # Someone else's access told, and the peer is the agent whose examples tell of it
        # (`Router.access_agent`, the access reader's reading): the peer's, however little the words
        # lean ("got an email claiming to be from acme asking me to log in through their link" read
        # 72 % security, under the switch's bar, while the technical agent held it; sec17).
        leans = other is not None and other.name != self.me.name and (
            route.confidence >= min_confidence or (route.confidence >= STRAY_CONFIDENCE and scope.outside_scope(self.me, text))
            or self.router.access_agent(text, [other.name]) == other.name
        )
        if not leans and route.agent is None and route.prediction is not None and self._not_my_access_matter(text):
            # The agent whose matters are someone else's access holds it, and the message tells no
            # one else's access in words none of its job uses: the word model torn between it and
            # a peer ("acme on my ipad quits the second it launches": technical 0.50, security
            # 0.50: no example of either says "quits") places it with the peer it leans to at all,
            # as the router places a message after a question (config-17).
            lean = agents.get(route.prediction.label)
            other, leans = lean, lean is not None and lean.name != self.me.name
        if not leans:
            # The router torn between the peers (security's dozen examples against technical's
            # many: "push notifications on my android stopped" read 51 % security, route-16): the
            # job words say whose it is when none of this agent's are in it and a peer's cover it
            # clearly more, as `_others_job_fits_better` says for a hand-back.
            if not scope.outside_scope(self.me, text):
                return None
            mine = scope.share_in_scope(self.me, text)[0]
            peers = [agents[n] for n in self.router.targets if n not in others and n != self.me.name and n in agents]
            fitting = [a for a in peers if scope.share_in_scope(a, text)[0] >= mine + STRAY_SHARE_MARGIN]
            if len(fitting) != 1:
                return None
            other = fitting[0]
        assert other is not None
        if other.level != self.me.level or not (skills_of(other) & self.skills):
            return None  # someone to escalate to or back from, or another skill (the skill test tells those)
        if self._about_my_calls(text):
            return None  # "the reset link never arrived" after this agent sent one: a follow-up of ours
        return other.name

    def _not_my_access_matter(self, text: str) -> bool:
        """This agent is the one whose examples tell of someone else's access, and `text` tells
        none (the access reader) in words outside this agent's job (`scope.outside_scope`)."""
        assert self.router is not None
        return (
            self.router.access_owner == self.me.name
            and self.router.access_agent(text) is None
            and scope.outside_scope(self.me, text)
        )

    @staticmethod
    def _names_charge_facts(text: str) -> bool:
        facts = slot_extraction.extract(text)
        return bool(facts.dates or facts.amounts or facts.invoice_ids)

    def _about_my_calls(self, text: str) -> bool:
        """The text names the object of a tool this agent ran in this conversation (the words of
        its name but the verb: "send_password_reset" -> password, reset)."""
        said = {w[:5] for w in re.findall(r"[a-z]+", text.lower())}
        for call in self.view.tools:
            if call.agent != self.me.name or call.name in ("request_human",):
                continue
            objects = {w[:5] for w in call.name.split("_")[1:] if len(w) > 2}
            if objects & said:
                return True
        return False

    def topic_texts(self) -> list[str]:
        """The customer's messages on the current topic: since triage last routed it."""
        entry = self.view.desk.desk.entry
        history = self.view.history
        start = 0
        for k, item in enumerate(history):
            if isinstance(item, Handoff) and item.from_agent == entry:
                start = k
        before = [i for i in history[:start] if isinstance(i, Message) and i.role == "customer"]
        first_seq = before[-1].seq if before else 0
        texts = [m.text for m in self.view.customer_messages if m.seq >= first_seq]
        # What triage routed here (one of several problems in a message, or one handed over
        # later) comes first: the message itself may be about something else too.
        issue = self.view.context.get("issue")
        if isinstance(issue, str) and issue and issue not in texts:
            texts.insert(0, issue)
        return texts

    def return_target(self) -> str | None:
        entry = self.view.desk.desk.entry
        return entry if entry in self.me.handoffs else None

    def decide(self):
        action = self._decide()
        if self.view.also and self.view.also_after is None and isinstance(action, Answer):
            # A yes with a request after it: the offered call's result is said now, and the
            # request is taken next, in this same turn (View reads it as the latest message).
            return CallTools([], text=action.text, context=action.context)
        return action

    def _decide(self):
        v = self.view
        text = v.latest

        if v.turn_tools and v.turn_tools[-1].name == "request_human" and v.turn_tools[-1].done:
            ground = cues.unknown_ground(text, v.desk.desk.name) if text else None
            if ground is not None and not self._covered(ground):
                return self.step.answer(UNKNOWN_GROUND_REPLY.format(what=with_article(ground)))
            if text and cues.other_language(text):
                return self.step.answer(OTHER_LANGUAGE_REPLY)
            return self.step.answer(HUMAN_REQUESTED)
        if text and not v.turn_tools:
            report = self._steps_report_elsewhere(text) or self._offer_put_again_on_report(text)
            if report is not None:
                return report
            early = self._conversational(text)
            if early is not None:
                return self._hand_over_next(early)
            beyond = self._beyond_me(text)
            if beyond is not None:
                return beyond
            waiting = self._waiting_matter_asked(text)
            if waiting is not None:
                return waiting

        return self._hand_over_next(self._decide_topic(text))

    def _decide_topic(self, text: str):
        focus, switch_clause, own_text = self._focus(text)
        if switch_clause is not None and own_text is None:
            return self._return(switch_clause, "")

        if focus == "money":
            action = self._money(own_text if own_text is not None else text)
        elif focus == "tech":
            action = self._tech(own_text if own_text is not None else text)
        else:  # an agent's own tools ("own:<name>"), or none at all
            action = generic.Generic(self).decide(own_text if own_text is not None else text)
        if switch_clause is not None and isinstance(action, Answer):
            return self._return(switch_clause, action.text, action.context)
        if self.step.note and isinstance(action, Transfer) and action.text and not action.text.startswith(self.step.note):
            action.text = self.step.note + action.text
        return action

    def _conversational(self, text: str):
        """A request for a person, small talk, thanks or out-of-scope questions."""
        v = self.view
        if cues.asks_for_person(text):
            if v.has_tool("request_human") and not v.calls("request_human", this_turn=True):
                return self.step.call("request_human", {"reason": text[:300]})
        language = cues.other_language(text)
        if language is not None:
            if v.has_tool("request_human") and not v.calls("request_human", this_turn=True):
                return self.step.call("request_human", {"reason": f"writes in {language}: {text[:250]}"})
            return self.step.answer(OTHER_LANGUAGE_REPLY)
        route = self.router.route(text) if self.router else None
        unsure = route is None or route.agent is None
        if cues.asks_for_person(text):
            return self.step.answer(HUMAN_REQUESTED)
        if cues.CARD_NUMBER.search(text):
            return self.step.answer(CARD_NUMBER_WARNING)
        # Just handed this conversation for a problem: that problem comes first, not the pleasantries.
        # (Not a report on our own steps handed back by another agent, "ok it works now, thanks":
        # `_steps_report_elsewhere`; its thanks closes the trouble here.)
        reported = any(h.handoff_kind == "return" for h in v.turn_handoffs) and any(
            t.name == "search_kb" and t.agent == self.me.name for t in v.tools
        ) and cues.reports_on_steps(text)
        if any(h.to_agent == self.me.name for h in v.turn_handoffs) and not reported:
            return None
        if unsure and cues.GREETING.search(text):
            return self.step.answer("Hello again! What else can I help you with?")
        # "ok, I'll try that": they go off to try what we said; nothing to look up or decide yet.
        tried_later = cues.TRYING.search(text) and not cues.PROBLEM.search(text) and not cues.STEPS_FAILED.search(text)
        # An offer the desk's gate held and closed on this message (not a yes) is answered: it
        # holds back nothing (the steps' reset offer and "thanks, that sorted it").
        offer_open = dialogue.open_offer(v.context, len(v.customer_messages)) is not None and v.offer_answer in (None, "yes")
        if tried_later and v.last_agent_text() and not offer_open:
            return self.step.answer(TRYING_REPLY)
        # A thanks that gives what we asked for ("ok thanks, its <email>") answers the question:
        # what the customer asked for goes on with it, not a "you're welcome" (issue 38).
        gives = self._names_charge_facts(text) or bool(slot_extraction.extract(text).emails)
        thanks = not gives and (cues.courtesy_only(text) or self._thanks_for_a_fix(text, reported=reported))
        # "yes" to "Does that answer your question?": what they asked is answered.
        answered = v.last_agent_text().endswith(ANSWERS_QUESTION) and read_answer(text) == "yes"
        if (thanks or answered) and not offer_open:
            # "that worked, thanks": what they came for is settled.
            self.step.resolved = True
            glad = "You're welcome!" if thanks else "Glad that helped!"
            return self.step.answer(f"{glad} {ANYTHING_ELSE}")
        if scope.listed_outside(text) and not self._has_own_request(text, any_skill=True):
            return self.step.answer(
                "I'm afraid that's outside what I can help with: I can only help with your account, billing and the app. "
                "Is there anything there I can do for you?"
            )
        return None

    def _thanks_for_a_fix(self, text: str, reported: bool = False) -> bool:
        """Thanks for what worked, in words of its own ("good, it sync now, thank you",
        "restarting fixed it, thx"): the act reader hears thanks, clearly, and nothing in it is a
        problem, a failed step, a request or a question. What was solved is settled, so a matter
        that waited its turn is handed over (issue 38)."""
        # Thanks said in so many words, or heard as thanks in a clause of its own (`closing_clauses`)
        # after a reply of ours that asked nothing: "ok" or "sure" to our question answers it.
        worded = bool(_THANKS_WORD.search(text))
        heard = not self.view.last_agent_text().rstrip().endswith("?") and closing_clauses(text)
        # Or our own steps' report handed back here (`reported`) says they worked: "ok the app works
        # now after the update, thanks" (the act reader leans to a request there).
        works = reported and cues.WORKS_NOW.search(text) is not None
        if "?" in text or not (worded or heard or works):
            return False
        # (a trouble named in the clause that says it is fixed, "that fixed the crashing", is the
        # one solved, not a new one told)
        told = any(cues.PROBLEM.search(c) and not cues.WORKS_NOW.search(c) for c in acts.clauses(text))
        if dialogue.refuses(text) or told or cues.STEPS_FAILED.search(text) or self._has_own_request(text, any_skill=True):
            return False
        reading = acts.read_act(text) if worded else None
        if reading is not None and reading.act == "thanks" and reading.confidence >= THANKS_FOR_A_FIX_CONFIDENCE:
            return True
        return heard or works

    def _covered(self, ground: str) -> bool:
        """Some tool this agent holds is about `ground` (a desk with a privacy tool handles privacy)."""
        words = cues.UNKNOWN_GROUND_WORDS.get(ground, ())
        return any(any(w in f"{t.name} {t.description}".lower() for w in words) for t in self.view.request.tools)

    def ground_owner(self, ground: str) -> str | None:
        """The one other agent the entry agent hands to whose own description says `ground` is its
        job (a desk file's privacy agent: "Personal data requests ... (GDPR)"): the matter goes back
        to triage for that agent, not up to a person as ground no one covers (config-15). The
        description, not the examples: it is the desk author's statement of the job."""
        v = self.view
        words = cues.UNKNOWN_GROUND_WORDS.get(ground, ())
        entry = v.desk.agents.get(v.desk.desk.entry)
        others = [v.desk.agents[n] for n in (entry.handoffs if entry else []) if n in v.desk.agents and n != self.me.name]
        # (at a word's start: "vat" is no word of "private" or "activate")
        owners = [a.name for a in others if any(re.search(rf"\b{re.escape(w)}", a.description.lower()) for w in words)]
        return owners[0] if len(owners) == 1 and self.return_target() is not None else None

    def _question_answered(self, action) -> bool:
        """The matter handed here this turn was a question, answered from what a tool read (the
        reply asks only whether it answered, `ANSWERS_QUESTION`), offering nothing: an answer has
        no steps to try and waits on no choice of the customer's, so another matter the same
        message raised is taken up in this same reply (multi-15: "how long does the bin keep
        stuff and when's my next bill?" answers both). A reply that asks something else ("would
        you like to change your plan?"), or an article given for a trouble told ("the android app
        freezes": the technical skill's `tells_trouble`), waits for the customer first."""
        v = self.view
        issue = str(v.context.get("issue") or "")
        return (
            isinstance(action, Answer) and not action.context.get(dialogue.PENDING_OFFER)
            and action.text.rstrip().endswith(ANSWERS_QUESTION) and not tells_trouble(issue)
            and any(h.to_agent == self.me.name for h in v.turn_handoffs)
            and any(t.agent == self.me.name for t in v.turn_tools)
        )

    def _hand_over_next(self, action):
        """The problem is resolved, or the question answered: hand over the next one the
        customer raised, unasked."""
        after_answer = self._question_after_answer(action)
        if after_answer:
            # (the price's invitation to change plans gives way to the next question: a "yes"
            # after it would otherwise answer an invitation no longer last in the reply)
            action = dataclasses.replace(action, text=action.text.rstrip().removesuffix(PLAN_CHANGE_ASKED).rstrip())
        if not isinstance(action, Answer):
            return self._said_to_follow(action)
        # Settled here (resolved, a question answered): no report on steps is owed. Steps given
        # with an action or a question taken up beside them still owe it (`STEPS_OUT`).
        settled = self.step.resolved or after_answer or self._question_answered(action)
        if not (settled or self._question_waits(action) or self._action_waits(action)):
            return self._said_to_follow(action)
        waiting = dialogue.pending_issues(self.view.context)
        if not waiting:
            return action
        target = self.return_target()
        nxt, rest = waiting[0], waiting[1:]
        if target is None:
            return action
        title = self.view.desk.agents[nxt["agent"]].title.lower() if nxt["agent"] in self.view.desk.agents else "the right"
        context = dict(action.context)
        context.update(
            self.step.context({"pending_topic": nxt["text"], "pending_agent": nxt["agent"], dialogue.PENDING_ISSUES: rest or None})
        )
        if not settled:
            # Steps given, not yet tried: the customer's report on them is ours (`_steps_report_elsewhere`).
            context[dialogue.STEPS_OUT] = {
                "agent": self.me.name, "at": len(self.view.customer_messages), "issue": str(self.view.context.get("issue") or "")[:300],
            }
        return Transfer(
            to_agent=target,
            reason=f"next issue: {nxt.get('topic') or nxt['text'][:80]}",
            handoff_kind="return",
            text=f"{action.text.rstrip().removesuffix(ANYTHING_ELSE).rstrip()} Now for the other thing you mentioned ({nxt.get('topic') or 'your other question'}): "
            f"I'm passing you to our {title} team.",
            context=context,
        )

    def _action_waits(self, action) -> bool:
        """The next matter waiting asks the money skill's agent for an account action (a
        cancellation, a refund or a duplicate given back, a plan change, a credit, another card:
        `_MONEY_ACTION_ASKED`, or charges told, `about_charges`): the customer has asked for it, whatever the trouble's steps do, so
        it is offered in this same reply, after the steps (issue 38: cancel-18's "the mac app
        won't open, and honestly i'm done, please cancel my subscription"; since round 20, the
        lead's call, any money action: held-29's "push notifications stopped ... also you charged
        my starter plan twice"). Only offered: the desk's confirmation gate still runs it on the
        customer's yes to that exact action alone, and the report on the steps still goes back to
        their agent (`STEPS_OUT`). A cancellation follows any answer; the others follow steps or
        an article given (a reply asking a choice of its own keeps its question last)."""
        nxt = self._next_matter_here(action)
        if nxt is None:
            return False
        text = str(nxt.get("text", ""))
        agent = self.view.desk.agents.get(str(nxt.get("agent") or ""))
        if agent is None or "money" not in skills_of(agent):
            return False
        if cues.CANCEL.search(text):
            return True
        steps = _gave_steps(action)
        # (or charges told, which the money skill reads against the account: "i see two starter
        # charges on the 24th and 25th" is a duplicate the charges show, offered back as one; a
        # question about a charge, "how much did i pay on the 6th?", is information, and one the
        # money skill may answer with an offer the customer never asked for: it waits as before)
        told = about_charges(text) and "?" not in text and acts.read_act(cues.beside_facts(text) or text).act != "question"
        return steps and (any(p.search(text) for p in _MONEY_ACTION_ASKED) or told)

    def _question_waits(self, action) -> bool:
        """The next matter waiting only asks for information a lookup gives (a price, the next
        payment, an invoice, a plan, an article's fact): it costs the customer nothing to have it
        now, so it is taken up in this same reply, after a trouble's steps (issue 38, two19: "sync
        stuck on the laptop, and pro's monthly price"). A matter asking for an action (a refund, a
        plan change, a credit, a reset) still waits for the steps' outcome, and every action still
        needs its offer and the customer's yes. The steps' report comes back here
        (`_steps_report_elsewhere`): `STEPS_OUT` names whose steps await it."""
        nxt = self._next_matter_here(action)
        if nxt is None:
            return False
        # Only after a trouble's steps or article, which ask nothing but how they went: a reply
        # asking a choice of its own ("would you like to change your plan?", "shall I bring in a
        # person?") keeps its question last, and the next matter waits for the answer.
        steps = tells_trouble(str(self.view.context.get("issue") or "")) and _gave_steps(action)
        return steps and asks_information(str(nxt.get("text", "")))

    def _question_after_answer(self, action) -> bool:
        """The matter handed here was a question only asking information, answered here (a price
        quoted, ending with the invitation to change plans, or `ANSWERS_QUESTION`), and the next
        matter waiting only asks information too (held-26: "how much is pro per month, and where
        do i turn on two-factor?"): as after a trouble's steps (`_question_waits`), it is taken
        up in this same reply, not said to follow. An offer made here (`PENDING_OFFER`) or a next
        matter asking an action still waits: every action needs its offer and the customer's yes.
        A matter the customer counted off ("two things: 1) ... 2) ...", `triage.counts_matters`)
        is theirs by their word, placed surely or not (understand-held-28)."""
        nxt = self._next_matter_here(action)
        if nxt is None:
            return False
        issue = str(self.view.context.get("issue") or "")
        return (
            # (the answered matter asked no action: read by its requests, not the act reader, which
            # hears "please how much cost the starter plan?" as a request)
            action.text.rstrip().endswith((PLAN_CHANGE_ASKED, ANSWERS_QUESTION)) and not tells_trouble(issue)
            and not any(p.search(issue) for p in _ACTION_ASKED)
            and asks_information(str(nxt.get("text", ""))) and (nxt.get("counted") is True or self._placed_surely(nxt))
        )

    def _next_matter_here(self, action) -> dict[str, Any] | None:
        """The next matter the customer raised, when this turn's reply could take it up too: the
        reply answers (`Answer`) and offers nothing that waits for a yes, and the matter was handed
        here this turn. The frame the three take-it-up-now rules share (`_action_waits`,
        `_question_waits`, `_question_after_answer`); each adds what the reply and matter must be."""
        if not isinstance(action, Answer) or action.context.get(dialogue.PENDING_OFFER):
            return None
        waiting = dialogue.pending_issues(self.view.context)
        if not waiting or not any(h.to_agent == self.me.name for h in self.view.turn_handoffs):
            return None
        return waiting[0]

    def _placed_surely(self, matter: dict[str, Any]) -> bool:
        """The router sends the waiting matter's words to its agent surely (`WAITING_QUESTION_CONFIDENCE`),
        or at all when this agent answered money and the matter names none (`cues.names_money`):
        "how can i hook up slack to it?" (technical 0.84) after team's price is no follow-up on the
        price, as "and do i have to pay it all upfront" is (two20)."""
        text = str(matter.get("text", ""))
        about = cues.beside_facts(text) or text
        if self.router is None or not about.strip():
            return False
        route = self.router.route(about)
        if route.agent != matter.get("agent"):
            return False
        return route.confidence >= WAITING_QUESTION_CONFIDENCE or ("money" in self.skills and not cues.names_money(about))

    def _steps_report_elsewhere(self, text: str):
        """The message right after a reply that gave another agent's steps for a trouble and then
        answered a question here (`_question_waits`) reports on those steps ("still crashing",
        "ok it works now"): it goes back, through triage, to the agent whose steps they were, which
        takes the trouble further or closes it (issue 38, two19). Only that next message, or the
        first after answers to offers alone (`_only_offers_answered_since`): later ones are read as usual."""
        v = self.view
        out = v.context.get(dialogue.STEPS_OUT)
        if not isinstance(out, dict) or out.get("agent") == self.me.name or out.get("agent") not in v.desk.agents:
            return None
        target = self.return_target()
        if target is None or not self._only_offers_answered_since(out.get("at")) or v.turn_handoffs:
            return None
        if not cues.reports_on_steps(text) or self._has_own_request(text, any_skill=True):
            return None
        title = v.desk.agents[out["agent"]].title.lower()
        pending: dict[str, Any] = {"pending_topic": text, "pending_agent": out["agent"]}
        issue = str(v.context.get("issue") or "")
        if v.declined_tool in dialogue.ACCOUNT_ACTIONS and issue:
            # The report closed the action offered here beside the steps ("ok the cache thing fixed
            # it, thx" is no yes to the refund, the gate's reading): the customer asked for it, so
            # it waits its turn again, offered anew once the steps' agent is done (issue 38, round 20).
            came = [h for h in v.history if isinstance(h, Handoff) and h.to_agent == self.me.name]
            topic = came[-1].reason if came else ""
            mine = {"agent": self.me.name, "topic": topic, "text": issue[:300]}
            pending[dialogue.PENDING_ISSUES] = [mine, *dialogue.pending_issues(v.context)]
        return Transfer(
            to_agent=target,
            reason=f"report on {title}'s steps: {clip_words(text, 100)}",
            handoff_kind="return",
            text=f"Thanks for telling me how the steps went: I'm passing you back to our {title} team, whose steps they were.",
            context=self.step.context(pending),
        )

    def _only_offers_answered_since(self, at: object) -> bool:
        """Every customer message since the reply that gave the steps (`at`: how many there were
        then), but the latest, answered an offer made (a `Confirmation` or `Decline` names it) or
        only said who the customer is: a
        refund offered beside the steps and taken ("yes refund it") keeps the next report on the
        steps ("the app still crashes though") theirs (issue 38, round 20)."""
        v = self.view
        if not isinstance(at, int) or not 0 < at < len(v.customer_messages):
            return False
        answered = {i.answer_seq for i in v.history if isinstance(i, Confirmation | Decline)}
        # (or only gave who the customer is, asked by the agent the next matter went to: "what's
        # your email?" answered between the steps and the offer leaves the steps unanswered)
        return all(m.seq in answered or cues.only_facts(m.text) for m in v.customer_messages[at:-1])

    def _said_to_follow(self, action):
        """The first reply to a message that raised another matter, which waits for this one:
        the customer hears that it is not forgotten (multi-15: "or the second said to follow")."""
        v = self.view
        if not (
            isinstance(action, Answer) and dialogue.pending_issues(v.context)
            and any(h.to_agent == self.me.name for h in v.turn_handoffs) and not v.answered_this_turn(self.me.name)
        ):
            return action
        # (before a closing question, which stays last: the next message answers it, and the
        # readers of our last reply look at how it ends, `ANSWERS_QUESTION`)
        text = action.text.rstrip()
        cut = max(text.rfind(". ", 0, len(text) - 1), text.rfind("\n")) + 1 if text.endswith("?") else 0
        said = f"{text[:cut].rstrip()} {OTHER_MATTER_FOLLOWS} {text[cut:].lstrip()}" if cut else f"{text} {OTHER_MATTER_FOLLOWS}"
        return dataclasses.replace(action, text=said)

    def _waiting_matter_asked(self, text: str):
        """The customer asks for a matter that waits its turn ("and the accountant thing?"): its
        words, and none of the matter in hand's, are in the message. It is taken up now, as it
        would be once the matter in hand is settled (issue 38, held-6)."""
        waiting = dialogue.pending_issues(self.view.context)
        target = self.return_target()
        if not waiting or target is None or any(h.to_agent == self.me.name for h in self.view.turn_handoffs):
            return None  # (the message that raised it is the one just handed here)
        said = set(content_words(text)) - set(content_words(str(self.view.context.get("issue") or "")))
        for n, matter in enumerate(waiting):
            if matter.get("agent") != self.me.name and said & set(content_words(str(matter.get("text", "")))):
                rest = waiting[:n] + waiting[n + 1:]
                title = self.view.desk.agents[matter["agent"]].title.lower() if matter["agent"] in self.view.desk.agents else "the right"
                return Transfer(
                    to_agent=target,
                    reason=f"next issue: {matter.get('topic') or str(matter['text'])[:80]}",
                    handoff_kind="return",
                    text=f"Now for the other thing you mentioned ({matter.get('topic') or 'your other question'}): I'm passing you to our {title} team.",
                    context=self.step.context({"pending_topic": matter["text"], "pending_agent": matter["agent"], dialogue.PENDING_ISSUES: rest or None}),
                )
        return None

    def _focus(self, text: str) -> tuple[str | None, str | None, str | None]:
        """(skill to use, a clause on a topic this agent has no skill for, the rest of the text)."""
        v = self.view
        switch_clause = None
        own: list[str] = []
        # Just handed this conversation for a topic: the rest of the message was dealt with
        # before the handoff, so there is no switching away from it again this turn.
        arrived = any(h.to_agent == self.me.name for h in v.turn_handoffs)
        # A plain yes to an open offer is not a new topic, whatever words it uses.
        # (Read by the desk's one reader. After a yes the gate took, `text` is the request the
        # offer answered, read afresh like any request: its other topics are still to do.)
        confirming = (
            v.offer_answer != "yes"
            and dialogue.open_offer(v.context, len(v.customer_messages)) is not None
            and read_answer(text) == "yes"
        )
        # "forget the money, the real issue is ...": the customer moves on; follow at once.
        dropping = bool(cues.DROP.search(text))
        if text and self.router is not None and not arrived and not (confirming and not dropping) and not self._points_back(text):
            # Dropping something, the customer names what they drop and what they want instead,
            # often in one sentence: weigh each part, and follow the one that is not dropped.
            parts = cues.parts(text) if dropping else cues.clauses(text)
            for clause in parts:
                # "the email is dana@example.com" answers our question; it is no new topic.
                # Nor is a yes or a no: it answers what we asked.
                # Nor is "still the same": it tells how our last answer went.
                answer = cues.only_facts(clause) or (
                    not dropping
                    and (
                        read_answer(clause) == "yes" or dialogue.refuses(clause) or cues.STEPS_FAILED.search(clause)
                        or cues.TRYING.search(clause) or cues.setup_only(clause)
                        # ("let me think" to the offer the gate just closed: still deciding about it;
                        # "let me check with my partner first": waiting for someone's word on it)
                        or (v.declined_tool is not None and (hedged(clause) or asks.waits_for_someone(clause)))
                        # ("when would i lose access then?": a question the gate closed its offer on,
                        # telling no trouble: about the offer, answered with it standing; money-18)
                        or self._asks_about_closed_offer(clause)
                    )
                    and not self._has_own_request(clause, any_skill=True)
                )
                # Nor is "any update?": it asks where we are (`asks_where_we_are`), whatever the
                # router's words lean to.
                answer = answer or (
                    not dropping and asks_where_we_are(clause) and not self._has_own_request(clause, any_skill=True)
                )
                # Nor, dropping or not, the no itself to the offer the gate just closed ("nah forget
                # it, leave it on paypal": "nah forget it" turns the card down; money-17).
                answer = answer or bool(v.declined_tool is not None and self._only_turns_down(clause))
                # Nor is a charge named by its day or amount while the money agent holds it ("and
                # the march 1 one too"), when nothing in it is a problem: a charge's facts are this
                # agent's matter, whatever the router makes of the words around them.
                answer = answer or (
                    not dropping and "money" in self.skills and self._names_charge_facts(clause)
                    and not cues.PROBLEM.search(clause)
                )
                # Nor is a person asked for in the words of this agent's own person tool, when the
                # agent works through its tools' descriptions (generic's reading): it brings the
                # person itself ("can a human from your team look at this" is no Team plan, config-15).
                answer = answer or (not dropping and self._asks_my_person(clause))
                # Never an answer, though: someone else's access told, which a peer's examples tell
                # of ("an email pretending to be acme just wanted my password confirmed": the answer
                # reader heard "confirmed" as a yes, and the matter stayed with technical; sec17).
                answer = answer and not (self.router.access_agent(clause) not in (None, self.me.name))
                skill = None if answer else self.topic(clause, 0.0 if dropping else TOPIC_SWITCH_CONFIDENCE)
                if skill is None and not answer:
                    # A request of a skill this agent lacks, in that skill's own request words ("i
                    # just want to cancel acme" to security): the router leaning to that skill is
                    # enough, unsure or not ("honestly after this" leaned billing 0.61; held-24).
                    asked = self._asks_skill(clause)
                    leaning = self.topic(clause)
                    skill = leaning if asked is not None and asked not in self.skills and leaning == asked else None
                peer = None if answer else self.peer_for(clause, TOPIC_SWITCH_CONFIDENCE)
                if skill is not None and skill not in self.skills and switch_clause is None and not self._has_own_request(clause):
                    switch_clause = clause
                elif peer is not None and switch_clause is None:
                    switch_clause = clause  # a peer's matter, in words its request cues share with ours
                elif not (dropping and cues.DROP.search(clause) and not cues.REAL_ISSUE.search(clause)):
                    own.append(clause)
        own_text: str | None = " ".join(own) if switch_clause is not None else text
        if switch_clause is not None and not any(
            (self.topic(c) in self.skills or self._has_own_request(c)) and self.peer_for(c, TOPIC_SWITCH_CONFIDENCE) is None for c in own
        ):
            own_text = None
        if len(self.skills) == 1:
            return next(iter(self.skills)), switch_clause, own_text
        if dropping and switch_clause is None and own:
            # An agent with several skills follows the part that is not dropped.
            wanted = self.topic(" ".join(own))
            if wanted in self.skills:
                return wanted, None, " ".join(own)
        if not self.skills:
            return None, switch_clause, own_text
        # Several skills (a senior agent): what was escalated first, then what the customer asks now.
        ctx = v.context
        if ctx.get("refund_amount") and not self._refunded(ctx.get("charge_id")) and not self._pending_refund():
            return "money", switch_clause, own_text
        if ctx.get("credit_reason") and not v.calls("issue_credit"):
            return "money", switch_clause, own_text
        if v.declined_tool in dialogue.ACCOUNT_ACTIONS and text and (
            hedged(text) or asks.waits_for_someone(text) or self._asks_about_closed_offer(text)
        ):
            # "umm not sure, maybe" to the credit the gate held: the offer's matter, put again
            # by the skill that made it (`skills/money/offers.py`, `_held_again`), not a new topic.
            return "money", switch_clause, own_text
        if ctx.get("bug_summary") and not v.calls("create_ticket"):
            return "tech", switch_clause, own_text
        if v.turn_tools:
            last = v.turn_tools[-1].name
            if last in ("search_kb", "send_password_reset", "create_ticket"):
                return "tech", switch_clause, own_text
            if last not in ("request_human",):
                return "money", switch_clause, own_text
        if text and self._asks_skill(text) == "money":
            # "also update my card to visa ending 7777" to a senior agent: a request of the money
            # skill's (a card named, a refund, a plan) is money's, however the words lean ("card"
            # leans to the app's card troubles); the slots it holds are read there (issue 38).
            return "money", switch_clause, own_text
        now = self.topic(text) if text else None
        if now in self.skills:
            return now, switch_clause, own_text
        category = self.skill_for_agent(ctx.get("category"))
        return (category if category in self.skills else sorted(self.skills)[0]), switch_clause, own_text

    def _asks_my_person(self, clause: str) -> bool:
        """The clause asks for what this agent's person tool brings, read as the generic skill reads
        it, for an agent that uses its tools by their descriptions: one with tools of its own, or
        the tech skill without a knowledge base (a config-only security agent). The built-in
        agents keep cues.HUMAN (their words are many: "my person", "a second person")."""
        works_by_description = any(s.startswith("own:") for s in self.skills) or (
            self.skills == {"tech"} and not self.view.has_tool("search_kb")
        )
        return works_by_description and generic.Generic(self).person_asked_for(clause) is not None

    def _points_back(self, text: str) -> bool:
        """Asked how the steps went, the customer points back at them ("did all of those, same
        story"): nothing in it is asked of any skill, so it is no new topic, whatever the router
        makes of its other words (issue 38, held-6). ("Anything else?" invites a new matter.)"""
        told_the_steps = self.view.last_agent_text().rstrip().endswith(REPORT_BACK)
        return told_the_steps and points_back(text) and not self._has_own_request(text, any_skill=True)

    def _asks_skill(self, text: str) -> str | None:
        """The one skill whose requests the text makes ("money" or "tech"), None for none or both."""
        money = any(p.search(text) for p in (cues.REFUND, cues.DUPLICATE, cues.CANCEL, cues.PLAN_CHANGE, cues.INVOICE, cues.CREDIT)) or bool(
            cues.PAYMENT_METHOD.search(text) and cues.card_description(text)
        )
        tech = any(p.search(text) for p in (cues.RESET, cues.LOGIN, cues.BUG)) or bool(cues.APP_TROUBLE.search(text))
        return "money" if money and not tech else "tech" if tech and not money else None

    def _has_own_request(self, clause: str, any_skill: bool = False) -> bool:
        if ("money" in self.skills or any_skill) and any(
            p.search(clause)
            for p in (cues.REFUND, cues.DUPLICATE, cues.CANCEL, cues.PLAN_CHANGE, cues.PAYMENT_METHOD, cues.INVOICE, cues.CREDIT, cues.CARD_NUMBER, cues.CARD_DESCRIPTION)
        ):
            return True
        if ("tech" in self.skills or any_skill) and any(p.search(clause) for p in (cues.RESET, cues.LOGIN, cues.BUG)):
            return True
        return False

    def _outside_my_scope(self, text: str) -> bool:
        """The message triage just brought here names nothing of this agent's job (no request
        of its skills, no charge, no account detail) and its words are not the job's words."""
        v = self.view
        arrived = bool(v.turn_handoffs) and v.turn_handoffs[-1].to_agent == self.me.name and v.turn_handoffs[-1].handoff_kind == "route"
        if not arrived or self.return_target() is None or len(v.customer_messages) > 1:
            return False
        latest = v.latest_facts()
        if latest.emails or latest.amounts or latest.dates or latest.invoice_ids or cues.ABOUT_CHARGES.search(text):
            return False
        # One of the money tools' own matters, read by the learned desk intents reader and the money
        # gate, in words the money agent's job list lacks ("give me the plan with the most features":
        # "features" is the technical agent's word; route-13): the money agent's, not a hand-back.
        if "money" in self.skills and acts.reads_money_intent(text) and cues.names_money(text):
            return False
        # As mid-conversation (`_strays`): another agent triage hands to has the message's words
        # in its job clearly more ("an older copy of a document someone saved over" is the
        # technical agent's words more than billing's, though billing's examples say "back").
        if self._others_job_fits_better(text):
            return True
        return scope.outside_scope(self.me, text)

    def _others_job_fits_better(self, text: str) -> bool:
        v = self.view
        mine = scope.share_in_scope(self.me, text)[0]
        entry = v.desk.agents.get(v.desk.desk.entry)
        others = [v.desk.agents[n] for n in (entry.handoffs if entry else []) if n in v.desk.agents and n != self.me.name]
        return any(scope.share_in_scope(a, text)[0] >= mine + STRAY_SHARE_MARGIN for a in others)

    def _asks_about_closed_offer(self, text: str) -> bool:
        """The desk's gate closed an account action's offer on this message as a question, and
        it tells no trouble: a question about the action put to them, not a matter of its own."""
        v = self.view
        return v.declined_tool in dialogue.ACCOUNT_ACTIONS and v.offer_answer == "question" and not cues.PROBLEM.search(text)

    def _strays(self, text: str) -> bool:
        """Later in a conversation, the latest message raises a matter of its own that this agent
        has no part in: no request of its skills, no fact for it (an email, an amount, a date, an
        invoice, a card's last four), no answer to what we asked, nothing pointing back at our last
        reply; and the entry agent's router leans to someone else, or (the message reading clearly as a problem
        or a request to the act reader) to no one, or another agent's job words cover it better,
        or it is outside this agent's job altogether."""
        v = self.view
        if self.return_target() is None or self.router is None or len(v.customer_messages) < 2 or v.turn_tools or v.turn_handoffs:
            return False
        # A charge is spoken of with money named: "someone took over my account" says "took" as a
        # charge's "you took $29.99" would, and names no money (a hand-back, issue 38).
        if self._has_own_request(text) or (about_charges(text) and cues.names_money(text)):
            return False
        # Pointing back at what we said ("did all of those, same story") with nothing asked of any
        # skill: an answer to our question, or too little said to be a matter of its own.
        if self._points_back(text) or (POINTS_BACK.search(text) and scope.share_in_scope(self.me, text)[1] < scope.MIN_WEIGHT):
            return False
        # Read as the view reads it: a bare number answers our question for the amount.
        latest = slot_extraction.extract(text, amount_asked=bool(slot_extraction.ASKS_FOR_AMOUNT.search(v.last_agent_text())))
        if (latest.emails or latest.amounts or latest.dates or latest.invoice_ids or latest.customer_ids
                or cues.last_four_told(text) or not re.search(r"[a-z]{3}", text, re.I)):
            return False
        # A "no" is a reply only to something asked: "that was not me!!" after a statement of the
        # next payment is a matter of its own (issue 38).
        asked = v.last_agent_text().rstrip().endswith("?") or dialogue.open_offer(v.context, len(v.customer_messages)) is not None
        replies = (
            cues.only_facts(text) or read_answer(text) == "yes" or (dialogue.refuses(text) and asked) or cues.STEPS_FAILED.search(text)
            or cues.TRYING.search(text) or cues.setup_only(text) or cues.courtesy_only(text)
        )
        if replies:
            return False
        route = self.router.route(text)
        act = acts.read_act(text)
        if asks_where_we_are(text):
            return False  # "any update?", "ok what now": about where we are, no matter of its own
        if route.agent not in (None, self.me.name) and route.confidence >= STRAY_CONFIDENCE:
            return True
        # The router leans nowhere, or here only a little: a new matter only when the message
        # reads clearly as a problem told or a request made ("So, any news?" reads as neither).
        if act.share(("problem", "request")) < STRAY_ACT_CONFIDENCE:
            return False
        if route.agent is None:
            return True
        if self._others_job_fits_better(text):
            return True
        return scope.outside_scope(self.me, text)

    def _only_turns_down(self, clause: str) -> bool:
        """A part that only says no (the desk's reader reads it so, and it is a drop, a decline, or
        three words at most: "hmm no", or a reason for the no that tells no trouble: "not worth the
        hassle", held-26, read as a request for the app), asking nothing of any skill."""
        said_no = (
            cues.DROP.search(clause) or cues.DECLINE.search(clause) or len(clause.split()) <= 3
            or not (cues.PROBLEM.search(clause) or cues.APP_TROUBLE.search(clause))
        )
        return bool(said_no) and read_answer(clause) == "no" and not self._has_own_request(clause, any_skill=True)

    def _hand_back(self, text: str, for_agent: str | None = None):
        """Back to triage with the reason, so the message reaches whoever it is for (`for_agent`,
        when this agent knows whose it is: triage hands it there without routing it again)."""
        target = self.return_target()
        assert target is not None  # _outside_my_scope / _strays / ground_owner checked it
        pending: dict[str, Any] = {"pending_topic": text}
        if for_agent is not None:
            pending["pending_agent"] = for_agent
        return Transfer(
            to_agent=target,
            reason=f"outside {self.me.title.lower()}'s scope: {text[:120]}",
            handoff_kind="return",
            text="That's one for a different team, so I'm passing you back to triage.",
            context=self.step.context(pending),
        )

    def _return(self, clause: str, said: str, context: dict[str, Any] | None = None):
        target = self.return_target()
        line = "You also mentioned something my colleagues handle, so I'm passing you back to triage for that."
        text = f"{said} {line}".strip() if said else "That's one for a different team, so I'm passing you back to triage."
        if target is None:
            return self.step.answer(
                f"{said} For the other matter you mentioned, please start a new conversation so the right team can help.".strip()
            )
        ctx = dict(context or {})
        ctx.update(self.step.context({"pending_topic": clause}))
        return Transfer(to_agent=target, reason=f"new topic: {clip_words(clause, 120)}", handoff_kind="return", text=text, context=ctx)

    def _ask_human(self, why: str, context: dict[str, Any]):
        if self.view.has_tool("request_human") and not self.view.calls("request_human", this_turn=True):
            return self.step.call("request_human", {"reason": why}, **context)
        return self.step.answer(f"I've asked a member of staff to help, because {why}. They'll see everything we've discussed.")
