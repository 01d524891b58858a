"""A session as Markdown or JSON (`supportdesk export`, the TUI's export action)."""

from __future__ import annotations

import json
from typing import Any

from supportdesk.config import DeskConfig
from supportdesk.items import Item, item_to_json
from supportdesk.store import SessionInfo


def session_json(info: SessionInfo, items: list[Item]) -> dict[str, Any]:
    return {"session": info.model_dump(mode="json"), "items": [item_to_json(i) for i in items]}


def _who(item: Item, config: DeskConfig | None) -> str:
    agent = config.agents.get(item.agent) if config else None
    return agent.title if agent else item.agent


def item_line(item: Item, config: DeskConfig | None = None) -> str:
    """One item as a line of plain text (CLI output, Markdown export)."""
    if item.kind == "message":
        speaker = {"customer": "Customer", "staff": "Staff", "system": "System"}.get(item.role) or _who(item, config)
        return f"{speaker}: {item.text}"
    if item.kind == "handoff":
        reason = f" ({item.reason})" if item.reason else ""
        return f"→ {item.handoff_kind}: {item.from_agent} → {item.to_agent}{reason}"
    if item.kind == "tool_call":
        return f"⚙ {item.name}({json.dumps(item.arguments, ensure_ascii=False)})"
    if item.kind == "tool_result":
        mark = "✗" if item.is_error else "✓"
        return f"{mark} {item.name}: {item.output}"
    if item.kind == "context_set":
        value = "(cleared)" if item.value is None else json.dumps(item.value, ensure_ascii=False)
        return f"• context {item.key} = {value} (by {item.writer})"
    return f"! {item.notice_kind}: {item.text}"


def session_markdown(info: SessionInfo, items: list[Item], config: DeskConfig | None = None) -> str:
    lines = [
        f"# {info.title or 'Untitled session'}",
        "",
        f"- session: `{info.id}`",
        f"- started: {info.created_at:%Y-%m-%d %H:%M} UTC · last activity: {info.updated_at:%Y-%m-%d %H:%M} UTC",
        f"- agent now: {info.active_agent} · handoffs: {info.handoff_count} · items: {info.item_count}",
    ]
    if info.forked_from:
        lines.append(f"- forked from `{info.forked_from}` at item {info.forked_at}")
    lines.append("")
    for item in items:
        if item.kind == "message":
            lines += [f"**{item_line(item, config).split(':', 1)[0]}** · {item.created_at:%H:%M:%S}", "", item.text, ""]
        else:
            lines += [f"> {item_line(item, config)}", ""]
    return "\n".join(lines).rstrip() + "\n"
