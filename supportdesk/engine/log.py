"""The session log as the layers above the engine see it.

The TUI and the channels read sessions through the `Store` a `Desk` holds (the stats dashboard
opens one of its own, to read only); these are the types they exchange with it, named here so nothing above the engine imports `supportdesk.store`
(the import rule in tests/test_layers.py). Which adapter is behind the `Store` stays the
store's business.
"""

from __future__ import annotations

from supportdesk.store import (
    Change,
    ContextEntry,
    DeskRow,
    SearchHit,
    SessionInfo,
    Store,
    StoreError,
    StoreLocation,
    StoreLocationError,
    default_db_path,
    open_store,
)
from supportdesk.store.figures import Distribution, OfferRow

__all__ = [
    "Change",
    "ContextEntry",
    "DeskRow",
    "Distribution",
    "OfferRow",
    "SearchHit",
    "SessionInfo",
    "Store",
    "StoreError",
    "StoreLocation",
    "StoreLocationError",
    "default_db_path",
    "open_store",
]
