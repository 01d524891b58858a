"""One bench run: every task × trial played by tau2's orchestrator against the desk, each stored
as a desk session and scored from that stored log.

Each session is on the `bench` channel with the bench metadata in its session meta (run, domain,
split, task, trial, seed, package version, desk, agent); it opens with tau2's greeting, and its
last item is an `info` notice with the reward, why a task failed and the calls that reached
tau2's environment (session meta is written once, when the session is made, and the reward is
known only after the conversation). Session meta is never shown to the agents, and the notice is
written after the conversation ended. When the run ends it writes its record (`bench.runs`).

Sessions go to a database of their own unless --db names one (`bench_db()`). What can be
refused is refused before tau2 loads; a failing model server or customer simulator stops the run,
which is stored as failed, never as a score.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import random
import time
import tomllib
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from supportdesk.bench import desks
from supportdesk.bench.players import BenchTask, GoldProvider, NoopProvider, desk_agent, recording, scripted_customer
from supportdesk.bench.report import RunReport, TaskResult
from supportdesk.bench.runs import CHANNEL, FAILED, RECORD, floor_from_store, record
from supportdesk.bench.scoring import ENDED_BY_LIMIT, Score, score
from supportdesk.bench.tau2env import PACKAGE, BenchError, Domain, load_domain, tau2
from supportdesk.bench.tools import EnvironmentSlot, domain_tools, tool_kinds, write_tools
from supportdesk.config import ConfigError, DeskConfig, ModelSettings, parse_desk, resolve_config_path
from supportdesk.items import Message, Notice

AgentKind = Literal["desk", "gold", "noop"]

# tau2's own defaults (tau2.config): the base seed its runner draws each trial's seed from, and
# the temperature of its agent.
TAU2_SEED = 300
TAU2_TEMPERATURE = 0.0
# A desk model's failures that are the server's, not the desk's: the run is failed, not scored.
# (`bad_response` and an action-less reply are the model's doing and score the task 0.)
SERVER_FAILURES = frozenset({"unreachable", "auth", "unknown_model", "rate_limited", "timeout"})


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
    # The database the run's sessions go to (None: the bench database of its own, `bench_db()`).
    db: str | None = None
    # The desk file whose [model] a generated desk runs on (None: the usual lookup).
    config: str | None = None
    max_steps: int = 200
    # The base seed each trial's customer seed is drawn from, as tau2's runner draws them.
    seed: int = TAU2_SEED
    # The desk's confirmation gate on the domain's writes (issue 33): on unless switched off;
    # off, the run's desk gets a `[confirm]` table naming each write "none".
    gate: bool = True


class RunFailed(BenchError):
    """Something outside the desk failed (its model server, the customer simulator): the run
    is stored as failed, never as a score."""


def bench_db() -> str:
    """Where bench sessions go by default: a database of their own, never the live desk's (whose
    dashboard would count the runs' tasks as conversations and their transfers as people waiting)."""
    from supportdesk.folders import data_dir

    return str(data_dir() / "bench" / "bench.db")


def draw_seeds(base: int, trials: int) -> list[int]:
    """One customer seed per trial, drawn the way tau2's runner draws them from its base seed."""
    rng = random.Random(base)
    return [rng.randint(0, 1000000) for _ in range(trials)]


def _desk_folder(db: str) -> Path:
    """Where generated desks are written: beside a SQLite database, else in the data folder."""
    from supportdesk.store import StoreError, default_db_path, parse_location

    try:
        location = parse_location(db)
    except StoreError:
        return default_db_path().parent / "bench"  # open_desk reports the bad --db in one line
    folder = Path(location.target).parent if location.kind == "sqlite" else default_db_path().parent
    return folder if folder.name == "bench" else folder / "bench"


def display_db(db: str) -> str:
    """A database's location as messages show it (a password masked)."""
    from supportdesk.store import StoreError, parse_location

    try:
        return parse_location(db).display
    except StoreError:
        return ""


@dataclass
class DeskModel:
    """The desk's [model] as the run uses it, and whether the file set its temperature."""

    settings: ModelSettings
    temperature_set: bool
    source: str


def _read_text(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BenchError(f"{path}: no such {what}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchError(f"{path}: cannot be read: {exc}") from None


def desk_model(opts: BenchOptions) -> DeskModel:
    """The [model] the desk runs on, read before tau2 loads: from the desk file given with
    --desk FILE, else from --config (a file holding only [model] is enough)."""
    if opts.desk not in ("single", "split"):
        path = Path(opts.desk)
        if not path.is_file():
            raise BenchError(f"{path}: no such desk file; pass --desk single, split or an agents.toml")
        what = "desk file"
    else:
        path = resolve_config_path(opts.config)
        what = "file; pass --config PATH with a [model] table"
    text = _read_text(path, what)
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BenchError(f"{path}: not valid TOML: {exc}") from None
    if "agents" not in raw:
        # Only [model] matters here: stand-in agents let the rest of the file validate as usual.
        found = raw.get("desk")
        table: dict[str, Any] = found if isinstance(found, dict) else {}
        names = {str(table.get("entry", "triage")), str(table.get("fallback", "triage"))}
        text += "".join(f'\n[agents.{json.dumps(n)}]\ntitle = "-"\ndescription = "-"\n' for n in sorted(names))
    try:
        model = parse_desk(text, str(path)).model
    except ConfigError as exc:
        raise BenchError(exc.problems[0]) from None
    given = raw.get("model")
    return DeskModel(model, isinstance(given, dict) and "temperature" in given, str(path))


def _check_up_front(opts: BenchOptions) -> DeskModel | None:
    """What can be refused before tau2 is loaded (which takes seconds): the offline model, an
    API key variable named but not set."""
    if opts.trials < 1:
        raise BenchError("--trials must be at least 1")
    if opts.agent not in ("desk", "gold", "noop"):
        raise BenchError(f"no bench agent {opts.agent!r}; choose desk, gold or noop")
    if opts.agent != "desk":
        return None
    model = desk_model(opts)
    if model.settings.provider == "offline":
        raise BenchError(
            f"{model.source}: the embedded offline model knows only the demo desk's domain; set [model] "
            'provider = "openai" (base_url, model), or use --agent gold|noop'
        )
    if not opts.user_model:
        raise BenchError("--agent desk needs a customer simulator: pass --user-model (and --user-base-url)")
    if opts.user_api_key_env and not os.environ.get(opts.user_api_key_env, "").strip():
        raise BenchError(
            f"--user-api-key-env names {opts.user_api_key_env}, which is not set; export it with the "
            "customer simulator's key, or leave the option out for a server that needs none"
        )
    env = model.settings.api_key_env
    if env and not os.environ.get(env, "").strip():
        raise BenchError(f"{model.source}: model.api_key_env names {env}, which is not set; export it with the server's key")
    if not model.temperature_set:  # tau2's agent runs at 0.0; the desk's own default is 0.2
        model.settings = dataclasses.replace(model.settings, temperature=TAU2_TEMPERATURE)
    return model


def _desk_config(
    opts: BenchOptions, domain: Domain, environment: Any, folder: Path, run_id: str, model: DeskModel | None
) -> tuple[DeskConfig, str, str]:
    """The desk, where its file is, and its text (kept with the run)."""
    kinds = tool_kinds(environment)
    names = sorted(kinds)
    ungated = [] if opts.gate else write_tools(environment)
    if opts.desk not in ("single", "split"):
        cfg = desks.load_file(opts.desk, names)
        if model is not None:
            cfg.model = model.settings  # (its temperature: tau2's unless the file set one)
        # The file's own [confirm] stands, unless the run switches the gate off.
        cfg.confirm.update({name: "none" for name in ungated})
        return cfg, opts.desk, _read_text(Path(opts.desk), "desk file")
    settings = model.settings if model is not None else ModelSettings()
    if opts.desk == "single":
        text = desks.single_desk_text(domain.name, domain.policy, names, settings, ungated)
    else:
        text = desks.split_desk_text(domain.name, domain.policy, kinds, settings, ungated)
    # One file per run: the next run never overwrites the desk this one used.
    path = folder / f"tau2-{domain.name}-{opts.desk}-{run_id}.toml"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        source = str(path)
    except OSError:
        source = path.name  # unwritable: the desk still runs, and its text is kept with the run
    return desks.parse(text, source, names), source, text


def _provider(opts: BenchOptions, cfg: DeskConfig, current: BenchTask, tool_names: set[str]) -> Any:
    match opts.agent:
        case "gold":
            return GoldProvider(current, tool_names)
        case "noop":
            return NoopProvider()
        case "desk":
            return None  # the desk's configured provider (checked before tau2 loaded)
    raise BenchError(f"no bench agent {opts.agent!r}; choose desk, gold or noop")


def _customer(opts: BenchOptions, task: Any, environment: Any, current: BenchTask) -> Any:
    if opts.agent != "desk":
        return scripted_customer(task, current if opts.agent == "gold" else None)
    assert opts.user_model  # checked up front
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


def comparability(opts: BenchOptions, model: DeskModel | None, cfg: DeskConfig, gated: list[str] | None = None) -> list[str]:
    """What makes this run's figures differ from tau2's own runner's, said with every report
    (`gated`: the domain's tools whose calls wait for the customer's yes on this desk)."""
    notes: list[str] = []
    if model is not None:
        t = model.settings.temperature
        if model.temperature_set:
            notes.append(f"desk model temperature {t:g}, set in {model.source} (tau2's agent uses {TAU2_TEMPERATURE:g})")
        else:
            notes.append(f"desk model temperature {TAU2_TEMPERATURE:g}, tau2's agent's (set [model] temperature to change it)")
        notes.append("the desk's model gets no seed (tau2's agent gets the trial's seed)")
    else:
        notes.append(f"no desk model: the {opts.agent} agent is scripted, and so is the customer")
    notes += [
        "the desk's system prompt adds its own lines around the domain policy (the agent's name and "
        "desk, reply briefly, its handoffs, the shared context); tau2's agent gets the policy in tau2's prompt",
        "each step's tool calls reach the model as an assistant message of their own, as tau2's agent sends them",
        "the customer simulator sees only a desk turn's last agent message; tau2's required-statement "
        "check counts every agent message of the log",
        "the desk validates tool arguments first: an argument a tool does not take is dropped, a call "
        "with a missing or mistyped one is refused before tau2 (tau2's agent gets tau2's error); a "
        "refused call never reached tau2 and is not replayed",
    ]
    if gated:
        notes.append(
            f"{len(gated)} write tools wait for the customer's yes (the desk's confirmation gate: an offer, "
            "then the customer's answer read by the desk's reader); tau2's agent runs every call at once "
            "(--no-gate runs them so)"
        )
    else:
        notes.append("the confirmation gate is off: writes run at once, as tau2's agent runs them")
    if len(cfg.agents) > 1:
        notes.append(f"{len(cfg.agents)} agents with handoffs (tau2's agent is one); handoffs are not replayed")
    limits = cfg.desk.limits
    notes.append(
        f"desk limits: {limits.max_steps_per_message} steps and {limits.max_handoffs_per_message} handoffs "
        f"per customer message; tau2's {opts.max_steps}-step and 10-tool-error limits count only what "
        "passes its orchestrator (a desk turn is one message; the desk's tool calls are not counted)"
    )
    return notes


async def run_tau2(opts: BenchOptions, progress: Any = None) -> RunReport:
    """Run the bench; raises BenchError (one line) for anything the user must fix, and RunFailed
    (one line, after storing the run as failed) when a model server or the simulator failed."""
    from supportdesk.wiring import open_desk

    model = _check_up_front(opts)
    started = time.perf_counter()
    started_at = datetime.now(timezone.utc).isoformat()
    db = opts.db or bench_db()
    if opts.db is None:
        Path(db).parent.mkdir(parents=True, exist_ok=True)
    domain = load_domain(opts.domain, opts.split, opts.tasks)
    first_env = domain.environment()
    run_id = uuid.uuid4().hex[:8]
    cfg, source, desk_text = _desk_config(opts, domain, first_env, _desk_folder(db), run_id, model)
    slot = EnvironmentSlot()
    registry = domain_tools(first_env, slot)
    tool_names = set(registry.names())
    current = BenchTask()
    provider = _provider(opts, cfg, current, tool_names)
    try:
        desk = await open_desk(db, cfg, provider=provider, tools=registry, customers=False)
    except ConfigError as exc:
        raise BenchError(exc.problems[0]) from None
    package = f"{PACKAGE} {domain.version}"
    desk_name = opts.desk if opts.desk in ("single", "split") else Path(opts.desk).name
    report = RunReport(run_id, domain.name, domain.split, desk_name, opts.agent, opts.trials, package)
    report.desk_file = source
    report.seeds = draw_seeds(opts.seed, opts.trials) if opts.agent == "desk" else []
    gated = [name for name in registry.names() if (tool := registry.get(name)) is not None and tool.needs_confirmation(cfg)]
    report.notes = comparability(opts, model, cfg, gated)
    report.where = display_db(db)
    t = tau2()
    greeting = t.orchestrator.DEFAULT_FIRST_AGENT_MESSAGE.content
    loop = asyncio.get_running_loop()
    async with desk:
        try:
            for trial in range(1, opts.trials + 1):
                seed = report.seeds[trial - 1] if report.seeds else None
                for task in domain.tasks:
                    meta = {
                        "bench": "tau2",
                        "run": run_id,
                        "domain": domain.name,
                        "split": domain.split,
                        "task_id": task.id,
                        "trial": trial,
                        "seed": seed,
                        "package": package,
                        "desk": desk_name,
                        "desk_file": source,
                        "agent": opts.agent,
                    }
                    result = await _play(desk, domain, task, trial, seed, meta, greeting, slot, current, opts, loop)
                    report.results.append(result)
                    if progress is not None:
                        progress(result)
        except RunFailed as exc:
            report.status, report.reason = FAILED, str(exc)
        if opts.agent == "noop":
            report.floor = report.pass_hat()[1]
        else:
            ids = {task.id for task in domain.tasks}
            report.floor = await floor_from_store(desk.store, domain.name, domain.split, ids)
        report.seconds = time.perf_counter() - started
        # The run's record: its tasks and scores as they are now, whatever is written later.
        await desk.store.create_session(
            cfg.desk.entry,
            title=f"tau2 {domain.name} run {run_id}" + (" (failed)" if report.status == FAILED else ""),
            channel=CHANNEL,
            meta={RECORD: record(report, started_at, desk_text)},
        )
    if report.status == FAILED:
        raise RunFailed(f"bench run {run_id} failed, not scored: {report.reason}")
    return report


async def _play(
    desk: Any,
    domain: Domain,
    task: Any,
    trial: int,
    seed: int | None,
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
    slot.start(environment)
    current.start(task)
    agent = desk_agent(desk.runner, sid, loop, current)

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
        seed=seed,
    )
    failed = ""
    try:
        simulation = await asyncio.to_thread(orchestrator.run)
        termination = str(simulation.termination_reason.value)
    except BenchError:
        raise
    except Exception as exc:  # tau2's own runner stops the run here too (unless told to skip)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        module = type(exc).__module__.split(".")[0]
        who = "the customer simulator's server" if module in ("litellm", "openai", "httpx") else "tau2's simulation"
        failed = f"{who} failed ({type(exc).__name__}: {first})"
        termination = ""
    finally:
        slot.environment = None
    ended = agent.ended
    if not failed and ended is not None and ended.notice_kind == "provider_error":
        if ended.data.get("error") in SERVER_FAILURES:
            failed = f"the desk's model server failed ({ended.text})"
    if failed:
        reason = f"task {task.id} trial {trial}: {failed}"
        note = Notice(notice_kind="info", text=f"Not scored: {reason}", data={"bench": {**meta, "not_scored": reason}},
                      agent=cfg.desk.entry)
        await store.append(sid, [note])
        raise RunFailed(reason)
    items = await store.range(sid, 1, await store.last_seq(sid))
    reached = list(slot.reached)
    if ended is not None:
        result = Score(0.0, ENDED_BY_LIMIT, ended.text)
    else:
        result = await asyncio.to_thread(score, domain.name, task, items, reached, termination)
    # What reached tau2's environment is kept with the score: the session can be scored again.
    data = {**meta, "reward": result.reward, "failure": result.failure, "detail": result.detail,
            "termination": termination, "reached": reached}
    text = f"tau2 reward {result.reward:g}" + (f": {result.failure}" if result.failure else "")
    await store.append(sid, [Notice(notice_kind="info", text=text, data={"bench": data}, agent=cfg.desk.entry)])
    return TaskResult(task.id, trial, result.reward, sid, result.failure, result.detail)


def _customer_action(call: Any, result: Any, agent: str) -> Notice:
    """One call the customer made on their own device, stored exactly as tau2 answered it."""
    data = {"call_id": call.id, "name": call.name, "arguments": dict(call.arguments or {}),
            "output": result.content or "", "is_error": bool(result.error)}
    return Notice(notice_kind="customer_action", text=f"The customer ran {call.name} on their device.",
                  data={"customer_action": data}, agent=agent)
