"""Who plays a tau2 task besides tau2 itself.

- `GoldProvider` and `NoopProvider` are model providers for the desk that need no model: the
  first calls the task's gold actions in order (handing off to whichever agent holds the next
  tool), the second answers without acting.
- `scripted_customer()` is a tau2 user that opens with the task's reason for calling and then
  ends the conversation: gold and no-op runs need no customer model either.
- `desk_agent()` is the tau2 agent that puts the desk behind tau2's orchestrator: each customer
  message becomes one desk turn (agents, tools, handoffs), and the orchestrator gets the reply.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from supportdesk.engine.events import Appended
from supportdesk.engine.protocol import (
    Action,
    Answer,
    CallTools,
    RequestedCall,
    StepRequest,
    TextDelta,
    Transfer,
)
from supportdesk.engine.runner import Runner
from supportdesk.items import Message, Notice, ToolCall

NOOP_REPLY = "Thank you for reaching out. I am not able to act on this request."
GOLD_DONE = "All done."


class BenchTask:
    """The task a scripted provider is playing now (set by the run before each trial)."""

    def __init__(self) -> None:
        self.task: Any = None

    def gold_actions(self) -> list[Any]:
        criteria = self.task.evaluation_criteria if self.task is not None else None
        return [a for a in (criteria.actions or []) if a.requestor == "assistant"] if criteria else []

    def communicate(self) -> list[str]:
        criteria = self.task.evaluation_criteria if self.task is not None else None
        return list(criteria.communicate_info or []) if criteria else []


class GoldProvider:
    """Replays the task's gold actions through the desk, then says what the task wants said."""

    name = "tau2-gold"

    def __init__(self, current: BenchTask, domain_tools: set[str]):
        self.current = current
        self.domain_tools = domain_tools

    async def stream(self, request: StepRequest) -> AsyncIterator[TextDelta | Action]:
        gold = self.current.gold_actions()
        # Stateless: how far the replay got is the number of domain calls already in the log.
        done = sum(1 for item in request.history if isinstance(item, ToolCall) and item.name in self.domain_tools)
        if done >= len(gold):
            yield Answer(" ".join([GOLD_DONE, *self.current.communicate()]))
            return
        action = gold[done]
        if action.name in request.agent.tools:
            yield CallTools([RequestedCall(f"gold_{done}", action.name, dict(action.arguments))])
            return
        for target in request.handoff_targets:
            if action.name in target.tools:
                yield Transfer(target.name, f"{action.name} is {target.title}'s to run")
                return
        yield Answer(f"No agent I can reach holds {action.name}.")

    async def aclose(self) -> None:
        return None


class NoopProvider:
    """Answers every message without calling a tool: the floor a do-nothing agent scores."""

    name = "tau2-noop"

    async def stream(self, request: StepRequest) -> AsyncIterator[TextDelta | Action]:
        yield Answer(NOOP_REPLY)

    async def aclose(self) -> None:
        return None


def reason_for_call(task: Any) -> str:
    instructions = task.user_scenario.instructions
    reason = getattr(instructions, "reason_for_call", None)
    return str(reason if reason else instructions)


def scripted_customer(task: Any) -> Any:
    """A tau2 user that states the task's reason for calling once, then stops."""
    from supportdesk.bench.tau2env import tau2

    t = tau2()
    # tau2's modules, loaded at run time (the optional extra): untyped to the checker.
    base: Any = t.user_base
    message: Any = t.message

    class ScriptedCustomer(base.BaseUser):
        def get_init_state(self, message_history: Any = None) -> Any:
            return base.UserState(system_messages=[], messages=list(message_history or []))

        def generate_next_message(self, incoming: Any, state: Any) -> Any:
            spoken = sum(1 for m in state.messages if isinstance(m, message.UserMessage))
            text = reason_for_call(task) if spoken == 0 else base.STOP
            reply = message.UserMessage(role="user", content=text)
            state.messages.append(reply)
            return reply, state

        @classmethod
        def is_stop(cls, msg: Any) -> bool:
            return bool(msg.content) and base.STOP in msg.content

        def set_seed(self, seed: int) -> None:
            return None

    return ScriptedCustomer()


class DeskEnded(Exception):
    """The desk's turn ended without a reply to the customer (a limit or a provider error)."""

    def __init__(self, notice: Notice | None):
        self.notice = notice
        super().__init__(notice.text if notice is not None else "the desk did not answer")


# What the desk agent sends when its turn ended without a reply: tau2 then ends the run.
DESK_STOP = "###STOP###"


def desk_agent(runner: Runner, session_id: str, loop: asyncio.AbstractEventLoop) -> Any:
    """A tau2 agent whose every reply is one desk turn on `session_id`.

    tau2's orchestrator is synchronous and runs in a worker thread; the desk's turn runs on the
    event loop that owns the store, and the thread waits for it."""
    from supportdesk.bench.tau2env import tau2

    t = tau2()
    message = t.message

    class DeskAgent:
        ended: Notice | None = None
        stopped = False

        def get_init_state(self, message_history: Any = None) -> Any:
            return None

        def generate_next_message(self, incoming: Any, state: Any) -> Any:
            text = getattr(incoming, "content", None) or ""
            future = asyncio.run_coroutine_threadsafe(self._turn(text), loop)
            reply = future.result()
            if reply is None:
                self.stopped = True
                return message.AssistantMessage(role="assistant", content=DESK_STOP), state
            return message.AssistantMessage(role="assistant", content=reply), state

        async def _turn(self, text: str) -> str | None:
            reply: str | None = None
            async for event in runner.send(session_id, text):
                if isinstance(event, Appended):
                    item = event.item
                    if isinstance(item, Message) and item.role == "agent":
                        reply = item.text
                    elif isinstance(item, Notice) and item.notice_kind in ("limit", "provider_error"):
                        self.ended = item
            return None if self.ended is not None else (reply or "(no reply)")

        @classmethod
        def is_stop(cls, msg: Any) -> bool:
            return bool(msg.content) and DESK_STOP in msg.content

        def stop(self, message: Any = None, state: Any = None) -> None:
            return None

        def set_seed(self, seed: int) -> None:
            return None

    return DeskAgent()
