"""What a tool is (moves money, needs the customer's yes) is declared once, on the tool, and
the readers below the tools read the one checked copy (issue 36 item 1): the figures' fold and
SQL, `stats` and the dashboard name no money tool of their own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pydantic import BaseModel

from supportdesk.engine.tools import MONEY_ARGUMENT, Tool
from supportdesk.reports.stats import money_tools
from supportdesk.store.figures import MONEY_TOOLS

ROOT = Path(__file__).resolve().parents[1]


class Amount(BaseModel):
    amount: float


class Percent(BaseModel):
    percent: float


class Words(BaseModel):
    amount: str


def test_a_money_tool_carries_its_amount_as_a_number_the_figures_count():
    Tool("refund", "Refund", Amount, lambda ctx, args: None, effect="money", confirm="customer")
    for args in (Percent, Words):
        with pytest.raises(ValueError, match=f"moves money: its arguments need '{MONEY_ARGUMENT}'"):
            Tool("discount", "Discount", args, lambda ctx, args: None, effect="money", confirm="customer")
    Tool("discount", "Discount", Percent, lambda ctx, args: None, effect="account", confirm="customer")


def test_the_one_copy_below_the_tools_is_the_tools_declaration():
    from supportdesk.tools import registry

    assert set(MONEY_TOOLS) == set(registry.with_effect("money"))
    for name in MONEY_TOOLS:
        assert MONEY_ARGUMENT in registry.get(name).args.model_fields  # type: ignore[union-attr]


def test_the_dashboard_orders_and_names_money_tools_from_the_declaration():
    assert money_tools(["zz_custom", *reversed(MONEY_TOOLS)]) == [*MONEY_TOOLS.items(), ("zz_custom", None)]


def test_no_reader_above_the_store_names_a_money_tool_itself():
    """The TUI and `stats` read `store/figures.MONEY_TOOLS` (through stats.money_tools)."""
    found = []
    for path in [*sorted((ROOT / "supportdesk" / "tui").rglob("*.py")), ROOT / "supportdesk" / "reports" / "stats.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in MONEY_TOOLS:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []
