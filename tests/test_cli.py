"""The headless CLI: sessions, show, export, and clear errors (real processes, real DB)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from supportdesk.items import ContextSet, Handoff, Message, ToolCall, ToolResult
from supportdesk.store import SessionStore


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "supportdesk.cli", *args], capture_output=True, text=True, env=env)


@pytest.fixture
def populated(db_path):
    async def build() -> str:
        async with await SessionStore.open(db_path) as store:
            info = await store.create_session("triage", session_id="abc123def456")
            await store.append(
                info.id,
                [
                    Message(role="customer", text="I was charged twice \x1b[31m[bold]now[/bold]", agent="triage"),
                    ContextSet(key="category", value="billing", writer="triage", agent="triage"),
                    Handoff(from_agent="triage", to_agent="billing", reason="duplicate charge", agent="triage"),
                    ToolCall(call_id="c1", name="refund", arguments={"amount": 29.99}, agent="billing"),
                    ToolResult(call_id="c1", name="refund", output="refunded", agent="billing"),
                    Message(role="agent", text="Refunded **$29.99**.", agent="billing"),
                ],
            )
            other = await store.create_session("triage", session_id="fff000111222")
            await store.append(other.id, [Message(role="customer", text="cannot log in", agent="triage")])
            return info.id

    return asyncio.run(build())


def test_sessions_list_and_search(db_path, populated):
    out = cli("sessions", "list", "--db", str(db_path), "--json")
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["id"] for r in rows] == ["fff000111222", "abc123def456"]  # newest activity first
    assert rows[1]["active_agent"] == "billing" and rows[1]["handoff_count"] == 1
    plain = cli("sessions", "list", "--db", str(db_path)).stdout.splitlines()
    assert " 1 handoff " in plain[1] and " 0 handoffs " in plain[0]  # "1 handoff", never "1 handoffs"
    hits = cli("sessions", "list", "--db", str(db_path), "--search", "charg")
    assert "abc123def456" in hits.stdout and "«charged»" in hits.stdout and "fff000" not in hits.stdout


def test_show_makes_control_characters_visible(db_path, populated):
    out = cli("sessions", "show", "abc123", "--db", str(db_path))
    assert out.returncode == 0, out.stderr
    assert "\x1b" not in out.stdout and "␛[31m[bold]now[/bold]" in out.stdout
    assert "→ route: triage → billing (duplicate charge)" in out.stdout


def test_export_json_shape(db_path, populated):
    out = cli("export", populated, "--format", "json", "--db", str(db_path))
    data = json.loads(out.stdout)
    assert data["session"]["id"] == populated
    kinds = [i["kind"] for i in data["items"]]
    assert kinds == ["message", "context_set", "handoff", "tool_call", "tool_result", "message"]
    assert data["items"][2]["from_agent"] == "triage" and data["items"][2]["to_agent"] == "billing"
    assert data["items"][3]["arguments"] == {"amount": 29.99}
    assert data["items"][1]["key"] == "category" and data["items"][1]["value"] == "billing"
    assert [i["seq"] for i in data["items"]] == [1, 2, 3, 4, 5, 6]


def test_export_markdown(db_path, populated, tmp_path):
    target = tmp_path / "t.md"
    out = cli("export", populated, "--db", str(db_path), "-o", str(target))
    assert out.returncode == 0
    text = target.read_text()
    assert text.startswith("# I was charged twice")
    assert "**Billing**" in text and "Refunded **$29.99**." in text


def test_unknown_session_and_bad_database(db_path, populated, tmp_path):
    out = cli("sessions", "show", "nope", "--db", str(db_path))
    assert out.returncode == 1 and "no session 'nope'" in out.stderr
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"definitely not sqlite" * 100)
    before = junk.read_bytes()
    out = cli("sessions", "list", "--db", str(junk))
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1 and "not a supportdesk database" in out.stderr
    assert "Traceback" not in out.stderr
    assert junk.read_bytes() == before


def test_db_from_environment(db_path, populated):
    import os

    env = dict(os.environ, SUPPORTDESK_DB=str(db_path))
    out = cli("sessions", "list", env=env)
    assert "abc123def456" in out.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["--theme", "desk-light", "chat"],
        ["chat", "--theme", "desk-light"],
        ["--theme", "desk-light", "replay", "abc"],
        ["--db", "x.db", "chat", "--session", "s1"],
    ],
)
def test_top_level_options_reach_subcommands(argv):
    from supportdesk.cli import build_parser

    args = build_parser().parse_args(argv)
    if "--theme" in argv:
        assert args.theme == "desk-light"
    if "--db" in argv:
        assert args.db == "x.db" and args.session == "s1"


@pytest.mark.parametrize("message", ["", "   "])
def test_run_refuses_an_empty_message_and_stores_nothing(db_path, message):
    out = cli("--db", str(db_path), "run", "hello", message)
    assert out.returncode == 2 and "empty" in out.stderr and "Traceback" not in out.stderr
    listed = cli("--db", str(db_path), "sessions", "list")
    assert "no sessions yet" in listed.stdout  # not even the first, good message: nothing ran


def test_sessions_list_reads_the_state_the_inbox_reads(db_path):
    """After a take-over, a reply and a release the inbox says "waiting for the customer"; the
    session row's status still said needs_human, and `sessions list` showed that (issue 39 §4)."""
    from supportdesk.folds.desk_state import label
    from supportdesk.items import Notice, Release, StaffReply, Takeover

    async def build() -> str:
        async with await SessionStore.open(db_path) as store:
            info = await store.create_session("triage", session_id="aaa000111222")
            await store.append(info.id, [
                Message(role="customer", text="I want a person", agent="triage"),
                Notice(notice_kind="human_requested", text="The customer asked for a person.", agent="triage"),
            ])
            await store.set_status(info.id, "needs_human")  # what the runner's turn ended with
            await store.append(info.id, [Takeover(person="dana", agent="triage")])
            await store.append(info.id, [StaffReply(person="dana", text="Hi, Dana here. Sorted.", agent="triage")])
            await store.append(info.id, [Release(person="dana", to_agent="triage", agent="triage")])
            [row] = await store.desk(limit=5)
            return label(row.state.state, row.state.detail)

    inbox_says = asyncio.run(build())
    assert inbox_says != "needs_human"
    out = cli("sessions", "list", "--db", str(db_path))
    assert out.returncode == 0, out.stderr
    assert inbox_says in out.stdout and "needs_human" not in out.stdout
    [row] = [json.loads(line) for line in cli("sessions", "list", "--db", str(db_path), "--json").stdout.splitlines()]
    assert row["state"] == inbox_says
