"""Every size on the real screen (issue 39 §6): what a narrow terminal leaves out of the agent
bar goes as whole parts, never as half a word ("✋ root holds it · as staf")."""

from __future__ import annotations

from supportdesk.folds.desk_state import ConversationState
from supportdesk.engine.protocol import Answer
from supportdesk.items import TagChange
from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.widgets.agent_bar import state_text
from tests.tui_seed import SEED_ID, chat_loaded, repo_desk, seed_file, until


def test_the_state_words_leave_out_whole_parts_to_fit():
    state = ConversationState(holder="dana", held_by_staff=True, state="staff", detail="", tags=("vip", "refund"), priority="high")
    whole = str(state_text(state, "staff"))
    assert whole == "✋ dana holds it · #vip #refund · ! high · as staff"
    assert str(state_text(state, "staff", 40)) == "✋ dana holds it · ! high · as staff"  # the tags went first
    assert str(state_text(state, "staff", 27)) == "✋ dana holds it · as staff"  # (✋ is two cells)
    assert str(state_text(state, "staff", 20)) == "✋ dana holds it"
    for width in range(0, 60):
        fitted_text = state_text(state, "staff", width)
        fitted = str(fitted_text)
        assert fitted_text.cell_len <= width or fitted == ""
        assert all(part in whole.split(" · ") for part in fitted.split(" · ") if fitted)


async def test_the_agent_bar_shows_its_state_words_whole_at_every_size(tmp_path, monkeypatch):
    monkeypatch.setenv("SUPPORTDESK_STAFF", "dana")
    db = await seed_file(tmp_path / "desk.db")
    desks = []

    async def factory():
        desk = await repo_desk(db, [Answer("ok")])
        desks.append(desk)
        return desk

    app = SupportDeskApp(desk_factory=factory, session_id=SEED_ID)
    async with app.run_test(size=(160, 45)) as pilot:
        await chat_loaded(pilot, SEED_ID)
        await desks[0].store.append(SEED_ID, [TagChange(person="dana", added=["vip", "refund"], priority="high", agent="billing")])
        await pilot.press("f6")
        state = app.chat.query_one("#desk-state")
        await until(pilot, lambda: "holds it" in str(state.render()) and "as staff" in str(state.render()))
        for size in ((160, 45), (80, 24), (60, 20)):
            await pilot.resize_terminal(*size)
            await until(pilot, lambda: app.size == size)
            await pilot.pause()
            await pilot.pause()
            bar = app.screen._compositor.render_strips()[0].text
            shown = str(state.render()).strip()
            assert shown and shown in bar, (size, shown, bar)  # drawn whole, not cut at the edge
            assert "holds it" in shown
    for desk in desks:
        await desk.close()


async def test_a_context_value_uses_the_width_of_a_wide_pane(db_path, test_desk):
    from supportdesk.items import ContextSet
    from supportdesk.tui.widgets import ContextInspector
    from tests.tui_seed import scripted_desk

    long_value = "March invoice shows the Pro plan twice (CH-25, CH-26)"
    desk, _, _ = await scripted_desk(db_path, test_desk)
    try:
        await desk.store.create_session("triage", session_id="ctx000000001")
        await desk.store.append("ctx000000001", [ContextSet(key="issue", value=long_value, writer="triage", agent="triage")])
        app = SupportDeskApp(desk=desk, session_id="ctx000000001")
        async with app.run_test(size=(100, 30)) as pilot:
            await chat_loaded(pilot, "ctx000000001")
            inspector = app.chat.query_one(ContextInspector)
            await until(pilot, lambda: inspector.row_count == 1)
            narrow = str(inspector.get_row("issue")[1]).splitlines()[0]
            assert narrow.endswith("…")  # the side pane: cut to its room
            app.chat.maximize(inspector)  # the pane made wide (78 columns and more)
            await until(pilot, lambda: inspector.size.width >= 78)
            await until(pilot, lambda: str(inspector.get_row("issue")[1]).splitlines()[0] == f'"{long_value}"')
            await pilot.pause()
            shown = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
            assert f'"{long_value}"' in shown  # whole: the pane has the room
    finally:
        await desk.close()


async def test_notifications_never_cover_the_input_line(tmp_path):
    """Issue 39 §6: at 60x20 the notifications covered the input line. Several at once, one of
    them long: each toast's region stays clear of the prompt's, at every size."""
    from textual.widgets._toast import Toast

    from supportdesk.tui.widgets import Prompt

    db = await seed_file(tmp_path / "desk.db")
    app = SupportDeskApp(desk_factory=lambda: repo_desk(db), session_id=SEED_ID)
    async with app.run_test(size=(60, 20), notifications=True) as pilot:
        await chat_loaded(pilot, SEED_ID)
        for size in ((60, 20), (80, 24), (160, 45)):
            await pilot.resize_terminal(*size)
            app.clear_notifications()
            app.notify("Exported 14 items to /home/dana/Downloads/supportdesk-seed-session.md", title="Export", timeout=60)
            app.notify("no session 'zz'; see `supportdesk sessions list`", severity="error", timeout=60)
            await until(pilot, lambda: len(app.screen.query(Toast)) == 2 and all(t.region.height for t in app.screen.query(Toast)), limit=10)
            prompt = app.screen.query_one(Prompt)
            assert prompt.region.height == 3
            for toast in app.screen.query(Toast):
                assert not toast.region.overlaps(prompt.region), (size, toast.region, prompt.region)
