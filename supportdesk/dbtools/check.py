"""`supportdesk db check [DB]`: what a database holds and whether its log is whole.

Read through the contracts only (`Store`, `StoreAdmin`, `BusinessSnapshot`), so it says the
same of a SQLite file and a PostgreSQL database. A problem is anything the log's own rules
forbid: a seq missing, repeated or past the session's head, a cached count or active agent
that disagrees with the fold of the items, a charge refunded past what was paid or whose
refunds do not add up."""

from __future__ import annotations

from dataclasses import dataclass, field

from supportdesk.business import BusinessSnapshot, find_business
from supportdesk.dbtools.copy import all_sessions, locate, session_items
from supportdesk.store import SessionInfo, Store, StoreAdmin, open_store


@dataclass
class CheckReport:
    where: str
    kind: str
    schema_version: int = 0
    sessions: int = 0
    items: int = 0
    handoffs: int = 0
    forks: int = 0
    business: dict[str, int] | None = None
    problems: list[str] = field(default_factory=list)
    # Facts worth saying that break no rule (a fork whose source was deleted).
    notes: list[str] = field(default_factory=list)


async def check_desk(where: str | None) -> CheckReport:
    location = locate(where, must_exist=True)
    report = CheckReport(str(location), "SQLite" if location.kind == "sqlite" else "PostgreSQL")
    async with await open_store(location) as store:
        if isinstance(store, StoreAdmin):
            report.schema_version = await store.schema_version()
        counted = await store.count_sessions()
        heads: dict[str, int] = {}
        forks: list[SessionInfo] = []
        async for info in all_sessions(store):
            report.sessions += 1
            heads[info.id] = info.item_count
            if info.forked_from is not None:
                forks.append(info)
            await _check_session(store, info, report)
        if counted != report.sessions:
            report.problems.append(f"{counted} sessions counted but {report.sessions} listed")
        report.forks = len(forks)
        for info in forks:
            parent = heads.get(info.forked_from or "")
            if parent is None:
                report.notes.append(f"session {info.id}: forked from {info.forked_from}, which is no longer here")
            elif (info.forked_at or 0) > parent:
                report.problems.append(
                    f"session {info.id}: forked at #{info.forked_at}, past the end of {info.forked_from} (#{parent})"
                )
    business = await find_business(location)
    if business is not None:
        try:
            if isinstance(business, BusinessSnapshot):
                _check_business(await business.snapshot(), report)
        finally:
            await business.close()
    return report


async def _check_session(store: Store, info: SessionInfo, report: CheckReport) -> None:
    items = await session_items(store, info)
    report.items += len(items)
    where = f"session {info.id}"
    seqs = [item.seq for item in items]
    if seqs != list(range(1, info.item_count + 1)):
        missing = sorted(set(range(1, info.item_count + 1)) - set(seqs))
        said = f"seq {missing[0]} missing" if missing else "seqs out of order"
        report.problems.append(f"{where}: {said} ({len(items)} items for a head of #{info.item_count})")
    if any(item.session_id != info.id for item in items):
        report.problems.append(f"{where}: holds items of another session")
    if await store.item(info.id, info.item_count + 1) is not None:
        report.problems.append(f"{where}: items past its head #{info.item_count} (item_count is behind the log)")
    handoffs = [item for item in items if item.kind == "handoff"]
    report.handoffs += len(handoffs)
    if len(handoffs) != info.handoff_count:
        report.problems.append(f"{where}: handoff_count {info.handoff_count}, but {len(handoffs)} handoff items")
    folded = handoffs[-1].to_agent if handoffs else info.entry_agent
    if folded != info.active_agent:
        report.problems.append(f"{where}: active agent {info.active_agent!r}, but the handoffs leave {folded!r}")


def _check_business(tables: dict[str, list[dict]], report: CheckReport) -> None:
    charges = {row["id"]: row for row in tables.get("demo_charges", [])}
    refunded: dict[str, float] = {}
    for refund in tables.get("demo_refunds", []):
        if refund["charge_id"] not in charges:
            report.problems.append(f"refund {refund['id']}: of charge {refund['charge_id']}, which is not here")
        refunded[refund["charge_id"]] = refunded.get(refund["charge_id"], 0.0) + refund["amount"]
    for charge_id, charge in charges.items():
        if charge["refunded_amount"] > charge["amount"] + 0.004:
            report.problems.append(
                f"charge {charge_id}: refunded {charge['refunded_amount']:.2f} of {charge['amount']:.2f}"
            )
        if abs(refunded.get(charge_id, 0.0) - charge["refunded_amount"]) > 0.004:
            report.problems.append(
                f"charge {charge_id}: refunded_amount {charge['refunded_amount']:.2f}, "
                f"but its refunds add up to {refunded.get(charge_id, 0.0):.2f}"
            )
    report.business = {
        "customers": len(tables.get("demo_customers", [])),
        "charges": len(charges),
        "refunds": len(tables.get("demo_refunds", [])),
        "credits": len(tables.get("demo_credits", [])),
        "tickets": len(tables.get("demo_tickets", [])),
        "writes": len(tables.get("demo_writes", [])),
    }
