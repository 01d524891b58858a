"""The embedded model reads customer text in time linear in its length, and reads at most
MAX_READ_CHARS of a message: one crafted message must never freeze a worker.

Each check runs under an alarm, so a pattern that backtracks fails the test instead of hanging
it (the old issue splitter took hours on 16,000 spaces; the budget here is seconds)."""

from __future__ import annotations

import contextlib
import random
import re
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from supportdesk.config import load_desk
from supportdesk.engine.events import Appended
from supportdesk.items import ContextSet
from supportdesk.models.offline import cues, slots, triage
from supportdesk.models.offline.model import MAX_READ_CHARS
from supportdesk.text import CLAUSE_END
from supportdesk.wiring import open_desk
from tests.conftest import REPO

BUDGET = 5  # seconds; a linear pass over these inputs takes milliseconds


class TooSlow(Exception):
    pass


@contextlib.contextmanager
def within(seconds: int) -> Iterator[None]:
    def expire(signum, frame):
        raise TooSlow(f"took over {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


SPACES = "refund" + " " * 16_000 + "me"
NEWLINES = "refund" + "\n" * 16_000 + "me"
CRAFTED = [
    SPACES,
    NEWLINES,
    "refund" + " " * 8_000 + "," + " " * 8_000 + "also me",
    "a" * 64_000,
    "1" * 64_000,
    "." * 64_000,
    "refund " * 9_000,
    "and " * 16_000,
    "$1" * 32_000,
    "1." * 32_000,
]


@pytest.mark.parametrize("pattern", [triage._ISSUE_SPLIT, cues.CLAUSE_SPLIT, cues._PARTS, cues._SLOT_VALUES, CLAUSE_END], ids=lambda p: p.pattern[:30])
@pytest.mark.parametrize("text", CRAFTED, ids=lambda t: f"{t[:8]!r}x{len(t)}")
def test_splitters_take_one_pass(pattern, text):
    with within(BUDGET):
        list(pattern.finditer(text))
        pattern.split(text)


@pytest.mark.parametrize("text", CRAFTED, ids=lambda t: f"{t[:8]!r}x{len(t)}")
def test_slot_extraction_is_not_quadratic_in_the_facts_found(text):
    with within(BUDGET):
        slots.extract(text)
        slots.extract(text, amount_asked=True)


def test_the_issue_splitter_reads_the_crafted_message():
    router = _router()
    with within(BUDGET):
        assert triage.issues(SPACES, router) == []
        assert triage.issues(NEWLINES, router) == []
    # Still splits what a customer marks as two problems.
    found = triage.issues("I was charged twice for my plan, and also I can't log in to the app", router)
    assert len(found) == 2


def _router():
    from supportdesk.models.offline.model import OfflineModel

    config = load_desk(REPO / "agents.toml")
    model = OfflineModel(config)
    router = model.router_for(config, config.entry)
    assert router is not None
    return router


async def _context_after(tmp_path, text: str) -> list[object]:
    async with await open_desk(tmp_path / f"d{len(text)}.db", load_desk(REPO / "agents.toml")) as desk:
        sid = await desk.runner.new_session()
        items = [e.item async for e in desk.runner.send(sid, text) if isinstance(e, Appended)]
    return [i.value for i in items if isinstance(i, ContextSet)]


async def test_the_model_reads_at_most_max_read_chars_of_a_message(tmp_path):
    tail = " I was charged twice, refund me. my email is dana@example.com"
    assert "dana@example.com" in await _context_after(tmp_path, "hello." + tail)
    # The same words past the cap are stored but never read by the model.
    padding = " ." * 1_000
    assert len("hello." + padding) >= MAX_READ_CHARS == 2_000
    padded = "hello." + padding + tail
    assert "dana@example.com" not in await _context_after(tmp_path, padded)


@pytest.mark.parametrize("text", ["refund" + " " * 300_000 + "me", "$1" * 8_000, "x@" * 150_000], ids=["spaces", "dollars", "at-signs"])
def test_run_answers_a_crafted_message_promptly(tmp_path, text):
    """A real `supportdesk run` process: it answers (or fails with one line), never hangs."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "supportdesk.cli", "--db", str(tmp_path / "c.db"), "run", "-"],
            input=text, capture_output=True, text=True, timeout=90,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("supportdesk run did not answer a crafted message within 90 s")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


# The patterns as they were before they were made linear: on short messages (where their
# backtracking costs nothing) they are the oracle for where a message splits.
_OLD_ISSUE_SPLIT = re.compile(
    r"\s*[,;.]?\s*\b(?:and also|but also|also|plus|btw|by the way|another thing(?: is)?|one more thing|on top of that|as well as that)\b[,:]?\s*"
    r"|\s*,\s*and\s+|\s+and\s+(?=(?:i|i'm|im|i've|my|the|it|we|our)\b)"
    r"|^\s*(?:two|2|a couple of) (?:things|problems|issues|questions)\s*:\s*"
    # (two20: a sentence opened by "and" adds a matter)
    r"|(?<=[.!?])\s+and\s+",
    re.IGNORECASE,
)
_OLD_CLAUSE_SPLIT = re.compile(
    r"(?<=[.!?;])\s+|\s*(?:,|\.)?\s*\b(?:also|and also|another thing|one more thing|by the way|btw|plus)\b[,:]?\s*", re.IGNORECASE
)
_OLD_PARTS = re.compile(r"[,;.!?]+\s*|\s+-+\s+|\s+(?:but|instead)\s+", re.IGNORECASE)
_PIECES = ["also", "and", ",", ".", "!", "btw", "plus", "I", "my", "the", "refund", " ", "  ", "x", "and also", ", and",
           "by the way", "two things:", ";", "-", "but", "\n", "also,", "\t", "instead", "one more thing"]


def test_the_linear_splitters_split_where_the_old_ones_did():
    rng = random.Random(7)
    for _ in range(5_000):
        text = rng.choice(["", " "]).join(rng.choice(_PIECES) for _ in range(rng.randint(1, 12)))
        for old, new, strip in (
            (_OLD_ISSUE_SPLIT, triage._ISSUE_SPLIT, " ,.;:"), (_OLD_CLAUSE_SPLIT, cues.CLAUSE_SPLIT, " ,."), (_OLD_PARTS, cues._PARTS, " "),
        ):
            assert [p.strip(strip) for p in new.split(text) if p and p.strip(strip)] == [
                p.strip(strip) for p in old.split(text) if p and p.strip(strip)
            ], (text, new.pattern[:40])


_OLD_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
_EMAIL_PIECES = ["dana", "@", "example", ".com", ".", "-", "_", "+", " ", "x", "1", "..", "co", ".uk", "my email is ", ",", "INV-1003", "$5", "\n"]


def test_the_linear_email_and_slot_value_patterns_find_what_the_old_ones_did():
    old_slot_values = re.compile(cues._SLOT_VALUES.pattern.replace(r"(?<!\S)\S+@\S+", r"\S+@\S+"), re.IGNORECASE)
    assert old_slot_values.pattern != cues._SLOT_VALUES.pattern
    rng = random.Random(3)
    for _ in range(5_000):
        text = "".join(rng.choice(_EMAIL_PIECES) for _ in range(rng.randint(1, 10)))
        assert slots.emails_in(text) == list(dict.fromkeys(m.group(0).lower() for m in _OLD_EMAIL.finditer(text))), text
        assert cues._SLOT_VALUES.sub(" ", text) == old_slot_values.sub(" ", text), text


async def test_the_models_step_runs_off_the_event_loop(tmp_path):
    """While the embedded model works out a step that reads much, the loop goes on serving
    (other customers, /healthz): the step blocks here until the loop itself lets it go on."""
    import asyncio
    import threading

    from supportdesk.models.offline.model import INLINE_READ_CHARS, OfflineModel

    entered, released = threading.Event(), threading.Event()
    loop_ran_during_the_step: list[bool] = []

    class Held(OfflineModel):
        def decide(self, request):
            entered.set()
            loop_ran_during_the_step.append(released.wait(10))  # on the loop, nothing could release it
            return super().decide(request)

    config = load_desk(REPO / "agents.toml")
    async with await open_desk(tmp_path / "held.db", config) as desk:
        desk.runner.provider = Held(config)
        sid = await desk.runner.new_session()

        async def release_from_the_loop() -> None:
            await asyncio.to_thread(entered.wait, 10)
            released.set()

        releaser = asyncio.create_task(release_from_the_loop())
        long = "I was charged twice, dana@example.com. " + "The second charge came on the 3rd. " * 20
        assert len(long) > INLINE_READ_CHARS
        [e async for e in desk.runner.send(sid, long)]
        await releaser
    assert loop_ran_during_the_step and loop_ran_during_the_step[0] is True


async def test_a_short_step_is_decided_on_the_loop_without_a_thread_hop(tmp_path):
    """A step that reads little (about a millisecond of work, under the thread switch interval)
    runs on the loop's own thread: a hop to a thread and back would cost more than it frees."""
    import threading

    from supportdesk.models.offline.model import OfflineModel

    threads: list[threading.Thread] = []

    class Watched(OfflineModel):
        def decide(self, request):
            threads.append(threading.current_thread())
            return super().decide(request)

    config = load_desk(REPO / "agents.toml")
    async with await open_desk(tmp_path / "short.db", config) as desk:
        desk.runner.provider = Watched(config)
        sid = await desk.runner.new_session()
        [e async for e in desk.runner.send(sid, "I was charged twice, dana@example.com")]
    assert len(threads) >= 2 and all(t is threading.current_thread() for t in threads)
