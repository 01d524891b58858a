import pytest

from supportdesk.config import Price
from supportdesk.engine.protocol import Usage
from supportdesk.items import Message, ToolCall
from supportdesk.engine.pricing import cost, usage_by_model


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


def test_session_cost_prices_each_agent_at_its_own_model(test_desk):
    from supportdesk.config import Price
    from supportdesk.engine.pricing import session_cost

    test_desk.model.model = "small"
    test_desk.agents["senior"].model = "big"
    test_desk.model.prices = {
        "small": Price(input_per_million=1.0, output_per_million=2.0),
        "big": Price(input_per_million=10.0, output_per_million=20.0),
    }
    per_agent = {
        "billing": {"input_tokens": 1_000_000, "output_tokens": 500_000},
        "senior": {"input_tokens": 100_000, "output_tokens": 10_000},
    }
    assert session_cost(per_agent, test_desk) == pytest.approx(1.0 + 1.0 + 1.0 + 0.2)
    test_desk.model.prices = {}
    assert session_cost(per_agent, test_desk) is None
