"""Time a real command in a real pseudo-terminal until given text is on the screen.

The TUI benchmarks use this to start their clocks at process launch, as a person's terminal
does: the `supportdesk` command itself (its argument parser, imports, config, database and
first render), not an app object built inside an already warm interpreter.

A text counts as shown when it has been written to the terminal: the output stream is read
with its escape sequences removed, and the marker is searched in what is left. Markers are
single words or short phrases that one widget draws in one run of text.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time
from collections.abc import Sequence
from pathlib import Path

# CSI ... final byte, OSC ... BEL/ST, and two-byte escapes: what Textual writes between texts.
_ESCAPES = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[P^_].*?\x1b\\|\x1b[@-Z\\-_]")


def drop_caches() -> bool:
    """Empty the OS page cache (root only), so a launch reads its files from disk."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def time_to_text(
    argv: Sequence[str],
    markers: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    size: tuple[int, int] = (160, 45),
    timeout: float = 30.0,
    type_after: str | None = None,
) -> dict[str, float]:
    """Launch `argv` in a pty of `size` (columns, rows); seconds from launch until each marker
    first shows. With `type_after`, once every marker has shown, the text is typed and the
    time until it echoes back is reported as "echo" (from the keypress)."""
    columns, rows = size
    env = dict(os.environ if env is None else env, TERM="xterm-256color", COLUMNS=str(columns), LINES=str(rows))
    started = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: the terminal's size is set before the program looks at it
        try:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
            os.execvpe(argv[0], list(argv), env)
        finally:
            os._exit(127)
    found: dict[str, float] = {}
    screen = b""
    typed_at: float | None = None
    try:
        while True:
            now = time.perf_counter()
            if now - started > timeout:
                tail = _ESCAPES.sub(b"", screen)[-600:].decode("utf-8", "replace")
                missing = [m for m in markers if m not in found]
                raise TimeoutError(f"{argv[0]}: {missing} never showed; the screen ended with: {tail!r}")
            ready, _, _ = select.select([fd], [], [], 0.05)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the program ended
                raise RuntimeError(f"{argv[0]} exited before showing {[m for m in markers if m not in found]}") from None
            if not chunk:
                raise RuntimeError(f"{argv[0]} closed its terminal")
            now = time.perf_counter()
            screen += chunk
            text = _ESCAPES.sub(b"", screen).decode("utf-8", "replace")
            for marker in markers:
                if marker not in found and marker in text:
                    found[marker] = now - started
                    found[f"cpu:{marker}"] = cpu_seconds(pid)
            if all(marker in found for marker in markers):
                if type_after is None:
                    found["rss_mb"] = peak_rss_mb(pid)
                    return found
                if typed_at is None:
                    screen = b""  # the echo must come after the keys
                    typed_at = time.perf_counter()
                    os.write(fd, type_after.encode())
                elif type_after in text:
                    found["echo"] = now - typed_at
                    found["rss_mb"] = peak_rss_mb(pid)
                    return found
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        os.close(fd)


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, all threads) the process has used so far; 0 when unreadable.

    Beside the wall clock because a busy machine stretches wall time far more than CPU time:
    the CPU ratio says what the program costs when the wall ratio is noise."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
    except (OSError, IndexError, ValueError):
        return 0.0


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident memory (VmHWM), in MB; 0 when it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


BARE_APP = r'''
import sys
from textual.app import App
from textual.widgets import Input, Static

class Bare(App):
    def compose(self):
        yield Static(sys.argv[1])
        yield Input(placeholder="type here")

Bare().run()
'''


def bare_argv(text: str) -> list[str]:
    """The peer: a bare Textual app showing `text` in one Static above a focused Input."""
    return [sys.executable, "-c", BARE_APP, text]
