"""A stored desk session scored by tau2's own evaluator.

The session log is turned back into tau2 messages: customer messages, agent replies, each
call of a domain tool followed by its stored result, and each call the customer made on their
own device (a `customer_action` notice, tau2 telecom) with its result. Handoffs, context writes, notices and any
call that is not one of the domain's tools are left out: tau2 replays every call it is given
in a fresh environment and cannot replay ours.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from supportdesk.bench.tau2env import tau2
from supportdesk.items import Item, Message, Notice, ToolCall, ToolResult

# Why a task scored below 1, in the words the report and the bench screen use.
DB_DIFFERS = "database differs"
STATEMENT_MISSING = "a required statement missing"
ENDED_BY_LIMIT = "ended by a limit"
REPLAY_FAILED = "a stored result does not replay"
# tau2 telecom: the state the task asserts (the customer's phone, their line) does not hold.
DEVICE_DIFFERS = "an assertion on the environment failed"
ACTION_MISSING = "a required action missing"


@dataclass
class Score:
    reward: float
    # Empty when the reward is 1.0.
    failure: str = ""
    detail: str = ""
    missing_statements: list[str] = field(default_factory=list)


def tau2_messages(items: list[Item], domain_tools: set[str]) -> list[Any]:
    """The tau2 trajectory held by a stored session (oldest first)."""
    m = tau2().message
    results = {i.call_id: i for i in items if isinstance(i, ToolResult)}
    out: list[Any] = []
    for item in items:
        if isinstance(item, Notice) and item.notice_kind == "customer_action":
            done = item.data["customer_action"]  # the customer's own call on their device (telecom)
            call = m.ToolCall(id=done["call_id"], name=done["name"], arguments=done["arguments"], requestor="user")
            out.append(m.UserMessage(role="user", tool_calls=[call]))
            out.append(
                m.ToolMessage(
                    id=done["call_id"], role="tool", content=done["output"], requestor="user", error=done["is_error"]
                )
            )
        elif isinstance(item, Message):
            if item.role == "customer":
                out.append(m.UserMessage(role="user", content=item.text))
            elif item.role == "agent" and item.text:
                out.append(m.AssistantMessage(role="assistant", content=item.text))
        elif isinstance(item, ToolCall) and item.name in domain_tools:
            result = results.get(item.call_id)
            if result is None:
                continue  # a call that never ran changed nothing
            call = m.ToolCall(id=item.call_id, name=item.name, arguments=item.arguments, requestor="assistant")
            out.append(m.AssistantMessage(role="assistant", tool_calls=[call]))
            out.append(
                m.ToolMessage(
                    id=item.call_id, role="tool", content=result.output, requestor="assistant", error=result.is_error
                )
            )
    return out


def score(domain: str, task: Any, items: list[Item], domain_tools: set[str], termination: str) -> Score:
    """Score a stored session with tau2's evaluator (all of its checks for the task's basis)."""
    t = tau2()
    sim = t.simulation
    if termination not in (sim.TerminationReason.USER_STOP.value, sim.TerminationReason.AGENT_STOP.value):
        return Score(0.0, ENDED_BY_LIMIT, termination)
    run = sim.SimulationRun(
        id="supportdesk",
        task_id=task.id,
        start_time="",
        end_time="",
        duration=0.0,
        termination_reason=termination,
        messages=tau2_messages(items, domain_tools),
    )
    ev = t.evaluator
    try:
        info = ev.evaluate_simulation(run, task, ev.EvaluationType.ALL, False, domain)
    except ValueError as exc:  # tau2 refuses a trajectory whose stored results do not replay
        return Score(0.0, REPLAY_FAILED, str(exc).splitlines()[0])
    basis = {getattr(b, "value", str(b)) for b in (task.evaluation_criteria.reward_basis or [])}
    return _explain(info, basis)


def _explain(info: Any, basis: set[str]) -> Score:
    """Why the reward is below 1, from the checks the task's reward is based on."""
    reward = float(info.reward)
    if reward >= 1.0:
        return Score(reward)
    if "DB" in basis and info.db_check is not None and not info.db_check.db_match:
        return Score(reward, DB_DIFFERS, "the database the conversation left differs from the gold one")
    missing = [c.info for c in (info.communicate_checks or []) if not c.met]
    if "COMMUNICATE" in basis and missing:
        return Score(reward, STATEMENT_MISSING, "; ".join(missing), missing)
    failed = [c.env_assertion for c in (info.env_assertions or []) if not c.met]
    if "ENV_ASSERTION" in basis and failed:
        first = failed[0]
        return Score(reward, DEVICE_DIFFERS, f"{first.func_name}({json.dumps(first.arguments)}) does not hold")
    undone = [c.action for c in (info.action_checks or []) if not c.action_match]
    if "ACTION" in basis and undone:
        return Score(reward, ACTION_MISSING, f"{undone[0].name}({json.dumps(undone[0].arguments)})")
    return Score(reward, "below the task's bar", str(info.info or ""))
