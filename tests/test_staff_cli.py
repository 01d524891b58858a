"""Staff actions from the command line (real processes, a real SQLite file and PostgreSQL):
takeover, reply, release, state, tag, `run --session` on a held conversation, and the audit."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def db(request, tmp_path) -> str:
    return str(tmp_path / "desk.db") if request.param == "sqlite" else request.getfixturevalue("pg_url")


def cli(db: str, *args: str, person: str = "dana") -> subprocess.CompletedProcess:
    env = {**os.environ, "SUPPORTDESK_STAFF": person}
    return subprocess.run(
        [sys.executable, "-m", "supportdesk.cli", *args, "--db", db, "--config", str(REPO / "agents.toml")],
        capture_output=True, text=True, env=env, timeout=120,
    )


def _session(db: str) -> str:
    done = cli(db, "run", "--json", "I was charged twice, dana@example.com")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[0])["session"]


def test_staff_take_a_conversation_reply_release_and_the_audit_lists_each_action(db):
    sid = _session(db)
    taken = cli(db, "takeover", sid, "--reason", "VIP")
    assert taken.returncode == 0 and "dana took the conversation over: VIP" in taken.stdout

    held = cli(db, "run", "--session", sid, "hello? is anyone there?")
    assert held.returncode == 6, held.stderr
    assert "dana (staff) holds this conversation: the message is stored and waits for them" in held.stdout
    assert "Billing:" not in held.stdout  # no agent spoke

    assert cli(db, "reply", sid, "Hi, this is Dana. I refunded the duplicate.").returncode == 0
    assert cli(db, "tag", sid, "vip", "refund", "--priority", "high", "--as", "sam").returncode == 0
    released = cli(db, "release", sid, "--summary", "refunded the March 3 duplicate")
    assert released.returncode == 0 and "back to billing: refunded the March 3 duplicate" in released.stdout

    after = cli(db, "run", "--json", "--session", sid, "thank you")
    assert after.returncode == 0
    turns = [json.loads(line) for line in after.stdout.splitlines() if '"turn"' in line]
    assert turns == [{"turn": 1, "outcome": "answered", "status": "open", "agent": "billing"}]

    listed = cli(db, "audit", "--json")
    entries = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [(e["action"], e["person"], e["origin"]) for e in entries] == [
        ("takeover", "dana", "cli"), ("reply", "dana", "cli"), ("tag", "sam", "cli"), ("release", "dana", "cli"),
    ]
    assert [e["action"] for e in map(json.loads, cli(db, "audit", "--json", "--who", "sam").stdout.splitlines())] == ["tag"]
    assert cli(db, "audit", "--json", "--since=-1d", "--session", sid).stdout == listed.stdout
    assert cli(db, "audit", "--json", "--since", "1d").stdout == listed.stdout
    assert cli(db, "audit", "--since", "2030-01-01").stdout.strip() == "no staff actions match"
    exported = cli(db, "export", sid)
    assert "**Staff actions**" in exported.stdout and "| dana | cli | release |" in exported.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("release", "{sid}"), "nobody has taken this conversation over"),
        (("release", "{sid}", "--to", "nobody"), "no agent named 'nobody'"),
        (("state", "{sid}", "snoozed"), "a snooze needs a time it ends"),
        (("state", "{sid}", "snoozed", "--until", "tomorrow"), "'tomorrow' is not a time"),
        (("state", "{sid}", "snoozed", "--until", "2001-01-01"), "is in the past"),
        (("tag", "{sid}"), "give a tag to add or remove, or a priority"),
        (("reply", "nosuchsession", "hi"), "no session 'nosuchsession'"),
        (("audit", "--since", "soon"), "'soon' is not a time"),
    ],
)
def test_a_staff_command_that_makes_no_sense_is_refused_with_one_line_and_exit_2(tmp_path, args, says):
    db = str(tmp_path / "desk.db")
    sid = _session(db)
    before = cli(db, "sessions", "show", sid).stdout
    done = cli(db, *(a.format(sid=sid) for a in args))
    assert done.returncode == 2, done
    assert says in done.stderr and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert cli(db, "sessions", "show", sid).stdout == before  # nothing was written


def test_a_reply_to_a_resolved_conversation_is_refused(tmp_path):
    db = str(tmp_path / "desk.db")
    sid = _session(db)
    assert cli(db, "state", sid, "resolved").returncode == 0
    done = cli(db, "reply", sid, "one more thing")
    assert done.returncode == 2 and "this conversation is resolved" in done.stderr


def test_the_staff_name_comes_from_settings_toml_and_a_broken_one_is_one_line(tmp_path):
    db = str(tmp_path / "desk.db")
    sid = _session(db)
    config = tmp_path / "xdg-config"
    (config / "supportdesk").mkdir(parents=True)
    settings = config / "supportdesk" / "settings.toml"
    settings.write_text('[staff]\nname = "Robin"\n', encoding="utf-8")
    env = {**os.environ, "XDG_CONFIG_HOME": str(config)}
    env.pop("SUPPORTDESK_STAFF", None)

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "supportdesk.cli", *args, "--db", db], capture_output=True,
                              text=True, env=env, timeout=120)

    assert "Robin took the conversation over" in run("takeover", sid).stdout
    settings.write_text("[staff\nname = 1", encoding="utf-8")
    broken = run("release", sid)
    assert broken.returncode == 2 and "settings.toml: cannot be read" in broken.stderr
    assert len(broken.stderr.strip().splitlines()) == 1


def test_a_message_written_while_staff_held_it_is_answered_once_by_the_next_run_after_release(db):
    # issue 39 §3: `supportdesk release` then `run --session`: the waiting message is answered
    # first (its own turn), then the new one; a later run answers only its own message.
    sid = _session(db)
    assert cli(db, "takeover", sid).returncode == 0
    assert cli(db, "run", "--session", sid, "hello? is anyone there?").returncode == 6
    assert cli(db, "release", sid, "--summary", "checked the card").returncode == 0
    after = cli(db, "run", "--json", "--session", sid, "thank you")
    assert after.returncode == 0, after.stderr
    lines = [json.loads(line) for line in after.stdout.splitlines()]
    agent_said = [line for line in lines if line.get("kind") == "message" and line.get("role") == "agent"]
    assert len(agent_said) == 2, after.stdout  # the waiting message's answer, then this one's
    again = cli(db, "run", "--json", "--session", sid, "bye")
    lines = [json.loads(line) for line in again.stdout.splitlines()]
    assert len([line for line in lines if line.get("kind") == "message" and line.get("role") == "agent"]) == 1
