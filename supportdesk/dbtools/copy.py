"""`supportdesk db copy SRC DST`: a whole desk from one database to another, through the
contracts only (`Store` + `StoreAdmin` for sessions, `BusinessSnapshot` for the business data),
so SQLite -> PostgreSQL, PostgreSQL -> SQLite and same-kind copies are one code path.

Resumable: a session is written in one transaction, so after an interruption each one is
either wholly in DST or absent. A rerun skips the sessions DST already holds exactly as SRC
does (same session row, same last item) and copies the rest. A session of the same id that
differs (DST was used since, or SRC changed) is refused before anything is written: nothing in
DST is ever overwritten. The business data replaces DST's only when DST holds no writes
(refunds, credits ...) that SRC lacks, i.e. when DST's is the fresh seed or an earlier copy.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

from supportdesk.business import BusinessSnapshot, find_business, open_business
from supportdesk.items import Item, item_to_json
from supportdesk.store import SessionInfo, Store, StoreAdmin, StoreError, StoreLocation, StoreLocationError, open_store
from supportdesk.store.location import parse_location

PAGE = 500  # sessions listed, and items read, per request


class CopyRefused(StoreError):
    """DST holds something a copy would overwrite: one line saying what."""


@dataclass
class CopyReport:
    copied: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    items: int = 0
    # "copied", "already there", "none in SRC"
    business: str = ""


@dataclass
class CopyProgress:
    """What the command shows while it copies: called with totals, then per copied session."""

    start: Callable[[int, int], None] = lambda sessions, items: None
    copied: Callable[[SessionInfo], None] = lambda info: None


def locate(where: str | None, *, must_exist: bool) -> StoreLocation:
    location = parse_location(where)
    if must_exist and location.kind == "sqlite" and not Path(location.target).is_file():
        raise StoreLocationError(f"{location}: no such database file")
    return location


def _same_database(a: StoreLocation, b: StoreLocation) -> bool:
    if a.kind != b.kind:
        return False
    if a.kind == "sqlite":
        return Path(a.target).resolve() == Path(b.target).resolve()
    return a.target == b.target


async def all_sessions(store: Store) -> AsyncIterator[SessionInfo]:
    """Every session, a page at a time (newest activity first). Copy a desk at rest: sessions
    that gain items during a copy may move between pages."""
    offset = 0
    while True:
        page = await store.list_sessions(limit=PAGE, offset=offset)
        for info in page:
            yield info
        if len(page) < PAGE:
            return
        offset += len(page)


async def session_items(store: Store, info: SessionInfo) -> list[Item]:
    items: list[Item] = []
    for first in range(1, info.item_count + 1, PAGE):
        items += await store.range(info.id, first, min(first + PAGE - 1, info.item_count))
    return items


async def _copied_whole(source: Store, dest: Store, info: SessionInfo, there: SessionInfo) -> bool:
    if there != info:
        return False
    if info.item_count == 0:
        return True
    mine, theirs = await source.item(info.id, info.item_count), await dest.item(info.id, info.item_count)
    return mine is not None and theirs is not None and item_to_json(mine) == item_to_json(theirs)


def _admin(store: Store) -> StoreAdmin:
    if not isinstance(store, StoreAdmin):
        raise StoreError(f"{store.location}: this store cannot take part in a copy")
    return store


async def copy_desk(src: str, dst: str, progress: CopyProgress | None = None) -> CopyReport:
    progress = progress or CopyProgress()
    src_at, dst_at = locate(src, must_exist=True), locate(dst, must_exist=False)
    if _same_database(src_at, dst_at):
        raise StoreLocationError(f"{src_at} and {dst_at} are the same database; name another DST")
    report = CopyReport()
    async with await open_store(src_at) as source, await open_store(dst_at) as dest:
        writer = _admin(dest)
        # Plan everything before writing anything: a refusal leaves DST as it was.
        todo: list[SessionInfo] = []
        clashes: list[str] = []
        async for info in all_sessions(source):
            there = await dest.get_session(info.id)
            if there is None:
                todo.append(info)
            elif await _copied_whole(source, dest, info, there):
                report.skipped.append(info.id)
            else:
                clashes.append(info.id)
        if clashes:
            more = f" and {len(clashes) - 1} more" if len(clashes) > 1 else ""
            raise CopyRefused(
                f"{dst_at} already holds session {clashes[0]!r}{more} with other content than {src_at}; "
                "refusing to overwrite (copy into an empty database, or delete those sessions there)"
            )
        source_business = await find_business(src_at)
        snapshot = None
        if source_business is not None:
            try:
                snapshot = await _business_snapshot(source_business)
            finally:
                await source_business.close()
        dest_business = await open_business(dst_at) if snapshot is not None else None
        try:
            if dest_business is not None and snapshot is not None:
                report.business = await _plan_business(dest_business, snapshot, dst_at, src_at)
            else:
                report.business = "none in SRC"
            progress.start(len(todo), sum(info.item_count for info in todo))
            for info in todo:
                items = await session_items(source, info)
                await writer.import_session(info, items, await source.usage_totals(info.id))
                report.copied.append(info.id)
                report.items += len(items)
                progress.copied(info)
            if report.business == "copied":
                assert isinstance(dest_business, BusinessSnapshot) and snapshot is not None
                await dest_business.restore(snapshot)
        finally:
            if dest_business is not None:
                await dest_business.close()
    return report


async def _business_snapshot(business: object) -> dict[str, list[dict]]:
    if not isinstance(business, BusinessSnapshot):
        raise StoreError("the source's business data cannot be copied (not a demo data set)")
    return await business.snapshot()


async def _plan_business(dest: object, snapshot: dict[str, list[dict]], dst_at: StoreLocation, src_at: StoreLocation) -> str:
    """'copied' when DST's business data may be replaced, 'already there' when it is SRC's."""
    theirs = await _business_snapshot(dest)
    if theirs == snapshot:
        return "already there"
    source_keys = {row["key"] for row in snapshot.get("demo_writes", [])}
    extra = [row["key"] for row in theirs.get("demo_writes", []) if row["key"] not in source_keys]
    if extra:
        raise CopyRefused(
            f"{dst_at} holds business writes (refunds, credits ...) that {src_at} does not ({len(extra)}, "
            f"first {extra[0]!r}); refusing to overwrite its business data"
        )
    return "copied"
