"""What one session adds to the desk's figures, folded item by item as the stores append.

`store/figures.py` defines the figures over a window of item times. A session whose items (and
creation) all fall inside the window adds its whole log's share, and that share only grows with
appends: a few counters per session (`Tallies`). The stores keep it beside the session row and add
it to a roll-up by the hour and by the day in which the session's span begins and ends, so the
figures of a window are the roll-up rows of the hours it holds whole, plus the few sessions that
cross its edges, read from their items.

The durations (first answer, resolution) are one value each per session, kept as columns with the
times they are tested at (`Spans`), so their percentiles stay exact.

No SQL here: a fold like `desk_state`, no clock of its own (times are the items').
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, assert_never

from supportdesk.items import (
    Confirmation,
    ContextSet,
    Decline,
    Handoff,
    Item,
    Message,
    Notice,
    Offer,
    Release,
    StaffReply,
    StateChange,
    TagChange,
    Takeover,
    ToolCall,
    ToolResult,
)
from supportdesk.store.figures import (
    AMOUNT_EDGES,
    DURATION_EDGES_MS,
    DURATIONS,
    GRAINS,
    MONEY_SCALE,
    MONEY_TOOLS,
    OFFER_EXPIRED,
    WAITING_STATUSES,
    bucket_of,
    micros,
)

# A tally's key: (what, a, b, c); its value: [n, x, y, z] (see `FigureSummary.tallies`).
Key = tuple[str, str, str, str]

# One encoder made once: `json.dumps` with any option builds a new JSONEncoder at every call, and the
# stores encode the three summaries at every append, inside the write lock. Same text as
# `json.dumps(value, ensure_ascii=False, separators=(",", ":"))`.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def millis(later: int, earlier: int) -> int:
    """Whole milliseconds between two microsecond times, as the fold measures them."""
    return (later - earlier) // 1000


@dataclass(frozen=True)
class FigureSummary:
    """One session's share of the figures after the items folded so far (through `seq`)."""

    seq: int = 0
    first_us: int = 0  # the span: the session's creation and every item time
    last_us: int = 0
    # (what, a, b, c) -> [n, x, y, z]:
    #   conversations/started: n = 1; taken/escalated (agent): n = 1 per agent;
    #   handoff (from, to, kind): n; notice (kind): n; money (tool, bucket): n, x = amount * 1e6;
    #   usage (agent, model): n items, x input tokens, y output tokens, z estimated counts.
    tallies: dict[Key, tuple[int, int, int, int]] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)  # money call id -> its latest amount * 1e6
    asked_us: int | None = None  # the first customer message
    asked_seq: int = 0
    answer_ms: int | None = None  # to the first agent message after it
    # The resolution, as the SLA clocks define it (`folds/sla.py`): the item at which the conversation's
    # state (`desk_state`) last became `resolved`, and the time to it from the first customer
    # message; None while the state is not `resolved` (or it became so in a fork's copied items).
    resolved_us: int | None = None
    resolution_ms: int | None = None
    resolved: bool = False  # the conversation's state is `resolved` after the items folded so far
    waiting: bool = False  # the session's status is one of WAITING_STATUSES (kept; resolution reads the state)
    # A fork's copied items (seq <= its forked_at) are not new events: they count in no figure and
    # not in the span (the source session already counts them).
    copied: int = 0
    # The entry agent: it takes the session with the session's first own item (an empty session
    # is no conversation anybody took part in); "" in a share kept before it was recorded.
    entry: str = ""

    def to_json(self) -> str:
        out = {
            "seq": self.seq,
            "first_us": self.first_us,
            "last_us": self.last_us,
            "tallies": [[*key, *value] for key, value in sorted(self.tallies.items())],
            "calls": self.calls,
            "asked_us": self.asked_us,
            "asked_seq": self.asked_seq,
            "answer_ms": self.answer_ms,
            "resolved_us": self.resolved_us,
            "resolution_ms": self.resolution_ms,
            "resolved": self.resolved,
            "waiting": self.waiting,
            "copied": self.copied,
            "entry": self.entry,
        }
        return _encode(out)

    @classmethod
    def from_json(cls, text: str) -> FigureSummary:
        raw: dict[str, Any] = json.loads(text)
        tallies = {tuple(row[:4]): tuple(row[4:]) for row in raw.pop("tallies", [])}
        if not raw.keys() <= _SHARE_DEFAULTS.keys():
            return cls(tallies=tallies, **raw)  # (a field this code does not know: refused as before)
        # (Without the frozen __init__: parsed again under the write lock when another process appended last.)
        return _made(**{**_SHARE_DEFAULTS, "calls": {}, **raw, "tallies": tallies})

    def buckets(self) -> list[tuple[str, int, int]]:
        """The roll-up buckets the session counts in: per grain, where its span begins and ends."""
        return [(grain, self.first_us // size, self.last_us // size) for grain, size in GRAINS]

    def rollup(self, sign: int = 1) -> dict[tuple[str, int, int, str, str, str, str], tuple[int, int, int, int]]:
        """The session's roll-up rows (negated with sign -1: to take it out again)."""
        return {
            (*bucket, *key): tuple(sign * v for v in value)  # type: ignore[misc]
            for bucket in self.buckets()
            for key, value in self.tallies.items()
        }


def rollup_delta(before: FigureSummary | None, after: FigureSummary | None) -> list[tuple[Any, ...]]:
    """The roll-up changes that take `before`'s share out and put `after`'s in, zeros left out:
    rows (grain, lo, hi, what, a, b, c, n, x, y, z), sorted so concurrent writers lock rows in
    one order."""
    if before is not None and after is not None and before.buckets() == after.buckets():
        if before.tallies == after.tallies:
            return []  # most appends (a message, a tool call): nothing in the roll-up moves
        # The same buckets (most appends): only the tallies that changed move, by their change.
        # (The same rows as the general case below, which takes every tally out and puts it back.)
        changed: dict[Key, tuple[int, ...]] = {}
        for tally in before.tallies.keys() | after.tallies.keys():
            old, new = before.tallies.get(tally, (0, 0, 0, 0)), after.tallies.get(tally, (0, 0, 0, 0))
            if old != new:  # (then the change has a non-zero part)
                changed[tally] = tuple(b - a for a, b in zip(old, new))
        return sorted((*bucket, *tally, *value) for bucket in after.buckets() for tally, value in changed.items())
    delta: dict[tuple[Any, ...], list[int]] = {}
    for summary, sign in ((before, -1), (after, 1)):
        if summary is None:
            continue
        for key, value in summary.rollup(sign).items():
            row = delta.setdefault(key, [0, 0, 0, 0])
            for i, v in enumerate(value):
                row[i] += v
    return [(*key, *value) for key, value in sorted(delta.items()) if any(value)]


def start(entry_agent: str, created_at: datetime, status: str = "open", copied: int = 0) -> FigureSummary:
    """A new session's share: it started; its entry agent takes it with its first own item (a
    fork: `copied` is its forked_at, the items it copied, which its share leaves out)."""
    at = micros(created_at)
    tallies: dict[Key, tuple[int, int, int, int]] = {("started", "", "", ""): (1, 0, 0, 0)}
    return FigureSummary(
        first_us=at, last_us=at, tallies=tallies, waiting=status in WAITING_STATUSES, copied=copied, entry=entry_agent
    )


def with_status(summary: FigureSummary, status: str) -> FigureSummary:
    """The share once the session's status is `status`."""
    return _with_durations(replace(summary, waiting=status in WAITING_STATUSES))


def _with_durations(summary: FigureSummary) -> FigureSummary:
    """The durations' tallies from the duration fields: a first answer or the unanswered, and a
    resolution while the conversation is resolved; (bucket) n = 1, x = milliseconds."""
    tallies = dict(summary.tallies)
    _set_durations(tallies, summary.asked_us, summary.answer_ms, summary.resolution_ms)
    return replace(summary, tallies=tallies)


def _set_durations(
    tallies: dict[Key, tuple[int, int, int, int]], asked_us: int | None, answer_ms: int | None, resolution_ms: int | None
) -> None:
    """Put the durations' tallies that follow from these fields into `tallies` (in place, in a
    copy the caller owns), dropping those that no longer do."""
    for key in [key for key in tallies if key[0] in _DURATION_KINDS]:
        del tallies[key]
    if asked_us is not None:
        if answer_ms is None:
            tallies["unanswered", "", "", ""] = (1, 0, 0, 0)
        else:
            tallies["first_answer", str(bucket_of(answer_ms, DURATION_EDGES_MS)), "", ""] = (1, answer_ms, 0, 0)
    if resolution_ms is not None:
        tallies["resolution", str(bucket_of(resolution_ms, DURATION_EDGES_MS)), "", ""] = (1, resolution_ms, 0, 0)


_DURATION_KINDS = frozenset((*DURATIONS, "unanswered"))


# Every field's default, for `from_json`'s fields a stored share lacks (`calls` made fresh).
_SHARE_DEFAULTS: dict[str, Any] = dict(FigureSummary().__dict__)


def _made(**fields: Any) -> FigureSummary:
    """A FigureSummary from every one of its fields, without the frozen dataclass's __init__ (one
    `object.__setattr__` per field): the append folds the share inside the write lock."""
    new = object.__new__(FigureSummary)
    object.__setattr__(new, "__dict__", fields)
    return new


def _add(tallies: dict[Key, tuple[int, int, int, int]], key: Key, n: int = 1, x: int = 0, y: int = 0, z: int = 0) -> None:
    old = tallies.get(key, (0, 0, 0, 0))
    tallies[key] = (old[0] + n, old[1] + x, old[2] + y, old[3] + z)


def _once(tallies: dict[Key, tuple[int, int, int, int]], key: Key) -> None:
    tallies.setdefault(key, (1, 0, 0, 0))


def _number(value: Any) -> int:
    """A usage count as the fold reads it (`int(x or 0)`)."""
    return int(value or 0)


def _amount(value: Any) -> int | None:
    """A call's amount in millionths; None when it names none a refund could be made of (a
    model's arguments are data: "lots", NaN or a list must not fail the append that stores them)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return round(number * MONEY_SCALE) if math.isfinite(number) else None


def fold(items: Iterable[Item], summary: FigureSummary, resolved: Iterable[bool]) -> FigureSummary:
    """The share after several items, `resolved` saying for each whether the conversation's state
    (`desk_state`, folded over the same items) is `resolved` after it: one pass with the share in
    locals and one FigureSummary at the end (the durations' tallies follow from the final fields,
    so they are made once)."""
    tallies = dict(summary.tallies)
    calls = summary.calls
    seq, first_us, last_us = summary.seq, summary.first_us, summary.last_us
    asked_us, asked_seq, answer_ms = summary.asked_us, summary.asked_seq, summary.answer_ms
    resolved_us, resolution_ms = summary.resolved_us, summary.resolution_ms
    was_resolved = summary.resolved
    folded = False
    copied = summary.copied
    for item, now_resolved in zip(items, resolved, strict=True):
        folded = True
        seq = item.seq or seq + 1
        became, was_resolved = now_resolved and not was_resolved, now_resolved
        if not now_resolved:
            resolved_us = resolution_ms = None
        if seq <= copied:
            continue  # a fork's copy of its source's item: counted there, not here
        if became and asked_us is not None:  # (from the first customer message: the SLA's `started`)
            at = micros(item.created_at)
            resolved_us, resolution_ms = at, millis(at, asked_us)
        at = micros(item.created_at)
        if ("conversations", "", "", "") not in tallies and summary.entry:  # the session's first own item
            _once(tallies, ("taken", summary.entry, "", ""))
        _once(tallies, ("conversations", "", "", ""))
        first_us, last_us = min(first_us, at), max(last_us, at)
        match item:
            case Handoff(from_agent=source, to_agent=target, handoff_kind=kind):
                _once(tallies, ("taken", target, "", ""))
                _add(tallies, ("handoff", source, target, kind))
                if kind == "escalate":
                    _once(tallies, ("escalated", source, "", ""))
            case Notice(notice_kind=kind):
                _add(tallies, ("notice", kind, "", ""))
            case Offer(tool=tool, agent=agent):
                _add(tallies, ("offer", tool, agent, "made"))
            case Confirmation(tool=tool, agent=agent):
                _add(tallies, ("offer", tool, agent, "accepted"))
            case Decline(tool=tool, agent=agent, why=why):
                _add(tallies, ("offer", tool, agent, "expired" if why in OFFER_EXPIRED else "declined"))
            case ToolCall(call_id=call_id, arguments=arguments):
                # A money result is counted at the amount of the latest call with its id, whatever
                # that call's name (only calls that name an amount are kept: the rest count none).
                changed = {k: v for k, v in calls.items() if k != call_id}
                amount = _amount(arguments.get("amount"))
                if amount is not None:
                    changed[call_id] = amount
                if changed != calls:
                    calls = changed
            case ToolResult(call_id=call_id, name=name, is_error=False, awaits_approval=held) if name in MONEY_TOOLS:
                amount = calls.get(call_id)
                if amount is not None and not held:
                    _add(tallies, ("money", name, str(bucket_of(amount / MONEY_SCALE, AMOUNT_EDGES)), ""), 1, amount)
            case Message(role=role):
                if role == "customer" and asked_us is None:
                    asked_us, asked_seq = at, seq
                if role == "agent" and asked_us is not None and answer_ms is None and seq > asked_seq:
                    answer_ms = millis(at, asked_us)
            case ToolResult() | ContextSet() | Takeover() | Release() | StaffReply() | StateChange() | TagChange():
                pass
            case _:
                assert_never(item)
        used = item.meta.get("usage") if item.meta else None
        if used is not None:
            _add(
                tallies,
                ("usage", item.agent, str(item.meta.get("model") or ""), ""),
                1,
                _number(used.get("input_tokens")),
                _number(used.get("output_tokens")),
                0 if bool(used.get("reported", True)) else 1,
            )
    if not folded:
        return summary
    _set_durations(tallies, asked_us, answer_ms, resolution_ms)
    return _made(
        seq=seq,
        first_us=first_us,
        last_us=last_us,
        tallies=tallies,
        calls=calls,
        asked_us=asked_us,
        asked_seq=asked_seq,
        answer_ms=answer_ms,
        resolved_us=resolved_us,
        resolution_ms=resolution_ms,
        resolved=was_resolved,
        waiting=summary.waiting,
        copied=copied,
        entry=summary.entry,
    )
