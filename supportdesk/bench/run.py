"""One bench run: every task × trial played by tau2's orchestrator against the desk, each stored
as a desk session and scored from that stored log.

Each session is on the `bench` channel with the bench metadata in its session meta (run, domain,
split, task, trial, package version, desk, agent); it opens with tau2's greeting, and its last item
is an `info` notice with the reward and why a task failed (session meta is written once, when the
session is made, and the reward is known only after the conversation). Session meta is never
shown to the agents, and the notice is written after the conversation ended.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from supportdesk.bench import desks
from supportdesk.bench.players import BenchTask, GoldProvider, NoopProvider, desk_agent, recording, scripted_customer
from supportdesk.bench.report import RunReport, TaskResult
from supportdesk.bench.runs import CHANNEL, list_runs
from supportdesk.bench.scoring import ENDED_BY_LIMIT, Score, score
from supportdesk.bench.tau2env import PACKAGE, BenchError, Domain, load_domain, tau2
from supportdesk.bench.tools import EnvironmentSlot, domain_tools, tool_kinds
from supportdesk.config import ConfigError, DeskConfig, ModelSettings
from supportdesk.items import Message, Notice

AgentKind = Literal["desk", "gold", "noop"]


@dataclass
class BenchOptions:
    domain: str
    split: str = "base"
    tasks: list[str] | None = None
    trials: int = 1
    desk: str = "single"
    agent: AgentKind = "desk"
    user_model: str | None = None
    user_base_url: str | None = None
    # The environment variable holding the customer simulator's API key (never the key).
    user_api_key_env: str | None = None
    db: str | None = None
    # The desk file whose [model] a generated desk runs on (None: the usual lookup).
    config: str | None = None
    max_steps: int = 200
    seed: int | None = 300


def _desk_folder(db: str | None) -> Path:
    """Where generated desks are written: beside a SQLite database, else in the data folder."""
    from supportdesk.store import StoreError, default_db_path, parse_location

    try:
        location = parse_location(db)
    except StoreError:
        return default_db_path().parent / "bench"  # open_desk reports the bad --db in one line
    folder = Path(location.target).parent if location.kind == "sqlite" else default_db_path().parent
    return folder / "bench"


def _desk_config(opts: BenchOptions, domain: Domain, environment: Any, folder: Path) -> tuple[DeskConfig, str]:
    kinds = tool_kinds(environment)
    names = sorted(kinds)
    if opts.desk not in ("single", "split"):
        return desks.load_file(opts.desk, names), opts.desk
    model = ModelSettings()
    if opts.agent == "desk":
        from supportdesk.config import load_desk

        try:
            model = load_desk(opts.config).model
        except ConfigError as exc:
            raise BenchError(exc.problems[0]) from None
    if opts.desk == "single":
        text = desks.single_desk_text(domain.name, domain.policy, names, model)
    else:
        text = desks.split_desk_text(domain.name, domain.policy, kinds, model)
    path = folder / f"tau2-{domain.name}-{opts.desk}.toml"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        source = str(path)
    except OSError:
        source = f"tau2-{domain.name}-{opts.desk}.toml"  # unwritable: the desk still runs
    return desks.parse(text, source, names), source


def _provider(opts: BenchOptions, cfg: DeskConfig, current: BenchTask, tool_names: set[str]) -> Any:
    match opts.agent:
        case "gold":
            return GoldProvider(current, tool_names)
        case "noop":
            return NoopProvider()
        case "desk":
            if cfg.model.provider == "offline":
                raise BenchError(
                    "the embedded offline model knows only the demo desk's domain; set [model] "
                    'provider = "openai" (base_url, model) in the desk file, or use --agent gold|noop'
                )
            return None  # the desk's configured provider
    raise BenchError(f"no bench agent {opts.agent!r}; choose desk, gold or noop")


def _customer(opts: BenchOptions, task: Any, environment: Any, current: BenchTask) -> Any:
    if opts.agent != "desk":
        return scripted_customer(task, current if opts.agent == "gold" else None)
    if not opts.user_model:
        raise BenchError("--agent desk needs a customer simulator: pass --user-model (and --user-base-url)")
    args: dict[str, Any] = {"temperature": 0.0}
    model = opts.user_model
    if opts.user_base_url:
        args["api_base"] = opts.user_base_url
        # litellm picks the wire protocol from the prefix; a bare name on a base URL is OpenAI-compatible.
        if "/" not in model:
            model = f"openai/{model}"
    key = os.environ.get(opts.user_api_key_env) if opts.user_api_key_env else None
    args["api_key"] = key or ("none" if opts.user_base_url else None)
    if args["api_key"] is None:
        del args["api_key"]
    # A domain that gives the customer a device of their own (telecom) gives its simulator the tools.
    device = environment.get_user_tools() if environment.user_tools is not None else None
    return tau2().user_simulator.UserSimulator(
        tools=device, instructions=str(task.user_scenario), llm=model, llm_args=args
    )


async def run_tau2(opts: BenchOptions, progress: Any = None) -> RunReport:
    """Run the bench; raises BenchError (one line) for anything the user must fix."""
    from supportdesk.wiring import open_desk

    if opts.trials < 1:
        raise BenchError("--trials must be at least 1")
    started = time.perf_counter()
    domain = load_domain(opts.domain, opts.split, opts.tasks)
    first_env = domain.environment()
    cfg, source = _desk_config(opts, domain, first_env, _desk_folder(opts.db))
    slot = EnvironmentSlot()
    registry = domain_tools(first_env, slot)
    tool_names = set(registry.names())
    current = BenchTask()
    provider = _provider(opts, cfg, current, tool_names)
    try:
        desk = await open_desk(opts.db, cfg, provider=provider, tools=registry, customers=False)
    except ConfigError as exc:
        raise BenchError(exc.problems[0]) from None
    run_id = uuid.uuid4().hex[:8]
    package = f"{PACKAGE} {domain.version}"
    desk_name = opts.desk if opts.desk in ("single", "split") else Path(opts.desk).name
    report = RunReport(run_id, domain.name, domain.split, desk_name, opts.agent, opts.trials, package)
    t = tau2()
    greeting = t.orchestrator.DEFAULT_FIRST_AGENT_MESSAGE.content
    loop = asyncio.get_running_loop()
    async with desk:
        for trial in range(1, opts.trials + 1):
            for task in domain.tasks:
                meta = {
                    "bench": "tau2",
                    "run": run_id,
                    "domain": domain.name,
                    "split": domain.split,
                    "task_id": task.id,
                    "trial": trial,
                    "package": package,
                    "desk": desk_name,
                    "desk_file": source,
                    "agent": opts.agent,
                }
                result = await _play(desk, domain, task, trial, meta, greeting, slot, current, opts, loop)
                report.results.append(result)
                if progress is not None:
                    progress(result)
        report.floor = await floor_from_store(desk.store, domain.name, domain.split, {t.id for t in domain.tasks})
    if opts.agent == "noop":
        report.floor = report.pass_hat()[1]
    report.seconds = time.perf_counter() - started
    return report


async def _play(
    desk: Any,
    domain: Domain,
    task: Any,
    trial: int,
    meta: dict[str, Any],
    greeting: str,
    slot: EnvironmentSlot,
    current: BenchTask,
    opts: BenchOptions,
    loop: asyncio.AbstractEventLoop,
) -> TaskResult:
    t = tau2()
    store, cfg = desk.store, desk.config
    info = await store.create_session(
        cfg.desk.entry,
        title=f"tau2 {domain.name} task {task.id} · trial {trial}",
        channel=CHANNEL,
        meta={"bench": meta},
        first=[Message(role="agent", text=greeting, agent=cfg.desk.entry)],
    )
    sid = info.id
    environment = domain.environment()
    slot.environment = environment
    current.start(task)
    agent = desk_agent(desk.runner, sid, loop)

    def store_actions(done: list[tuple[Any, Any]]) -> None:
        """The customer's calls on their own device, with tau2's results, into the session
        (from the orchestrator's thread, before the customer speaks again)."""
        notices = [_customer_action(call, result, cfg.desk.entry) for call, result in done]
        asyncio.run_coroutine_threadsafe(store.append(sid, notices), loop).result()

    orchestrator = t.orchestrator.Orchestrator(
        domain=domain.name,
        agent=agent,
        user=recording(_customer(opts, task, environment, current), store_actions),
        environment=environment,
        task=task,
        max_steps=opts.max_steps,
        max_errors=10,
        seed=opts.seed if opts.agent == "desk" else None,
    )
    try:
        simulation = await asyncio.to_thread(orchestrator.run)
        termination = str(simulation.termination_reason.value)
    except BenchError:
        raise
    except Exception as exc:  # the customer simulator's server failing, say: the task scores 0
        termination = f"the run stopped: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    finally:
        slot.environment = None
    items = await store.range(sid, 1, await store.last_seq(sid))
    if agent.ended is not None:
        result = Score(0.0, ENDED_BY_LIMIT, agent.ended.text)
    else:
        result = await asyncio.to_thread(score, domain.name, task, items, set(desk.runner.tools.names()), termination)
    data = {**meta, "reward": result.reward, "failure": result.failure, "detail": result.detail, "termination": termination}
    text = f"tau2 reward {result.reward:g}" + (f": {result.failure}" if result.failure else "")
    await store.append(sid, [Notice(notice_kind="info", text=text, data={"bench": data}, agent=cfg.desk.entry)])
    return TaskResult(task.id, trial, result.reward, sid, result.failure, result.detail)


def _customer_action(call: Any, result: Any, agent: str) -> Notice:
    """One call the customer made on their own device, stored exactly as tau2 answered it."""
    data = {"call_id": call.id, "name": call.name, "arguments": dict(call.arguments or {}),
            "output": result.content or "", "is_error": bool(result.error)}
    return Notice(notice_kind="customer_action", text=f"The customer ran {call.name} on their device.",
                  data={"customer_action": data}, agent=agent)


async def floor_from_store(store: Any, domain: str, split: str, task_ids: set[str]) -> float | None:
    """pass^1 of the latest no-op run in this database that covered these tasks."""
    for run in await list_runs(store):
        if run.agent == "noop" and run.domain == domain and task_ids <= {r.task_id for r in run.results}:
            chosen = [r for r in run.results if r.task_id in task_ids and r.trial == 1]
            return sum(1 for r in chosen if r.reward >= 1.0) / len(chosen) if chosen else None
    return None
