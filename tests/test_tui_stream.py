"""A streaming reply keeps up with the model: tokens are drawn a frame at a time, not one by one.

Counted through hooks (how many Markdown appends, which refreshes asked for a layout), never
timed: the speed itself is measured by benchmarks/bench_stream.py.
"""

from __future__ import annotations

import asyncio

from textual.app import App
from textual.widgets import Markdown

from fake_llm_server import FakeLLMServer, text_stream
from llm_desk import make_config
from supportdesk.items import Message
from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.widgets import AgentBar, Conversation, Prompt, conversation
from supportdesk.tui.widgets.agent_bar import WorkingIndicator
from supportdesk.tui.widgets.items import StreamingReply
from supportdesk.tui.widgets.render import AgentLook
from supportdesk.wiring import open_desk
from tests.tui_seed import until


class PaneApp(App):
    def compose(self):
        yield Conversation(AgentLook(None))


async def test_tokens_of_one_frame_are_one_markdown_append(monkeypatch):
    appended: list[str] = []
    append = Markdown.append

    def counting(self, markdown):
        appended.append(markdown)
        return append(self, markdown)

    monkeypatch.setattr(Markdown, "append", counting)
    # The frame is held back (its timer set far off) and then drawn by hand: however slow the
    # machine, every token below arrives "within one frame".
    monkeypatch.setattr(conversation, "STREAM_FRAME", 3600.0)
    monkeypatch.setattr(conversation, "STREAM_MAX_WAIT", 3600.0)
    app = PaneApp()
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(Conversation)
        await pane.start_stream("triage")
        tokens = [f"word{i} " if i % 50 else "\n\nNew paragraph " for i in range(400)]
        for token in tokens:  # as the chat screen feeds them: the event loop turns at each
            await pane.write_stream(token)
        await pilot.pause()
        assert appended == []  # nothing is drawn per token
        await pane._write_frame()
        await until(pilot, lambda: pane.stream is not None and pane.stream.source == "".join(tokens))
        # 400 tokens, one append: one parse of the open block and one relayout, not 400.
        assert appended == ["".join(tokens)]
        # The next frame's tokens are the next append.
        await pane.write_stream("tail")
        await pane._write_frame()
        await until(pilot, lambda: pane.stream.source.endswith("tail"))
        assert appended[1:] == ["tail"]


async def test_the_frame_timer_draws_the_tokens():
    app = PaneApp()
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(Conversation)
        await pane.start_stream("triage")
        for token in ["Hello", " there", ", friend"]:
            await pane.write_stream(token)
        await until(pilot, lambda: pane.stream.source == "Hello there, friend")


async def test_tokens_left_unwritten_go_with_the_draft():
    app = PaneApp()
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(Conversation)
        await pane.start_stream("triage")
        pane.add_token("never drawn")
        await pane.end_stream()  # the step stored no message (a tool call): the draft goes
        await pilot.pause()
        assert pane.stream is None and not app.query(StreamingReply)
        await pane.start_stream("triage")
        pane.add_token("fresh")
        await until(pilot, lambda: pane.stream.source == "fresh")


async def test_spinner_frames_repaint_without_a_relayout(monkeypatch):
    """The working spinner ticks ten times a second; each relayout of the screen costs as much
    as the longest reply streaming below it."""
    layouts: list[bool] = []
    refresh = WorkingIndicator.refresh

    def recording(self, *regions, **kwargs):
        layouts.append(bool(kwargs.get("layout")))
        return refresh(self, *regions, **kwargs)

    app = PaneApp()
    async with app.run_test(size=(80, 24)) as pilot:
        indicator = WorkingIndicator(AgentLook(None))
        await app.screen.mount(indicator)
        indicator.working = "triage"
        await pilot.pause()
        monkeypatch.setattr(WorkingIndicator, "refresh", recording)
        before = str(indicator.render())
        for _ in range(3):
            indicator._tick()
        assert layouts and not any(layouts)
        assert str(indicator.render()) != before  # it did move


LONG = "".join(
    f"Paragraph {n}: the duplicate charge was **released** and the refund is on its way.\n\n"
    + ("- checked the card\n- checked the invoice\n\n" if n % 4 == 0 else "")
    for n in range(40)
) + "That is everything, Zephyrquokka."


async def test_a_real_server_streams_the_whole_reply_onto_the_screen(db_path):
    with FakeLLMServer() as server:
        server.push(text_stream(LONG, pieces=600))
        desk = await open_desk(db_path, make_config(server.url), customers=False)
        try:
            app = SupportDeskApp(desk=desk)
            async with app.run_test(size=(120, 40)) as pilot:
                await until(pilot, lambda: app.chat is not None and app.screen is app.chat)
                screen = app.chat
                prompt = screen.query_one(Prompt)
                prompt.value = "Why was I charged twice?"
                prompt.focus()
                await pilot.press("enter")
                pane = screen.query_one(Conversation)

                def reply() -> Message | None:
                    found = [i for i in pane.items if isinstance(i, Message) and i.role == "agent"]
                    return found[-1] if found else None

                await until(pilot, lambda: reply() is not None and pane.stream is None)
                await until(pilot, lambda: not screen.query_one(AgentBar).query_one("#working").display)
                assert reply().text == LONG  # every token, in order
                drawn = pane.lines.text_of(reply().seq)
                assert "Paragraph 39" in drawn and "Zephyrquokka" in drawn and "**" not in drawn
                assert not screen.query(StreamingReply)
        finally:
            await desk.close()


async def test_a_reply_stopped_before_its_stream_ran_stops_quietly():
    """The first write starts Textual's stream task and yields once; a stored message arriving in
    that same turn of the loop stops the reply before the task has run. Stopping must not hand
    the task's cancellation to the caller (the turn's worker): that ended the turn half read,
    the working indicator up and its lease held (seen under load in the chat tests)."""
    app = PaneApp()
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(Conversation)
        await pane.start_stream("triage")
        reply = pane.stream
        writing = asyncio.create_task(reply.write("first token"))
        await asyncio.sleep(0)  # the write made the stream's task and yielded; that task has not run
        await reply.stop()  # raised CancelledError here before the fix
        await writing
        await pane.end_stream()
        await pilot.pause()
        assert pane.stream is None and not app.query(StreamingReply)
