"""The desk's business data: customers, plans, invoices, charges, refunds, credits, tickets.

Not session storage (that is `supportdesk.store`): its own contract (`BusinessData`, what the
tools need) and its own adapters. Today both are the demo data set, kept in the same database
as the session log: `SqliteBusiness` in the SQLite file, `PostgresBusiness` (the `postgres`
extra, imported only for a postgresql:// URL) in the PostgreSQL database, both standing on
`core.py` (the reads, writes and statements written once; each adapter keeps its driver and
dialect).
"""

from __future__ import annotations

import os
from typing import assert_never

from supportdesk.business.protocol import (
    BusinessData,
    BusinessError,
    BusinessSnapshot,
    LimitReached,
    MoneyLimits,
    Row,
    call_key,
)
from supportdesk.store.location import StoreLocation, parse_location
from supportdesk.store.protocol import StoreLocationError

POSTGRES_EXTRA = "pip install 'supportdesk[postgres]'"


async def open_business(where: str | os.PathLike[str] | StoreLocation | None = None) -> BusinessData:
    """Open the business data in the database at a path or URL (as `--db` names it), creating
    and seeding the demo tables on first use."""
    location = where if isinstance(where, StoreLocation) else parse_location(where)
    match location.kind:
        case "sqlite":
            from supportdesk.business.sqlite import SqliteBusiness

            return await SqliteBusiness.open(location.target)
        case "postgresql":
            try:
                from supportdesk.business.postgres import PostgresBusiness
            except ImportError as exc:
                if "asyncpg" not in str(exc) and getattr(exc, "name", None) != "asyncpg":
                    raise
                raise StoreLocationError(
                    f"{location}: PostgreSQL support is not installed; install it with {POSTGRES_EXTRA}"
                ) from None
            return await PostgresBusiness.open(location)
        case _ as unreachable:
            assert_never(unreachable)


async def find_business(where: str | os.PathLike[str] | StoreLocation | None = None) -> BusinessData | None:
    """The business data already in the database at a path or URL, or None when it holds none.
    Never creates or seeds anything (the source of `supportdesk db copy` stays untouched)."""
    location = where if isinstance(where, StoreLocation) else parse_location(where)
    match location.kind:
        case "sqlite":
            from supportdesk.business.sqlite import SqliteBusiness

            return await SqliteBusiness.open_existing(location.target)
        case "postgresql":
            from supportdesk.business.postgres import PostgresBusiness

            return await PostgresBusiness.open_existing(location)
        case _ as unreachable:
            assert_never(unreachable)


__all__ = [
    "BusinessData", "BusinessError", "BusinessSnapshot", "LimitReached", "MoneyLimits", "Row", "call_key", "find_business",
    "open_business",
]
