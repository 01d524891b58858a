"""`DeskSession`: the OpenAI Agents SDK's `Session` protocol on the desk's store.

    session = DeskSession("case-42", "desk.db")
    result = await Runner.run(triage_agent, "I was charged twice", session=session, hooks=session.hooks)

What the SDK stores becomes our item kinds (messages, tool calls and results, handoffs) with the
agent that held the conversation, so the run opens in the TUI, replays and steps through its
handoffs like a desk session. `get_items` gives back exactly the SDK items `SQLiteSession` would:
each of our items keeps its SDK item verbatim in `meta`, and items the desk wrote itself (a staff
note, a reply from our own runner) come back as SDK input items.

The log stays append-only: `pop_item` and `clear_session` append a tombstone notice instead of
deleting (see docs/architecture.md, "Integrations"). A session is read back by walking from its
end: a `clear_session` tombstone stops the walk, each `pop_item` tombstone hides the next live
item below it (stack order, so two racing pops still hide two items).

Who held each item: the log's fold (the session's entry agent, then each handoff's target), with
the run's own starting agent when the SDK hands us its run context (`wrapper`) and the run was
started with `hooks=session.hooks`; the SDK's context carries no agent itself.

Requires the `agents` extra (`pip install 'supportdesk[agents]'`); nothing in the desk imports
this module.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from agents import RunHooks
from agents.memory import SessionSettings
from agents.memory.session_settings import coerce_session_settings, resolve_session_limit

from supportdesk.integrations.sdk_items import (
    DESK_ONLY_KEY,
    SdkItem,
    clear_tombstone,
    item_from_sdk,
    pop_tombstone,
    sdk_from_item,
    tombstone_of,
)
from supportdesk.items import Handoff, Item, ToolCall
from supportdesk.store import Store, open_store

# The channel our store records for sessions an SDK run writes.
CHANNEL = "agents-sdk"
# Who holds a new session when neither the caller nor the run says.
DEFAULT_AGENT = "agent"
# Items read per step of the walk back from the end (doubling up to the cap).
_FIRST_PAGE = 64
_MAX_PAGE = 4096
# How far back an output looks for its call when an earlier write stored the call.
_CALL_LOOKBACK = 512


async def live_items(store: Store, session_id: str, limit: int | None) -> list[tuple[Item, SdkItem]]:
    """The session's SDK-visible items, oldest first: the latest `limit` of them, or all."""
    found: list[tuple[Item, SdkItem]] = []
    pending_pops = 0
    high = await store.last_seq(session_id)
    page = _FIRST_PAGE
    while high >= 1 and (limit is None or len(found) < limit):
        low = max(1, high - page + 1)
        for item in reversed(await store.range(session_id, low, high)):
            marker = tombstone_of(item)
            if marker == "clear_session":
                return found[::-1]
            if marker == "pop_item":
                pending_pops += 1
                continue
            raw = sdk_from_item(item)
            if raw is None:
                continue
            if pending_pops:
                pending_pops -= 1
                continue
            found.append((item, raw))
            if limit is not None and len(found) >= limit:
                break
        high = low - 1
        page = min(page * 2, _MAX_PAGE)
    return found[::-1]


class _RunAgents:
    """The agent each SDK run started with, keyed by the run's usage object.

    The SDK's run context (the `wrapper` our methods receive) and the context its hooks receive
    share one `Usage` object per run, so it names the run without holding the run alive.
    """

    def __init__(self) -> None:
        self._started: dict[int, tuple[weakref.ref[Any], str]] = {}
        self._claimed: set[int] = set()

    def _forgetter(self, key: int) -> Callable[[Any], None]:
        """The callback that forgets `key` once its usage object is gone."""
        return lambda _ref: self._forget(key)

    def record(self, usage: Any, agent: str) -> None:
        key = id(usage)
        known = self._started.get(key)
        if known is None or known[0]() is not usage:
            self._claimed.discard(key)
            self._started[key] = (weakref.ref(usage, self._forgetter(key)), agent)

    def _forget(self, key: int) -> None:
        self._started.pop(key, None)
        self._claimed.discard(key)

    def claim_start(self, wrapper: Any) -> str | None:
        """The agent this run started with, once: later writes of the run follow its handoffs."""
        usage = getattr(wrapper, "usage", None)
        key = id(usage)
        known = self._started.get(key) if usage is not None else None
        if known is None or known[0]() is not usage or key in self._claimed:
            return None
        self._claimed.add(key)
        return known[1]


class _StartHooks(RunHooks[Any]):
    def __init__(self, runs: _RunAgents) -> None:
        self._runs = runs

    async def on_agent_start(self, context: Any, agent: Any) -> None:
        self._runs.record(context.usage, agent.name)


class DeskSession:
    """An Agents SDK session kept as a desk session.

    `db` is a SQLite path or a database URL, as `--db` (default: the desk's default database),
    opened and closed around each call; or a `Store` the caller already holds open on the event
    loop the agent runs in (cheaper on PostgreSQL, where opening a store sets up a pool).
    """

    def __init__(
        self,
        session_id: str,
        db: str | os.PathLike[str] | Store | None = None,
        *,
        session_settings: SessionSettings | dict[str, Any] | None = None,
        entry_agent: str | None = None,
    ) -> None:
        self.session_id = session_id
        self.session_settings = (
            coerce_session_settings(session_settings) if session_settings is not None else SessionSettings()
        )
        self.db = db
        self.entry_agent = entry_agent
        self._runs = _RunAgents()
        self.hooks: RunHooks[Any] = _StartHooks(self._runs)
        self._closed = False

    # --- the SDK's Session protocol ------------------------------------------------------------

    async def get_items(self, limit: int | None = None, *, wrapper: Any = None) -> list[SdkItem]:
        wanted = resolve_session_limit(limit, self.session_settings)
        if wanted is not None and wanted <= 0:
            # SQLite's LIMIT: 0 is nothing, a negative limit is no limit.
            if wanted == 0:
                return []
            wanted = None
        async with self._store() as store:
            return [raw for _item, raw in await live_items(store, self.session_id, wanted)]

    async def add_items(self, items: list[SdkItem], *, wrapper: Any = None) -> None:
        self._check_open()
        if not items:
            return
        async with self._store() as store:
            info = await store.get_session(self.session_id)
            run_agent = self._runs.claim_start(wrapper)
            if info is None:
                entry = run_agent or self.entry_agent or DEFAULT_AGENT
                info = await self._create(store, entry)
            holder = info.active_agent
            ours: list[Item] = []
            if run_agent is not None and run_agent != holder:
                # The SDK app started this run with another agent than the one holding the
                # session (many put every turn back to triage): say so on the timeline.
                ours.append(
                    Handoff(
                        from_agent=holder,
                        to_agent=run_agent,
                        reason="the Agents SDK run started with this agent",
                        handoff_kind="return",
                        agent=holder,
                        meta={DESK_ONLY_KEY: True},
                    )
                )
                holder = run_agent
            calls = await self._recent_calls(store, items)
            for raw in items:
                item = item_from_sdk(dict(raw), agent=holder, calls=calls)
                if isinstance(item, ToolCall):
                    calls[item.call_id] = item
                ours.append(item)
                if isinstance(item, Handoff):
                    holder = item.to_agent
            await store.append(self.session_id, ours)

    async def pop_item(self, *, wrapper: Any = None) -> SdkItem | None:
        self._check_open()
        async with self._store() as store:
            latest = await live_items(store, self.session_id, 1)
            if not latest:
                return None
            item, raw = latest[0]
            info = await store.get_session(self.session_id)
            await store.append(self.session_id, [pop_tombstone(item, info.active_agent if info else item.agent)])
            return raw

    async def clear_session(self, *, wrapper: Any = None) -> None:
        self._check_open()
        async with self._store() as store:
            info = await store.get_session(self.session_id)
            if info is not None and info.item_count:
                await store.append(self.session_id, [clear_tombstone(info.active_agent)])

    def close(self) -> None:
        """Nothing stays open between calls; later calls raise, as on a closed SQLiteSession."""
        self._closed = True

    # --- helpers -----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("DeskSession is closed")

    @asynccontextmanager
    async def _store(self) -> AsyncIterator[Store]:
        # One connection per call: the SDK calls from whichever event loop runs the agent
        # (`Runner.run_sync` makes its own), and nothing is left open for the caller to close.
        self._check_open()
        if isinstance(self.db, Store):
            yield self.db
            return
        store = await open_store(self.db)
        try:
            yield store
        finally:
            await store.close()

    async def _create(self, store: Store, entry: str) -> Any:
        meta = {"source": "openai-agents", "sdk_session_id": self.session_id}
        try:
            return await store.create_session(entry, session_id=self.session_id, channel=CHANNEL, meta=meta)
        except Exception:
            # Another writer created it first (the id is the primary key): use theirs.
            info = await store.get_session(self.session_id)
            if info is None:
                raise
            return info

    async def _recent_calls(self, store: Store, items: Sequence[SdkItem]) -> dict[str, ToolCall]:
        """Function calls an output in this batch answers but which an earlier batch stored."""
        wanted = {
            str(raw.get("call_id"))
            for raw in items
            if raw.get("type") == "function_call_output"
        } - {str(raw.get("call_id")) for raw in items if raw.get("type") == "function_call"}
        if not wanted:
            return {}
        calls: dict[str, ToolCall] = {}
        last = await store.last_seq(self.session_id)
        # A call and its output are written by one run, so they sit close together.
        for item in await store.range(self.session_id, max(1, last - _CALL_LOOKBACK + 1), last):
            if isinstance(item, ToolCall) and item.call_id in wanted:
                calls[item.call_id] = item
        return calls
