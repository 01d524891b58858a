"""Token usage into money, with the optional `[model.prices]` table of the desk file.

Pure functions over what the items already hold: the runner stores each step's usage in the
item's meta (`usage`), and the OpenAI-compatible provider adds the model that was asked
(`model`), so a session's cost is a fold over its items like every other projection.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from supportdesk.config import DeskConfig, Price

if TYPE_CHECKING:
    from supportdesk.engine.protocol import Usage

# The chat screen imports this module for a session's cost; the model protocol (with its step,
# action and provider types) loads only when a cost is summed, off a new session's first page.


def usage_by_model(items: Iterable[Any], default_model: str = "") -> dict[str, Usage]:
    """Sum the usage recorded in items' meta per model. A sum is `reported` only when every
    step in it was reported by the server (one estimate makes the whole figure an estimate)."""
    from supportdesk.engine.protocol import Usage

    totals: dict[str, Usage] = {}
    for item in items:
        meta = getattr(item, "meta", None) or {}
        usage = meta.get("usage")
        if not isinstance(usage, Mapping):
            continue
        model = str(meta.get("model") or default_model)
        total = totals.setdefault(model, Usage(0, 0, reported=True))
        total.input_tokens += int(usage.get("input_tokens") or 0)
        total.output_tokens += int(usage.get("output_tokens") or 0)
        total.reported = total.reported and bool(usage.get("reported", True))
    return totals


def cost(usage: Mapping[str, Usage], prices: Mapping[str, Price]) -> float | None:
    """Cost of the usage at the configured per-million-token prices.

    None when no model in `usage` has a price (the TUI then shows tokens only); models
    without a price add nothing rather than guessing.
    """
    total = 0.0
    priced = False
    for model, used in usage.items():
        price = prices.get(model)
        if price is None:
            continue
        priced = True
        total += used.input_tokens * price.input_per_million / 1_000_000
        total += used.output_tokens * price.output_per_million / 1_000_000
    return total if priced else None


def session_cost(per_agent: Mapping[str, Mapping[str, int]], config: DeskConfig) -> float | None:
    """Cost of a session from its per-agent token totals (`SessionStore.usage_totals`),
    each agent priced at its own model (its `model` override, else the desk's)."""
    from supportdesk.engine.protocol import Usage

    by_model: dict[str, Usage] = {}
    for name, used in per_agent.items():
        agent = config.agents.get(name)
        model = (agent.model if agent is not None else None) or config.model.model or ""
        total = by_model.setdefault(model, Usage(0, 0, reported=True))
        total.input_tokens += int(used.get("input_tokens") or 0)
        total.output_tokens += int(used.get("output_tokens") or 0)
    return cost(by_model, config.model.prices)
