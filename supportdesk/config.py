"""agents.toml -> validated pydantic models.

Every problem in a desk file becomes one line that names the file, the dotted key and
what would be valid, so `supportdesk config check` can print them all at once and the
app never shows a traceback for a typo.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

DEFAULT_COLORS = ("#5fafff", "#ffaf5f", "#87d787", "#d787ff", "#ff8787", "#d7d75f")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Limits(_Strict):
    max_handoffs_per_message: int = Field(4, ge=0)
    max_steps_per_message: int = Field(12, ge=1)
    # Ping-pong: among the last `pingpong_window` agents to hold the conversation in one
    # turn, fewer than `pingpong_min_unique` distinct ones means agents are bouncing.
    pingpong_window: int = Field(6, ge=2)
    pingpong_min_unique: int = Field(3, ge=1)
    # Longer than a model server's own request timeout (60 s by default), so a slow server
    # ends as a provider error staff can retry, not as a desk limit.
    step_timeout: float = Field(90.0, gt=0)
    message_timeout: float = Field(300.0, gt=0)


class DeskSettings(_Strict):
    name: str = "Support desk"
    entry: str = "triage"
    fallback: str = "triage"
    limits: Limits = Field(default_factory=Limits)


class Policy(_Strict):
    """Limits enforced by the tools themselves, whatever a prompt says."""

    refund_limit_level1: float = Field(50.0, ge=0)
    refund_limit_level2: float = Field(2000.0, ge=0)
    # Refunds and credits at or above this wait for a staff decision.
    approval_threshold: float = Field(250.0, ge=0)

    def refund_limit(self, level: int) -> float:
        return self.refund_limit_level1 if level <= 1 else self.refund_limit_level2


class Price(_Strict):
    input_per_million: float = Field(0.0, ge=0)
    output_per_million: float = Field(0.0, ge=0)


class ModelSettings(_Strict):
    provider: Literal["offline", "openai"] = "offline"
    base_url: str | None = None
    model: str | None = None
    # The *name* of the environment variable that holds the key; never the key itself.
    api_key_env: str | None = None
    max_tokens: int = Field(1024, ge=1)
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    temperature: float | None = Field(0.2, ge=0, le=2)
    timeout: float = Field(60.0, gt=0)
    max_retries: int = Field(3, ge=0, le=10)
    tool_choice: Literal["auto", "required", "none"] | None = "auto"
    stream: bool = True
    prices: dict[str, Price] = Field(default_factory=dict)

    @field_validator("api_key_env")
    @classmethod
    def _looks_like_a_name(cls, v: str | None) -> str | None:
        if v is not None and (not v or not v.replace("_", "").isalnum() or v[0].isdigit()):
            raise ValueError(
                "must be the NAME of an environment variable (like OPENAI_API_KEY), not a key"
            )
        return v


class AgentConfig(_Strict):
    name: str = ""  # filled from the table key
    title: str
    description: str
    level: int = Field(1, ge=1, le=3)
    color: str = ""
    instructions: str = ""
    tools: list[str] = Field(default_factory=list)
    handoffs: list[str] = Field(default_factory=list)
    # Routing examples: what customers who belong with this agent say. Triage learns from them.
    examples: list[str] = Field(default_factory=list)
    # Per-agent model name override for the configured provider.
    model: str | None = None


class DeskConfig(_Strict):
    desk: DeskSettings = Field(default_factory=DeskSettings)
    policy: Policy = Field(default_factory=Policy)
    model: ModelSettings = Field(default_factory=ModelSettings)
    agents: dict[str, AgentConfig]
    # Where it was read from; shown in messages and `doctor`.
    source: str = Field("", exclude=True)

    def agent(self, name: str) -> AgentConfig:
        return self.agents[name]

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
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    user = xdg / "supportdesk" / "agents.toml"
    if user.is_file():
        return user
    return packaged_desk_path()


# --- validation ------------------------------------------------------------------------------


def _fields_at(loc: tuple[Any, ...]) -> list[str] | None:
    """The valid keys of the table at `loc` (for 'unknown key' messages)."""
    model: Any = DeskConfig
    for part in loc:
        if model is DeskConfig and part == "agents":
            model = "agents"
            continue
        if model == "agents":
            model = AgentConfig
            continue
        field = getattr(model, "model_fields", {}).get(part)
        if field is None:
            return None
        ann = field.annotation
        model = ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None
        if model is None:
            return None
    if isinstance(model, type) and issubclass(model, BaseModel):
        hidden = {"name", "source"} if model is AgentConfig else {"source"}
        return [n for n in model.model_fields if n not in hidden]
    return None


def _dotted(loc: Iterable[Any]) -> str:
    return ".".join(str(p) for p in loc)


def _explain(source: str, err: dict[str, Any]) -> str:
    loc = tuple(err["loc"])
    key = _dotted(loc)
    kind = err["type"]
    if kind == "extra_forbidden":
        valid = _fields_at(loc[:-1])
        hint = f"; valid keys here: {', '.join(valid)}" if valid else ""
        return f"{source}: {key}: unknown key{hint}"
    if kind == "missing":
        return f"{source}: {key}: required key is missing; add `{loc[-1]} = ...`"
    if kind == "literal_error":
        return f"{source}: {key}: {err['msg'].replace('Input should be', 'must be')}"
    got = err.get("input")
    # Never echo what was written where a secret might have been pasted.
    secret = any("key" in str(p) for p in loc)
    got_text = f" (got {got!r})" if not isinstance(got, dict | list) and not secret else ""
    msg = err["msg"].replace("Input should be", "must be").replace("Value error, ", "")
    return f"{source}: {key}: {msg}{got_text}"


def _cross_check(cfg: DeskConfig, source: str, tool_names: set[str]) -> list[str]:
    problems: list[str] = []
    names = sorted(cfg.agents)
    valid = ", ".join(names)
    for key, who in (("desk.entry", cfg.desk.entry), ("desk.fallback", cfg.desk.fallback)):
        if who not in cfg.agents:
            problems.append(f"{source}: {key}: no agent named {who!r}; valid agents: {valid}")
    for name, agent in cfg.agents.items():
        for i, target in enumerate(agent.handoffs):
            if target not in cfg.agents:
                problems.append(
                    f"{source}: agents.{name}.handoffs[{i}]: no agent named {target!r}; "
                    f"valid agents: {valid}"
                )
            elif target == name:
                problems.append(f"{source}: agents.{name}.handoffs[{i}]: an agent cannot hand off to itself")
        for i, tool in enumerate(agent.tools):
            if tool_names and tool not in tool_names:
                problems.append(
                    f"{source}: agents.{name}.tools[{i}]: no tool named {tool!r}; "
                    f"valid tools: {', '.join(sorted(tool_names))}"
                )
        if agent.color:
            from rich.color import Color, ColorParseError

            try:
                Color.parse(agent.color)
            except ColorParseError:
                problems.append(
                    f"{source}: agents.{name}.color: {agent.color!r} is not a colour; "
                    "use a name like 'cyan' or a hex value like '#5fafff'"
                )
    if not cfg.agents:
        problems.append(f"{source}: agents: the desk has no agents; add an [agents.triage] table")
    lim = cfg.desk.limits
    if lim.pingpong_min_unique > lim.pingpong_window:
        problems.append(
            f"{source}: desk.limits.pingpong_min_unique: must be at most pingpong_window "
            f"({lim.pingpong_window})"
        )
    if cfg.model.provider == "openai":
        for key in ("base_url", "model"):
            if not getattr(cfg.model, key):
                problems.append(
                    f"{source}: model.{key}: required when provider = \"openai\"; "
                    f"for example base_url = \"http://127.0.0.1:11434/v1\" and model = \"llama3.2\""
                )
    return problems


def parse_desk(text: str, source: str = "agents.toml", tool_names: Iterable[str] | None = None) -> DeskConfig:
    """Validate desk TOML text; raise ConfigError with every problem found."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"{source}: not valid TOML: {exc}"]) from None
    agents = raw.get("agents")
    if isinstance(agents, dict):
        for name, table in agents.items():
            if isinstance(table, dict):
                table.setdefault("name", name)
                if name != table["name"]:
                    table["name"] = name
    try:
        cfg = DeskConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError([_explain(source, e) for e in exc.errors()]) from None
    for i, agent in enumerate(cfg.agents.values()):
        if not agent.color:
            agent.color = DEFAULT_COLORS[i % len(DEFAULT_COLORS)]
    if tool_names is None:
        from supportdesk.tools import registry

        tool_names = registry.names()
    problems = _cross_check(cfg, source, set(tool_names))
    if problems:
        raise ConfigError(problems)
    cfg.source = source
    return cfg


def load_desk(path: str | os.PathLike[str] | None = None, tool_names: Iterable[str] | None = None) -> DeskConfig:
    resolved = resolve_config_path(path)
    try:
        text = resolved.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError([f"{resolved}: no such file; pass --config PATH or create it"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([f"{resolved}: cannot be read: {exc}"]) from None
    return parse_desk(text, str(resolved), tool_names)
