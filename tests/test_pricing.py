import pytest

from supportdesk.config import Price
from supportdesk.engine.protocol import Usage
from supportdesk.items import Message, ToolCall
from supportdesk.models.pricing import cost, usage_by_model


def test_usage_is_summed_per_model_and_estimates_taint_the_sum():
    items = [
        Message(role="customer", text="hi"),
        ToolCall(call_id="c", name="t", meta={"model": "small", "usage": {"input_tokens": 100, "output_tokens": 10, "reported": True}}),
        Message(role="agent", text="a", meta={"model": "small", "usage": {"input_tokens": 150, "output_tokens": 20, "reported": False}}),
        Message(role="agent", text="b", meta={"model": "big", "usage": {"input_tokens": 1000, "output_tokens": 50, "reported": True}}),
        Message(role="agent", text="c", meta={"usage": {"input_tokens": 7, "output_tokens": 3, "reported": True}}),
    ]
    totals = usage_by_model(items, default_model="offline")
    assert totals["small"] == Usage(250, 30, reported=False)
    assert totals["big"] == Usage(1000, 50, reported=True)
    assert totals["offline"] == Usage(7, 3, reported=True)


def test_cost_uses_prices_per_million_and_skips_unpriced_models():
    usage = {"small": Usage(2_000_000, 500_000), "free": Usage(10, 10)}
    prices = {"small": Price(input_per_million=0.15, output_per_million=0.60)}
    assert cost(usage, prices) == pytest.approx(0.60)
    assert cost(usage, {}) is None
    assert cost({}, prices) is None
