"""A stored desk session scored by tau2's own evaluator.

The session log is turned back into tau2 messages: customer messages, agent replies, each
call that reached tau2's environment (with the arguments it was sent) followed by its stored
result, and each call the customer made on their own device (a `customer_action` notice, tau2
telecom) with its result. Handoffs, context writes, notices, calls the desk refused before they
reached tau2 and any call that is not one of the domain's tools are left out: tau2 replays every
call it is given in a fresh environment, and a call that never reached it changed nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from supportdesk.bench.tau2env import tau2
from supportdesk.bench.tools import answer_digest
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


def tau2_messages(items: list[Item], reached: list[list[Any]]) -> list[Any]:
    """The tau2 trajectory held by a stored session (oldest first).

    `reached` is every call of the agent's that reached tau2's environment, in order, as
    [id, name, arguments as sent, digest of tau2's answer] (`EnvironmentSlot.reached`, stored
    with the score): each is placed where its call is in the log whose stored result is tau2's
    answer, with that result. A call in the log that
    is not there (refused by the desk before it reached tau2, or not a domain tool) is left
    out: tau2 replays every call it is given in a fresh environment."""
    m = tau2().message
    waiting = list(reached)
    out: list[Any] = []
    for at, item in enumerate(items):
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
        elif isinstance(item, ToolCall) and waiting and waiting[0][0] == item.call_id and waiting[0][1] == item.name:
            result = _result_after(items, at, item.call_id)
            if result is None or (len(waiting[0]) > 3 and answer_digest(result.output) != waiting[0][3]):
                continue  # the same id on a call that did not reach tau2 (refused, or held for later)
            call_id, name, arguments = waiting.pop(0)[:3]
            call = m.ToolCall(id=call_id, name=name, arguments=arguments, requestor="assistant")
            out.append(m.AssistantMessage(role="assistant", tool_calls=[call]))
            out.append(
                m.ToolMessage(id=call_id, role="tool", content=result.output, requestor="assistant", error=result.is_error)
            )
    if waiting:
        raise ValueError(f"{len(waiting)} calls reached tau2's environment but are not in the log ({waiting[0][1]} first)")
    return out


def _result_after(items: list[Item], at: int, call_id: str) -> ToolResult | None:
    """The first result stored for the call at `at` (call ids are the model's: they may repeat)."""
    for item in items[at + 1 :]:
        if isinstance(item, ToolResult) and item.call_id == call_id:
            return item
    return None


def score(domain: str, task: Any, items: list[Item], reached: list[list[Any]], termination: str) -> Score:
    """Score a stored session with tau2's evaluator (all of its checks for the task's basis)."""
    t = tau2()
    sim = t.simulation
    if termination not in (sim.TerminationReason.USER_STOP.value, sim.TerminationReason.AGENT_STOP.value):
        return Score(0.0, ENDED_BY_LIMIT, termination)
    try:
        messages = tau2_messages(items, reached)
    except ValueError as exc:  # the log lost a call that changed tau2's environment
        return Score(0.0, REPLAY_FAILED, str(exc))
    run = sim.SimulationRun(
        id="supportdesk",
        task_id=task.id,
        start_time="",
        end_time="",
        duration=0.0,
        termination_reason=termination,
        messages=messages,
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
