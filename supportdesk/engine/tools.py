"""The tool mechanism: a function with a pydantic argument model, what it does and its limits
declared with it, and a policy check.

Policy and the declared limits run inside the tool call, before the function, so no prompt,
model or customer can talk an agent past them. The desk's actual tools live in `supportdesk.tools`.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from decimal import Decimal
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from supportdesk.config import ToolLimits
from supportdesk.engine.confirmation import asks_for_by_name
from supportdesk.engine.services import Services
from supportdesk.engine.protocol import ToolSpec
from supportdesk.items import Notice, ToolResult, pending_text
from supportdesk.text import money

if TYPE_CHECKING:
    from supportdesk.config import AgentConfig, DeskConfig


class PolicyDenied(Exception):
    """The tool refuses this call under the desk's policy (the reason goes to the model)."""


class ApprovalRequired(Exception):
    """The call may go ahead only once staff approve it."""


@dataclass
class ToolContext:
    session_id: str
    call_id: str
    agent: AgentConfig
    desk: DeskConfig
    context: dict[str, Any]
    # What the desk wires in for tools to act on (the customer data).
    services: Services | None = None
    # True when staff granted an approval for this very call.
    approved: bool = False
    # What a side-effecting tool's data layer records the act under, so it happens once: made
    # by the runner from the session and the turn, never from the model's call id (a model
    # resuming a turn after a crash makes up new ids). Opaque to the tools.
    idempotency_key: str = ""
    # Everything the customer wrote in this session, read from the log when a policy asks
    # (`tools.common.require_named_account`): the one text whose account a tool may act on can
    # be taken from. The model's words and the shared context (which models write) cannot vouch
    # for it. None outside a desk's runner: such a policy then refuses.
    customer_words: Callable[[], Awaitable[str]] | None = None
    # The called tool's limits on this desk (`Tool.limits_on`): set by the tool's own check
    # and call (`Tool.check`, `Tool.invoke`) for its policy and function to read.
    tool_limits: ToolLimits | None = None

    @property
    def limits(self) -> ToolLimits:
        """The called tool's limits on this desk; read inside a tool's policy or function."""
        if self.tool_limits is None:
            raise RuntimeError("a tool's limits are read inside its call (Tool.check or Tool.invoke)")
        return self.tool_limits


@dataclass
class ToolOutput:
    output: Any
    is_error: bool = False
    # Shared-context writes that the tool makes (key -> value; None clears).
    context: dict[str, Any] = field(default_factory=dict)
    # Notices the tool wants in the log (a request for a human, say).
    notices: list[Notice] = field(default_factory=list)
    # Set when the policy asked for staff approval.
    approval_reason: str | None = None

    @classmethod
    def held(cls, reason: str, approval_reason: str | None = None) -> ToolOutput:
        """The call was not made: it waits for staff approval (the agent reads why)."""
        return cls(pending_text(reason), approval_reason=approval_reason if approval_reason is not None else reason)

    def text(self) -> str:
        if isinstance(self.output, str):
            return self.output
        return json.dumps(self.output, ensure_ascii=False, default=str)

    def result(self, call_id: str, name: str, agent: str) -> ToolResult:
        """This output as the call's result item; a call held for approval says so as data."""
        return ToolResult(
            call_id=call_id, name=name, output=self.text(), is_error=self.is_error, agent=agent,
            awaits_approval=self.approval_reason is not None,
        )


A = TypeVar("A", bound=BaseModel)


def check_arguments(name: str, model: type[A], arguments: dict[str, Any] | None) -> tuple[A | None, str | None]:
    """A call's arguments validated against its model: (args, None), or (None, what is wrong)
    in words the model reads as the call's error result and can correct."""
    if arguments is None:
        return None, f"{name}: arguments must be a JSON object"
    try:
        return model.model_validate(arguments), None
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors())
        return None, f"{name}: invalid arguments: {problems}"


class TransferArgs(BaseModel):
    """The arguments of a `transfer_to_<agent>` call (models/history.py describes them to the model)."""

    # Built on the first call's check, not at import: the TUI imports the runner before its first
    # page and needs no validator until a turn runs.
    model_config = ConfigDict(defer_build=True)

    reason: str = Field(min_length=1)
    context: dict[str, Any] | None = None


# The argument a money tool's calls carry their amount in, in the charge's currency: what the
# desk's figures count (store/figure_summary.py and its SQL read it by this name).
MONEY_ARGUMENT = "amount"

# What a tool does, declared once in its definition: policy (the confirmation gate), figures
# and the dashboard read it. "reads" looks things up and changes nothing; "money" moves money
# to or from the customer (its calls carry `amount`); "account" changes the customer's account.
Effect = Literal["reads", "money", "account", "desk"]
# Who must say yes before the call runs: "customer" (the runner's gate makes an offer and runs
# the call only on the customer's yes to it, engine/confirmation.py), "request" (for an action
# that changes nothing by itself, a reset link say: the call runs at once when the customer's
# latest messages asked for it, as the desk reads them (`Tool.requested_in`), else it waits for
# a yes like "customer"; never for money: a money tool marked so waits for a yes), or "none".
Confirm = Literal["customer", "request", "none"]
# How the desk recognises a customer's message that asks for a tool's action (a confirm =
# "request" tool's own reader; without one, `asks_for_by_name`).
Asked = Callable[[str], bool]
# The action and its amount / plan / target in words the customer can check ("refund $29.99 on
# charge CH-9004"), from the call's validated arguments.
Describe = Callable[[Any], str]
# What a model's own question must name to stand as the offer of a call (issue 33 §2: the engine
# guarantees the offer states the action and its amount / plan / target): groups of words, each
# group present in one of its spellings ((("refund", "refunded"), ("$29.99",)) for a refund).
Checks = Callable[[Any], Sequence[Sequence[str]]]


# A check made before the tool runs: raises PolicyDenied or ApprovalRequired; may be async
# (a check that reads the business data or the log).
Policy = Callable[[ToolContext, Any], "None | Awaitable[None]"]
Runner = Callable[[ToolContext, Any], "ToolOutput | Any | Awaitable[ToolOutput | Any]"]


# The limits on a money tool's `amount`: the engine enforces them in every call (`Tool.check`).
AMOUNT_LIMITS = ("limit_level1", "limit_level2", "approval_threshold", "limit_per_conversation", "limit_per_customer")


@dataclass
class Tool:
    name: str
    description: str
    args: type[BaseModel]
    run: Runner
    policy: Policy | None = None
    effect: Effect = "reads"
    confirm: Confirm = "none"
    describe: Describe | None = None
    checks: Checks | None = None
    # For confirm = "request": whether a customer's message asks for this action.
    asked: Asked | None = None
    # What the tool's calls may do without staff, declared with it (config.ToolLimits: the keys
    # it has and their values); the desk file overrides the values (`limits_on`).
    limits: ToolLimits = field(default_factory=ToolLimits)
    # What one call is called where a limit stops it: "a refund" -> "a refund of $60.00 is above
    # the $50.00 limit for level-1 agents" (default: the tool's name).
    what: str = ""

    def __post_init__(self) -> None:
        if self.effect == "reads" and self.confirm != "none":
            raise ValueError(f"tool {self.name!r} only reads: it never needs a confirmation")
        if self.effect == "money" and self.confirm == "request":
            raise ValueError(f"tool {self.name!r} moves money: a request alone never runs it; declare confirm=\"customer\"")
        amount_limits = [key for key in self.limits.declared() if key in AMOUNT_LIMITS]
        if amount_limits and self.effect != "money":
            raise ValueError(f"tool {self.name!r} limits amounts ({', '.join(amount_limits)}): declare it effect=\"money\"")
        if self.limits.limit_per_customer is not None and self.limits.period_days is None:
            raise ValueError(f"tool {self.name!r} limits the money per customer: declare the period_days it counts over")
        if self.effect == "money":
            # The desk's figures count a money call at its `amount`, in the charge's currency
            # (store/figures.py): a money tool has that argument, a number, and nothing else of
            # that name (a percentage, say) would be counted as money.
            amount = self.args.model_fields.get(MONEY_ARGUMENT)
            if amount is None or amount.annotation not in (int, float, Decimal):
                raise ValueError(f"tool {self.name!r} moves money: its arguments need {MONEY_ARGUMENT!r}, a number in the charge's currency")

    def limits_on(self, desk: DeskConfig | None) -> ToolLimits:
        """This tool's limits on this desk: the one read of them (its policy and function read
        `ctx.limits`, which is this; the engine's amount check, the models through `spec_for`).
        The declaration, with the desk file's `[policy]` and `[tools.NAME]` values over it."""
        return desk.limits_of(self.name, self.limits) if desk is not None else self.limits

    def check_amount(self, limits: ToolLimits, level: int, args: BaseModel) -> None:
        """The declared amount limits of a money tool's call by an agent of this level: above
        the level's limit, PolicyDenied; at or above the approval threshold, ApprovalRequired.
        (The totals are checked where the money is written: tools/common.py `money_limits`.)"""
        amount = getattr(args, MONEY_ARGUMENT, None) if self.effect == "money" else None
        if not isinstance(amount, int | float | Decimal) or isinstance(amount, bool):
            return
        what = f"{self.what or self.name} of {money(float(amount))}"
        limit = limits.per_call(level)
        if limit is not None and amount > limit + 1e-9:
            raise PolicyDenied(
                f"{what} is above the {money(limit)} limit for level-{level} agents"
                + ("; escalate to a senior agent" if level < 2 else "")
            )
        threshold = limits.approval_threshold
        if threshold is not None and amount >= threshold - 1e-9:
            raise ApprovalRequired(f"{what} is at or above the {money(threshold)} approval threshold")

    def needs_confirmation(self, desk: DeskConfig | None = None) -> bool:
        """Whether a call must wait for the customer's yes on this desk (`[confirm]` in the desk
        file overrides the definition; a tool that only reads never waits)."""
        return self.confirm_kind(desk) != "none"

    def confirm_kind(self, desk: DeskConfig | None = None) -> Confirm:
        """Who must say yes on this desk: the desk file's `[confirm]` over the definition; a
        tool that only reads never waits, and a money tool is never run on a request alone
        (a desk that says "request" for one gets "customer")."""
        if self.effect == "reads":
            return "none"
        said = desk.confirm.get(self.name) if desk is not None else None
        kind: Confirm = said or self.confirm
        return "customer" if kind == "request" and self.effect == "money" else kind

    def requested_in(self, text: str) -> bool:
        """Whether a customer's message asks for this tool's action (confirm = "request"): its
        own reader when the definition gives one, else `asks_for_by_name`."""
        return self.asked(text) if self.asked is not None else asks_for_by_name(self.name, text)

    def action_words(self, arguments: dict[str, Any] | None) -> str | None:
        """The call as the customer is asked to confirm it, or None when its arguments are invalid."""
        args, problem = check_arguments(self.name, self.args, arguments)
        if problem is not None or args is None:
            return None
        if self.describe is not None:
            return self.describe(args)
        shown = ", ".join(f"{k} {v}" for k, v in args.model_dump(exclude_none=True).items())
        return f"{self.name.replace('_', ' ')} ({shown})" if shown else self.name.replace("_", " ")

    def offer_terms(self, arguments: dict[str, Any] | None) -> list[tuple[str, ...]]:
        """What a question must name to be this call's offer (`checks`; without them, the
        tool's verb and every argument's value); [] when nothing can be checked (then only the
        engine's words ask)."""
        args, problem = check_arguments(self.name, self.args, arguments)
        if problem is not None or args is None:
            return []
        if self.checks is not None:
            return [tuple(group) for group in self.checks(args) if group]
        # The action: the tool's verb ("cancel_reservation" -> cancel), then every value.
        verb = self.name.split("_")[0]
        out: list[tuple[str, ...]] = [(verb, f"{verb}s", f"{verb}ed", f"{verb}d", f"{verb}ing")]
        for value in args.model_dump(exclude_none=True).values():
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                return []  # a value no sentence states plainly: the engine's words ask
            out.append((str(value), f"{value:.2f}") if isinstance(value, float) else (str(value),))
        return out

    def spec_for(self, desk: DeskConfig | None = None, asked: bool = False) -> ToolSpec:
        """What a model is told of this tool on this desk (whether its calls wait for a yes;
        `asked`: the customer's latest messages asked for it, so a confirm = "request" call
        runs at once)."""
        kind = self.confirm_kind(desk)
        waits = kind == "customer" or (kind == "request" and not asked)
        return ToolSpec(self.name, self.description, self.args, confirm=waits, limits=self.limits_on(desk))

    async def check(self, ctx: ToolContext, arguments: dict[str, Any] | None) -> tuple[BaseModel | None, ToolOutput | None]:
        """Validate and check policy (the tool's own, then its declared amount limits), running
        nothing: (args, None) when the call may run, (args, pending output) when it waits for
        staff, (None, error output) when refused. The confirmation gate asks this before it
        offers a call: a call the desk would refuse is never put to the customer."""
        return await self._check(self._with_limits(ctx), arguments)

    async def _check(self, ctx: ToolContext, arguments: dict[str, Any] | None) -> tuple[BaseModel | None, ToolOutput | None]:
        """`check`, in a context that has this tool's limits on the desk already (`_with_limits`)."""
        args, problem = check_arguments(self.name, self.args, arguments)
        if problem is not None or args is None:
            return None, ToolOutput(problem or f"{self.name}: invalid arguments", is_error=True)
        waits: str | None = None  # why staff must approve, once every refusal is ruled out
        try:
            if self.policy is not None:  # the tool's own checks first: a refused call is not put to staff
                try:
                    checked = self.policy(ctx, args)
                    if inspect.isawaitable(checked):
                        await checked
                except ApprovalRequired as exc:
                    waits = str(exc)
            try:
                self.check_amount(ctx.limits, ctx.agent.level, args)
            except ApprovalRequired as exc:
                waits = waits or str(exc)
        except PolicyDenied as exc:
            return None, ToolOutput(f"refused by policy: {exc}", is_error=True)
        except Exception as exc:  # a check that could not be made: nothing is done
            return None, ToolOutput(f"{self.name} failed: {type(exc).__name__}: {exc}", is_error=True)
        if waits is not None and not ctx.approved:
            return args, ToolOutput.held(waits)
        return args, None

    def _with_limits(self, ctx: ToolContext) -> ToolContext:
        """The context of a call of this tool: with its limits on the desk."""
        return dataclasses.replace(ctx, tool_limits=self.limits_on(ctx.desk))

    async def invoke(self, ctx: ToolContext, arguments: dict[str, Any] | None) -> ToolOutput:
        """Validate, check policy, run. Never raises: every failure is an error output."""
        ctx = self._with_limits(ctx)  # (once: the checks and the run see the same limits)
        args, held = await self._check(ctx, arguments)
        if held is not None or args is None:
            return held or ToolOutput(f"{self.name}: invalid arguments", is_error=True)
        try:
            result = self.run(ctx, args)
            if inspect.isawaitable(result):
                result = await result
        except PolicyDenied as exc:
            return ToolOutput(f"refused by policy: {exc}", is_error=True)
        except Exception as exc:  # a broken tool is an error result, never a crashed turn
            return ToolOutput(f"{self.name} failed: {type(exc).__name__}: {exc}", is_error=True)
        return result if isinstance(result, ToolOutput) else ToolOutput(result)


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    def add(self, tool: Tool) -> Tool:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} registered twice")
        self._tools[tool.name] = tool
        return tool

    def tool(
        self,
        name: str,
        description: str,
        args: type[BaseModel],
        policy: Policy | None = None,
        *,
        effect: Effect = "reads",
        confirm: Confirm = "none",
        describe: Describe | None = None,
        checks: Checks | None = None,
        asked: Asked | None = None,
        limits: ToolLimits | None = None,
        what: str = "",
    ) -> Callable[[Runner], Runner]:
        """Decorator: register a function as a tool, with what it does and its limits declared."""

        def register(fn: Runner) -> Runner:
            tool = Tool(
                name, description, args, fn, policy, effect=effect, confirm=confirm, describe=describe, checks=checks,
                asked=asked, limits=limits if limits is not None else ToolLimits(), what=what,
            )
            self.add(tool)
            return fn

        return register

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return sorted(self._tools)

    def declared_limits(self) -> dict[str, list[str]]:
        """Each tool's name with the limit keys it declares: what a desk file's `[tools.NAME]`
        may set (the `tool_names` that config.parse_desk checks a desk file against)."""
        return {name: tool.limits.declared() for name, tool in sorted(self._tools.items())}

    def with_effect(self, *effects: Effect) -> list[str]:
        """The names of the tools declared with one of these effects (figures, the dashboard)."""
        return sorted(name for name, tool in self._tools.items() if tool.effect in effects)

    def specs(
        self, names: list[str], desk: DeskConfig | None = None, asked: Callable[[Tool], bool] | None = None
    ) -> list[ToolSpec]:
        """What a model is told of these tools, each marked when its calls wait for the
        customer's yes on this desk (the tool's own declaration when no desk is given).
        `asked`: whether the customer's latest messages asked for a tool's action (read only
        for a confirm = "request" tool)."""
        return [
            tool.spec_for(desk, asked=asked is not None and tool.confirm_kind(desk) == "request" and asked(tool))
            for n in names
            if (tool := self._tools.get(n)) is not None
        ]
