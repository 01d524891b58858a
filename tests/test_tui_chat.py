"""The chat screen, driven with Pilot on a real SQLite file and a scripted model."""

from __future__ import annotations

import asyncio
import json

import pytest
from textual.color import Color
from textual.widgets import Markdown, Static

from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, Transfer
from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.projection import HANDOFF_PAGE
from supportdesk.tui.screens.browser import BrowserChoice, ExportDialog
from supportdesk.tui.widgets import AgentBar, ContextInspector, Conversation, HandoffTimeline, Prompt
from supportdesk.tui.widgets.item_lines import ItemLines
from supportdesk.tui.widgets.items import StreamingReply
from supportdesk.tui.slash import SlashError, parse_slash
from tests.tui_seed import SEED_ID, scripted_desk, seed_double_charge, seed_long, until




async def type_and_send(pilot, text: str) -> None:
    prompt = pilot.app.screen.query_one(Prompt)
    prompt.value = text
    prompt.focus()
    await pilot.press("enter")


def window(screen) -> list:
    """The stored items in the conversation pane's window."""
    return list(screen.query_one(Conversation).items)


def messages(screen) -> list:
    return [item for item in window(screen) if item.kind == "message"]


def drawn(screen, seq: int) -> str:
    """Item `seq` as the pane draws it, as plain text."""
    return screen.query_one(Conversation).lines.text_of(seq)


async def test_send_shows_reply_handoff_and_new_active_agent(db_path, test_desk, tmp_path):
    script = [
        Transfer("billing", "charged twice", context={"category": "billing"}, text="Passing you to billing."),
        Answer("Refunded the **duplicate**.", context={"refund": 29}),
    ]
    desk, model, _ = await scripted_desk(db_path, test_desk, script)
    app = SupportDeskApp(desk=desk, export_dir=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.screen is app.chat)
        screen = app.chat
        assert screen.query_one(AgentBar).agent == "triage"
        await type_and_send(pilot, "I was charged twice")
        await until(pilot, lambda: any(m.role == "agent" and "duplicate" in m.text for m in messages(screen)))
        await until(pilot, lambda: not screen.query_one(AgentBar).query_one("#working").display)

        assert screen.session_id is not None
        assert screen.query_one(AgentBar).agent == "billing"
        timeline = screen.query_one(HandoffTimeline)
        assert [(h.from_agent, h.to_agent) for h in timeline.handoffs] == [("triage", "billing")]
        assert len([i for i in window(screen) if i.kind == "handoff"]) == 1
        # Every stored item is on screen, in seq order, exactly once.
        stored = await desk.store.range(screen.session_id, 1, 100)
        shown = [i.seq for i in window(screen)]
        assert shown == [i.seq for i in stored]
        # The streamed reply became the stored message: the draft is gone, the item drawn as Markdown.
        assert screen.query_one(Conversation).stream is None and not screen.query(StreamingReply)
        reply = [m for m in messages(screen) if m.role == "agent"][-1]
        assert "Refunded the duplicate." in drawn(screen, reply.seq) and "**" not in drawn(screen, reply.seq)
        # The line sent with the transfer was not streamed: stored, drawn under the agent's title.
        passing = [m for m in messages(screen) if m.role == "agent"][0]
        header, body = drawn(screen, passing.seq).splitlines()[:2]
        assert header.startswith("▌ Triage") and body.strip() == "▌ Passing you to billing."
        assert "billing" in str(screen.query_one(AgentBar).query_one("#agent-badge", Static).render()).lower()
        # The inspector shows the context, with what the last step wrote highlighted.
        inspector = screen.query_one(ContextInspector)
        assert set(inspector.context) == {"category", "refund"}
        assert inspector.changed == {"category", "refund"}  # everything this turn wrote
        assert inspector.row_count == 2
    await desk.close()


async def test_streamed_reply_becomes_the_stored_message_in_place(db_path, test_desk):
    gate = asyncio.Event()
    desk, model, _ = await scripted_desk(db_path, test_desk, [Answer("one two three four")], mid_stream=gate)
    app = SupportDeskApp(desk=desk)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None)
        screen = app.chat
        await type_and_send(pilot, "hello")
        # The reply grows in place while it streams ...
        await until(pilot, lambda: bool(screen.query(StreamingReply)) and "one" in screen.query_one(StreamingReply).source)
        assert not any(m.role == "agent" for m in messages(screen))
        gate.set()
        # ... and once stored, the stored message takes its place: no draft left, no duplicate.
        await until(pilot, lambda: any(m.role == "agent" for m in messages(screen)))
        await until(pilot, lambda: screen.query_one(Conversation).stream is None)
        assert not screen.query(StreamingReply)
        replies = [m for m in messages(screen) if m.role == "agent"]
        assert [m.text for m in replies] == ["one two three four"]
        assert drawn(screen, replies[0].seq).count("one two three four") == 1
    await desk.close()


async def test_customer_markup_and_escapes_are_shown_literally(db_path, test_desk):
    desk, _, _ = await scripted_desk(db_path, test_desk, [Answer("ok")])
    app = SupportDeskApp(desk=desk)
    nasty = "[bold]x[/bold] [link=http://x]y[/link] \x1b[31mred"
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None)
        screen = app.chat
        await type_and_send(pilot, nasty)
        await until(pilot, lambda: any(m.role == "customer" for m in messages(screen)))
        customer = [m for m in messages(screen) if m.role == "customer"][0]
        plain = drawn(screen, customer.seq)
        assert "[bold]x[/bold]" in plain
        assert "[link=http://x]y[/link]" in plain
        assert "\x1b" not in plain and "␛[31mred" in plain
        # Nothing was turned into a style or a link: the body's cells carry no bold, link or red.
        body = screen.query_one(Conversation).lines.strips_of(customer.seq)[1:]
        segments = [seg for strip in body for seg in strip if seg.text.strip() and seg.text != "▌"]
        assert segments and all(not seg.style.bold and not seg.style.link for seg in segments)
        assert all(seg.style.color == segments[0].style.color for seg in segments)
        stored = await desk.store.range(screen.session_id, 1, 1)
        assert stored[0].text == nasty  # the log keeps exactly what was typed
    await desk.close()


async def test_timeline_jump_scrolls_to_a_handoff_outside_the_window(db_path, test_desk):
    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_long(desk.store, "long1", 400)
    app = SupportDeskApp(desk=desk, session_id="long1")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.query_one(Conversation).items)
        screen = app.chat
        conversation = screen.query_one(Conversation)
        # Only the last page is mounted, not the whole session. (The seed ends on a handoff after
        # a customer line, a turn left to finish: the screen resumes it as it opens, so its
        # answer may already be there, as item 401.)
        assert conversation.last in (400, 401) and len(conversation.items) <= 100
        assert conversation.first > 300
        timeline = screen.query_one(HandoffTimeline)
        # The timeline lists the latest page of the 40 handoffs, with a row for the earlier ones.
        assert len(timeline.handoffs) == min(40, HANDOFF_PAGE)
        seq = timeline.handoffs[0].seq
        assert seq < conversation.first  # its item is outside the mounted window
        # The flash lasts 1.5 s: on a loaded machine it may be over before the scroll is seen, so
        # the test records that it happened instead of racing its timer.
        flashed: list[int | None] = []
        set_flash = conversation.lines.set_flash
        conversation.lines.set_flash = lambda value: (flashed.append(value), set_flash(value))[1]

        def in_view() -> bool:
            region = conversation.item_region(seq)
            top = conversation.scroll_offset.y
            return region is not None and top <= region.y < top + conversation.size.height

        timeline.focus()
        timeline.highlighted = timeline.get_option_index(f"h{seq}")
        await pilot.press("enter")
        # The scroll happens after the new window is laid out: wait for that state, not a time.
        await until(pilot, lambda: conversation.holds(seq) and in_view())
        assert conversation.first <= seq <= conversation.last
        # The handoff is within the visible part of the pane, flashed and selected.
        assert flashed[0] == seq and conversation.lines.cursor == seq
    await desk.close()


async def test_scrolling_to_the_top_loads_older_items_on_demand(db_path, test_desk):
    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_long(desk.store, "long2", 300)
    app = SupportDeskApp(desk=desk, session_id="long2")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.query_one(Conversation).items)
        conversation = app.chat.query_one(Conversation)
        first = conversation.first
        await until(pilot, lambda: conversation.max_scroll_y > 0)  # laid out, taller than the pane
        conversation.release_anchor()
        conversation.scroll_home(animate=False)
        await until(pilot, lambda: conversation.first < first)
        assert conversation.items == sorted(conversation.items, key=lambda i: i.seq)
        assert [i.seq for i in conversation.items] == list(range(conversation.first, conversation.last + 1))
    await desk.close()


async def test_staff_slash_commands(db_path, test_desk, tmp_path):
    desk, model, _ = await scripted_desk(db_path, test_desk, [Answer("hello there"), Answer("retried")])
    app = SupportDeskApp(desk=desk, export_dir=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None)
        screen = app.chat
        # Staff actions need a session; saying so is not an error the app dies of.
        await type_and_send(pilot, "/note too early")
        await type_and_send(pilot, "hi")
        await until(pilot, lambda: screen.session_id is not None and any(m.role == "agent" for m in messages(screen)))
        sid = screen.session_id

        await type_and_send(pilot, "/handoff technical customer says the app crashes")
        await until(pilot, lambda: screen.query_one(AgentBar).agent == "technical")
        [handoff] = await desk.store.handoffs(sid)
        assert (handoff.to_agent, handoff.handoff_kind, handoff.reason) == ("technical", "manual", "customer says the app crashes")
        assert len(screen.query_one(HandoffTimeline).handoffs) == 1

        await type_and_send(pilot, "/note customer is a VIP")
        await until(pilot, lambda: any(m.role == "staff" for m in messages(screen)))
        staff = (await desk.store.of_kind(sid, "message"))[-1]
        assert (staff.role, staff.text) == ("staff", "customer is a VIP")

        await type_and_send(pilot, "/set plan pro")
        await type_and_send(pilot, "/set seats 5")
        inspector = screen.query_one(ContextInspector)
        await until(pilot, lambda: "seats" in inspector.context)
        context = await desk.store.context_at(sid)
        assert context["plan"].value == "pro" and context["seats"].value == 5
        assert context["plan"].writer == "staff"

        await type_and_send(pilot, "/unset plan")
        await until(pilot, lambda: "plan" not in inspector.context)
        assert "plan" not in await desk.store.context_at(sid)

        # Export asks where (the browser's dialog), suggesting a file in the export folder.
        await type_and_send(pilot, "/export")
        await until(pilot, lambda: isinstance(app.screen, ExportDialog))
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is screen)
        await type_and_send(pilot, "/export json")
        await until(pilot, lambda: isinstance(app.screen, ExportDialog))
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is screen)
        md = tmp_path / f"supportdesk-{sid}.md"
        js = tmp_path / f"supportdesk-{sid}.json"
        await until(pilot, lambda: md.exists() and js.exists())
        assert "customer is a VIP" in md.read_text()
        assert json.loads(js.read_text())["session"]["id"] == sid

        await type_and_send(pilot, "/retry")
        await until(pilot, lambda: any(m.text == "retried" for m in messages(screen)))

        await type_and_send(pilot, "/handoff nobody")
        await type_and_send(pilot, "/frobnicate")
        # Each bad command says why it was refused; then nothing it started is still running.
        said = lambda: " ".join(n.message for n in app._notifications)  # noqa: E731
        await until(pilot, lambda: "no agent named 'nobody'" in said() and "unknown command /frobnicate" in said())
        await app.workers.wait_for_complete([w for w in app.workers if w.group == "turn"])
        assert screen.query_one(AgentBar).agent == "technical"  # the bad commands changed nothing

        await type_and_send(pilot, "/help")
        await until(pilot, lambda: app.screen is not screen)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)

        await type_and_send(pilot, "/new")
        await until(pilot, lambda: screen.session_id is None)
        assert not window(screen)
        assert screen.query_one(AgentBar).agent == "triage"
        # Re-opening the old session shows it all again, from the log.
        await app.open_session(sid)
        await until(pilot, lambda: screen.session_id == sid and bool(window(screen)))
        assert screen.query_one(AgentBar).agent == "technical"
    await desk.close()


async def test_approval_grant_and_deny(db_path, test_desk):
    def escalating_script(answer: str):
        return [
            Transfer("billing", "refund"),
            Transfer("senior", "big refund", handoff_kind="escalate"),
            CallTools([RequestedCall("c1", "refund", {"amount": 300})]),
            Answer("A colleague must approve that refund."),
            Answer(answer),
        ]

    for granted, answer in ((True, "Your refund is done."), (False, "Sorry, the refund was declined.")):
        db = db_path.with_name(f"{granted}.db")
        desk, _, refunds = await scripted_desk(db, test_desk, escalating_script(answer))
        app = SupportDeskApp(desk=desk)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.chat is not None)
            screen = app.chat
            await type_and_send(pilot, "refund me 300 dollars")
            await until(pilot, lambda: any(i.kind == "notice" and i.notice_kind == "approval_requested" for i in window(screen)))
            await until(pilot, lambda: not screen.query_one("#working").display)
            notice = [i for i in window(screen) if i.kind == "notice" and i.notice_kind == "approval_requested"][0]
            assert "/approve" in drawn(screen, notice.seq)  # it says how to decide
            # The bar follows the turn's handoffs as they are applied, which on a loaded machine
            # may land a moment after the notice is drawn.
            await until(pilot, lambda: screen.query_one(AgentBar).agent == "senior")
            assert refunds == []
            await type_and_send(pilot, "/approve" if granted else "/deny")
            await until(pilot, lambda: any(m.text == answer for m in messages(screen)))
            kinds = [i.notice_kind for i in window(screen) if i.kind == "notice"]
            assert ("approval_granted" if granted else "approval_denied") in kinds
            assert refunds == ([300.0] if granted else [])
            assert await desk.runner.pending_approvals(screen.session_id) == []
            # Nothing left to decide: a second decision says so and changes nothing.
            count = len(window(screen))
            assert not screen.check_action("approve", ())  # the key is off while nothing waits ...
            await pilot.press("ctrl+y")
            await app.workers.wait_for_complete([w for w in app.workers if w.group == "turn"])
            assert len(window(screen)) == count  # ... so pressing it changed nothing
        await desk.close()


async def test_tool_lines_fold_and_expand(db_path, test_desk):
    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_double_charge(desk.store)
    app = SupportDeskApp(desk=desk, session_id=SEED_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None and bool(window(app.chat)))
        conversation = app.chat.query_one(Conversation)
        lines = conversation.lines
        [result] = [i for i in window(app.chat) if i.kind == "tool_result" and i.name == "find_charges"]
        await until(pilot, lambda: lines.region_of(result.seq).height >= 1)  # laid out
        assert lines.region_of(result.seq).height == 1 and "CH-26" not in drawn(app.chat, result.seq)
        # The keyboard: focus the pane, walk the item cursor up to the result, Enter expands it.
        conversation.focus()
        for _ in range(len(window(app.chat))):
            if lines.cursor == result.seq:
                break
            await pilot.press("up")
        assert lines.cursor == result.seq
        await pilot.press("enter")
        await until(pilot, lambda: result.seq in lines.expanded and lines.region_of(result.seq).height > 1)
        assert "CH-26" in drawn(app.chat, result.seq)
        # The mouse: a click on it folds it again.
        region = conversation.item_region(result.seq)
        conversation.scroll_to_region(region, animate=False, immediate=True)
        await pilot.wait_for_scheduled_animations()
        await pilot.click(ItemLines, offset=(4, lines.region_of(result.seq).y - lines.scroll_offset.y))
        await until(pilot, lambda: result.seq not in lines.expanded and lines.region_of(result.seq).height == 1)
    await desk.close()


def test_parse_slash():
    assert parse_slash("/handoff billing he asked nicely").args == ("billing", "he asked nicely")
    assert parse_slash("/handoff senior").args == ("senior", "staff decision")
    assert parse_slash("/set n 5").args == ("n", 5)
    assert parse_slash("/set name Dana Whitfield").args == ("name", "Dana Whitfield")
    assert parse_slash('/set tags ["a", "b"]').args == ("tags", ["a", "b"])
    assert parse_slash("/export json").args == ("json",)
    assert parse_slash("/export").args == ("markdown",)
    assert parse_slash("/approve ap1").args == ("ap1",)
    for bad in ("/handoff", "/set key", "/unset", "/export pdf", "/nope", "/new now"):
        with pytest.raises(SlashError):
            parse_slash(bad)


async def test_a_database_that_cannot_be_opened_is_one_clear_line(tmp_path, test_desk):
    folder = tmp_path / "a-folder"
    folder.mkdir()
    app = SupportDeskApp(db=folder, config=test_desk)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.exit_code == 1 and bool(app.screen.query(Static)))
        text = str(app.screen.query_one(Static).render())
        assert "is a folder, not a database file" in text and "Traceback" not in text
        await pilot.press("q")
    assert app.exit_code == 1


async def test_theme_switch_recolors_agents_and_is_remembered(db_path, test_desk, tmp_path):
    from supportdesk.tui import themes

    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_double_charge(desk.store)
    app = SupportDeskApp(desk=desk, session_id=SEED_ID, theme="desk-dark")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None and bool(messages(app.chat)))
        app.theme = "desk-light"
        await until(pilot, lambda: themes.remembered_theme() == "desk-light")
        light, dark = themes.agent_colors("desk-light"), themes.agent_colors("desk-dark")
        assert light["billing"] != dark["billing"]  # the premise: the light theme has its own agent colours
        assert app.look.color("billing") == light["billing"]
        # Panes already on screen take the new colours (the bar beside the agent's message).
        reply = [m for m in messages(app.chat) if m.agent == "billing" and m.role == "agent"][-1]
        edge = app.chat.query_one(Conversation).lines.strips_of(reply.seq)[0]
        bar = next(iter(edge))
        assert bar.text == "▌" and Color.from_rich_color(bar.style.color) == Color.parse(light["billing"])
    await desk.close()


async def test_usage_totals_show_in_the_agent_bar(db_path, test_desk):
    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_double_charge(desk.store)
    app = SupportDeskApp(desk=desk, session_id=SEED_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None and bool(messages(app.chat)))
        facts = str(app.chat.query_one(AgentBar).facts)
        totals = await desk.store.usage_totals(SEED_ID)
        total_in = sum(u["input_tokens"] for u in totals.values())
        assert f"tokens {total_in}↑" in facts and "Billing" in facts
        assert "$" not in facts  # no price table: tokens only
    await desk.close()


async def test_cost_shows_when_the_desk_has_prices(db_path, test_desk):
    from supportdesk.config import Price
    from supportdesk.engine.pricing import session_cost

    test_desk.model.model = "m"
    test_desk.model.prices = {"m": Price(input_per_million=1000.0, output_per_million=2000.0)}
    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_double_charge(desk.store)
    app = SupportDeskApp(desk=desk, session_id=SEED_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None and bool(messages(app.chat)))
        expected = session_cost(await desk.store.usage_totals(SEED_ID), test_desk)
        assert expected and f"${expected:.4f}" in str(app.chat.query_one(AgentBar).facts)
    await desk.close()


async def test_browser_choice_opens_live_or_in_replay(db_path, test_desk):
    from supportdesk.tui.screens.replay import ReplayScreen

    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_double_charge(desk.store)
    app = SupportDeskApp(desk=desk)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None)
        await pilot.press("ctrl+b")
        await until(pilot, lambda: type(app.screen).__name__ == "BrowserScreen")
        app.screen.dismiss(BrowserChoice("replay", SEED_ID))
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        assert app.screen.session_id == SEED_ID
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.chat)
        await pilot.press("ctrl+b")
        await until(pilot, lambda: type(app.screen).__name__ == "BrowserScreen")
        app.screen.dismiss(BrowserChoice("open", SEED_ID))
        await until(pilot, lambda: app.screen is app.chat and app.chat.session_id == SEED_ID)
        assert app.chat.query_one(Conversation).last == 14
    await desk.close()


async def test_input_stays_usable_while_agents_work(db_path, test_desk):
    desk, _, _ = await scripted_desk(db_path, test_desk, [Answer("first answer"), Answer("second answer")], delay=1.0)
    app = SupportDeskApp(desk=desk)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None)
        screen = app.chat
        await type_and_send(pilot, "first question")
        await until(pilot, lambda: any(m.text == "first question" for m in messages(screen)))
        # While the first turn runs (the model is still thinking), the input takes the next message.
        assert not any(m.role == "agent" for m in messages(screen))
        await type_and_send(pilot, "second question")
        assert screen.query_one(Prompt).value == ""
        await until(pilot, lambda: any(m.text == "second answer" for m in messages(screen)))
        stored = [(i.role, i.text) for i in await desk.store.of_kind(screen.session_id, "message")]
        assert stored == [
            ("customer", "first question"),
            ("agent", "first answer"),
            ("customer", "second question"),
            ("agent", "second answer"),
        ]
    await desk.close()


async def test_typing_before_the_desk_opens_is_kept(db_path, test_desk):
    """The first frame has a working input; what is typed there reaches the chat."""
    from supportdesk.tui.app import StartScreen

    gate = asyncio.Event()

    async def open_later():
        await gate.wait()
        desk, _, _ = await scripted_desk(db_path, test_desk, [Answer("Hello there, how can I help?")])
        return desk

    app = SupportDeskApp(desk_factory=open_later)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, StartScreen))
        assert app.screen.focused is app.screen.query_one("#prompt")
        await pilot.press(*"hi there", "enter", *"and a draft")
        assert app.screen.queued == ["hi there"]
        gate.set()
        await until(pilot, lambda: app.chat is not None and app.screen is app.chat)
        assert app.chat.query_one(Prompt).value == "and a draft"
        await until(pilot, lambda: any(m.role == "agent" for m in messages(app.chat)))
        said = [m.text for m in messages(app.chat)]
        assert said[:2] == ["hi there", "Hello there, how can I help?"]


async def test_typing_while_the_chat_screen_gets_ready_is_kept(db_path, test_desk, monkeypatch):
    """The chat screen takes keys as soon as it shows, before its panes are all in place; the
    start screen's draft, carried over once it is ready, goes in front of them, not over them."""
    from supportdesk.tui.app import StartScreen
    from supportdesk.tui.screens.chat import ChatScreen

    opened, inspector = asyncio.Event(), asyncio.Event()
    then_ready = ChatScreen._inspector_then_ready

    def ready_later(self):
        async def when_let():
            await inspector.wait()
            await then_ready(self)

        self.run_worker(when_let())  # a worker: the screen goes on taking keys meanwhile

    monkeypatch.setattr(ChatScreen, "_inspector_then_ready", ready_later)

    async def open_later():
        await opened.wait()
        desk, _, _ = await scripted_desk(db_path, test_desk, [Answer("Hello")])
        return desk

    app = SupportDeskApp(desk_factory=open_later)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, StartScreen))
        await pilot.press(*"charged ")
        opened.set()
        await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.focused is not None)
        assert app.chat is None  # not ready yet
        await pilot.press(*"twice")
        inspector.set()
        await until(pilot, lambda: app.chat is not None)
        assert app.chat.query_one(Prompt).value == "charged twice"


async def test_the_desk_opens_as_the_start_screens_first_frame_is_out(db_path, test_desk):
    """The start screen starts the desk opening once its first frame is drawn, not the app at its
    next refresh tick after that frame (~15 ms of nothing in bench_tui's cold start). The app's
    own fallback (on_mount's call_after_refresh) is taken away here: the start screen alone opens it."""
    async def open_desk():
        desk, _, _ = await scripted_desk(db_path, test_desk)
        return desk

    class NoFallback(SupportDeskApp):
        def call_after_refresh(self, callback, *args, **kwargs):
            if getattr(callback, "__name__", "") in ("_open", "_open_once"):
                return True
            return super().call_after_refresh(callback, *args, **kwargs)

    app = NoFallback(desk_factory=open_desk)  # the app owns the desk: closed when it ends
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.screen is app.chat, limit=20)


async def test_the_chat_screen_is_restyled_whole_on_a_return_but_not_on_its_first_showing(db_path, test_desk, monkeypatch):
    """Its mount has just styled every widget: Textual's restyle of the whole screen on the first
    resume was ~3 ms before the first frame of a cold start. A later resume still restyles."""
    from textual.events import ScreenResume
    from textual.screen import Screen

    from supportdesk.tui.screens.chat import ChatScreen

    restyled: list[Screen] = []
    restyle = ChatScreen.update_node_styles

    def counting(self, animate=True):
        restyled.append(self)
        restyle(self, animate)

    monkeypatch.setattr(ChatScreen, "update_node_styles", counting)
    desk, _, _ = await scripted_desk(db_path, test_desk)
    app = SupportDeskApp(desk=desk)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.screen is app.chat)
        await pilot.pause()
        assert restyled == []
        # A later resume that asks for it (a switch back to the screen) restyles it as Textual does.
        app.chat.post_message(ScreenResume())
        await until(pilot, lambda: restyled == [app.chat], limit=20)
    await desk.close()


async def test_the_window_rewraps_when_the_pane_narrows(db_path, test_desk):
    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_double_charge(desk.store)
    app = SupportDeskApp(desk=desk, session_id=SEED_ID)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None and bool(window(app.chat)))
        lines = app.chat.query_one(Conversation).lines
        reply = [m for m in messages(app.chat) if m.role == "agent"][-1]
        await until(pilot, lambda: lines.region_of(reply.seq).height >= 1)  # laid out
        wide = lines.region_of(reply.seq).height
        await pilot.resize_terminal(100, 40)  # still wide enough for the side column
        await until(pilot, lambda: lines.size.width < 60)
        # the same text on more lines ... (waited for: the lines are measured again after the resize)
        await until(pilot, lambda: lines.region_of(reply.seq).height > wide)
        drawn_lines = drawn(app.chat, reply.seq).splitlines()
        assert all(len(line) <= lines.size.width for line in drawn_lines)  # ... none past the edge
        # Blocks never overlap, whatever their heights: each starts below the one before.
        regions = [lines.region_of(item.seq) for item in window(app.chat)]
        assert all(a.bottom <= b.y for a, b in zip(regions, regions[1:]))
    await desk.close()


async def test_the_page_is_drawn_once_and_again_only_when_a_style_in_it_changes(db_path, test_desk, monkeypatch):
    """Focus moving around restyles the screen (Textual tells every widget); the conversation's
    drawn blocks are kept unless a style drawn into them changed, as a theme switch does."""
    drawn: list[int] = []
    real = ItemLines._render_block
    monkeypatch.setattr(ItemLines, "_render_block", lambda self, item, width, **kw: drawn.append(item.seq) or real(self, item, width, **kw))
    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_double_charge(desk.store)
    app = SupportDeskApp(desk=desk, session_id=SEED_ID, theme="desk-dark")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.loaded == SEED_ID)
        await pilot.pause()
        lines = app.chat.query_one(Conversation).lines
        seqs = [item.seq for item in lines.items]
        assert sorted(drawn) == seqs  # each item drawn once, at one width (the scrollbar's column is kept)
        customer = next(item.seq for item in lines.items if getattr(item, "role", "") == "customer")
        dark_strip = lines.strips_of(customer)[0]
        app.chat.query_one(Conversation).focus()
        await pilot.pause()
        app.chat.query_one(Prompt).focus()
        await pilot.pause()
        assert sorted(drawn) == seqs  # focus moved twice: nothing redrawn
        app.theme = "desk-light"
        await until(pilot, lambda: len(drawn) >= 2 * len(seqs))
        light_strip = lines.strips_of(customer)[0]
        assert [s.style.bgcolor for s in light_strip] != [s.style.bgcolor for s in dark_strip]  # the customer's background follows
    await desk.close()
