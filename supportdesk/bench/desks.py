"""The desks a tau2 domain is measured with: one agent, or specialists with handoffs.

Both are written as agents.toml text, so a generated desk can be saved, edited and passed back
with `--desk FILE`; either way it is validated by the same `parse_desk` as any desk file,
against the domain's tool names.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from supportdesk.config import ConfigError, DeskConfig, ModelSettings, parse_desk
from supportdesk.bench.tau2env import BenchError

# Who does what in the split desk. Tools tau2 marks as reads go to every agent (any of them may
# need to look an order up); each write goes to the specialist named here; writes not named
# (another domain's) go to a general specialist.
SPECIALISTS: dict[str, dict[str, tuple[str, str, list[str]]]] = {
    "retail": {
        "orders": (
            "Pending orders",
            "Changes and cancellations of orders that have not shipped yet, and the customer's address.",
            [
                "cancel_pending_order",
                "modify_pending_order_address",
                "modify_pending_order_items",
                "modify_pending_order_payment",
                "modify_user_address",
            ],
        ),
        "returns": (
            "Returns and exchanges",
            "Returns, exchanges and refunds of delivered orders.",
            ["return_delivered_order_items", "exchange_delivered_order_items"],
        ),
    },
    "airline": {
        "bookings": (
            "New bookings",
            "New reservations and travel certificates.",
            ["book_reservation", "send_certificate"],
        ),
        "changes": (
            "Changes and cancellations",
            "Changes to existing reservations (flights, cabin, baggage, passengers) and cancellations.",
            [
                "update_reservation_flights",
                "update_reservation_baggages",
                "update_reservation_passengers",
                "cancel_reservation",
            ],
        ),
    },
    "telecom": {
        "lines": (
            "Lines and roaming",
            "Suspending and resuming lines, and roaming on a line.",
            ["suspend_line", "resume_line", "enable_roaming", "disable_roaming"],
        ),
        "billing": (
            "Billing and data",
            "Payment requests for bills, and data refuels.",
            ["send_payment_request", "refuel_data"],
        ),
    },
}
GENERAL = ("specialist", "Specialist", "Every change to the customer's account the triage agent cannot make.")

# A benchmark task can need many tool calls before one reply; the demo desk's limits are for chat.
LIMITS = {
    "max_steps_per_message": 60,
    "max_handoffs_per_message": 16,
    "pingpong_window": 12,
    "pingpong_min_unique": 2,
}

TRIAGE_ROLE = (
    "You are the first agent the customer meets. Authenticate the customer and look up what they "
    "ask about; hand the conversation to the specialist whose tools can make the change they want."
)


def _toml(value: object) -> str:
    # JSON strings and lists of strings are valid TOML basic strings and arrays.
    return json.dumps(value, ensure_ascii=False)


def _model_table(model: ModelSettings) -> list[str]:
    lines = ["[model]"]
    for field in dataclasses.fields(model):
        value = getattr(model, field.name)
        if field.name != "prices" and value != field.default:
            lines.append(f"{field.name} = {_toml(value)}")
    return lines


def _agent(name: str, title: str, description: str, instructions: str, tools: list[str], handoffs: list[str]) -> list[str]:
    return [
        f"[agents.{name}]",
        f"title = {_toml(title)}",
        f"description = {_toml(description)}",
        f"instructions = {_toml(instructions)}",
        f"tools = {_toml(tools)}",
        f"handoffs = {_toml(handoffs)}",
        "",
    ]


def _header(domain: str, kind: str, model: ModelSettings) -> list[str]:
    return [
        f"# A {kind} desk for tau2-bench's {domain} domain, written by `supportdesk bench tau2`.",
        "# Edit it and pass it back with --desk FILE.",
        "[desk]",
        f"name = {_toml(f'tau2 {domain} ({kind})')}",
        f"entry = {_toml('triage' if kind == 'split' else 'agent')}",
        f"fallback = {_toml('triage' if kind == 'split' else 'agent')}",
        "",
        "[desk.limits]",
        *(f"{k} = {v}" for k, v in LIMITS.items()),
        "",
        *_model_table(model),
        "",
    ]


def confirm_table(ungated: list[str]) -> list[str]:
    """The desk file's `[confirm]` table switching the customer's yes off for these tools (the
    domain's writes wait for it by default: bench/tools.py); nothing when none are named."""
    if not ungated:
        return []
    return [
        "# The confirmation gate is off for these writes (--no-gate): they run without the customer's yes.",
        "[confirm]",
        *(f"{name} = {_toml('none')}" for name in sorted(ungated)),
        "",
    ]


def single_desk_text(
    domain: str, policy: str, tool_names: list[str], model: ModelSettings, ungated: list[str] | None = None
) -> str:
    lines = _header(domain, "single", model)
    lines += _agent("agent", "Agent", f"Handles every {domain} request.", policy, sorted(tool_names), [])
    lines += confirm_table(ungated or [])
    return "\n".join(lines)


def split_desk_text(
    domain: str, policy: str, kinds: dict[str, str], model: ModelSettings, ungated: list[str] | None = None
) -> str:
    specialists = dict(SPECIALISTS.get(domain, {}))
    assigned = {tool for _, _, tools in specialists.values() for tool in tools}
    shared = sorted(t for t, kind in kinds.items() if kind != "write")
    leftover = sorted(t for t, kind in kinds.items() if kind == "write" and t not in assigned)
    if leftover:
        specialists[GENERAL[0]] = (GENERAL[1], GENERAL[2], leftover)
    names = list(specialists)
    lines = _header(domain, "split", model)
    lines += _agent(
        "triage", "Triage", "Authenticates the customer and looks things up.", f"{TRIAGE_ROLE}\n\n{policy}", shared, names
    )
    for name, (title, description, tools) in specialists.items():
        mine = sorted(set(shared) | {t for t in tools if t in kinds})
        role = f"You are the {title} specialist: {description} Hand anything else back to the agent whose tools fit it."
        others = ["triage"] + [n for n in names if n != name]
        lines += _agent(name, title, description, f"{role}\n\n{policy}", mine, others)
    lines += confirm_table(ungated or [])
    return "\n".join(lines)


def parse(text: str, source: str, tool_names: list[str]) -> DeskConfig:
    try:
        return parse_desk(text, source, tool_names)
    except ConfigError as exc:
        raise BenchError(exc.problems[0] if len(exc.problems) == 1 else "; ".join(exc.problems)) from None


def load_file(path: str, tool_names: list[str]) -> DeskConfig:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BenchError(f"{path}: no such desk file; pass --desk single, split or an agents.toml") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchError(f"{path}: cannot be read: {exc}") from None
    return parse(text, path, tool_names)
