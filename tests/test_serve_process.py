"""`supportdesk serve` as a real OS process: binding, restart without loss, tokens never logged."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from supportdesk.store import SessionStore
from supportdesk.items import Message
from tests.serve_harness import final_agent_reply, new_conversation, read_events, say

CHARGED_TWICE = "I was charged twice for my subscription this month, dana@example.com"
LISTENING = re.compile(r"on (http://\S+?)/ ")


class ServeProcess:
    def __init__(self, db: Path | str, *args: str):
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "supportdesk.cli", "--db", str(db), "serve", "--port", "0", "--access-log", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        self.lines: list[str] = []
        self.url = self._wait_for_url()

    def _wait_for_url(self) -> str:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            found = LISTENING.search(line)
            if found:
                return found.group(1)
        raise AssertionError(f"serve exited without listening: {''.join(self.lines)}")

    def kill(self) -> str:
        """SIGKILL: no shutdown code runs. Returns everything the process wrote."""
        self.proc.send_signal(signal.SIGKILL)
        out, _ = self.proc.communicate(timeout=20)
        return "".join(self.lines) + out

    def stop(self) -> str:
        self.proc.send_signal(signal.SIGINT)
        out, _ = self.proc.communicate(timeout=20)
        return "".join(self.lines) + out


@pytest.fixture
def serve_process(db_path):
    started: list[ServeProcess] = []

    def start(*args: str) -> ServeProcess:
        process = ServeProcess(db_path, *args)
        started.append(process)
        return process

    yield start
    for process in started:
        if process.proc.poll() is None:
            process.kill()


async def test_a_restart_loses_nothing_and_the_stream_resumes_where_it_was(serve_process):
    first = serve_process()
    assert first.url.startswith("http://127.0.0.1:")  # loopback unless told otherwise
    async with httpx.AsyncClient(base_url=first.url, timeout=30) as client:
        conversation = await new_conversation(client)
        await say(client, conversation, CHARGED_TWICE)
        # The reply asks about the refund; the desk's offer (issue 33) follows its question.
        before = await read_events(client, conversation, lambda ev: any(e.event == "offer" for e in ev))
        stored = [e for e in before if e.id is not None]
        cut = stored[1].id
    log_one = first.kill()

    second = serve_process()
    async with httpx.AsyncClient(base_url=second.url, timeout=30) as client:
        resumed = await read_events(
            client, conversation, lambda ev: any(e.event == "offer" for e in ev), last_event_id=cut, token_in_query=True
        )
        assert [(e.id, e.data) for e in resumed if e.id is not None] == [(e.id, e.data) for e in stored[2:]]
        await say(client, conversation, "yes please refund the duplicate")
        # The yes to the agent's question runs the refund (asked once, issues 33 and 38).
        after = await read_events(client, conversation, lambda ev: final_agent_reply(ev, "refunded"), last_event_id=stored[-1].id)
        assert after[0].data == {**after[0].data, "from": "customer", "text": "yes please refund the duplicate"}
    log_two = second.stop()
    assert second.proc.returncode == 0
    # The access log was on, and the token travelled in headers and in a query: it is in no log line.
    assert "/api/conversations/" in log_one and "events" in log_two
    assert conversation[1] not in log_one + log_two


async def test_a_message_stored_before_a_crash_is_answered_when_the_server_comes_back(db_path, serve_process):
    # As if a worker died between its 202 and the turn: the message is in the log, unanswered.
    async with await SessionStore.open(db_path) as store:
        import hashlib

        token = "t" * 43
        info = await store.create_session("triage", channel="web", meta={"token_sha256": hashlib.sha256(token.encode()).hexdigest()})
        await store.append(info.id, [Message(role="customer", text=CHARGED_TWICE, agent="triage")])
    served = serve_process()
    async with httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        events = await read_events(client, (info.id, token), lambda ev: final_agent_reply(ev, "duplicate"))
    assert events[0].id == 1 and events[0].data["text"] == CHARGED_TWICE


def test_a_busy_port_is_one_line_naming_the_fix(db_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = subprocess.run(
            [sys.executable, "-m", "supportdesk.cli", "--db", str(db_path), "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "--port" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize(
    "flag, value, said",
    [("--port", "99999", "is not a port"), ("--port", "http", "is not a port"), ("--port", "-1", "is not a port"),
     ("--messages-per-minute", "0", "1 or more")],
)
def test_a_port_or_a_rate_out_of_range_is_a_usage_line_not_a_traceback(db_path, flag, value, said):
    out = subprocess.run(
        [sys.executable, "-m", "supportdesk.cli", "--db", str(db_path), "serve", flag, value],
        capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 2
    assert said in out.stderr and flag in out.stderr and "Traceback" not in out.stderr


BLOCK_STARLETTE = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("starlette", "uvicorn"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Block())
from supportdesk.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_without_the_serve_extra_the_command_says_how_to_install_it(db_path):
    out = subprocess.run(
        [sys.executable, "-c", BLOCK_STARLETTE, "--db", str(db_path), "serve"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 1
    assert "pip install 'supportdesk[serve]'" in out.stderr and "Traceback" not in out.stderr


PROBE = """
import sys
from supportdesk.cli import build_parser
argv = sys.argv[1:]
build_parser(argv).parse_args(argv)
print(any(name.startswith(("supportdesk.channels", "starlette", "uvicorn")) for name in sys.modules))
"""


@pytest.mark.parametrize("argv", [[], ["chat"], ["run", "hello"], ["--db", "serve", "chat"]])
def test_the_tui_and_run_never_import_the_web_channel(argv):
    out = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_serve_binds_loopback_by_default():
    from supportdesk.cli import build_parser

    args = build_parser(["serve"]).parse_args(["serve"])
    assert (args.host, args.port) == ("127.0.0.1", 8080)


def test_serve_is_listed_in_help():
    out = subprocess.run([sys.executable, "-m", "supportdesk.cli", "--help"], capture_output=True, text=True, check=True)
    assert "serve" in out.stdout
