"""Saved replies and macros (replies.toml): validation with one line per mistake, the user's file
over the shipped one, fields from the shared context (a missing one stops the send), macros run as
audited staff actions; from the runner on SQLite and PostgreSQL, and from the chat screen."""

from __future__ import annotations

from pathlib import Path

import pytest

from supportdesk.wiring import open_desk
from supportdesk.engine.protocol import Answer
from supportdesk.engine.runner import drain
from supportdesk.items import StaffReply, StateChange, TagChange
from supportdesk.staff.replies import RepliesError, load_replies, packaged_replies_path, run_macro, send_reply, user_replies_path
from supportdesk.staff import Actor, audit
from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.widgets import Prompt
from tests.conftest import make_test_tools
from tests.scripted import ScriptedModel
from tests.tui_seed import SEED_ID, repo_desk, seed_double_charge, until

AGENTS = ["triage", "billing", "technical", "senior"]
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def test_the_shipped_replies_and_macros_are_valid() -> None:
    shipped = load_replies([packaged_replies_path()], agents=AGENTS)
    assert {"greeting", "refund_done", "closing"} <= set(shipped.replies)
    assert [s.kind for s in shipped.macros["refund_and_close"].steps] == ["reply", "tag", "state"]


def test_every_mistake_is_one_line_naming_where_it_is(tmp_path: Path) -> None:
    path = tmp_path / "replies.toml"
    path.write_text(
        """
[replies.ok]
text = "Hi {customer_name}"
[replies.empty]
text = ""
[replies.braces]
text = "Hi {customer name}"
[macros.bad]
steps = [
  { reply = "nope" },
  { state = "snoozed" },
  { snooze = "tomorrow" },
  { handoff = "nobody" },
  { priority = "asap" },
  { dance = "now" },
  { tag = "a", note = "two actions" },
]
[macros.none]
steps = []
[other]
x = 1
""",
        encoding="utf-8",
    )
    with pytest.raises(RepliesError) as caught:
        load_replies([path], agents=AGENTS)
    problems = caught.value.problems
    expected = [
        "other: unknown table",
        "replies.empty.text: must be the reply's text",
        "replies.braces.text: {customer name} is not a field name",
        "macros.bad.steps[1]: no saved reply 'nope'",
        "macros.bad.steps[2]: state 'snoozed': must be one of resolved, needs_staff, ai",
        "macros.bad.steps[3]: 'tomorrow' is not a duration",
        "macros.bad.steps[4]: no agent named 'nobody'",
        "macros.bad.steps[5]: priority 'asap'",
        "macros.bad.steps[6]: unknown action 'dance'",
        "macros.bad.steps[7]: must be one action",
        "macros.none.steps: must be a list of steps",
    ]
    assert len(problems) == len(expected)
    for says in expected:
        assert sum(says in p for p in problems) == 1, (says, problems)
    assert all("\n" not in p and p.startswith(str(path)) for p in problems)
    path.write_text("[replies.x\ntext = 1", encoding="utf-8")
    with pytest.raises(RepliesError, match="not valid TOML"):
        load_replies([path])


def test_the_users_file_replaces_a_shipped_reply_by_name(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    user = user_replies_path()
    user.parent.mkdir(parents=True)
    user.write_text('[replies.greeting]\ntext = "Hello from our own desk."\n', encoding="utf-8")
    replies = load_replies(agents=AGENTS)
    assert replies.replies["greeting"].text == "Hello from our own desk." and "refund_done" in replies.replies


@pytest.fixture(params=BACKENDS)
def where(request, tmp_path):
    return tmp_path / "desk.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")


async def test_a_reply_is_filled_from_the_context_and_a_missing_field_sends_nothing(where, test_desk) -> None:
    tools, _ = make_test_tools()
    replies = load_replies([packaged_replies_path()])
    async with await open_desk(where, test_desk, provider=ScriptedModel([Answer("hi")]), tools=tools, customers=False) as desk:
        [started, *_] = await drain(desk.runner.send(None, "I was charged twice"))
        sid = started.session_id
        head = await desk.store.last_seq(sid)
        with pytest.raises(RepliesError, match=r"needs \{customer_email\}.*/set customer_email"):
            await send_reply(desk.runner, sid, replies.replies["refund_done"], Actor("dana"))
        with pytest.raises(RepliesError):  # the macro's reply is filled before any step runs
            await run_macro(desk.runner, sid, replies.macros["refund_and_close"], replies, Actor("dana"))
        assert await desk.store.last_seq(sid) == head

        await desk.runner.set_context(sid, "customer_email", "dana@example.com", by=Actor("dana"))
        sent = await send_reply(desk.runner, sid, replies.replies["refund_done"], Actor("dana"))
        assert isinstance(sent, StaffReply) and sent.text.startswith("Hi dana@example.com: the duplicate")
        done = await run_macro(desk.runner, sid, replies.macros["refund_and_close"], replies, Actor("dana", "tui"))
        assert [type(i) for i in done] == [StaffReply, TagChange, StateChange]
        log = await desk.store.range(sid, 1, await desk.store.last_seq(sid))
        entries = audit(log)
        assert [(e.action, e.macro) for e in entries[-3:]] == [
            ("reply", "refund_and_close"), ("tag", "refund_and_close"), ("state", "refund_and_close")]
        assert [e.macro for e in entries[:-3]] == ["", ""]  # the context edit and the lone reply


async def test_reply_and_macro_from_the_chat_screen(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SUPPORTDESK_STAFF", "dana")
    db = tmp_path / "desk.db"
    desk = await repo_desk(db)
    await seed_double_charge(desk.store)  # its context holds customer_email
    await desk.close()
    app = SupportDeskApp(desk_factory=lambda: repo_desk(db), session_id=SEED_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.loaded == SEED_ID)
        store = app.desk.store
        head = await store.last_seq(SEED_ID)

        async def typed(text: str) -> None:
            app.chat.query_one(Prompt).value = text
            await pilot.press("enter")

        await typed("/reply nosuch")
        await until(pilot, lambda: any("no saved reply 'nosuch'" in str(n.message) for n in app._notifications))
        await pilot.press("f8")
        await until(pilot, lambda: app.chat.query_one(Prompt).value == "/reply ")
        await typed("/reply refund_done")
        await until(pilot, lambda: app.chat.query_one("#desk-state") is not None and app.chat.conv_state is not None
                    and app.chat.conv_state.last_role == "staff")
        reply = await store.item(SEED_ID, head + 1)
        assert isinstance(reply, StaffReply) and reply.text.startswith("Hi dana@example.com")
        await typed("/macro refund_and_close")
        await until(pilot, lambda: app.chat.conv_state is not None and app.chat.conv_state.state == "resolved")
        assert "#refund" in str(app.chat.query_one("#desk-state").render())
        assert await store.last_seq(SEED_ID) == head + 4
