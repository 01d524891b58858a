"""Items as Rich `Text`: literal text with styles laid on top, never markup.

Customer and model text is data. It goes through `safe_text` (terminal escapes made
visible) into `Text(...)`, which Rich never parses for markup.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text

from supportdesk.config import DEFAULT_COLORS, DeskConfig
from supportdesk.items import ROLE_TITLES, STAFF_META, Handoff, Item, Message
from supportdesk.text import safe_text

HANDOFF_ICONS = {"route": "→", "escalate": "⇧", "return": "↩", "manual": "✋"}
NOTICE_ICONS = {
    "limit": "⚠",
    "provider_error": "✗",
    "approval_requested": "?",
    "approval_granted": "✓",
    "approval_denied": "✗",
    "human_requested": "☎",
    "info": "ℹ",
    "customer_action": "▸",
}


def literal(text: str, style: str = "") -> Text:
    """Untrusted text as a Text that shows exactly what was typed."""
    return Text(safe_text(text), style=style)


class AgentLook:
    """Titles, levels and colours of the desk's agents (theme overrides win)."""

    def __init__(self, config: DeskConfig | None, overrides: dict[str, str] | None = None):
        self.config = config
        self.overrides = dict(overrides or {})

    def title(self, name: str) -> str:
        agent = self.config.agents.get(name) if self.config else None
        return agent.title if agent else (name or "?")

    def level(self, name: str) -> int:
        agent = self.config.agents.get(name) if self.config else None
        return agent.level if agent else 1

    def color(self, name: str) -> str:
        if name in self.overrides:
            return self.overrides[name]
        if self.config and name in self.config.agents:
            agent = self.config.agents[name]
            if agent.color:
                return agent.color
            index = list(self.config.agents).index(name)
            return DEFAULT_COLORS[index % len(DEFAULT_COLORS)]
        return DEFAULT_COLORS[0]

    def label(self, name: str, *, bold: bool = True) -> Text:
        return Text(safe_text(self.title(name)), style=f"{'bold ' if bold else ''}{self.color(name)}")


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def call_summary(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{k}={compact_json(v)}" for k, v in arguments.items())


def handoff_text(item: Handoff, look: AgentLook, *, with_reason: bool = True) -> Text:
    """`Triage → Billing  route · reason` with agent colours."""
    icon = HANDOFF_ICONS.get(item.handoff_kind, "→")
    out = Text.assemble(look.label(item.from_agent), f" {icon} ", look.label(item.to_agent))
    out.append(f"  {item.handoff_kind}", style="italic")
    if with_reason and item.reason:
        out.append(" · ")
        out.append_text(literal(item.reason))
    return out


def speaker(item: Item, look: AgentLook) -> Text:
    if isinstance(item, Message) and item.role == "staff":
        # A note is labelled with its author (who wrote it is in its meta), not "Staff".
        said = item.meta.get(STAFF_META)
        person = said.get("person") if isinstance(said, dict) else None
        if isinstance(person, str) and person.strip():
            return Text(f"{safe_text(person.strip())} (staff note)", style="bold")
    if isinstance(item, Message) and item.role in ROLE_TITLES:
        return Text(ROLE_TITLES[item.role], style="bold")
    return look.label(item.agent)
