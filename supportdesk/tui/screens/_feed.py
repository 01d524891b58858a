"""Screens that follow the store's change feed while they are mounted (chat, session browser)."""

from __future__ import annotations

import asyncio

from textual.css.query import NoMatches
from textual.screen import Screen, ScreenResultType

from supportdesk.engine.log import Change, Store, StoreError
from supportdesk.text import safe_text


class FollowsChanges(Screen[ScreenResultType]):
    """Listens to a store's change feed until unmount and hands each change to `on_change`.

    A task, not a worker: it lives as long as the screen, and `workers.wait_for_complete()`
    (tests, quitting) must not wait for a feed that never ends.
    """

    # The warning when the feed fails: the screen stops updating, staff must know.
    FEED_STOPPED = "Live updates stopped"

    _feed_task: asyncio.Task[None] | None = None

    async def on_change(self, change: Change) -> None:
        """Another process or machine wrote to the store."""
        raise NotImplementedError

    def follow_changes(self, store: Store) -> None:
        if self._feed_task is None:
            self._feed_task = asyncio.create_task(self._follow_changes(store), name=f"{type(self).__name__} feed")

    def on_unmount(self) -> None:
        if self._feed_task is not None:
            self._feed_task.cancel()
            self._feed_task = None

    async def _follow_changes(self, store: Store) -> None:
        try:
            async with await store.follow() as feed:
                async for change in feed:
                    await self.on_change(change)
        except StoreError as exc:
            self.notify(safe_text(f"{self.FEED_STOPPED}: {exc}"), severity="warning", markup=False)
        except NoMatches:
            pass  # the screen is closing
