"""Wiring: a desk file and a database become a ready runner."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from supportdesk.config import DeskConfig, check_agent_tools, load_desk
from supportdesk.engine.later import Later, ready
from supportdesk.engine.protocol import ModelProvider
from supportdesk.engine.runner import Runner
from supportdesk.engine.tools import ToolRegistry
from supportdesk.store import Store, StoreError, StoreLocation, open_store, parse_location

if TYPE_CHECKING:
    from supportdesk.business import BusinessData


@dataclass
class Services:
    """What tools act on. `customers` is the desk's business data (customers, charges ...)."""

    customers: BusinessData | None = None


@dataclass
class Desk:
    config: DeskConfig
    store: Store
    runner: Runner
    services: Services

    async def close(self) -> None:
        self.runner.hooks.close()
        if self.runner.provider_built:  # a model never built has nothing to close
            await self.runner.provider.aclose()
        if self.services.customers is not None:
            await self.services.customers.close()
        await self.store.close()

    async def __aenter__(self) -> Desk:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


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

    `deferred`: the model and the tool registry are built on first use (or by
    `desk.runner.warm()`), not here; the TUI draws a session before it needs them."""
    # Deferred, the tools' names are checked against the file when the registry is built.
    check_tools_later = deferred and tools is None and not isinstance(config, DeskConfig)
    cfg = config if isinstance(config, DeskConfig) else load_desk(config, () if check_tools_later else None)
    location = parse_location(db)
    store = await open_store(location)
    try:
        services = Services()
        # A read-only database can be read (replay, export) but no tool may act on its data.
        if customers and not getattr(store, "readonly", False):
            services.customers = await _open_customers(location)
        tool_registry: ToolRegistry | Later[ToolRegistry] = (
            tools if tools is not None else Later(lambda: _tool_registry(cfg if check_tools_later else None))
        )
        model: ModelProvider | Later[ModelProvider] = provider if provider is not None else Later(lambda: _provider(cfg))
        if not deferred:
            tool_registry, model = ready(tool_registry), ready(model)
    except BaseException:
        await store.close()
        raise
    return Desk(cfg, store, Runner(store, cfg, model, tool_registry, services), services)


def _tool_registry(unchecked: DeskConfig | None = None) -> ToolRegistry:
    """Every tool; `unchecked`: a desk whose agents' tool names are still to be checked."""
    from supportdesk.tools import registry  # importing the package registers every tool

    if unchecked is not None:
        check_agent_tools(unchecked, registry.names())  # ConfigError, as load_desk would raise
    return registry


def _provider(cfg: DeskConfig) -> ModelProvider:
    from supportdesk.models import make_provider

    return make_provider(cfg)


async def _open_customers(location: StoreLocation) -> BusinessData:
    # In the database the desk was opened with: the SQLite file, or the PostgreSQL database
    # (whose adapter, and asyncpg with it, is imported only then).
    from supportdesk.business import open_business

    try:
        return await open_business(location)
    except StoreError:
        raise  # already one line (a missing driver, an unreachable server)
    except Exception as exc:  # a full disk while seeding, say: one line, never a traceback
        raise StoreError(f"{location}: cannot set up the demo customer data: {exc}") from None
