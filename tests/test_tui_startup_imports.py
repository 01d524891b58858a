"""What the TUI imports before its first frame and before a session's first page.

Start-up time is measured in benchmarks/bench_tui.py; these tests guard its causes without a
clock: a module that the first frame (or the first page) does not need must not be imported on
the way to it. Each probe runs in a fresh interpreter and records `sys.modules` at the moment
the app reaches the step, from the app's own hook for it, so the answer does not depend on how
fast the machine is.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tui_seed import SEED_ID, seeded_file

REPO = Path(__file__).resolve().parent.parent

# Nothing of the desk before the first frame: the models (pydantic), the store, the engine, the
# Markdown renderer, the tools and the offline model all load after it.
NOT_BEFORE_FIRST_FRAME = [
    "pydantic",
    "supportdesk.items",
    "supportdesk.config",
    "supportdesk.store",
    "supportdesk.engine.runner",
    "supportdesk.tui.screens.chat",
    "rich.markdown",
    "markdown_it",
    "textual.widgets._markdown",
    "supportdesk.tools",
    "supportdesk.models.offline.model",
]
# Built after the session's first page is drawn (in a thread): the tool registry with every
# tool, and the offline model.
ITEM_VALIDATOR = "supportdesk.items:_validator_built()"
NOT_BEFORE_FIRST_PAGE = [
    # The runner, with the hooks and the tool mechanism it imports, is built in the warm-up
    # (engine/desk.py); the page reads what it shows from the store.
    "supportdesk.engine.runner",
    "supportdesk.engine.hooks",
    "supportdesk.engine.tools",
    "supportdesk.tools",
    "supportdesk.tools.billing",
    "supportdesk.models.offline.model",
    # The demo business data (seeded on a new database: 25-40 ms) opens in the warm-up.
    "supportdesk.business.sqlite",
    "textual.widgets._markdown",  # only a reply streaming in needs the Markdown widget
    "supportdesk.tui.screens.dashboard",  # the dashboard's charts load when it opens
    # The desk's records are dataclasses (supportdesk.records): the page's rows are constructed
    # from their checked JSON (supportdesk.items.item_from_json), the session's row likewise
    # (store.protocol's `session_info`) and the desk file comes from its validated cache, so
    # pydantic (about 75 ms of a cold start by itself) is imported in the warm-up, which builds
    # the items' validator. Building the first validator scans installed packages for pydantic
    # plug-ins, as finding the desk's hooks' entry points does: that waits for the warm-up too.
    "pydantic",
    "pydantic_core",
    ITEM_VALIDATOR,
    "importlib.metadata",
    # Rich's emoji table loads with the first label parsed as markup (a DataTable column named
    # by a str): the page's panes name theirs with Text.
    "rich._emoji_codes",
]

PROBE = r"""
import asyncio, gc, json, sys
from supportdesk.cli import build_parser

WATCH = json.loads(sys.argv[1])
argv = sys.argv[2:]
args = build_parser(argv).parse_args(argv)

gc.disable()  # as `supportdesk` does before it imports the app (cli._tui)
from supportdesk.tui.app import SupportDeskApp

seen = {}

def built(name):
    # "module:function()": what the function says (whether a validator is built), once imported
    module, _, function = name.partition(":")
    found = getattr(sys.modules.get(module), function.removesuffix("()"), None)
    return bool(found and found())

def loaded():
    return [name for name in WATCH if (built(name) if ":" in name else name in sys.modules)]

class Probe(SupportDeskApp):
    def _open(self):
        # Called once the first frame (the start screen) has been drawn.
        seen["first_frame"] = loaded()
        return super()._open()

    def _warm_up(self):
        # Called once the chat screen shows the session's first page.
        seen["first_page"] = loaded()
        seen["gc_at_first_page"] = gc.isenabled()
        return super()._warm_up()

async def main():
    app = Probe(db=args.db, config=args.config, session_id=args.session)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(3000):  # bounded progress, not a timing
            if "first_page" in seen and app.chat is not None:
                break
            await pilot.pause(0.01)
        await app.workers.wait_for_complete()
        seen["after_warm_up"] = loaded()
        seen["gc_after_warm_up"] = gc.isenabled()
        seen["last"] = app.chat.query_one("Conversation").last if app.chat else None

asyncio.run(main())
print(json.dumps(seen))
"""


def _probe(tmp_path: Path, watch: list[str], session: str | None = None) -> dict[str, list[str]]:
    """`session`: one already in tmp_path/desk.db; by default the seeded double-charge session."""
    db = tmp_path / "desk.db"
    if session is None and not db.exists():
        seeded_file(db)
    argv = ["chat", "--session", session or SEED_ID, "--db", str(db), "--config", str(REPO / "agents.toml")]
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data"),
           "TEXTUAL_ANIMATIONS": "none", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", PROBE, json.dumps(watch), *argv],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_first_frame_imports_nothing_of_the_desk(tmp_path):
    seen = _probe(tmp_path, NOT_BEFORE_FIRST_FRAME)
    assert seen["first_frame"] == []
    # The probe sees them arrive later, so it would notice them arriving early.
    assert {"supportdesk.items", "supportdesk.store", "supportdesk.tui.screens.chat"} <= set(seen["first_page"])


def test_the_model_and_tools_are_built_after_the_first_page(tmp_path):
    # The first start validates the desk file (importing pydantic and building its validators,
    # which scans the installed packages for pydantic plug-ins) and caches it; every later start
    # reads the cache.
    _probe(tmp_path, NOT_BEFORE_FIRST_PAGE)
    seen = _probe(tmp_path, NOT_BEFORE_FIRST_PAGE)
    assert seen["first_page"] == []
    assert seen["last"] == 14  # the page shown was the session's end
    # ... and they are there once the app has warmed up, before any turn asks for them.
    assert {
        "supportdesk.engine.runner",
        "supportdesk.tools.billing",
        "supportdesk.models.offline.model",
        "supportdesk.business.sqlite",
        "pydantic",
        ITEM_VALIDATOR,
        "importlib.metadata",
    } <= set(seen["after_warm_up"])


def test_the_collector_is_off_until_the_first_page_and_on_after(tmp_path, monkeypatch):
    """`supportdesk` starts without garbage collection (its passes over the start-up's objects
    were 50-100 ms before the first page) and the app turns it back on once the page is drawn."""
    import gc

    from supportdesk import cli
    from supportdesk.tui import app

    was = gc.isenabled()
    states: list[bool] = []
    monkeypatch.setattr(app, "run_app", lambda **kw: states.append(gc.isenabled()) or 0)
    try:
        assert cli.main(["--db", str(tmp_path / "desk.db"), "chat"]) == 0
    finally:
        gc.enable() if was else gc.disable()
    assert states == [False]  # the TUI was started with the collector off
    seen = _probe(tmp_path, [])
    assert seen["gc_at_first_page"] is False and seen["gc_after_warm_up"] is True


def _with_unknown_tool(desk: str) -> str:
    assert '"find_charges"' in desk
    return desk.replace('"find_charges"', '"find_chargez"', 1)


def _with_missing_hook(desk: str) -> str:
    return desk + '\n[hooks]\nenabled = ["no_such_module:Hook"]\n'


@pytest.mark.parametrize(
    "broken, line",
    [
        # The agents' tool names are checked once the registry is built (after the first page),
        # in the same words as `supportdesk config check`.
        (_with_unknown_tool, "no tool named 'find_chargez'"),
        # The hooks load in the warm-up (finding entry points reads every package's metadata).
        (_with_missing_hook, "[hooks] hook 'no_such_module:Hook' cannot be loaded"),
    ],
)
async def test_a_desk_file_mistake_found_after_the_first_page_is_still_one_clear_line(tmp_path, broken, line):
    from textual.widgets import Static

    from supportdesk.tui.app import MessageScreen, SupportDeskApp
    from tui_seed import until

    desk_file = tmp_path / "agents.toml"
    desk_file.write_text(broken((REPO / "agents.toml").read_text()))
    app = SupportDeskApp(db=tmp_path / "desk.db", config=desk_file)
    async with app.run_test(size=(120, 40)) as pilot:
        # The screen is pushed before its children mount: wait for the line itself.
        await until(pilot, lambda: isinstance(app.screen, MessageScreen) and bool(app.screen.query(Static)))
        text = str(app.screen.query_one(Static).render())
        assert line in text and "Traceback" not in text
        await pilot.press("q")
    assert app.exit_code == 1


async def test_a_deferred_desk_loads_its_hooks_on_first_use(tmp_path, monkeypatch):
    from supportdesk.engine import hooks as hooks_module
    from supportdesk.wiring import open_desk

    loads: list[int] = []
    real = hooks_module.load_hooks
    monkeypatch.setattr(hooks_module, "load_hooks", lambda *a, **kw: loads.append(1) or real(*a, **kw))
    desk = await open_desk(tmp_path / "desk.db", REPO / "agents.toml", deferred=True)
    try:
        assert loads == []  # opening the desk did not look for hooks
        desk.runner.warm()
        assert loads == [1] and desk.runner.hooks is desk.runner.hooks  # loaded once, kept
    finally:
        await desk.close()
    undeferred = await open_desk(tmp_path / "desk.db", REPO / "agents.toml")
    await undeferred.close()
    assert loads == [1, 1]  # without `deferred`, at once


async def test_a_deferred_desk_builds_its_model_and_tools_on_first_use(tmp_path):
    from supportdesk.wiring import open_desk

    desk = await open_desk(tmp_path / "desk.db", REPO / "agents.toml", deferred=True)
    try:
        assert not desk.runner.provider_built
        assert "find_charges" in desk.runner.tools.names()  # built when asked for
        assert desk.runner.provider is desk.runner.provider and desk.runner.provider_built
    finally:
        await desk.close()


async def test_a_turn_before_the_warm_up_builds_the_deferred_parts_off_the_event_loop(tmp_path, monkeypatch):
    """A turn that comes before the TUI's warm-up (a message typed at once, a crashed turn
    resumed as its session opens) builds the model, the tools and the hooks in a thread: on the
    event loop they would freeze the screen while they build."""
    import threading

    from supportdesk import wiring
    from supportdesk.wiring import open_desk

    built_on: dict[str, threading.Thread] = {}
    for name in ("_provider", "_tool_registry", "desk_hooks"):
        real = getattr(wiring, name)
        monkeypatch.setattr(wiring, name, lambda *a, _name=name, _real=real: built_on.setdefault(_name, threading.current_thread()) and _real(*a))
    desk = await open_desk(tmp_path / "desk.db", REPO / "agents.toml", deferred=True)
    try:
        assert not desk.runner.warmed and built_on == {}
        events = [event async for event in desk.runner.send(None, "Hi, I was charged twice for my plan")]
        assert events and desk.runner.warmed
        assert set(built_on) == {"_provider", "_tool_registry", "desk_hooks"}
        assert all(thread is not threading.main_thread() for thread in built_on.values())
    finally:
        await desk.close()


async def test_a_deferred_desk_opens_its_business_data_once_at_first_need(tmp_path, monkeypatch):
    """The demo customer data (seeded on a new database) is opened by the first tool call, not
    by opening the desk; callers that wait together share one open, and a caller cancelled while
    it waits does not cancel it for the others."""
    import asyncio

    from supportdesk import wiring
    from supportdesk.wiring import open_desk

    opens: list[object] = []
    gate = asyncio.Event()
    real = wiring._open_customers

    async def slow_open(location):
        opens.append(location)
        await gate.wait()
        return await real(location)

    monkeypatch.setattr(wiring, "_open_customers", slow_open)
    desk = await open_desk(tmp_path / "desk.db", REPO / "agents.toml", deferred=True)
    try:
        assert opens == [] and desk.services.customers is None
        first = asyncio.create_task(desk.services.ready())
        second = asyncio.create_task(desk.services.ready())
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        first.cancel()
        gate.set()
        await second
        assert len(opens) == 1 and desk.services.customers is not None
        assert await desk.services.customers.find_customer("dana@example.com") is not None
        await desk.services.ready()  # opened: nothing more
        assert len(opens) == 1
    finally:
        await desk.close()


async def test_a_tool_call_on_a_deferred_desk_opens_the_business_data(tmp_path):
    from supportdesk.wiring import open_desk

    desk = await open_desk(tmp_path / "desk.db", REPO / "agents.toml", deferred=True)
    try:
        assert desk.services.customers is None
        events = [event async for event in desk.runner.send(None, "I was charged twice, my email is dana@example.com")]
        assert desk.services.customers is not None
        # The tool found the customer in the data it opened (not "not available on this desk").
        results = [e.item for e in events if getattr(getattr(e, "item", None), "kind", "") == "tool_result"]
        assert results and not any("not available" in str(r.output) for r in results)
    finally:
        await desk.close()


async def test_closing_a_deferred_desk_while_its_business_data_opens_closes_it(tmp_path, monkeypatch):
    import asyncio

    from supportdesk import wiring
    from supportdesk.wiring import open_desk

    gate = asyncio.Event()
    opened: list[object] = []
    real = wiring._open_customers

    async def slow_open(location):
        await gate.wait()
        data = await real(location)
        opened.append(data)
        return data

    monkeypatch.setattr(wiring, "_open_customers", slow_open)
    desk = await open_desk(tmp_path / "desk.db", REPO / "agents.toml", deferred=True)
    waiting = asyncio.create_task(desk.services.ready())
    await asyncio.sleep(0)
    closing = asyncio.create_task(desk.close())
    await asyncio.sleep(0)
    assert not closing.done()  # it waits for the open in flight ...
    gate.set()
    await closing
    await waiting
    # ... and closes what it opened: its connection answers no more.
    with pytest.raises(ValueError, match="no active connection"):  # aiosqlite's closed connection
        await opened[0].find_customer("dana@example.com")


async def test_business_data_that_cannot_be_set_up_after_the_first_page_is_one_clear_line(tmp_path, monkeypatch):
    from textual.widgets import Static

    from supportdesk import wiring
    from supportdesk.engine.log import StoreError
    from supportdesk.tui.app import MessageScreen, SupportDeskApp
    from tui_seed import until

    async def full_disk(location):
        raise StoreError(f"{location}: cannot set up the demo customer data: database or disk is full")

    monkeypatch.setattr(wiring, "_open_customers", full_disk)
    app = SupportDeskApp(db=tmp_path / "desk.db", config=REPO / "agents.toml")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, MessageScreen) and bool(app.screen.query(Static)))
        text = str(app.screen.query_one(Static).render())
        assert "cannot set up the demo customer data: database or disk is full" in text
        assert "Traceback" not in text and "StoreError" not in text
        await pilot.press("q")
    assert app.exit_code == 1


def test_a_page_of_simple_replies_loads_no_markdown(tmp_path):
    """Rich's Markdown (markdown-it, Pygments) loads with the first reply that needs it: a page of
    plain replies, strong words and bullet lists is drawn without it (widgets/markdown_text.py),
    the same cells."""
    import asyncio

    from supportdesk.items import Message
    from tui_seed import repo_desk, seed_long

    async def seed() -> None:
        desk = await repo_desk(tmp_path / "desk.db")
        try:
            await seed_long(desk.store, "plain", 30)  # "agent line N": no Markdown syntax
            # Answered: no unfinished turn to resume (its streaming reply would load Markdown).
            done = "I've refunded **CH-26**:\n\n- refund RF-1\n- back on your card in 5-10 days\n\nAll done, anything else?"
            await desk.store.append("plain", [Message(role="agent", text=done, agent="triage")])
        finally:
            await desk.close()

    asyncio.run(seed())
    seen = _probe(tmp_path, ["rich.markdown", "markdown_it"], session="plain")
    assert seen["last"] >= 30 and seen["first_page"] == []  # the end of the session, drawn without it


async def test_the_way_to_the_first_page_reparses_no_stylesheet(tmp_path, monkeypatch):
    """The chat screen's stylesheet is the app's, read with the first frame: as the screen's own
    CSS_PATH it was read when the screen was first shown, and re-parsed every stylesheet the app
    had and restyled everything on screen on the way to the first page. Its width class is set
    when it is built, so Textual's first resize finds it set and restyles nothing either."""
    from textual.css.stylesheet import Stylesheet

    from supportdesk.tui.app import SupportDeskApp
    from supportdesk.tui.screens.chat import ChatScreen
    from tui_seed import until

    after_first_frame: list[bool] = []
    reparsed: list[bool] = []
    real_reparse = Stylesheet.reparse

    def reparse(self: Stylesheet) -> None:
        reparsed.extend(after_first_frame)  # (the theme set before the first frame re-parses, once)
        real_reparse(self)

    class Counting(SupportDeskApp):
        def _open(self):  # called once the first frame is drawn
            after_first_frame.append(True)
            return super()._open()

    monkeypatch.setattr(Stylesheet, "reparse", reparse)
    app = Counting(db=tmp_path / "desk.db", config=REPO / "agents.toml")
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.chat is not None)
        assert after_first_frame and reparsed == []
        assert app.chat.has_class("-narrow") and not app.chat.has_class("-wide")
        # Built, not yet shown: the class is already the one the width asks for.
        assert ChatScreen(app.desk, app.look).has_class("-narrow")
        await pilot.resize_terminal(130, 30)
        await until(pilot, lambda: app.chat.has_class("-wide"))
        assert ChatScreen(app.desk, app.look).has_class("-wide")
