"""One turn at a time per session, and the change feed, with real OS processes on both adapters.

8 processes appending to one session; 8 processes running turns with the offline desk on one
session; a turn holder SIGKILLed while the others wait; distinct sessions never waiting; a
second process's append reaching a follower through the feed.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

from supportdesk.items import Item, Message
from supportdesk.store import Change, Store, open_store

HERE = Path(__file__).resolve().parent
WRITER = HERE / "store_writer.py"
WORKER = HERE / "turn_worker.py"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and POSIX processes")

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def where(request, tmp_path: Path) -> str:
    return str(tmp_path / "desk.db") if request.param == "sqlite" else request.getfixturevalue("pg_url")


def run(coro):
    return asyncio.run(coro)


async def _new_session(where: str) -> str:
    async with await open_store(where) as store:
        return (await store.create_session("triage")).id


async def _read_log(where: str, sid: str) -> tuple[list[Item], str]:
    async with await open_store(where) as store:
        info = await store.get_session(sid)
        assert info is not None
        items = await store.range(sid, 1, info.item_count)
        assert len(items) == info.item_count
        return items, info.active_agent


def start(cmd: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, *cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_line(proc: subprocess.Popen[str], wanted: str) -> list[str]:
    assert proc.stdout is not None
    seen = []
    while True:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"process ended before {wanted!r}: {seen} {proc.stderr.read() if proc.stderr else ''}")
        seen.append(line.strip())
        if line.strip() == wanted:
            return seen


def finish(proc: subprocess.Popen[str], timeout: float = 240) -> list[str]:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return out.splitlines()


# --- appends ---------------------------------------------------------------------------------


def test_eight_processes_append_to_one_session(where: str, tmp_path: Path):
    sid = run(_new_session(where))
    go = tmp_path / "go"
    writers = [start([str(WRITER), where, sid, str(w), "120", "--sizes", "1,2,3,4", "--start", str(go)]) for w in range(8)]
    for proc in writers:
        wait_for_line(proc, "ready")
    go.touch()
    for proc in writers:
        assert finish(proc)[-1] == "committed 119"

    items, _ = run(_read_log(where, sid))
    assert [i.seq for i in items] == list(range(1, 8 * 300 + 1)), "seq 1..2400: no gap, no duplicate"
    per_writer: dict[int, list[int]] = defaultdict(list)
    batches: dict[tuple[int, int], list[int]] = defaultdict(list)
    for item in items:
        per_writer[item.meta["writer"]].append(item.meta["n"])
        batches[(item.meta["writer"], item.meta["batch"])].append(item.seq)
    assert all(counters == list(range(1, 301)) for counters in per_writer.values()), "each writer's order kept"
    for seqs in batches.values():
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "a batch is contiguous"
    switches = sum(1 for a, b in zip(items, items[1:]) if a.meta["writer"] != b.meta["writer"])
    assert switches > 8, "the writers really interleaved"


# --- turns -----------------------------------------------------------------------------------


def check_turns(
    items: list[Item],
    active_agent: str,
    entry: str = "triage",
    unanswered: set[str] = frozenset(),
) -> list[str]:
    """The log is whole turns one after another; returns the customer messages in order.

    Every turn starts with its customer message and holds no other; every turn except those
    labelled in `unanswered` ("worker W turn T") ends with an agent's answer; every handoff starts from the agent holding
    the conversation, every agent message and tool call is written by it, and the session's
    active agent is the last handoff's target."""
    assert [i.seq for i in items] == list(range(1, len(items) + 1))
    turns: list[list[Item]] = []
    for item in items:
        if item.kind == "message" and item.role == "customer":
            turns.append([item])
        else:
            assert turns, f"item {item.seq} before any customer message"
            turns[-1].append(item)
    holder = entry
    for turn in turns:
        said = turn[0].text
        last = turn[-1]
        if said.split(":")[0] not in unanswered:
            assert last.kind == "message" and last.role == "agent", f"{said!r} was not answered: ends with {last}"
        for item in turn[1:]:
            if item.kind == "handoff":
                assert item.from_agent == holder, f"handoff {item.seq} from {item.from_agent} while {holder} held it"
                holder = item.to_agent
            elif item.kind in ("tool_call", "tool_result") or (item.kind == "message" and item.role == "agent"):
                assert item.agent == holder, f"{item.kind} {item.seq} by {item.agent} while {holder} held it"
    assert active_agent == holder
    customers = [t[0].text for t in turns]
    assert len(customers) == len(set(customers)), "no customer message twice"
    return customers


def test_eight_processes_run_turns_on_one_session_one_at_a_time(where: str, tmp_path: Path):
    sid = run(_new_session(where))
    go = tmp_path / "go"
    turns = 3
    workers = [start([str(WORKER), where, sid, str(w), str(turns), "--start", str(go)]) for w in range(8)]
    for proc in workers:
        wait_for_line(proc, "ready")
    go.touch()
    outputs = [finish(proc) for proc in workers]
    for out in outputs:
        assert [line for line in out if line.startswith("turn ")][-1].startswith(f"turn {turns - 1} done")
    assert any("waiting" in out for out in outputs), "turns really met (the test would prove little otherwise)"

    items, active = run(_read_log(where, sid))
    customers = check_turns(items, active)
    assert len(customers) == 8 * turns
    assert {c.split(":")[0] for c in customers} == {f"worker {w} turn {t}" for w in range(8) for t in range(turns)}


def test_a_message_a_web_worker_receives_is_stored_at_once_and_answered_once(where: str, tmp_path: Path):
    """Issue 32: `Runner.receive` (the web channel's "stored, 202") does not wait for the turn
    lease: a message that arrives while another process is between the steps of a turn is stored
    at once, inside that turn; the turn's later steps, or the web worker's own turn after it
    (`resume`: only an unanswered message), answer it, and nobody answers it twice."""
    from supportdesk.engine.events import seen_upto

    sid = run(_new_session(where))
    gate = tmp_path / "gate"
    turn_holder = start([str(WORKER), where, sid, "0", "1", "--pause-turn", "0", "--gate", str(gate)])
    wait_for_line(turn_holder, "paused")  # its first step is in the log and it holds the lease
    web = start([str(WORKER), where, sid, "1", "1", "--receive"])
    assert web.stdout is not None
    line = web.stdout.readline().strip()
    while line == "ready":
        line = web.stdout.readline().strip()
    assert line == "received", f"the web message waited for the lease ({line!r}) instead of being stored"
    items, _ = run(_read_log(where, sid))
    assert items[-1].kind == "message" and items[-1].role == "customer" and items[-1].text.startswith("worker 1 turn 0")
    gate.touch()  # the turn goes on
    assert finish(turn_holder)[-1].startswith("turn 0 done")
    assert finish(web)[-1].startswith("turn 0 done")

    items, _ = run(_read_log(where, sid))
    customers = [i for i in items if i.kind == "message" and i.role == "customer"]
    assert [c.text.split(":")[0] for c in customers] == ["worker 0 turn 0", "worker 1 turn 0"]
    answered: set[int] = set()
    for at, item in enumerate(items):
        following = items[at + 1] if at + 1 < len(items) else None
        if item.kind != "message" or item.role != "agent" or (following is not None and following.kind == "handoff"):
            continue
        saw = seen_upto(item)
        assert saw is not None
        new = {c.seq for c in customers if c.seq <= saw} - answered
        assert new, f"answer {item.seq} answers no message that was not answered already"
        answered |= new
    assert answered == {c.seq for c in customers}, "every message answered"


def test_a_turn_holder_killed_mid_turn_loses_the_lease_and_the_session_goes_on(where: str, tmp_path: Path):
    sid = run(_new_session(where))
    go = tmp_path / "go"
    # the victim's first turn stalls in the model call: it holds the lease when it is killed
    victim = start([str(WORKER), where, sid, "9", "3", "--stall-turn", "0", "--lease-ttl", "1.5"])
    wait_for_line(victim, "stalled")
    others = [start([str(WORKER), where, sid, str(w), "2", "--start", str(go), "--lease-ttl", "1.5"]) for w in range(3)]
    for proc in others:
        wait_for_line(proc, "ready")
    go.touch()
    # Each of the others finds the lease held by the stalled victim and says "waiting": killed
    # only then, the victim holds it while they wait.
    waited = [wait_for_line(proc, "waiting") for proc in others]
    os.kill(victim.pid, signal.SIGKILL)
    victim.communicate(timeout=30)
    assert victim.returncode == -signal.SIGKILL
    outputs = [before + finish(proc, timeout=120) for before, proc in zip(waited, others)]
    assert all(out[-1].startswith("turn 1 done") for out in outputs)

    items, active = run(_read_log(where, sid))
    customers = check_turns(items, active, unanswered={"worker 9 turn 0"})
    assert customers[0].startswith("worker 9 turn 0:"), "the killed turn's committed customer message is kept"
    # Exactly the victim's message and every one a worker was told was answered. On a loaded
    # machine a worker descheduled past the 1.5 s lease is fenced off before its message is
    # stored (it is told: "lease lost") and goes on with its next turn.
    done = [line.split(" done")[0] for out in outputs for line in out if line.startswith("turn ") and " done" in line]
    assert len(customers) == 1 + len(done)


def test_a_holder_stopped_past_its_lease_is_fenced_off_when_it_resumes(where: str, tmp_path: Path):
    """Issue 32: SIGSTOP a holder mid-turn past its lease, let another process take the turn,
    SIGCONT: the first holder's next append is refused (it says so and stops), and nothing of
    it lands after the other's turn."""
    sid = run(_new_session(where))
    gate = tmp_path / "gate"
    victim = start([str(WORKER), where, sid, "9", "1", "--pause-turn", "0", "--gate", str(gate), "--lease-ttl", "1.5"])
    wait_for_line(victim, "paused")  # its first step is in the log; it holds the lease
    os.kill(victim.pid, signal.SIGSTOP)
    try:
        other = start([str(WORKER), where, sid, "1", "1", "--lease-ttl", "1.5"])
        out = finish(other, timeout=60)
        assert out[-1].startswith("turn 0 done")  # the lease ran out while it started: maybe no wait
        items_after_other, _ = run(_read_log(where, sid))
        gate.touch()
    finally:
        os.kill(victim.pid, signal.SIGCONT)
    said = finish(victim, timeout=60)
    assert any(line.startswith("lease lost: ") for line in said), said
    assert not any(line.startswith("turn 0 done") for line in said)
    items, active = run(_read_log(where, sid))
    assert len(items) == len(items_after_other), "the fenced-off holder wrote nothing after the other's turn"
    customers = check_turns(items, active)
    assert [c.split(":")[0] for c in customers] == ["worker 9 turn 0", "worker 1 turn 0"]


def test_a_killed_holder_on_this_machine_does_not_block_the_session_for_its_ttl(where: str, tmp_path: Path):
    """Issue 32: the lease lives 120 s without renewal, yet a SIGKILLed holder's session goes on
    at once: its pid is gone (SQLite), its backend is gone (PostgreSQL)."""
    sid = run(_new_session(where))
    victim = start([str(WORKER), where, sid, "9", "1", "--stall-turn", "0", "--lease-ttl", "120"])
    wait_for_line(victim, "stalled")
    os.kill(victim.pid, signal.SIGKILL)
    victim.communicate(timeout=30)
    started = time.monotonic()
    other = start([str(WORKER), where, sid, "1", "1", "--lease-ttl", "120"])
    out = finish(other, timeout=60)
    assert out[-1].startswith("turn 0 done")
    assert time.monotonic() - started < 60, "waited out the dead holder's lease"
    items, active = run(_read_log(where, sid))
    check_turns(items, active)


def test_turns_on_distinct_sessions_never_wait(where: str, tmp_path: Path):
    go = tmp_path / "go"
    workers = [start([str(WORKER), where, "-", str(w), "3", "--start", str(go)]) for w in range(4)]
    sessions = []
    for proc in workers:
        sessions.append(wait_for_line(proc, "ready")[0].split()[1])
    go.touch()
    outputs = [finish(proc) for proc in workers]
    assert all("waiting" not in out for out in outputs)
    for sid in sessions:
        items, active = run(_read_log(where, sid))
        assert len(check_turns(items, active)) == 3


# --- the lease in one process ------------------------------------------------------------------


async def test_the_lease_is_one_holder_per_session_and_sessions_are_independent(where: str):
    async with await open_store(where) as store:
        a = (await store.create_session("triage")).id
        b = (await store.create_session("triage")).id
        first, second, other = store.turn(a), store.turn(a), store.turn(b)
        assert await first.try_acquire()
        assert not await second.try_acquire()
        assert await other.try_acquire(), "another session's turn does not wait"
        refused = asyncio.Event()
        try_acquire = second.try_acquire

        async def tried() -> bool:  # the waiter's own attempt, seen refused while `first` holds it
            taken = await try_acquire()
            if not taken:
                refused.set()
            return taken

        second.try_acquire = tried
        waiting = asyncio.create_task(second.acquire())
        await asyncio.wait_for(refused.wait(), 10)
        assert not waiting.done()  # refused, it waits (it did not go on as if it held the lease)
        await first.release()
        await asyncio.wait_for(waiting, 10)
        assert second.held and second.waited > 0
        await second.release()
        await other.release()
        async with store.turn(a):  # free again
            pass


async def test_an_append_fenced_by_a_lease_another_holder_took_is_refused(where: str):
    """The store contract's fencing: an append carries its lease's token and is refused, with
    nothing written, once another holder took the session (here: the first stopped renewing)."""
    from supportdesk.store import LeaseLost

    async with await open_store(where) as first_store, await open_store(where) as second_store:
        first_store.lease_ttl = second_store.lease_ttl = 0.5  # type: ignore[attr-defined]
        sid = (await first_store.create_session("triage")).id
        first = first_store.turn(sid)
        assert first.token is None and await first.try_acquire() and first.token
        await first_store.append(sid, [Message(role="customer", text="one")], fence=first.token)
        first._renewing.cancel()  # type: ignore[attr-defined]  # the holder froze: no more renewals
        async with second_store.turn(sid) as second:
            assert second.waited > 0 and second.token not in (None, first.token)
            with pytest.raises(LeaseLost):
                await first_store.append(sid, [Message(role="agent", text="late", agent="triage")], fence=first.token)
            await second_store.append(sid, [Message(role="agent", text="two", agent="triage")], fence=second.token)
        with pytest.raises(LeaseLost):  # released since: still not the first holder's
            await first_store.append(sid, [Message(role="agent", text="late", agent="triage")], fence=first.token)
        await first.release()
        await first_store.append(sid, [Message(role="customer", text="three")])  # unfenced: staff, imports
        assert [i.text for i in await first_store.latest(sid, 10)] == ["one", "two", "three"]


@pytest.mark.postgres
async def test_a_postgresql_lease_outlives_a_server_restart_while_its_holder_renews(pg_url: str):
    """The advisory lock goes with a restart; the row does not. A holder whose lock went (its
    lock connection ended) but whose row is from before a restart is alive as far as anyone
    knows: a waiter takes the lock and still waits, until the holder releases."""
    import asyncpg

    async with await open_store(pg_url) as holder_store, await open_store(pg_url) as waiter_store:
        holder_store.lease_ttl = waiter_store.lease_ttl = 0.6  # type: ignore[attr-defined]
        sid = (await holder_store.create_session("triage")).id
        holder = holder_store.turn(sid)
        assert await holder.try_acquire()
        # what a restart leaves: the holder's lock gone, its row from the server's earlier life
        await holder_store._lease_conn.close()  # type: ignore[attr-defined]
        admin = await asyncpg.connect(pg_url)
        try:
            await admin.execute("UPDATE turn_leases SET server_started = server_started - interval '1 hour'")
        finally:
            await admin.close()
        second = waiter_store.turn(sid)
        waiter = asyncio.create_task(second.acquire())
        for _ in range(4):  # several lifetimes of the row: the holder's renewals keep it
            await asyncio.sleep(0.6)
            assert not waiter.done(), "a waiter started a turn beside a live holder"
            await holder_store.append(sid, [Message(role="customer", text="still mine")], fence=holder.token)
        await holder.release()
        await asyncio.wait_for(waiter, 10)
        await second.release()


async def test_a_sqlite_lease_whose_holder_stopped_renewing_expires(tmp_path: Path):
    async with await open_store(tmp_path / "desk.db") as store:
        sid = (await store.create_session("triage")).id
        store.lease_ttl = 0.5
        dead = store.turn(sid)
        assert await dead.try_acquire()
        dead._renewing.cancel()  # the holder froze: no more renewals, no release
        started = time.monotonic()
        async with asyncio.timeout(10), store.turn(sid) as taken:  # a lease that never expires: fails at 10 s
            assert 0.2 < time.monotonic() - started < 10
            assert taken.waited > 0


# --- the change feed -------------------------------------------------------------------------


async def test_a_second_process_append_reaches_the_feed_within_a_second(where: str):
    async with await open_store(where) as store:
        sid = (await store.create_session("triage")).id
        async with await store.follow() as feed:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, str(WRITER), where, sid, "0", "1", "--sizes", "3",
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )
            assert proc.stdout is not None
            assert (await proc.stdout.readline()).strip() == b"ready"
            assert (await proc.stdout.readline()).strip() == b"committed 0"
            seen_at = time.monotonic()

            async def head_of_3() -> Change:
                async for change in feed:
                    if change.session_id == sid and change.head == 3:
                        return change
                raise AssertionError("the feed ended")

            change = await asyncio.wait_for(head_of_3(), timeout=1.0)
            # (On PostgreSQL the change carries the appended items too, `Change.items`.)
            assert (change.session_id, change.head, change.deleted, change.own) == (sid, 3, False, False)
            assert time.monotonic() - seen_at < 1.0
            await proc.wait()


async def test_the_feed_reports_new_sessions_status_forks_and_deletes(where: str):
    async with await open_store(where) as store, await open_store(where) as other:
        async with await store.follow() as feed:
            sid = (await other.create_session("triage")).id
            await other.append(sid, [Message(role="customer", text="hello", agent="triage")])
            await other.set_status(sid, "closed")
            fork = await other.fork(sid, 1)
            assert await other.delete_session(sid)
            wanted = {(sid, True), (fork.id, False)}
            got: list[Change] = []

            async def until_all() -> None:
                async for change in feed:
                    got.append(change)
                    if wanted <= {(c.session_id, c.deleted) for c in got}:
                        return

            await asyncio.wait_for(until_all(), timeout=5)
            # writes may arrive coalesced (SQLite reads the state at its next tick): the last word holds
            assert got[-1] in (Change(sid, 0, True), Change(fork.id, 1))
            assert Change(fork.id, 1) in got and Change(sid, 0, True) in got


async def test_a_closed_feed_ends_the_loop(where: str):
    async with await open_store(where) as store:
        feed = await store.follow()
        await feed.aclose()
        assert [c async for c in feed] == []


async def test_run_says_on_stderr_that_it_waits_for_the_turn_in_progress(where: str):
    async with await open_store(where) as store:
        sid = (await store.create_session("triage")).id
        async with store.turn(sid):  # a turn in progress elsewhere
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "supportdesk.cli", "run", "--db", where, "--config", str(HERE.parent / "agents.toml"),
                "--session", sid, "hello, my password reset mail never came",
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=HERE.parent,
            )
            assert proc.stderr is not None
            line = await asyncio.wait_for(proc.stderr.readline(), timeout=60)
            assert line.decode().strip() == f"supportdesk: session {sid}: waiting for the turn in progress"
            assert await store.last_seq(sid) == 0, "nothing is written while the other turn holds the session"
        out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
        assert proc.returncode == 0, err
        assert "password reset" in out.decode()
        assert (await store.item(sid, 1)).text == "hello, my password reset mail never came"
