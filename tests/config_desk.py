"""One definition of "the shipped desk plus an agent only a desk file knows", shared by the tests
of config-only agents (tests/test_config_only_agents.py, tests/test_offline_moves_agents.py).

`desk_with_agent` appends the agent's TOML table to agents.toml, lets triage hand off to it, and
registers the shipped tools plus the agent's own tool (which exists only in the test); `converse`
sends messages to a real desk on a real SQLite file and returns each turn's items and the agent
holding the conversation after it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

from supportdesk.config import DeskConfig, parse_desk
from supportdesk.engine.events import Appended
from supportdesk.engine.tools import ToolOutput, ToolRegistry
from supportdesk.items import Handoff, Message, ToolCall
from supportdesk.tools import registry as desk_tools
from supportdesk.wiring import open_desk
from tests.conftest import REPO

SHIPPED_HANDOFFS = 'handoffs = ["billing", "technical"]'


def desk_with_agent(
    name: str,
    agent_toml: str,
    tool: tuple[str, str, type[BaseModel], Callable[[Any, Any], Awaitable[ToolOutput]]],
) -> tuple[DeskConfig, ToolRegistry]:
    """The shipped desk plus `agent_toml` (an `[agents.<name>]` table) that triage can reach, and a
    registry of the shipped tools plus `tool` (its name, description, arguments model, handler)."""
    tools = ToolRegistry()
    for shipped in desk_tools.names():
        tools.add(desk_tools.get(shipped))
    tool_name, description, args, handler = tool
    tools.tool(tool_name, description, args)(handler)
    text = (REPO / "agents.toml").read_text(encoding="utf-8")
    assert SHIPPED_HANDOFFS in text, "agents.toml's triage handoffs changed: update tests/config_desk.py"
    text = text.replace(SHIPPED_HANDOFFS, f'handoffs = ["billing", "technical", "{name}"]', 1)
    return parse_desk(text + agent_toml, tool_names=tools.names()), tools


async def converse(tmp_path, config: DeskConfig, tools: ToolRegistry, messages: list[str]) -> list[tuple[list, str | None]]:
    turns = []
    async with await open_desk(tmp_path / "desk.db", config, tools=tools) as desk:
        session = await desk.runner.new_session()
        for text in messages:
            items = [e.item async for e in desk.runner.send(session, text) if isinstance(e, Appended)]
            info = await desk.store.get_session(session)
            turns.append((items, info.active_agent))
    return turns


def handoffs(items) -> list[str]:
    return [f"{h.from_agent}>{h.to_agent}" for h in items if isinstance(h, Handoff)]


def replies(items) -> str:
    return " ".join(i.text for i in items if isinstance(i, Message) and i.role == "agent")


def calls(items, name: str) -> list[ToolCall]:
    return [i for i in items if isinstance(i, ToolCall) and i.name == name]
