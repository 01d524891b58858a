"""What an offline agent reads off a step request: the conversation, the tools' results,
the facts the customer has given, and the shared context.

Everything is derived from the log each step, never kept between steps: that is what
makes the offline model deterministic and lets a restarted desk carry on. (What is kept is
only what a text says, the slots found in it: the same for the same text, whichever step or
conversation reads it.)
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from datetime import date
from typing import Any, assert_never

from supportdesk import items as k
from supportdesk.config import ToolLimits
from supportdesk.engine.confirmation import rest_after_yes
from supportdesk.engine.protocol import StepRequest
from supportdesk.models.offline import slots as slot_extraction
from supportdesk.models.offline.kept import keep, kept_by_text
from supportdesk.lexicon import CONCEPTS
from supportdesk.readers.spelling import corrected, words_of
from supportdesk.patterns import LazyPattern

# The limits of a tool an agent does not hold.
NO_LIMITS = ToolLimits()


@dataclass
class ToolEvent:
    call_id: str
    name: str
    arguments: dict[str, Any]
    seq: int
    agent: str
    output: Any = None  # parsed JSON when the tool returned JSON, else the text
    is_error: bool = False
    done: bool = False  # a result has been recorded
    waiting: bool = False  # the call waits for staff approval (the result's `awaits_approval`)

    @property
    def ok(self) -> bool:
        return self.done and not self.is_error and not self.waiting

    @property
    def reason(self) -> str | None:
        """What this failed call can tell the customer: a policy's or the business data's reason
        (written to be read out); None when the engine failed the call (a tool that crashed, bad
        arguments, an unknown tool, a hook's veto), whose words are for the agent and staff."""
        text = str(self.output)
        if _ENGINE_FAILURE.match(text):
            return None
        return text.removeprefix("refused by policy: ")


# How engine/tools.py and the runner word a call they failed themselves.
_ENGINE_FAILURE = LazyPattern(r"(unknown tool |[\w.-]+ failed: [\w.]+: |[\w.-]+: invalid arguments|vetoed by )")
# What the agent says instead of such words.
ON_OUR_SIDE = "something went wrong on our side, so nothing was changed"


@dataclass
class Facts:
    """What the customer has told us, across all their messages (latest first wins)."""

    emails: list[str] = field(default_factory=list)
    customer_ids: list[str] = field(default_factory=list)
    amounts: list[float] = field(default_factory=list)
    # As searched: "2026-03-01", or "--03-01" when the customer gave no year.
    dates: list[str] = field(default_factory=list)
    invoice_ids: list[str] = field(default_factory=list)
    order_ids: list[str] = field(default_factory=list)
    # The year each year-less date is read in: the customer's own words, else the charge it
    # names, else the last such date on or before the day the customer wrote.
    years: dict[str, int] = field(default_factory=dict)

    def add(self, found: slot_extraction.Slots, written_on: date | None = None, *, repair: bool = False) -> None:
        """Add what a message says; `repair`: the message takes back what was said before ("sorry,
        I meant the 3rd"), so each kind of fact it names replaces that kind's earlier values."""
        targets: tuple[tuple[list[Any], list[Any]], ...] = (
            (self.emails, found.emails),
            (self.customer_ids, found.customer_ids),
            (self.amounts, [a.value for a in found.amounts]),
            (self.dates, [d.iso() for d in found.dates]),
            (self.invoice_ids, found.invoice_ids),
            (self.order_ids, found.order_ids),
        )
        for target, values in targets:
            if repair and values:
                target.clear()
            for v in values:
                if v in target:
                    target.remove(v)
                target.append(v)
        if written_on is not None:
            for d in found.dates:
                if d.year is None and d.iso() not in self.years:
                    past = (d.month, d.day) > (written_on.month, written_on.day)
                    self.years[d.iso()] = written_on.year - 1 if past else written_on.year

    def dated_days(self, text: str, found: slot_extraction.Slots) -> slot_extraction.Slots:
        """`found` with the days `text` names without their month ("sorry, I meant the one on the
        3rd") read as dates: in the month the text names ("the march one on the 16th"), else in the
        month (and year) of the last date the customer gave, the charge being spoken of. With no
        month to read them in, they stay the listed charges' to match (dialogue.point_at)."""
        if found.dates or slot_extraction.counts_a_day_from_today(text):
            return found
        days = slot_extraction.bare_days(text)
        if not days:
            return found
        months = slot_extraction.months_named(text)
        if months:
            month, year = months[0], None
        elif self.dates:
            last = self.dates[-1]  # "2026-03-01", or "--03-01" with no year said
            month, year = int(last[-5:-3]), None if last.startswith("--") else int(last[:4])
        else:
            return found
        return dataclasses.replace(found, dates=[slot_extraction.Date(month, day, year) for day in sorted(days)])

    def iso_dates(self) -> list[str]:
        """The dates as ISO 8601 calendar dates, for the shared context and for people."""
        out = []
        for d in self.dates:
            if d.startswith("--") and d in self.years:
                d = f"{self.years[d]:04d}{d[1:]}"
            if d not in out:
                out.append(d)
        return out

    def context_writes(self, context: dict[str, Any]) -> dict[str, Any]:
        """The shared-context keys these facts add or change."""
        out: dict[str, Any] = {}
        if self.emails and context.get("customer_email") != self.emails[-1]:
            out["customer_email"] = self.emails[-1]
        for key, values in (
            ("amounts", self.amounts),
            ("dates", self.iso_dates()),
            ("invoice_ids", self.invoice_ids),
            ("order_ids", self.order_ids),
        ):
            if values and context.get(key) != values:
                out[key] = list(values)
        # A customer id the customer typed is a claim; `customer_id` is written by the lookup
        # tools once the account is found.
        if self.customer_ids and context.get("customer_ref") != self.customer_ids[-1]:
            out["customer_ref"] = self.customer_ids[-1]
        return out


# Every step reads the whole log again, so a turn's customer messages are read once per step,
# and each time the same: the slots found in a message (a pure function of its text and of
# whether the agent had asked for the amount) are kept for this many recent texts of up to
# SLOTS_KEPT_CHARS characters. Only View reads them, and never changes them.
SLOTS_KEPT = 256
SLOTS_KEPT_CHARS = 2_000
_slots_found: dict[tuple[str, bool], slot_extraction.Slots] = {}
_SLOT_FIELDS = dataclasses.fields(slot_extraction.Slots)


def _slots(text: str, *, amount_asked: bool = False) -> slot_extraction.Slots:
    key = (text, amount_asked)
    found = _slots_found.get(key)
    if found is None:
        # (no option when none is asked: the skills' `extract(text)` finds the same kept reading)
        found = slot_extraction.extract(text, amount_asked=True) if amount_asked else slot_extraction.extract(text)
        if len(text) <= SLOTS_KEPT_CHARS:
            keep(_slots_found, key, found, SLOTS_KEPT)
    return found


# A message is read as meant (readers/spelling.py) once per step too, the same each time:
# the reading of each recent text, for the desk's vocabulary, is kept like its slots.
_meant: dict[tuple[str, frozenset[str]], str] = {}


def _read_as_meant(text: str, vocabulary: frozenset[str]) -> str:
    key = (text, vocabulary)
    found = _meant.get(key)
    if found is None:
        found = corrected(text, vocabulary)
        if len(text) <= SLOTS_KEPT_CHARS:
            keep(_meant, key, found, SLOTS_KEPT)
    return found


# A tool's stored output is parsed each step that reads the log (a turn's steps, every later
# turn's): parsed once per text instead, for this many recent outputs of up to OUTPUTS_KEPT_CHARS
# characters. The parsed value is shared by every view that reads the same text, so no reader
# changes it (they copy what they change: skills/money/reads.py `_charges`).
OUTPUTS_KEPT = 256
OUTPUTS_KEPT_CHARS = 64_000
_NOT_JSON = object()


@kept_by_text(OUTPUTS_KEPT, OUTPUTS_KEPT_CHARS)
def _parsed_json(output: str) -> Any:
    """The JSON value a tool's output holds, or _NOT_JSON when it holds none."""
    try:
        return json.loads(output)
    except ValueError:
        return _NOT_JSON


def _parsed_output(output: str) -> Any:
    """A tool's output as the agents read it: its JSON value parsed, else the text."""
    found = _parsed_json(output)
    return output if found is _NOT_JSON else found


@kept_by_text(SLOTS_KEPT, SLOTS_KEPT_CHARS)
def _asks_for_amount(text: str) -> bool:
    """The agent's message asks the customer for the amount (read once per text, not per step)."""
    return bool(slot_extraction.ASKS_FOR_AMOUNT.search(text))


# The desk's own words (its agents' examples and descriptions), by desk: a desk is read each
# step, its words once. (A config is not hashable; its id is kept with it, so a new config
# that reuses a freed id is not taken for the old one.)
_VOCABULARIES: dict[int, tuple[Any, frozenset[str]]] = {}


def _vocabulary(desk: Any) -> frozenset[str]:
    known = _VOCABULARIES.get(id(desk))
    if known is not None and known[0] is desk:
        return known[1]
    # The domain lexicon's phrasings are the desk's words too: "breach" (a hacked account) is rare
    # among bank and assistant messages, and read as "beach" it told the router nothing (issue 38).
    lexicon_words = tuple(p for phrases in CONCEPTS.values() for p in phrases)
    words = words_of(tuple(e for a in desk.agents.values() for e in (*a.examples, a.description)) + lexicon_words)
    if len(_VOCABULARIES) >= 8:
        _VOCABULARIES.clear()
    _VOCABULARIES[id(desk)] = (desk, words)
    return words


class View:
    def __init__(self, request: StepRequest):
        self.request = request
        self._tool_names: frozenset[str] | None = None
        self.agent = request.agent
        self.desk = request.desk
        self.context = dict(request.context)
        history = list(request.history)
        self.history = history
        self.last_seq = history[-1].seq if history else 0

        # One pass over the log, every kind named: a new kind must say what the offline agents
        # read from it (tests/test_item_kinds.py feeds each kind through here).
        self.customer_messages: list[k.Message] = []
        self.agent_messages: list[k.Message] = []
        self.tools: list[ToolEvent] = []
        by_id: dict[str, ToolEvent] = {}
        last_customer_at = -1
        self.facts = Facts()
        # What each customer message says, its days without a month read in the month meant
        # (`Facts.dated_days`): the latest message's facts are these, not its text's alone.
        self._said: dict[str, slot_extraction.Slots] = {}
        vocabulary = _vocabulary(self.desk)
        asked_amount = False  # the agent's last message asked the customer for the amount
        offered_on = confirmed_request = ""
        offered_at = confirmed_at = -1  # where the request the desk's offer asked about stands
        declined_at, declined_why, declined_tool = -1, "", ""
        said_no: dict[int, str] = {}  # the customer messages the gate read as no yes to its offer: the offer's tool
        for at, i in enumerate(history):
            match i:
                case k.Message(role="customer"):
                    # Read as meant: a misspelt word ("refnd my febuary charge") is the word one
                    # edit away that customers, or this desk's examples, use (readers/spelling.py).
                    text = _read_as_meant(i.text, vocabulary)
                    if text != i.text:
                        i = dataclasses.replace(i, text=text)
                    self.customer_messages.append(i)
                    last_customer_at = at
                    found = self.facts.dated_days(i.text, _slots(i.text, amount_asked=asked_amount))
                    self._said[i.text] = found
                    self.facts.add(found, i.created_at.date(), repair=slot_extraction.repairs(i.text))
                    asked_amount = False
                case k.Message(role="agent"):
                    self.agent_messages.append(i)
                    asked_amount = _asks_for_amount(i.text)
                case k.Message():
                    pass  # staff notes and system lines are not the customer's facts
                case k.ToolCall():
                    ev = ToolEvent(i.call_id, i.name, dict(i.arguments), i.seq, i.agent)
                    by_id[i.call_id] = ev
                    self.tools.append(ev)
                case k.ToolResult():
                    if i.call_id in by_id:
                        ev = by_id[i.call_id]
                        ev.done, ev.is_error, ev.waiting = True, i.is_error, i.awaits_approval
                        ev.output = _parsed_output(i.output)
                case k.Handoff() | k.Notice():
                    pass  # read per turn, below
                case k.ContextSet():
                    pass  # the context as of now comes whole in the request
                case k.Release():
                    # The summary staff hand back with is context the agent uses (issue 39): an
                    # email or a charge in it counts as said, so it is not asked for again.
                    if i.summary:
                        self.facts.add(_slots(i.summary), i.created_at.date())
                case k.Takeover() | k.StateChange() | k.StaffReply() | k.TagChange():
                    pass  # staff acting: the runner runs no agent while a person holds the conversation
                case k.Offer():
                    # The request the desk's offer asked about (the customer's message before it),
                    # unless that message only left the last offer open and this one puts it again
                    # (the gate read it as neither a yes nor a no: "awesome, the app opens now"
                    # tells of another matter; "i guess so?" hedges): the request stays the one
                    # that led to the first asking, not the words it was put again on. (Another
                    # action offered on those words is a request of theirs: "just cancel instead".)
                    put_again = declined_at > last_customer_at >= 0 and declined_why in ("other", "question") and i.tool == declined_tool
                    if not (offered_on and put_again):
                        offered_on = self.customer_messages[-1].text if self.customer_messages else ""
                        offered_at = last_customer_at
                case k.Confirmation():
                    confirmed_request = offered_on  # a yes: the desk ran the call, its result follows
                    confirmed_at = offered_at
                case k.Decline():
                    declined_at, declined_why, declined_tool = at, i.why, i.tool
                    if i.why in ("no", "other", "change_of_mind"):  # (a question is answered, then asked again)
                        said_no[i.answer_seq] = i.tool
                case _:
                    assert_never(i)
        self.turn = history[last_customer_at + 1 :]
        self.latest: str = self.customer_messages[-1].text if self.customer_messages else ""
        # The customer's yes answered the desk's offer (issue 33): the agent goes on with the
        # request that led to it (its other topics too), as if the call had run right then, and
        # the handoffs that brought it there count as this turn's.
        confirmed = bool(confirmed_request) and any(isinstance(i, k.Confirmation) for i in self.turn)
        # How the desk's one confirmation reader (engine/confirmation.py) read the latest message
        # as the answer to the offer before it: "yes" (the call ran), the decline's why ("no",
        # "change_of_mind", "question", "other"), or None when no offer of the desk's was open.
        self.offer_answer: str | None = None
        if any(isinstance(i, k.Confirmation) for i in self.turn):
            self.offer_answer = "yes"
        elif declined_at > last_customer_at >= 0:
            self.offer_answer = declined_why
        # The tool of the offer this message declined (None when it declined none): after a no,
        # this reply puts that action to the customer again in no form.
        self.declined_tool: str | None = declined_tool if self.offer_answer not in (None, "yes") else None
        # What the customer did not take stays not taken: the action of an offer answered with
        # anything but a yes ("no", "i'll keep it", "ok thanks") is carried on from no message
        # before that answer, nor by an "ok" after it (issue 38). (message text, offer's tool)
        self.said_no: list[tuple[str, str]] = [(m.text, said_no[m.seq]) for m in self.customer_messages if m.seq in said_no]
        # A yes that asks for something more ("yes do it, and also when is my next payment?"):
        # the offered call's result is answered first (`also` is what is still to answer); once
        # an agent has said that, the rest is read as a request of its own, like a new message
        # (its turn starting after that reply), and `also_after` is where it starts.
        self.also = rest_after_yes(self.latest) if confirmed else ""
        self.also_after: int | None = None
        if self.also:
            confirmed_item = next(n for n, i in enumerate(history) if n > last_customer_at and isinstance(i, k.Confirmation))
            said = [n for n, i in enumerate(history) if n > confirmed_item and isinstance(i, k.Message) and i.role == "agent"]
            if said:
                self.also_after = said[0]
        if confirmed and self.also_after is None:
            self.latest = confirmed_request
        elif self.also_after is not None:
            self.latest, confirmed = self.also, False
            self.turn = history[self.also_after + 1 :]
        turn_start = self.turn[0].seq if self.turn else self.last_seq + 1
        self.turn_tools = [t for t in self.tools if t.seq >= turn_start]
        since = history[confirmed_at + 1 :] if confirmed and confirmed_at >= 0 else self.turn
        self.turn_handoffs = [i for i in since if isinstance(i, k.Handoff)]
        self.turn_notices = [i for i in self.turn if isinstance(i, k.Notice)]

        # A year-less date the customer gave is read in the year of the charge it names.
        for t in self.tools:
            if t.ok and t.name == "find_charges" and isinstance(t.output, dict):
                for ch in t.output.get("charges", []):
                    on = str(ch.get("charged_on", ""))
                    if len(on) == 10 and f"--{on[5:]}" in self.facts.years:
                        self.facts.years[f"--{on[5:]}"] = int(on[:4])

    # --- questions the agents ask of the log ----------------------------------------------------

    def tool_names(self) -> set[str]:
        # Asked many times a step (has_tool, amount_limit, the skills' checks): the set is made
        # once per view, from this step's tool specs. (A copy is returned: callers may change it.)
        names = self._tool_names
        if names is None:
            names = self._tool_names = frozenset(t.name for t in self.request.tools)
        return set(names)

    def has_tool(self, name: str) -> bool:
        names = self._tool_names
        if names is None:
            self.tool_names()
            names = self._tool_names
            assert names is not None
        return name in names

    def tool_limits(self, name: str) -> ToolLimits:
        """A tool's limits on this desk as this agent is told them (ToolSpec.limits, from the
        tool's declaration: engine/tools.py `Tool.limits_on`); none when it does not hold it."""
        return next((t.limits for t in self.request.tools if t.name == name), NO_LIMITS)

    def amount_limit(self, name: str) -> float:
        """The largest amount this agent's call of a tool may carry (its level's limit): 0 when
        it does not hold the tool, unbounded when the tool declares no such limit."""
        if not self.has_tool(name):
            return 0.0
        limit = self.tool_limits(name).per_call(self.agent.level)
        return float("inf") if limit is None else limit

    def calls(self, name: str, *, this_turn: bool = False) -> list[ToolEvent]:
        pool = self.turn_tools if this_turn else self.tools
        return [t for t in pool if t.name == name]

    def last_call(self, name: str, *, this_turn: bool = False) -> ToolEvent | None:
        found = self.calls(name, this_turn=this_turn)
        return found[-1] if found else None

    def called_with(self, name: str, arguments: dict[str, Any]) -> bool:
        return any(t.name == name and t.arguments == arguments for t in self.tools)

    def made_with(self, name: str, arguments: dict[str, Any]) -> bool:
        """The call ran and succeeded: only then may a reply say it is done. (A call the desk's
        gate held for a yes, or one that failed or waits for staff, was asked, not made.)"""
        return any(t.name == name and t.arguments == arguments and t.ok for t in self.tools)

    def last_agent_text(self) -> str:
        return self.agent_messages[-1].text if self.agent_messages else ""

    def answered_this_turn(self, agent: str | None = None) -> bool:
        return any(
            isinstance(i, k.Message) and i.role == "agent" and (agent is None or i.agent == agent) for i in self.turn
        )

    def latest_facts(self) -> slot_extraction.Slots:
        if not self.latest:
            return slot_extraction.Slots()
        # A copy: the kept one is shared by every step reading the same text.
        found = self._said.get(self.latest) or _slots(self.latest)
        return dataclasses.replace(found, **{f.name: list(getattr(found, f.name)) for f in _SLOT_FIELDS})

    def call_id(self, index: int = 0) -> str:
        # Deterministic per log position: a step retried after a crash asks for the same
        # call ids, so the tools' idempotency turns a replay into a no-op.
        return f"call_{self.last_seq}_{index}"
