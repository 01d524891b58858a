"""Each tool of a tau2 domain as a desk tool.

The tool's own pydantic parameters model validates the arguments, the call goes to the tau2
environment of the task being run, and the result is stored exactly as tau2 returns it (its
evaluator replays every stored call and compares the results character for character).

What tau2 replays is what reached its environment, so the slot keeps each call it sent there
(id, name and the arguments as sent: validated, so an argument the tool does not take is not
among them). A call the desk refused before the slot (arguments that do not validate, a tool
the agent does not hold, a veto, a call waiting for a confirmation or an approval) never
reached tau2 and is never replayed.

Every tool tau2 types as a write waits for the customer's yes (the desk's confirmation gate,
issue 33): called, it becomes an offer naming the tool's verb and every argument value; the
customer's next message is read by the desk's one reader (engine/confirmation.py), and a yes
runs the offered call exactly, under the call id `<offer id>-yes` (the id it reaches tau2 with,
kept in the slot). Reads and tau2's other kinds never wait. A desk file's `[confirm]` table,
or `bench tau2 --no-gate`, switches the gate off per tool.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from supportdesk.engine.tools import Tool, ToolContext, ToolOutput, ToolRegistry
from supportdesk.items import Notice

HUMAN_TOOL = "transfer_to_human_agents"
# tau2's kind for a tool that changes its environment (`ToolType.WRITE`).
WRITE = "write"


class EnvironmentSlot:
    """The environment of the task running now; tasks run one at a time, each on a fresh one."""

    def __init__(self) -> None:
        self.environment: Any = None
        # Each call sent to the environment of the task running now, in order:
        # [id, name, arguments as sent, digest of tau2's answer].
        self.reached: list[list[Any]] = []

    def start(self, environment: Any) -> None:
        self.environment, self.reached = environment, []

    def call(self, call_id: str, name: str, arguments: dict[str, Any]) -> Any:
        from supportdesk.bench.tau2env import tau2

        if self.environment is None:
            raise RuntimeError("no tau2 task is running")
        call = tau2().message.ToolCall(id=call_id, name=name, arguments=arguments, requestor="assistant")
        response = self.environment.get_response(call)
        self.reached.append([call_id, name, dict(arguments), answer_digest(response.content)])
        return response


def answer_digest(content: Any) -> str:
    """A short digest of what tau2 answered a call: it tells the stored result of the call that
    reached tau2 from a result the desk wrote under the same call id (a model that reuses call
    ids, a call held and run later)."""
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _describe(tool: Any) -> str:
    return str(tool.openai_schema["function"]["description"])


def domain_tools(environment: Any, slot: EnvironmentSlot) -> ToolRegistry:
    """A registry holding the domain's tools (read from `environment`), bound to `slot`."""
    registry = ToolRegistry()
    kinds = tool_kinds(environment)
    for name, tool in sorted(environment.tools.get_tools().items()):
        # A write changes the customer's account (tau2's tools carry no `amount` the desk's money
        # figures could count): it waits for their yes. Every other kind never waits.
        writes = kinds.get(name) == WRITE
        registry.add(Tool(
            name, _describe(tool), tool.params, _runner(name, slot),
            effect="account" if writes else "reads", confirm="customer" if writes else "none",
        ))
    return registry


def write_tools(environment: Any) -> list[str]:
    """The domain's tools tau2 types as writes: the ones the desk's gate holds for a yes."""
    return sorted(name for name, kind in tool_kinds(environment).items() if kind == WRITE)


def tool_kinds(environment: Any) -> dict[str, str]:
    """Tool name -> tau2's own kind for it (read, write, think, generic)."""
    kit = environment.tools
    return {name: kit.tool_type(name).value for name in kit.get_tools()}


def _runner(name: str, slot: EnvironmentSlot) -> Any:
    def run(ctx: ToolContext, args: Any) -> ToolOutput:
        response = slot.call(ctx.call_id, name, args.model_dump(exclude_unset=True))
        notices = []
        if name == HUMAN_TOOL and not response.error:
            notices.append(
                Notice(notice_kind="human_requested", text="The agent transferred the customer to a human agent.")
            )
        return ToolOutput(response.content, is_error=bool(response.error), notices=notices)

    return run
