"""Fixed data for the TUI tests: the seed's double-charge conversation, appended to a real store;
and the harness they share: the app on a seeded desk with a fixed clock, and waits on state.

Everything is deterministic (fixed clock, fixed session id) so snapshots are stable.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from supportdesk.config import load_desk
from supportdesk.wiring import open_desk
from supportdesk.items import ContextSet, Handoff, Message, Notice, ToolCall, ToolResult
from tests.conftest import REPO, make_test_tools
from tests.scripted import ScriptedModel

FIXED = datetime(2026, 3, 3, 10, 0, tzinfo=timezone.utc)
SEED_ID = "dc0001seed00"


def fixed_clock(start: datetime = FIXED, step: timedelta = timedelta(seconds=7)):
    """A clock that ticks a fixed amount per call: stable, yet every step has its own time."""
    now = [start]

    def clock() -> datetime:
        value = now[0]
        now[0] = value + step
        return value

    return clock


async def repo_desk(db_path, script=(), **model_kw):
    """The repo's own desk (real titles, colours, levels) with a scripted model and no network."""
    tools, _ = make_test_tools()
    config = load_desk(REPO / "agents.toml")
    desk = await open_desk(db_path, config, provider=ScriptedModel(list(script), **model_kw), tools=tools, customers=False)
    desk.store.clock = fixed_clock()
    return desk


async def scripted_desk(db_path, config, script=(), **model_kw):
    tools, refunds = make_test_tools()
    model = ScriptedModel(list(script), **model_kw)
    desk = await open_desk(db_path, config, provider=model, tools=tools, customers=False)
    desk.store.clock = fixed_clock()
    return desk, model, refunds


def _usage(i: int, o: int) -> dict:
    return {"usage": {"input_tokens": i, "output_tokens": o, "reported": True}}


async def seed_double_charge(store, session_id: str = SEED_ID) -> str:
    """Triage hears about a double charge, hands to Billing, Billing refunds the duplicate."""
    await store.create_session("triage", session_id=session_id)
    steps = [
        [Message(role="customer", agent="triage", text="Hi, I was charged twice for my Pro plan this month "
                 "(March 1 and March 3). My email is dana@example.com.")],
        [
            ContextSet(key="customer_email", value="dana@example.com", writer="triage", agent="triage"),
            ContextSet(key="issue", value="duplicate charge", writer="triage", agent="triage"),
            Message(role="agent", agent="triage", text="Thanks, Dana. I'm passing you to **Billing**, who can check those charges."),
            Handoff(from_agent="triage", to_agent="billing", reason="duplicate charge on the March invoice",
                    handoff_kind="route", agent="triage", meta=_usage(412, 38)),
        ],
        [
            ToolCall(call_id="c1", name="find_customer", arguments={"email": "dana@example.com"}, agent="billing",
                     meta=_usage(630, 22)),
            ToolResult(call_id="c1", name="find_customer", agent="billing",
                       output='{"id": "CUS-1001", "name": "Dana Whitfield", "plan": "pro"}'),
            ContextSet(key="customer_id", value="CUS-1001", writer="billing", agent="billing"),
        ],
        [
            ToolCall(call_id="c2", name="find_charges", arguments={"customer_id": "CUS-1001", "month": "2026-03"},
                     agent="billing", meta=_usage(702, 25)),
            ToolResult(call_id="c2", name="find_charges", agent="billing",
                       output='[{"id": "CH-25", "amount": 29.0, "charged_on": "2026-03-01"}, '
                              '{"id": "CH-26", "amount": 29.0, "charged_on": "2026-03-03"}]'),
        ],
        [
            ToolCall(call_id="c3", name="refund_charge", arguments={"charge_id": "CH-26", "reason": "duplicate"},
                     agent="billing", meta=_usage(788, 24)),
            ToolResult(call_id="c3", name="refund_charge", agent="billing",
                       output='{"refund_id": "RF-1", "charge_id": "CH-26", "amount": 29.0, "status": "refunded"}'),
            ContextSet(key="refund", value={"charge_id": "CH-26", "amount": 29.0}, writer="billing", agent="billing"),
        ],
        [
            Message(role="agent", agent="billing", meta=_usage(860, 71), text=(
                "I found two identical charges of **$29.00** for March (CH-25 on March 1 and CH-26 on March 3). "
                "I've refunded the duplicate:\n\n- refund **RF-1** for CH-26\n- back on your card in 5-10 business days\n\n"
                "Is there anything else I can help with?")),
        ],
    ]
    for step in steps:
        await store.append(session_id, step)
    return session_id


async def seed_long(store, session_id: str, n: int, handoff_every: int = 10) -> str:
    """A long session: customer/agent messages with a handoff every `handoff_every` items."""
    await store.create_session("triage", session_id=session_id)
    agents = ["triage", "billing", "technical", "senior"]
    batch, holder = [], "triage"
    for seq in range(1, n + 1):
        if seq % handoff_every == 0:
            to = agents[(seq // handoff_every) % len(agents)]
            if to == holder:
                to = agents[(agents.index(to) + 1) % len(agents)]
            batch.append(Handoff(from_agent=holder, to_agent=to, reason=f"step {seq}", agent=holder))
            holder = to
        elif seq % handoff_every == 5:
            batch.append(ContextSet(key=f"k{seq % 3}", value=seq, writer=holder, agent=holder))
        elif seq % 2:
            batch.append(Message(role="customer", text=f"customer line {seq}", agent=holder))
        else:
            batch.append(Message(role="agent", text=f"agent line {seq}", agent=holder))
        if len(batch) >= 500:
            await store.append(session_id, batch)
            batch = []
    if batch:
        await store.append(session_id, batch)
    return session_id


def approval_notice(agent: str = "senior") -> Notice:
    return Notice(notice_kind="approval_requested", text="Senior asks staff to approve refund: refund of $300.00",
                  data={"approval_id": "ap1", "tool": "refund", "arguments": {"amount": 300}}, agent=agent)


# How long a test waits for a state before it fails. Generous: a loaded two-core machine runs
# these several times slower than a quiet one, and a test that passes never waits this long.
WAIT_LIMIT = 90.0


def _waiting_tasks() -> str:
    """Where each of our tasks is waiting: a test that gave up says what the app was stuck on."""
    lines = []
    for task in asyncio.all_tasks():
        chain, ours, awaited = [], False, task.get_coro()
        while awaited is not None and len(chain) < 60:  # a coroutine, what it awaits, and so on
            frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "ag_frame", None)
            if frame is not None:
                ours = ours or "/supportdesk/" in frame.f_code.co_filename
                chain.append(f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno} {frame.f_code.co_name}")
            awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "ag_await", None)
        if ours:
            lines.append(f"  {task.get_name()}: " + " -> ".join(chain))
    return "tasks of ours still waiting:\n" + "\n".join(lines) if lines else "no task of ours is waiting"


def _app_state(app: Any) -> str:
    """The app's workers (running, cancelled, failed) and the notes it showed: with the tasks,
    what a test that gave up needs to tell a lost event from a stuck one."""
    workers = [f"  {w.group}/{w.name}: {w.state.name}{f' ({w.error!r})' if w.error else ''}" for w in app.workers]
    notes = [f"  {n.severity}: {n.message}" for n in app._notifications]
    return "workers:\n" + ("\n".join(workers) or "  none") + "\nnotifications:\n" + ("\n".join(notes) or "  none")


async def until(pilot, condition, *, limit: float = WAIT_LIMIT, settle_workers: bool = False) -> None:
    """Let the app run until `condition()` holds: bounded progress, not a timing check.

    `settle_workers` also lets the app's running workers finish between looks (screens that
    load in workers, such as the browser)."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"the app never reached the expected state\n{_waiting_tasks()}\n{_app_state(pilot.app)}")
        await pilot.pause(0.02)
        if settle_workers:
            await pilot.app.workers.wait_for_complete()


def _layout(app) -> tuple:
    """What a snapshot of the screen depends on beyond its text: every scrollable's size,
    content size and scroll position."""
    return tuple(
        (id(w), w.size, w.virtual_size, w.scroll_offset) for w in app.screen.query("*") if w.is_scrollable
    )


async def layout_settled(pilot, *, looks: int = 3, limit: float = WAIT_LIMIT) -> None:
    """Let the app run until its layout stays the same for `looks` looks in a row: a wrapped
    line measured late or a page loaded above moves a scrollbar after the text is drawn, and
    a snapshot taken then differs from one taken a moment later."""
    deadline = time.monotonic() + limit
    previous, same = None, 0
    while same < looks:
        if time.monotonic() > deadline:
            raise AssertionError("the screen's layout never settled")
        await pilot.pause(0.05)
        current = _layout(pilot.app)
        same = same + 1 if current == previous else 0
        previous = current


async def seed_file(path, extra=()):
    """A database file holding the double-charge session, then `extra` items appended to it
    (for apps that open their own desk); the desk that wrote it is closed."""
    desk = await repo_desk(path)
    try:
        await seed_double_charge(desk.store)
        if extra:
            await desk.store.append(SEED_ID, list(extra))
    finally:
        await desk.close()
    return path


def seeded_file(path, extra=()):
    """`seed_file` for synchronous tests (snapshot tests run outside an event loop)."""
    import asyncio

    return asyncio.run(seed_file(path, extra))


# --- the app, on a seeded desk, with a fixed clock; and waiting until a screen has loaded ----------
# Imported inside the functions: tests.inbox_seed runs as a writer process and imports this
# module, and it must not pay for the TUI's imports.


def inbox_app(desk):
    """The app opening on the inbox of `desk`, its clock fixed at INBOX_NOW (what waits are
    counted from), so every row's "waited" is the same on every run."""
    from supportdesk.tui.app import SupportDeskApp
    from tests.inbox_seed import INBOX_NOW

    app = SupportDeskApp(desk=desk, inbox=True)
    app.clock = lambda: INBOX_NOW
    return app


@dataclass
class SeededInbox:
    """A scripted desk holding the inbox's four conversations, the app on its inbox, and the
    pilot driving it once the inbox lists all four."""

    desk: Any
    model: ScriptedModel
    refunds: list[float]
    ids: dict[str, str]
    app: Any
    pilot: Any
    screen: Any


@asynccontextmanager
async def seeded_inbox(db_path, config, script=(), *, extra=None, size=(140, 30)) -> AsyncIterator[SeededInbox]:
    """`scripted_desk` seeded by `seed_desk_states` (then `extra`: items to append, by
    conversation name), `inbox_app` on it run at `size`, yielded once its inbox lists the four
    conversations; the desk is closed after the app, even on failure."""
    from tests.inbox_seed import seed_desk_states

    desk, model, refunds = await scripted_desk(db_path, config, script)
    try:
        ids = await seed_desk_states(desk.store)
        for name, items in (extra or {}).items():
            await desk.store.append(ids[name], list(items))
        app = inbox_app(desk)
        async with app.run_test(size=size) as pilot:
            screen = await inbox_loaded(pilot, rows=len(ids))
            yield SeededInbox(desk, model, refunds, ids, app, pilot, screen)
    finally:
        await desk.close()


async def chat_loaded(pilot, session_id: str | None = None) -> None:
    """Wait until the chat screen is up and, given a session id, has loaded that session."""
    app = pilot.app
    await until(pilot, lambda: app.chat is not None and (session_id is None or app.chat.loaded == session_id))


async def inbox_loaded(pilot, *, rows: int | None = None, loads: int = 1):
    """Wait until the inbox is the screen, has read the store `loads` times and, given `rows`,
    lists that many conversations; returns the inbox screen."""
    from supportdesk.tui.screens.inbox import InboxScreen

    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, InboxScreen) and app.screen.loads >= loads
                and (rows is None or len(app.screen.shown) == rows))
    return app.screen
