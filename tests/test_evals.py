"""`supportdesk eval`: routing report and scripted conversations, through the real CLI."""

from __future__ import annotations

import json

import pytest

from supportdesk.cli import main
from supportdesk.commands.evals import RoutingReport, evaluate_conversations, evaluate_routing, read_jsonl, route_in_processes
from tests.conftest import REPO

ROWS = [
    {"text": "I was charged twice this month", "agent": "billing"},
    {"text": "please refund my last payment", "agent": "billing"},
    {"text": "I can't log in to my account", "agent": "technical"},
    {"text": "the app crashes when I open it", "agent": "technical"},
    {"text": "hello", "agent": "billing"},  # triage keeps a bare greeting
]


@pytest.fixture
def routing_file(tmp_path):
    path = tmp_path / "routing.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


async def test_routing_report(tmp_path):
    report = await evaluate_routing(ROWS, config=str(REPO / "agents.toml"))
    assert report.n == 5 and report.correct == 4
    assert report.confusion == {"billing": {"billing": 2, "triage": 1}, "technical": {"technical": 2}}
    per = report.per_agent()
    assert per["billing"] == {"precision": 1.0, "recall": pytest.approx(2 / 3, abs=1e-4), "support": 3}
    assert per["technical"]["precision"] == 1.0


def test_per_agent_precision():
    report = RoutingReport(4, 2, {"a": {"a": 1, "b": 1}, "b": {"b": 1, "a": 1}}, 1.0)
    assert report.per_agent()["a"] == {"precision": 0.5, "recall": 0.5, "support": 2}
    assert report.accuracy == 0.5


@pytest.mark.slow  # a process pool: the words tests/conftest.py looks for are inside supportdesk.commands.evals
def test_processes_give_the_same_answer():
    rows = ROWS * 220  # enough rows to be split across processes
    split = route_in_processes(rows, config=str(REPO / "agents.toml"), jobs=2)
    assert split.n == len(rows) and split.correct == 4 * 220
    assert split.confusion["billing"]["triage"] == 220


def test_cli_routing_json(routing_file, tmp_path, monkeypatch, capsys):
    user_db = tmp_path / "user" / "desk.db"
    monkeypatch.setenv("SUPPORTDESK_DB", str(user_db))
    code = main(["eval", "routing", str(routing_file), "--json", "--config", str(REPO / "agents.toml")])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"n", "accuracy", "per_agent", "confusion"}
    assert out["n"] == 5 and out["accuracy"] == 0.8
    # Never writes demo sessions into the user's database.
    assert not user_db.exists()


def test_cli_routing_text_and_db(routing_file, tmp_path, capsys):
    db = tmp_path / "eval.db"
    code = main(["eval", "routing", str(routing_file), "--db", str(db), "--config", str(REPO / "agents.toml")])
    assert code == 0
    out = capsys.readouterr().out
    assert "accuracy 80.00%" in out and "confusion" in out and "precision" in out
    assert db.exists()  # with --db the sessions are kept for inspection
    code = main(["sessions", "list", "--db", str(db), "--json"])
    assert code == 0 and len(capsys.readouterr().out.strip().splitlines()) == 5


def test_cli_bad_file(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "x", "agent": "billing"}\nnot json\n', encoding="utf-8")
    assert main(["eval", "routing", str(bad)]) == 2
    assert "bad.jsonl:2: not valid JSON" in capsys.readouterr().err
    assert main(["eval", "routing", str(tmp_path / "missing.jsonl")]) == 2
    unlabelled = tmp_path / "unlabelled.jsonl"
    unlabelled.write_text('{"text": "hi"}\n', encoding="utf-8")
    capsys.readouterr()
    assert main(["eval", "routing", str(unlabelled)]) == 2
    assert 'unlabelled.jsonl: line 1: needs "text" and "agent"' in capsys.readouterr().err


CONVOS = [
    {
        "name": "passes",
        "turns": [{"customer": "I can't log in", "expect": {"handoffs": ["triage>technical"], "tools": [{"name": "search_kb"}]}}],
        "expect": {"final_agent": "technical", "handoff_path": ["triage", "technical"]},
    },
    {
        "name": "fails on purpose",
        "turns": [{"customer": "I can't log in", "expect": {"handoffs": ["triage>billing"], "reply": ["pineapple"]}}],
        "expect": {"tool_counts": {"refund_charge": 1}},
    },
]


async def test_conversation_results():
    results = await evaluate_conversations(CONVOS, config=str(REPO / "agents.toml"))
    assert [r.passed for r in results] == [True, False]
    failures = " | ".join(results[1].failures)
    assert "handoffs" in failures and "pineapple" in failures and "refund_charge succeeded 0 times" in failures


def test_cli_conversations_exit_codes(tmp_path, capsys):
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(CONVOS[0]) + "\n", encoding="utf-8")
    assert main(["eval", "conversations", str(good)]) == 0
    assert "PASS  passes" in capsys.readouterr().out
    both = tmp_path / "both.jsonl"
    both.write_text("".join(json.dumps(c) + "\n" for c in CONVOS), encoding="utf-8")
    assert main(["eval", "conversations", str(both)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  fails on purpose" in out and "1 passed, 1 failed" in out


def test_read_jsonl_skips_blank_lines(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('\n{"a": 1}\n\n', encoding="utf-8")
    assert read_jsonl(path) == [{"a": 1}]


async def test_routing_stops_each_turn_before_the_specialist_works(tmp_path):
    """Routing is the entry agent's decision: the specialist's step (its tools, its answer) is
    not run for each routed message, which cost the eval most of its time."""
    from supportdesk.items import Message, ToolCall
    from supportdesk.wiring import load_config, open_desk

    db = tmp_path / "routed.db"
    report = await evaluate_routing(ROWS, config=str(REPO / "agents.toml"), db=str(db))
    assert report.correct == 4
    async with await open_desk(str(db), load_config(str(REPO / "agents.toml")), customers=False) as desk:
        sessions = await desk.store.list_sessions()
        assert len(sessions) == len(ROWS)
        for info in sessions:
            items = await desk.store.latest(info.id, 50)
            assert not [i for i in items if isinstance(i, ToolCall)]
            assert {i.agent for i in items if isinstance(i, Message) and i.role == "agent"} <= {"triage"}
