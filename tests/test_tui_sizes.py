"""Every size on the real screen (issue 39 §6): what a narrow terminal leaves out of the agent
bar goes as whole parts, never as half a word ("✋ root holds it · as staf")."""

from __future__ import annotations

from supportdesk.desk_state import ConversationState
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
