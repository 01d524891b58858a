"""Staff as people: take-over, release with a summary, replies to the customer, states, tags, and
the audit of every staff action. On a real SQLite file and a real PostgreSQL database."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

import pytest

from supportdesk.channels.view import STAFF_JOINED, customer_event
from supportdesk.wiring import open_desk
from supportdesk.engine.events import Appended, Done
from supportdesk.engine.protocol import Answer, StepRequest, Transfer
from supportdesk.engine.errors import TurnError
from supportdesk.engine.runner import drain
from supportdesk.reports.export import session_markdown
from supportdesk.items import Message, Release, StaffReply, Takeover
from supportdesk.models.history import build_messages
from supportdesk.staff import Actor, audit
from tests.conftest import make_test_tools
from tests.scripted import ScriptedModel

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def where(request, tmp_path):
    return tmp_path / "desk.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")


def _agent_said(model: ScriptedModel):
    """Each step answers with what it was shown last: proves which history the agent read."""

    def answer(request: StepRequest) -> Answer:
        return Answer(f"answer {len(model.requests)}")

    return answer


async def _desk(where, test_desk, script=()):
    tools, _ = make_test_tools()
    model = ScriptedModel(list(script))
    desk = await open_desk(where, test_desk, provider=model, tools=tools, customers=False)
    return desk, model


def _items(events):
    return [e.item for e in events if isinstance(e, Appended)]


async def test_takeover_silences_agents_until_release_then_agent_reads_the_summary(where, test_desk):
    desk, model = await _desk(where, test_desk, [Transfer("billing", "money"), Answer("Billing here.")])
    dana = Actor("dana", "tui")
    async with desk:
        [started, *_] = await drain(desk.runner.send(None, "I was charged twice"))
        sid = started.session_id
        asked = len(model.requests)
        await desk.runner.takeover(sid, dana, reason="VIP customer")
        assert await desk.runner.held_by(sid) == "dana"

        events = await drain(desk.runner.send(sid, "hello? anyone?"))
        assert [i.kind for i in _items(events)] == ["message"]  # stored, nobody answered
        assert isinstance(events[-1], Done) and events[-1].outcome == "held" and events[-1].status == "staff"
        assert len(model.requests) == asked  # no model call while staff hold it
        # a retried turn (what the web channel runs after its 202) and a resume stay silent too
        assert [type(e).__name__ for e in await drain(desk.runner.retry_turn(sid))] == ["Done"]
        assert await drain(desk.runner.resume(sid)) == []

        reply = await desk.runner.staff_reply(sid, "Hi, Dana here: I refunded the duplicate.", dana)
        assert isinstance(reply, StaffReply) and reply.person == "dana"
        released = await desk.runner.release(sid, summary="refunded the duplicate charge; customer happy", by=dana)
        assert [type(i) for i in released] == [Release]  # back to billing, who held it: no handoff
        assert await desk.runner.held_by(sid) is None

        model.script.append(Answer("Glad it is sorted."))
        events = await drain(desk.runner.send(sid, "thanks! one more thing"))
        assert [i.kind for i in _items(events)] == ["message", "message"]
        assert isinstance(events[-1], Done) and events[-1].outcome == "answered"
        # the agent that answers reads the person's reply and the summary
        seen = model.requests[-1]
        assert seen.agent.name == "billing"
        assert any(isinstance(i, Release) and "refunded the duplicate" in i.summary for i in seen.history)
        chat = build_messages(seen)
        notes = [m["content"] for m in chat if m["role"] == "user"]
        assert any("refunded the duplicate charge; customer happy" in n for n in notes)
        assert any("dana of the support staff wrote to the customer" in n for n in notes)
    await desk.store.close()


async def test_release_to_another_agent_moves_the_active_agent_and_is_audited_once(where, test_desk):
    desk, model = await _desk(where, test_desk, [Answer("Triage here.")])
    async with desk:
        [started, *_] = await drain(desk.runner.send(None, "help"))
        sid = started.session_id
        await desk.runner.takeover(sid, Actor("sam", "cli"))
        items = await desk.runner.release(sid, "technical", "wifi issue, checked the router", Actor("sam", "cli"))
        assert [i.kind for i in items] == ["release", "handoff"]
        info = await desk.store.get_session(sid)
        assert info is not None and info.active_agent == "technical"
        log = await desk.store.range(sid, 1, info.item_count)
        entries = audit(log)
        assert [(e.action, e.person, e.origin) for e in entries] == [("takeover", "sam", "cli"), ("release", "sam", "cli")]
    await desk.store.close()


async def test_staff_actions_refuse_what_makes_no_sense(where, test_desk):
    desk, _ = await _desk(where, test_desk, [Answer("hi")])
    async with desk:
        [started, *_] = await drain(desk.runner.send(None, "help"))
        sid = started.session_id
        with pytest.raises(TurnError, match="nobody has taken this conversation over"):
            await desk.runner.release(sid)
        await desk.runner.takeover(sid, Actor("dana"))
        with pytest.raises(TurnError, match="dana already holds"):
            await desk.runner.takeover(sid, Actor("sam"))
        with pytest.raises(TurnError, match="no agent named 'nobody'"):
            await desk.runner.release(sid, "nobody")
        await desk.runner.set_state(sid, "resolved", by=Actor("dana"))
        with pytest.raises(TurnError, match="resolved"):
            await desk.runner.staff_reply(sid, "one more thing")
        with pytest.raises(TurnError, match="snooze needs a time"):
            await desk.runner.set_state(sid, "snoozed")
        with pytest.raises(TurnError, match="give a tag"):
            await desk.runner.tag(sid, [" "])
        # the customer writing again reopens it: staff may reply again
        await drain(desk.runner.send(sid, "actually, one more question"))
        await desk.runner.staff_reply(sid, "sure", Actor("dana"))
    await desk.store.close()


async def test_every_staff_action_is_in_the_audit_once_with_person_time_and_origin(where, test_desk):
    desk, _ = await _desk(where, test_desk, [Answer("hi")])
    async with desk:
        [started, *_] = await drain(desk.runner.send(None, "help"))
        sid = started.session_id
        runner = desk.runner
        await runner.staff_note(sid, "looks like a duplicate", Actor("ana", "tui"))
        await runner.set_context(sid, "customer_id", "C-1", by=Actor("ana", "tui"))
        await runner.force_handoff(sid, "billing", by=Actor("ana", "api"))
        await runner.takeover(sid, Actor("bo", "chatwoot"))
        await runner.staff_reply(sid, "on it", Actor("bo", "chatwoot"))
        await runner.tag(sid, ["vip", "refund"], priority="high", by=Actor("bo", "cli"))
        until = datetime(2026, 3, 9, 9, 0, tzinfo=timezone.utc)
        await runner.set_state(sid, "snoozed", until=until, by=Actor("bo", "cli"))
        await runner.release(sid, summary="done", by=Actor("bo", "cli"))
        log = await desk.store.range(sid, 1, await desk.store.last_seq(sid))
        entries = audit(log)
        assert [(e.action, e.person, e.origin) for e in entries] == [
            ("note", "ana", "tui"),
            ("context", "ana", "tui"),
            ("handoff", "ana", "api"),
            ("takeover", "bo", "chatwoot"),
            ("reply", "bo", "chatwoot"),
            ("tag", "bo", "cli"),
            ("state", "bo", "cli"),
            ("release", "bo", "cli"),
        ]
        assert entries[6].detail == "snoozed until 2026-03-09 09:00 UTC"
        assert entries[5].detail == "tagged vip, refund and set priority high"
        assert all(e.at == item.created_at for e, item in zip(entries, [i for i in log if i.seq in {x.seq for x in entries}]))
        # the Markdown export lists them, one table row each
        info = await desk.store.get_session(sid)
        assert info is not None
        markdown = session_markdown(info, log, desk.config)
        rows = [line for line in markdown.splitlines() if line.startswith("| ") and line[2].isdigit()]
        assert len(rows) == len(entries)
        assert "**Staff actions**" in markdown and "| bo | chatwoot | takeover |" in markdown
    await desk.store.close()


def test_customer_sees_the_staff_reply_the_takeover_and_the_release(test_desk):
    when = datetime(2026, 3, 9, tzinfo=timezone.utc)
    reply = StaffReply(person="Dana", text="I refunded it.", seq=7, created_at=when)
    event = customer_event(reply, test_desk)
    assert event is not None and event.type == "message" and event.seq == 7
    assert event.data == {"from": "staff", "name": "Dana", "text": "I refunded it.", "at": when.isoformat()}
    joined = customer_event(Takeover(person="Dana", reason="internal: VIP", seq=3), test_desk)
    assert joined is not None and joined.data == {"status": "staff", "text": STAFF_JOINED}  # never the reason
    back = customer_event(Release(person="Dana", to_agent="billing", summary="internal notes", seq=9), test_desk)
    assert back is not None and back.type == "handoff" and "internal" not in str(back.data)
    assert customer_event(Message(role="staff", text="a note"), test_desk) is None


def test_the_fold_reads_who_holds_it_its_state_tags_and_when_a_snooze_ends() -> None:
    from datetime import timedelta

    from supportdesk.folds import desk_state
    from supportdesk.items import Handoff, StateChange, TagChange

    t0 = datetime(2026, 3, 3, 10, 0, tzinfo=timezone.utc)
    until = t0 + timedelta(hours=2)
    log = [
        Message(role="customer", text="charged twice", agent="triage"),
        Handoff(from_agent="triage", to_agent="billing", agent="triage"),
        Message(role="agent", text="Let me check.", agent="billing"),
        Takeover(person="dana", agent="billing"),
        Message(role="customer", text="hello?", agent="billing"),
        StaffReply(person="dana", text="Dana here.", agent="billing"),
        TagChange(person="dana", added=["vip", "refund"], priority="high", agent="billing"),
        TagChange(person="sam", removed=["refund"], agent="billing"),
        StateChange(person="dana", state="snoozed", until=until, agent="billing"),
    ]
    log = [replace(i, seq=n, created_at=t0 + timedelta(minutes=n)) for n, i in enumerate(log, 1)]
    states = [desk_state.fold(log[:k], desk_state.start("triage")) for k in range(1, len(log) + 1)]
    assert [(s.state, s.holder, s.held_by_staff) for s in states[2:6]] == [
        ("ai", "billing", False), ("staff", "dana", True), ("staff", "dana", True), ("staff", "dana", True),
    ]
    assert states[3].since == log[3].created_at and states[5].since == log[3].created_at  # held since the take-over
    assert states[5].last_line == "Dana here." and states[5].last_role == "staff"
    snoozed = states[-1]
    assert (snoozed.state, snoozed.tags, snoozed.priority, snoozed.snoozed_until) == ("snoozed", ("vip",), "high", until)
    assert desk_state.at(snoozed, until - timedelta(seconds=1)).state == "snoozed"
    woke = desk_state.at(snoozed, until)
    assert (woke.state, woke.detail, woke.label, woke.since) == ("needs_staff", "snooze_ended", "snooze ended", until)
    # the customer writing while a person holds it brings it back to them; release hands it on
    back = desk_state.advance(snoozed, Message(role="customer", text="?", agent="billing", seq=10, created_at=until))
    assert (back.state, back.holder) == ("staff", "dana")
    released = desk_state.advance(back, Release(person="dana", to_agent="senior", summary="s", seq=11, created_at=until))
    assert (released.state, released.detail, released.holder, released.held_by_staff) == ("ai", "waiting_customer", "senior", False)
    resolved = desk_state.advance(released, StateChange(person="dana", state="resolved", seq=12, created_at=until))
    assert resolved.label == "resolved/idle"
    flagged = desk_state.advance(resolved, StateChange(person="dana", state="needs_staff", seq=13, created_at=until))
    assert (flagged.needs_staff, flagged.reason) == (True, "staff flagged it")


async def test_a_staff_reply_reaches_the_web_customer_on_the_event_stream_and_agents_wait(tmp_path) -> None:
    """Staff in another process (the TUI's, say) take a web conversation over and reply: the
    customer's event stream carries the reply; the customer's next message gets no agent answer."""
    import httpx

    from supportdesk.config import load_desk
    from tests.conftest import REPO
    from tests.serve_harness import new_conversation, read_events, say, serving

    db = tmp_path / "desk.db"
    config = load_desk(REPO / "agents.toml")
    async with serving(db, config) as served, httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        conversation = await new_conversation(client)
        await say(client, conversation, "I was charged twice for my subscription this month, dana@example.com")
        await served.conversations.idle()
        sid = conversation[0]
        async with await open_desk(db, config) as staff:
            await staff.runner.takeover(sid, Actor("Dana", "tui"))
            await staff.runner.staff_reply(sid, "Hi, Dana from the team here.", Actor("Dana", "tui"))
        events = await read_events(
            client, conversation, lambda evs: any(e.data.get("from") == "staff" for e in evs)
        )
        staff_said = [e for e in events if e.event == "message" and e.data.get("from") == "staff"]
        assert [(e.data["name"], e.data["text"]) for e in staff_said] == [("Dana", "Hi, Dana from the team here.")]
        assert any(e.event == "status" and e.data["status"] == "staff" for e in events)
        last = staff_said[-1].id
        seq = await say(client, conversation, "thanks Dana")
        await served.conversations.idle()
        after = await served.desk.store.range(sid, seq, await served.desk.store.last_seq(sid))
        assert [i.kind for i in after] == ["message"] and last is not None and last < seq  # no agent answered


def test_the_fold_keeps_the_customers_running_wait_as_the_sla_clock_measures_it() -> None:
    from datetime import timedelta

    from supportdesk.folds import desk_state
    from supportdesk.config import SlaSettings
    from supportdesk.items import StateChange
    from supportdesk.folds.sla import clock

    t0 = datetime(2026, 3, 3, 10, 0, tzinfo=timezone.utc)
    rows = [
        Message(role="customer", text="hi", agent="triage"),
        Message(role="customer", text="hello??", agent="triage"),
        Message(role="agent", text="Hello!", agent="triage"),
        Message(role="customer", text="my bill", agent="triage"),
        Takeover(person="dana", agent="triage"),
        StaffReply(person="dana", text="looking", agent="triage"),
        Message(role="customer", text="thanks", agent="triage"),
        StateChange(person="dana", state="resolved", agent="triage"),
    ]
    log = [replace(i, seq=n, created_at=t0 + timedelta(minutes=n)) for n, i in enumerate(rows, 1)]
    for k in range(1, len(log) + 1):
        state = desk_state.fold(log[:k])
        measured = clock(log[:k], SlaSettings(), log[k - 1].created_at)
        assert state.waiting_since == measured.waiting_since, k
        assert state.answers == len(measured.next_responses) + (measured.first_response is not None), k
        assert desk_state.ConversationState.from_json(state.to_json()) == state


async def test_a_message_that_came_while_staff_held_it_is_answered_once_after_the_release(where, test_desk):
    # issue 39 §3: the customer wrote while a person held the conversation and nobody answered;
    # the release gives that message its turn (a resume, or the next message's turn), once.
    desk, model = await _desk(where, test_desk, [Transfer("billing", "money"), Answer("Billing here.")])
    dana = Actor("dana", "cli")
    async with desk:
        [started, *_] = await drain(desk.runner.send(None, "I was charged twice"))
        sid = started.session_id
        await desk.runner.takeover(sid, dana)
        waiting = [i for i in _items(await drain(desk.runner.send(sid, "hello? anyone?")))]
        assert await desk.runner.unfinished_turn(sid) == waiting[0].seq  # (held: staff see it)
        await desk.runner.release(sid, summary="looked at the charges", by=dana)
        assert await desk.runner.unfinished_turn(sid) == waiting[0].seq
        model.script.append(Answer("Sorry for the wait: I see the duplicate."))
        answered = _items(await drain(desk.runner.resume(sid)))
        assert [(i.kind, i.text) for i in answered if i.kind == "message"] == [("message", "Sorry for the wait: I see the duplicate.")]
        assert await desk.runner.unfinished_turn(sid) is None
        assert await drain(desk.runner.resume(sid)) == []  # once

        # A person who answered the waiting message themselves leaves nothing to answer.
        await desk.runner.takeover(sid, dana)
        await drain(desk.runner.send(sid, "and the second card?"))
        await desk.runner.staff_reply(sid, "Only one card was charged.", dana)
        await desk.runner.release(sid, by=dana)
        assert await desk.runner.unfinished_turn(sid) is None
        # A take-over and release with nothing waiting: nothing to answer either.
        await desk.runner.takeover(sid, dana)
        await desk.runner.release(sid, to_agent="triage", by=dana)
        assert await desk.runner.unfinished_turn(sid) is None
    await desk.store.close()


async def test_the_customer_sees_the_staff_display_name_never_the_os_login(tmp_path, test_desk, monkeypatch):
    # issue 39 §5: with no display name chosen, a web customer read "root" over a staff reply.
    import getpass

    from supportdesk.staff import default_actor

    monkeypatch.delenv("SUPPORTDESK_STAFF", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(getpass, "getuser", lambda: "root")
    desk, _ = await _desk(tmp_path / "desk.db", test_desk, [Answer("Hello.")])
    async with desk:
        [started, *_] = await drain(desk.runner.send(None, "hello"))
        sid = started.session_id
        await desk.runner.takeover(sid)
        unnamed = await desk.runner.staff_reply(sid, "Looking now.")
        assert unnamed.person == "root"  # the audit still says which login acted
        shown = customer_event(unnamed, test_desk)
        assert shown is not None and shown.data["name"] == "Support team" and "root" not in str(shown.data)
        (tmp_path / "config" / "supportdesk").mkdir(parents=True)
        (tmp_path / "config" / "supportdesk" / "settings.toml").write_text('[staff]\nname = "Dana Lee"\n')
        named = await desk.runner.staff_reply(sid, "Found it.", default_actor("tui"))
        assert customer_event(named, test_desk).data["name"] == "Dana Lee"
        monkeypatch.setenv("SUPPORTDESK_STAFF", "Sam")
        assert customer_event(await desk.runner.staff_reply(sid, "Done."), test_desk).data["name"] == "Sam"
    await desk.store.close()
