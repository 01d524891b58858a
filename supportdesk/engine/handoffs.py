"""Handoffs as the desk defines them: the transfer tool's name and the kind of a handoff.

Both are desk policy, not any provider's: the runner writes `transfer_to_<agent>` calls into
the log, every provider offers the same names to its model and reads them back, and whether a
handoff escalates, returns or routes follows from the desk's agent levels and entry agent.
"""

from __future__ import annotations

from supportdesk.config import DeskConfig
from supportdesk.items import HandoffKind

TRANSFER_PREFIX = "transfer_to_"


def transfer_tool_name(agent: str) -> str:
    """The tool a model calls to hand the conversation to `agent`."""
    return f"{TRANSFER_PREFIX}{agent}"


def transfer_target(tool_name: str) -> str | None:
    """The agent a `transfer_to_<agent>` tool name points at, else None."""
    if tool_name.startswith(TRANSFER_PREFIX) and len(tool_name) > len(TRANSFER_PREFIX):
        return tool_name[len(TRANSFER_PREFIX) :]
    return None


def handoff_kind(config: DeskConfig, current: str, target: str) -> HandoffKind:
    """Up a level is an escalation, back to the entry agent a return, anything else a route."""
    here = config.agents.get(current)
    there = config.agents.get(target)
    if here is not None and there is not None and there.level > here.level:
        return "escalate"
    if target == config.desk.entry:
        return "return"
    return "route"
