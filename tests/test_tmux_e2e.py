"""End to end: the real `supportdesk` command in tmux, through the seed's double-charge conversation.

Keys go in with `send-keys`, the screen comes back with `capture-pane`; every wait is a bounded
poll. The tmux server runs on its own socket and is killed whatever happens.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import pg

# Without tmux the test skips on a developer's machine; under CI (which installs it, .ci/run) it
# fails instead, as the first thing `Tmux` does.
pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None and not pg.in_ci(), reason="tmux is not installed"),
]

CONVERSATION = [
    "Hi, I was charged twice for my subscription this month.",
    "Yes, I can see two charges of $29.99 on March 1st and March 3rd. My email is dana@example.com.",
    "I'd like a refund for the duplicate charge.",
    "The amount is $29.99 — can you process that?",
]
ITEMS = re.compile(r"(\d+) items?")


def _supportdesk() -> str:
    beside = Path(sys.executable).with_name("supportdesk")
    return str(beside) if beside.exists() else (shutil.which("supportdesk") or "supportdesk")


class Tmux:
    def __init__(self, name: str):
        if shutil.which("tmux") is None:
            pytest.fail("tmux is not installed (apt-get install tmux; .ci/run installs it)")
        self.name = name
        self.base = ["tmux", "-L", name]

    def run(self, *args: str) -> str:
        return subprocess.run([*self.base, *args], check=True, capture_output=True, text=True, timeout=10).stdout

    def start(self, cwd: Path, argv: list[str], env: dict[str, str], width: int = 140, height: int = 45) -> None:
        # tmux started from a process without a terminal hands its panes COLUMNS=80 LINES=24,
        # which Textual (shutil.get_terminal_size) prefers to the pane's real size: say the size.
        env = {**env, "COLUMNS": str(width), "LINES": str(height)}
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        command = " ".join(shlex.quote(a) for a in argv)
        # the shell stays after the app exits, so a crash leaves its last words on the pane
        self.run("new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height),
                 f"cd {shlex.quote(str(cwd))} && env {exports} {command}; echo EXITED $?; sleep 30")

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.name)

    def type(self, text: str) -> None:
        self.run("send-keys", "-t", self.name, "-l", text)

    def key(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.name, *keys)

    def kill(self) -> None:
        subprocess.run([*self.base, "kill-server"], capture_output=True, timeout=10)

    def wait_for(self, condition, timeout: float, what: str) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if "EXITED" in screen:
                break
            if condition(screen):
                return screen
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}; the screen was:\n{screen}")


def _items(screen: str) -> int:
    first = screen.splitlines()[0] if screen else ""
    match = ITEMS.search(first)
    return int(match.group(1)) if match else 0


def test_double_charge_conversation_in_the_real_app(tmp_path: Path) -> None:
    tmux = Tmux(f"sdtest-{os.getpid()}")
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "COLORTERM": "truecolor",
        "TERM": "xterm-256color",
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
    }
    try:
        tmux.start(tmp_path, [_supportdesk(), "--db", str(tmp_path / "desk.db")], env)
        tmux.wait_for(lambda s: "Triage" in s and "Write as the customer" in s, 30, "the chat screen")
        for message in CONVERSATION:
            before = _items(tmux.screen())
            tmux.type(message)
            tmux.key("Enter")
            # The turn is over when items were added and nobody is working any more, twice in a row.
            settled = 0
            deadline = time.monotonic() + 60
            while settled < 2:
                assert time.monotonic() < deadline, f"the turn for {message!r} never ended:\n{tmux.screen()}"
                screen = tmux.screen()
                assert "EXITED" not in screen, screen
                done = _items(screen) > before + 1 and "is working" not in screen
                settled = settled + 1 if done else 0
                time.sleep(0.3)
        screen = tmux.screen()
        top = screen.splitlines()[0]
        assert "Billing" in top, screen  # the billing agent holds the conversation
        assert "Triage → Billing" in screen, screen  # and the timeline shows how it got there
        assert re.search(r"refund", screen, re.IGNORECASE) and "29.99" in screen, screen
        assert "RF-" in screen, screen  # the refund the billing agent made
        assert "Traceback" not in screen
    finally:
        tmux.kill()
