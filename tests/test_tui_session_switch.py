"""Staff always see the session they opened (issue 39 §1).

Open one session, switch to another by every route (browser, inbox, take over from the inbox,
fork, `chat --session`, replay → chat), scroll to the top and to the bottom, and every visible
line of every pane (the whole screen as the compositor draws it) names only the session shown.
Each session's items carry its own word, in messages, handoff reasons and context; the words of
the others must not be on screen. The pane kept its drawn lines by seq alone, so a session's
lines 1..n were drawn from the session shown before it."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from supportdesk.items import ContextSet, Handoff, Message
from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.screens.browser import BrowserChoice
from supportdesk.tui.widgets import Conversation
from tests.conftest import TEST_DESK
from supportdesk.config import parse_desk
from tests.tui_seed import layout_settled, scripted_desk, until

# word, id, number of items: short and long (past one page, so scrolling up loads older pages).
SESSIONS = [("apple", "aaaa00000001", 4), ("banana", "bbbb00000002", 9), ("cherry", "cccc00000003", 45), ("damson", "dddd00000004", 90)]
WORDS = [word for word, _, _ in SESSIONS]


async def seed(store, session_id: str, word: str, n: int) -> None:
    """n items that all say `word`; the last is an agent's reply (nothing left to answer)."""
    await store.create_session("triage", session_id=session_id)
    holder, items = "triage", []
    for seq in range(1, n + 1):
        if seq == n or seq % 2 == 0:
            items.append(Message(role="agent", agent=holder, text=f"{word} answer {seq}"))
        elif seq % 7 == 3:
            to = "billing" if holder == "triage" else "triage"
            items.append(Handoff(from_agent=holder, to_agent=to, reason=f"{word} reason {seq}", agent=holder))
            holder = to
        elif seq % 7 == 5:
            items.append(ContextSet(key=f"{word}_{seq % 3}", value=f"{word} value {seq}", writer=holder, agent=holder))
        else:
            items.append(Message(role="customer", agent=holder, text=f"{word} question {seq}"))
    await store.append(session_id, items)


def screen_lines(app) -> list[str]:
    """Every line of the screen as drawn (all panes, the header, the footer)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def assert_only(app, word: str) -> None:
    lines = screen_lines(app)
    for other in WORDS:
        if other != word:
            leaked = [line for line in lines if other in line]
            assert not leaked, f"showing {word!r}, the screen has {other!r}'s lines: {leaked}"
    assert any(word in line for line in lines), f"{word!r} is nowhere on screen:\n" + "\n".join(lines)


async def check_shown(pilot, word: str, session_id: str) -> None:
    """The chat screen shows `session_id` at the bottom, at the top, and at the bottom again."""
    app = pilot.app
    await until(pilot, lambda: app.screen is app.chat and app.chat.loaded == session_id)
    conversation = app.chat.query_one(Conversation)
    await layout_settled(pilot)
    assert_only(app, word)
    assert {item.session_id for item in conversation.items} == {session_id}
    conversation.focus()
    while True:  # to the top: older pages load as it gets there
        await pilot.press("home")
        await layout_settled(pilot)
        if conversation.first <= 1 and conversation.scroll_y <= 0:  # (a short page anchored at the foot sits below 0)
            break
        assert_only(app, word)
    assert_only(app, word)
    assert "start of the session" in "\n".join(screen_lines(app))
    await pilot.press("end")
    await until(pilot, lambda: conversation.scroll_y >= conversation.max_scroll_y or conversation.max_scroll_y == 0)
    await layout_settled(pilot)
    assert conversation.last == conversation.end
    assert_only(app, word)
    assert {item.session_id for item in conversation.items} == {session_id}


async def open_by(pilot, route: str, session_id: str) -> str:
    """Open `session_id` by `route`; the id of the session then shown (a fork has its own)."""
    app = pilot.app
    if route == "browser":
        await pilot.press("ctrl+b")
        await until(pilot, lambda: type(app.screen).__name__ == "BrowserScreen")
        app.screen.dismiss(BrowserChoice("open", session_id))
    elif route in ("inbox", "inbox-take-over"):
        app.action_open_inbox()
        await until(pilot, lambda: type(app.screen).__name__ == "InboxScreen" and bool(app.screen.rows), settle_workers=True)
        inbox = app.screen
        table = inbox.query_one("#inbox")
        await until(pilot, lambda: any(inbox._current() is not None for _ in [0]))
        for _ in range(table.row_count):
            if inbox._current().session.id == session_id:
                break
            await pilot.press("down")
        assert inbox._current().session.id == session_id
        await pilot.press("t" if route == "inbox-take-over" else "enter")
    elif route == "replay":
        app.open_replay(session_id)
        await until(pilot, lambda: type(app.screen).__name__ == "ReplayScreen")
        await pilot.press("escape")  # back to the chat, which then opens the session replayed
        await until(pilot, lambda: app.screen is app.chat)
        await app.open_session(session_id)
    elif route == "fork":
        fork = await app.desk.store.fork(session_id, await app.desk.store.last_seq(session_id))
        await app.open_session(fork.id)
        return fork.id
    else:
        await app.open_session(session_id)
    return session_id


ROUTES = ["browser", "inbox", "inbox-take-over", "replay", "fork", "direct"]


async def play(db_path: Path, start: int, moves: list[tuple[int, str]]) -> None:
    desk, _, _ = await scripted_desk(db_path, parse_desk(TEST_DESK, "test.toml", tool_names=["refund", "explode"]))
    try:
        for word, session_id, n in SESSIONS:
            await seed(desk.store, session_id, word, n)
        first_word, first_id, _ = SESSIONS[start]
        # `chat --session`: the app starts on a session.
        app = SupportDeskApp(desk=desk, session_id=first_id)
        async with app.run_test(size=(120, 36)) as pilot:
            await check_shown(pilot, first_word, first_id)
            for index, route in moves:
                word, session_id, _ = SESSIONS[index]
                shown = await open_by(pilot, route, session_id)
                await check_shown(pilot, word, shown)
    finally:
        await desk.close()


async def test_every_route_shows_only_the_session_opened(tmp_path):
    # Long to short, short to long, and each route once.
    moves = [(0, "browser"), (3, "inbox"), (1, "replay"), (2, "fork"), (0, "inbox-take-over"), (3, "direct"), (1, "browser")]
    await play(tmp_path / "desk.db", 3, moves)


@settings(max_examples=4, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(0, len(SESSIONS) - 1),
    st.lists(st.tuples(st.integers(0, len(SESSIONS) - 1), st.sampled_from(["browser", "direct", "replay"])), min_size=2, max_size=4),
)
def test_switching_among_sessions_in_any_order_shows_only_the_one_opened(start, moves) -> None:
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(play(Path(folder) / "desk.db", start, moves))
