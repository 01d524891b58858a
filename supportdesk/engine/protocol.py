"""The one protocol every model provider speaks, and the actions it may return.

The runner cannot tell the embedded offline model from a real LLM server: both get a
`StepRequest` and stream back `TextDelta`s followed by exactly one action.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from supportdesk.config import AgentConfig, DeskConfig, ToolLimits
from supportdesk.items import HandoffKind, Item

if TYPE_CHECKING:  # a tool's argument model; pydantic itself loads with the tools, after the first page
    from pydantic import BaseModel


@dataclass(frozen=True)
class ToolSpec:
    """What a model is told about one tool it may call."""

    name: str
    description: str
    args_model: type[BaseModel]
    # Its calls wait for the customer's yes on this desk (the runner's gate, issue 33): a call
    # the model makes is offered, not run, and the model's question in the same step is the
    # offer's when it names the action and its amount / plan / target.
    confirm: bool = False
    # Its limits on this desk (engine/tools.py `Tool.limits_on`): a model that reasons about
    # them (the offline model passes a refund above its level's limit up) reads them here.
    limits: ToolLimits = field(default_factory=ToolLimits)

    def json_schema(self) -> dict[str, Any]:
        return self.args_model.model_json_schema()


@dataclass
class StepRequest:
    """What a model is asked for one step: the agent, its tools and handoffs, and what it sees."""

    session_id: str
    agent: AgentConfig
    desk: DeskConfig
    tools: list[ToolSpec]
    handoff_targets: list[AgentConfig]
    # The session log as the agent sees it (oldest first). Long sessions send the most
    # recent window; the shared context below carries what was learned before it.
    history: Sequence[Item]
    # The shared context as of now: key -> value.
    context: dict[str, Any]


@dataclass
class Usage:
    """Tokens a step used."""

    input_tokens: int = 0
    output_tokens: int = 0
    # False when the server gave no usage and the figures are our estimate.
    reported: bool = True

    def as_meta(self) -> dict[str, Any]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens, "reported": self.reported}


@dataclass
class TextDelta:
    """A piece of a reply as it streams."""

    text: str


@dataclass
class RequestedCall:
    """One tool call a model asked for."""

    call_id: str
    name: str
    # Parsed arguments; None when the model sent something that is not a JSON object.
    arguments: dict[str, Any] | None
    raw_arguments: str = ""
    # The agent this call is passed up to (a handoff target whose tool limit covers it, such as
    # a refund above this agent's): the call is only offered, on that agent's behalf, and on the
    # customer's yes the conversation passes to it and it runs the call. Never run by the caller.
    for_agent: str = ""


@dataclass
class _Action:
    """What every action of a step carries besides itself."""

    # Shared-context writes the agent makes along with the action (key -> value; None clears).
    context: dict[str, Any] = field(default_factory=dict, kw_only=True)
    usage: Usage | None = field(default=None, kw_only=True)
    # Agent-private bookkeeping stored in the items' meta (routing confidence ...).
    meta: dict[str, Any] = field(default_factory=dict, kw_only=True)


@dataclass
class Answer(_Action):
    """Reply to the customer; ends the turn."""

    text: str


@dataclass
class CallTools(_Action):
    """Run these tools; the agent then takes another step with their results."""

    calls: list[RequestedCall]
    text: str = ""


@dataclass
class Transfer(_Action):
    """Hand the conversation to another agent, which continues the same turn."""

    to_agent: str
    reason: str
    handoff_kind: HandoffKind = "route"
    # An optional line to the customer before the handoff ("Let me bring in billing.").
    text: str = ""
    # The `transfer_to_<agent>` call this came from, when the model made one (HTTP providers):
    # the runner validates its arguments like a tool's and refuses a malformed one.
    call: RequestedCall | None = None


Action = Answer | CallTools | Transfer
ProviderErrorKind = Literal[
    "unreachable", "auth", "unknown_model", "rate_limited", "timeout", "bad_response", "error"
]


class ProviderError(Exception):
    """A model server failed in a way the user should be told about in plain words."""

    def __init__(self, kind: ProviderErrorKind, message: str):
        self.kind = kind
        self.message = message
        super().__init__(message)


@runtime_checkable
class ModelProvider(Protocol):
    name: str

    def stream(self, request: StepRequest) -> AsyncIterator[TextDelta | Action]:
        """Yield zero or more TextDeltas, then exactly one Action."""
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class ModelServer(Protocol):
    """A provider that reaches its model over the network, as `supportdesk doctor` sees it.

    Any provider that has these gets doctor's server, model and tool checks; a provider
    without them (the embedded model) has nothing to reach, so doctor checks nothing more."""

    def describe(self) -> str:
        """What it talks to, in a few words ("openai-compatible server at <url>")."""
        ...

    async def list_models(self) -> list[str]:
        """Model ids the server serves; ProviderError(unknown_model or bad_response) when it
        lists none, so doctor checks the configured model directly."""
        ...

    async def probe_tools(self, model: str) -> bool:
        """Ask for one tiny forced tool call; True when the model made one."""
        ...
