"""pass^k over repeated trials, the no-op floor and the published anchors, as text or JSON."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from math import comb
from typing import Any

# Published pass^1 (%) on tau2-bench's 2025 task set with a gpt-4.1 customer simulator.
ANCHORS: dict[str, dict[str, float]] = {
    "GPT-4.1": {"retail": 74.0, "airline": 56.0},
    "Claude-3.7-Sonnet": {"retail": 72.1, "airline": 64.2},
    "GPT-4.1-mini": {"retail": 61.4, "airline": 48.7},
}


@dataclass
class TaskResult:
    task_id: str
    trial: int
    reward: float
    session_id: str
    failure: str = ""
    detail: str = ""


@dataclass
class RunReport:
    run_id: str
    domain: str
    split: str
    desk: str
    agent: str
    trials: int
    package: str
    results: list[TaskResult] = field(default_factory=list)
    floor: float | None = None
    seconds: float = 0.0
    # "scored", or "failed" (a model server or the customer simulator failed: not a score).
    status: str = "scored"
    reason: str = ""
    desk_file: str = ""
    # The customer seed of each trial (tau2's runner draws one per trial from the base seed).
    seeds: list[int] = field(default_factory=list)
    # What makes this run's figures differ from tau2's own runner's (see docs/bench.md).
    notes: list[str] = field(default_factory=list)
    # Where the run's sessions are stored (a path or a masked URL); empty when not known.
    where: str = ""

    def pass_hat(self) -> dict[int, float]:
        """pass^k for k = 1..trials: the chance that k trials of a task all succeed, averaged
        over tasks (tau-bench's estimator: C(successes, k) / C(trials, k))."""
        by_task: dict[str, list[float]] = {}
        for r in self.results:
            by_task.setdefault(r.task_id, []).append(r.reward)
        out: dict[int, float] = {}
        for k in range(1, self.trials + 1):
            values = [
                comb(sum(1 for x in rewards if x >= 1.0), k) / comb(len(rewards), k)
                for rewards in by_task.values()
                if len(rewards) >= k
            ]
            out[k] = sum(values) / len(values) if values else 0.0
        return out

    def failed(self) -> list[TaskResult]:
        return [r for r in self.results if r.reward < 1.0]

    def as_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "domain": self.domain,
            "split": self.split,
            "desk": self.desk,
            "agent": self.agent,
            "trials": self.trials,
            "package": self.package,
            "tasks": len({r.task_id for r in self.results}),
            "pass_hat": {str(k): v for k, v in self.pass_hat().items()},
            "noop_floor": self.floor,
            "anchors_pass1": {name: figures.get(self.domain) for name, figures in ANCHORS.items()},
            "seconds": round(self.seconds, 1),
            "status": self.status,
            "reason": self.reason,
            "desk_file": self.desk_file,
            "seeds": self.seeds,
            "comparability": self.notes,
            "stored_in": self.where,
            "results": [asdict(r) for r in self.results],
        }

    def lines(self) -> list[str]:
        tasks = len({r.task_id for r in self.results})
        out = [
            f"tau2 {self.domain} ({self.split} split, {tasks} tasks × {self.trials} trials), "
            f"desk {self.desk}, agent {self.agent}, {self.package}: run {self.run_id}",
        ]
        if self.status == "failed":
            out.append(f"  FAILED, not scored: {self.reason}")
        for k, value in self.pass_hat().items():
            out.append(f"  pass^{k}  {value:.3f}")
        if self.floor is not None:
            out.append(f"  no-op floor (pass^1)  {self.floor:.3f}")
        else:
            out.append("  no-op floor: not measured in this database yet (run it with --agent noop)")
        anchors = [(name, f[self.domain]) for name, f in ANCHORS.items() if self.domain in f]
        if anchors:
            out.append("  published pass^1 (gpt-4.1 customer): " + ", ".join(f"{n} {v / 100:.3f}" for n, v in anchors))
        failed = self.failed()
        if failed:
            out.append(f"  {len(failed)} failed:")
            for r in failed:
                why = f"{r.failure}: {r.detail}" if r.detail else r.failure
                out.append(f"    task {r.task_id} trial {r.trial}: {why} (session {r.session_id})")
        if self.seeds:
            out.append(f"  customer seeds per trial: {', '.join(map(str, self.seeds))}")
        if self.desk_file:
            out.append(f"  desk file: {self.desk_file}")
        if self.notes:
            out.append("  beside tau2's own runner:")
            out += [f"    - {note}" for note in self.notes]
        if self.where:
            out.append(f"  sessions stored in {self.where} (`supportdesk --db {self.where}`, then ctrl+t)")
        out.append(f"  took {self.seconds:.1f} s")
        return out
