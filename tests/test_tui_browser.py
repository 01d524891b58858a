"""The session browser, hosted in a tiny app: list, page, search, open/replay/fork/export/delete."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from rich.text import Text
from textual import events

from supportdesk.items import Message
from supportdesk.store import SessionStore
from supportdesk.tui.screens.browser import (
    BrowserChoice,
    BrowserScreen,
    ConfirmDelete,
    ConfirmFork,
    ExportDialog,
    SessionTable,
)
from tests.tui_seed import until as wait_until
from tests.tui_browser_data import BrowserHost, fixed_clock, seed_sessions

SIZE = (120, 36)


@pytest.fixture
async def store(tmp_path: Path):
    store = await SessionStore.open(tmp_path / "desk.db")
    await seed_sessions(store)
    yield store
    await store.close()


async def settle(pilot) -> None:
    """Let the screen's SQLite workers finish and the screen repaint."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def until(pilot, condition) -> None:
    """Let the app run until `condition()` holds, its loading workers settled between looks."""
    await wait_until(pilot, condition, settle_workers=True)


def table(app: BrowserHost) -> SessionTable:
    return app.screen.query_one(SessionTable)


def column(app: BrowserHost, key: str) -> list[str]:
    """One column's cells as plain text (every cell is a rich Text: nothing is parsed as markup)."""
    t = table(app)
    cells = [t.get_cell(row, key) for row in t.rows]
    assert all(isinstance(cell, Text) for cell in cells)
    if key == "title":  # the title without its marks (see `marks`)
        return [cell.plain.lstrip("!●").removeprefix(" ") for cell in cells]
    return [cell.plain for cell in cells]


def marks(app: BrowserHost) -> list[str]:
    """The marks before each title: ! needs staff, ● not seen in this terminal."""
    t = table(app)
    return ["".join(ch for ch in t.get_cell(row, "title").plain.split(" ")[0] if ch in "!●") for row in t.rows]


def host(store: SessionStore, tmp_path: Path | None = None, **kw) -> BrowserHost:
    return BrowserHost(lambda: BrowserScreen(store, export_dir=tmp_path, **kw))


async def test_lists_every_session_newest_activity_first(store: SessionStore) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert column(app, "id") == ["s-billing", "s-login", "s-hello"]
        assert column(app, "title")[0].startswith("Hi, I was charged twice")
        assert column(app, "agent") == ["billing", "technical", "triage"]
        assert column(app, "handoffs") == ["1", "1", "0"]
        assert column(app, "started") == ["2026-03-03 10:10", "2026-03-03 10:05", "2026-03-03 10:00"]
        assert column(app, "status") == ["open", "open", "open"]
        assert "3 sessions · page 1 of 1" in str(app.screen.query_one("#status").render())


async def test_agent_titles_come_from_the_desk_file(store: SessionStore, test_desk) -> None:
    app = host(store, config=test_desk)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert column(app, "agent") == ["Billing", "Technical", "Triage"]


async def test_pages_move_with_the_bracket_keys(store: SessionStore) -> None:
    class SmallPages(BrowserScreen):
        PAGE_SIZE = 2

    app = BrowserHost(lambda: SmallPages(store))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert column(app, "id") == ["s-billing", "s-login"]
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert column(app, "id") == ["s-hello"]
        assert "page 2 of 2" in str(app.screen.query_one("#status").render())
        await pilot.press("right_square_bracket")  # no page 3
        await settle(pilot)
        assert column(app, "id") == ["s-hello"]
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert column(app, "id") == ["s-billing", "s-login"]


async def test_search_shows_matching_snippets_with_the_match_highlighted(store: SessionStore) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        await pilot.press(*"refund")
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen.focused is table(app)  # Enter goes on to the results
        assert column(app, "id") == ["s-billing", "s-billing", "s-login"]
        assert column(app, "seq") == ["5", "4", "1"]
        snippets = [table(app).get_cell(row, "snippet") for row in table(app).rows]
        for snippet in snippets:
            highlighted = [snippet.plain[span.start : span.end] for span in snippet.spans if "reverse" in str(span.style)]
            assert [word.lower() for word in highlighted] == ["refund"]
        assert "3 matches" in str(app.screen.query_one("#status").render())
        # Opening a hit opens its session at the matching message
        await pilot.press("down", "down", "enter")
        await settle(pilot)
        assert app.results == [BrowserChoice("open", "s-login", 1)]


async def test_search_runs_while_typing_and_clearing_it_brings_the_list_back(store: SessionStore) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"password")
        await until(pilot, lambda: column(app, "id") == ["s-login"])  # after the typing pause
        assert app.screen.focused is app.screen.query_one("#search")  # still typing
        await pilot.press(*("backspace" for _ in "password"))
        await until(pilot, lambda: column(app, "id") == ["s-billing", "s-login", "s-hello"])


async def test_down_from_the_search_box_goes_to_the_results(store: SessionStore) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"refund")
        await until(pilot, lambda: column(app, "id") == ["s-billing", "s-billing", "s-login"])
        await pilot.press("down")
        assert app.screen.focused is table(app)
        assert search_box(app).value == "refund"  # the query stays
        await pilot.press("down", "ctrl+r")  # the table's own ↓ moves the cursor; ctrl+r replays that hit
        await settle(pilot)
        assert app.results == [BrowserChoice("replay", "s-billing", 4)]


def search_box(app: BrowserHost):
    return app.screen.query_one("#search")


async def test_typing_a_word_at_the_table_searches_for_it(store: SessionStore) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.screen.focused is table(app)
        await pilot.press(*"password")
        assert app.screen.focused is search_box(app) and search_box(app).value == "password"
        await until(pilot, lambda: column(app, "id") == ["s-login"])
        # Back at the results, a new word replaces the old query, as typing after / does.
        await pilot.press("enter")
        assert app.screen.focused is table(app)
        await pilot.press(*"hello")
        assert search_box(app).value == "hello"
        await until(pilot, lambda: column(app, "id") == ["s-hello"])
    assert app.results == []  # no row action ran on the way


async def test_a_capital_letter_is_typing_even_when_its_small_letter_is_a_row_key(store: SessionStore) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(*"Refund")
        assert search_box(app).value == "Refund"
        await until(pilot, lambda: column(app, "id") == ["s-billing", "s-billing", "s-login"])
    assert app.results == []


async def test_a_word_typed_faster_than_the_screen_keeps_every_letter(store: SessionStore) -> None:
    """All keys arrive before the first is handled (a fast typist, tmux send-keys): none is lost
    and the "r" in "parcel" is a letter, not Replay."""
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for letter in "parcel":
            app.post_message(events.Key(letter, letter))
        await until(pilot, lambda: search_box(app).value == "parcel")
        await until(pilot, lambda: "No message matches “parcel”" in str(app.screen.query_one("#empty").render()))
        assert isinstance(app.screen, BrowserScreen)
    assert app.results == []


async def test_pasting_at_the_table_searches_for_the_pasted_text(store: SessionStore) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.post_message(events.Paste("password"))
        await until(pilot, lambda: search_box(app).value == "password")
        assert app.screen.focused is search_box(app)
        await until(pilot, lambda: column(app, "id") == ["s-login"])


async def test_bound_keys_keep_their_meaning_at_the_table(store: SessionStore) -> None:
    from supportdesk.tui.screens.help import HelpScreen
    from tests.tui_browser_data import HelpHost

    app = HelpHost(lambda: BrowserScreen(store))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")  # the app's help key, not a search for "?"
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen) and search_box(app).value == ""
        await pilot.press("ctrl+o")  # a row key: export
        await settle(pilot)
        assert isinstance(app.screen, ExportDialog)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
    assert app.results == [BrowserChoice("replay", "s-billing")]


async def test_no_match_says_so(store: SessionStore) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"zebra", "enter")
        await settle(pilot)
        assert table(app).row_count == 0
        assert "No message matches" in str(app.screen.query_one("#empty").render())


async def test_customer_markup_and_escapes_show_literally(store: SessionStore) -> None:
    store.clock = fixed_clock(20)
    await store.create_session("triage", session_id="s-evil")
    evil = "\x1b[31mred [bold red]refund[/] [link=http://x]click[/link]\x1b[0m"
    await store.append("s-evil", [Message(role="customer", text=evil, agent="triage")])
    from supportdesk.tui.seen import mark_seen

    mark_seen("s-evil", 1)  # read already: no mark before the title
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        title = table(app).get_cell("s-evil", "title")
        # (cut to the column after a whole word: the "[link=…]" word does not fit)
        assert title.plain.startswith("␛[31mred [bold red]refund[/]")
        assert "\x1b" not in title.plain and "␛[31m" in title.plain
        assert all(not span.style or str(span.style) == "" for span in title.spans)
        await pilot.press("slash", *"refund", "enter")
        await settle(pilot)
        snippet = table(app).get_cell("s-evil#1", "snippet")
        assert "[bold red]" in snippet.plain and "\x1b" not in snippet.plain


async def test_enter_opens_and_r_replays(store: SessionStore) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
    assert app.results == [BrowserChoice("open", "s-billing")]

    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "ctrl+r")
        await settle(pilot)
    assert app.results == [BrowserChoice("replay", "s-login")]


async def test_a_search_hit_replays_at_its_message(store: SessionStore) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"refund", "enter")
        await settle(pilot)
        assert column(app, "seq") == ["5", "4", "1"]
        await pilot.press("down", "ctrl+r")
        await settle(pilot)
    assert app.results == [BrowserChoice("replay", "s-billing", 4)]


async def test_replay_from_a_hit_opens_the_replay_at_the_hit(tmp_path: Path, test_desk) -> None:
    """The real app: browser, search, `r` on a hit -> the replay cursor stands on the hit's message."""
    from supportdesk.tui.app import SupportDeskApp
    from supportdesk.tui.screens.replay import ReplayScreen
    from tests.tui_seed import scripted_desk, until as until_app

    desk, _, _ = await scripted_desk(tmp_path / "desk.db", test_desk)
    await seed_sessions(desk.store)
    app = SupportDeskApp(desk=desk)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until_app(pilot, lambda: app.chat is not None and app.screen is app.chat)
            for row, (session_id, seq, total) in enumerate([("s-billing", 4, 6), ("s-login", 1, 3)]):
                await pilot.press("ctrl+b")
                await until_app(pilot, lambda: isinstance(app.screen, BrowserScreen))
                await pilot.press("slash", *"refund", "enter")
                await until_app(pilot, lambda: table(app).row_count == 3 and app.screen.focused is table(app))
                await pilot.press(*["down"] * (row + 1), "ctrl+r")
                await until_app(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.total)
                replay = app.screen
                assert (replay.session_id, replay.position, replay.total) == (session_id, seq, total)
                await pilot.press("escape")
                await until_app(pilot, lambda: app.screen is app.chat)
    finally:
        await desk.close()


async def test_opening_a_hit_far_from_the_end_shows_the_matching_message(tmp_path: Path, test_desk) -> None:
    """The real app: Enter on a hit opens the session live with the hit's message in the window."""
    from supportdesk.tui.app import SupportDeskApp
    from supportdesk.tui.widgets import Conversation
    from tests.tui_seed import scripted_desk, until as until_app

    desk, _, _ = await scripted_desk(tmp_path / "desk.db", test_desk)
    await desk.store.create_session("triage", session_id="s-long")
    before = [Message(role="customer", text=f"line {n}", agent="triage") for n in range(1, 201)]
    after = [Message(role="agent", text=f"answer {n}", agent="triage") for n in range(1, 201)]
    await desk.store.append("s-long", [*before, Message(role="customer", text="my parcel is lost", agent="triage"), *after])
    app = SupportDeskApp(desk=desk)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until_app(pilot, lambda: app.chat is not None and app.screen is app.chat)
            await pilot.press("ctrl+b")
            await until_app(pilot, lambda: isinstance(app.screen, BrowserScreen))
            await pilot.press("slash", *"parcel", "enter")
            await until_app(pilot, lambda: table(app).row_count == 1 and app.screen.focused is table(app))
            await pilot.press("enter")
            conversation = app.chat.query_one(Conversation)
            await until_app(pilot, lambda: app.screen is app.chat and app.chat.session_id == "s-long")
            await until_app(pilot, lambda: conversation.first <= 201 <= conversation.last)
            assert conversation.last < 401  # the window moved to the hit, away from the live end
    finally:
        await desk.close()


async def test_escape_closes(store: SessionStore) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, BrowserScreen)
    assert app.results == [None]


async def test_fork_copies_the_whole_session_and_opens_the_copy(store: SessionStore) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmFork)
        assert "copy of its 6 items" in str(app.screen.query_one(".dialog-body").render())
        await pilot.press("enter")  # the focused button is Fork: nothing is lost by forking
        await settle(pilot)
    [(action, new_id, seq)] = app.results
    assert action == "open" and new_id != "s-billing" and seq is None
    fork = await store.get_session(new_id)
    source = await store.get_session("s-billing")
    assert fork.forked_from == "s-billing" and fork.forked_at == source.item_count == fork.item_count
    assert fork.active_agent == "billing"
    assert [replace(i, session_id="") for i in await store.range(new_id, 1, 99)] == [
        replace(i, session_id="") for i in await store.range("s-billing", 1, 99)
    ]


async def fork_count(store: SessionStore) -> int:
    return sum(1 for info in await store.list_sessions(limit=99) if info.forked_from)


async def test_fork_asks_first_and_every_no_keeps_the_list_as_it_was(store: SessionStore) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for answer in ("n", "escape", "#cancel"):
            await pilot.press("ctrl+f")
            await settle(pilot)
            assert isinstance(app.screen, ConfirmFork)
            if answer.startswith("#"):
                await pilot.click(answer)
            else:
                await pilot.press(answer)
            await settle(pilot)
            assert isinstance(app.screen, BrowserScreen)
        assert await fork_count(store) == 0 and app.results == []
        assert column(app, "id") == ["s-billing", "s-login", "s-hello"]


@pytest.mark.parametrize("answer", ["y", "#fork"])
async def test_fork_confirmed_by_y_or_by_mouse_opens_the_copy(store: SessionStore, answer: str) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.click(SessionTable, offset=(5, 3))  # the second row: s-login
        await settle(pilot)
        await pilot.press("ctrl+f")
        await settle(pilot)
        if answer.startswith("#"):
            await pilot.click(answer)
        else:
            await pilot.press(answer)
        await settle(pilot)
    [(action, new_id, seq)] = app.results
    fork = await store.get_session(new_id)
    assert action == "open" and seq is None
    assert (fork.forked_from, fork.forked_at, fork.item_count) == ("s-login", 3, 3)


async def test_fork_copies_what_the_dialog_counted(store: SessionStore) -> None:
    """A message arriving while the dialog is open is not copied: the answer was about 6 items."""
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f")
        await settle(pilot)
        await store.append("s-billing", [Message(role="customer", text="one more thing", agent="billing")])
        await pilot.press("y")
        await settle(pilot)
    [(_, new_id, _)] = app.results
    assert (await store.get_session(new_id)).item_count == 6


async def test_words_typed_at_the_table_never_open_a_question(store: SessionStore) -> None:
    """'delivery' and 'fly' typed at the table search for them: letters are never row keys."""
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(*"delivery")
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen)
        assert await store.get_session("s-billing") is not None
        # The whole word went to the search box, where a y is just a letter.
        assert app.screen.query_one("#search").value == "delivery"

    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(*"fly")
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen)
        assert app.screen.query_one("#search").value == "fly"
    assert await fork_count(store) == 0 and app.results == []


@pytest.mark.parametrize("burst", ["xz", "ny", "nn"])
async def test_keys_typed_in_a_burst_at_a_question_answer_it_once(store: SessionStore, burst: str) -> None:
    """The second key of a burst reaches the question after the first answered it: it must not
    close the browser too, nor answer again."""
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("delete")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDelete)
        for letter in burst:
            app.post_message(events.Key(letter, letter))
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen)
        assert await store.get_session("s-billing") is not None
    assert app.results == []


async def test_export_markdown_by_keyboard_and_json_by_mouse(store: SessionStore, tmp_path: Path) -> None:
    app = host(store, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        await settle(pilot)
        assert isinstance(app.screen, ExportDialog)
        await pilot.press("enter")  # the suggested path, next to the export folder
        await settle(pilot)
        markdown = tmp_path / "supportdesk-s-billing.md"
        text = markdown.read_text(encoding="utf-8")
        assert text.startswith("# Hi, I was charged twice for my subscription this month.")
        assert "duplicate charge of $29.99" in text
        assert any("Exported 6 items" in n.message for n in app._notifications)

        await pilot.press("down", "ctrl+o")
        await settle(pilot)
        await pilot.click("#json")
        await settle(pilot)
        data = json.loads((tmp_path / "supportdesk-s-login.json").read_text(encoding="utf-8"))
        assert data["session"]["id"] == "s-login"
        assert [i["kind"] for i in data["items"]] == ["message", "handoff", "message"]
        assert isinstance(app.screen, BrowserScreen)  # exporting keeps the browser open
    assert app.results == []


async def test_export_to_a_typed_path(store: SessionStore, tmp_path: Path) -> None:
    app = host(store, tmp_path)
    target = tmp_path / "out" / "mine.json"
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        await settle(pilot)
        field = app.screen.query_one("#path")
        field.value = ""
        await pilot.press(*str(target), "enter")
        await settle(pilot)
    assert json.loads(target.read_text())["session"]["id"] == "s-billing"


async def test_export_to_an_unwritable_place_is_one_line(store: SessionStore, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    app = host(store, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        await settle(pilot)
        app.screen.query_one("#path").value = str(blocker / "x.md")
        await pilot.press("enter")
        await settle(pilot)
        [note] = [n for n in app._notifications if n.severity == "error"]
        assert "Could not write" in note.message and "\n" not in note.message


async def test_delete_asks_first_and_no_keeps_the_session(store: SessionStore) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("delete")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDelete)
        await pilot.press("enter")  # the focused button is Cancel: the safe default
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen)
        assert await store.get_session("s-billing") is not None
        await pilot.press("delete", "n")
        await settle(pilot)
        assert await store.get_session("s-billing") is not None

        await pilot.press("delete", "y")
        await settle(pilot)
        assert await store.get_session("s-billing") is None
        assert column(app, "id") == ["s-login", "s-hello"]
        assert await store.search("duplicate") == []


async def test_delete_confirmed_by_tabbing_to_the_button(store: SessionStore) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "down", "delete")
        await settle(pilot)
        await pilot.press("shift+tab", "enter")  # from Cancel back to Delete
        await settle(pilot)
        assert await store.get_session("s-hello") is None
        assert column(app, "id") == ["s-billing", "s-login"]


async def test_mouse_click_on_a_row_then_again_opens_it(store: SessionStore) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        # row 0 is at y=2 inside the table (border, header); row 1 below it
        await pilot.click(SessionTable, offset=(5, 3))
        await settle(pilot)
        assert table(app).cursor_row == 1
        assert app.results == []
        await pilot.click(SessionTable, offset=(5, 3))
        await settle(pilot)
    assert app.results == [BrowserChoice("open", "s-login")]


async def test_mouse_delete_through_the_dialog(store: SessionStore) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.click(SessionTable, offset=(5, 4))
        await settle(pilot)
        await pilot.press("delete")
        await settle(pilot)
        await pilot.click("#delete")
        await settle(pilot)
        assert await store.get_session("s-hello") is None


async def test_sessions_written_elsewhere_appear(store: SessionStore, tmp_path: Path) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        other = await SessionStore.open(store.path)  # another connection, like another process
        try:
            other.clock = fixed_clock(30)
            await other.create_session("triage", session_id="s-new")
            await other.append("s-new", [Message(role="customer", text="brand new", agent="triage")])
        finally:
            await other.close()
        await until(pilot, lambda: column(app, "id")[:1] == ["s-new"])
        assert column(app, "id") == ["s-new", "s-billing", "s-login", "s-hello"]


async def test_mouse_only_replay_from_the_footer(store: SessionStore) -> None:
    from textual.widgets._footer import FooterKey

    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.click(SessionTable, offset=(5, 4))  # the third row: s-hello
        await settle(pilot)
        [replay_key] = [k for k in app.screen.query(FooterKey) if k.action == "replay"]
        await pilot.click(replay_key)
        await settle(pilot)
    assert app.results == [BrowserChoice("replay", "s-hello")]


async def test_status_says_what_the_session_waits_for(store: SessionStore) -> None:
    await store.set_status("s-login", "awaiting_approval")
    await store.set_status("s-hello", "needs_human")
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert column(app, "status") == ["open", "needs approval", "needs a human"]
        # A mark before the title flags the sessions that need staff.
        assert [mark.startswith("!") for mark in marks(app)] == [False, True, True]


async def test_sessions_with_activity_not_seen_here_are_marked(store: SessionStore) -> None:
    from supportdesk.tui.seen import mark_seen

    mark_seen("s-billing", 6)  # read to its end in this terminal
    mark_seen("s-login", 1)  # read before its last items arrived
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert dict(zip(column(app, "id"), marks(app))) == {"s-billing": "", "s-login": "●", "s-hello": "●"}


async def test_a_search_hit_names_the_agent_who_wrote_the_message(store: SessionStore) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"cannot", "enter")
        await settle(pilot)
        # s-login is with Technical now, but the customer's message was written while Triage held it.
        hits = dict(zip(column(app, "seq"), column(app, "agent")))
        assert hits == {"1": "triage"}


@pytest.mark.parametrize("width", [80, 120, 160])
async def test_the_table_fits_the_terminal_without_sideways_scrolling(store: SessionStore, width: int) -> None:
    app = host(store)
    async with app.run_test(size=(width, 30)) as pilot:
        await settle(pilot)
        t = table(app)
        keys = [column.key.value for column in t.columns.values()]
        # Title, status and id always stay; space short, handoffs go first, then agent, then start.
        every = ["title", "started", "agent", "handoffs", "status", "id"]
        assert keys == [key for key in every if key in keys]
        dropped = {key for key in every if key not in keys}
        assert dropped == set(["handoffs", "agent", "started"][: len(dropped)])
        assert (width == 80) == bool(dropped)
        assert t.max_scroll_x == 0
        await pilot.press("slash", *"refund", "enter")
        await settle(pilot)
        assert table(app).max_scroll_x == 0


async def test_a_failing_store_is_one_line_and_the_browser_stays(store: SessionStore, monkeypatch) -> None:
    from supportdesk.store import StoreError

    async def locked(*args, **kwargs):
        raise StoreError("desk.db: the database stayed locked by another process for 10 s")

    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        monkeypatch.setattr(store, "search", locked)
        monkeypatch.setattr(store, "fork", locked)
        await pilot.press("slash", *"refund", "enter")
        await settle(pilot)
        await pilot.press("ctrl+f", "y")
        await settle(pilot)
        errors = [n.message for n in app._notifications if n.severity == "error"]
        assert errors == [
            "Could not search: desk.db: the database stayed locked by another process for 10 s",
            "Could not fork the session: desk.db: the database stayed locked by another process for 10 s",
        ]
        assert isinstance(app.screen, BrowserScreen) and app.results == []


async def test_forks_and_untitled_sessions_are_marked(store: SessionStore) -> None:
    store.clock = fixed_clock(40)
    fork = await store.fork("s-login", 2)
    store.clock = fixed_clock(50)
    await store.create_session("triage", session_id="s-empty")
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        titles = dict(zip(column(app, "id"), column(app, "title")))
        assert titles["s-empty"] == "Untitled session"
        assert titles[fork.id].startswith("⑂ I cannot log in")
        assert titles["s-login"].startswith("I cannot log in")
