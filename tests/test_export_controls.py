"""Exports and paths as given: the JSON export escapes DEL and C1 controls as the Markdown export
makes them visible, and a path that is not UTF-8 is refused with one line, never replaced by a
different file name."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from supportdesk.items import Message
from supportdesk.store import SessionStore

CONTROLS = "refund\x7f me\x90 now\x9b31m red\x9c end"


def cli(*args: str | bytes, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "supportdesk.cli", *args], capture_output=True, cwd=cwd, timeout=60)


async def _session(db_path) -> str:
    async with await SessionStore.open(db_path) as store:
        info = await store.create_session("triage", channel="cli")
        await store.append(info.id, [Message(role="customer", text=CONTROLS, agent="triage")])
    return info.id


async def test_the_json_export_escapes_del_and_c1_controls_and_decodes_to_the_same_text(db_path, tmp_path):
    sid = await _session(db_path)
    out = cli("export", sid, "--format", "json", "--db", str(db_path))
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode("utf-8")
    assert not [c for c in text if "\x7f" <= c <= "\x9f"]
    assert "\\u009b" in text and "\\u007f" in text
    [message] = json.loads(text)["items"]
    assert message["text"] == CONTROLS
    # The same through -o, the file the TUI's export writes too.
    target = tmp_path / "out.json"
    assert cli("export", sid, "--format", "json", "--db", str(db_path), "-o", str(target)).returncode == 0
    written = target.read_text(encoding="utf-8")
    assert not [c for c in written if "\x7f" <= c <= "\x9f"] and json.loads(written)["items"][0]["text"] == CONTROLS


async def test_a_path_that_is_not_utf8_is_refused_in_one_line_not_renamed(db_path, tmp_path):
    sid = await _session(db_path)
    folder = os.fsencode(tmp_path)
    for args in (
        (b"--db", folder + b"/bad\xff.db", b"sessions", b"list"),
        (b"--db=" + folder + b"/bad\xff.db", b"sessions", b"list"),
        (b"export", sid.encode(), b"--db", os.fsencode(db_path), b"-o", folder + b"/out\xfe.md"),
        (b"export", sid.encode(), b"--db", os.fsencode(db_path), b"--output=" + folder + b"/out\xfe.md"),
    ):
        out = cli(*args)
        lines = out.stderr.decode("utf-8").strip().splitlines()
        assert out.returncode == 2 and len(lines) == 1 and "not valid UTF-8" in lines[0], (args, out.stderr)
    made = sorted(os.listdir(folder))
    assert not [name for name in made if b"\xef\xbf\xbd" in name or b"bad" in name or b"out" in name], made
