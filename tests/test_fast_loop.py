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
