"""Issue 13, the command line's rows: bytes that are not UTF-8, bounded list output, an empty
file as --db, and a lost message said plainly."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from supportdesk.cli import main
from supportdesk.items import Message
from supportdesk.store import SessionStore
from tests.ci import cannot_run


def _cli_bytes(*args: bytes, stdin: bytes | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [os.fsencode(sys.executable), b"-m", b"supportdesk.cli", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def _items(db: Path) -> list:
    async def read() -> list:
        async with await SessionStore.open(db) as store:
            sessions = await store.list_sessions()
            return [(s, await store.range(s.id, 1, s.item_count)) for s in sessions]

    return asyncio.run(read())


@pytest.mark.parametrize("message", [b"\xff\xfe refund me", b"a stray \x9b byte", b"ok \xe2\x82 cut"])
def test_invalid_utf8_arguments_become_replacement_characters(tmp_path: Path, message: bytes) -> None:
    db = tmp_path / "d.db"
    ran = _cli_bytes(b"run", b"--db", os.fsencode(db), message)
    assert ran.returncode == 0, ran.stderr.decode()
    assert b"Traceback" not in ran.stderr
    [(info, items)] = _items(db)
    first = items[0]
    assert first.kind == "message" and first.role == "customer"
    assert first.text == message.decode("utf-8", "replace") and "\ufffd" in first.text
    assert len(items) > 1  # the desk answered; nothing broke half-way


def test_invalid_utf8_on_stdin_becomes_replacement_characters(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    ran = _cli_bytes(b"run", b"--db", os.fsencode(db), b"-", stdin=b"\xff\xfe refund me\n")
    assert ran.returncode == 0, ran.stderr.decode()
    [(info, items)] = _items(db)
    assert items[0].text == "\ufffd\ufffd refund me"


def test_a_failed_first_message_leaves_no_empty_session(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    db.mkdir()  # a folder where the file should be: the open fails before anything is created
    ran = _cli_bytes(b"run", b"--db", os.fsencode(db), b"hello")
    assert ran.returncode == 1
    lines = ran.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "is a folder" in lines[0] and "not saved" in lines[0]


async def _huge_session(db: Path) -> str:
    async with await SessionStore.open(db) as store:
        words = "padding " * 70_000  # about half a megabyte of ordinary words
        blob = "twice" + "x" * 1_048_576  # one "word" of a megabyte that matches
        info = await store.create_session(
            "triage",
            title="t" * 100_000,
            first=[Message(role="customer", text=f"{words} charged twice {words}", agent="triage")],
        )
        await store.append(info.id, [Message(role="customer", text=blob, agent="triage")])
        return info.id


def test_search_hits_and_list_views_are_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "d.db"
    asyncio.run(_huge_session(db))
    assert main(["sessions", "list", "--db", str(db), "--search", "twice"]) == 0
    hits = capsys.readouterr().out.splitlines()
    assert len(hits) == 2
    for line in hits:
        assert len(line) < 250, len(line)
        assert "«twice" in line
    assert main(["sessions", "list", "--db", str(db)]) == 0
    [row] = capsys.readouterr().out.splitlines()
    assert len(row) < 200 and row.endswith("…")
    assert main(["sessions", "list", "--db", str(db), "--search", "twice", "--json"]) == 0
    for line in capsys.readouterr().out.splitlines():
        assert len(line) < 100_000 + 600  # the title is data in JSON; the snippet is bounded



def test_invalid_utf8_in_an_eval_file_is_not_a_traceback(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_bytes(b'{"text": "refund \xff\xfe please", "agent": "billing"}\n{"text": "\x9b hi", "agent": "triage"}\n')
    ran = _cli_bytes(b"eval", b"routing", os.fsencode(rows))
    assert b"Traceback" not in ran.stderr
    assert ran.returncode in (0, 1), ran.stderr.decode()


def test_an_export_that_cannot_be_written_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "d.db"
    ran = _cli_bytes(b"run", b"--db", os.fsencode(db), b"hello")
    assert ran.returncode == 0
    [(info, _)] = _items(db)
    target = tmp_path / "no-such-folder" / "out.md"
    assert main(["export", info.id, "--db", str(db), "-o", str(target)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(target) in err[0] and "No such file or directory" in err[0]


def test_an_existing_empty_file_of_another_user_is_refused_by_run(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        cannot_run("giving a file to another user needs root")
    db = tmp_path / "empty.db"
    db.touch()
    os.chown(db, 65534, 65534)
    ran = _cli_bytes(b"run", b"--db", os.fsencode(db), b"hello")
    assert ran.returncode == 1
    [line] = ran.stderr.decode().strip().splitlines()
    assert "empty file owned by another user" in line and "not saved" in line
    assert db.stat().st_size == 0
