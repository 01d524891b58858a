#!/usr/bin/env python
"""Streaming that keeps up with the model and the keyboard, ours beside a bare Textual app.

    python benchmarks/bench_stream.py            # 3 runs of each, alternated
    python benchmarks/bench_stream.py --runs 5

A local OpenAI-compatible server (a child process on 127.0.0.1) streams a 2,000-token Markdown
reply at 500 tokens a second to every chat-completion request. Two programs read it, each
launched in a real pseudo-terminal of 160x45 and alternated run by run:

- ours: the real `supportdesk` command on an empty desk, its `agents.toml` pointing `[model]` at
  the server (provider "openai", as a user configures Ollama or vLLM);
- the peer: a bare Textual app, one `Markdown` widget in a `VerticalScroll` above an `Input`,
  writing the reply through Textual's `MarkdownStream` (`Markdown.get_stream`), reading the same
  server through the same client (`openai.AsyncOpenAI` over an `httpx2.AsyncClient`).

Both are driven the same way: once the program is idle after its first frame, a line is typed and
Enter pressed (the clocks start), then a digit is typed into the input every 100 ms until the
reply's last word is drawn. Figures:

- key echo: from writing a key to the pty until the input's text ending with that key has been
  written to the terminal (the output is read with escape sequences removed); median and max
  over every key of every run. Bar: ours <= 1.3 x the peer's median.
- reply drawn: from Enter until the reply's last word has been written to the terminal.
  Bar: ours <= 1.1 x the peer's median.

The typed digits are random (a window of eight of them identifies one key) and the reply has no
digits, so what is found is the echo and nothing else. Exit status 1 if a bar is missed.
"""

from __future__ import annotations

import argparse
import codecs
import fcntl
import json
import os
import pty
import random
import re
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from terminal import cpu_seconds  # noqa: E402

TERMINAL = (160, 45)
TOKENS = 2_000
RATE = 500.0  # tokens per second
KEY_EVERY = 0.100  # seconds between typed keys
WINDOW = 8  # typed digits that identify one key's echo
LAST_WORD = "Zephyrquokka"  # its last word: the reply is drawn whole when this is
IDLE = 0.5  # a program is settled when it used under 10 % of a core for this long
ECHO_BAR = 1.3
FINISH_BAR = 1.1

# CSI ... final byte, OSC ... BEL/ST, and two-byte escapes: what Textual writes between texts.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[P^_].*?\x1b\\|\x1b[@-Z\\-_]", re.S)


# --- the reply --------------------------------------------------------------------------------


def reply_tokens(count: int = TOKENS) -> list[str]:
    """A support answer in Markdown, cut in word-sized tokens: paragraphs, bold words, bullet
    lists. No digits anywhere (the typed keys are digits)."""
    rng = random.Random(16)
    words = ("the charge on your invoice was taken twice because the card was retried after a "
             "timeout and we have asked the bank to release the second hold which usually takes "
             "a few working days please keep an eye on your statement").split()
    tokens = ["Sorry"]
    while len(tokens) < count - 1:
        n = len(tokens)
        if n % 120 == 60:
            tokens += ["\n\n- ", "**refund**", " requested", "\n- ", "card", " retried", "\n\n"]
        elif n % 40 == 39:
            tokens.append(".\n\n")
        else:
            word = rng.choice(words)
            tokens.append((" " if not tokens[-1].endswith((" ", "\n")) else "") + (f"**{word}**" if n % 17 == 0 else word))
    tokens.append(" " + LAST_WORD + ".")
    return tokens[:count - 1] + [tokens[-1]]


# --- the server (a child process) ---------------------------------------------------------------


def serve() -> None:
    """Stream the reply to every POST .../chat/completions, one token per server-sent event,
    token i sent at start + i / RATE; print the port, then serve until killed."""
    tokens = reply_tokens()

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        body = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1763700000,
                "model": "bench-model", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        data = f"data: {json.dumps(body)}\n\n".encode()
        return f"{len(data):x}\r\n".encode() + data + b"\r\n"

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            body = json.dumps({"object": "list", "data": [{"id": "bench-model", "object": "model", "created": 0,
                                                            "owned_by": "bench"}]}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            if os.environ.get("BENCH_STREAM_LOG"):
                print(f"POST at {time.time():.3f}", file=sys.stderr, flush=True)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            self.wfile.write(chunk({"role": "assistant", "content": ""}))
            self.wfile.flush()
            start = time.perf_counter()
            for i, token in enumerate(tokens):
                wait = start + i / RATE - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
                self.wfile.write(chunk({"content": token}))
                self.wfile.flush()
            self.wfile.write(chunk({}, "stop"))
            usage = {"prompt_tokens": 100, "completion_tokens": len(tokens), "total_tokens": 100 + len(tokens)}
            body = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1763700000,
                    "model": "bench-model", "choices": [], "usage": usage}
            data = f"data: {json.dumps(body)}\n\ndata: [DONE]\n\n".encode()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n\r\n")
            self.wfile.flush()

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    print(httpd.server_address[1], flush=True)
    httpd.serve_forever()


# --- the peer -----------------------------------------------------------------------------------

BARE_APP = r'''
import sys
import httpx2
import openai
from textual import on, work
from textual.app import App
from textual.containers import VerticalScroll
from textual.widgets import Input, Markdown

class Bare(App):
    AUTO_FOCUS = "Input"

    def compose(self):
        with VerticalScroll():
            yield Markdown("")
        yield Input(placeholder="type here")

    @on(Input.Submitted)
    def submitted(self, event):
        event.input.clear()
        self.answer(event.value)

    @work
    async def answer(self, text):
        client = openai.AsyncOpenAI(base_url=sys.argv[1], api_key="none", http_client=httpx2.AsyncClient())
        self.query_one(VerticalScroll).anchor()
        stream = Markdown.get_stream(self.query_one(Markdown))
        try:
            reply = await client.chat.completions.create(
                model="bench-model", messages=[{"role": "user", "content": text}], stream=True)
            async for chunk in reply:
                if chunk.choices and chunk.choices[0].delta.content:
                    await stream.write(chunk.choices[0].delta.content)
        finally:
            await stream.stop()

Bare().run()
'''


# --- the terminal -------------------------------------------------------------------------------


class Terminal:
    """A program in a pty: what it writes, as text without escape sequences, and when."""

    def __init__(self, argv: list[str], env: dict[str, str]):
        columns, rows = TERMINAL
        env = dict(env, TERM="xterm-256color", COLUMNS=str(columns), LINES=str(rows))
        self.started = time.perf_counter()
        pid, fd = pty.fork()
        if pid == 0:
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
                os.execvpe(argv[0], argv, env)
            finally:
                os._exit(127)
        self.pid, self.fd, self.name = pid, fd, Path(argv[0]).name
        self.text = ""
        self._raw = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def read(self, timeout: float) -> float | None:
        """Wait up to `timeout` for output and take it in; the time it arrived, or None."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return None
        try:
            chunk = os.read(self.fd, 1 << 16)
        except OSError:
            chunk = b""
        if not chunk:
            raise RuntimeError(f"{self.name} exited; its screen ended with {self.text[-500:]!r}")
        now = time.perf_counter()
        self._raw += self._decoder.decode(chunk)
        # An escape sequence cut by the read stays in _raw until its end arrives.
        cut = self._raw.rfind("\x1b")
        if cut >= 0 and len(self._raw) - cut < 64 and not _ESCAPES.match(self._raw, cut):
            done, self._raw = self._raw[:cut], self._raw[cut:]
        else:
            done, self._raw = self._raw, ""
        self.text += _ESCAPES.sub("", done)
        return now

    def until(self, marker: str, start: int = 0, timeout: float = 60.0) -> float:
        """Read until `marker` shows after text position `start`; the time it was read."""
        deadline = time.perf_counter() + timeout
        while marker not in self.text[max(0, start - len(marker)):]:
            if time.perf_counter() > deadline:
                raise TimeoutError(f"{self.name}: {marker!r} never showed; the screen ended with {self.text[-500:]!r}")
            self.read(0.05)
        return time.perf_counter()

    def settle(self, limit: float = 30.0) -> None:
        """Read until the program is idle: what it does after its first frame (ours builds the
        model client and the tools in a thread) is start-up, not streaming."""
        deadline = time.perf_counter() + limit
        before = cpu_seconds(self.pid)
        while time.perf_counter() < deadline:
            until = time.perf_counter() + IDLE
            while time.perf_counter() < until:
                self.read(0.05)
            now = cpu_seconds(self.pid)
            if now - before < IDLE * 0.1:
                return
            before = now
        raise TimeoutError(f"{self.name} never went idle after its first frame")

    def type(self, keys: str) -> float:
        os.write(self.fd, keys.encode())
        return time.perf_counter()

    def close(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)
        os.close(self.fd)


def stream_run(argv: list[str], env: dict[str, str], ready: str, rng: random.Random) -> dict[str, Any]:
    """One run: wait for `ready`, send a line, type digits during the reply; the figures."""
    term = Terminal(argv, env)
    try:
        term.until(ready)
        term.settle()
        mark = len(term.text)
        cpu_at_enter = cpu_seconds(term.pid)
        sent = term.type("Why was I charged twice\r")
        typed = ""
        pending: list[tuple[str, float, int]] = []  # (window, typed at, text position then)
        echoes: list[float] = []
        finished: float | None = None
        cpu = 0.0
        next_key = sent + KEY_EVERY
        deadline = sent + 300  # the old code needed a minute at load 7
        while finished is None or pending:
            now = time.perf_counter()
            if now > deadline:
                raise TimeoutError(f"{term.name}: the reply or an echo never showed")
            if finished is None and now >= next_key:
                typed += rng.choice("0123456789")
                at = term.type(typed[-1])
                if len(typed) >= WINDOW:
                    pending.append((typed[-WINDOW:], at, len(term.text)))
                next_key = at + KEY_EVERY
            arrived = term.read(max(0.0, min(0.01, next_key - time.perf_counter())))
            if arrived is None:
                continue
            if finished is None and LAST_WORD in term.text[max(0, mark - len(LAST_WORD)):]:
                finished = arrived
                cpu = cpu_seconds(term.pid) - cpu_at_enter
            still = []
            for window, at, position in pending:
                if window in term.text[max(0, position - WINDOW):]:
                    echoes.append(arrived - at)
                else:
                    still.append((window, at, position))
            pending = still
        return {"finish": finished - sent, "cpu": cpu, "echoes": echoes}
    finally:
        term.close()


# --- the run ------------------------------------------------------------------------------------


def desk_config(folder: Path, base_url: str) -> Path:
    """The shipped agents.toml with [model] pointed at the server, as a user would write it."""
    shipped = (REPO / "agents.toml").read_text()
    line = next(line for line in shipped.splitlines() if line.startswith("provider = \"offline\""))
    model = f'provider = "openai"\nbase_url = "{base_url}"\nmodel = "bench-model"\nmax_tokens = 4096\ntimeout = 60'
    path = folder / "agents.toml"
    path.write_text(shipped.replace(line, model, 1))
    return path


def ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return 0

    server = subprocess.Popen([sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        base_url = f"http://127.0.0.1:{int(server.stdout.readline())}/v1"
        with tempfile.TemporaryDirectory(prefix="bench-stream-") as tmp:
            folder = Path(tmp)
            env = dict(os.environ, XDG_CONFIG_HOME=str(folder / "config"), XDG_DATA_HOME=str(folder / "data"),
                       TEXTUAL_ANIMATIONS="none")
            config = desk_config(folder, base_url)
            command = shutil.which("supportdesk") or str(Path(sys.executable).with_name("supportdesk"))
            print(f"{TOKENS:,} tokens at {RATE:.0f} tokens/s from {base_url} (the fastest a reply can finish: "
                  f"{TOKENS / RATE:.1f} s); terminal {TERMINAL[0]}x{TERMINAL[1]}; a key every {KEY_EVERY * 1000:.0f} ms; "
                  f"{args.runs} runs of each, alternated\n")
            rng = random.Random(7)
            ours: list[dict[str, Any]] = []
            peer: list[dict[str, Any]] = []
            for run in range(args.runs):
                peer.append(stream_run([sys.executable, "-c", BARE_APP, base_url], env, "type here", rng))
                db = folder / f"desk{run}.db"
                ours.append(stream_run([command, "--db", str(db), "--config", str(config)], env,
                                       "Handoffs", rng))
                print(f"  run {run + 1}: reply drawn ours {ms(ours[-1]['finish'])}  bare {ms(peer[-1]['finish'])} "
                      f"(CPU ours {ms(ours[-1]['cpu'])}  bare {ms(peer[-1]['cpu'])});  "
                      f"echo median ours {ms(statistics.median(ours[-1]['echoes']))}  "
                      f"bare {ms(statistics.median(peer[-1]['echoes']))}", flush=True)
    finally:
        server.kill()
        server.wait()

    our_echo = [e for r in ours for e in r["echoes"]]
    peer_echo = [e for r in peer for e in r["echoes"]]
    our_finish = statistics.median(r["finish"] for r in ours)
    peer_finish = statistics.median(r["finish"] for r in peer)
    echo_ratio = statistics.median(our_echo) / statistics.median(peer_echo)
    finish_ratio = our_finish / peer_finish
    echo_ok, finish_ok = echo_ratio <= ECHO_BAR, finish_ratio <= FINISH_BAR
    print(f"\n  {'ok  ' if echo_ok else 'MISS'} key echo      ours median {ms(statistics.median(our_echo))} "
          f"max {ms(max(our_echo))}   bare median {ms(statistics.median(peer_echo))} max {ms(max(peer_echo))}   "
          f"ratio {echo_ratio:.2f} x   bar <= {ECHO_BAR:.2f} x   ({len(our_echo)} / {len(peer_echo)} keys)")
    print(f"  {'ok  ' if finish_ok else 'MISS'} reply drawn   ours median {ms(our_finish)}   bare median {ms(peer_finish)}"
          f"   ratio {finish_ratio:.2f} x   bar <= {FINISH_BAR:.2f} x   (Enter -> the last word on screen)")
    missed = [echo_ok, finish_ok].count(False)
    print(f"\n{2 - missed} of 2 bars met" + (f", {missed} missed" if missed else ""))
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
