"""agents.toml -> validated settings, as plain dataclasses.

Every problem in a desk file becomes one line that names the file, the dotted key and
what would be valid, so `supportdesk config check` can print them all at once and the
app never shows a traceback for a typo.

The settings are stdlib dataclasses that pydantic validates (through a TypeAdapter built on the
first validation), not pydantic models: the TUI's start-up takes a desk it validated before from
its cache (load_desk(cached=True)), and then neither this module nor the cache imports pydantic,
which cost ~75 ms (cold) on the way to a session's first page. So the constraints and field
validators are metadata pydantic reads when it builds the validator (`supportdesk.records`:
`Annotated[int, Bounds(ge=0)]`, `Annotated[str, After(check)]`), and unknown keys are refused
by `__pydantic_config__`.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import os
import pickle
import tomllib
import typing
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from supportdesk.folders import cache_dir, config_dir
from supportdesk.records import FORBID_EXTRA, After, Bounds, SharedMethods, validate

if TYPE_CHECKING:
    from pydantic import ValidationError

DEFAULT_COLORS = ("#5fafff", "#ffaf5f", "#87d787", "#d787ff", "#ff8787", "#d7d75f")


class _Strict(SharedMethods):
    """The base of every table. Each is a dataclass, kw_only, so fields are named, as
    they were on pydantic models, and a required one may follow one with a default
    (AgentConfig.title); and eq=False, repr=False: SharedMethods' `__eq__`/`__repr__` serve them
    all (generating them per table, like a signature for a table without a docstring, was
    start-up time for nothing)."""

    # An unknown key in a desk file is a problem, not something silently ignored.
    __pydantic_config__ = FORBID_EXTRA


@dataclass(kw_only=True, eq=False, repr=False)
class Limits(_Strict):
    """`[desk.limits]`: when a turn stops (handoffs, steps, ping-pong, time)."""

    # The defaults let every limit fire: ping-pong needs `pingpong_window - 1` handoffs in a
    # turn, fewer than the handoff limit, and a turn of tool calls meets the step limit.
    max_handoffs_per_message: Annotated[int, Bounds(ge=0)] = 6
    max_steps_per_message: Annotated[int, Bounds(ge=1)] = 12
    # Ping-pong: among the last `pingpong_window` agents to hold the conversation in one
    # turn, fewer than `pingpong_min_unique` distinct ones means agents are bouncing.
    pingpong_window: Annotated[int, Bounds(ge=2)] = 4
    pingpong_min_unique: Annotated[int, Bounds(ge=1)] = 3
    # Longer than a model server's own request timeout (60 s by default), so a slow server
    # ends as a provider error staff can retry, not as a desk limit.
    step_timeout: Annotated[float, Bounds(gt=0)] = 90.0
    message_timeout: Annotated[float, Bounds(gt=0)] = 300.0


@dataclass(kw_only=True, eq=False, repr=False)
class HistorySettings(_Strict):
    """How much of the log one model call sees (`[desk.history]`, per agent `[agents.X.history]`).

    What falls out of the window is summarised into one system note (engine/history_window.py)."""

    max_items: Annotated[int, Bounds(ge=4)] = 400
    # A budget in estimated tokens (about four characters a token); None: items only.
    max_tokens: Annotated[int | None, Bounds(ge=64)] = None


@dataclass(kw_only=True, eq=False, repr=False)
class SlaSettings(_Strict):
    """`[desk.sla]`: how long a customer may wait, in seconds (None: no target). The clocks
    (`supportdesk/folds/sla.py`) run whether or not a target is set."""

    first_response: Annotated[float | None, Bounds(gt=0)] = None  # from the first customer message to any reply
    next_response: Annotated[float | None, Bounds(gt=0)] = None  # from each later customer message to a reply
    resolution: Annotated[float | None, Bounds(gt=0)] = None  # from the first customer message to resolved


@dataclass(kw_only=True, eq=False, repr=False)
class DeskSettings(_Strict):
    """`[desk]`: the desk's name, its entry and fallback agents, and its limits."""

    name: str = "Support desk"
    entry: str = "triage"
    fallback: str = "triage"
    limits: Limits = field(default_factory=Limits)
    history: HistorySettings = field(default_factory=HistorySettings)
    sla: SlaSettings = field(default_factory=SlaSettings)


@dataclass(kw_only=True, eq=False, repr=False)
class GuardrailSettings(_Strict):
    """The shipped guardrail hooks (supportdesk/hooks/guardrails.py): local checks, no model call."""

    relevance: bool = False  # questions no software support desk answers (weather, poems ...)
    injection: bool = False  # attempts to talk an agent out of its instructions


@dataclass(kw_only=True, eq=False, repr=False)
class HooksSettings(_Strict):
    """`[hooks]`: the hooks the desk loads, and the shipped guardrails' settings."""

    # "module:object" names of hooks (engine/hooks.py) to run, in order.
    enabled: list[str] = field(default_factory=list)
    guardrails: GuardrailSettings = field(default_factory=GuardrailSettings)


@dataclass(kw_only=True, eq=False, repr=False)
class TracingSettings(_Strict):
    """OpenTelemetry spans (engine/tracing.py); also on when OTEL_EXPORTER_OTLP_ENDPOINT is set."""

    enabled: bool = False
    # OTLP/HTTP endpoint; default: $OTEL_EXPORTER_OTLP_ENDPOINT, else the collector on 127.0.0.1.
    endpoint: str | None = None
    service_name: str = "supportdesk"


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class ToolLimits(_Strict):
    """What one tool's calls may do without staff. A tool declares its own with its definition
    (engine/tools.py `Tool.limits`: the keys it has, and their values); a desk file sets other
    values per tool in `[tools.NAME]` (and, for the two shipped money tools, in the older
    `[policy]` keys). `Tool.limits_on(desk)` is the one read of the result: the engine's amount
    check, the tools' policies (`ctx.limits`), the models (`ToolSpec.limits`) and `config check`.
    A new tool's limits need nothing here: only a new *kind* of limit is a field below.

    Unset (None): the tool has no such limit. The amount limits apply to a money tool's
    `amount` (engine/tools.py MONEY_ARGUMENT), and the engine enforces them in every call of a
    tool that declares them: above the agent's level's limit a call is refused; at or above the
    approval threshold it waits for staff. The totals are checked by the business data in the
    write's own transaction (the tool passes them: tools/common.py `money_limits`); the reasons
    and the window are read by the tool's own policy."""

    # The largest amount one call by a level-1 agent may carry; by a level-2 (or 3) agent
    # (unset: the level-1 limit holds for every level).
    limit_level1: Annotated[float | None, Bounds(ge=0)] = None
    limit_level2: Annotated[float | None, Bounds(ge=0)] = None
    # Calls at or above this amount wait for a staff decision.
    approval_threshold: Annotated[float | None, Bounds(ge=0)] = None
    # Money moved adds up (refunds and credits together, whichever tool moved it): past these
    # totals every further call waits for staff, however small. Per conversation, and per
    # customer over the last `period_days` (across conversations).
    limit_per_conversation: Annotated[float | None, Bounds(ge=0)] = None
    limit_per_customer: Annotated[float | None, Bounds(ge=0)] = None
    period_days: Annotated[int | None, Bounds(ge=1)] = None
    # The reasons a call may give (the tool refuses any other), and how old (in days) a thing
    # it acts on may be (a charge, say).
    reasons: Annotated[tuple[str, ...] | None, Bounds(min_length=1)] = None
    window_days: Annotated[int | None, Bounds(ge=1)] = None

    def __hash__(self) -> int:  # type: ignore[override]  # frozen, so hashable (as a ToolSpec holding it is)
        return hash(tuple(vars(self).values()))

    def declared(self) -> list[str]:
        """The keys set here, in the order above."""
        return [f.name for f in dataclasses.fields(self) if getattr(self, f.name) is not None]

    def per_call(self, level: int) -> float | None:
        """The largest amount one call by an agent of this level may carry (None: no limit)."""
        if level >= 2 and self.limit_level2 is not None:
            return self.limit_level2
        return self.limit_level1

    def reason(self, said: str) -> str | None:
        """The listed reason a model's words name ("Duplicate charge for March" -> "duplicate
        charge"), or None when they name none (or the tool lists none)."""
        words = " ".join(said.casefold().split())
        return next((r for r in self.reasons or () if " ".join(r.casefold().split()) in words), None)


_MONEY = ("refund_charge", "issue_credit")
# `[policy]` key -> (the tool limit it sets, the shipped tools it sets it on). A closed list: the
# desk file's shape from before each tool declared its limits, kept so those files still work.
POLICY_KEYS: dict[str, tuple[str, tuple[str, ...]]] = {
    "refund_limit_level1": ("limit_level1", _MONEY),
    "refund_limit_level2": ("limit_level2", _MONEY),
    "approval_threshold": ("approval_threshold", _MONEY),
    "money_limit_per_conversation": ("limit_per_conversation", _MONEY),
    "money_limit_per_customer": ("limit_per_customer", _MONEY),
    "money_period_days": ("period_days", _MONEY),
    "refund_reasons": ("reasons", ("refund_charge",)),
    "refund_window_days": ("window_days", ("refund_charge",)),
}


@dataclass(kw_only=True, eq=False, repr=False)
class Policy(_Strict):
    """`[policy]`: the shipped money tools' limits (`ToolLimits`) in the shape desk files had
    before each tool declared its own: the amounts and totals of `refund_charge` and
    `issue_credit` together, the reasons and window of `refund_charge` (POLICY_KEYS). Unset:
    the tools' declared values; `[tools.NAME]` wins over it. Closed: no tool adds a key here,
    a new tool's limits are set in `[tools.NAME]`."""

    refund_limit_level1: Annotated[float | None, Bounds(ge=0)] = None
    refund_limit_level2: Annotated[float | None, Bounds(ge=0)] = None
    approval_threshold: Annotated[float | None, Bounds(ge=0)] = None
    refund_reasons: Annotated[list[str] | None, Bounds(min_length=1)] = None
    refund_window_days: Annotated[int | None, Bounds(ge=1)] = None
    money_limit_per_conversation: Annotated[float | None, Bounds(ge=0)] = None
    money_limit_per_customer: Annotated[float | None, Bounds(ge=0)] = None
    money_period_days: Annotated[int | None, Bounds(ge=1)] = None

    def limits_for(self, tool: str) -> dict[str, Any]:
        """The limits these keys set on this tool, by name (unset ones, other tools', left out)."""
        said: dict[str, Any] = {}
        if tool not in _MONEY:
            return said
        for key, (limit, tools) in POLICY_KEYS.items():
            value = getattr(self, key)
            if value is not None and tool in tools:
                said[limit] = tuple(value) if isinstance(value, list) else value
        return said


@dataclass(kw_only=True, eq=False, repr=False)
class Price(_Strict):
    """What a model costs, per million tokens in and out."""

    input_per_million: Annotated[float, Bounds(ge=0)] = 0.0
    output_per_million: Annotated[float, Bounds(ge=0)] = 0.0


def _env_var_name(example: str, secret: str) -> After:
    """A field holding the NAME of the environment variable with a secret, never the secret."""

    def check(v: str | None) -> str | None:
        if v is not None and (not v or not v.replace("_", "").isalnum() or v[0].isdigit()):
            raise ValueError(f"must be the NAME of an environment variable (like {example}), not {secret}")
        return v

    return After(check)


_API_KEY_NAME = _env_var_name("OPENAI_API_KEY", "a key")
_SECRET_NAME = _env_var_name("CHATWOOT_BOT_TOKEN", "a secret")


@dataclass(kw_only=True, eq=False, repr=False)
class ModelSettings(_Strict):
    """`[model]`: the embedded offline model, or an OpenAI-compatible server."""

    provider: Literal["offline", "openai"] = "offline"
    base_url: str | None = None
    model: str | None = None
    # The *name* of the environment variable that holds the key; never the key itself.
    api_key_env: Annotated[str | None, _API_KEY_NAME] = None
    max_tokens: Annotated[int, Bounds(ge=1)] = 1024
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    temperature: Annotated[float | None, Bounds(ge=0, le=2)] = 0.2
    timeout: Annotated[float, Bounds(gt=0)] = 60.0
    max_retries: Annotated[int, Bounds(ge=0, le=10)] = 3
    tool_choice: Literal["auto", "required", "none"] | None = "auto"
    stream: bool = True
    prices: dict[str, Price] = field(default_factory=dict)


@dataclass(kw_only=True, eq=False, repr=False)
class AgentConfig(_Strict):
    """`[agents.NAME]`: one agent: who it is, what it may use, whom it may hand off to."""

    name: str = ""  # filled from the table key
    title: str
    description: str
    level: Annotated[int, Bounds(ge=1, le=3)] = 1
    color: str = ""
    instructions: str = ""
    tools: list[str] = field(default_factory=list)
    handoffs: list[str] = field(default_factory=list)
    # Routing examples: what customers who belong with this agent say. Triage learns from them.
    examples: list[str] = field(default_factory=list)
    # Per-agent model name override for the configured provider.
    model: str | None = None
    # Per-agent history window; the desk's [desk.history] when absent.
    history: HistorySettings | None = None


def _http(v: str) -> str:
    if not v.startswith(("http://", "https://")):
        raise ValueError("must be the http:// or https:// address of the Chatwoot server")
    return v.rstrip("/")


@dataclass(kw_only=True, eq=False, repr=False)
class ChatwootSettings(_Strict):
    """`[channels.chatwoot]`: the desk as a Chatwoot agent bot (`supportdesk serve`).

    Secrets are never in the desk file: each `*_env` names the environment variable holding it."""

    base_url: Annotated[str, After(_http)]
    account_id: Annotated[int, Bounds(ge=1)]
    # The agent bot's access token (sent as `api_access_token`).
    token_env: Annotated[str, _SECRET_NAME]
    # The secret part of the webhook URL, /channels/chatwoot/webhook/{secret}.
    webhook_secret_env: Annotated[str, _SECRET_NAME]
    # Where Chatwoot signs its deliveries (X-Chatwoot-Signature): the signing secret.
    signing_secret_env: Annotated[str | None, _SECRET_NAME] = None
    # Signed deliveries older (or newer) than this are refused, in seconds.
    max_signature_age: Annotated[float, Bounds(gt=0)] = 300.0
    # Inbox ids the bot answers; empty means every inbox that sends to it.
    inboxes: list[int] = field(default_factory=list)


@dataclass(kw_only=True, eq=False, repr=False)
class Channels(_Strict):
    """`[channels]`: where customers come from besides the terminal and the web chat."""

    chatwoot: ChatwootSettings | None = None


@dataclass(kw_only=True, eq=False, repr=False)
class DeskConfig(_Strict):
    """A whole desk file, validated."""

    desk: DeskSettings = field(default_factory=DeskSettings)
    # `[tools.NAME]`: one tool's limits, over its declaration (engine/tools.py `Tool.limits_on`);
    # `[policy]`: the two shipped money tools' limits in their older shape, under those tables.
    policy: Policy = field(default_factory=Policy)
    tools: dict[str, ToolLimits] = field(default_factory=dict)
    model: ModelSettings = field(default_factory=ModelSettings)
    hooks: HooksSettings = field(default_factory=HooksSettings)
    tracing: TracingSettings = field(default_factory=TracingSettings)
    agents: dict[str, AgentConfig]
    # Where customers come from besides the terminal and the web chat (`supportdesk serve`).
    channels: Channels = field(default_factory=Channels)
    # `[confirm]`: per tool, whether this desk makes a call wait for the customer's yes
    # ("customer"), runs it at once when the customer's latest messages asked for its action
    # and else waits for a yes ("request": for an action that changes nothing by itself, such
    # as a reset link), or not ("none"), over the tool's own declaration (engine/tools.py).
    # A tool that only reads never waits, whatever this says; a money tool is never run on a
    # request alone ("request" on one means "customer").
    confirm: dict[str, Literal["customer", "request", "none"]] = field(default_factory=dict)
    # Where it was read from; shown in messages and `doctor` (parse_desk sets it).
    source: str = ""

    def agent(self, name: str) -> AgentConfig:
        return self.agents[name]

    def limits_of(self, tool: str, declared: ToolLimits) -> ToolLimits:
        """A tool's limits on this desk: what it declares, then `[policy]` (a shipped money
        tool's), then its `[tools.NAME]` table. Read through `Tool.limits_on` (engine/tools.py)."""
        own = self.tools.get(tool)
        if own is None and tool not in _MONEY:
            return declared  # (read at every model step for each tool an agent holds)
        said = self.policy.limits_for(tool)
        if own is not None:
            said.update((key, value) for key, value in vars(own).items() if value is not None)
        if all(getattr(declared, key) == value for key, value in said.items()):
            return declared
        return ToolLimits(**{**vars(declared), **said})

    @property
    def entry(self) -> AgentConfig:
        return self.agents[self.desk.entry]


class ConfigError(Exception):
    """A desk file that cannot be used. `problems` holds one readable line each."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


# --- where the desk comes from -------------------------------------------------------------


def packaged_desk_path() -> Path:
    """The default desk shipped in the package (the repo's agents.toml)."""
    here = Path(__file__).resolve().parent
    installed = here / "data" / "agents.toml"
    return installed if installed.exists() else here.parent / "agents.toml"


def resolve_config_path(cli_path: str | os.PathLike[str] | None = None) -> Path:
    if cli_path:
        return Path(cli_path)
    env = os.environ.get("SUPPORTDESK_CONFIG")
    if env:
        return Path(env)
    local = Path.cwd() / "agents.toml"
    if local.is_file():
        return local
    user = config_dir() / "agents.toml"
    if user.is_file():
        return user
    return packaged_desk_path()


# --- validation ------------------------------------------------------------------------------


class _PerName:
    """The marker for "the value at this point is one named table" (an agent's, a tool's)."""

    def __init__(self, table: type):
        self.table = table


# The fields of the desk file holding one table per name (`[agents.NAME]`, `[tools.NAME]`).
_TABLE_PER_NAME: dict[str, _PerName] = {"agents": _PerName(AgentConfig), "tools": _PerName(ToolLimits)}


@functools.cache
def _tables(cls: type) -> dict[str, type | None]:
    """Each field of a settings dataclass, with the dataclass its value is a table of (None:
    not a table; an optional table like `history: HistorySettings | None` counts as none)."""
    hints = typing.get_type_hints(cls)  # the string annotations resolved, Annotated's metadata dropped
    return {
        f.name: hint if isinstance(hint := hints[f.name], type) and dataclasses.is_dataclass(hint) else None
        for f in dataclasses.fields(cls)
    }


def _fields_at(loc: tuple[Any, ...]) -> list[str] | None:
    """The valid keys of the table at `loc` (for 'unknown key' messages)."""
    model: Any = DeskConfig
    for part in loc:
        if model is DeskConfig and part in _TABLE_PER_NAME:
            model = _TABLE_PER_NAME[part]
            continue
        if isinstance(model, _PerName):
            model = model.table
            continue
        tables = _tables(model) if isinstance(model, type) else {}
        if part not in tables:
            return None
        model = tables[part]
        if model is None:
            return None
    if isinstance(model, type) and dataclasses.is_dataclass(model):
        hidden = {"name", "source"} if model is AgentConfig else {"source"}
        return [f.name for f in dataclasses.fields(model) if f.name not in hidden]
    return None


def _dotted(loc: Iterable[Any]) -> str:
    """`agents.senior.handoffs[1]`: list items the way the cross-check messages name them.
    TOML keys are always strings, so an int in a location is a list index."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _explain(source: str, err: Mapping[str, Any]) -> str:
    loc = tuple(err["loc"])
    key = _dotted(loc)
    kind = err["type"]
    # A key no field takes: what pydantic calls it on a dataclass (on a model, extra_forbidden).
    if kind in ("unexpected_keyword_argument", "extra_forbidden"):
        valid = _fields_at(loc[:-1])
        hint = f"; valid keys here: {', '.join(valid)}" if valid else ""
        return f"{source}: {key}: unknown key{hint}"
    if kind == "missing":
        return f"{source}: {key}: required key is missing; add `{loc[-1]} = ...`"
    if kind == "dataclass_type" and "class_name" in err.get("ctx", {}):
        # A value where a table belongs: in the words pydantic has for a model (model_type).
        err = {**err, "msg": f"Input should be a valid dictionary or instance of {err['ctx']['class_name']}"}
    if kind == "literal_error":
        return f"{source}: {key}: {err['msg'].replace('Input should be', 'must be')}"
    got = err.get("input")
    # Never echo what was written where a secret might have been pasted.
    secret = any("key" in str(p) for p in loc)
    got_text = f" (got {got!r})" if not isinstance(got, dict | list) and not secret else ""
    msg = err["msg"].replace("Input should be", "must be").replace("Value error, ", "")
    return f"{source}: {key}: {msg}{got_text}"


# --- salvaging what validated ---------------------------------------------------------------
#
# A file with a structural problem (unknown key, wrong type, missing value) still gets its
# cross-checks, so one `config check` lists everything. The cross-checks then read a copy of the
# file with the broken fields taken out, and skip any check that would read one of them: such a
# check would only see a default, and report a problem the user never wrote.

def _field_path(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """`loc` cut to the model field it is in: `agents.senior.handoffs[1]` -> `agents.senior.handoffs`."""
    model: Any = DeskConfig
    path: list[Any] = []
    for part in loc:
        path.append(part)
        if isinstance(model, _PerName):
            model = model.table
            continue
        tables = _tables(model)
        if part not in tables:  # an unknown key
            break
        if model is DeskConfig and part in _TABLE_PER_NAME:
            model = _TABLE_PER_NAME[part]
            continue
        if tables[part] is None:
            break
        model = tables[part]
    return tuple(path)


# Whether an agent's colour can be drawn (the terminal library decides; config imports none).
ColourCheck = Callable[[str], bool]


class _Broken:
    """The field paths that failed validation."""

    def __init__(self, paths: Iterable[tuple[Any, ...]] = ()):
        self.paths = set(paths)

    def __call__(self, *path: Any) -> bool:
        """Whether the value at `path` is unreliable: it, or a table holding it, failed."""
        return any(path[: len(p)] == p for p in self.paths)


# Required fields taken out of a broken agent get a stand-in, so the rest of the agent can still
# be cross-checked. No check reads them: they are marked broken.
_STAND_INS: dict[str, Any] = {"title": "", "description": ""}


def _without(raw: dict[str, Any], paths: Iterable[tuple[Any, ...]]) -> dict[str, Any]:
    """A copy of `raw` with the value at each path removed (or stood in for)."""
    cleaned = copy.deepcopy(raw)
    for path in sorted(paths, key=len):
        if not path:
            continue  # the whole file: nothing to take out, so the salvage fails and says so
        table: Any = cleaned
        for part in path[:-1]:
            table = table.get(part) if isinstance(table, dict) else None
        if not isinstance(table, dict):
            continue  # a table above it was already removed
        table.pop(path[-1], None)
        is_agent_field = len(path) == 3 and path[0] == "agents"
        if is_agent_field and path[-1] in _STAND_INS:
            table[path[-1]] = _STAND_INS[path[-1]]
    if not isinstance(cleaned.get("agents"), dict):
        cleaned["agents"] = {}
    return cleaned


def _salvage(raw: dict[str, Any], errors: Sequence[Mapping[str, Any]]) -> tuple[DeskConfig, _Broken] | None:
    """The parts of `raw` that validated, and which parts did not; None if nothing can be saved."""
    from pydantic import ValidationError

    broken = _Broken(_field_path(tuple(e["loc"])) for e in errors)
    try:
        return validate(DeskConfig, _without(raw, broken.paths)), broken
    except ValidationError:
        return None  # a problem shape we do not know how to take apart: report structure only


# --- cross-checks ----------------------------------------------------------------------------


def _cross_check(
    cfg: DeskConfig,
    source: str,
    tool_names: set[str],
    agent_names: set[str] | None = None,
    broken: _Broken | None = None,
    is_colour: ColourCheck | None = None,
    declared: Mapping[str, Collection[str]] | None = None,
) -> list[str]:
    """Problems between fields. `agent_names` holds every agent the file defines, broken or not;
    None when the agents table itself is broken. A check reading a `broken` field is skipped.
    `declared`: each tool's declared limit keys, when known."""
    broken = broken or _Broken()
    if agent_names is None and not broken("agents"):
        agent_names = set(cfg.agents)
    problems: list[str] = []
    if agent_names is not None:
        problems += _check_agent_names(cfg, source, agent_names, broken)
    for name, agent in cfg.agents.items():
        problems += _check_tools(name, agent, source, tool_names, broken)
        problems += _check_color(name, agent, source, broken, is_colour)
    if tool_names and not broken("confirm"):
        problems += _check_confirm(cfg, source, tool_names)
    if tool_names and not broken("tools"):
        problems += _check_tool_limits(cfg, source, tool_names, declared)
    problems += _check_limits(cfg, source, broken)
    problems += _check_model(cfg, source, broken)
    return problems


def _check_agent_names(cfg: DeskConfig, source: str, agent_names: set[str], broken: _Broken) -> list[str]:
    problems: list[str] = []
    valid = ", ".join(sorted(agent_names))
    for field in ("entry", "fallback"):
        who = getattr(cfg.desk, field)
        if not broken("desk", field) and who not in agent_names:
            problems.append(f"{source}: desk.{field}: no agent named {who!r}; valid agents: {valid}")
    for name, agent in cfg.agents.items():
        if broken("agents", name, "handoffs"):
            continue
        for i, target in enumerate(agent.handoffs):
            if target not in agent_names:
                problems.append(
                    f"{source}: agents.{name}.handoffs[{i}]: no agent named {target!r}; "
                    f"valid agents: {valid}"
                )
            elif target == name:
                problems.append(f"{source}: agents.{name}.handoffs[{i}]: an agent cannot hand off to itself")
    if not agent_names:
        problems.append(f"{source}: agents: the desk has no agents; add an [agents.triage] table")
    return problems


def _check_tools(name: str, agent: AgentConfig, source: str, tool_names: set[str], broken: _Broken) -> list[str]:
    if not tool_names or broken("agents", name, "tools"):
        return []
    return [
        f"{source}: agents.{name}.tools[{i}]: no tool named {tool!r}; valid tools: {', '.join(sorted(tool_names))}"
        for i, tool in enumerate(agent.tools)
        if tool not in tool_names
    ]


def _check_confirm(cfg: DeskConfig, source: str, tool_names: set[str]) -> list[str]:
    return [
        f"{source}: confirm.{tool}: no tool named {tool!r}; valid tools: {', '.join(sorted(tool_names))}"
        for tool in cfg.confirm
        if tool not in tool_names
    ]


def _check_tool_limits(
    cfg: DeskConfig, source: str, tool_names: set[str], declared: Mapping[str, Collection[str]] | None
) -> list[str]:
    """`[tools.NAME]` names a tool, and sets only limits that tool declares (its definition
    says which it has: a key it does not read would be a limit nobody enforces)."""
    problems: list[str] = []
    for tool, limits in cfg.tools.items():
        if tool not in tool_names:
            problems.append(f"{source}: tools.{tool}: no tool named {tool!r}; valid tools: {', '.join(sorted(tool_names))}")
            continue
        if declared is None:
            continue
        has = [key for key in limits.declared() if key not in declared.get(tool, ())]
        for key in has:
            its = ", ".join(declared.get(tool, ())) or "none"
            problems.append(f"{source}: tools.{tool}.{key}: {tool} declares no {key}; the limits it declares: {its}")
    return problems


def tool_names_of(tools: Mapping[str, Collection[str]] | Iterable[str] | None) -> tuple[set[str], Mapping[str, Collection[str]] | None]:
    """What `tool_names` says: the names, and each one's declared limit keys when it is a mapping."""
    if isinstance(tools, Mapping):
        return set(tools), tools
    return set(tools or ()), None


def check_agent_tools(cfg: DeskConfig, tool_names: Mapping[str, Collection[str]] | Iterable[str]) -> None:
    """The tools check of `parse_desk`, for a desk loaded with `tool_names=()` (the TUI loads
    the file before the tools exist, and checks their names once the registry is built)."""
    (names, declared), source = tool_names_of(tool_names), cfg.source
    problems = [p for name, agent in cfg.agents.items() for p in _check_tools(name, agent, source, names, _Broken())]
    problems += _check_confirm(cfg, source, names) if names else []
    problems += _check_tool_limits(cfg, source, names, declared) if names else []
    if problems:
        raise ConfigError(problems)


def _check_color(
    name: str, agent: AgentConfig, source: str, broken: _Broken, is_colour: ColourCheck | None
) -> list[str]:
    if not agent.color or is_colour is None or broken("agents", name, "color"):
        return []
    if not is_colour(agent.color):
        return [
            f"{source}: agents.{name}.color: {agent.color!r} is not a colour; "
            "use a name like 'cyan' or a hex value like '#5fafff'"
        ]
    return []


def _check_limits(cfg: DeskConfig, source: str, broken: _Broken) -> list[str]:
    lim = cfg.desk.limits
    limits = ("desk", "limits")
    if broken(*limits, "pingpong_min_unique") or broken(*limits, "pingpong_window"):
        return []
    if lim.pingpong_min_unique > lim.pingpong_window:
        return [
            f"{source}: desk.limits.pingpong_min_unique: must be at most pingpong_window "
            f"({lim.pingpong_window})"
        ]
    if broken(*limits, "max_handoffs_per_message"):
        return []
    # A window of N holders takes N - 1 handoffs; past the handoff limit it could never fill.
    if lim.pingpong_window - 1 > lim.max_handoffs_per_message:
        return [
            f"{source}: desk.limits.pingpong_window: {lim.pingpong_window} holders take "
            f"{lim.pingpong_window - 1} handoffs, more than max_handoffs_per_message "
            f"({lim.max_handoffs_per_message}), so ping-pong could never be detected; "
            f"use at most {lim.max_handoffs_per_message + 1}"
        ]
    return []


def _check_model(cfg: DeskConfig, source: str, broken: _Broken) -> list[str]:
    if broken("model", "provider") or cfg.model.provider != "openai":
        return []
    return [
        f"{source}: model.{key}: required when provider = \"openai\"; "
        f"for example base_url = \"http://127.0.0.1:11434/v1\" and model = \"llama3.2\""
        for key in ("base_url", "model")
        if not broken("model", key) and not getattr(cfg.model, key)
    ]


def _structural_and_cross_problems(
    raw: dict[str, Any],
    exc: ValidationError,
    source: str,
    tool_names: set[str],
    is_colour: ColourCheck | None,
    declared: Mapping[str, Collection[str]] | None,
) -> list[str]:
    """Every problem in a file that failed validation: the structural ones, then the
    cross-checks over whatever validated."""
    errors = exc.errors()
    problems = [_explain(source, e) for e in errors]
    salvaged = _salvage(raw, errors)
    if salvaged is None:
        return problems
    cfg, broken = salvaged
    agents = raw.get("agents")
    # A broken agent is still an agent: naming it elsewhere is not a second problem.
    agent_names = set(agents) if isinstance(agents, dict) and not broken("agents") else None
    return problems + _cross_check(cfg, source, tool_names, agent_names, broken, is_colour, declared)


def parse_desk(
    text: str,
    source: str = "agents.toml",
    tool_names: Mapping[str, Collection[str]] | Iterable[str] | None = None,
    is_colour: ColourCheck | None = None,
) -> DeskConfig:
    """Validate desk TOML text; raise ConfigError with every problem found.

    What config cannot know by itself is passed in where the desk is wired
    (supportdesk.wiring.load_config): `tool_names`, the tools agents may name (a mapping: with
    the limit keys each declares, which its `[tools.NAME]` may set), and `is_colour`, whether
    the terminal can draw an agent's colour. Without them those are not checked."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"{source}: not valid TOML: {exc}"]) from None
    agents = raw.get("agents")
    if isinstance(agents, dict):
        for name, table in agents.items():
            if isinstance(table, dict):
                table["name"] = name
    tools, declared = tool_names_of(tool_names)
    from pydantic import ValidationError  # here, not at the top: see the module's docstring

    try:
        cfg = validate(DeskConfig, raw)
    except ValidationError as exc:
        raise ConfigError(_structural_and_cross_problems(raw, exc, source, tools, is_colour, declared)) from None
    problems = _cross_check(cfg, source, tools, is_colour=is_colour, declared=declared)
    if problems:
        raise ConfigError(problems)
    for i, agent in enumerate(cfg.agents.values()):
        if not agent.color:
            agent.color = DEFAULT_COLORS[i % len(DEFAULT_COLORS)]
    cfg.source = source
    return cfg


def load_desk(
    path: str | os.PathLike[str] | None = None,
    tool_names: Mapping[str, Collection[str]] | Iterable[str] | None = None,
    is_colour: ColourCheck | None = None,
    *,
    cached: bool = False,
) -> DeskConfig:
    """The desk file, validated. `cached`: a file validated before with the same text, checks
    and code is taken from the cache (see _ValidatedCache) instead of validated again."""
    resolved = resolve_config_path(path)
    try:
        text = resolved.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError([f"{resolved}: no such file; pass --config PATH or create it"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([f"{resolved}: cannot be read: {exc}"]) from None
    cache = _ValidatedCache(text, str(resolved), tool_names, is_colour) if cached else None
    if cache is not None and (known := cache.read()) is not None:
        return known
    cfg = parse_desk(text, str(resolved), tool_names, is_colour)
    if cache is not None:
        cache.write(cfg)
    return cfg


def _pydantic_release() -> bytes:
    """What identifies the installed pydantic, read without importing it: its version.py (which
    holds VERSION). find_spec on a top-level package finds it without running it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("pydantic")
        if spec is None or spec.origin is None:
            return b""
        return (Path(spec.origin).parent / "version.py").read_bytes()
    except (ImportError, ValueError, OSError):
        return b""  # (not installed, or zipped) the entry is then keyed on the rest


class _ValidatedCache:
    """A desk file's validated DeskConfig, kept under $XDG_CACHE_HOME/supportdesk/ for the
    next start-up of the TUI: importing pydantic (~75 ms cold), then building its validator for
    these settings and validating (~30-40 ms) was on the path to a session's first page. Reading
    the entry imports no pydantic: the settings are plain dataclasses.

    The entry is used only when everything that decided the result is the same: the file's text
    and path, the checks asked for (tool names, the colour check), this module's code and
    pydantic's release. Only a desk that passed validation is written; a broken file is never
    cached, so it is validated (and reported) at every start. One entry per desk file path,
    replaced when its text changes. The entry is a pickle: it lives in the user's own cache
    folder and is written only here, after validation; anything unreadable is ignored."""

    # 2: the settings became dataclasses; an entry holding the old pydantic models never matches.
    FORMAT = 2

    def __init__(
        self, text: str, source: str, tool_names: Mapping[str, Collection[str]] | Iterable[str] | None, is_colour: ColourCheck | None
    ):
        colour_check = f"{is_colour.__module__}.{is_colour.__qualname__}" if is_colour is not None else ""
        try:
            code = Path(__file__).read_bytes()
        except OSError:
            code = b""  # (a zipped install) keyed on the rest
        digest = hashlib.sha256()
        names, declared = tool_names_of(tool_names)
        tools = "\0".join(f"{name}:{','.join(declared.get(name, ())) if declared is not None else ''}" for name in sorted(names))
        for part in (str(self.FORMAT), source, tools, colour_check):
            digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(_pydantic_release() + b"\0")
        digest.update(code + b"\0" + text.encode("utf-8", "surrogateescape"))
        self.key = digest.hexdigest()
        name = hashlib.sha256(source.encode("utf-8", "surrogateescape")).hexdigest()[:24]
        self.path = cache_dir() / f"desk-{name}.pickle"

    def read(self) -> DeskConfig | None:
        try:
            with self.path.open("rb") as f:
                key, cfg = pickle.load(f)
        except Exception:  # missing, unreadable, from another version: validate the file instead
            return None
        return cfg if key == self.key and isinstance(cfg, DeskConfig) else None

    def write(self, cfg: DeskConfig) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(pickle.dumps((self.key, cfg), protocol=pickle.HIGHEST_PROTOCOL))
            os.replace(tmp, self.path)  # atomic: a reader never sees half an entry
        except Exception:
            pass  # a read-only cache folder only costs the next start-up its validation
