"""An agent defined only in the desk file gets competent generic behaviour from the offline model.

The `returns` agent and its `create_return_label` tool exist only in this test: the model has
never heard of either. It must be routed to, ask for what the tool's parameters need, call the
tool, report what the tool returned, and hand a request outside its description back to triage.
"""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from supportdesk.engine.tools import ToolOutput
from supportdesk.items import ToolResult
from tests.config_desk import calls, desk_with_agent, handoffs, replies
from tests.config_desk import converse as converse_on


class ReturnLabelArgs(BaseModel):
    order_id: str = Field(min_length=3, description="the order number (ORD-123)")
    reason: str = Field(min_length=3, description="why the item is coming back")


RETURNS = '''
[agents.returns]
title = "Returns"
description = "Returns and exchanges of hardware orders: return labels (RMA), damaged or wrong items."
level = 1
instructions = "You handle returns. Create a return label for the customer's order."
tools = ["create_return_label", "request_human"]
handoffs = ["triage"]
examples = [
  "I want to return my order",
  "the item arrived damaged, how do I send it back",
  "I need an RMA for my hardware order",
  "can I exchange the device I received for another one",
  "please send me a return label",
  "you sent me the wrong item, I want to return it",
  "how do I ship back the router I ordered",
  "my order arrived broken in the box, I want a replacement",
]
'''


def returns_desk():
    """The default desk plus the returns agent, with the tool registered for this test only."""
    labels: list[dict] = []

    async def create_return_label(ctx, args: ReturnLabelArgs) -> ToolOutput:
        if args.order_id == "ORD-404":
            return ToolOutput(f"no order {args.order_id}", is_error=True)
        label = {"rma": f"RMA-{len(labels) + 1:04d}", "order_id": args.order_id, "carrier": "UPS"}
        labels.append(label | {"reason": args.reason})
        return ToolOutput(label)

    tool = ("create_return_label", "Create a prepaid return label (RMA) for an order.", ReturnLabelArgs, create_return_label)
    config, tools = desk_with_agent("returns", RETURNS, tool)
    return config, tools, labels


async def converse(tmp_path, messages):
    config, tools, labels = returns_desk()
    return await converse_on(tmp_path, config, tools, messages), labels


async def test_routed_to_returns_and_the_label_is_made_from_the_order_given(tmp_path):
    turns, labels = await converse(tmp_path, ["hi, the blender from order ORD-5521 arrived broken, I need to send it back"])
    items, active = turns[0]
    assert handoffs(items) == ["triage>returns"]
    [call] = calls(items, "create_return_label")
    assert call.arguments["order_id"] == "ORD-5521" and "broken" in call.arguments["reason"]
    assert active == "returns" and labels[0]["order_id"] == "ORD-5521"
    # The reply reports the tool's result, not an article about something else.
    assert "RMA-0001" in replies(items) and "password" not in replies(items).lower()


async def test_asks_for_the_missing_parameter_then_calls_the_tool(tmp_path):
    turns, labels = await converse(tmp_path, ["I need an RMA, the device I got is the wrong model", "sure, it's order ORD-77"])
    first, active = turns[0]
    assert active == "returns" and not calls(first, "create_return_label")
    assert "order number" in replies(first).lower()  # it asks for what the tool needs
    second, _ = turns[1]
    [call] = calls(second, "create_return_label")
    assert call.arguments["order_id"] == "ORD-77" and "wrong model" in call.arguments["reason"]
    assert len(labels) == 1


async def test_a_request_outside_its_description_goes_back_to_triage(tmp_path):
    turns, _ = await converse(
        tmp_path, ["please send me a return label for order ORD-900, it arrived damaged", "also, I was charged twice, dana@example.com"]
    )
    second, active = turns[1]
    assert handoffs(second) == ["returns>triage", "triage>billing"]
    assert active == "billing" and calls(second, "find_charges")
    assert not calls(second, "create_return_label")


async def test_a_tool_error_is_reported_not_papered_over(tmp_path):
    turns, labels = await converse(tmp_path, ["I want to return order ORD-404, it's broken"])
    items, active = turns[0]
    results = [i for i in items if isinstance(i, ToolResult) and i.name == "create_return_label"]
    assert results and results[0].is_error and not labels
    said = replies(items).lower()
    assert "no order ord-404" in said and "done" not in said  # the result decides the reply
    assert active == "returns"
