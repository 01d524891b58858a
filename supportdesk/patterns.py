"""Regular expressions compiled when first used, not when their module is imported.

The offline model's rules are a few hundred patterns across its modules; compiling them all on
import was a third of the model's start-up, and a session reaches only some of them. A
`LazyPattern` is written where `re.compile` would be and answers the same calls; its first call
compiles the pattern, and from then on the calls go straight to the compiled pattern's methods.
A warm-up (`compile_waiting`) compiles the ones not used yet off the first message's path.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any, Protocol

# The methods a rule is called by; after the first call each is the compiled pattern's own.
_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class WaitsToCompile(Protocol):
    def compile_now(self) -> None: ...


# Every rule written since the last warm-up, in the order written (module-level rules, so the
# list holds no more than the package's few hundred): this module's, and the cues' (`wait`).
_WAITING: list[WaitsToCompile] = []


def wait(rule: WaitsToCompile) -> None:
    """`rule` compiled by the next warm-up (`compile_waiting`) if nothing used it before."""
    _WAITING.append(rule)


class LazyPattern:
    """`re.compile(pattern, flags)`, done at the first search, match, sub ... instead of now."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern  # read by rules built from other rules, as a compiled one's is
        self.flags = flags
        wait(self)

    def compiled(self) -> re.Pattern[str]:
        compiled = re.compile(self.pattern, self.flags)
        # An instance attribute shadows the class's method of the same name, so every later
        # call is the compiled pattern's bound method, with no lookup of ours in between.
        for name in _METHODS:
            setattr(self, name, getattr(compiled, name))
        return compiled

    def compile_now(self) -> None:
        if "search" not in vars(self):
            self.compiled()

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().fullmatch(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self.compiled().finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled().findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled().sub(repl, string, count)

    def subn(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> tuple[str, int]:
        return self.compiled().subn(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str]:
        return self.compiled().split(string, maxsplit)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.flags!r})"


def compile_waiting() -> int:
    """Compile every rule written so far and not used yet; how many were waiting. The model's
    warm-up calls it off the first message's path (`Runner.warm_model`: `serve` before it listens,
    the TUI on a thread a second after its desk is up): compiled on first use, they cost that message ~0.4 s, a frozen
    screen or a server's loop held. Safe from a thread: a rule compiled twice is compiled alike."""
    waiting = _WAITING[:]
    del _WAITING[: len(waiting)]  # (a rule written meanwhile, on another thread, stays for the next)
    for rule in waiting:
        rule.compile_now()
    return len(waiting)
