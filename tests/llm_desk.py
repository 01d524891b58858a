"""A small desk and step requests for the OpenAI-compatible provider tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from supportdesk.config import DeskConfig, parse_desk
from supportdesk.engine.protocol import StepRequest, ToolSpec
from supportdesk.items import Item

WIRE = Path(__file__).parent / "wire"

DESK_TOML = """
[desk]
name = "Acme Cloud support"
entry = "triage"
fallback = "triage"

[model]
provider = "openai"
base_url = "{base_url}"
model = "test-model"
max_tokens = 256
timeout = {timeout}
max_retries = {max_retries}
{extra}

[agents.triage]
title = "Triage"
description = "Routes customers."
level = 1
instructions = "Find out what the customer needs and hand off."
handoffs = ["billing", "technical"]

[agents.billing]
title = "Billing"
description = "Charges, refunds and invoices."
level = 1
instructions = "You handle money."
tools = ["lookup_customer", "list_charges", "issue_refund"]
handoffs = ["senior", "triage"]

[agents.technical]
title = "Technical"
description = "Things that do not work."
level = 1
handoffs = ["senior", "triage"]

[agents.senior]
title = "Senior"
description = "Large refunds and bugs."
level = 2
model = "big-model"
handoffs = ["triage"]
"""

TOOL_NAMES = ["lookup_customer", "list_charges", "issue_refund"]


def make_config(
    base_url: str = "http://127.0.0.1:9/v1", timeout: float = 5.0, max_retries: int = 2, **extra: Any
) -> DeskConfig:
    lines = []
    for key, value in extra.items():
        if isinstance(value, bool):
            lines.append(f"{key} = {'true' if value else 'false'}")
        elif isinstance(value, str):
            lines.append(f'{key} = "{value}"')
        else:
            lines.append(f"{key} = {value}")
    text = DESK_TOML.format(base_url=base_url, timeout=timeout, max_retries=max_retries, extra="\n".join(lines))
    return parse_desk(text, "test-desk.toml", tool_names=TOOL_NAMES)


class LookupArgs(BaseModel):
    email: str = Field(description="The customer's email address")


class ChargesArgs(BaseModel):
    month: str = Field(pattern=r"^\d{4}-\d{2}$")


class RefundArgs(BaseModel):
    amount: float = Field(gt=0)
    reason: str


TOOL_SPECS = {
    "lookup_customer": ToolSpec("lookup_customer", "Find a customer by email.", LookupArgs),
    "list_charges": ToolSpec("list_charges", "List a month's charges.", ChargesArgs),
    "issue_refund": ToolSpec("issue_refund", "Refund a charge.", RefundArgs),
}


def make_request(
    config: DeskConfig,
    agent: str = "triage",
    history: list[Item] | None = None,
    context: dict[str, Any] | None = None,
) -> StepRequest:
    agent_cfg = config.agents[agent]
    return StepRequest(
        session_id="s-test",
        agent=agent_cfg,
        desk=config,
        tools=[TOOL_SPECS[name] for name in agent_cfg.tools],
        handoff_targets=[config.agents[t] for t in agent_cfg.handoffs],
        history=history or [],
        context=context or {},
    )
