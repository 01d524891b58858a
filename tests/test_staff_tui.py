"""Staff as people in the TUI: take over (F6, /takeover), write as staff (F7, /as), reply, release
with a summary the agent reads, states, tags and priority; and snapshots of the header's states."""

from __future__ import annotations

from datetime import timedelta

import pytest

from supportdesk.engine.protocol import Answer
from supportdesk.items import Release, StaffReply, StateChange, TagChange, Takeover
from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.widgets import Conversation, Prompt
from supportdesk.tui.widgets.prompt import AS_CUSTOMER, AS_STAFF
from tests.tui_seed import FIXED, SEED_ID, chat_loaded, layout_settled, repo_desk, seed_file, seeded_file, seeded_inbox, until

SIZE = (120, 40)


@pytest.fixture(autouse=True)
def _person(monkeypatch):
    monkeypatch.setenv("SUPPORTDESK_STAFF", "dana")


def _header(app) -> str:
    return str(app.chat.query_one("#desk-state").render())


async def _type(pilot, text: str) -> None:
    prompt = pilot.app.chat.query_one(Prompt)
    prompt.value = text
    await pilot.press("enter")


async def test_take_over_reply_release_and_the_agent_answers_reading_the_summary(tmp_path):
    db = await seed_file(tmp_path / "desk.db")
    desks = []

    async def factory():
        desk = await repo_desk(db, [Answer("Glad that is sorted, Dana.")])
        desks.append(desk)
        return desk

    app = SupportDeskApp(desk_factory=factory, session_id=SEED_ID)
    async with app.run_test(size=SIZE) as pilot:
        await chat_loaded(pilot, SEED_ID)
        store, model = desks[0].store, desks[0].runner.provider
        end = await store.last_seq(SEED_ID)
        await pilot.press("f6")
        await until(pilot, lambda: "dana holds it" in _header(app))
        assert isinstance(await store.item(SEED_ID, end + 1), Takeover)
        # taking over is to answer yourself: the input now writes as staff
        await until(pilot, lambda: "as staff" in _header(app))
        assert app.chat.query_one(Prompt).placeholder == AS_STAFF

        # the customer writes while dana holds it (F7: as the customer): stored, no agent answers
        await pilot.press("f7")
        await until(pilot, lambda: app.chat.query_one(Prompt).placeholder == AS_CUSTOMER)
        await _type(pilot, "hello? is anyone there?")
        await until(pilot, lambda: app.chat.query_one(Conversation).end == end + 2 and not app.chat.workers)
        assert model.requests == []

        await pilot.press("f7")  # write as staff again
        await until(pilot, lambda: "as staff" in _header(app))
        assert app.chat.query_one(Prompt).placeholder == AS_STAFF
        await _type(pilot, "Hi, this is Dana: the duplicate is refunded.")
        await until(pilot, lambda: app.chat.query_one(Conversation).end == end + 3)
        reply = await store.item(SEED_ID, end + 3)
        assert isinstance(reply, StaffReply) and reply.person == "dana" and reply.origin == "tui"

        await _type(pilot, "/tag vip refund")
        await _type(pilot, "/priority high")
        await until(pilot, lambda: "#vip #refund · ! high" in _header(app))

        await _type(pilot, "/release refunded CH-26; customer calm")
        await until(pilot, lambda: "holds it" not in _header(app))
        released = await store.item(SEED_ID, end + 6)
        assert isinstance(released, Release) and released.to_agent == "billing"
        assert released.summary == "refunded CH-26; customer calm"

        # the agent has it back: the input writes as the customer again, by itself
        await until(pilot, lambda: app.chat.query_one(Prompt).placeholder == AS_CUSTOMER and "as staff" not in _header(app))
        await _type(pilot, "thanks!")
        await until(pilot, lambda: len(model.requests) == 1 and not app.chat.workers)
        seen = model.requests[0]
        assert seen.agent.name == "billing"
        assert any(isinstance(i, Release) and i.summary == "refunded CH-26; customer calm" for i in seen.history)
        last = await store.item(SEED_ID, await store.last_seq(SEED_ID))
        assert last is not None and last.kind == "message" and last.text == "Glad that is sorted, Dana."


async def test_a_session_started_on_this_screen_shows_who_holds_it_once_taken_over(tmp_path):
    """The header's state is folded from the first item of a session the chat itself started
    (not only of sessions it opened), so a take-over right after the first answer shows."""
    db = tmp_path / "desk.db"
    desks = []

    async def factory():
        desk = await repo_desk(db, [Answer("Hello! How can I help?")])
        desks.append(desk)
        return desk

    app = SupportDeskApp(desk_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await chat_loaded(pilot, "")
        await _type(pilot, "hi there")
        await until(pilot, lambda: any(m.kind == "message" and m.role == "agent" for m in app.chat.query_one(Conversation).items)
                    and not app.chat.workers)
        await pilot.press("f6")
        await until(pilot, lambda: "dana holds it" in _header(app))
    for desk in desks:
        await desk.close()


async def test_slash_commands_that_make_no_sense_say_so_and_write_nothing(tmp_path):
    db = await seed_file(tmp_path / "desk.db")
    app = SupportDeskApp(desk_factory=lambda: repo_desk(db), session_id=SEED_ID)
    async with app.run_test(size=SIZE) as pilot:
        await chat_loaded(pilot, SEED_ID)
        store = app.desk.store
        end = await store.last_seq(SEED_ID)
        await _type(pilot, "/release")
        await until(pilot, lambda: any("nothing to release" in str(n.message) for n in app._notifications))
        await _type(pilot, "/state snoozed")  # a snooze needs its end
        await until(pilot, lambda: any("usage: /state" in str(n.message) for n in app._notifications))
        await _type(pilot, "/state snoozed tomorrow")
        await until(pilot, lambda: any("'tomorrow' is not a time" in str(n.message) for n in app._notifications))
        assert await store.last_seq(SEED_ID) == end
        await _type(pilot, "/state snoozed 2h")
        await until(pilot, lambda: "SNOOZED until" in _header(app))
        item = await store.item(SEED_ID, end + 1)
        assert isinstance(item, StateChange) and item.state == "snoozed" and item.until is not None


# --- the header's states, as snapshots (fixed clock, fixed data) ------------------------------------

LATER = FIXED + timedelta(days=1)
HEADER_STATES = {
    "held": [
        Takeover(person="dana", agent="billing"),
        TagChange(person="dana", added=["vip", "refund"], priority="urgent", agent="billing"),
    ],
    "snoozed": [
        TagChange(person="sam", added=["waiting-on-bank"], agent="billing"),
        StateChange(person="sam", state="snoozed", until=LATER, agent="billing"),
    ],
    "resolved": [StateChange(person="sam", state="resolved", agent="billing")],
}


@pytest.mark.parametrize("state", list(HEADER_STATES))
def test_header_shows_who_holds_the_conversation_and_its_state(snap_compare, tmp_path, state):
    db = seeded_file(tmp_path / "snap.db", HEADER_STATES[state])
    app = SupportDeskApp(desk_factory=lambda: repo_desk(db), theme="desk-dark", session_id=SEED_ID)
    app.clock = lambda: FIXED  # the badge's "now": before the snooze ends, whatever today is

    async def ready(pilot) -> None:
        await chat_loaded(pilot, SEED_ID)
        if state == "held":
            # dana holds it and dana is at this terminal: the input writes as staff, and the header says so
            await until(pilot, lambda: "as staff" in _header(app))
            # its toast would go by a timer: a snapshot waits for a settled screen, not for time
            app.clear_notifications()
            await until(pilot, lambda: not app.screen.query("Toast"))
        await until(pilot, lambda: app.chat.query_one(Conversation).last == 14 + len(HEADER_STATES[state]))
        for prompt in app.screen.query(Prompt):
            prompt.cursor_blink = False
        await pilot.wait_for_scheduled_animations()
        await layout_settled(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


async def test_from_the_inbox_a_tag_filter_and_a_take_over_that_opens_the_conversation(db_path, test_desk):
    tagged = {"working": [TagChange(person="sam", added=["vip"], agent="technical")]}
    async with seeded_inbox(db_path, test_desk, extra=tagged) as seeded:
        app, pilot, inbox, ids, desk = seeded.app, seeded.pilot, seeded.screen, seeded.ids, seeded.desk
        await pilot.press("l")  # the first tag: only the tagged conversation is listed
        await until(pilot, lambda: [r.session.id for r in inbox.shown] == [ids["working"]])
        await pilot.press("t")  # take it over, and open it to reply
        await until(pilot, lambda: app.chat is not None and app.chat.session_id == ids["working"]
                    and app.chat.conv_state is not None and app.chat.conv_state.held_by_staff)
        assert "dana holds it" in _header(app)
        taken = await desk.store.item(ids["working"], await desk.store.last_seq(ids["working"]))
        assert isinstance(taken, Takeover) and taken.person == "dana" and taken.origin == "tui"
        # opened to reply: the input writes as staff, as after F6 on the chat screen
        await until(pilot, lambda: app.chat.write_as == "staff" and "as staff" in _header(app))
        assert app.chat.query_one(Prompt).placeholder == AS_STAFF


async def test_a_message_written_while_staff_held_it_is_answered_once_on_release(tmp_path):
    # issue 39 §3: /release gives the waiting message its turn; no new message is needed.
    db = await seed_file(tmp_path / "desk.db")
    desks = []

    async def factory():
        desk = await repo_desk(db, [Answer("Sorry for the wait: the duplicate is refunded.")])
        desks.append(desk)
        return desk

    app = SupportDeskApp(desk_factory=factory, session_id=SEED_ID)
    async with app.run_test(size=SIZE) as pilot:
        await chat_loaded(pilot, SEED_ID)
        store, model = desks[0].store, desks[0].runner.provider
        end = await store.last_seq(SEED_ID)
        await pilot.press("f6")
        await until(pilot, lambda: "dana holds it" in _header(app))
        await pilot.press("f7")  # write as the customer
        await until(pilot, lambda: app.chat.query_one(Prompt).placeholder == AS_CUSTOMER)
        await _type(pilot, "hello? is anyone there?")
        await until(pilot, lambda: app.chat.query_one(Conversation).end == end + 2 and not app.chat.workers)
        await _type(pilot, "/release looked at the card")
        await until(pilot, lambda: len(model.requests) == 1 and not app.chat.workers)
        after = await store.range(SEED_ID, end + 3, await store.last_seq(SEED_ID))
        assert [i.text for i in after if i.kind == "message"] == ["Sorry for the wait: the duplicate is refunded."]
    for desk in desks:
        await desk.close()
