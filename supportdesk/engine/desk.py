"""A desk: the config, the session store and the runner working on them, opened together.

`supportdesk.wiring.open_desk` builds one (it is the module that knows the providers, tools
and hooks plugged in); everything above it holds a `Desk` and closes it when done.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from supportdesk.config import DeskConfig
from supportdesk.engine.later import Later, ready
from supportdesk.engine.services import Services
from supportdesk.store import Store

if TYPE_CHECKING:
    from supportdesk.engine.runner import Runner

__all__ = ["Desk", "Services"]


class Desk:
    def __init__(self, config: DeskConfig, store: Store, runner: Runner | Later[Runner], services: Services):
        self.config = config
        self.store = store
        self.services = services
        # Deferred (the TUI's first page): the runner module, with the hooks, the tool mechanism
        # and the model protocol it imports, loads when a turn or a staff action first needs it,
        # or in the app's warm-up thread, not on the way to the first page.
        self._runner = runner

    @property
    def runner(self) -> Runner:
        return ready(self._runner)

    async def close(self) -> None:
        if not isinstance(self._runner, Later) or self._runner.built:  # one never built has nothing to close
            runner = self.runner
            runner.close_hooks()
            if runner.provider_built:  # a model never built has nothing to close
                await runner.provider.aclose()
        await self.services.close()
        await self.store.close()

    async def __aenter__(self) -> Desk:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
