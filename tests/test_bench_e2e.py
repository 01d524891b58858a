"""End to end: the desk's provider and tau2's customer simulator both talk to one scripted
OpenAI-compatible server on 127.0.0.1, which plays a retail task's gold conversation; tau2's
orchestrator drives it and tau2's evaluator scores the stored session 1.0."""

from __future__ import annotations

import asyncio
import json
import random

import pytest

from tests.bench_support import require_tau2, tau2_agent_reward

require_tau2()

from fake_llm_server import Complete, FakeLLMServer, text_stream, tool_stream  # noqa: E402
from supportdesk.bench.players import reason_for_call  # noqa: E402
from supportdesk.bench.run import BenchOptions, run_tau2  # noqa: E402
from supportdesk.bench.tau2env import load_domain  # noqa: E402
from supportdesk.items import Confirmation, Message, Offer, ToolCall  # noqa: E402
from supportdesk.store import SessionStore  # noqa: E402

TASK = "17"
STOP = "###STOP###"


class GoldConversation:
    """Answers the desk with the task's gold calls, one per step, then the closing reply; answers
    the customer simulator with the task's reason for calling, "yes" to each question the desk's
    confirmation gate asks (as a customer model reads it), then the stop word."""

    def __init__(self, task, before=()):
        self.task = task
        self.gold = task.evaluation_criteria.actions
        # (name, arguments as JSON text) the model calls before the gold ones.
        self.calls = [*before, *[(a.name, json.dumps(a.arguments)) for a in self.gold]]
        self.customer_requests = 0
        self.desk_requests = 0

    def __call__(self, body):
        messages = body["messages"]
        if "<scenario>" in messages[0]["content"]:
            self.customer_requests += 1
            said = sum(1 for m in messages if m["role"] == "assistant")
            # (tau2 shows the simulator the desk's messages as the other side's: "user")
            asked = messages[-1]["role"] == "user" and "Please answer yes or no" in (messages[-1]["content"] or "")
            text = reason_for_call(self.task) if said == 0 else "yes" if asked else STOP
            return Complete({"content": text})
        self.desk_requests += 1
        done = sum(1 for m in messages if m["role"] == "tool")
        if done < len(self.calls):
            reply = tool_stream([self.calls[done]])
        else:
            reply = text_stream("Your order will now ship to the new address.")
        if not body.get("stream"):
            raise AssertionError("the desk's provider streams")
        return reply


def test_a_scripted_server_plays_the_gold_conversation_and_scores_one(tmp_path):
    task = load_domain("retail", "base", [TASK]).tasks[0]
    script = GoldConversation(task)
    with FakeLLMServer() as server:
        server.push(*[script] * 80)
        # Only [model]: that is all a generated desk takes from the file (docs/bench.md).
        config = tmp_path / "model.toml"
        config.write_text(
            '[model]\nprovider = "openai"\n'
            f'base_url = "{server.url}"\nmodel = "fake-model"\nmax_retries = 0\n'
        )
        opts = BenchOptions(
            domain="retail",
            tasks=[TASK],
            agent="desk",
            desk="single",
            config=str(config),
            user_model="fake-user",
            user_base_url=server.url,
            db=str(tmp_path / "bench.db"),
            trials=2,
        )
        report = asyncio.run(run_tau2(opts))
        paths = set(server.paths)
        to_user = [r for r in server.requests if "<scenario>" in r["messages"][0]["content"]]
        to_desk = [r for r in server.requests if "<scenario>" not in r["messages"][0]["content"]]
    result, second = report.results
    assert (result.reward, result.failure) == (1.0, ""), result
    assert (second.trial, second.reward) == (2, 1.0)
    assert paths == {"/v1/chat/completions"}
    assert {r["model"] for r in to_user} == {"fake-user"}
    # Per trial: the reason, "yes" to the offer of the write, the stop word.
    assert script.customer_requests == 6 and script.desk_requests == 2 * (len(script.gold) + 1)
    # Each trial's customer gets its own seed, drawn as tau2's runner draws them from its base seed.
    rng = random.Random(300)
    drawn = [rng.randint(0, 1000000) for _ in range(2)]
    assert [r.get("seed") for r in to_user] == [drawn[0]] * 3 + [drawn[1]] * 3
    assert report.seeds == drawn and drawn[0] != drawn[1]
    # The desk's model runs at tau2's agent temperature: the file set none.
    assert {r.get("temperature") for r in to_desk} == {0.0}
    assert any("temperature 0, tau2's agent's" in note for note in report.notes)

    async def stored():
        async with await SessionStore.open(tmp_path / "bench.db") as store:
            return await store.range(result.session_id, 1, await store.last_seq(result.session_id))

    items = asyncio.run(stored())
    customer = [i.text for i in items if isinstance(i, Message) and i.role == "customer"]
    # The simulator's text answer, read by the desk's one reader, ran the offered write once.
    assert customer == [reason_for_call(task), "yes"]
    *reads, write = [a.name for a in script.gold]
    assert [i.name for i in items if isinstance(i, ToolCall)] == [*reads, write, write]
    [offer] = [i for i in items if isinstance(i, Offer)]
    [confirmed] = [i for i in items if isinstance(i, Confirmation)]
    assert (offer.tool, confirmed.offer_id, confirmed.source) == (write, offer.offer_id, "text")


def _dead_url():
    """The address of a port on 127.0.0.1 nothing listens on: every connection is refused."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.mark.parametrize("down", ["customer simulator", "desk model"])
def test_a_server_that_fails_fails_the_run_instead_of_scoring_it(tmp_path, capsys, down):
    from supportdesk.cli import main

    task = load_domain("retail", "base", [TASK]).tasks[0]
    dead = _dead_url()
    with FakeLLMServer() as server:
        server.push(*[GoldConversation(task)] * 10)
        desk_url, user_url = (server.url, dead) if down == "customer simulator" else (dead, server.url)
        config = tmp_path / "model.toml"
        config.write_text(f'[model]\nprovider = "openai"\nbase_url = "{desk_url}"\nmodel = "m"\nmax_retries = 0\n')
        db = str(tmp_path / "bench.db")
        code = main([
            "bench", "tau2", "--domain", "retail", "--tasks", f"{TASK},5", "--config", str(config),
            "--user-model", "fake-user", "--user-base-url", user_url, "--db", db,
        ])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    last = err.strip().splitlines()[-1]
    assert "failed, not scored: task 17 trial 1:" in last and down.split()[0] in last, last
    assert "task 5" not in err  # the run stopped at the first failure
    assert main(["bench", "list", "--db", db, "--json"]) == 0
    [listed] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert listed["status"] == "failed" and listed["pass1"] is None and listed["tasks"] == 0
    assert main(["bench", "list", "--db", db]) == 0
    assert "FAILED: task 17 trial 1" in capsys.readouterr().out


def test_an_api_key_variable_named_but_unset_is_refused_before_tau2_loads(tmp_path, capsys, monkeypatch):
    from supportdesk.bench import tau2env
    from supportdesk.cli import main

    def loading(*_a, **_k):
        raise AssertionError("tau2 was loaded")

    monkeypatch.setattr(tau2env, "_import_tau2", loading)
    monkeypatch.delenv("SD_TEST_UNSET_KEY", raising=False)
    config = tmp_path / "model.toml"
    config.write_text('[model]\nprovider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n')
    argv = ["bench", "tau2", "--domain", "retail", "--config", str(config), "--db", str(tmp_path / "b.db"),
            "--user-model", "u", "--user-base-url", "http://127.0.0.1:9/v1"]
    assert main([*argv, "--user-api-key-env", "SD_TEST_UNSET_KEY"]) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "--user-api-key-env names SD_TEST_UNSET_KEY, which is not set" in line
    config.write_text(config.read_text() + 'api_key_env = "SD_TEST_UNSET_KEY"\n')
    assert main(argv) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "model.api_key_env names SD_TEST_UNSET_KEY, which is not set" in line


def test_the_offline_model_is_refused_before_tau2_loads(tmp_path, capsys, monkeypatch):
    from supportdesk.bench import tau2env
    from supportdesk.cli import main

    def loading(*_a, **_k):
        raise AssertionError("tau2 was loaded")

    monkeypatch.setattr(tau2env, "_import_tau2", loading)
    config = tmp_path / "model.toml"
    config.write_text('[model]\nprovider = "offline"\n')
    argv = ["bench", "tau2", "--domain", "retail", "--config", str(config), "--db", str(tmp_path / "b.db")]
    assert main(argv) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert f"{config}: the embedded offline model knows only the demo desk's domain" in line


@pytest.mark.parametrize(
    "before",
    [
        [("get_order_details", "{}")],  # a required argument missing: the desk refuses it
        [("find_user_id_by_name_zip", json.dumps(  # an argument the tool does not take
            {"first_name": "Fatima", "last_name": "Johnson", "zip": "78712", "email": "fatima@example.com"}))],
    ],
)
def test_a_models_faulty_call_scores_what_tau2s_own_agent_scores_on_the_same_calls(tmp_path, before):
    task = load_domain("retail", "base", [TASK]).tasks[0]
    script = GoldConversation(task, before)
    with FakeLLMServer() as server:
        server.push(*[script] * 40)
        config = tmp_path / "model.toml"
        config.write_text(f'[model]\nprovider = "openai"\nbase_url = "{server.url}"\nmodel = "m"\nmax_retries = 0\n')
        opts = BenchOptions(domain="retail", tasks=[TASK], agent="desk", config=str(config), user_model="fake-user",
                            user_base_url=server.url, db=str(tmp_path / "bench.db"))
        [result] = asyncio.run(run_tau2(opts)).results
    theirs = tau2_agent_reward("retail", TASK, [(name, json.loads(args)) for name, args in script.calls])
    assert (result.reward, result.failure) == (theirs, "") and theirs == 1.0, result
