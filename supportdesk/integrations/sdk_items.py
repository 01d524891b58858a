"""OpenAI Agents SDK input items <-> the desk's item kinds (pure functions, no `agents` import).

Each SDK item becomes exactly one of our items, carrying the SDK's own dict verbatim in its
`meta` (`SDK_ITEM_KEY`), so a round trip gives back what the SDK stored, byte for byte as JSON.
One-to-one matters: `pop_item` removes one SDK item, so it must tombstone one of ours.

Both `DeskSession` (live) and `supportdesk import` (an SDK SQLite database after the fact) use
these, so an imported session and a live one look the same on the timeline.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal, assert_never

from supportdesk import items as k
from supportdesk.items import Role

SdkItem = dict[str, Any]
# Where our item keeps the SDK item it was made from.
SDK_ITEM_KEY = "sdk_item"
# A tombstone is a notice whose data names the SDK operation it stands for.
TOMBSTONE_KEY = "sdk"
# Items the bridge writes for our timeline alone (who holds the session): the SDK never sees them.
DESK_ONLY_KEY = "sdk_desk_only"
Tombstone = Literal["pop_item", "clear_session"]
TRANSFER_PREFIX = "transfer_to_"

_ROLES: dict[str, Role] = {"user": "customer", "assistant": "agent", "system": "system", "developer": "system"}


def handoff_target(raw: Mapping[str, Any]) -> str | None:
    """The agent a handoff's output names: the SDK answers a transfer call with {"assistant": name}."""
    if raw.get("type") != "function_call_output" or not isinstance(raw.get("output"), str):
        return None
    try:
        parsed = json.loads(raw["output"])
    except ValueError:
        return None
    if isinstance(parsed, dict) and list(parsed) == ["assistant"] and isinstance(parsed["assistant"], str):
        return parsed["assistant"]
    return None


def message_text(content: Any) -> str:
    """The readable text of a message's content (a string, or a list of typed parts)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        text = part.get("text", part.get("refusal"))
        parts.append(text if isinstance(text, str) else f"[{part.get('type', 'part')}]")
    return "\n".join(parts)


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except ValueError:
        parsed = None
    return parsed if isinstance(parsed, dict) else {"arguments": raw}


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    return message_text(output) if isinstance(output, list) else json.dumps(output, ensure_ascii=False)


def item_from_sdk(raw: SdkItem, *, agent: str, calls: Mapping[str, k.ToolCall]) -> k.Item:
    """Our item for one SDK input item; `calls` are the function calls seen so far, by call id."""
    meta = {SDK_ITEM_KEY: raw}
    kind = raw.get("type", "message" if "role" in raw else None)
    role = _ROLES.get(raw.get("role", ""))
    if kind == "message" and role is not None:
        return k.Message(role=role, text=message_text(raw.get("content")), agent=agent, meta=meta)
    if kind == "function_call":
        name = str(raw.get("name", ""))
        return k.ToolCall(call_id=str(raw.get("call_id", "")), name=name, arguments=_arguments(raw.get("arguments")), agent=agent, meta=meta)
    if kind == "function_call_output":
        call_id = str(raw.get("call_id", ""))
        call = calls.get(call_id)
        target = handoff_target(raw)
        if target is not None and (call is None or call.name.startswith(TRANSFER_PREFIX)):
            reason = call.arguments.get("reason", "") if call is not None else ""
            return k.Handoff(from_agent=agent, to_agent=target, reason=str(reason), agent=agent, meta=meta)
        name = call.name if call is not None else ""
        return k.ToolResult(call_id=call_id, name=name, output=_output_text(raw.get("output")), agent=agent, meta=meta)
    # Reasoning, hosted tool calls, compaction markers …: kept verbatim, shown as one line.
    return k.Notice(notice_kind="info", text=f"Agents SDK {kind or 'untyped'} item", agent=agent, meta=meta)


def sdk_from_item(item: k.Item) -> SdkItem | None:
    """The SDK input item for one of our items; None for what is not conversation."""
    raw = item.meta.get(SDK_ITEM_KEY)
    if isinstance(raw, dict):
        return raw
    if item.meta.get(DESK_ONLY_KEY):
        return None
    match item:
        case k.Message(role="customer"):
            return {"role": "user", "content": item.text}
        case k.Message(role="agent"):
            return {"role": "assistant", "content": item.text}
        case k.Message(role="staff"):
            return {"role": "user", "content": f"[staff note] {item.text}"}
        case k.Message():
            return {"role": "system", "content": item.text}
        case k.ToolCall():
            return {"type": "function_call", "call_id": item.call_id, "name": item.name, "arguments": json.dumps(item.arguments)}
        case k.ToolResult():
            return {"type": "function_call_output", "call_id": item.call_id, "output": item.output}
        case k.Handoff():
            note = f"[handoff] {item.from_agent} -> {item.to_agent}" + (f": {item.reason}" if item.reason else "")
            return {"role": "system", "content": note}
        case k.StaffReply():
            return {"role": "assistant", "content": item.text}
        case k.Release():
            note = f"[staff] {item.person} gave the conversation back to {item.to_agent}" + (f": {item.summary}" if item.summary else "")
            return {"role": "system", "content": note}
        case k.ContextSet() | k.Notice() | k.Takeover() | k.StateChange() | k.TagChange():
            return None
        case k.Offer():
            return None  # its question is the agent's message that follows it
        case k.Confirmation():
            return {"role": "system", "content": f"[confirmed] the customer said yes to {item.tool}"}
        case k.Decline():
            return {"role": "system", "content": f"[declined] {item.tool}: {item.why}; nothing was done"}
        case _:
            assert_never(item)


def tombstone_of(item: k.Item) -> Tombstone | None:
    """Which SDK removal an item stands for, if it is a tombstone."""
    if item.kind != "notice":
        return None
    marker = item.data.get(TOMBSTONE_KEY)
    return marker if marker in ("pop_item", "clear_session") else None


def pop_tombstone(popped: k.Item, agent: str) -> k.Notice:
    return k.Notice(
        notice_kind="info",
        text=f"The Agents SDK took back item #{popped.seq} (pop_item); it stays in the log for replay.",
        data={TOMBSTONE_KEY: "pop_item", "seq": popped.seq},
        agent=agent,
    )


def clear_tombstone(agent: str) -> k.Notice:
    return k.Notice(
        notice_kind="info",
        text="The Agents SDK cleared this session's history (clear_session); earlier items stay in the log for replay.",
        data={TOMBSTONE_KEY: "clear_session"},
        agent=agent,
    )
