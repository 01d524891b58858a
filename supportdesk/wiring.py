"""The composition root: a desk file and a database become a ready `Desk`.

This is the one module that knows every part that plugs into the engine: the providers
(`supportdesk.models`), the tool registry (`supportdesk.tools`), the shipped hooks
(`supportdesk.hooks.guardrails`, tracing) and the business data's adapters. The engine below it knows
none of them, only their protocols; the TUI, the channels and the commands above it open a desk
here.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from supportdesk.config import ConfigError, DeskConfig, check_agent_tools, load_desk
from supportdesk.engine.desk import Desk, Services
from supportdesk.engine.later import Later, ready
from supportdesk.store import StoreError, StoreLocation, open_store, parse_location

# The runner, the hooks and the tool mechanism are imported where a desk is built, not here: a
# deferred desk (the TUI's first page) builds its runner later, in a thread (engine/desk.py).
if TYPE_CHECKING:
    from supportdesk.business.protocol import BusinessData
    from supportdesk.engine.hooks import HookSet
    from supportdesk.engine.protocol import ModelProvider
    from supportdesk.engine.runner import Runner
    from supportdesk.engine.tools import ToolRegistry


def shipped_tools() -> ToolRegistry:
    """The desk's own tools (imported on first use, for start-up speed: they load the knowledge base)."""
    from supportdesk.tools import registry  # lazy: start-up speed

    return registry


def is_colour(text: str) -> bool:
    """Whether the terminal library the TUI draws with reads `text` as a colour."""
    from rich.color import Color, ColorParseError  # lazy: only when a desk file names a colour

    try:
        Color.parse(text)
    except ColorParseError:
        return False
    return True


def load_config(path: str | os.PathLike[str] | None = None) -> DeskConfig:
    """The desk file as the desk runs it: validated, its agents' tools (and `[tools.NAME]`
    tables) checked against the shipped tool registry and their colours against the terminal's. Raises ConfigError listing
    every problem."""
    return load_desk(path, tool_names=shipped_tools().declared_limits(), is_colour=is_colour)


def desk_hooks(config: DeskConfig) -> HookSet:
    """The hooks a desk file asks for: tracing when it is on, the shipped guardrails it turns on,
    then `[hooks] enabled`, then entry points. A hook that cannot be loaded is a ConfigError (one line)."""
    from supportdesk.engine.hooks import HookLoadError, load_hooks

    shipped: list[tuple[str, Any]] = []
    guardrails = config.hooks.guardrails
    if guardrails.relevance or guardrails.injection:
        from supportdesk.hooks.guardrails import InjectionGuardrail, RelevanceGuardrail  # lazy: start-up speed

        if guardrails.injection:
            shipped.append(("guardrail:injection", InjectionGuardrail()))
        if guardrails.relevance:
            shipped.append(("guardrail:relevance", RelevanceGuardrail()))
    from supportdesk.engine.tracing import desk_tracing  # lazy: OpenTelemetry only when tracing is on

    tracing = desk_tracing(config)
    if tracing is not None:  # first, so every other hook's moments happen inside its spans
        shipped.insert(0, ("tracing", tracing))
    try:
        return load_hooks(config.hooks.enabled, shipped)
    except HookLoadError as exc:
        raise ConfigError([f"{config.source or 'agents.toml'}: [hooks] {exc}"]) from None


async def open_desk(
    db: str | os.PathLike[str] | None = None,
    config: DeskConfig | str | os.PathLike[str] | None = None,
    *,
    provider: ModelProvider | None = None,
    tools: ToolRegistry | None = None,
    customers: bool = True,
    deferred: bool = False,
) -> Desk:
    """Open the database and desk. Raises ConfigError or StoreError with user-facing text.

    `deferred`: the model, the tool registry and the hooks are built on first use (or by
    `desk.runner.warm()`), and the demo business data is opened (seeded, on a new database)
    by the first tool call (or `desk.services.ready()`), not here; the TUI draws a session
    before it needs them. A hook that cannot be loaded is then a ConfigError from `warm()`, and
    business data that cannot be set up a StoreError from `ready()` (the TUI shows either as one
    line)."""
    # Deferred, the tools' names are checked against the file when the registry is built.
    check_tools_later = deferred and tools is None and not isinstance(config, DeskConfig)
    if isinstance(config, DeskConfig):
        cfg = config
    elif check_tools_later:
        # The TUI's path: a desk validated at an earlier start is taken from the cache.
        cfg = load_desk(config, tool_names=(), is_colour=is_colour, cached=True)
    else:
        cfg = load_config(config)
    hooks: HookSet | Later[HookSet] = Later(lambda: desk_hooks(cfg)) if deferred else desk_hooks(cfg)

    def close_hooks() -> None:
        if not isinstance(hooks, Later):
            hooks.close()

    location = parse_location(db)
    try:
        store = await open_store(location)
    except BaseException:
        close_hooks()
        raise
    services = Services()
    try:
        # A read-only database can be read (replay, export) but no tool may act on its data.
        if customers and not getattr(store, "readonly", False):
            if deferred:
                services.opener = lambda: _open_customers(location)
            else:
                services.customers = await _open_customers(location)
        tool_registry: ToolRegistry | Later[ToolRegistry] = (
            tools if tools is not None else Later(lambda: _tool_registry(cfg if check_tools_later else None))
        )
        model: ModelProvider | Later[ModelProvider] = provider if provider is not None else Later(lambda: _provider(cfg))
        if not deferred:
            tool_registry, model = ready(tool_registry), ready(model)
    except BaseException:
        # Everything opened so far is closed: an open connection's thread would keep the
        # process from exiting (`supportdesk run` hung after the model failed to load).
        close_hooks()
        await services.close()
        await store.close()
        raise

    def runner() -> Runner:
        from supportdesk.engine.runner import Runner

        return Runner(store, cfg, model, tool_registry, services, hooks=hooks)

    return Desk(cfg, store, Later(runner) if deferred else runner(), services)


def _tool_registry(unchecked: DeskConfig | None = None) -> ToolRegistry:
    """Every tool; `unchecked`: a desk whose agents' tool names are still to be checked."""
    registry = shipped_tools()
    if unchecked is not None:
        check_agent_tools(unchecked, registry.declared_limits())  # ConfigError, as load_config would raise
    return registry


def _provider(cfg: DeskConfig) -> ModelProvider:
    from supportdesk.models import make_provider  # lazy: start-up speed (the offline model is heavy)

    return make_provider(cfg)


async def _open_customers(location: StoreLocation) -> BusinessData:
    # In the database the desk was opened with: the SQLite file, or the PostgreSQL database
    # (whose adapter, and asyncpg with it, is imported only then).
    from supportdesk.business import open_business  # lazy: start-up speed

    try:
        return await open_business(location)
    except StoreError:
        raise  # already one line (a missing driver, an unreachable server)
    except Exception as exc:  # a full disk while seeding, say: one line, never a traceback
        raise StoreError(f"{location}: cannot set up the demo customer data: {exc}") from None
