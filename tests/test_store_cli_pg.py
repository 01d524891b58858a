"""Every command on a PostgreSQL URL, end to end: run, sessions list/show/search, export, eval,
doctor, and the TUI (chat, the browser with search, replay) on a real server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from supportdesk.cli import main
from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.screens.browser import BrowserScreen
from supportdesk.tui.screens.replay import ReplayScreen
from supportdesk.tui.widgets import Conversation, Prompt
from tests.conftest import REPO
from tests.tui_seed import until

pytestmark = pytest.mark.postgres

DESK = str(REPO / "agents.toml")


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_run_sessions_export_and_doctor_on_postgres(pg_url: str, tmp_path: Path, capsys):
    code, out, err = cli(capsys, "run", "--db", pg_url, "--config", DESK, "I was charged twice for my subscription")
    assert code == 0, err
    session = out.splitlines()[0].split()[1]
    assert "Billing" in out or "billing" in out

    code, out, _ = cli(capsys, "run", "--db", pg_url, "--config", DESK, "--session", session[:6], "thanks, and my app crashes")
    assert code == 0 and out.splitlines()[0] == f"session {session}"

    code, out, _ = cli(capsys, "sessions", "list", "--db", pg_url)
    assert code == 0 and out.startswith(session) and "charged twice" in out
    code, out, _ = cli(capsys, "sessions", "list", "--db", pg_url, "--search", "charg", "--json")
    hits = [json.loads(line) for line in out.splitlines()]
    first = next(h for h in hits if h["seq"] == 1)
    assert code == 0 and {h["session_id"] for h in hits} == {session}
    assert "«charged»" in first["snippet"]

    code, out, _ = cli(capsys, "sessions", "show", "--db", pg_url, session)
    assert code == 0 and "I was charged twice" in out and "my app crashes" in out

    target = tmp_path / "s.json"
    code, _, _ = cli(capsys, "export", "--db", pg_url, session, "--format", "json", "-o", str(target))
    exported = json.loads(target.read_text())
    assert code == 0 and exported["session"]["id"] == session
    assert [i["seq"] for i in exported["items"]] == list(range(1, len(exported["items"]) + 1))
    code, out, _ = cli(capsys, "export", "--db", pg_url, session)
    assert code == 0 and "I was charged twice" in out

    code, out, err = cli(capsys, "doctor", "--db", pg_url, "--config", DESK)
    assert code == 0, out + err
    store_line = next(line for line in out.splitlines() if "store" in line)
    assert store_line.startswith("✓") and "PostgreSQL" in store_line and "(1 sessions)" in store_line
    assert ":***@" in store_line and ":supportdesk_test@" not in store_line


def test_eval_keeps_its_sessions_in_postgres(pg_url: str, tmp_path: Path, capsys):
    rows = tmp_path / "routing.jsonl"
    rows.write_text(
        "\n".join(json.dumps(r) for r in [
            {"text": "I was charged twice", "agent": "billing"},
            {"text": "the app crashes on start", "agent": "technical"},
        ]) + "\n"
    )
    code, out, err = cli(capsys, "eval", "routing", str(rows), "--db", pg_url, "--config", DESK, "--jobs", "1", "--json")
    assert code in (0, 1), err
    assert json.loads(out)["n"] == 2
    code, out, _ = cli(capsys, "sessions", "list", "--db", pg_url, "--json")
    assert len(out.splitlines()) == 2


def test_the_command_itself_with_the_url_in_the_environment(pg_url: str):
    env = {"SUPPORTDESK_DB": pg_url, "PATH": "/usr/bin:/bin", "HOME": "/tmp"}
    done = subprocess.run(
        [sys.executable, "-m", "supportdesk.cli", "run", "--config", DESK, "hello, my password reset email never came"],
        capture_output=True, text=True, timeout=120, env=env, cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    listed = subprocess.run(
        [sys.executable, "-m", "supportdesk.cli", "sessions", "list"], capture_output=True, text=True, timeout=60, env=env, cwd=REPO
    )
    assert listed.returncode == 0 and "password reset" in listed.stdout


async def test_the_tui_chats_browses_searches_and_replays_on_postgres(pg_url: str, tmp_path: Path):
    app = SupportDeskApp(db=pg_url, config=DESK, export_dir=tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.ready.is_set())
        prompt = app.chat.query_one(Prompt)
        prompt.value = "I was charged twice for my subscription"
        await pilot.press("enter")
        await until(pilot, lambda: any(i.kind == "handoff" for i in app.chat.query_one(Conversation).items))
        session = app.chat.session_id
        assert session is not None
        await until(pilot, lambda: not app.chat._turn_lock.locked())

        app.action_open_browser()
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen) and session in app.screen._rows)
        browser = app.screen
        await pilot.press("slash")
        await pilot.press(*"charg")
        await until(
            pilot, lambda: browser.query_text == "charg" and any(row.session_id == session and row.seq == 1 for row in browser._rows.values())
        )

        app.open_replay(session)
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and getattr(app.screen, "info", None) is not None)
        replay = app.screen
        total = replay.info.item_count
        await until(pilot, lambda: replay.query_one(Conversation).end == total and replay.query_one(Conversation).items)
        assert replay.session_id == session and replay.stops  # the handoff stops read from PostgreSQL
