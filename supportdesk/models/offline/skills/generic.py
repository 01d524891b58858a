"""Competent generic behaviour for an agent defined only in the desk file.

An agent whose tools are neither the money skill's nor the tech skill's (a "returns" agent
holding `create_return_label`, say) still works like a person given a new job description:
it picks the tool the request is about (by the words of the tool's name and description),
fills the tool's parameters from what the customer has said anywhere in the conversation,
asks for the ones still missing (one question naming them), calls the tool, and reports what
the tool returned. A request outside its description goes back to the entry agent (the
specialist's topic switch); the shared context and dialogue state work as for everyone else.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from supportdesk.engine.protocol import ToolSpec
from supportdesk.models.offline.router import content_words
from supportdesk.models.offline.view import ON_OUR_SIDE
from supportdesk.readers import acts
from supportdesk.text import clip_words
from supportdesk.patterns import LazyPattern

if TYPE_CHECKING:
    from supportdesk.models.offline.skills.common import SkillBase

# Tools every agent may hold that are not its job (a person is asked for through `_conversational`).
_ASIDE = {"request_human"}
# Tools that look something up: a means to an action, so an action tool wins a tie.
_LOOKUPS = ("find_", "list_", "get_", "search_", "lookup_")
# Stems that say nothing of what a tool is for.
_FILLER = {"the", "a", "an", "to", "of", "and", "or", "in", "on", "for", "with", "they", "them", "their", "it",
           "is", "are", "be", "so", "can", "when", "what", "you", "your", "my", "me", "i", "we", "our", "has",
           "have", "that", "this", "by", "as", "at", "from", "never", "else", "pleas", "help", "bring",
           # A verb's particle says nothing without its verb: find_customer's "look up" is no match
           # for a login that "showed up" (security-13: the lookup was picked over the reset).
           "up", "down", "off", "out", "over"}
_WORD = LazyPattern(r"[a-z]+")


def _words(text: str) -> set[str]:
    out = set()
    for w in _WORD.findall(text.lower().replace("_", " ")):
        out.add(w[:5])  # a crude stem: "returns", "returned", "return" meet
    return out


def _required(spec: ToolSpec) -> list[tuple[str, str]]:
    """(name, description) of each parameter the tool needs and has no default for."""
    model: type[BaseModel] = spec.args_model
    return [(name, f.description or name.replace("_", " ")) for name, f in model.model_fields.items() if f.is_required()]


def _optional(spec: ToolSpec) -> list[str]:
    return [name for name, f in spec.args_model.model_fields.items() if not f.is_required()]


class Generic:
    def __init__(self, specialist: SkillBase):
        self.s = specialist
        self.view = specialist.view
        self.step = specialist.step

    def tools(self) -> list[ToolSpec]:
        return [t for t in self.view.request.tools if t.name not in _ASIDE]

    def decide(self, text: str):
        v = self.view
        reported = self._report()
        if reported is not None:
            return reported
        person = self.person_asked_for(text)
        if person is not None:
            return self.step.call(person.name, {"reason": text[:300]})
        tools = self.tools()
        if not tools:
            return self.step.answer(
                "I'm sorry, that's not something I can do from here. I've noted it; is there anything else I can help with?"
            )
        request = " ".join(self.s.topic_texts()) or text
        tool = self._pick(tools, request)
        if tool is None:
            return self.step.answer(
                f"I can help with {self.view.agent.description.rstrip('.').lower()}. What would you like me to do?"
            )
        if self._turned_down(tool):
            # The customer said no to this very call (the desk's gate read the answer: "no, that
            # was my son"): nothing is done, and it is not put to them again in this reply.
            return self.step.answer("No problem, I'll leave it: nothing has been done. Is there anything else I can help with?")
        args, missing = self._fill(tool, request)
        if missing:
            wanted = " and ".join(desc for _, desc in missing)
            return self.step.answer(f"{self._offer_line(tool)} To go ahead I need {self._article(wanted)}: could you tell me?")
        if v.made_with(tool.name, args):
            return self.step.answer("That's already done (see above). Is there anything else I can help with?")
        return self.step.call(tool.name, args)

    def _turned_down(self, tool: ToolSpec) -> bool:
        """The customer answered the desk's offer of this tool with anything but a yes (the gate's
        reading, `View.said_no`), and no message since asks for it anew: a clause the act reader
        hears as a request, in the words of what the tool is for. The request that led to the
        offer is not carried on past that answer (issue 38)."""
        v = self.view
        declined = [said for said, name in v.said_no if name == tool.name]
        if not declined:
            return False
        texts = [m.text for m in v.customer_messages]
        last = max((i for i, t in enumerate(texts) if t in declined), default=len(texts) - 1)
        about = self._about(tool)
        for later in texts[last + 1 :]:
            for clause in acts.clauses(later):
                if acts.read_act(clause).act == "request" and _words(" ".join(content_words(clause))) & about:
                    return False
        return True

    def person_asked_for(self, text: str) -> ToolSpec | None:
        """The agent's tool for bringing in a person, when a clause of the message asks for what
        that tool brings ("i need a person now, someone is inside my account"): read by the act
        reader as a request, in the words of the tool's own name and defaults (issue 38:
        a config-only agent uses its tools by their descriptions). Once a turn."""
        v = self.view
        aside = [t for t in v.request.tools if t.name in _ASIDE]
        if not aside or v.calls(aside[0].name, this_turn=True):
            return None
        tool = aside[0]
        for clause in acts.clauses(text):
            if acts.read_act(clause).act == "request" and _words(" ".join(content_words(clause))) & self._brings(tool):
                return tool
        return None

    def _brings(self, tool: ToolSpec) -> set[str]:
        """Whom a tool brings, in its own words: its name and its parameters' defaults
        ("request_human", "customer asked for a person") without the verb each opens with, the
        words of asking, filler, and the words of the agent's own job (a security agent's
        "account" is no call for a person). Not its description's "member ... join the
        conversation": "add a team member" or "join the team plan" asks for no person."""
        defaults = " ".join(str(f.default) for f in tool.args_model.model_fields.values() if isinstance(f.default, str))
        opening = {tool.name.split("_")[0], *(defaults.split()[:1])}
        said = _words(f"{tool.name} {defaults}") - _FILLER - _words(self.view.agent.description) - _words(" ".join(opening))
        return {w for w in said if not w.startswith(("ask", "req"))}

    @staticmethod
    def _offer_line(tool: ToolSpec) -> str:
        """What the tool does, in its description's words ("Email a password reset link to the
        address on file (never ...)." -> "I can email a password reset link to the address on
        file."): the customer who told a problem hears what would be done, not "I can do that"
        about nothing they asked for."""
        first = re.split(r"(?<=[.!?])\s", tool.description.strip(), maxsplit=1)[0]
        said = re.sub(r"\s*\([^)]*\)", "", first).strip().rstrip(".!?")
        if not said:
            return "I can do that."
        return f"I can {said[0].lower()}{said[1:]}."

    @staticmethod
    def _article(wanted: str) -> str:
        return wanted if wanted.lower().startswith(("the ", "your ", "a ", "an ")) else f"the {wanted}"

    def _pick(self, tools: list[ToolSpec], request: str) -> ToolSpec | None:
        if len(tools) == 1:
            return tools[0]
        asked = _words(" ".join(content_words(request))) - _FILLER
        scored = sorted(
            ((len(asked & self._about(t)), t.name.startswith(_LOOKUPS), k, t) for k, t in enumerate(tools)),
            key=lambda x: (-x[0], x[1], x[2]),
        )
        if scored and scored[0][0] > 0:
            return scored[0][3]
        actions = [t for t in tools if not t.name.startswith(_LOOKUPS)]
        # Nothing named, but the desk sent the customer here and the agent has one thing to do
        # (its lookups only serve it): that is the tool, as for an agent holding one tool.
        return actions[0] if len(actions) == 1 else None

    def _about(self, tool: ToolSpec) -> set[str]:
        """What a tool is for: its name and description, and the sentences of the agent's own
        instructions that speak of it (a desk file says what its tools are for: "send a password
        reset link so they can secure the account")."""
        own = _words(f"{tool.name} {tool.description}") - _FILLER
        words = set(own)
        for sentence in re.split(r"(?<=[.!?])\s+|,\s+(?:and\s+)?", self.view.agent.instructions or ""):
            said = _words(sentence) - _FILLER
            if len(said & own) >= 2:
                words |= said
        return words

    def _fill(self, tool: ToolSpec, request: str) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        """The tool's parameters from the customer's facts; the required ones still missing."""
        args: dict[str, Any] = {}
        missing: list[tuple[str, str]] = []
        for name, desc in _required(tool):
            value = self._value(name, desc, request)
            if value is None:
                missing.append((name, desc))
            else:
                args[name] = value
        for name in _optional(tool):
            value = self._value(name, name, request, optional=True)
            if value is not None:
                args[name] = value
        return args, missing

    def _value(self, name: str, desc: str, request: str, optional: bool = False) -> Any:
        v, f = self.view, self.view.facts
        key = f"{name} {desc}".lower()
        if "order" in key:
            return f.order_ids[-1] if f.order_ids else None
        if "invoice" in key:
            return f.invoice_ids[-1] if f.invoice_ids else None
        if "email" in key:
            email = f.emails[-1] if f.emails else v.context.get("customer_email")
            # A parameter that takes either ("customer id or the account's email address") is
            # filled by whichever the customer gave: "account CUS-1020 - a login i didn't do".
            if email is not None or not ("customer" in key or "account" in key):
                return email
        if "customer" in key or "account" in key:
            return v.context.get("customer_id") or (f.customer_ids[-1] if f.customer_ids else None) or (f.emails[-1] if f.emails else None)
        if "amount" in key or "price" in key:
            return f.amounts[-1] if f.amounts else None
        if "date" in key:
            dates = f.iso_dates()
            return dates[-1] if dates else None
        if optional:
            return None
        if any(w in key for w in ("reason", "why", "description", "summary", "details", "note", "problem", "issue")):
            # The customer's own words are the reason: the message that made the request.
            return request[:300] if request.strip() else None
        return None

    def _report(self):
        """Say what the tool this agent called this turn did, from its result alone."""
        v = self.view
        mine = [t for t in v.turn_tools if t.name not in _ASIDE and t.agent == v.agent.name]
        if not mine or not mine[-1].done:
            return None
        last = mine[-1]
        what = last.name.replace("_", " ")
        if last.is_error:
            if last.reason is None:  # the engine failed the call: its words are not the customer's
                return self.step.answer(f"I couldn't {what}: {ON_OUR_SIDE}. A member of our staff can look into it.")
            return self.step.answer(f"I couldn't {what}: {last.reason}. Could you check the details?")
        self.step.resolved = True
        if isinstance(last.output, dict):
            facts = "; ".join(f"{k.replace('_', ' ')}: {val}" for k, val in last.output.items() if isinstance(val, (str, int, float)))
            return self.step.answer(f"Done ({what}). {facts}." if facts else f"Done ({what}).")
        return self.step.answer(f"Done ({what}): {clip_words(str(last.output), 300)}")
