"""The specialists: what an agent does is decided by the tools it holds and its level.

- the money skill (it holds `refund_charge` / `find_charges`): find the customer, explain
  charges, spot duplicates, refund within the desk's limit for its level, invoices, plans
  (their prices read from the store with `list_plans`), payment methods, cancellations;
- the tech skill (it holds `search_kb` / `send_password_reset`): walk the customer through
  the knowledge base, send password resets, report bugs;
- a level-2 agent with both (senior) takes what level 1 escalated, using the shared context
  and the whole history, so the customer never repeats anything.

Every agent hands a new topic it has no skill for back to the entry agent, answers
out-of-scope requests politely and records a request for a person.
"""

from __future__ import annotations

import calendar

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

from supportdesk.config import AgentConfig
from supportdesk.engine.confirmation import read_answer
from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, Transfer
from supportdesk.items import Handoff, Message, Notice
from supportdesk.models.offline import cues, dialogue, generic, scope
from supportdesk.text import clip_words
from supportdesk.models.offline import slots as slot_extraction
from supportdesk.models.offline.router import Router
from supportdesk.models.offline.view import ON_OUR_SIDE, ToolEvent, View
from supportdesk.readers import acts
from supportdesk.text import money

MONEY_TOOLS = ("refund_charge", "find_charges")
TECH_TOOLS = ("search_kb", "send_password_reset")
GENERAL_TOOLS = ("request_human",)  # every agent may hold it; it is no skill
TOPIC_SWITCH_CONFIDENCE = 0.8
LOGIN_ARTICLES = ("login-problems", "password-reset", "account-locked")
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
# How an article given as the answer to a question ends; a "yes" to it settles the question.
ANSWERS_QUESTION = "Does that answer your question?"
NO_ARTICLE = (
    "I'm sorry, I don't know: none of our help articles answers that, and I'd rather not guess. "
    "A person from our team can find out for you: just say if you'd like me to bring one in."
)
TRYING_REPLY = (
    "Sounds good. Let me know how it goes: if it doesn't fix things, tell me what you see and I'll take it further."
)
# (Noted, not looked up: nothing here has checked that an account has that email.)
ACCOUNT_NOTED = (
    "Thanks, I've noted that. Did the steps above fix it? If not, tell me what happens when you "
    "follow them and I'll take it further."
)
SETUP_NOTED = (
    "Thanks, I've noted that for this case. Did the steps above fix it? If not, tell me what happens when you "
    "follow them and I'll take it further."
)
# A card on file cannot just be taken away: the subscription is paid with it.
REMOVE_CARD_REPLY = (
    "I can't remove the card on file while your subscription is active: the plan is paid with it. "
    "I can replace it with another card: tell me which one (for example \"visa ending 4242\"). "
    "If you'd rather stop paying altogether, I can cancel the subscription instead."
)
UNKNOWN_GROUND_REPLY = (
    "That's a {what}, and nothing in our tools or help articles covers it, so I won't guess. I've asked a member "
    "of our staff to take it from here; they'll see this whole conversation and get back to you."
)
CARD_NUMBER_WARNING = (
    "Please don't send full card numbers in chat. Tell me the card brand and its last four digits "
    "(for example \"visa ending 1234\"), and add the card itself under Settings > Billing."
)

# What an answer needs of each plan `list_plans` returns.
# A charge search refused, or shown nothing, because no account was named: the rule, not a miss.
NEEDS_EMAIL_FOR_CHARGES = "To look at your charges, I need the email address on your account. What is it?"
PLAN_FIELDS = {"code", "name", "monthly_price", "annual_price"}


def _not_named(call: ToolEvent) -> bool:
    """Whether the account tool refused because the customer has not named the account."""
    return call.done and call.is_error and str(call.output).startswith("refused by policy: to confirm the account is yours")


def nice_date(iso: str) -> str:
    try:
        d = date.fromisoformat(iso)
    except ValueError:
        return iso
    return f"{d.strftime('%B')} {d.day}, {d.year}"


def skills_of(agent: AgentConfig) -> set[str]:
    """What an agent can do, from the tools it holds: "money", "tech", or, for an agent with
    tools of its own that are neither (defined only in the desk file), "own:<name>"."""
    out = set()
    if any(t in agent.tools for t in MONEY_TOOLS):
        out.add("money")
    if any(t in agent.tools for t in TECH_TOOLS):
        out.add("tech")
    if not out and any(t not in GENERAL_TOOLS for t in agent.tools):
        out.add(f"own:{agent.name}")
    return out


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
        batch: list[dict[str, Any]] | None = None, **context: Any,
    ) -> Answer | CallTools:
        """A reply that proposes one account action and waits for the customer's yes.

        Where the desk's gate holds the call (issue 33), the call goes with the question: the
        question is the desk's offer, the customer is asked once, and the gate runs the call on
        their yes. Otherwise (a desk that turned the gate off for the tool, an amount above this
        agent's limit) only the question is sent, and the yes is read next turn."""
        v = self.view
        made = dialogue.Offer(
            action, dict(arguments), text[:300], len(v.customer_messages), v.agent.name, list(options or []), list(batch or [])
        )
        context[dialogue.PENDING_OFFER] = made.as_context()
        if self.gated(action, arguments):
            return CallTools(
                [RequestedCall(v.call_id(), action, dict(arguments))], text=self.note + text, context=self.context(context)
            )
        return Answer(self.note + text, context=self.context(context))

    def gated(self, action: str, arguments: dict[str, Any]) -> bool:
        """Whether the desk's gate will hold this call for the customer's yes (rather than run
        it, or refuse it for an amount above this agent's limit)."""
        v = self.view
        if not any(t.name == action and t.confirm for t in v.request.tools):
            return False
        amount = arguments.get("amount")
        if action in ("refund_charge", "issue_credit"):
            if not isinstance(amount, int | float) or amount > v.desk.policy.refund_limit(v.agent.level) + 1e-9:
                return False
        return True

    def call(self, name: str, arguments: dict[str, Any], **context: Any) -> CallTools:
        # Lookups keep an open offer for the rest of the turn; carrying out an action closes it.
        keep = name not in dialogue.ACCOUNT_ACTIONS
        return CallTools([RequestedCall(self.view.call_id(), name, arguments)], context=self.context(context, keep_offer=keep))

    def calls(self, calls: list[tuple[str, dict[str, Any]]], **context: Any) -> CallTools:
        requested = [RequestedCall(self.view.call_id(k), name, args) for k, (name, args) in enumerate(calls)]
        return CallTools(requested, context=self.context(context))


def next_billing_date(today: date, billing_day: int, annual: bool, created_on: str) -> date:
    """The first billing day after `today`: monthly on `billing_day` (the month's last day when it
    has fewer), annually on that day of the month the account was created in."""
    def on(year: int, month: int) -> date:
        return date(year, month, min(billing_day, calendar.monthrange(year, month)[1]))

    if annual:
        month = int(created_on[5:7]) if created_on[5:7].isdigit() else today.month
        due = on(today.year, month)
        return due if due > today else on(today.year + 1, month)
    due = on(today.year, today.month)
    if due > today:
        return due
    return on(today.year + (today.month == 12), today.month % 12 + 1)


class Specialist:
    def __init__(self, view: View, router: Router | None):
        self.view = view
        self.router = router
        self.me = view.agent
        self.skills = skills_of(self.me)
        self.step = Step(view)
        if view.latest and cues.INJECTION.search(view.latest) and not view.answered_this_turn(view.agent.name):
            self.step.note = POLICY_NOTE

    # --- topics ---------------------------------------------------------------------------------

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

    def escalation_target(self, tool: str) -> str | None:
        for name in self.me.handoffs:
            agent = self.view.desk.agents.get(name)
            if agent and agent.level > self.me.level and tool in agent.tools:
                return name
        return None

    def return_target(self) -> str | None:
        entry = self.view.desk.desk.entry
        return entry if entry in self.me.handoffs else None

    # --- the decision -----------------------------------------------------------------------------

    def decide(self):
        v = self.view
        text = v.latest

        if v.turn_tools and v.turn_tools[-1].name == "request_human" and v.turn_tools[-1].done:
            ground = cues.unknown_ground(text) if text else None
            if ground is not None and not self._covered(ground):
                return self.step.answer(UNKNOWN_GROUND_REPLY.format(what=ground))
            if text and cues.other_language(text):
                return self.step.answer(OTHER_LANGUAGE_REPLY)
            return self.step.answer(HUMAN_REQUESTED)
        if text and not v.turn_tools:
            early = self._conversational(text)
            if early is not None:
                return self._hand_over_next(early)
            beyond = self._beyond_me(text)
            if beyond is not None:
                return beyond

        return self._hand_over_next(self._decide_topic(text))

    def _decide_topic(self, text: str):
        v = self.view
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
        if cues.HUMAN.search(text):
            if v.has_tool("request_human") and not v.calls("request_human", this_turn=True):
                return self.step.call("request_human", {"reason": text[:300]})
        language = cues.other_language(text)
        if language is not None:
            if v.has_tool("request_human") and not v.calls("request_human", this_turn=True):
                return self.step.call("request_human", {"reason": f"writes in {language}: {text[:250]}"})
            return self.step.answer(OTHER_LANGUAGE_REPLY)
        route = self.router.route(text) if self.router else None
        unsure = route is None or route.agent is None
        if cues.HUMAN.search(text):
            return self.step.answer(HUMAN_REQUESTED)
        if cues.CARD_NUMBER.search(text):
            return self.step.answer(CARD_NUMBER_WARNING)
        # Just handed this conversation for a problem: that problem comes first, not the pleasantries.
        if any(h.to_agent == self.me.name for h in v.turn_handoffs):
            return None
        if unsure and cues.GREETING.search(text):
            return self.step.answer("Hello again! What else can I help you with?")
        # "ok, I'll try that": they go off to try what we said; nothing to look up or decide yet.
        tried_later = cues.TRYING.search(text) and not cues.PROBLEM.search(text) and not cues.STEPS_FAILED.search(text)
        if tried_later and v.last_agent_text() and not dialogue.open_offer(v.context, len(v.customer_messages)):
            return self.step.answer(TRYING_REPLY)
        thanks = cues.courtesy_only(text)
        # "yes" to "Does that answer your question?": what they asked is answered.
        answered = v.last_agent_text().endswith(ANSWERS_QUESTION) and read_answer(text) == "yes"
        if (thanks or answered) and not dialogue.open_offer(v.context, len(v.customer_messages)):
            # "that worked, thanks": what they came for is settled.
            self.step.resolved = True
            glad = "You're welcome!" if thanks else "Glad that helped!"
            return self.step.answer(f"{glad} Is there anything else I can help with?")
        if cues.OUT_OF_SCOPE.search(text) and not self._has_own_request(text, any_skill=True):
            return self.step.answer(
                "I'm afraid that's outside what I can help with: I can only help with your account, billing and the app. "
                "Is there anything there I can do for you?"
            )
        return None

    def _covered(self, ground: str) -> bool:
        """Some tool this agent holds is about `ground` (a desk with a privacy tool handles privacy)."""
        words = cues.UNKNOWN_GROUND_WORDS.get(ground, ())
        return any(any(w in f"{t.name} {t.description}".lower() for w in words) for t in self.view.request.tools)

    def _beyond_me(self, text: str):
        """What a level-1 agent should not handle alone: ground no tool or article covers, a
        repeat contact, lost data. Up to a higher level when there is one; else a person."""
        v = self.view
        ground = cues.unknown_ground(text)
        repeat = bool(cues.REPEAT_CONTACT.search(text))
        lost = bool(cues.DATA_LOSS.search(text))
        if ground is not None and self._covered(ground):
            ground = None
        if ground is None and not repeat and not (lost and "tech" in self.skills):
            return None
        up = self._higher_agent()
        if up is None:
            if ground is not None:
                return self._ask_human(f"{ground}: nothing in our tools or help articles covers it", {"escalation_reason": ground})
            return None  # the most senior agent: handle what it can
        if ground is not None:
            why, say = ground, (
                f"That's a {ground}, and it isn't something I can do or look up from here, so I won't guess. "
            )
        elif lost:
            why, say = "possible data loss", "Lost files need our engineers' attention straight away. "
        else:
            why, say = "repeat contact", "I'm sorry you've had to get in touch again about this. "
        extra: dict[str, Any] = {"escalation_reason": why}
        if lost:
            extra["bug_summary"] = self._bug_summary(text, text, [])
        title = v.desk.agents[up].title.lower()
        return Transfer(
            to_agent=up,
            reason=f"{why}: {clip_words(text, 100)}",
            handoff_kind="escalate",
            text=say + f"I'm passing this to a {title} colleague, who will see everything you've told me.",
            context=self.step.context(extra),
        )

    def _higher_agent(self) -> str | None:
        for name in self.me.handoffs:
            agent = self.view.desk.agents.get(name)
            if agent is not None and agent.level > self.me.level:
                return name
        return None

    def _hand_over_next(self, action):
        """The problem is resolved: hand over the next one the customer raised, unasked."""
        if not (self.step.resolved and isinstance(action, Answer)):
            return action
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
        return Transfer(
            to_agent=target,
            reason=f"next issue: {nxt.get('topic') or nxt['text'][:80]}",
            handoff_kind="return",
            text=f"{action.text} Now for the other thing you mentioned ({nxt.get('topic') or 'your other question'}): "
            f"I'm passing you to our {title} team.",
            context=context,
        )

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
        if text and self.router is not None and not arrived and not (confirming and not dropping):
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
                    )
                    and not self._has_own_request(clause, any_skill=True)
                )
                skill = None if answer else self.topic(clause, 0.0 if dropping else TOPIC_SWITCH_CONFIDENCE)
                if skill is not None and skill not in self.skills and switch_clause is None and not self._has_own_request(clause):
                    switch_clause = clause
                elif not (dropping and cues.DROP.search(clause) and not cues.REAL_ISSUE.search(clause)):
                    own.append(clause)
        own_text: str | None = " ".join(own) if switch_clause is not None else text
        if switch_clause is not None and not any(self.topic(c) in self.skills or self._has_own_request(c) for c in own):
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
        if ctx.get("bug_summary") and not v.calls("create_ticket"):
            return "tech", switch_clause, own_text
        if v.turn_tools:
            last = v.turn_tools[-1].name
            if last in ("search_kb", "send_password_reset", "create_ticket"):
                return "tech", switch_clause, own_text
            if last not in ("request_human",):
                return "money", switch_clause, own_text
        now = self.topic(text) if text else None
        if now in self.skills:
            return now, switch_clause, own_text
        category = self.skill_for_agent(ctx.get("category"))
        return (category if category in self.skills else sorted(self.skills)[0]), switch_clause, own_text

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
        return scope.outside_scope(self.me, text)

    def _hand_back(self, text: str):
        """Back to triage with the reason, so the message reaches whoever it is for."""
        target = self.return_target()
        assert target is not None  # _outside_my_scope checked it
        return Transfer(
            to_agent=target,
            reason=f"outside {self.me.title.lower()}'s scope: {text[:120]}",
            handoff_kind="return",
            text="That's one for a different team, so I'm passing you back to triage.",
            context=self.step.context({"pending_topic": text}),
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

    # --- the money skill ---------------------------------------------------------------------------

    def _customer_id(self) -> str | None:
        v = self.view
        if v.context.get("customer_id"):
            return v.context["customer_id"]
        for t in reversed(v.tools):
            if t.ok and t.name == "find_customer" and isinstance(t.output, dict):
                return t.output.get("id")
            if t.ok and t.name == "find_charges" and isinstance(t.output, dict) and len(t.output.get("customers", [])) == 1:
                return t.output["customers"][0]
        return None

    def _customer_record(self, customer_id: str) -> dict[str, Any] | None:
        for t in reversed(self.view.tools):
            if t.ok and t.name == "find_customer" and isinstance(t.output, dict) and t.output.get("id") == customer_id:
                return t.output
        return None

    def _identify(self, intents: set[str]) -> Any:
        """Look the customer up from what they told us, or ask (once per lookup) for the email."""
        v, f = self.view, self.view.facts
        failed = [t for t in v.turn_tools if t.name in ("find_customer", "find_charges") and t.done]
        if f.customer_ids or f.emails:
            query = (f.emails or f.customer_ids)[-1]
            # Questions about charges start from the charges (one lookup, not two).
            about_charges = not intents & {"cancel", "plan", "payment", "invoice", "credit", "next_payment"}
            if about_charges and v.has_tool("find_charges"):
                if not v.called_with("find_charges", {"customer": query}):
                    return self.step.call("find_charges", {"customer": query})
            elif not v.called_with("find_customer", {"query": query}):
                return self.step.call("find_customer", {"query": query})
        if f.amounts:
            # The amount on the customer's statement, with its dates when they gave them: an
            # amount alone that fits several accounts is refused, and the answer asks for the email.
            args = {"amount": f.amounts[-1], "dates": f.dates[-2:]} if f.dates else {"amount": f.amounts[-1]}
            if not v.called_with("find_charges", args):
                return self.step.call("find_charges", args)
        if failed:
            last = failed[-1]
            many = isinstance(last.output, dict) and len(last.output.get("customers", [])) > 1
            asked_by = str(last.arguments.get("customer") or last.arguments.get("query") or "")
            if many:
                said = "Those charges match more than one account. Could you tell me the email address on your account?"
            elif _not_named(last) or (
                last.name == "find_charges" and not (last.arguments.get("customer") or last.arguments.get("customer_id"))
            ):
                # Charges are shown only for an account the customer named (tools/common.py
                # `require_named_account`): an amount and dates name none. That is the desk's
                # rule, not a search that failed, and the email is what it asks for.
                said = NEEDS_EMAIL_FOR_CHARGES
            elif "@" in asked_by:
                # They gave an email and it matched nobody: asking "what's your email?" would
                # read as not having listened.
                said = (
                    "I couldn't find an account with that email address. Could you check it, "
                    "or give me the one you signed up with?"
                )
            else:
                said = "I couldn't find an account from those details. Could you tell me the email address on your account?"
            return self.step.answer(said)
        if intents & {"cancel", "plan", "payment", "invoice", "credit", "next_payment"} and not intents & {"refund", "duplicate"}:
            # Not about a charge: the amount and dates on a statement would find nothing to act on.
            return self.step.answer("I can help with that. What's the email address on your account?")
        # The email only: an amount and dates on a statement name no account (anyone may know them).
        return self.step.answer("I can help with that. What's the email address on your account? It's how I find your account.")

    def _charges(self, customer_id: str) -> list[dict[str, Any]] | None:
        """The customer's charges as last read, with refunds made since subtracted."""
        found: dict[str, dict[str, Any]] = {}
        for t in self.view.tools:
            if t.ok and t.name == "find_charges" and isinstance(t.output, dict):
                for ch in t.output.get("charges", []):
                    if ch.get("customer_id") == customer_id:
                        found[ch["id"]] = dict(ch)
        if not found:
            return None
        for t in self.view.tools:
            if t.name == "refund_charge" and t.ok and isinstance(t.output, dict) and not t.output.get("replayed"):
                ch = found.get(t.output.get("charge_id", ""))
                if ch is not None and t.seq > 0:
                    ch["refundable"] = round(ch["amount"] - t.output.get("refunded_total", 0.0), 2)
        return sorted(found.values(), key=lambda c: (c["charged_on"], c["id"]))

    def _refunds(self) -> list[ToolEvent]:
        return [t for t in self.view.tools if t.name == "refund_charge" and t.ok]

    def _refunded(self, charge_id: str | None) -> bool:
        return bool(charge_id) and any(
            isinstance(t.output, dict) and t.output.get("charge_id") == charge_id for t in self._refunds()
        )

    def _pending_refund(self) -> ToolEvent | None:
        """A refund waiting for staff, with no decision yet."""
        v = self.view
        decided = {n.data.get("approval_id") for n in v.history if isinstance(n, Notice) and n.notice_kind in ("approval_granted", "approval_denied")}
        for t in v.tools:
            if t.name == "refund_charge" and t.waiting and t.call_id not in decided:
                return t
        return None

    def _money(self, text: str):
        v, step = self.view, self.step
        latest_results = self._money_results()
        if latest_results is not None:
            return latest_results

        escalated = self._escalated_refund()
        if escalated is not None:
            return escalated

        asked = self._asked(text)
        offer = dialogue.open_offer(v.context, len(v.customer_messages))
        if offer is not None and text:
            answer = self._answer_offer(offer, asked, text)
            if answer is not None:
                return answer

        # "Which plan am I on?" is answered once: a later message asking nothing is not it again.
        intents = asked or (self._carried_intents() - {"my_plan"})
        if not intents and self._outside_my_scope(text):
            return self._hand_back(text)
        if intents == {"pricing"}:
            return self._pricing(text)
        if intents == {"remove_card"}:
            # No tool removes a card, and nothing is changed: what can be done, so they can choose.
            return step.answer(REMOVE_CARD_REPLY)
        known = self._customer_id() or v.facts.emails or v.facts.customer_ids
        if intents == {"invoice"} and cues.WHERE_TO_FIND.search(text) and not known:
            # Where invoices are needs no account; listing them does (and is done once we know it).
            return step.answer(
                "You can download every invoice and receipt as a PDF under Settings > Billing > Invoices. "
                "If you'd like, tell me the email on your account and I'll list them here."
            )

        customer_id = self._customer_id()
        if customer_id is None:
            return self._identify(intents)
        ctx = {"customer_id": customer_id}

        if "next_payment" in intents and not intents & {"refund", "duplicate", "cancel", "plan"}:
            return self._next_payment(customer_id)
        if intents == {"my_plan"} or intents == {"my_plan", "pricing"}:
            return self._my_plan(customer_id)
        if "credit" in intents:
            return self._credit(customer_id, text)
        if "cancel" in intents:
            # "is it possible to cancel?" asks whether, not yet to: offered first, as a plan change is.
            return self._cancel(customer_id, explicit="cancel" in asked and not cues.ASKS_IF_POSSIBLE.search(text))
        if "plan" in intents:
            return self._plan_change(customer_id, text, asked)
        if "payment" in intents:
            return self._payment_method(customer_id, text)
        if "invoice" in intents:
            if not v.last_call("list_invoices", this_turn=True):
                return step.call("list_invoices", {"customer_id": customer_id}, **ctx)
            return self._invoices_answer(v.last_call("list_invoices", this_turn=True), text)

        charges = self._charges(customer_id)
        if charges is None:
            if v.called_with("find_charges", {"customer_id": customer_id}):
                return step.answer(f"I can't find any charges for account {customer_id}. Could you check the email address on the account?")
            return step.call("find_charges", {"customer_id": customer_id}, **ctx)
        if "refund" in intents or "duplicate" in intents:
            return self._refund_flow(customer_id, charges, intents, text, explicit="refund" in asked)
        if not any(cues.ABOUT_CHARGES.search(t) for t in self.topic_texts() + [text]):
            # Nothing says what they want, nor that it is about a charge: ask, rather than
            # propose something of our own that a "yes" would then set off.
            return step.answer(
                "I can help with charges and refunds, invoices, plan changes, cancellations and payment methods. "
                "What would you like me to do?"
            )
        return self._charges_answer(charges, text)

    @staticmethod
    def _intents_of(t: str) -> set[str]:
        found = set()
        for name, pattern in (
            ("refund", cues.REFUND), ("duplicate", cues.DUPLICATE), ("cancel", cues.CANCEL),
            ("plan", cues.PLAN_CHANGE), ("payment", cues.PAYMENT_METHOD), ("invoice", cues.INVOICE),
            ("pricing", cues.PRICING), ("credit", cues.CREDIT), ("next_payment", cues.NEXT_PAYMENT),
            ("my_plan", cues.MY_PLAN),
        ):
            if pattern.search(t):
                found.add(name)
        if cues.REMOVE_CARD.search(t) and not cues.card_description(t):
            found.add("remove_card")  # taken away, no card named to put in its place
            found.discard("payment")
        if "next_payment" in found:
            found -= {"invoice", "pricing"}  # "how much is my next invoice going to be?"
        if cues.plan_step(t):
            found.add("plan")  # "I'd like the cheapest plan"
        if "payment" in found and "refund" in found:
            found.discard("payment")  # "refund to my card" is a refund
        if found & {"refund", "duplicate"}:
            found -= {"pricing", "invoice"}
        if (
            cues.PRICE_COMPARISON.search(t) and cues.PLAN_NAME.search(t)
            and not re.search(r"\b(?:switch|move|upgrade|downgrade|change|put)\b", t, re.I)
        ):
            # "is there a cheaper plan than pro?" weighs named plans; it moves nothing. ("A
            # cheaper plan than mine" is about their own plan: the plan change's offer.)
            found.discard("plan")
            found.add("pricing")
        if "plan" in found:
            found.discard("pricing")  # "how much would the Team plan cost if I switch"
            found.discard("cancel")  # "cancel my plan and move me to Starter" is a plan change
        return found

    def _asked(self, text: str) -> set[str]:
        """What the customer's latest message itself asks for (nothing carried over)."""
        return self._intents_of(text) if text else set()

    def _carried_intents(self) -> set[str]:
        """Nothing new in this message: carry on with what the topic is about, latest first."""
        for t in reversed(self.topic_texts()):
            found = self._intents_of(t)
            if found:
                return found
        return set()

    # --- offers: proposed, confirmed, refused, replaced ------------------------------------------------

    def _answer_offer(self, offer: dialogue.Offer, asked: set[str], text: str):
        """The customer's reply to an open offer, or None when it is a new request.

        The desk's confirmation reader has read it (engine/confirmation.py, the one reader of a
        yes): where the gate held the offered call, its reading is on record (a yes ran the call
        and its result is answered before this); an offer the gate did not hold (no call went
        with it) is read here by the same reader."""
        reading = self.view.offer_answer or read_answer(text)
        if reading == "yes" and self.view.offer_answer == "yes":
            return None  # the desk ran the offered call: its result is answered, not asked again
        actions = {"refund", "cancel", "plan", "credit", "payment", "invoice", "pricing"}
        other = (asked & actions) - {offer.intent}
        if offer.intent == "refund":
            other -= {"duplicate"}
        if other:
            return None  # a new request replaces the offer (the reply to it clears it)
        # Not a yes (the reader's "no" is any doubt at all): whether it turns the offer down is
        # this model's understanding of the reply, as for any other message.
        if dialogue.refuses(text) and not (offer.intent in asked and not cues.DROP.search(text)):
            what = {
                "refund": "nothing has been refunded",
                "cancel": "your subscription stays as it is",
                "plan": "your plan stays as it is",
                "credit": "no credit has been added",
            }.get(offer.intent or "", "nothing has changed")
            return self.step.answer(f"No problem: {what}. Is there anything else I can help with?")
        wants = offer.intent in asked
        pointed = None
        if offer.intent == "refund" and offer.options:
            pointed = self._options_pointed(offer, text)
        if reading == "change_of_mind" and not pointed:
            # "no wait, make it the cheaper one": another choice than the one offered. Read as a
            # request of its own (a new offer, if it comes to one), never this offer carried out.
            return None
        if pointed and not wants:
            # "the second one", "both": which charge is now clear, but not that they want it
            # refunded (a plain "yes" to one charge is no yes to another): ask about exactly these.
            return self._offer_refund_of(pointed, offer)
        if not (wants or reading == "yes"):
            return None
        return self._carry_out(offer, pointed)

    def _offer_refund_of(self, charges: list[dict[str, Any]], offer: dialogue.Offer):
        ordered = sorted(charges, key=lambda c: not c.get("duplicate_of"))
        each = [self._refund_args(c) for c in ordered]
        if len(each) > 1:
            return self._offer_batch(each, offer.options)
        return self.step.offer(
            f"Just to be sure: shall I refund {money(ordered[0]['refundable'])} for the charge on {nice_date(ordered[0]['charged_on'])}?",
            "refund_charge", each[0], offer.options,
        )

    def _offer_batch(self, each: list[dict[str, Any]], options: list[str], done: str = ""):
        """Several refunds: one question per call, asked in turn (the desk's gate holds one offer
        at a time, and a yes runs exactly the call it was asked about). The first is asked now;
        the rest wait in the offer's batch and are asked after its answer."""
        def label(args: dict[str, Any]) -> str:
            return f"{money(float(args['amount']))} for {self._charge_label(str(args['charge_id']))}"

        # A duplicate pair is refunded once (tools/billing.py refuses the second of a pair): of
        # the two, the duplicate is offered, and the customer is told why not both.
        charges = {c["id"]: c for c in self._charges(self._customer_id() or "") or []}
        paired = {charges[str(a["charge_id"])].get("duplicate_of") for a in each if str(a["charge_id"]) in charges}
        once = [a for a in each if a["charge_id"] in paired]
        each = [a for a in each if a["charge_id"] not in paired]
        first, rest = each[0], each[1:]
        if done:
            said = f"{done} Shall I also refund {label(first)}?"
        elif once:
            said = (
                f"A charge and its duplicate are refunded once, so I can't refund both {label(once[0]).split(' for ')[0]} "
                f"charges: shall I refund {label(first)}?"
            )
        else:
            said = f"Let's take them one at a time: shall I refund {label(first)}?"
        if rest:
            said += f" Then I'll ask you about {' and '.join(label(a) for a in rest)}."
        return self.step.offer(said, "refund_charge", first, options, each if len(each) > 1 else None)

    def _batch_rest(self) -> tuple[list[dict[str, Any]], list[str]]:
        """The refunds of a confirmed batch offer still to ask about (and its options)."""
        v = self.view
        offer = dialogue.open_offer(v.context, len(v.customer_messages))
        if offer is None or not offer.batch or v.offer_answer != "yes" or offer.action != "refund_charge":
            return [], []
        rest = [b for b in offer.batch if b != offer.arguments and not self._refunded(str(b.get("charge_id", "")))]
        return rest, offer.options

    def _options_pointed(self, offer: dialogue.Offer, text: str) -> list[dict[str, Any]] | None:
        customer_id = self._customer_id()
        charges = self._charges(customer_id) if customer_id else None
        if not charges:
            return None
        by_id = {c["id"]: c for c in charges}
        options = [by_id[o] for o in offer.options if o in by_id]
        return dialogue.point_at(text, options)

    def _carry_out(self, offer: dialogue.Offer, pointed: list[dict[str, Any]] | None):
        """Do exactly what was offered (or, for a refund, the listed charges the customer picked)."""
        step = self.step
        if offer.action == "refund_charge":
            targets = pointed or []
            if not targets and not offer.batch:
                return self._refund_call(dict(offer.arguments))
            # The duplicate first: of a pair, only one may be refunded as a duplicate.
            targets = sorted(targets, key=lambda c: not c.get("duplicate_of"))
            args = [self._refund_args(c) for c in targets] if targets else [dict(b) for b in offer.batch]
            done = [a for a in args if self._refunded(a["charge_id"])]
            args = [a for a in args if not self._refunded(a["charge_id"]) and a["amount"] > 0]
            if not args:
                return step.answer("That's already been refunded, so there's nothing more to do. Anything else?" if done else "There's nothing left to refund on that charge. Anything else?")
            if len(args) == 1:
                return self._refund_call(args[0])
            limit = self.view.desk.policy.refund_limit(self.me.level)
            if any(a["amount"] > limit + 1e-9 for a in args):
                return self._refund_call(args[0])
            if self.step.gated("refund_charge", args[0]):
                return self._offer_batch(args, offer.options)
            return step.calls([("refund_charge", a) for a in args], customer_id=self._customer_id())
        if offer.action == "issue_credit":
            customer_id = self._customer_id()
            if customer_id:
                return self._credit(customer_id, self.view.latest, confirmed=True)
        if offer.action in self.view.tool_names():
            return step.call(offer.action, dict(offer.arguments))
        return step.answer("I'm sorry, I can't do that from here. Is there anything else I can help with?")

    def _refund_args(self, charge: dict[str, Any]) -> dict[str, Any]:
        return {"charge_id": charge["id"], "amount": round(charge["refundable"], 2), "reason": self._refund_reason(charge)}

    def _refund_reason(self, charge: dict[str, Any]) -> str:
        """The desk's listed refund reason that fits this charge (the tool checks it is true)."""
        v = self.view
        policy = v.desk.policy

        def listed(*words: str) -> str | None:
            return next((r for r in policy.refund_reasons if all(w in r.casefold() for w in words)), None)

        dup_family = bool(charge.get("duplicate_of")) or any(
            c.get("duplicate_of") == charge["id"] for c in (self._charges(charge.get("customer_id", "")) or [])
        )
        record = self._customer_record(charge.get("customer_id", "")) or {}
        cancelled = record.get("status") == "cancelled" or any(t.name == "cancel_subscription" and t.ok for t in v.tools)
        ticket = any(t.name == "create_ticket" and t.ok for t in v.tools)
        for fits, reason in (
            (dup_family, listed("duplicate")),
            (cancelled, listed("cancel")),
            (ticket, listed("ticket")),
        ):
            if fits and reason:
                return reason
        said = policy.refund_reason(str(v.context.get("refund_reason") or ""))
        return said or "customer request"  # no listed reason fits: the tool will say so

    def _refund_call(self, args: dict[str, Any]):
        amount = float(args.get("amount", 0))
        limit = self.view.desk.policy.refund_limit(self.me.level)
        if amount > limit + 1e-9:
            target_agent = self.escalation_target("refund_charge")
            if target_agent:
                return self._escalate_refund(target_agent, args, f"above the {money(limit)} limit for level {self.me.level}")
            return self._ask_human(
                f"a refund of {money(amount)} is above what I can approve", {"refund_amount": amount, "charge_id": args.get("charge_id")}
            )
        return self.step.call("refund_charge", args, customer_id=self._customer_id())

    def _escalated_refund(self):
        """Level 1 escalated a refund the customer asked for or confirmed this turn: make it."""
        v = self.view
        arrived = any(h.to_agent == self.me.name and h.handoff_kind == "escalate" for h in v.turn_handoffs)
        charge_id, amount = v.context.get("charge_id"), v.context.get("refund_amount")
        if not arrived or not charge_id or not amount or not v.has_tool("refund_charge"):
            return None
        if self._refunded(charge_id) or self._pending_refund() is not None or v.calls("refund_charge", this_turn=True):
            return None
        reason = v.context.get("refund_reason") or "customer request"
        return self._refund_call({"charge_id": charge_id, "amount": round(float(amount), 2), "reason": reason})

    def _money_results(self):
        """Answer what a tool did this turn (or escalate when the tool refused)."""
        v, step = self.view, self.step
        decisions = [n for n in v.turn_notices if n.notice_kind in ("approval_granted", "approval_denied")]
        if decisions:
            n = decisions[-1]
            approved = next((t for t in v.turn_tools if t.call_id == f"{n.data.get('approval_id')}-approved"), None)
            if n.notice_kind == "approval_denied":
                return step.answer(
                    "I'm sorry: our staff reviewed the request and did not approve it, so nothing was refunded or "
                    "credited. If you'd like, I can ask a member of staff to explain the decision."
                )
            if approved is not None and approved.ok and isinstance(approved.output, dict):
                return step.answer(self._done_text(approved.output, approved=True))
            if approved is not None:
                why = approved.reason
                if why is None:
                    return step.answer(
                        f"Our staff approved it, but {ON_OUR_SIDE}: nothing was refunded or credited yet. "
                        "A member of our staff can see what happened and will follow up."
                    )
                return step.answer(f"The request was approved, but it could not be completed: {why}")
        if not v.turn_tools:
            return None
        last = v.turn_tools[-1]
        # Lookups feed the decision that follows rather than being answered on their own.
        if not last.done or last.name in ("find_customer", "find_charges", "list_invoices", "list_plans", "request_human"):
            return None
        if last.name in ("refund_charge", "issue_credit"):
            if last.waiting:
                amount = last.arguments.get("amount", 0)
                what = "refund" if last.name == "refund_charge" else "credit"
                return step.answer(
                    f"A {what} of {money(amount)} needs a supervisor's approval, so I've sent it to our staff with all the "
                    "details. You'll see the outcome here as soon as they decide."
                )
            this_step = [t for t in v.turn_tools if t.name == last.name and t.seq >= self._step_start(last)]
            made = [t for t in this_step if t.ok and isinstance(t.output, dict)]
            refused = [t for t in this_step if t.done and t.is_error]
            over_limit = [t for t in refused if "limit for level" in str(t.output)]
            if over_limit and not made:
                # Above this level's limit: a higher level may make it.
                target = self.escalation_target(last.name)
                if target:
                    return self._escalate_refund(target, over_limit[-1].arguments, str(over_limit[-1].output))
            said = " ".join(self._done_text(t.output) for t in made)
            for t in refused:
                # The tool's policy decides, and says why: pass it on, and offer a person.
                what = self._charge_label(str(t.arguments.get("charge_id", ""))) if last.name == "refund_charge" else "that"
                why = (t.reason or ON_OUR_SIDE).split(" If the customer")[0].rstrip(". ")
                said += f" I couldn't refund {what}: {why}."
            if refused:
                said += " If you'd like, I can ask a member of our staff to look at it."
                step.resolved = bool(made)
                return step.answer(said.strip())
            rest, options = self._batch_rest() if last.name == "refund_charge" else ([], [])
            if rest and made:
                return self._offer_batch(rest, options, done=said.strip())
            step.resolved = True
            return step.answer(said or self._done_text(last.output))
        if last.is_error:
            return step.answer(f"That didn't go through: {(last.reason or ON_OUR_SIDE).rstrip('. ')}.")
        out = last.output if isinstance(last.output, dict) else {}
        step.resolved = True
        if last.name == "cancel_subscription":
            if out.get("previous_status") == "cancelled":
                return step.answer(
                    f"Your {str(out.get('plan', '')).title()} subscription was already cancelled, so nothing has changed: "
                    "it won't renew, and you keep access until the end of the period you've paid for."
                )
            return step.answer(
                f"Your {str(out.get('plan', '')).title()} subscription is cancelled: it won't renew and you won't be charged again. "
                "You keep access until the end of the period you've paid for."
            )
        if last.name == "change_plan":
            plan = str(out.get("plan", "")).title()
            billed = "annually" if out.get("billing_period") == "annual" else "monthly"
            status = out.get("status", "changed")
            if status == "unchanged":
                return step.answer(f"You're already on the {plan} plan, billed {billed}, so nothing needed changing.")
            if status == "scheduled":
                return step.answer(
                    f"Done: you'll move from the {str(out.get('from_plan', '')).title()} plan to the {plan} plan at your next "
                    f"renewal, billed {billed}. Until then nothing changes."
                )
            return step.answer(f"Done: you're now on the {plan} plan, billed {billed}. The change shows on your next invoice.")
        if last.name == "update_payment_method":
            return step.answer(f"Your payment method is now {out.get('payment_method')}; future charges will use it.")
        step.resolved = False
        return None

    def _step_start(self, event: ToolEvent) -> int:
        """The seq of the first call requested in the same step as `event` (one batch)."""
        batch = [t for t in self.view.turn_tools if t.call_id.rsplit("_", 1)[0] == event.call_id.rsplit("_", 1)[0]]
        return min((t.seq for t in batch), default=event.seq)

    def _charge_label(self, charge_id: str) -> str:
        for t in reversed(self.view.tools):
            if t.ok and t.name == "find_charges" and isinstance(t.output, dict):
                for ch in t.output.get("charges", []):
                    if ch.get("id") == charge_id:
                        kind = "the duplicate charge" if ch.get("duplicate_of") else "the charge"
                        return f"{kind} on {nice_date(ch['charged_on'])} (charge {charge_id})"
        return f"charge {charge_id}"

    def _done_text(self, out: dict[str, Any], approved: bool = False) -> str:
        if "refund_id" in out:
            what = self._charge_label(out["charge_id"])
            if approved:
                return (
                    f"Good news: the refund was approved and processed: {money(out['amount'])} back for {what}, "
                    f"refund {out['refund_id']}. It reaches your original payment method within 5-10 business days."
                )
            return (
                f"Done: I've refunded {money(out['amount'])} for {what}, refund {out['refund_id']}. "
                "It goes back to your original payment method within 5-10 business days."
            )
        if "credit_id" in out:
            return f"I've added {money(out['amount'])} of credit to your account ({out['credit_id']}); it comes off your next invoice."
        return "Done."

    def _refund_flow(self, customer_id: str, charges: list[dict[str, Any]], intents: set[str], text: str, explicit: bool):
        v, step, f = self.view, self.step, self.view.facts
        latest = v.latest_facts()
        # The latest message says which charge: an amount, a date, an invoice, "the duplicate".
        pointed = bool(
            cues.DUPLICATE.search(text) or latest.amounts or latest.dates or latest.invoice_ids or v.context.get("charge_id")
        )
        # A month alone names a charge too ("refund my january payment"), when the account was
        # charged in it; the topic's month counts when this message names none. Vaguer than a
        # date, it chooses the charge to offer, never one refunded without a yes.
        months = next((m for m in map(slot_extraction.months_named, [text, *reversed(self.topic_texts())]) if m), [])
        in_months = [c for c in charges if c["charged_on"][5:7].isdigit() and int(c["charged_on"][5:7]) in months]
        pending = self._pending_refund()
        if pending is not None:
            return step.answer(
                f"The refund of {money(pending.arguments.get('amount', 0))} is waiting for a supervisor's approval; "
                "you'll see the result here as soon as they decide."
            )
        ctx_charge = v.context.get("charge_id")
        dups = [c for c in charges if c.get("duplicate_of")]
        target = None
        if ctx_charge:
            target = next((c for c in charges if c["id"] == ctx_charge), None)
        if target is None:
            pool = [c for c in dups if c["refundable"] > 0] or dups
            named = self._charges_matching(charges) if (f.dates or f.invoice_ids) else []
            dup_family = {c["id"] for c in dups} | {c.get("duplicate_of") for c in dups}
            if named and not any(c["id"] in dup_family for c in self._charges_named(charges)):
                pool = named  # the customer pointed at a charge that is not a duplicate
            elif not named and in_months and not f.amounts and not any(c["id"] in dup_family for c in in_months):
                pool = [c for c in in_months if c["refundable"] > 0] or in_months  # a month with no duplicate in it
            if not pool and "refund" in intents:
                pool = self._charges_matching(charges)
            if f.amounts:
                pool = [c for c in pool if any(abs(c["amount"] - a) < 0.005 for a in f.amounts)] or pool
            if f.dates:
                pool = [c for c in pool if any(c["charged_on"].endswith(d[1:]) or c["charged_on"] == d for d in f.dates)] or pool
            target = pool[-1] if pool else None

        if target is None:
            if "duplicate" in intents:
                return step.answer(
                    "I've checked your account and I don't see a duplicate charge. " + self._charges_summary(charges)
                    + " Which charge looks wrong to you?"
                )
            return step.answer(
                self._charges_summary(charges) + " Which of these would you like refunded, and why?"
            )
        when = nice_date(target["charged_on"])
        is_dup = bool(target.get("duplicate_of"))
        label = "the duplicate charge" if is_dup else "the charge"
        if target["refundable"] <= 0.004 or self._refunded(target["id"]):
            done = next((t.output for t in self._refunds() if isinstance(t.output, dict) and t.output.get("charge_id") == target["id"]), None)
            ref = f" (refund {done['refund_id']})" if done else ""
            return step.answer(
                f"That's already taken care of: {label} of {money(target['amount'])} on {when} has been refunded{ref}. "
                "There's nothing more you need to do; it reaches your original payment method within 5-10 business days."
            )
        first = next((c for c in charges if c["id"] == target.get("duplicate_of")), None)
        options = [first["id"], target["id"]] if is_dup and first else [target["id"]]
        offered = self._refund_args(target)
        if not explicit or not pointed:
            if offered["reason"] not in v.desk.policy.refund_reasons and not v.context.get("refund_reason"):
                # No reason the desk refunds for fits this charge: say so, and why, instead of
                # offering a refund the policy would refuse. (Asked outright, the refund tool is
                # called and its refusal says why: the tool, not the model, decides policy.)
                return step.answer(self._refund_refused(target, label, when, dups))
            if is_dup and first:
                return step.offer(
                    f"I found it: two charges of {money(target['amount'])} for \"{target['description']}\", on "
                    f"{nice_date(first['charged_on'])} and {when}. The one on {when} is a duplicate. Would you like me to refund it?",
                    "refund_charge", offered, options, customer_id=customer_id,
                )
            return step.offer(
                f"I see a charge of {money(target['amount'])} on {when} for \"{target['description']}\". Would you like me to refund it?",
                "refund_charge", offered, options,
            )
        asked = [a.value for a in latest.amounts]
        requested = [a for a in asked if a <= target["refundable"] + 0.005]
        if asked and not requested and not ctx_charge:
            # Asked for more than the charge: refunds follow what was paid, not what is asked.
            return step.offer(
                f"I can't refund {money(max(asked))}: a refund is made against a specific charge, up to what was paid. "
                f"{label.capitalize()} of {money(target['amount'])} on {when} can be refunded "
                f"({money(target['refundable'])}). Would you like me to refund it?",
                "refund_charge", offered, options,
            )
        amount = round(min(requested[-1] if requested and not is_dup else target["refundable"], target["refundable"]), 2)
        return self._refund_call(offered | {"amount": amount})

    def _refund_refused(self, target: dict[str, Any], label: str, when: str, dups: list[dict[str, Any]]) -> str:
        reasons = list(self.view.desk.policy.refund_reasons)
        listed = ", ".join(reasons[:-1]) + f" or {reasons[-1]}" if len(reasons) > 1 else "".join(reasons) or "no reason at all"
        other = next((d for d in dups if d["id"] != target["id"] and d.get("refundable", 0) > 0), None)
        also = (
            f" The charge of {money(other['amount'])} on {nice_date(other['charged_on'])} is a duplicate, though: I can refund that one if you'd like."
            if other else ""
        )
        return (
            f"I'm sorry, I can't refund {label} of {money(target['amount'])} on {when}. Our policy allows refunds only for a "
            f"{listed}, and your account doesn't show this charge as one of those.{also} If you think it is, tell me what "
            "happened; or I can ask a member of our staff to review it."
        )

    def _charges_named(self, charges: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Every charge on the dates or invoices the customer named, refundable or not."""
        f = self.view.facts
        return [
            c
            for c in charges
            if c.get("invoice_id") in f.invoice_ids
            or any(c["charged_on"].endswith(d[1:]) or c["charged_on"] == d for d in f.dates)
        ]

    def _charges_matching(self, charges: list[dict[str, Any]]) -> list[dict[str, Any]]:
        f = self.view.facts
        pool = [c for c in charges if c["refundable"] > 0]
        if f.invoice_ids:
            by_invoice = [c for c in pool if c.get("invoice_id") in f.invoice_ids]
            if by_invoice:
                return by_invoice
        if f.amounts or f.dates:
            hits = [
                c
                for c in pool
                if (not f.amounts or any(abs(c["amount"] - a) < 0.005 for a in f.amounts))
                and (not f.dates or any(c["charged_on"].endswith(d[1:]) or c["charged_on"] == d for d in f.dates))
            ]
            return hits
        return []

    def _escalate_refund(self, target: str, args: dict[str, Any], why: str):
        amount = float(args.get("amount", 0))
        reason = str(args.get("reason", "refund"))
        context = self.step.context(
            {
                "refund_amount": amount,
                "refund_reason": reason,
                "charge_id": args.get("charge_id"),
                "customer_id": self._customer_id(),
                "escalation_reason": f"refund of {money(amount)}: {why}",
            }
        )
        title = self.view.desk.agents[target].title.lower()
        return Transfer(
            to_agent=target,
            reason=f"refund of {money(amount)} ({reason}) is {why}",
            handoff_kind="escalate",
            text=f"A refund of {money(amount)} is more than I can approve myself, so I'm passing this to a {title} colleague "
            "with all the details; you won't need to repeat anything.",
            context=context,
        )

    def _ask_human(self, why: str, context: dict[str, Any]):
        if self.view.has_tool("request_human") and not self.view.calls("request_human", this_turn=True):
            return self.step.call("request_human", {"reason": why}, **context)
        return self.step.answer(f"I've asked a member of staff to help, because {why}. They'll see everything we've discussed.")

    def _credit(self, customer_id: str, text: str, confirmed: bool = False):
        """A credit is made (or passed up to whoever may make it) only when the latest message
        asks for it or confirms our offer of it; otherwise it is offered, amount and all."""
        v, step = self.view, self.step
        request = next((t for t in reversed(self.topic_texts()) if cues.CREDIT.search(t)), text)
        arrived = any(h.to_agent == self.me.name and h.handoff_kind == "escalate" for h in v.turn_handoffs) and bool(v.context.get("credit_reason"))
        go = confirmed or arrived or "credit" in self._asked(text)
        asked_amounts = [a.value for a in slot_extraction.extract(request).amounts]
        amount = v.context.get("credit_amount") if arrived else None
        amount = amount or (asked_amounts[-1] if asked_amounts else None)
        if not v.has_tool("issue_credit"):
            target = self.escalation_target("issue_credit")
            if target is None:
                return self._ask_human("an account credit was requested", {})
            if not go:
                what = f"{money(amount)} of credit" if amount else "a credit"
                return step.offer(
                    f"I can ask our senior team to add {what} to your account. Shall I go ahead?", "issue_credit",
                    {"customer_id": customer_id, "amount": round(amount, 2) if amount else None, "reason": request[:300]},
                )
            title = v.desk.agents[target].title.lower()
            return Transfer(
                to_agent=target,
                reason="account credit requested",
                handoff_kind="escalate",
                text=f"Credits are handled by a {title} colleague; I'm passing this on with the details.",
                context=step.context({"credit_reason": request[:300], "credit_amount": amount, "customer_id": customer_id}),
            )
        if amount is None:
            return step.answer("What amount of credit are you asking for?")
        reason = v.context.get("credit_reason") or request[:300] or "service credit"
        args = {"customer_id": customer_id, "amount": round(float(amount), 2), "reason": reason}
        if go:
            return step.call("issue_credit", args)
        return step.offer(f"I can add {money(amount)} of credit to your account, taken off your next invoice. Shall I go ahead?", "issue_credit", args)

    def _cancel(self, customer_id: str, explicit: bool):
        """Cancel when the latest message asks to; otherwise say exactly what will happen and wait."""
        step = self.step
        request = next((t for t in reversed(self.topic_texts()) if cues.CANCEL.search(t)), None) or "customer asked to cancel"
        args = {"customer_id": customer_id, "reason": request[:200]}
        record = self._customer_record(customer_id)
        # The record was read before any cancellation this session: one made since counts.
        if self._done("cancel_subscription", customer_id) is not None or (record is not None and record.get("status") == "cancelled"):
            return step.answer("Your subscription is already cancelled: it won't renew and you won't be charged again. Anything else?")
        if explicit:
            return step.call("cancel_subscription", args, customer_id=customer_id)
        if record is None and self.view.has_tool("find_customer") and not self.view.called_with("find_customer", {"query": customer_id}):
            return step.call("find_customer", {"query": customer_id})
        plan = f"{str(record['plan']).title()} " if record else ""
        return step.offer(
            f"I can cancel your {plan}subscription now: it won't renew, you won't be charged again, and you keep access "
            "until the end of the period you've paid for. Shall I go ahead?",
            "cancel_subscription", args, customer_id=customer_id,
        )

    def _plan_change(self, customer_id: str, text: str, asked: set[str]):
        """A plan change states which plan, which billing period and when (now or at renewal).

        It is made at once when the latest message asks for it and names the plan or period;
        anything carried from earlier messages is offered first and waits for a yes.
        """
        v, step = self.view, self.step
        plan, period = cues.plan_request(text)
        source = text
        explicit = (
            bool(plan or period) and ("plan" in asked or self._asked_which_plan()) and not cues.ASKS_IF_POSSIBLE.search(text)
        )
        unknown = cues.unknown_plan(text) if plan is None else None
        if unknown is None and plan is None and period is None:  # named earlier, asked about since?
            unknown = next((found for t in reversed(self.topic_texts()) if not any(cues.plan_request(t))
                            for found in [cues.unknown_plan(t)] if found), None)
            if unknown is not None and self._asked_which_plan():
                unknown = None  # asked already: what they say now decides
        if unknown is not None:  # "to the Basic plan": we have no such plan; ask, never guess
            return self._with_prices(
                lambda prices, _plans: f"We don't have a plan called \"{unknown.title()}\". Which plan would you like? {prices}",
                f"We don't have a plan called \"{unknown.title()}\". Which plan would you like to move to?",
            )
        place = cues.plan_step(text) if plan is None and period is None else None
        if place is not None:  # "now the cheapest one": the latest words over a plan named before
            return self._plan_by_place(customer_id, text, place)
        if plan is None and period is None:
            for t in reversed(self.topic_texts()):
                plan, period = cues.plan_request(t)
                if plan or period:
                    source = t
                    break
        if plan is None and period is None:
            for said in reversed(self.topic_texts()):
                place = cues.plan_step(said)
                if place is not None:
                    return self._plan_by_place(customer_id, said, place)
            return self._with_prices(
                lambda prices, _plans: f"Which plan would you like? {prices}",
                "Which plan would you like to move to? I can't read our price list just now, so I can't quote prices at the moment.",
            )
        when = "renewal" if cues.AT_RENEWAL.search(text) or cues.AT_RENEWAL.search(source) else "now"
        read, record = self._read_account(customer_id)
        if read is not None:
            return read
        named_as_target = plan is not None and re.search(rf"\b(?:to|onto|into|on) (?:the |a )?{plan}\b", source, re.I)
        if plan == record.get("plan") and not period and not named_as_target and re.search(r"\b(?:upgrade|downgrade|switch|change|move)\b", source, re.I):
            # "downgrade, Team is too expensive": the plan named is the one they are leaving.
            return self._with_prices(
                lambda prices, _plans: f"You're on the {str(plan).title()} plan now. Which plan would you like? {prices}",
                "Which plan would you like to move to? I can't read our price list just now, so I can't quote prices at the moment.",
            )
        plan = plan or record["plan"]
        args: dict[str, Any] = {"customer_id": customer_id, "plan": plan}
        if period:
            args["billing_period"] = period
        if when == "renewal":
            args["when"] = "renewal"
        if plan == record.get("plan") and (period or record.get("billing_period")) == record.get("billing_period"):
            return step.answer(
                f"You're already on the {plan.title()} plan, billed {'annually' if record.get('billing_period') == 'annual' else 'monthly'}, "
                "so there's nothing to change. Anything else?"
            )
        if v.called_with("change_plan", args):
            return step.answer(f"That change to the {plan.title()} plan is already made. Anything else?")
        if explicit:
            return step.call("change_plan", args, customer_id=customer_id)
        billed = f", billed {'annually' if period == 'annual' else 'monthly'}" if period else ""
        timing = "at your next renewal (nothing changes until then)" if when == "renewal" else "now"
        return step.offer(
            f"To confirm: I'll move you from the {str(record['plan']).title()} plan to the {plan.title()} plan{billed}, {timing}. Shall I go ahead?",
            "change_plan", args, customer_id=customer_id,
        )

    def _plan_by_place(self, customer_id: str, source: str, place: str):
        """A plan named by where it sits ("downgrade", "the cheapest plan", "one tier up"), read
        against the customer's plan and the price list. The customer named no plan, so the one it
        resolves to is offered and waits for a yes; with several that fit, they are asked which."""
        v, step = self.view, self.step
        read, record = self._read_account(customer_id)
        if read is not None:
            return read
        read, plans = self._price_list()
        if read is not None:
            return read
        order = sorted(plans, key=lambda p: float(p["monthly_price"]))
        codes = [str(p["code"]) for p in order]
        # The plan as it stands: a change made since the record was read counts (one at renewal does not yet).
        changed = self._done(
            "change_plan", customer_id, lambda t: t.arguments.get("when") != "renewal" and bool(t.arguments.get("plan"))
        )
        current = str(changed.arguments["plan"] if changed is not None else record.get("plan"))
        if not plans or current not in codes:
            return step.answer(
                "Which plan would you like to move to? I can't read our price list just now, so I can't quote prices at the moment."
            )
        at = codes.index(current)
        fits = {
            "lowest": order[:1], "highest": order[-1:], "down": order[:at], "up": order[at + 1 :],
            "down1": order[at - 1 : at] if at else [], "up1": order[at + 1 : at + 2],
        }[place]
        fits = [p for p in fits if p["code"] != current]
        listed = "; ".join(f"{p['name']} is {self._plan_price(p)}" for p in fits)
        if not fits:
            end = "cheapest" if place in ("lowest", "down", "down1") else "largest"
            return step.answer(f"You're already on the {current.title()} plan, our {end}. Anything else?")
        if len(fits) > 1:
            return step.answer(f"You're on the {current.title()} plan now. {listed}. Which plan would you like?")
        target = fits[0]
        args: dict[str, Any] = {"customer_id": customer_id, "plan": target["code"]}
        when = "now"
        if cues.AT_RENEWAL.search(source):
            args["when"], when = "renewal", "at your next renewal (nothing changes until then)"
        price = self._plan_price(target)
        if cues.PLAN_QUESTION.search(source):
            # Asked, not told: the answer, then the same offer a "yes" takes up.
            said = f"You're on the {current.title()} plan; {target['name']} is {price}. Would you like me to move you to the {target['name']} plan {when}?"
        else:
            said = f"To confirm: I'll move you from the {current.title()} plan to the {target['name']} plan ({price}) {when}. Shall I go ahead?"
        return step.offer(said, "change_plan", args, customer_id=customer_id)

    def _next_payment(self, customer_id: str):
        """When the next payment is taken and how much: the account's billing day and period and
        its plan's price, counted from the day the customer asked."""
        v, step = self.view, self.step
        read, record = self._read_account(customer_id)
        if read is not None:
            return read
        if self._done("cancel_subscription", customer_id) is not None or record.get("status") == "cancelled":
            step.resolved = True
            return step.answer("Your subscription is cancelled, so there's no next payment: it won't renew.")
        read, plans = self._price_list()
        if read is not None:
            return read
        plan = next((p for p in plans if p["code"] == record.get("plan")), None)
        annual = record.get("billing_period") == "annual"
        # Counted from the business data's today (find_customer's "as_of": the demo company's
        # calendar), and only without one from the day the customer asked.
        as_of = str(record.get("as_of") or "")
        try:
            asked_on = date.fromisoformat(as_of)
        except ValueError:
            asked_on = v.customer_messages[-1].created_at.date() if v.customer_messages else date.today()
        due = next_billing_date(asked_on, int(record.get("billing_day") or 1), annual, str(record.get("created_on", "")))
        price = f"{money(plan['annual_price' if annual else 'monthly_price'])} " if plan else ""
        name = plan["name"] if plan else str(record.get("plan", "")).title()
        step.resolved = True
        return step.answer(
            f"Your next payment is {price}for the {name} plan, billed {'annually' if annual else 'monthly'}, "
            f"on {nice_date(due.isoformat())}."
        )

    def _my_plan(self, customer_id: str):
        """Which plan the account is on, and how it is billed: read from the account."""
        read, record = self._read_account(customer_id)
        if read is not None:
            return read
        code = str(record.get("plan") or "")
        if not code:
            return self.step.answer("I couldn't read your plan just now. Could you try again in a moment?")
        period = "annually" if record.get("billing_period") == "annual" else "monthly"
        status = " (cancelled: it won't renew)" if record.get("status") == "cancelled" else ""
        self.step.resolved = True
        return self.step.answer(f"You're on the {code.title()} plan, billed {period}{status}. Anything else I can help with?")

    def _done(
        self, tool: str, customer_id: str, where: Callable[[ToolEvent], bool] = lambda _: True
    ) -> ToolEvent | None:
        """The latest call of `tool` on this customer's account that went through this session
        (and, given `where`, that it holds for)."""
        return next(
            (
                t for t in reversed(self.view.tools)
                if t.ok and t.name == tool and t.arguments.get("customer_id") == customer_id and where(t)
            ),
            None,
        )

    def _read_account(self, customer_id: str) -> tuple[Any, dict[str, Any]]:
        """(the step that reads the account first, or that says it cannot be read; else None, and
        the account as read)."""
        v, step = self.view, self.step
        record = self._customer_record(customer_id)
        if record is not None:
            return None, record
        if v.called_with("find_customer", {"query": customer_id}) or not v.has_tool("find_customer"):
            # A policy that refused the read is not a technical failure: its reason is what the
            # customer can act on ("to confirm the account is yours, I need the email ...").
            refused = next((t for t in reversed(v.tools) if t.name == "find_customer" and t.done and t.is_error
                            and str(t.output).startswith("refused by policy: ")), None)
            reason = refused.reason if refused is not None else None
            email = v.facts.emails[-1] if v.facts.emails else None
            if reason and email and v.has_tool("find_customer") and not v.called_with("find_customer", {"query": email}):
                return step.call("find_customer", {"query": email}), {}  # the account named now
            if reason:
                return step.answer(f"{reason[:1].upper()}{reason[1:].rstrip('.')}."), {}
            return step.answer("I couldn't read your account just now. Could you try again in a moment?"), {}
        return step.call("find_customer", {"query": customer_id}), {}

    def _price_list(self) -> tuple[Any, list[dict[str, Any]]]:
        """(the step that reads the price list first, or None; the plans read this turn)."""
        v = self.view
        read = v.last_call("list_plans", this_turn=True)
        if read is None and v.has_tool("list_plans"):
            return self.step.call("list_plans", {}), []
        listing = read.output.get("plans") if read is not None and read.ok and isinstance(read.output, dict) else None
        return None, [p for p in listing or [] if isinstance(p, dict) and PLAN_FIELDS <= p.keys()]

    def _asked_which_plan(self) -> bool:
        """Our last reply asked which plan: a plan named now is the answer, so the request."""
        return "Which plan would you like?" in self.view.last_agent_text()

    def _pricing(self, text: str):
        offer = " Would you like to change your plan?" if self.view.has_tool("change_plan") else ""
        named = list(dict.fromkeys(m.group(1).lower() for m in cues.PLAN_NAME.finditer(text)))
        below, above = cues.CHEAPER_THAN.search(text), cues.DEARER_THAN.search(text)
        if not named:  # "how much will that cost?": the plan named last before it
            for said in reversed(self.topic_texts()):
                plans = [m.group(1).lower() for m in cues.PLAN_NAME.finditer(said)]
                if plans:
                    named = plans[-1:]
                    break

        def say(prices: str, plans: list[dict[str, Any]]) -> str:
            by_code = {p.get("code"): p for p in plans}
            than = below or above
            if than is not None:
                pivot = by_code.get(than.group(1).lower())
                if pivot is not None:
                    sign = -1 if below else 1
                    found = [p for p in plans if sign * (float(p["monthly_price"]) - float(pivot["monthly_price"])) > 0]
                    if not found:
                        return f"No plan is {'cheaper' if below else 'dearer'} than {pivot['name']} ({self._plan_price(pivot)}).{offer}"
                    listed = "; ".join(f"{p['name']} is {self._plan_price(p)}" for p in found)
                    return f"{'Cheaper' if below else 'Dearer'} than {pivot['name']} ({self._plan_price(pivot)}): {listed}.{offer}"
            asked = [by_code[code] for code in named if code in by_code]
            if len(asked) >= 2:
                low, high = sorted(asked[:2], key=lambda p: float(p["monthly_price"]))
                month = float(high["monthly_price"]) - float(low["monthly_price"])
                year = float(high["annual_price"]) - float(low["annual_price"])
                listed = "; ".join(f"{p['name']} is {self._plan_price(p)}" for p in (low, high))
                return f"{listed}. {high['name']} costs {money(month)} a month ({money(year)} a year) more than {low['name']}.{offer}"
            if asked:
                return f"The {asked[0]['name']} plan is {self._plan_price(asked[0])}.{offer}"
            return f"{prices}{offer}"

        return self._with_prices(
            say,
            "I can't read our price list just now, and I'd rather not quote a price from memory. "
            "Could you ask me again in a moment?",
        )

    def _with_prices(self, say: Callable[[str, list[dict[str, Any]]], str], no_prices: str):
        """Answer from the price list `list_plans` returned this turn, reading it first.

        Prices are data in the store, never known by the model: without a successful read the
        answer quotes none.
        """
        read, plans = self._price_list()
        if read is not None:
            return read
        if not plans:
            return self.step.answer(no_prices)
        listed = [f"{p['name']} is {self._plan_price(p)}" for p in plans]
        prices = ("; ".join(listed[:-1]) + "; and " + listed[-1] if len(listed) > 1 else listed[0]) + "."
        return self.step.answer(say(prices, plans))

    @staticmethod
    def _plan_price(plan: dict[str, Any]) -> str:
        return f"{money(plan['monthly_price'])} a month or {money(plan['annual_price'])} a year"

    def _payment_method(self, customer_id: str, text: str):
        step = self.step
        if cues.CARD_NUMBER.search(text):
            return step.answer(CARD_NUMBER_WARNING)
        # The card named now, else the one named earlier in this topic (asked for the email first,
        # the customer gave it: the card they had already named is not asked for again).
        done = self._done("update_payment_method", customer_id)
        method = cues.card_description(text) or (
            None if done is not None else next(
                (d for d in map(cues.card_description, reversed(self.topic_texts())) if d), None
            )
        )
        if method is None and done is not None:
            # "yes", "great" after the change: it is made; asking for a card again would read as not.
            return step.answer(f"Your payment method is {done.arguments.get('method')} now; future charges will use it. Anything else?")
        if method is None:
            return step.answer(
                "Sure. Which card should we use? Tell me the brand and the last four digits (like \"visa ending 1234\"), or PayPal."
            )
        return step.call("update_payment_method", {"customer_id": customer_id, "method": method})

    def _charges_summary(self, charges: list[dict[str, Any]], lead: str = "Your recent charges: ") -> str:
        lines = []
        for c in charges[-6:]:
            flags = []
            if c.get("duplicate_of"):
                flags.append("duplicate")
            if c["status"] in ("failed", "disputed"):
                flags.append(c["status"])
            if c["refundable"] < c["amount"] and c["status"] != "failed":
                flags.append("refunded" if c["refundable"] <= 0 else "partly refunded")
            extra = f" ({', '.join(flags)})" if flags else ""
            lines.append(f"{nice_date(c['charged_on'])}: {money(c['amount'])}, {c['description']}{extra}")
        return lead + "; ".join(lines) + "."

    def _days_asked(self, text: str) -> list[slot_extraction.Date]:
        """The days the customer asks about charges on: this message's, else the topic's latest."""
        return next((d for d in (slot_extraction.extract_dates(t) for t in [text, *reversed(self.topic_texts())]) if d), [])

    def _charges_answer(self, charges: list[dict[str, Any]], text: str = ""):
        # "what was the charge on february 1st?": the charges of the days asked about, not the list.
        days = self._days_asked(text)
        on_days = [c for c in charges if any(d.matches(str(c["charged_on"])) for d in days)]
        lead, missing = "Your recent charges: ", ""
        if on_days:
            lead = "Here is that charge — " if len(on_days) == 1 else "Here are those charges — "
        elif days:
            missing = f"I don't see a charge on {' or '.join(d.spoken() for d in days)}. "
        shown = on_days or charges
        dups = [c for c in shown if c.get("duplicate_of") and c["refundable"] > 0]
        failed = [c for c in shown if c["status"] == "failed"]
        summary = missing + self._charges_summary(shown, lead)
        if dups and any(cues.CHARGE_TROUBLE.search(t) for t in self.topic_texts()):
            # The offer is about the duplicated pair: "the second one" is the second of those two.
            dup = dups[-1]
            pair = [c["id"] for c in charges if c["id"] == dup.get("duplicate_of")] + [dup["id"]]
            tail = f" The charge on {nice_date(dup['charged_on'])} is a duplicate. Would you like me to refund it?"
            return self.step.offer(summary + tail, "refund_charge", self._refund_args(dup), pair)
        if dups:
            tail = f" The charge on {nice_date(dups[-1]['charged_on'])} looks like a duplicate; tell me if you'd like it refunded."
            return self.step.answer(summary + tail)
        tail = ""
        if failed:
            tail = f" The payment on {nice_date(failed[-1]['charged_on'])} failed, so you weren't charged for it; updating your payment method will settle that invoice."
        return self.step.answer(summary + tail)

    def _invoices_answer(self, event: ToolEvent | None, text: str):
        if event is None or not isinstance(event.output, dict):
            return self.step.answer("I couldn't read your invoices just now. Could you try again in a moment?")
        invoices = event.output.get("invoices", [])
        wanted = self.view.facts.invoice_ids
        # The months asked for ("my invoice for february"): this message's, else the topic's.
        months = next((m for m in map(slot_extraction.months_named, [text, *reversed(self.topic_texts())]) if m), [])
        in_months = [i for i in invoices if str(i.get("period", ""))[5:7].isdigit() and int(str(i["period"])[5:7]) in months]
        latest = not months and not wanted and any(cues.LATEST.search(t) for t in [text, *self.topic_texts()[-1:]])
        shown = [i for i in invoices if i["id"] in wanted] or in_months or (invoices[-1:] if latest else invoices[-4:])
        parts = [f"{i['id']} for {i['period']}: {money(i['amount'])}, {i['status']}" for i in shown]
        missing = ""
        if months and not in_months and not wanted:
            names = " or ".join(calendar.month_name[m] for m in months)
            missing = f"I don't see an invoice for {names}. "
        self.step.resolved = True
        lead = "Here is your invoice" if len(shown) == 1 and not missing else "Here are your invoices"
        return self.step.answer(
            f"{missing}{lead}: " + "; ".join(parts) + ". You can download PDFs under Settings > Billing > Invoices."
        )

    # --- the tech skill ----------------------------------------------------------------------------

    def _tech(self, text: str):
        v, step = self.view, self.step
        results = self._tech_results()
        if results is not None:
            return results
        topic_texts = self.topic_texts()
        issue = v.context.get("issue") or (topic_texts[0] if topic_texts else text)
        searched_before = [t for t in v.tools if t.name == "search_kb" and t.ok]

        # Troubleshoot first: only a report the customer calls a bug, or lost data, goes
        # straight to engineering; a first crash report gets the help article's steps.
        bug = bool(cues.BUG.search(text) or cues.DATA_LOSS.search(text))
        failed = bool(cues.STEPS_FAILED.search(text)) and bool(searched_before) and not v.turn_tools
        if v.context.get("bug_summary") and not v.calls("create_ticket") and v.has_tool("create_ticket"):
            return self._ticket(v.context["bug_summary"])
        login_issue = any(cues.LOGIN.search(t) or cues.RESET.search(t) for t in topic_texts + [text]) or any(
            isinstance(t.output, dict) and (t.output.get("articles") or [{}])[0].get("id") in LOGIN_ARTICLES
            for t in searched_before
        )
        reset_sent = any(t.name == "send_password_reset" and t.ok for t in v.tools)
        # A link we sent that never arrived is a failed step too; a reset they did themselves is
        # the step a reset link would be, so it is not offered again.
        missing = reset_sent and bool(cues.NOT_ARRIVED.search(text)) and not v.turn_tools
        reset_done = bool(cues.RESET_DONE.search(text))
        failed = failed or missing
        if failed and login_issue and not bug and not reset_sent and not reset_done and v.has_tool("send_password_reset"):
            # The usual next step for a refused password is a reset, not an engineering ticket.
            failed = False
            force_reset = True
        else:
            force_reset = False
        if bug or failed:
            summary = self._bug_summary(text if bug else issue, text, [] if bug else searched_before)
            if v.has_tool("create_ticket"):
                return self._ticket(summary)
            target = self.escalation_target("create_ticket")
            if target:
                title = v.desk.agents[target].title.lower()
                steps_tried = [a["id"] for t in searched_before for a in (t.output or {}).get("articles", [])[:1]]
                why = (
                    "the customer reports a bug" if bug
                    else "the password reset link did not arrive" if missing
                    else "the knowledge-base steps did not fix it"
                )
                return Transfer(
                    to_agent=target,
                    reason=f"{why}: {clip_words(summary, 120)}",
                    handoff_kind="escalate",
                    text=("Thanks for reporting this. " if bug else "Thanks for checking. " if missing else "Thanks for trying that. ")
                    + f"This needs a closer look, so I'm passing it to a {title} colleague "
                    "who can get engineering involved; they'll have everything you've told me.",
                    context=step.context({"bug_summary": summary, "steps_tried": steps_tried, "escalation_reason": why}),
                )
            return self._ask_human("the steps did not fix the problem", {"bug_summary": summary})

        wants_reset = force_reset or any(cues.RESET.search(t) for t in ([text] + topic_texts[-2:])) or (
            # Our offer ("just tell me the email") is taken by a yes or by an email in this reply;
            # one given earlier does not make any later reply a yes ("I'm on chrome on windows").
            "reset link" in v.last_agent_text().lower() and (read_answer(text) == "yes" or bool(slot_extraction.emails_in(text)))
        )
        if wants_reset and v.has_tool("send_password_reset"):
            who = v.context.get("customer_id") or (v.facts.emails[-1] if v.facts.emails else None) or v.context.get("customer_email")
            if who is None:
                return step.answer(
                    "I can send you a password reset link. What's the email address on your account? "
                    "The link always goes to the address we have on file."
                )
            sent = [t for t in v.tools if t.name == "send_password_reset" and t.ok]
            if sent and not v.facts.emails[-1:] == [who]:
                return step.answer(
                    f"I've already sent a reset link to {self._mask(sent[-1].output.get('email', ''))}; it's valid for 30 minutes. "
                    "Only the newest link works, so use the latest email."
                )
            if not v.called_with("send_password_reset", {"customer": who}):
                return step.call("send_password_reset", {"customer": who})
        if searched_before and not v.turn_tools and cues.setup_only(text):
            # "I'm on iOS 17" after the steps: a detail of this problem, kept for the case (and an
            # engineer's ticket), not a new search.
            return step.answer(SETUP_NOTED, customer_setup=text.strip()[:120])
        if searched_before and not v.turn_tools and cues.only_facts(text):
            # Who they are, after the steps (the facts go to the shared context): no new search.
            return step.answer(ACCOUNT_NOTED)
        if v.has_tool("search_kb"):
            just_arrived = bool(v.turn_handoffs) and v.turn_handoffs[-1].to_agent == self.me.name
            if just_arrived and v.context.get("issue"):
                query = v.context["issue"]  # what triage understood, without the small talk around it
            else:
                query = text if len(text.split()) > 3 or not topic_texts else " ".join(topic_texts[-2:])
            if not v.called_with("search_kb", {"query": query}):
                return step.call("search_kb", {"query": query}, issue=issue[:300])
        if not v.has_tool("search_kb"):
            # No knowledge base to search (an agent defined in the desk file, with a reset tool
            # among its own): use the tool its description and instructions say fits.
            return generic.Generic(self).decide(text)
        return step.answer("Could you tell me a bit more about what happens, and what you see on screen?")

    def _tech_results(self):
        v, step = self.view, self.step
        if not v.turn_tools:
            return None
        last = v.turn_tools[-1]
        if not last.done:
            return None
        if last.name == "send_password_reset":
            if last.is_error:
                return step.answer(
                    "I couldn't find an account with that email address. Could you check it, or give me the one you signed up with?"
                )
            email = self._mask(last.output.get("email", "")) if isinstance(last.output, dict) else "your email"
            step.resolved = True
            return step.answer(
                f"I've sent a password reset link to {email}. It's valid for 30 minutes; check your spam folder if it hasn't "
                "arrived in a few minutes. Let me know if anything goes wrong."
            )
        if last.name == "create_ticket":
            if last.is_error:
                return step.answer(f"I couldn't open the ticket: {(last.reason or ON_OUR_SIDE).rstrip('. ')}.")
            out = last.output if isinstance(last.output, dict) else {}
            step.resolved = True
            return step.answer(
                f"I've opened engineering ticket {out.get('ticket_id')} with everything you've described "
                f"(\"{str(out.get('summary', ''))[:120]}\"). "
                + (
                    "Our engineers will follow up by email; you don't need to repeat anything."
                    if out.get("customer_id")
                    else "If you tell me the email on your account, I'll add it so our engineers can reach you."
                )
            )
        if last.name == "search_kb":
            articles = last.output.get("articles", []) if isinstance(last.output, dict) else []
            if not articles:
                # The knowledge base abstained: no article answers this with confidence. Say so,
                # and offer a person, rather than present a loosely related article.
                return step.answer(NO_ARTICLE)
            top = articles[0]
            if top["id"] not in LOGIN_ARTICLES and cues.sign_in_trouble(str(last.arguments.get("query", ""))):
                # The search matches words ("logging" finds the signed-out article, "my details"
                # the personal details one); trouble signing in is answered by a sign-in article
                # when the search found one at all.
                top = next((a for a in articles if a["id"] in LOGIN_ARTICLES), top)
            # A Markdown list: the TUI renders agent text as Markdown, so each step gets its own line.
            steps = "\n".join(f"{i}. {s}" for i, s in enumerate(top["steps"][:5], start=1))
            if acts.asks_rather_than_reports(str(last.arguments.get("query", ""))):
                # A question, not a problem: the article answers it; nothing is there to "fix".
                return step.answer(
                    f"Our article \"{top['title']}\" covers this:\n\n{steps}\n\n{ANSWERS_QUESTION}"
                )
            closing = "Let me know whether that works."
            if top["id"] in LOGIN_ARTICLES and v.has_tool("send_password_reset"):
                closing = (
                    "If you'd like, I can also send you a password reset link: just tell me the email "
                    f"on your account. {closing}"
                )
            return step.answer(
                f"Here's what usually fixes this (from our article \"{top['title']}\"):\n\n{steps}\n\n{closing}"
            )
        return None

    def _bug_summary(self, issue: str, text: str, searched: list[ToolEvent]) -> str:
        tried = ""
        if searched and isinstance(searched[-1].output, dict) and searched[-1].output.get("articles"):
            tried = f" Steps from '{searched[-1].output['articles'][0]['title']}' did not help."
        first = issue.strip().rstrip(".") + "."
        latest = "" if text.strip() == issue.strip() else f" Then: {text.strip().rstrip('.')}."
        setup = self.view.context.get("customer_setup")
        runs_on = f" Setup: {str(setup).rstrip('.')}." if setup and str(setup) != text.strip() else ""
        return clip_words(f"{first}{latest}{tried}{runs_on}", 480)

    def _ticket(self, summary: str):
        v = self.view
        # Attach the account when the customer has told us who they are, so engineering can
        # reach them without anyone asking again.
        email = v.facts.emails[-1] if v.facts.emails else v.context.get("customer_email")
        if not v.context.get("customer_id") and email and v.has_tool("find_customer"):
            if not v.called_with("find_customer", {"query": email}):
                return self.step.call("find_customer", {"query": email})
        severity = "high" if cues.DATA_LOSS.search(summary) or (cues.BUG.search(summary) and any(w in summary.lower() for w in ("data", "lost", "deleted", "corrupt"))) else "normal"
        args: dict[str, Any] = {"summary": clip_words(summary, 480), "severity": severity}
        customer = v.context.get("customer_id") or self._customer_id()
        if customer:
            args["customer_id"] = customer
        return self.step.call("create_ticket", args)

    @staticmethod
    def _mask(email: str) -> str:
        name, _, domain = email.partition("@")
        if not domain:
            return "the email on file"
        return f"{name[:1]}***@{domain}"
