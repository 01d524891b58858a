"""`supportdesk stats` in a terminal: the dashboard screen on its own, over a store opened in the
app's loop (no desk, no model: the figures need only the store and the desk file's prices)."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from textual.app import App

from supportdesk.items import utcnow
from supportdesk.tui import themes as desk_themes
from supportdesk.tui.screens.dashboard import DashboardScreen

if TYPE_CHECKING:
    from supportdesk.config import DeskConfig
    from supportdesk.reports.stats import RangeName
    from supportdesk.engine.log import Store, StoreLocation


class StatsApp(App[int]):
    TITLE = "supportdesk stats"

    def __init__(
        self,
        db: str | os.PathLike[str] | StoreLocation | None,
        config: DeskConfig | None,
        range_name: RangeName,
        *,
        clock: Callable[[], datetime] = utcnow,
        tz: tzinfo | None = None,
        theme: str | None = None,
    ) -> None:
        super().__init__()
        self.db, self.config, self.range_name = db, config, range_name
        self.clock, self.tz = clock, tz
        self.requested_theme = theme
        self.store: Store | None = None

    async def on_mount(self) -> None:
        from supportdesk.engine.log import open_store

        loaded, _errors = desk_themes.load_themes()  # a broken user theme is the main app's to report
        for theme in loaded:
            self.register_theme(theme)
        chosen = self.requested_theme or desk_themes.remembered_theme() or desk_themes.DEFAULT_THEME
        self.theme = chosen if chosen in self.available_themes else desk_themes.DEFAULT_THEME
        self.store = await open_store(self.db)
        await self.push_screen(
            DashboardScreen(self.store, self.config, self.range_name, clock=self.clock, tz=self.tz),
            lambda _: self.exit(0),
        )

    async def on_unmount(self) -> None:
        if self.store is not None:
            await self.store.close()
