"""`supportdesk serve --loop`: uvloop's event loop when installed (issue 34), asyncio's on request,
and a served message answered on either; uvloop asked for by name and missing is one line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import httpx
import pytest

from tests.serve_harness import final_agent_reply, new_conversation, read_events, say
from tests.test_serve_process import CHARGED_TWICE, LISTENING, ServeProcess

pytestmark = pytest.mark.slow

BLOCK_UVLOOP = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "uvloop":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Block())
from supportdesk.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("choice, running", [("auto", "uvloop"), ("uvloop", "uvloop"), ("asyncio", "asyncio")])
async def test_serve_runs_on_the_loop_asked_for_and_answers_on_it(db_path, choice, running):
    pytest.importorskip("uvloop")
    served = ServeProcess(db_path, "--loop", choice)
    try:
        started = "".join(served.lines)
        assert f"event loop {running})" in started
        async with httpx.AsyncClient(base_url=served.url, timeout=30) as client:
            conversation = await new_conversation(client)
            events = await read_events(
                client, conversation, lambda ev: final_agent_reply(ev, "duplicate"), on_open=lambda: say(client, conversation, CHARGED_TWICE)
            )
        assert events[0].data["text"] == CHARGED_TWICE
        assert any(e.event == "message" and e.data.get("from") == "agent" for e in events)
    finally:
        out = served.stop()
    assert served.proc.returncode == 0, out
    assert "Traceback" not in out


def test_uvloop_asked_for_by_name_and_missing_is_one_line(db_path):
    named = subprocess.run(
        [sys.executable, "-c", BLOCK_UVLOOP, "--db", str(db_path), "serve", "--port", "0", "--loop", "uvloop"],
        capture_output=True, text=True, timeout=60,
    )
    assert named.returncode == 1
    assert named.stderr.strip().splitlines() == ["supportdesk: --loop uvloop needs uvloop; install it with pip install 'supportdesk[serve]'"]

    from supportdesk.channels.command import loop_factory

    assert loop_factory("asyncio") is None
    if pytest.importorskip("uvloop"):
        import uvloop

        assert loop_factory("auto") is uvloop.new_event_loop


REPORT_GC = """
import atexit, gc, sys
atexit.register(lambda: print(f"gc at exit: young {gc.get_threshold()[0]} frozen {gc.get_freeze_count()}", flush=True))
from supportdesk.cli import main
sys.exit(main(sys.argv[1:]))
"""


async def test_serve_tunes_the_collector_once_built_and_still_answers(db_path):
    """serve's collector (issue 34): what it built at start frozen out of the collector's passes
    and the young generation collected every GC_YOUNG allocations, not Python's 700."""
    from supportdesk.channels.command import GC_YOUNG

    proc = subprocess.Popen(
        [sys.executable, "-c", REPORT_GC, "--db", str(db_path), "serve", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        url = next((found.group(1) for line in proc.stdout if (found := LISTENING.search(line))), None)
        assert url is not None, "serve did not start"
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            conversation = await new_conversation(client)
            events = await read_events(
                client, conversation, lambda ev: final_agent_reply(ev, "duplicate"), on_open=lambda: say(client, conversation, CHARGED_TWICE)
            )
        assert any(e.event == "message" and e.data.get("from") == "agent" for e in events)
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0, out
    [said] = [line for line in out.splitlines() if line.startswith("gc at exit:")]
    young, frozen = int(said.split()[4]), int(said.split()[6])
    assert young == GC_YOUNG
    assert frozen > 10_000  # the desk's objects: config, model, readers
