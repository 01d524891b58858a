"""A desk: the config, the session store and the runner working on them, opened together.

`supportdesk.wiring.open_desk` builds one (it is the module that knows the providers, tools
and hooks plugged in); everything above it holds a `Desk` and closes it when done.
"""

from __future__ import annotations

from dataclasses import dataclass

from supportdesk.config import DeskConfig
from supportdesk.engine.runner import Runner
from supportdesk.engine.tools import Services
from supportdesk.store import Store

__all__ = ["Desk", "Services"]


@dataclass
class Desk:
    config: DeskConfig
    store: Store
    runner: Runner
    services: Services

    async def close(self) -> None:
        self.runner.close_hooks()
        if self.runner.provider_built:  # a model never built has nothing to close
            await self.runner.provider.aclose()
        await self.services.close()
        await self.store.close()

    async def __aenter__(self) -> Desk:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
