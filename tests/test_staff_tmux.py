"""End to end in tmux: staff take a conversation over, the customer's next message waits for them,
they reply as themselves, release it with a summary, and the agent answers the next message with
the summary in view. The real `supportdesk` command (offline model) and a real SQLite file; the
customer writes from another process (`supportdesk run --session`)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from supportdesk.items import Release, StaffReply, item_adapter
from tests.test_tmux_e2e import Tmux, _items, _supportdesk, pytestmark  # noqa: F401 (the tmux marks)

SUMMARY = "refunded the March 3 duplicate; customer is happy"


def test_take_over_reply_release_and_the_agent_answers_with_the_summary_in_view(tmp_path: Path) -> None:
    db = str(tmp_path / "desk.db")
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "COLORTERM": "truecolor",
        "TERM": "xterm-256color",
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "SUPPORTDESK_STAFF": "dana",
    }

    def customer(text: str) -> subprocess.CompletedProcess:
        return subprocess.run([_supportdesk(), "run", "--db", db, "--json", *(["--session", sid] if sid else []), text],
                              capture_output=True, text=True, env={**os.environ, **env}, timeout=120)

    sid = ""
    first = customer("I was charged twice for my subscription this month, dana@example.com")
    assert first.returncode == 0, first.stderr
    sid = json.loads(first.stdout.splitlines()[0])["session"]

    tmux = Tmux(f"sdstaff-{os.getpid()}")
    try:
        tmux.start(tmp_path, [_supportdesk(), "chat", "--db", db, "--session", sid], env, width=160, height=45)
        tmux.wait_for(lambda s: "Billing" in s.splitlines()[0] and "duplicate" in s, 30, "the session on screen")
        tmux.key("F6")
        tmux.wait_for(lambda s: "dana holds it" in s.splitlines()[0], 20, "the take-over in the header")

        # the customer writes while dana holds it: stored and shown live, no agent answers
        held = customer("hello? is anyone there?")
        assert held.returncode == 6, held
        screen = tmux.wait_for(lambda s: "hello? is anyone there?" in s, 20, "the customer's message, live")
        assert "is working" not in screen

        # taking over is to answer yourself: the input writes as staff without F7
        tmux.wait_for(lambda s: "as staff" in s.splitlines()[0], 10, "writing as staff")
        tmux.type("Hi, Dana here: I refunded the duplicate.")
        tmux.key("Enter")
        tmux.wait_for(lambda s: "dana (staff, to the customer)" in s, 20, "the staff reply")

        tmux.type(f"/release {SUMMARY}")
        tmux.key("Enter")
        tmux.wait_for(lambda s: "holds it" not in s.splitlines()[0] and f"back to billing: {SUMMARY}" in s, 20,
                      "the release and its summary")

        # and once released, as the customer again
        tmux.wait_for(lambda s: "Write as the customer" in s, 10, "writing as the customer")
        before = _items(tmux.screen())
        tmux.type("Thanks! Is there anything else I need to do?")
        tmux.key("Enter")
        settled, deadline = 0, time.monotonic() + 60
        while settled < 2:
            assert time.monotonic() < deadline, f"the agent never answered:\n{tmux.screen()}"
            screen = tmux.screen()
            assert "EXITED" not in screen, screen
            settled = settled + 1 if _items(screen) >= before + 2 and "is working" not in screen else 0
            time.sleep(0.3)
        assert f"back to billing: {SUMMARY}" in screen, screen  # the summary is in view with the answer
        assert "Traceback" not in screen
    finally:
        tmux.kill()

    exported = subprocess.run([_supportdesk(), "export", sid, "--db", db, "--format", "json"],
                              capture_output=True, text=True, env={**os.environ, **env}, timeout=60)
    raw = json.loads(exported.stdout)["items"]
    items = [item_adapter().validate_python({**i, "session_id": sid}) for i in raw]
    kinds = [i.kind for i in items]
    release_at = next(n for n, i in enumerate(items) if isinstance(i, Release))
    assert isinstance(items[release_at], Release) and items[release_at].summary == SUMMARY
    held_span = items[kinds.index("takeover"):release_at]
    assert not any(i.kind == "message" and i.role == "agent" for i in held_span)  # silent while held
    assert any(isinstance(i, StaffReply) and i.person == "dana" for i in held_span)
    after = items[release_at + 1:]
    assert [i.role for i in after if i.kind == "message"] == ["customer", "agent"]
    assert after[-1].agent == "billing"
