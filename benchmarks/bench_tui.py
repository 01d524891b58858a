#!/usr/bin/env python
"""The TUI's size and speed bars, each figure printed beside its bar or its peer.

    python benchmarks/bench_tui.py            # 5 runs per figure
    python benchmarks/bench_tui.py --runs 3   # fewer runs

Start-up is measured as a person meets it: the real `supportdesk` command launched in a real
pseudo-terminal (160x45, `benchmarks/terminal.py`), the clock started at process launch and
stopped when the text we wait for has been drawn. The page cache is dropped before every launch
when the OS allows it (root); the output says whether it could. The peer is a bare Textual app
(one Static above a focused Input) launched the same way, alternated run by run with ours.

- open a session: `supportdesk chat --session ID` until the session's last message is on screen,
  for a 10-item and a 100,000-item session, against the bare app showing the same word.
  Bar: <= 2 x the bare app's median; 10k-style size bars on the process: <= 120 MB peak RSS.
- replay jump: in replay of the 100,000-item session, moving the cursor to a handoff until every
  pane shows it and a frame is composed, for handoffs spread over the whole session (and through
  the `]` key, posted as the terminal driver posts keys). Headless in one process: this is about
  a jump, not start-up. Bar: <= 50 ms median.
- cold start of an empty desk: `supportdesk` until the chat screen (its Handoffs pane) is drawn;
  the first interactive frame (the prompt) and the echo of a typed key are printed beside it.
  Bar: <= 1.6 x the bare app's median.

Beside each start-up figure, the CPU time both processes had used when their text showed: a busy
machine stretches wall time far more than CPU time, so that ratio is the one to read when the
wall-clock one is noise (the bars stay on wall time). Our package is compiled to bytecode first,
as `pip install` does (the peer's Textual was).

`--before DIR` also launches another copy of supportdesk (DIR holds its `supportdesk` package, as
`git archive` of an older commit gives it) the same way, alternated with ours and the bare app
in the same loops, and prints its figures beside ours: a before/after read from one run, so the
machine's load is shared alike. Its figures inform; the bars are checked on ours.

Exit status 1 if a bar is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
import shutil
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from terminal import bare_argv, drop_caches, time_to_text  # noqa: E402
from bytecode import compile_package  # noqa: E402

SIZE = (120, 40)
HANDOFF_EVERY = 50  # a handoff every 50 items: 200 stops at 10k, 2,000 at 100k
BATCH = 1_000
AGENTS = ["triage", "billing", "technical", "senior"]
# The word the last message of every benchmark session ends with, and the bare app shows.
LAST_WORD = "Zephyrquokka"
TERMINAL = (160, 45)


def _rss_mb() -> float:
    """This process's peak RSS in MB.

    VmHWM belongs to the process's own address space, which exec starts afresh; ru_maxrss
    would also count the parent's peak (Linux carries it across fork + exec), and the parent
    has just built 110,000 items.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


# --- building the sessions (parent) ---------------------------------------------------------------


def _items(n: int) -> list[Any]:
    """A realistic mix: customer and agent messages (agent text in Markdown), tool calls and
    results, context writes, and a handoff every HANDOFF_EVERY items."""
    from supportdesk.items import ContextSet, Handoff, Message, ToolCall, ToolResult

    out: list[Any] = []
    holder = "triage"
    for seq in range(1, n + 1):
        if seq % HANDOFF_EVERY == 0:
            to = AGENTS[(AGENTS.index(holder) + 1) % len(AGENTS)]
            out.append(Handoff(from_agent=holder, to_agent=to, reason=f"needs {to} (item {seq})", agent=holder))
            holder = to
        elif seq % 10 == 3:
            out.append(ToolCall(call_id=f"c{seq}", name="find_charges", arguments={"customer_id": "CUS-1001"}, agent=holder))
        elif seq % 10 == 4:
            out.append(ToolResult(call_id=f"c{seq}", name="find_charges", output='[{"id": "CH-25", "amount": 29.99}]', agent=holder))
        elif seq % 10 == 7:
            out.append(ContextSet(key=f"key{seq % 7}", value=seq, writer=holder, agent=holder))
        elif seq % 2:
            out.append(Message(role="customer", text=f"Customer line {seq}: I was charged twice, invoice #{seq % 9973}.", agent=holder))
        else:
            out.append(Message(
                role="agent",
                text=f"Thanks, I can see **two charges** on invoice #{seq % 9973}.\n\n- checking it now\n- item {seq}",
                agent=holder,
            ))
    return out


async def build(db: Path, sizes: dict[str, int]) -> None:
    from supportdesk.items import Message
    from supportdesk.store import SessionStore

    store = await SessionStore.open(db)
    try:
        for sid, n in sizes.items():
            await store.create_session("triage", session_id=sid)
            items = _items(n - 1)
            items.append(Message(role="customer", text=f"And one more thing: {LAST_WORD}", agent="triage"))
            for start in range(0, n, BATCH):
                await store.append(sid, items[start : start + BATCH])
    finally:
        await store.close()


# --- the measurements (children) ------------------------------------------------------------------


async def _until(pilot: Any, condition: Any, timeout: float = 60.0) -> None:
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the app never got there")
        await pilot.pause(0.001)


async def _frame(pilot: Any) -> None:
    """Until every queued message is handled and a frame is composed from the result.

    Not `pilot.pause()`: its idle detection sleeps in 20 ms steps, too coarse for a 50 ms bar.
    """
    for _ in range(2):  # handling messages may queue more (a mount, a refresh)
        await pilot._wait_for_screen()
        pilot.app.screen._on_timer_update()  # layout + compositor: what a refresh tick does


def _moving(app: Any) -> bool:
    """A replay move (the screen's worker) is still under way."""
    from textual.worker import WorkerState

    return any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) and w.group == "replay-move" for w in app.workers)


async def child_replay(db: str, session_id: str, jumps: int) -> dict[str, Any]:
    from textual import events

    from supportdesk.tui.app import SupportDeskApp
    from supportdesk.tui.screens.replay import ReplayScreen
    from supportdesk.tui.widgets import Conversation

    app = SupportDeskApp(db=db, config=str(REPO / "agents.toml"), replay_id=session_id)
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.total > 0
                     and app.screen.position == app.screen.total)
        await pilot.pause()
        screen = app.screen
        stops = list(screen.stops)
        rng = random.Random(4)
        targets = [stops[0], stops[len(stops) // 2], stops[-1]] + rng.sample(stops, min(jumps, len(stops)))
        times = []
        for k in targets:
            t0 = time.perf_counter()
            await screen.show_position(k)  # every pane as of handoff k ...
            await _frame(pilot)  # ... and the frame composed
            times.append(time.perf_counter() - t0)
            assert screen.position == k and screen.query_one(Conversation).holds(k), "the jump did not land"
        # The same through the key: "]" from just before a handoff, the key event posted as the
        # terminal driver would (pilot.press adds idle waits of its own).
        key_times = []
        for k in rng.sample(stops, min(10, len(stops))):
            await screen.show_position(k - 1)
            await pilot.pause()
            t0 = time.perf_counter()
            app.post_message(events.Key("right_square_bracket", "]"))
            deadline = t0 + 10
            while not (screen.position == k and screen.query_one(Conversation).holds(k) and not _moving(app)):
                assert time.perf_counter() < deadline, "the key never moved the cursor"
                # A real sleep, not sleep(0): a busy loop would hold the GIL the database thread needs.
                await asyncio.sleep(0.0005)
            await _frame(pilot)
            key_times.append(time.perf_counter() - t0)
    return {"jumps": times, "key_jumps": key_times, "stops": len(stops), "rss_mb": _rss_mb()}


def child_main(args: argparse.Namespace) -> None:
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    result = asyncio.run(child_replay(args.db, args.session, args.jumps))
    print("RESULT " + json.dumps(result), flush=True)


# --- the parent -----------------------------------------------------------------------------------


def run_child(env: dict[str, str], *argv: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, __file__, *argv],
        capture_output=True, text=True, env=env, timeout=300,
    )
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise SystemExit(f"child {argv} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")


def cpu_line(ours: list[float], bare: list[float]) -> str:
    """CPU time used until the marker showed (medians), for reading a run on a busy machine."""
    mine, peer = statistics.median(ours), statistics.median(bare)
    ratio = f"{mine / peer:.2f} x" if peer else "n/a"
    return f"CPU until then: ours {mine * 1000:.0f} ms, bare app {peer * 1000:.0f} ms, ratio {ratio} (information, no bar)"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f} ms"


def verdict(ok: bool) -> str:
    return "ok  " if ok else "MISS"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jumps", type=int, default=30)
    parser.add_argument("--before", type=Path, help="a folder holding an older supportdesk package, "
                        "launched alternately with ours for a before/after figure from one run")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    parser.add_argument("--session", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_main(args)
        return 0

    results: list[bool] = []
    with tempfile.TemporaryDirectory(prefix="bench-tui-") as tmp:
        folder = Path(tmp)
        db = folder / "desk.db"
        # The children must not read or write the user's own config and data.
        # Its own cache folder too: the first launch validates the desk file and keeps it there
        # (config.load_desk(cached=True)), later launches take it from there, as a user's do.
        env = dict(os.environ, XDG_CONFIG_HOME=str(folder / "config"), XDG_DATA_HOME=str(folder / "data"),
                   XDG_CACHE_HOME=str(folder / "cache"), TEXTUAL_ANIMATIONS="none")
        t0 = time.perf_counter()
        asyncio.run(build(db, {"s10": 10, "s100k": 100_000}))
        print(f"built 10 + 100,000 item sessions in {time.perf_counter() - t0:.1f} s "
              f"(a handoff every {HANDOFF_EVERY} items); {args.runs} runs per figure, medians\n")

        command = shutil.which("supportdesk") or str(Path(sys.executable).with_name("supportdesk"))
        print(f"bytecode: {compile_package()}\n")
        # The older copy runs through the same command, its package found first on PYTHONPATH.
        # It keeps its own validated desk: the cache holds one entry per desk file, keyed by the
        # code that validated it, so two copies sharing a folder would each miss at every launch.
        before_env = (
            dict(env, PYTHONPATH=str(args.before.resolve()), XDG_CACHE_HOME=str(folder / "cache-before"))
            if args.before
            else None
        )
        if args.before:
            print(f"before: {compile_package(args.before.resolve() / 'supportdesk')}\n")
        config = str(REPO / "agents.toml")
        cold = drop_caches()
        print(f"page cache {'dropped before every launch' if cold else 'NOT dropped (needs root): warm-cache figures'}; "
              f"terminal {TERMINAL[0]}x{TERMINAL[1]}\n")

        def launch(argv: list[str], markers: list[str], *, run_env: dict[str, str] | None = None,
                   **kw: Any) -> dict[str, float]:
            if cold:
                drop_caches()
            return time_to_text(argv, markers, env=run_env or env, size=TERMINAL, **kw)

        def before_line(times: list[float], cpu: list[float], bare_times: list[float], bare_cpu: list[float]) -> str:
            return (f"       before ({args.before}): {ms(statistics.median(times)).strip()}, ratio "
                    f"{statistics.median(times) / statistics.median(bare_times):.2f} x; "
                    f"{cpu_line(cpu, bare_cpu)}")

        # Open a session: the real command until the session's last message is drawn.
        print("open a session: launch -> its last message drawn, against the bare app drawing the same word")
        bare_open, bare_open_cpu = [], []
        opened: dict[str, list[dict[str, float]]] = {"s10": [], "s100k": []}
        opened_before: dict[str, list[dict[str, float]]] = {"s10": [], "s100k": []}
        for _ in range(args.runs):
            peer = launch(bare_argv(LAST_WORD), [LAST_WORD])
            bare_open.append(peer[LAST_WORD])
            bare_open_cpu.append(peer[f"cpu:{LAST_WORD}"])
            for sid in opened:
                argv = [command, "chat", "--session", sid, "--db", str(db), "--config", config]
                opened[sid].append(launch(argv, [LAST_WORD]))
                if before_env:
                    opened_before[sid].append(launch(argv, [LAST_WORD], run_env=before_env))
        bare_median = statistics.median(bare_open)
        for sid, label in (("s10", "10-item"), ("s100k", "100,000-item")):
            times = [r[LAST_WORD] for r in opened[sid]]
            ratio = statistics.median(times) / bare_median
            ok = ratio <= 2.0
            results.append(ok)
            print(f"  {verdict(ok)} {label:<13} {ms(statistics.median(times))}   bare app {ms(bare_median)}   "
                  f"ratio {ratio:.2f} x   bar <= 2.00 x   (runs {', '.join(f'{t * 1000:.0f}' for t in times)} ms)")
            print(f"       {cpu_line([r[f'cpu:{LAST_WORD}'] for r in opened[sid]], bare_open_cpu)}")
            if before_env:
                print(before_line([r[LAST_WORD] for r in opened_before[sid]],
                                  [r[f"cpu:{LAST_WORD}"] for r in opened_before[sid]], bare_open, bare_open_cpu))
        rss = max(r["rss_mb"] for r in opened["s100k"])
        ok = rss <= 120
        results.append(ok)
        print(f"  {verdict(ok)} 100,000-item peak RSS {rss:6.1f} MB   bar <= 120.0 MB")

        # Replay: jump to handoffs of the 100k session.
        replay = run_child(env, "--child", "replay", "--db", str(db), "--session", "s100k", "--jumps", str(args.jumps))
        jumps, keys = replay["jumps"], replay["key_jumps"]
        print(f"\nreplay of the 100k session ({replay['stops']} handoffs): jump to a handoff, all panes redrawn")
        ok = statistics.median(jumps) <= 0.050
        results.append(ok)
        print(f"  {verdict(ok)} jump   median {ms(statistics.median(jumps))}  max {ms(max(jumps))}   bar <= 50.0 ms"
              f"   ({len(jumps)} jumps to handoffs anywhere in the session; verdict on the median)")
        ok = statistics.median(keys) <= 0.050
        results.append(ok)
        print(f"  {verdict(ok)} ']'    median {ms(statistics.median(keys))}  max {ms(max(keys))}   bar <= 50.0 ms"
              f"   (the key, from the item before a handoff to the frame at it)")
        print(f"       replay process RSS {replay['rss_mb']:.1f} MB")

        # Cold start of an empty desk, ours and the bare app alternated.
        cold_db = folder / "cold.db"
        ours, first, echo, bare, bare_echo, ours_cpu, bare_cpu = [], [], [], [], [], [], []
        cold_before: list[dict[str, float]] = []
        for _ in range(args.runs):
            peer = launch(bare_argv("bare Textual app"), ["bare Textual app"], type_after="zq")
            bare.append(peer["bare Textual app"])
            bare_cpu.append(peer["cpu:bare Textual app"])
            bare_echo.append(peer["echo"])
            cold_db.unlink(missing_ok=True)
            result = launch([command, "--db", str(cold_db), "--config", config],
                            ["Write as the customer", "Handoffs"], type_after="zq")
            first.append(result["Write as the customer"])
            if before_env:
                cold_db.unlink(missing_ok=True)
                cold_before.append(launch([command, "--db", str(cold_db), "--config", config],
                                          ["Write as the customer", "Handoffs"], type_after="zq", run_env=before_env))
            ours.append(result["Handoffs"])
            ours_cpu.append(result["cpu:Handoffs"])
            echo.append(result["echo"])
        ratio = statistics.median(ours) / statistics.median(bare)
        print("\ncold start of an empty desk: launch -> the chat screen drawn")
        ok = ratio <= 1.6
        results.append(ok)
        print(f"  {verdict(ok)} ours {ms(statistics.median(ours))}  bare Textual app {ms(statistics.median(bare))}"
              f"   ratio {ratio:.2f} x   bar <= 1.60 x")
        print(f"       {cpu_line(ours_cpu, bare_cpu)}")
        if before_env:
            print(before_line([r["Handoffs"] for r in cold_before], [r["cpu:Handoffs"] for r in cold_before], bare, bare_cpu))
        print(f"       runs ours: {', '.join(f'{t * 1000:.0f}' for t in ours)} ms; "
              f"bare: {', '.join(f'{t * 1000:.0f}' for t in bare)} ms")
        print(f"       first interactive frame (the prompt) at {ms(statistics.median(first)).strip()}; "
              f"a typed key echoes in {ms(statistics.median(echo)).strip()} (bare {ms(statistics.median(bare_echo)).strip()})")

    missed = results.count(False)
    print(f"\n{len(results) - missed} of {len(results)} bars met" + (f", {missed} missed" if missed else ""))
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
