"""The embedded offline model: a deterministic support team that needs no network.

It speaks the same protocol as a real LLM provider. What an agent does follows from its
role in the desk, not its name: the entry agent routes (triage); the others act on the
tools they hold and their level (see specialist.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator

from supportdesk import patterns, readers
from supportdesk.config import AgentConfig, DeskConfig
from supportdesk.items import Message
from supportdesk.engine.protocol import Action, Answer, CallTools, StepRequest, TextDelta, Transfer
from supportdesk.models.offline import triage
from supportdesk.models.offline.router import Router
from supportdesk.models.offline.specialist import Specialist, skills_of
from supportdesk.models.offline.view import View

# The most of one message the embedded model reads: its first 2,000 characters (a support
# request says what it needs in far fewer). Every step it takes is linear in what it reads, and
# this bounds what that is, however much a channel accepts (16 KB on the web, 1 MB from Chatwoot).
MAX_READ_CHARS = 2_000


# The most message text a step decided on the event loop reads: about 1 ms of work here (roughly
# 2 µs a character), well under the thread switch interval. More than that goes to a thread.
INLINE_READ_CHARS = 500


def reads_little(request: StepRequest) -> bool:
    """Whether the step's messages total at most INLINE_READ_CHARS characters."""
    total = 0
    for item in request.history:
        if isinstance(item, Message):
            total += len(item.text)
            if total > INLINE_READ_CHARS:
                return False
    return True


def capped(request: StepRequest) -> StepRequest:
    """`request` with every message cut to MAX_READ_CHARS (the store keeps the whole text)."""
    if not any(isinstance(i, Message) and len(i.text) > MAX_READ_CHARS for i in request.history):
        return request
    return _capped(request)


def _capped(request: StepRequest) -> StepRequest:
    history = [
        dataclasses.replace(i, text=i.text[:MAX_READ_CHARS]) if isinstance(i, Message) and len(i.text) > MAX_READ_CHARS else i
        for i in request.history
    ]
    return dataclasses.replace(request, history=history)


class OfflineModel:
    name = "offline"
    # Its steps run in this process and take milliseconds: a turn may hold a handoff back for
    # the next step's append (engine/runner.py `Runner._may_hold`), which comes at once.
    instant_steps = True

    def __init__(self, config: DeskConfig, *, use_disk_cache: bool = True):
        self.config = config
        self._use_disk_cache = use_disk_cache
        self._routers: dict[tuple[str, ...], Router] = {}
        # Each agent's router and whether it routes, by desk: what depends only on the desk is
        # worked out once per desk, not every step. (A config is not hashable; it is kept beside
        # its id, so a new desk that reuses a freed id is not taken for the old one; the agent's
        # handoffs are part of the key, so a desk changed in place is worked out again.)
        self._read_to_size: StepRequest | None = None
        self._by_desk: dict[int, tuple[DeskConfig, dict[tuple[str, tuple[str, ...]], tuple[Router | None, bool]]]] = {}

    def router_for(self, desk: DeskConfig, agent: AgentConfig) -> Router | None:
        """The router over `agent`'s specialist handoff targets (trained once, then cached)."""
        return self._planned(desk, agent)[0]

    def _planned(self, desk: DeskConfig, agent: AgentConfig) -> tuple[Router | None, bool]:
        """`agent`'s router on `desk` and whether its steps route (the entry agent, or an agent
        with handoffs and no skill of its own), kept per desk."""
        known = self._by_desk.get(id(desk))
        if known is None or known[0] is not desk:
            if len(self._by_desk) >= 8:
                self._by_desk.clear()
            known = self._by_desk[id(desk)] = (desk, {})
        key = (agent.name, tuple(agent.handoffs))
        plan = known[1].get(key)
        if plan is None:
            plan = known[1][key] = (self._router(desk, agent), agent.name == desk.desk.entry or (not skills_of(agent) and bool(agent.handoffs)))
        return plan

    def _router(self, desk: DeskConfig, agent: AgentConfig) -> Router | None:
        targets = [desk.agents[n] for n in agent.handoffs if n in desk.agents and skills_of(desk.agents[n])]
        if not targets:
            return None
        key = (desk.desk.name, *sorted(a.name for a in targets))
        router = self._routers.get(key)
        if router is None:
            router = Router(targets, use_disk_cache=self._use_disk_cache, desk_name=desk.desk.name)
            self._routers[key] = router
        return router

    def warm_up(self) -> None:
        """The first message's one-off work done now: the entry agent's router trained, the
        readers built, the rules compiled (`Runner.warm`: the TUI's thread after its first page,
        `serve` before it listens). Without it a first message waited ~0.7 s for them."""
        self.router_for(self.config, self.config.entry)
        readers.warm()
        patterns.compile_waiting()

    def decide(self, request: StepRequest) -> Action:
        # (A request `stream` has just cut to size is not looked over again.)
        if request is not self._read_to_size:
            request = capped(request)
        view = View(request)
        desk = request.desk
        router, routes = self._planned(desk, request.agent)
        if routes and router is not None:
            return triage.decide(view, router)
        # Specialists tell topics apart with the entry agent's router.
        return Specialist(view, self.router_for(desk, desk.entry)).decide()

    async def stream(self, request: StepRequest) -> AsyncIterator[TextDelta | Action]:
        # CPU-bound: a step that reads much runs off the event loop, so a server's other customers
        # and /healthz are answered meanwhile. A short read (the usual support message) costs about
        # a millisecond, under the interpreter's thread switch interval (5 ms), so on a thread it
        # would hold the loop just as long and add a hop to the thread and back: it runs here.
        # One pass over the messages says both whether the step reads little and whether any
        # message is to be cut (MAX_READ_CHARS), rather than one pass for each.
        total, cut = 0, False
        for item in request.history:
            if isinstance(item, Message):
                total += len(item.text)
                cut = cut or len(item.text) > MAX_READ_CHARS
        if cut:
            request = _capped(request)
        self._read_to_size = request
        if total <= INLINE_READ_CHARS:
            action = self.decide(request)
        else:
            action = await asyncio.to_thread(self.decide, request)
        self._read_to_size = None  # (the step's request is not kept past it)
        # (A step that calls tools may say something too: the question of an offer it makes.)
        text = action.text if isinstance(action, (Answer, CallTools, Transfer)) else ""
        # The whole text is known at once: one delta, not one per word. Each delta is an event
        # through the runner and, when served, one per open stream of the conversation.
        if text:
            yield TextDelta(text)
        yield action

    async def aclose(self) -> None:
        return None
