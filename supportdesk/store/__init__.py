"""The SQLite session store. Nothing outside this package writes SQL."""

from supportdesk.store.sessions import (
    MATCH_END,
    MATCH_START,
    ContextEntry,
    SearchHit,
    SessionInfo,
    SessionStore,
    StoreError,
    default_db_path,
)

__all__ = [
    "MATCH_END",
    "MATCH_START",
    "ContextEntry",
    "SearchHit",
    "SessionInfo",
    "SessionStore",
    "StoreError",
    "default_db_path",
]
