"""Wiring: a desk file and a database become a ready runner."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from supportdesk.config import DeskConfig, load_desk
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
) -> Desk:
    """Open the database and desk. Raises ConfigError or StoreError with user-facing text."""
    cfg = config if isinstance(config, DeskConfig) else load_desk(config)
    location = parse_location(db)
    store = await open_store(location)
    try:
        services = Services()
        # A read-only database can be read (replay, export) but no tool may act on its data.
        if customers and not getattr(store, "readonly", False):
            services.customers = await _open_customers(location)
        if tools is None:
            from supportdesk.tools import registry as tools
        if provider is None:
            from supportdesk.models import make_provider

            provider = make_provider(cfg)
    except BaseException:
        await store.close()
        raise
    return Desk(cfg, store, Runner(store, cfg, provider, tools, services), services)


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
