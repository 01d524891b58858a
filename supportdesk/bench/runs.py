"""Bench runs as stored: a run's record, written once when the run ends, and its task sessions.

Every task × trial is a session of the `bench` channel (its meta holds the bench metadata, its
score is an `info` notice). When a run ends, scored or failed, one more session is written: the
run's record, whose meta holds what the run was (domain, split, desk and the desk file's text,
agent, package, seeds, what makes it comparable or not with tau2's own runner) and every task's
score as it was when the run ended. Listing runs reads the records, so what is written to a
task's session later (someone replying in it) changes no run. Sessions of a run that has no
record (the run was killed, or it was stored before records existed) are still listed, folded
from their score notices, as an unfinished run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from supportdesk.bench.report import RunReport, TaskResult
from supportdesk.items import Notice

CHANNEL = "bench"
# The key of a run record in its session's meta.
RECORD = "bench_run"
PAGE = 500
# A run's status: every task scored; stopped by a failure outside the desk (a model server, the
# customer simulator); or its sessions hold no record (killed mid-run, or stored before records).
SCORED, FAILED, UNFINISHED = "scored", "failed", "unfinished"


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
    status: str = UNFINISHED
    reason: str = ""
    trials_asked: int = 0
    desk_file: str = ""
    desk_text: str = ""
    seeds: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def trials(self) -> int:
        return self.trials_asked or max((r.trial for r in self.results), default=0)

    def report(self) -> RunReport:
        report = RunReport(self.run_id, self.domain, self.split, self.desk, self.agent, self.trials, self.package)
        report.results = sorted(self.results, key=lambda r: (r.trial, _task_order(r.task_id)))
        report.status, report.reason = self.status, self.reason
        report.desk_file, report.seeds, report.notes = self.desk_file, list(self.seeds), list(self.notes)
        return report


def record(report: RunReport, started: str, desk_text: str) -> dict[str, Any]:
    """The meta of a run's record session: the run as it was when it ended."""
    return {
        "run": report.run_id,
        "domain": report.domain,
        "split": report.split,
        "desk": report.desk,
        "agent": report.agent,
        "package": report.package,
        "started": started,
        "status": report.status,
        "reason": report.reason,
        "trials": report.trials,
        "desk_file": report.desk_file,
        "desk_text": desk_text,
        "seeds": report.seeds,
        "notes": report.notes,
        "results": [[r.task_id, r.trial, r.reward, r.session_id, r.failure, r.detail] for r in report.results],
    }


def _from_record(data: dict[str, Any]) -> StoredRun:
    run = StoredRun(
        str(data["run"]), str(data["domain"]), str(data.get("split", "")), str(data["desk"]), str(data["agent"]),
        str(data["package"]), str(data["started"]),
        status=str(data.get("status", SCORED)), reason=str(data.get("reason", "")),
        trials_asked=int(data.get("trials", 0)), desk_file=str(data.get("desk_file", "")),
        desk_text=str(data.get("desk_text", "")), seeds=[int(s) for s in data.get("seeds", [])],
        notes=[str(n) for n in data.get("notes", [])],
    )
    for task_id, trial, reward, session_id, failure, detail in data.get("results", []):
        run.results.append(TaskResult(str(task_id), int(trial), float(reward), str(session_id), str(failure), str(detail)))
    return run


def _task_order(task_id: str) -> tuple[int, str]:
    return (int(task_id), "") if task_id.isdigit() else (1 << 30, task_id)


async def list_runs(store: Any) -> list[StoredRun]:
    """Every bench run in the database, newest first; task sessions not yet scored are left out."""
    runs: dict[str, StoredRun] = {}
    unrecorded: list[Any] = []
    offset = 0
    while True:
        page = await store.list_sessions(limit=PAGE, offset=offset)
        for info in page:
            if info.channel != CHANNEL:
                continue
            data = info.meta.get(RECORD)
            if isinstance(data, dict) and "run" in data:
                runs[str(data["run"])] = _from_record(data)
            elif info.item_count >= 2:
                unrecorded.append(info)
        if len(page) < PAGE:
            break
        offset += PAGE
    folded: dict[str, StoredRun] = {}
    for info in unrecorded:
        meta = info.meta.get("bench")
        if isinstance(meta, dict) and "run" in meta and meta["run"] not in runs:
            await _add(store, info, folded)
    return sorted([*runs.values(), *folded.values()], key=lambda r: r.started, reverse=True)


async def _add(store: Any, info: Any, runs: dict[str, StoredRun]) -> None:
    meta = info.meta["bench"]
    scored = None
    for notice in reversed(await store.of_kind(info.id, "notice")):
        data = notice.data.get("bench") if isinstance(notice, Notice) and notice.notice_kind == "info" else None
        if isinstance(data, dict) and "reward" in data:
            scored = data
            break
    if scored is None:
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


def floor_of(runs: list[StoredRun], domain: str, split: str, task_ids: set[str]) -> float | None:
    """pass^1 of the latest no-op run on this domain and split that covered these tasks (a failed
    run is not a measurement)."""
    for run in runs:
        if run.agent != "noop" or run.domain != domain or run.split != split or run.status == FAILED:
            continue
        if task_ids <= {r.task_id for r in run.results}:
            chosen = [r for r in run.results if r.task_id in task_ids and r.trial == 1]
            return sum(1 for r in chosen if r.reward >= 1.0) / len(chosen) if chosen else None
    return None


async def floor_from_store(store: Any, domain: str, split: str, task_ids: set[str]) -> float | None:
    return floor_of(await list_runs(store), domain, split, task_ids)
