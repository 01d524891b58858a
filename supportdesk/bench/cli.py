"""`supportdesk bench tau2 ...` and `supportdesk bench list`: registered by cli.py like eval and
doctor. Imports nothing heavy: tau2 loads only when a run starts."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from supportdesk.argtypes import at_least
from supportdesk.text import safe_text


def _out(text: str = "") -> None:
    print(safe_text(text))


def _err(text: str) -> None:
    print(f"supportdesk: {safe_text(text)}", file=sys.stderr)


def _task_ids(text: str) -> list[str]:
    ids = [part.strip() for part in text.split(",") if part.strip()]
    if not ids:
        raise argparse.ArgumentTypeError("give task ids separated by commas, like 0,1,5")
    return ids


def register(sub: Any, common: argparse.ArgumentParser | None = None) -> None:
    parents = [common] if common is not None else []
    bench = sub.add_parser(
        "bench",
        description="Bench sessions go to a database of their own unless --db names one: "
        "bench/bench.db in the data folder, never the live desk's.",
    )
    bsub = bench.add_subparsers(dest="bench_command", metavar="ACTION", required=True)

    where = (
        "Sessions are stored in a bench database of their own, bench/bench.db in the data folder, "
        "unless --db names one ($SUPPORTDESK_DB, the live desk's, is not used)."
    )
    tau2 = bsub.add_parser(
        "tau2", parents=parents, help="run tau2-bench tasks against a desk (pip install 'supportdesk[tau2]')",
        description=where,
    )
    tau2.add_argument("--domain", required=True, choices=("retail", "airline", "telecom"))
    tau2.add_argument("--split", default="base", choices=("base", "test", "train"))
    tau2.add_argument("--tasks", type=_task_ids, metavar="IDS", help="only these task ids, comma-separated")
    tau2.add_argument("--trials", type=at_least(1, "trials"), default=1, metavar="K", help="trials per task; pass^1..K is reported")
    tau2.add_argument(
        "--desk", default="single", metavar="single|split|FILE",
        help="one agent, a generated desk of specialists, or a desk file (default: single)",
    )
    tau2.add_argument(
        "--agent", default="desk", choices=("desk", "gold", "noop"),
        help="desk: the desk's model; gold: replay the task's gold actions; noop: answer without acting",
    )
    tau2.add_argument("--user-model", metavar="M", help="the customer simulator's model (--agent desk)")
    tau2.add_argument("--user-base-url", metavar="URL", help="an OpenAI-compatible server for the customer simulator")
    tau2.add_argument("--user-api-key-env", metavar="NAME", help="environment variable holding that server's key")
    tau2.add_argument(
        "--seed", type=int, default=300, metavar="N",
        help="the base seed each trial's customer seed is drawn from, as tau2's runner does (default: 300, tau2's)",
    )
    tau2.add_argument(
        "--no-gate", dest="gate", action="store_false",
        help="run the domain's writes without the customer's yes (the confirmation gate is on by default)",
    )
    tau2.add_argument("--json", action="store_true", help="print the report as JSON")
    tau2.set_defaults(func=_cmd_tau2)

    blist = bsub.add_parser(
        "list", parents=parents, help="bench runs stored in the database, newest first", description=where
    )
    blist.add_argument("--run", metavar="ID", help="one run's report, its failed tasks and their sessions")
    blist.add_argument("--json", action="store_true")
    blist.set_defaults(func=_cmd_list)


async def _cmd_tau2(args: argparse.Namespace) -> int:
    from supportdesk.bench.run import BenchOptions, run_tau2
    from supportdesk.bench.tau2env import BenchError

    opts = BenchOptions(
        domain=args.domain,
        split=args.split,
        tasks=args.tasks,
        trials=args.trials,
        desk=args.desk,
        agent=args.agent,
        user_model=args.user_model,
        user_base_url=args.user_base_url,
        user_api_key_env=args.user_api_key_env,
        db=getattr(args, "db", None),
        config=getattr(args, "config", None),
        seed=args.seed,
        gate=args.gate,
    )

    def progress(result: Any) -> None:
        why = f" ({result.failure})" if result.failure else ""
        print(safe_text(f"task {result.task_id} trial {result.trial}: {result.reward:g}{why}"), file=sys.stderr, flush=True)

    try:
        report = await run_tau2(opts, progress=progress)
    except BenchError as exc:
        _err(str(exc))
        return 1
    if args.json:
        print(json.dumps(report.as_json(), ensure_ascii=False))
    else:
        for line in report.lines():
            _out(line)
    return 0


async def _cmd_list(args: argparse.Namespace) -> int:
    from pathlib import Path

    from supportdesk.bench.run import bench_db, display_db
    from supportdesk.bench.runs import FAILED, floor_of, list_runs
    from supportdesk.store import open_store

    db = getattr(args, "db", None)
    if db is None and not Path(bench_db()).exists():
        if not args.json:
            _out(f"no bench runs yet (they are stored in {bench_db()}); run `supportdesk bench tau2 --domain retail --agent gold`")
        return 0
    async with await open_store(db or bench_db()) as store:
        runs = await list_runs(store)
        if args.run:
            run = next((r for r in runs if r.run_id.startswith(args.run)), None)
            if run is None:
                _err(f"no bench run {args.run!r}; see `supportdesk bench list`")
                return 1
            report = run.report()
            report.where = display_db(db or bench_db())
            if run.agent == "noop" and run.status != FAILED:
                report.floor = report.pass_hat().get(1)
            else:
                report.floor = floor_of(runs, run.domain, run.split, {r.task_id for r in run.results})
            if args.json:
                print(json.dumps(report.as_json(), ensure_ascii=False))
            else:
                for line in report.lines()[:-1]:  # a stored run has no duration
                    _out(line)
            return 0
        for run in runs:
            report = run.report()
            p1 = report.pass_hat().get(1, 0.0)
            tasks = len({r.task_id for r in run.results})
            if args.json:
                print(json.dumps({
                    "run_id": run.run_id, "started": run.started, "domain": run.domain, "split": run.split,
                    "desk": run.desk, "agent": run.agent, "tasks": tasks, "trials": run.trials,
                    "pass1": None if run.status == FAILED else p1, "failed": len(report.failed()),
                    "package": run.package, "status": run.status, "reason": run.reason,
                }))
            else:
                score = f"FAILED: {run.reason}" if run.status == FAILED else (
                    f"pass^1 {p1:.3f}  {len(report.failed())} failed" + ("  (unfinished)" if run.status != "scored" else "")
                )
                _out(
                    f"{run.run_id}  {run.started[:16]}  tau2 {run.domain:<8} {run.desk:<8} {run.agent:<5} "
                    f"{tasks:>4} tasks × {run.trials}  {score}"
                )
        if not runs and not args.json:
            _out("no bench runs in this database; run `supportdesk bench tau2 --domain retail --agent gold`")
    return 0
