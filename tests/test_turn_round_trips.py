"""How many times a turn goes to the store, counted, on both adapters (issue 34 item 1).

A counting wrapper stands between the runner and the real store (a SQLite file, a PostgreSQL
database): every call of the store's contract and of its turn lease is one round trip (a hop to
SQLite's thread, a statement or transaction on the server). The seed turn, the README's first
message through the embedded model (triage -> billing -> find_charges -> answer), took 16 before
the turn's reads were designed: the lease, the stored message read back, the take-over check, a
history window and the context per step, an append per step, the status, the release.

Now: the session with the customer's message (one transaction), then the turn's lease taken
with its ONE read (`TurnLease.try_start`: row, window, context, holder, in the transaction that
takes the lease), one append per step, the last of which gives the lease back in its own
transaction (`Store.append(release=)`): steps + 2, the issue's bar. A lease taken or given back
in calls of its own (`try_acquire`, `release`) shows in the list and fails the test.

Each model step's request is also checked against the log as the store holds it: the window and
context the turn keeps in memory are the ones a read would have returned.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from supportdesk.config import load_desk
from supportdesk.engine.events import Appended, Done, StepStarted
from supportdesk.items import Message
from supportdesk.wiring import open_desk
from tests.conftest import REPO

SEED = "Hi, I was charged twice for my subscription this month: two charges of $29.99 on March 1st and March 3rd. My email is dana@example.com."
THEN = "I'd like a refund for the duplicate charge."


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def where(request, tmp_path: Path) -> str:
    return str(tmp_path / "desk.db") if request.param == "sqlite" else request.getfixturevalue("pg_url")


class Counting:
    """The store, with every contract call (and every call of a lease it hands out) recorded."""

    def __init__(self, inner: Any):
        self._inner = inner
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name == "turn":
            return lambda session_id: _CountingLease(attr(session_id), self.calls)
        if asyncio.iscoroutinefunction(attr):
            async def counted(*args: Any, **kwargs: Any) -> Any:
                self.calls.append(name)
                return await attr(*args, **kwargs)

            return counted
        return attr


class _CountingLease:
    def __init__(self, lease: Any, calls: list[str]):
        self._lease, self._calls = lease, calls

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._lease, name)
        if asyncio.iscoroutinefunction(attr) and name in ("try_acquire", "acquire", "release", "try_start", "start"):
            async def counted(*args: Any, **kwargs: Any) -> Any:
                self._calls.append(f"lease.{name}")
                return await attr(*args, **kwargs)

            return counted
        return attr


@dataclass
class Seen:
    """What each model step was shown: its history's seqs and its context."""

    steps: list[tuple[list[int], dict[str, Any]]] = field(default_factory=list)


class Watching:
    """The desk's model, with what each request showed it kept."""

    def __init__(self, inner: Any, seen: Seen):
        self._inner, self._seen = inner, seen

    def stream(self, request: Any) -> Any:
        self._seen.steps.append(([i.seq for i in request.history], dict(request.context)))
        return self._inner.stream(request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


async def _turn(desk: Any, counting: Counting, session_id: str | None, text: str) -> tuple[str, int, list[str], list[Any]]:
    counting.calls.clear()
    events = [e async for e in desk.runner.send(session_id, text)]
    done = [e for e in events if isinstance(e, Done)]
    assert done and done[-1].outcome == "answered", done
    steps = sum(isinstance(e, StepStarted) for e in events)
    stored = [e.item for e in events if isinstance(e, Appended)]
    return stored[0].session_id, steps, list(counting.calls), stored


async def _check_requests(store: Any, session_id: str, seen: Seen) -> None:
    """Every step saw the log as it stood (the whole of it, this short), and the context then."""
    head = await store.last_seq(session_id)
    log = await store.range(session_id, 1, head)
    for seqs, context in seen.steps:
        assert seqs == [i.seq for i in log[: len(seqs)]], seqs
        stood = await store.context_at(session_id, seqs[-1])
        assert context == {k: e.value for k, e in stood.items()}
    assert len({len(seqs) for seqs, _ in seen.steps}) == len(seen.steps)  # each step saw more


async def test_the_seed_turn_goes_to_the_store_steps_plus_two_times(where: str):
    desk = await open_desk(where, load_desk(REPO / "agents.toml"))
    try:
        counting = Counting(desk.store)
        desk.runner.store = counting
        seen = Seen()
        desk.runner.provider = Watching(desk.runner.provider, seen)

        sid, steps, calls, stored = await _turn(desk, counting, None, SEED)
        # The answer asks about the duplicate's refund: the call goes with the question, held as
        # the desk's offer (asked once, issues 33 and 38).
        assert [i.name for i in stored if i.kind == "tool_call"] == ["find_charges", "refund_charge"]
        assert [i.kind for i in stored][-1] == "offer"
        assert steps == 3  # triage, billing (find_charges), billing (the question)
        # The session with its message, the lease with the turn's read, and one append (it
        # gives the lease back): triage's handoff and billing's find_charges step (a call that
        # only reads) are held for the question's append (`Runner._append(hold=True)`, the
        # turn's steps read them in memory meanwhile).
        assert calls == ["create_session", "lease.try_start", "append"]
        assert len(calls) <= steps + 2
        await _check_requests(desk.store, sid, seen)
        assert await _lease_free(desk.store, sid), "the last append gave the lease back"

        # The next message on the same session: the lease with the read, the message, a step each.
        seen.steps.clear()
        _, steps, calls, stored = await _turn(desk, counting, sid, THEN)
        assert [i.name for i in stored if i.kind == "tool_call"] == ["refund_charge"]
        assert calls[:2] == ["lease.try_start", "append"] and set(calls[2:]) == {"append"}, calls
        # (The message answers the question before it, and the gate's reading of it, a decline,
        # goes with the step's append: held like a handoff, `Runner._settle_offer`.)
        assert calls.count("append") == steps + 1 and len(calls) <= steps + 2, calls
        assert [i.kind for i in stored][-1] == "offer"  # the refund waits for the customer's yes
        await _check_requests(desk.store, sid, seen)
        assert await _lease_free(desk.store, sid), "the offer's append gave the lease back"

        # The yes: the open offer is read from the turn's one read, not from the store again.
        seen.steps.clear()
        _, steps, calls, stored = await _turn(desk, counting, sid, "yes")
        assert [i.kind for i in stored if i.kind in ("confirmation", "tool_call")] == ["confirmation", "tool_call"]
        assert calls[:2] == ["lease.try_start", "append"] and set(calls[2:]) == {"append"}, calls
        assert len(calls) <= steps + 3, calls  # (+1: the confirmation and its call, appended before the steps)
        await _check_requests(desk.store, sid, seen)
        assert await _lease_free(desk.store, sid)
    finally:
        await desk.close()


async def _lease_free(store: Any, session_id: str) -> bool:
    """No holder has the session's turn lease: another takes it at once (and gives it back)."""
    lease = store.turn(session_id)
    if not await lease.try_acquire():
        return False
    await lease.release()
    return True


async def test_a_turns_reads_go_to_the_store_once_something_was_stored_behind_their_back(where: str):
    """An item stored that the turn was not shown (a gap before the next it is shown) makes its
    reads stale: from then on they are the store's, never an in-memory log with a hole."""
    from supportdesk.engine.turn_reads import TurnReads
    from supportdesk.items import ContextSet, Message
    from supportdesk.store import open_store

    async with await open_store(where) as store:
        info = await store.create_session("triage", first=[Message(role="customer", text="hi", agent="triage")])
        reads = await TurnReads.read(store, info.id, 10)
        assert reads.fresh and [i.seq for i in await reads.latest(info.id, 5)] == [1]
        [mine] = await store.append(info.id, [ContextSet(key="a", value=1, writer="triage", agent="triage")])
        reads.add(mine)
        assert reads.fresh and {k: e.value for k, e in (await reads.context_at(info.id)).items()} == {"a": 1}
        await store.append(info.id, [ContextSet(key="b", value=2, writer="x", agent="triage")])  # not shown
        [later] = await store.append(info.id, [Message(role="agent", text="ok", agent="triage")])
        reads.add(later)
        assert not reads.fresh
        assert [i.seq for i in await reads.latest(info.id, 5)] == [1, 2, 3, 4]
        assert {k: e.value for k, e in (await reads.context_at(info.id)).items()} == {"a": 1, "b": 2}


async def test_a_served_turn_goes_to_the_store_steps_plus_one_times_after_its_message(where: str):
    """serve's path: the customer's message stored on its own (`Runner.receive`, the POST's one
    append, the session as its token check read it), then the turn (`Runner.resume`): the lease
    with its one read, a step each. Whether the message's turn is unfinished, and whether the
    session is a fork cut inside it, is answered from that read: no `get_session` of its own (it
    was one more statement for every served message, issue 34)."""
    desk = await open_desk(where, load_desk(REPO / "agents.toml"))
    try:
        counting = Counting(desk.store)
        desk.runner.store = counting
        info = await desk.store.create_session("triage", channel="web")
        await desk.runner.receive(info.id, SEED, session=info)
        assert counting.calls == ["append"], counting.calls
        counting.calls.clear()
        events = [e async for e in desk.runner.resume(info.id)]
        steps = sum(isinstance(e, StepStarted) for e in events)
        assert steps == 3 and any(isinstance(e, Done) for e in events)
        # (triage's handoff and billing's find_charges step held for the question's append)
        assert counting.calls == ["lease.try_start", "append"], counting.calls
        assert await _lease_free(desk.store, info.id)
        # A second resume finds the turn answered, from its one read: nothing is written, the
        # lease given back.
        counting.calls.clear()
        assert [e async for e in desk.runner.resume(info.id)] == []
        assert counting.calls == ["lease.try_start", "lease.release"], counting.calls
    finally:
        await desk.close()


async def test_a_call_the_customers_request_allows_is_gated_from_the_turns_read_not_the_whole_log(where: str):
    """A confirm = "request" call (send_password_reset) asks `confirmation.requested` whether the
    customer asked for it: that reads the newest items the turn's one read holds, not the whole
    log (a read of every item for every gated call, one more round trip on PostgreSQL). Asked
    for, it runs at once; not asked for, it is offered: both with no read of the log."""
    from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, Transfer
    from supportdesk.items import Offer, ToolResult
    from tests.scripted import ScriptedModel

    for said, runs in (("please send me a password reset link, dana@example.com", True),
                       ("i cant log in, it says my password is wrong. dana@example.com", False)):
        script = [Transfer("technical", "password"),
                  CallTools([RequestedCall("call_reset", "send_password_reset", {"customer": "dana@example.com"})]),
                  Answer("done")]
        desk = await open_desk(where, load_desk(REPO / "agents.toml"), provider=ScriptedModel(script))
        try:
            counting = Counting(desk.store)
            desk.runner.store = counting
            # Earlier talk on the session, so the log is longer than the request's reach.
            info = await desk.store.create_session("triage")
            for text in ("hello", "are you there?", "ok"):
                await desk.store.append(info.id, [Message(role="customer", text=text, agent="triage"),
                                                  Message(role="agent", text="Hi, how can I help?", agent="triage")])
            counting.calls.clear()
            events = [e async for e in desk.runner.send(info.id, said)]
            stored = [e.item for e in events if isinstance(e, Appended)]
            ran = [i for i in stored if isinstance(i, ToolResult) and i.name == "send_password_reset" and not i.is_error]
            assert bool(ran) is runs and bool([i for i in stored if isinstance(i, Offer)]) is not runs, said
            steps = sum(isinstance(e, StepStarted) for e in events)
            assert "range" not in counting.calls, counting.calls
            assert counting.calls[0] == "lease.try_start" and set(counting.calls[1:]) == {"append"}, counting.calls
            assert len(counting.calls) <= steps + 2, counting.calls
        finally:
            await desk.close()


async def test_the_held_items_say_what_the_whole_log_says_about_a_request_or_nothing():
    """`TurnReads.since_request` answers only when `requested` over what it returns is
    `requested` over the whole log: every log of a few kinds, held at every depth."""
    import itertools

    from supportdesk.engine.confirmation import requested
    from supportdesk.engine.turn_reads import TurnReads
    from supportdesk.items import Decline, ToolResult

    tool = "send_password_reset"
    kinds = {
        "ask": Message(role="customer", text="send me a reset link"),
        "chat": Message(role="customer", text="hello"),
        "no": Message(role="customer", text="no, don't"),
        "agent": Message(role="agent", text="sure"),
        "ran": ToolResult(call_id="c", name=tool, output="{}"),
        "failed": ToolResult(call_id="c", name=tool, output="x", is_error=True),
        "declined": Decline(offer_id="o", tool=tool, why="no", source="text"),
    }
    asked = lambda text: "reset link" in text  # noqa: E731
    answered = unknown = 0
    for n in range(1, 6):
        for names in itertools.product(kinds, repeat=n):
            log = [replace(kinds[k], seq=seq, session_id="s") for seq, k in enumerate(names, 1)]
            for depth in range(1, n + 1):
                reads = TurnReads(None, "s", depth)  # type: ignore[arg-type]
                reads._items, reads._whole, reads.fresh = log[-depth:], depth == n, True
                held = await reads.since_request(tool)
                if held is None:
                    unknown += 1
                    assert depth < n
                    continue
                answered += 1
                assert requested(held, tool, asked) == requested(log, tool, asked), (names, depth)
    assert answered > unknown > 0
