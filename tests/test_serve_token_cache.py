"""An event stream's token check answered from what the worker knows (issue 34), on both stores.

Every stream's connect read the conversation's row for its token's digest (on PostgreSQL a
statement each). A digest never changes while its conversation lives, so a worker keeps the one it
made or last read, and trusts it only while the change feed is heard: a conversation deleted by
any writer (staff in the TUI, another worker) is forgotten when the feed says so, and the next
check reads (and refuses it). A wrong token, another conversation's, or none is refused at once
from what is kept, as from a read.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from supportdesk.channels.conversations import ApiError, Conversations
from supportdesk.store import open_store
from supportdesk.wiring import open_desk
from tests.serve_harness import repo_desk


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def where(request, tmp_path: Path) -> str:
    return str(tmp_path / "desk.db") if request.param == "sqlite" else request.getfixturevalue("pg_url")


class CountingSessions:
    """The store, with its `get_session` reads counted."""

    def __init__(self, store: Any, reads: list[str]):
        self._store, self._reads = store, reads

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._store, name)
        if name == "get_session":
            async def counted(*args: Any, **kwargs: Any) -> Any:
                self._reads.append(args[0])
                return await attr(*args, **kwargs)

            return counted
        return attr


async def _refused(check: Any, status: int) -> None:
    with pytest.raises(ApiError) as refused:
        await check
    assert refused.value.status == status


async def test_a_streams_token_check_reads_nothing_and_a_deleted_conversation_is_refused(where: str):
    async with await open_desk(where, repo_desk()) as desk:
        conversations = Conversations(desk)
        await conversations.start()
        try:
            async with asyncio.timeout(30):
                await conversations.hub.following.wait()
            forgotten: dict[str | None, asyncio.Event] = {}
            conversations.hub.forgotten.append(lambda sid: forgotten.setdefault(sid, asyncio.Event()).set())
            ours, token = await conversations.create()
            theirs, their_token = await conversations.create()
            reads: list[str] = []
            desk.store = CountingSessions(desk.store, reads)  # type: ignore[misc]

            for _ in range(3):
                await conversations.check_token(ours, token)
            await _refused(conversations.check_token(ours, their_token), 403)  # another conversation's
            await _refused(conversations.check_token(ours, token + "x"), 403)
            await _refused(conversations.check_token(ours, None), 401)
            assert reads == [], reads  # (removed protection: a read each)
            await _refused(conversations.check_token("no-such-conversation", token), 404)
            assert reads == ["no-such-conversation"]  # an unknown one is read (and refused)

            # Staff delete the conversation from another process: the feed says so, and the next
            # check reads and refuses it; the other conversation's digest stays kept.
            async with await open_store(where) as staff:
                assert await staff.delete_session(ours)
            async with asyncio.timeout(30):
                await forgotten.setdefault(ours, asyncio.Event()).wait()
            reads.clear()
            await _refused(conversations.check_token(ours, token), 404)
            assert reads == [ours], reads  # (removed protection: the kept digest let it through)
            await conversations.check_token(theirs, their_token)
            assert reads == [ours], reads
        finally:
            await conversations.close()


async def test_without_the_feed_heard_every_check_reads(where: str):
    """A digest is trusted only while a deletion would be heard."""
    async with await open_desk(where, repo_desk()) as desk:
        conversations = Conversations(desk)  # (not started: no feed)
        ours, token = await conversations.create()
        reads: list[str] = []
        desk.store = CountingSessions(desk.store, reads)  # type: ignore[misc]
        await conversations.check_token(ours, token)
        await _refused(conversations.check_token(ours, "wrong"), 403)
        assert reads == [ours, ours], reads


@pytest.mark.postgres
async def test_a_conversation_created_on_another_worker_is_checked_without_a_read(pg_url: str):
    """Two workers on one PostgreSQL database: a conversation created on one, its streams joining
    on the other (`bench_serve --pg --workers 2`: about 50 of a run's ~900 statements, one a
    conversation). The creation's NOTIFY carries the session's meta, so the other worker keeps
    the digest as it hears the creation; its streams' checks read nothing, and a wrong token is
    still refused from it."""
    async with await open_desk(pg_url, repo_desk()) as here, await open_desk(pg_url, repo_desk()) as there:
        creator, joined = Conversations(here), Conversations(there)
        await creator.start()
        await joined.start()
        try:
            heard: dict[str, asyncio.Event] = {}
            joined.hub.created.append(lambda sid, meta: heard.setdefault(sid, asyncio.Event()).set())
            async with asyncio.timeout(30):
                await joined.hub.following.wait()
            ours, token = await creator.create()
            _, their_token = await creator.create()
            async with asyncio.timeout(30):
                await heard.setdefault(ours, asyncio.Event()).wait()
            reads: list[str] = []
            there.store = CountingSessions(there.store, reads)  # type: ignore[misc]
            await joined.check_token(ours, token)
            await _refused(joined.check_token(ours, their_token), 403)
            await _refused(joined.check_token(ours, None), 401)
            assert reads == [], reads  # (removed protection: the joining worker read the session)
        finally:
            await joined.close()
            await creator.close()


@pytest.mark.postgres
async def test_a_creations_notify_carries_a_small_meta_and_a_large_one_not_at_all(pg_url: str):
    """A NOTIFY payload must stay under 8,000 bytes or the statement fails: a session whose meta
    is larger is still created, its creation heard with no meta (a joining stream reads)."""
    async with await open_store(pg_url) as store, await open_store(pg_url) as other:
        async with await other.follow() as feed:
            small = (await store.create_session("triage", meta={"token_sha256": "ab" * 32, "note": "é\u2028\n"})).id
            large = (await store.create_session("triage", meta={"token_sha256": "cd" * 32, "note": "x" * 9000})).id
            heard: dict[str, Any] = {}
            async with asyncio.timeout(30):
                async for change in feed:
                    heard[change.session_id] = change.meta
                    if len(heard) == 2:
                        break
    assert heard[small] == {"token_sha256": "ab" * 32, "note": "é\u2028\n"}
    assert heard[large] is None
