"""Bench runs as stored: the sessions of the `bench` channel, grouped by run.

A projection like every other view: each session's meta holds the bench metadata and its last
item the score, so listing runs needs no table of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from supportdesk.bench.report import RunReport, TaskResult
from supportdesk.items import Notice

CHANNEL = "bench"
PAGE = 500


@dataclass
class StoredRun:
    run_id: str
    domain: str
    split: str
    desk: str
    agent: str
    package: str
    started: str
    results: list[TaskResult] = field(default_factory=list)

    @property
    def trials(self) -> int:
        return max((r.trial for r in self.results), default=0)

    def report(self) -> RunReport:
        report = RunReport(self.run_id, self.domain, self.split, self.desk, self.agent, self.trials, self.package)
        report.results = sorted(self.results, key=lambda r: (r.trial, _task_order(r.task_id)))
        return report


def _task_order(task_id: str) -> tuple[int, str]:
    return (int(task_id), "") if task_id.isdigit() else (1 << 30, task_id)


async def list_runs(store: Any) -> list[StoredRun]:
    """Every bench run in the database, newest first; unscored sessions are left out."""
    runs: dict[str, StoredRun] = {}
    offset = 0
    while True:
        page = await store.list_sessions(limit=PAGE, offset=offset)
        for info in page:
            if info.channel == CHANNEL and info.item_count >= 2:
                await _add(store, info, runs)
        if len(page) < PAGE:
            break
        offset += PAGE
    return sorted(runs.values(), key=lambda r: r.started, reverse=True)


async def _add(store: Any, info: Any, runs: dict[str, StoredRun]) -> None:
    meta = info.meta.get("bench")
    if not isinstance(meta, dict) or "run" not in meta:
        return
    last = await store.item(info.id, info.item_count)
    scored = last.data.get("bench") if isinstance(last, Notice) and last.notice_kind == "info" else None
    if not isinstance(scored, dict) or "reward" not in scored:
        return
    run = runs.get(meta["run"])
    started = info.created_at.isoformat()
    if run is None:
        run = runs[meta["run"]] = StoredRun(
            meta["run"], meta["domain"], meta.get("split", ""), meta["desk"], meta["agent"], meta["package"], started
        )
    run.started = min(run.started, started)
    run.results.append(
        TaskResult(
            str(meta["task_id"]),
            int(meta["trial"]),
            float(scored["reward"]),
            info.id,
            str(scored.get("failure", "")),
            str(scored.get("detail", "")),
        )
    )


async def find_run(store: Any, run_id: str) -> StoredRun | None:
    for run in await list_runs(store):
        if run.run_id.startswith(run_id):
            return run
    return None
