"""What the desk's tools act on, opened when first needed.

Its own module so that opening a desk (the TUI's first page) does not import the tool
mechanism, pydantic's argument models and the model protocol with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from supportdesk.business.protocol import BusinessData


@dataclass
class Services:
    """What tools act on. `customers` is the desk's business data (customers, charges ...).

    A deferred desk (the TUI's) opens it on first need rather than at start-up: `opener` is
    set, `customers` is None until `ready()` has run. On a new database, seeding the demo data
    is 25-40 ms that the first page does not need."""

    customers: BusinessData | None = None
    opener: Callable[[], Awaitable[BusinessData]] | None = None
    _opening: asyncio.Future[BusinessData] | None = field(default=None, repr=False)

    async def ready(self) -> None:
        """Open the deferred business data (once, however many callers wait for it)."""
        if self.opener is None or self.customers is not None:
            return
        if self._opening is None:
            self._opening = asyncio.ensure_future(self.opener())
        # Shielded: a turn cancelled while it waits must not cancel an open other turns share.
        self.customers = await asyncio.shield(self._opening)

    async def close(self) -> None:
        if self._opening is not None:
            # An open in flight finishes before it is closed: cancelled midway, its connection's
            # thread would outlive the desk. (One that failed left nothing to close.)
            await asyncio.wait([self._opening])
            if not self._opening.cancelled() and self._opening.exception() is None:
                self.customers = self._opening.result()
        if self.customers is not None:
            await self.customers.close()
