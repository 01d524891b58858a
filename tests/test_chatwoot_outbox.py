"""The session's log is the Chatwoot bot's outbox: a reply stored but not yet relayed when the
worker stopped is relayed when a worker starts, after the last item marked relayed
(`ChatwootChannel.start`, `_relayed_upto`), and what was relayed before is not posted again."""

from __future__ import annotations

from supportdesk.channels.chatwoot import RELAYED, session_id_for
from supportdesk.items import Message, Notice
from supportdesk.store import SessionStore
from tests.chatwoot_fake import ACCOUNT, fake_chatwoot
from tests.serve_harness import serving
from tests.test_chatwoot import ENV, chatwoot_desk


async def test_a_reply_stored_but_not_relayed_before_the_worker_stopped_is_relayed_once_on_start(db_path):
    session_id = session_id_for(ACCOUNT, 52)
    async with await SessionStore.open(db_path) as store:
        await store.create_session("triage", session_id=session_id, channel="chatwoot", meta={"chatwoot_conversation": 52})
        stored = await store.append(session_id, [
            Message(role="customer", text="hello", agent="triage", meta={"chatwoot_message_id": 10101}),
            Message(role="agent", text="first reply, relayed", agent="triage"),
        ])
        await store.append(session_id, [
            Notice(notice_kind="info", text=f"relayed item {stored[1].seq} to Chatwoot", data={RELAYED: stored[1].seq}, agent="triage"),
            Message(role="customer", text="and another thing", agent="triage", meta={"chatwoot_message_id": 10102}),
        ])
        # The second reply is stored; the worker stops before relaying it.
        await store.append(session_id, [Message(role="agent", text="second reply, not yet relayed", agent="triage")])
    async with fake_chatwoot() as fake:
        options = {"env": ENV, "retry_first": 0.01, "retry_cap": 0.05}
        async with serving(db_path, chatwoot_desk(fake.url), chatwoot_options=options) as served:
            await fake.wait_for(lambda: len(fake.messages(52)) >= 1, timeout=10)
            await served.conversations.idle()
    # The relay posts in seq order: the first post being the second reply means the first reply,
    # marked relayed, was not posted again; and nothing unanswered was left to answer.
    assert [c.body["content"] for c in fake.messages(52)] == ["second reply, not yet relayed"]
