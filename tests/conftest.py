from __future__ import annotations

import ast
import functools
import inspect
import os
import sys
import threading
from pathlib import Path

import pytest
from pydantic import BaseModel

from supportdesk.config import DeskConfig, ToolLimits, parse_desk
from supportdesk.engine.tools import ToolRegistry
from tests import pg

REPO = Path(__file__).resolve().parent.parent
# The triage measurement set (Banking77, CC BY 4.0: tests/data/triage/README.md). It ships in
# the repository: nothing a test runs reads outside it (a fresh clone has nothing beside it).
TRIAGE_DEV = REPO / "tests" / "data" / "triage" / "dev.jsonl"


def triage_dev_set() -> Path:
    """The triage dev set's path. It ships with the tests, so a missing file is a failure,
    never a skip: a guard over the shipped examples must never pass by not running."""
    if not TRIAGE_DEV.exists():
        pytest.fail(f"{TRIAGE_DEV} is missing: it ships with the repository (tests/data/triage)")
    return TRIAGE_DEV

TEST_DESK = """
[desk]
entry = "triage"
fallback = "triage"
[desk.limits]
max_handoffs_per_message = 3
max_steps_per_message = 6
pingpong_window = 4
pingpong_min_unique = 3
step_timeout = 2.0
message_timeout = 5.0

[agents.triage]
title = "Triage"
description = "routes"
handoffs = ["billing", "technical"]

[agents.billing]
title = "Billing"
description = "money"
tools = ["refund", "explode"]
handoffs = ["senior", "triage"]

[agents.technical]
title = "Technical"
description = "fixes"
handoffs = ["senior", "triage"]

[agents.senior]
title = "Senior"
description = "level 2"
level = 2
tools = ["refund"]
handoffs = ["triage"]
"""


class RefundArgs(BaseModel):
    amount: float


# The test refund's limits, declared with it: the engine refuses a call above the agent's
# level's limit and holds one at or above the threshold for staff (engine/tools.py).
TEST_REFUND_LIMITS = ToolLimits(limit_level1=50.0, limit_level2=2000.0, approval_threshold=250.0)


async def every_account_named() -> str:
    """`ToolContext.customer_words` for a customer who has named every demo account: for tests
    of the other rules (whose account a tool may act on: test_tools_named_account.py)."""
    from supportdesk.business import demo

    return " ".join(row["id"] for row in demo.seed_rows()["demo_customers"])


class _Nothing(BaseModel):
    pass


def shipped_specialists() -> list:
    """The shipped desk's agents (agents.toml) other than triage: what scope readings weigh."""
    from supportdesk.config import load_desk

    desk = load_desk(REPO / "agents.toml")
    return [agent for name, agent in desk.agents.items() if name != "triage"]


def add_explode(registry: ToolRegistry) -> None:
    """The test desks' `explode` tool: it always raises, for tests of a tool that fails."""

    @registry.tool("explode", "Always fails", _Nothing)
    def explode(ctx, args):
        raise RuntimeError("boom")


def make_test_tools() -> tuple[ToolRegistry, list[float]]:
    registry = ToolRegistry()
    refunds: list[float] = []

    @registry.tool("refund", "Refund an amount", RefundArgs, effect="money", limits=TEST_REFUND_LIMITS)
    def refund(ctx, args: RefundArgs):
        refunds.append(args.amount)
        return {"refunded": args.amount}

    add_explode(registry)

    return registry, refunds


@pytest.fixture
def test_desk() -> DeskConfig:
    return parse_desk(TEST_DESK, "test.toml", tool_names=["refund", "explode"])


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "desk.db"


@pytest.fixture(autouse=True)
def _private_user_folders(tmp_path_factory, monkeypatch):
    """Tests never read or write the real user's data, config or cache folders."""
    home = tmp_path_factory.mktemp("xdg")
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(home / name.lower()))
    monkeypatch.delenv("SUPPORTDESK_DB", raising=False)
    monkeypatch.delenv("SUPPORTDESK_CONFIG", raising=False)


@pytest.fixture
def pg_url():
    """A fresh, empty database on the test PostgreSQL server: emptied after the test and handed
    to the next one (tests/pg.py checks it then holds nothing a new database would not), dropped
    at the end of the run.

    Skips without SUPPORTDESK_TEST_PG_URL; under CI=true that is a failure instead.
    """
    yield from pg.fresh_database()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI a skipped PostgreSQL test is a failure: CI must prove both stores."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and pg.in_ci() and item.get_closest_marker("postgres") is not None:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"a PostgreSQL test may not skip under CI=true: {reason}"


# --- the `tui` and `slow` markers: `pytest -m "not tui and not slow"` is the fast core loop ---------

# Set here from what a test does, not by hand, so a new Pilot or process test cannot be forgotten.
# What makes a test a TUI test: it drives an app with Pilot (`run_test`), compares a snapshot, or
# runs the real command in tmux.
_TUI_WORDS = ("run_test(", "snap_compare")
# What makes a test slow: it starts OS processes (the real command, writers and workers killed with
# SIGKILL, servers, the Agents SDK's own suite, mypy). Each pays Python's and the package's start-up,
# and together they are most of the core's time. CI runs them all; only the fast loop leaves them out.
_PROCESS_WORDS = ("subprocess", "Popen(", "multiprocessing", "sys.executable", "os.fork", "os.spawn")


@functools.cache
def _definitions(module_name: str) -> dict[str, str]:
    """The source of every function and class in a module, by qualified name, from one parse of
    its file: `inspect.getsource` per function cost tens of seconds of the fast loop's collection."""
    path = getattr(sys.modules.get(module_name), "__file__", None)
    try:
        text = Path(path).read_text(encoding="utf-8") if path else ""
        tree = ast.parse(text)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return {}
    lines = text.splitlines(keepends=True)
    found: dict[str, str] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = prefix + child.name
                found.setdefault(name, "".join(lines[child.lineno - 1 : child.end_lineno]))
                walk(child, name + ("." if isinstance(child, ast.ClassDef) else ".<locals>."))
            else:
                walk(child, prefix)

    walk(tree, "")
    return found


def _source(value) -> str:
    """A function's or class's source ("" when it has none to read)."""
    value = inspect.unwrap(value) if inspect.isfunction(value) else value
    return _definitions(getattr(value, "__module__", None) or "").get(getattr(value, "__qualname__", ""), "")


def _uses(source: str, words) -> bool:
    return any(word in source for word in words)


def _helpers_using(module, words) -> set[str]:
    """Names of the helpers (functions, classes) a test module defines or imports from tests/ (the
    shared harness in tests/tui_seed.py) that use `words`, directly or through another such helper:
    tests that call them do too."""
    sources = {
        name: _source(value)
        for name, value in vars(module).items()
        if (inspect.isfunction(value) or inspect.isclass(value)) and not name.startswith("test_")
        and (value.__module__ == module.__name__ or (value.__module__ or "").startswith("tests."))
    }
    names = {name for name, source in sources.items() if _uses(source, words)}
    while True:  # helpers calling helpers: until nothing more is found
        more = {name for name, source in sources.items() if name not in names and _calls(source, names)}
        if not more:
            return names
        names |= more


def _calls(source: str, names: set[str]) -> bool:
    return any(f"{name}(" in source for name in names)


def _fixtures_using(item, words, helpers_of) -> bool:
    """Whether a fixture the test uses does (a server or worker fixture starts processes too)."""
    info = getattr(item, "_fixtureinfo", None)
    for defs in (info.name2fixturedefs.values() if info is not None else ()):
        function = defs[-1].func if defs else None
        module = sys.modules.get(getattr(function, "__module__", None) or "")
        source = _source(function)
        if _uses(source, words) or (module is not None and _calls(source, helpers_of(module))):
            return True
    return False


def pytest_collection_modifyitems(config, items):
    helpers: dict[tuple[str, str], set[str]] = {}

    def helpers_of(module, kind: str, words) -> set[str]:
        if (module.__name__, kind) not in helpers:
            helpers[module.__name__, kind] = _helpers_using(module, words)
        return helpers[module.__name__, kind]

    for item in items:
        function = getattr(item, "function", None)
        if function is None:
            continue
        source = _source(function)
        if (
            "snap_compare" in getattr(item, "fixturenames", ())
            or item.get_closest_marker("tmux") is not None
            or _uses(source, _TUI_WORDS)
            or _calls(source, helpers_of(item.module, "tui", _TUI_WORDS))
        ):
            item.add_marker(pytest.mark.tui)
        slow_helpers = functools.partial(helpers_of, kind="slow", words=_PROCESS_WORDS)
        if (
            item.get_closest_marker("browser") is not None  # chromium and its driver
            or _uses(source, _PROCESS_WORDS)
            or _calls(source, slow_helpers(item.module))
            or _fixtures_using(item, _PROCESS_WORDS, slow_helpers)
        ):
            item.add_marker(pytest.mark.slow)


# --- `-n auto` (pytest-xdist): one worker per core, at most four -----------------------------------

# Each worker is a process of its own: its own tmp_path, its own PostgreSQL databases (named by
# pid, tests/pg.py), tmux servers on sockets named by pid, servers on port 0. The cap: a worker's
# PostgreSQL test holds up to about ten connections (the store's pool, its lease and change-feed
# connections, a second process), and the server's default max_connections is 100.
MAX_AUTO_WORKERS = 4


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """With workers and no --dist given, they steal work from each other ("worksteal") instead of
    each keeping the share it was dealt ("load"): the tests' lengths are uneven (one property
    test takes 10 s, most a few ms), and the fast loop ended 10 s sooner that way (README)."""
    if getattr(config.option, "numprocesses", None) and getattr(config.option, "dist", None) == "no":
        config.option.dist = "worksteal"


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # the caller chose: xdist's own hook reads it
    return max(1, min(len(os.sched_getaffinity(0)), MAX_AUTO_WORKERS))


# --- no SQLite connection left open --------------------------------------------------------------

# aiosqlite runs each connection on a non-daemon thread: a connection nobody closed keeps the
# interpreter alive after the last test, and a CI run hangs until its time limit instead of
# ending. Each test must close what it opened; the one that does not fails, by name.


def _sqlite_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.endswith("(_connection_worker_thread)")}


@pytest.fixture(autouse=True)
def _no_sqlite_connection_left_open():
    before = _sqlite_threads()
    yield
    left = _sqlite_threads() - before
    for thread in left:  # a closed connection's thread ends just after close() returns
        thread.join(timeout=10)
    left = {t for t in left if t.is_alive()}
    if left:
        pytest.fail(
            f"{len(left)} SQLite connection(s) left open by this test: close every store and desk it opens"
            " (an open connection's thread keeps the test process from exiting)"
        )


_exit_status = 0


def pytest_sessionfinish(session, exitstatus):
    global _exit_status
    _exit_status = int(exitstatus)
    pg.drop_spare_databases()


def pytest_unconfigure(config):
    """Never hang at exit: if connections are still open (the guard above names the tests), say
    so and end the process with a failing status instead of waiting on their threads forever."""
    left = [t for t in _sqlite_threads() if t.is_alive()]
    if left:
        sys.stderr.write(f"\n{len(left)} SQLite connection(s) still open at exit: ending the run as failed\n")
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(_exit_status or 1)
