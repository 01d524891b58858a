"""Who plays a tau2 task besides tau2 itself.

- `GoldProvider` and `NoopProvider` are model providers for the desk that need no model: the
  first calls the task's gold actions in order (handing off to whichever agent holds the next
  tool), the second answers without acting.
- `scripted_customer()` is a tau2 user that opens with the task's reason for calling and then
  ends the conversation: gold and no-op runs need no customer model either. In a gold run it
  also makes the task's own gold calls on the customer's device (tau2 telecom), in their turn,
  and answers "yes" to each offer the desk's confirmation gate makes (the desk reads that text
  with its one reader, as it reads any customer's).
- `recording()` wraps any tau2 user so each call it makes on its own device, with tau2's
  result, is stored in the desk session as a `customer_action` notice (data the agents never
  see: tau2's agent does not see them either; the scoring gives them back to tau2).
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
from supportdesk.items import Confirmation, Decline, Message, Notice, Offer, ToolCall

NOOP_REPLY = "Thank you for reaching out. I am not able to act on this request."
GOLD_DONE = "All done."
# What the gold agent says when the next gold action is the customer's, and what the scripted
# customer answers once it made its calls.
CUSTOMER_TURN = "Please do this on your device:"
CUSTOMER_DID_IT = "I did that on my phone."
# What the gold run's scripted customer answers an offer of the desk's confirmation gate.
CUSTOMER_YES = "yes"


class BenchTask:
    """The task a scripted provider is playing now (set by the run before each trial), and how
    many of its gold calls on the customer's device the scripted customer made so far."""

    def __init__(self) -> None:
        self.task: Any = None
        self.customer_calls = 0
        # The agent's gold calls made when the gold agent last spoke (it counts them in the log).
        self.agent_calls = 0
        # Whether the desk's last turn ended on an offer waiting for the customer's answer.
        self.offer_open = False

    def start(self, task: Any) -> None:
        self.task, self.customer_calls, self.agent_calls, self.offer_open = task, 0, 0, False

    def all_gold(self) -> list[Any]:
        """Every gold action of the task, the agent's and the customer's, in order."""
        criteria = self.task.evaluation_criteria if self.task is not None else None
        return list(criteria.actions or []) if criteria else []

    def next_gold(self, agent_calls: int) -> Any | None:
        """The first gold action not yet made, given how many of the agent's gold calls were made
        (the customer's are counted here), or None when all are made."""
        agent_left, customer_left = agent_calls, self.customer_calls
        for action in self.all_gold():
            if action.requestor == "user":
                if customer_left == 0:
                    return action
                customer_left -= 1
            else:
                if agent_left == 0:
                    return action
                agent_left -= 1
        return None

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
        # How far the replay got is the number of domain calls already in the log (and the
        # customer's own gold calls, counted by the scripted customer); a call the gate held as
        # an offer did not run (its run, on the customer's yes, is a call of its own).
        offered = {item.call_id for item in request.history if isinstance(item, Offer)}
        done = sum(
            1 for item in request.history
            if isinstance(item, ToolCall) and item.name in self.domain_tools and item.call_id not in offered
        )
        self.current.agent_calls = done
        action = self.current.next_gold(done)
        if action is None:
            yield Answer(" ".join([GOLD_DONE, *self.current.communicate()]))
            return
        if action.requestor == "user":  # the customer's turn to act on their device
            yield Answer(f"{CUSTOMER_TURN} {action.name}.")
            return
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


def scripted_customer(task: Any, gold: BenchTask | None = None) -> Any:
    """A tau2 user that states the task's reason for calling once, then stops; given `gold`, it
    first makes the task's gold calls on its device whenever they are next (one per message)."""
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
            if spoken == 0:
                reply = message.UserMessage(role="user", content=reason_for_call(task))
            elif gold is not None and gold.offer_open:  # the desk asks before a gold write: yes
                reply = message.UserMessage(role="user", content=CUSTOMER_YES)
            elif gold is not None and (action := gold.next_gold(gold.agent_calls)) is not None and action.requestor == "user":
                n = gold.customer_calls
                gold.customer_calls += 1
                call = message.ToolCall(
                    id=f"customer_{n}", name=action.name, arguments=dict(action.arguments), requestor="user"
                )
                reply = message.UserMessage(role="user", tool_calls=[call])
            elif gold is not None and _is_tool_result(incoming):
                reply = message.UserMessage(role="user", content=CUSTOMER_DID_IT)
            else:
                reply = message.UserMessage(role="user", content=base.STOP)
            state.messages.append(reply)
            return reply, state

        @classmethod
        def is_stop(cls, msg: Any) -> bool:
            return bool(msg.content) and base.STOP in msg.content

        def set_seed(self, seed: int) -> None:
            return None

    return ScriptedCustomer()


def _is_tool_result(incoming: Any) -> bool:
    return getattr(incoming, "role", None) == "tool"


def recording(customer: Any, store_actions: Any) -> Any:
    """`customer` (a tau2 user) whose calls on its own device are handed, each with tau2's
    result, to `store_actions(list of (call, result))` before it speaks again."""

    class Recording:
        def __init__(self) -> None:
            self.pending: dict[str, Any] = {}

        def get_init_state(self, message_history: Any = None) -> Any:
            return customer.get_init_state(message_history)

        def generate_next_message(self, incoming: Any, state: Any) -> Any:
            results = getattr(incoming, "tool_messages", None) or ([incoming] if _is_tool_result(incoming) else [])
            done = [(self.pending.pop(r.id), r) for r in results if r.id in self.pending]
            if done:
                store_actions(done)
            reply, state = customer.generate_next_message(incoming, state)
            for call in getattr(reply, "tool_calls", None) or []:
                self.pending[call.id] = call
            return reply, state

        def is_stop(self, msg: Any) -> bool:
            return bool(customer.is_stop(msg))

        def stop(self, message: Any = None, state: Any = None) -> None:
            stop = getattr(customer, "stop", None)
            if stop is not None:
                stop(message, state)

        def set_seed(self, seed: int) -> None:
            customer.set_seed(seed)

    return Recording()


class DeskEnded(Exception):
    """The desk's turn ended without a reply to the customer (a limit or a provider error)."""

    def __init__(self, notice: Notice | None):
        self.notice = notice
        super().__init__(notice.text if notice is not None else "the desk did not answer")


# What the desk agent sends when its turn ended without a reply: tau2 then ends the run.
DESK_STOP = "###STOP###"


def desk_agent(runner: Runner, session_id: str, loop: asyncio.AbstractEventLoop, current: BenchTask | None = None) -> Any:
    """A tau2 agent whose every reply is one desk turn on `session_id` (noting in `current`
    whether the turn ended on an offer waiting for the customer's yes).

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
            offer_open = False
            async for event in runner.send(session_id, text):
                if isinstance(event, Appended):
                    item = event.item
                    if isinstance(item, Offer | Confirmation | Decline):
                        offer_open = isinstance(item, Offer)
                    if isinstance(item, Message) and item.role == "agent":
                        reply = item.text
                    elif isinstance(item, Notice) and item.notice_kind in ("limit", "provider_error"):
                        self.ended = item
            if current is not None:
                current.offer_open = offer_open
            return None if self.ended is not None else (reply or "(no reply)")

        @classmethod
        def is_stop(cls, msg: Any) -> bool:
            return bool(msg.content) and DESK_STOP in msg.content

        def stop(self, message: Any = None, state: Any = None) -> None:
            return None

        def set_seed(self, seed: int) -> None:
            return None

    return DeskAgent()
