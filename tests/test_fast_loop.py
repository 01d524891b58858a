"""The test harness's own settings for `pytest -n auto` (tests/conftest.py)."""

from __future__ import annotations

import os

import pytest

from tests import conftest


@pytest.mark.parametrize(("cores", "workers"), [(1, 1), (2, 2), (4, 4), (64, conftest.MAX_AUTO_WORKERS)])
def test_auto_workers_follow_the_cores_up_to_the_cap(monkeypatch, cores, workers):
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)))
    assert conftest.pytest_xdist_auto_num_workers(None) == workers


def test_an_explicit_worker_count_is_left_to_xdist(monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "7")
    assert conftest.pytest_xdist_auto_num_workers(None) is None


@pytest.mark.parametrize(
    ("workers", "dist", "scheduled"),
    [(2, "no", "worksteal"), ("auto", "no", "worksteal"), (2, "load", "load"), (None, "no", "no"), (0, "no", "no")],
)
def test_workers_steal_work_unless_told_otherwise(workers, dist, scheduled):
    from types import SimpleNamespace

    config = SimpleNamespace(option=SimpleNamespace(numprocesses=workers, dist=dist))
    conftest.pytest_cmdline_main(config)
    assert config.option.dist == scheduled


def test_every_test_runs_under_a_time_limit(pytestconfig):
    """pytest-timeout is installed (the test extras) and on for the whole suite ([tool.pytest])."""
    assert pytestconfig.pluginmanager.hasplugin("timeout")
    assert float(pytestconfig.getini("timeout")) == 120
    assert pytestconfig.getini("timeout_method") == "signal"


def test_a_hanging_test_fails_by_name_and_the_run_goes_on(tmp_path):
    import subprocess
    import sys

    (tmp_path / "test_hangs.py").write_text(
        "import asyncio, time\n\n"
        "def test_sleeps_forever():\n    time.sleep(3600)\n\n"
        "def test_waits_on_a_stream_forever():\n    asyncio.run(asyncio.Event().wait())\n\n"
        "def test_after_them():\n    pass\n"
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\ntimeout = 2\ntimeout_method = signal\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_hangs.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED test_hangs.py::test_sleeps_forever" in done.stdout
    assert "FAILED test_hangs.py::test_waits_on_a_stream_forever" in done.stdout
    assert "2 failed, 1 passed" in done.stdout


@pytest.mark.parametrize(
    ("ci", "outcome"),
    [("true", pytest.fail.Exception), ("1", pytest.fail.Exception), ("yes", pytest.fail.Exception), ("", pytest.skip.Exception)],
)
def test_a_test_that_cannot_run_here_skips_but_fails_under_ci(monkeypatch, ci, outcome):
    from tests.ci import cannot_run

    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="needs root"):
        cannot_run("needs root")
