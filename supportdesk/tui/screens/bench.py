"""The bench screen: stored tau2-bench runs, their tasks with reward and why a task failed,
and a failed task's session in replay with the task's gold actions beside the steps.

Runs are a fold over the stored sessions (`bench.runs`), read without tau2; the gold actions
need tau2's task data, loaded in a thread only when a task is opened. Task text and tool
arguments are data: built as `rich.text.Text`, never markup.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Static

from supportdesk.bench.runs import StoredRun, list_runs
from supportdesk.items import Item
from supportdesk.text import safe_text
from supportdesk.tui.projection import Snapshot, advance
from supportdesk.tui.screens import replay as replay_module
from supportdesk.tui.screens.replay import ReplayScreen
from supportdesk.tui.widgets.footer import DeskFooter


def _cell(text: str, width: int = 0) -> Text:
    flat = " ".join(safe_text(text).split())
    if width and len(flat) > width:
        flat = flat[: width - 1] + "…"
    return Text(flat)


class BenchScreen(Screen[None]):
    CSS_PATH = "bench.tcss"
    BINDINGS = [
        Binding("escape,q", "close", "Close"),
        Binding("r", "reload", "Reload"),
        Binding("tab", "app.focus_next", "Runs/tasks", show=False),
    ]

    def __init__(self, desk: Any, look: Any):
        super().__init__()
        self.desk = desk
        self.look = look
        self.runs: list[StoredRun] = []
        self.shown: StoredRun | None = None

    def compose(self) -> ComposeResult:
        yield Static("tau2-bench runs · newest first", id="bench-title", markup=False)
        runs: DataTable[str] = DataTable(id="runs", cursor_type="row", zebra_stripes=True)
        runs.border_title = "Runs"
        yield runs
        tasks: DataTable[str] = DataTable(id="tasks", cursor_type="row", zebra_stripes=True)
        tasks.border_title = "Tasks · Enter replays a task beside its gold actions"
        yield tasks
        yield DeskFooter()

    def on_mount(self) -> None:
        runs = self.query_one("#runs", DataTable)
        runs.add_columns("Run", "Started", "Domain", "Desk", "Agent", "Tasks", "Trials", "pass^1", "Failed")
        tasks = self.query_one("#tasks", DataTable)
        tasks.add_columns("Task", "Trial", "Reward", "Why it failed", "Session")
        self.load()
        runs.focus()

    @work(exclusive=True, group="bench-load")
    async def load(self) -> None:
        self.runs = await list_runs(self.desk.store)
        table = self.query_one("#runs", DataTable)
        table.clear()
        for run in self.runs:
            report = run.report()
            table.add_row(
                _cell(run.run_id),
                _cell(run.started[:16].replace("T", " ")),
                _cell(run.domain),
                _cell(run.desk),
                _cell(run.agent),
                Text(str(len({r.task_id for r in run.results}))),
                Text(str(run.trials)),
                # A failed run (a server or the simulator failed) has no score to show.
                Text("failed", style="bold") if run.status == "failed" else Text(f"{report.pass_hat().get(1, 0.0):.3f}"),
                Text(str(len(report.failed()))),
                key=run.run_id,
            )
        if not self.runs:
            self.query_one("#bench-title", Static).update(
                "No bench runs in this database: supportdesk bench tau2 --domain retail --agent gold"
            )
            self.query_one("#tasks", DataTable).clear()
            return
        self.show_run(self.runs[0])

    @on(DataTable.RowHighlighted, "#runs")
    def run_highlighted(self, event: DataTable.RowHighlighted) -> None:
        chosen = next((r for r in self.runs if r.run_id == event.row_key.value), None)
        if chosen is not None and chosen is not self.shown:
            self.show_run(chosen)

    def show_run(self, run: StoredRun) -> None:
        self.shown = run
        table = self.query_one("#tasks", DataTable)
        table.clear()
        # Failed tasks first: they are what the screen is for.
        results = sorted(run.report().results, key=lambda r: (r.reward >= 1.0, r.trial))
        for result in results:
            why = f"{result.failure}: {result.detail}" if result.detail else result.failure
            table.add_row(
                _cell(result.task_id),
                Text(str(result.trial)),
                Text(f"{result.reward:g}", style="bold" if result.reward < 1.0 else "dim"),
                _cell(why, 60),
                _cell(result.session_id),
                key=f"{result.session_id}",
            )
        self.query_one("#bench-title", Static).update(
            safe_text(f"tau2 {run.domain} · desk {run.desk} · agent {run.agent} · {run.package} · run {run.run_id}")
        )

    @on(DataTable.RowSelected, "#tasks")
    def open_task(self, event: DataTable.RowSelected) -> None:
        run = self.shown
        if run is None:
            return
        result = next((r for r in run.results if r.session_id == event.row_key.value), None)
        if result is not None:
            self.app.push_screen(GoldReplayScreen(self.desk, self.look, result.session_id, run.domain, result.task_id))

    def action_reload(self) -> None:
        self.shown = None
        self.load()

    def action_close(self) -> None:
        self.dismiss()


def _gold_actions(domain: str, task_id: str) -> list[Any]:
    from supportdesk.bench.tau2env import load_domain

    return list(load_domain(domain, "base", [task_id]).tasks[0].evaluation_criteria.actions or [])


class GoldActions(Static):
    """The task's gold actions as of the cursor: ✓ for a gold action the session made by then
    (same tool, same arguments), ▶ for the next one. A pane (`projection.Pane`) of the replay."""

    def __init__(self, store: Any, task_id: str) -> None:
        super().__init__(Text("loading the task's gold actions…", style="dim"), id="gold", markup=False)
        self.border_title = f"Gold actions · task {task_id}"
        self.store = store
        self.gold: list[Any] | None = None
        self.problem = ""
        self.snapshot: Snapshot | None = None

    async def show(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        await self._paint()

    async def extend(self, items: Sequence[Item]) -> None:
        if self.snapshot is not None:
            await self.show(advance(self.snapshot, items))

    async def set_gold(self, gold: list[Any] | None, problem: str = "") -> None:
        self.gold, self.problem = gold, problem
        await self._paint()

    async def _paint(self) -> None:
        if self.gold is None:
            if self.problem:
                self.update(Text(self.problem, style="dim"))
            return  # still loading: the loading line stays
        shown = self.snapshot
        if shown is None or shown.session_id is None:
            return
        calls = await self.store.of_kind(shown.session_id, "tool_call", upto=shown.position)
        made = [(c.name, json.dumps(c.arguments, sort_keys=True)) for c in calls]
        text = Text()
        next_marked = False
        for i, action in enumerate(self.gold, 1):
            key = (action.name, json.dumps(action.arguments, sort_keys=True))
            if key in made:
                made.remove(key)
                mark, style = "✓", "green"
            elif not next_marked:
                mark, style, next_marked = "▶", "bold", True
            else:
                mark, style = "·", "dim"
            args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in action.arguments.items())
            text.append(f"{mark} {i}. ", style=style)
            text.append(safe_text(action.name), style=style)
            text.append(safe_text(f"({args})\n"), style="dim" if mark == "✓" else "")
        if not self.gold:
            text.append("this task has no gold actions", style="dim")
        self.update(text)


class GoldReplayScreen(ReplayScreen):
    """Replay of a bench session with the task's gold actions beside the steps (`GoldActions`)."""

    CSS_PATH = [Path(replay_module.__file__).with_name("replay.tcss"), "bench.tcss"]

    def __init__(self, desk: Any, look: Any, session_id: str, domain: str, task_id: str):
        super().__init__(desk, look, session_id, None)
        self.domain = domain
        self.task_id = task_id
        self.gold: list[Any] | None = None
        self.gold_problem = ""

    async def on_mount(self) -> None:
        # The gold pane goes in the side column, above the timeline: beside the conversation.
        await self.query_one("#side").mount(GoldActions(self.store, self.task_id), before=0)
        await super().on_mount()
        self.load_gold()

    @work(exclusive=True, group="gold")
    async def load_gold(self) -> None:
        try:
            self.gold = await asyncio.to_thread(_gold_actions, self.domain, self.task_id)
        except Exception as exc:  # tau2 missing or broken: the replay still works
            self.gold_problem = f"gold actions unavailable: {exc}"
        await self.query_one(GoldActions).set_gold(self.gold, self.gold_problem)
