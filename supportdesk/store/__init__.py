"""The session store: one contract (`Store`), a SQLite and a PostgreSQL adapter on one
dialect-free core (`core.py`: what both share; each adapter holds only what differs).

Nothing outside this package writes SQL or imports a database driver. `open_store` is the one
way in: it reads `--db`/`$SUPPORTDESK_DB` as a path or URL and imports only the adapter it
needs (the PostgreSQL driver is an optional extra).
"""

from __future__ import annotations

import os
from typing import assert_never

from supportdesk.store.location import StoreLocation, default_db_path, parse_location, redact_url
from supportdesk.store.protocol import (
    MATCH_END,
    MATCH_START,
    Change,
    ContextEntry,
    EXTERNAL_ID,
    DeskRow,
    DuplicateItem,
    HeadMoved,
    LeaseLost,
    SearchHit,
    SessionInfo,
    Store,
    StoreAdmin,
    StoreError,
    StoreLocationError,
    TurnLease,
    TurnStart,
)
from supportdesk.store.sessions import SessionStore

POSTGRES_EXTRA = "pip install 'supportdesk[postgres]'"


async def open_store(where: str | os.PathLike[str] | StoreLocation | None = None) -> Store:
    """Open the store at a path or URL (default: $SUPPORTDESK_DB, else the data folder)."""
    location = where if isinstance(where, StoreLocation) else parse_location(where)
    # One case per kind of `StoreLocation.kind`: a kind added there and not here fails mypy
    # (assert_never), and at run time it is refused, never opened by another kind's adapter.
    match location.kind:
        case "sqlite":
            return await SessionStore.open(location.target)
        case "postgresql":
            try:
                from supportdesk.store.postgres import PostgresStore
            except ImportError as exc:
                if getattr(exc, "name", None) not in (None, "asyncpg") and "asyncpg" not in str(exc):
                    raise
                raise StoreLocationError(
                    f"{location}: PostgreSQL support is not installed; install it with {POSTGRES_EXTRA}"
                ) from None
            return await PostgresStore.open(location)
        case _:
            assert_never(location.kind)


__all__ = [
    "MATCH_END",
    "MATCH_START",
    "Change",
    "ContextEntry",
    "DeskRow",
    "DuplicateItem",
    "HeadMoved",
    "EXTERNAL_ID",
    "SearchHit",
    "SessionInfo",
    "SessionStore",
    "Store",
    "StoreAdmin",
    "StoreError",
    "LeaseLost",
    "StoreLocation",
    "StoreLocationError",
    "TurnLease",
    "TurnStart",
    "default_db_path",
    "open_store",
    "parse_location",
    "redact_url",
]
