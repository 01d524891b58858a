"""The first message waits for nothing a warm-up could have done (`Runner.warm`).

The offline model's rules compile on first use and its readers are built on first use, so the
desk's start-up (the TUI's first frame) does not pay for them. Before this warm-up took them
over, the first customer message paid instead: ~0.7 s of compiling and building on the event
loop (a frozen screen, or every other customer of a `serve` worker held). The check runs in a
fresh process, since this one has long compiled everything: after `Runner.warm()` and
`Runner.warm_model()`, a few first turns of different kinds compile no written rule and build no reader.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from supportdesk import patterns, readers
from supportdesk.config import load_desk
from supportdesk.models.offline.model import OfflineModel
from supportdesk.patterns import LazyPattern
from tests.conftest import REPO

# Turns of different kinds: a trouble, a ground no tool covers, a money matter offered, its yes.
FIRST_MESSAGES = (
    "my app keeps crashing when I open it",
    "do you give a discount to students?",
    "Hi, I was charged twice for my subscription this month. My email is dana@example.com.",
    "yes please refund the duplicate",
)

COLD = textwrap.dedent(
    """
    import asyncio, json, sys
    from supportdesk import readers
    from supportdesk.models.offline.cues import Cue
    from supportdesk.patterns import LazyPattern
    from supportdesk.wiring import open_desk

    compiled = []
    lazy_compiled = LazyPattern.compiled

    def counted(self):
        compiled.append(self.pattern)
        return lazy_compiled(self)

    cue_pattern = Cue.pattern.fget

    def cue_counted(self):
        if self._compiled is None:
            compiled.append(self.source)
        return cue_pattern(self)

    async def main():
        async with await open_desk(":memory:", "agents.toml", deferred=True) as desk:
            desk.runner.warm()
            desk.runner.warm_model()
            LazyPattern.compiled = counted
            Cue.pattern = property(cue_counted)
            builds = {id(f): f.cache_info().misses for f in readers.factories()}
            session = None
            for text in json.loads(sys.argv[1]):
                async for event in desk.runner.send(session, text):
                    session = getattr(event, "session_id", session)
            built = [f.__qualname__ for f in readers.factories() if f.cache_info().misses != builds[id(f)]]
            print(json.dumps({"compiled": compiled, "built": built, "session": session}))

    asyncio.run(main())
    """
)


def test_after_the_warm_up_the_first_turns_compile_no_rule_and_build_no_reader():
    out = subprocess.run(
        [sys.executable, "-c", COLD, json.dumps(FIRST_MESSAGES)], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["session"], "the turns ran in no session"
    assert seen["compiled"] == [], f"{len(seen['compiled'])} rules compiled inside the first turns"
    assert seen["built"] == [], f"readers built inside the first turns: {seen['built']}"


def test_the_models_warm_up_compiles_what_waits_and_builds_every_reader():
    """The same protection in this process, fast: a rule waiting is compiled and a reader let go
    is built again by the model's warm-up, not by whatever reads next."""
    for build in readers.factories():
        build.cache_clear()
    rule = LazyPattern(r"\bwaiting\b")
    OfflineModel(load_desk(REPO / "agents.toml")).warm_up()
    assert "search" in vars(rule)
    assert [f.__qualname__ for f in readers.factories() if f.cache_info().currsize != 1] == []


def test_a_rule_written_later_waits_for_the_next_warm_up_and_then_answers_as_compiled():
    patterns.compile_waiting()
    rule = LazyPattern(r"\bwarm(?:ed)?\b")
    assert "search" not in vars(rule)
    assert patterns.compile_waiting() == 1
    assert "search" in vars(rule)  # compiled: its methods are the compiled pattern's own
    assert rule.search("all warmed up") is not None
    assert patterns.compile_waiting() == 0
