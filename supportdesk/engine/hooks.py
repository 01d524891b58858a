"""Hooks: code outside the desk that watches each step of a turn and may veto some of them.

Moments (the ones Strands' BeforeNodeCallEvent and the Agents SDK's RunHooks expose):
before/after a turn, a model step, a tool call and a handoff. A hook is any object with some of
these methods (sync or async); `DeskHook` is a base with every one a no-op:

    before_turn(TurnStarted) -> Decision          after_turn(TurnEnded)
    before_model_step(ModelStep)                   after_model_step(ModelStepDone)
    before_tool_call(ToolCallAsked) -> Decision    after_tool_call(ToolCallDone)
    before_handoff(HandoffAsked) -> Decision       after_handoff(HandoffDone)

A before-hook answers None (go on), `Veto(reason)` (the call or handoff does not happen: the
agent gets the reason as the call's error result and the conversation a notice; a vetoed turn
ends before any model call, with the hook's `reply` if it gives one) or `AskApproval(reason)`
(a tool call or handoff waits for staff, through the same approval flow tool policies use).
`ANSWERS` says which moment takes which: `before_turn` only `Veto`, `before_model_step` none;
an answer a moment does not take is reported as an `info` notice and ignored.

A hook that raises is reported once, as a notice, and skipped for the rest of that turn; the
customer's message is stored before any hook runs, so a hook can never lose it.

Hooks come from `[hooks] enabled = ["module:object", ...]` in the desk file and from the
`supportdesk.hooks` entry-point group; an object that is a class is instantiated without
arguments. This module imports no framework and nothing of the TUI.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from supportdesk.items import Notice

ENTRY_POINT_GROUP = "supportdesk.hooks"


@dataclass(frozen=True)
class Veto:
    reason: str
    # What the agent tells the customer when a whole turn is vetoed (a guardrail, say).
    reply: str | None = None


@dataclass(frozen=True)
class AskApproval:
    reason: str


Decision = Veto | AskApproval | None

# The answers each before-moment takes, which the runner acts on; the other moments only watch.
# Holding a whole turn or a model step for staff has no approval flow, so those take no
# AskApproval. Any other answer is reported as a notice and ignored (HookSet.call).
ANSWERS: dict[str, tuple[type, ...]] = {
    "before_turn": (Veto,),
    "before_model_step": (),
    "before_tool_call": (Veto, AskApproval),
    "before_handoff": (Veto, AskApproval),
}


@dataclass(frozen=True)
class TurnStarted:
    session_id: str
    agent: str
    # The customer's message that started the turn ("" for a turn staff restarted).
    text: str
    # The log's last seq when the turn began (the customer's message, usually).
    seq: int = 0


@dataclass(frozen=True)
class TurnEnded:
    session_id: str
    agent: str
    outcome: str


@dataclass(frozen=True)
class ModelStep:
    session_id: str
    agent: str
    step: int
    history_items: int
    # The last seq the model call sees, and the model it goes to.
    seq: int = 0
    model: str = ""


@dataclass(frozen=True)
class ModelStepDone:
    session_id: str
    agent: str
    step: int
    action: str  # answer, call_tools, transfer
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True)
class ToolCallAsked:
    session_id: str
    agent: str
    call_id: str
    name: str
    arguments: dict[str, Any] | None


@dataclass(frozen=True)
class ToolCallDone:
    session_id: str
    agent: str
    call_id: str
    name: str
    output: str
    is_error: bool


@dataclass(frozen=True)
class HandoffAsked:
    session_id: str
    from_agent: str
    to_agent: str
    reason: str


@dataclass(frozen=True)
class HandoffDone:
    session_id: str
    from_agent: str
    to_agent: str
    reason: str
    seq: int = 0  # the handoff item's seq


class DeskHook:
    """A hook that does nothing; subclass it and override the moments you need."""

    def before_turn(self, event: TurnStarted) -> Decision:
        return None

    def after_turn(self, event: TurnEnded) -> None:
        return None

    def before_model_step(self, event: ModelStep) -> None:
        return None

    def after_model_step(self, event: ModelStepDone) -> None:
        return None

    def before_tool_call(self, event: ToolCallAsked) -> Decision:
        return None

    def after_tool_call(self, event: ToolCallDone) -> None:
        return None

    def before_handoff(self, event: HandoffAsked) -> Decision:
        return None

    def after_handoff(self, event: HandoffDone) -> None:
        return None


class HookLoadError(Exception):
    """A hook named in the desk file or an entry point that cannot be loaded (one line)."""


@dataclass
class HookOutcome:
    """What the hooks said at one moment: the first veto or approval request, and notices
    for hooks that failed (each reported once per turn)."""

    decision: Decision = None
    hook: str = ""
    notices: list[Notice] = field(default_factory=list)


@dataclass
class HookSet:
    """The desk's hooks, called in order; the first before-hook that vetoes or asks wins."""

    hooks: list[tuple[str, Any]] = field(default_factory=list)
    _failed: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.hooks)

    def close(self) -> None:
        """Let hooks that hold resources (the tracing exporter) flush and let go."""
        for _name, hook in self.hooks:
            close = getattr(hook, "close", None)
            if callable(close):
                close()

    def start_turn(self) -> None:
        """A hook disabled because it raised gets another chance next turn."""
        self._failed.clear()

    async def call(self, moment: str, event: Any, *, agent: str) -> HookOutcome:
        outcome = HookOutcome()
        for name, hook in self.hooks:
            method = getattr(hook, moment, None)
            if method is None or name in self._failed:
                continue
            try:
                answer = method(event)
                if inspect.isawaitable(answer):
                    answer = await answer
            except Exception as exc:  # a broken hook must not break the turn
                self._failed.add(name)
                outcome.notices.append(
                    Notice(
                        notice_kind="info",
                        text=f"Hook {name} failed in {moment} ({type(exc).__name__}: {exc}); it is off for the rest of this turn.",
                        data={"hook": name, "moment": moment, "error": type(exc).__name__},
                        agent=agent,
                    )
                )
                continue
            if not isinstance(answer, (Veto, AskApproval)):
                continue
            if not isinstance(answer, ANSWERS.get(moment, ())):
                taken = " or ".join(t.__name__ for t in ANSWERS.get(moment, ())) or "no answer (it only watches)"
                outcome.notices.append(
                    Notice(
                        notice_kind="info",
                        text=f"Hook {name} answered {type(answer).__name__} in {moment}, which takes {taken}; ignored.",
                        data={"hook": name, "moment": moment, "ignored": type(answer).__name__},
                        agent=agent,
                    )
                )
            elif outcome.decision is None:
                outcome.decision, outcome.hook = answer, name
        return outcome


def _load_object(spec: str) -> Any:
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise HookLoadError(f"hook {spec!r} must be written module:object")
    try:
        target: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise HookLoadError(f"hook {spec!r} cannot be loaded: {exc}") from None
    return target() if inspect.isclass(target) else target


def load_hooks(enabled: Iterable[str], extra: Iterable[tuple[str, Any]] = (), *, use_entry_points: bool = True) -> HookSet:
    """The hooks named in the desk file, then those other packages register as entry points."""
    hooks: list[tuple[str, Any]] = list(extra)
    for spec in enabled:
        hooks.append((spec, _load_object(spec)))
    if use_entry_points:
        # Imported here: reading the installed packages' metadata costs 30-60 ms on a cold start.
        from importlib.metadata import entry_points

        for point in entry_points(group=ENTRY_POINT_GROUP):
            try:
                loaded = point.load()
            except Exception as exc:
                raise HookLoadError(f"entry point {point.name!r} ({point.value}) cannot be loaded: {exc}") from None
            hooks.append((point.name, loaded() if inspect.isclass(loaded) else loaded))
    return HookSet(hooks)


def veto_notice(hook: str, decision: Veto | AskApproval, what: str, agent: str, **data: Any) -> Notice:
    """The notice the conversation shows when a hook vetoes something."""
    return Notice(
        notice_kind="info",
        text=f"{hook} vetoed {what}: {decision.reason}",
        data={"hook": hook, "vetoed": what, "reason": decision.reason, **data},
        agent=agent,
    )
