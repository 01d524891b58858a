"""What customers read stays worth reading (issue 39 §5): the shared context's `issue` keeps the
customer's problem when a later message only says who they are or that it is urgent, and a
knowledge-base article already given in the conversation is not pasted again word for word.

Real desk (runner, tools, demo data, a real SQLite file) through the offline model.
"""

from __future__ import annotations

import pytest

from supportdesk.engine.events import Appended
from supportdesk.items import Message
from supportdesk.models.offline import cues
from supportdesk.staff import Actor
from supportdesk.wiring import open_desk
from tests.conftest import REPO
from tests.test_offline_moves import talk

SYNC = "my files are not syncing on windows"
FIRST_STEP = "Check that every device is signed in to the same account and online."


@pytest.mark.parametrize(
    "text",
    ["It's dana@example.com. Please hurry.", "dana@example.com - please be quick, I'm in a rush", "email is dana@example.com, hurry up pls"],
)
def test_an_email_with_a_plea_for_speed_is_only_facts(text):
    assert cues.only_facts(text)


def test_a_plea_with_a_problem_is_not_only_facts():
    assert not cues.only_facts("It's dana@example.com. Please hurry, my files are gone")


async def test_an_email_and_a_plea_after_a_release_to_triage_keep_the_issue(tmp_path):
    desk = await open_desk(tmp_path / "desk.db", str(REPO / "agents.toml"))
    async with desk:
        session = await desk.runner.new_session()
        [e async for e in desk.runner.send(session, SYNC)]
        staff = Actor("dana", "cli")
        await desk.runner.takeover(session, staff)
        await desk.runner.release(session, to_agent="triage", by=staff)
        items = [e.item async for e in desk.runner.send(session, "It's dana@example.com. Please hurry.") if isinstance(e, Appended)]
        context = {k: e.value for k, e in (await desk.store.context_at(session)).items()}
        info = await desk.store.get_session(session)
    said = " ".join(i.text for i in items if isinstance(i, Message) and i.role == "agent")
    assert context["issue"] == SYNC
    # The problem is known: it goes back to its agent, with no "billing or technical?" question.
    assert info.active_agent == "technical" and "is this about billing" not in said


async def test_an_email_and_a_plea_after_the_steps_start_no_new_search(tmp_path):
    steps, hurry = (await talk(tmp_path, SYNC, "It's dana@example.com. Please hurry."))[0]
    assert steps.calls("search_kb") and not hurry.calls("search_kb")
    assert hurry.context["issue"] == SYNC
    assert "none of our help articles" not in hurry.said()


async def test_an_article_already_given_is_not_pasted_again(tmp_path):
    steps, detail = (await talk(tmp_path, SYNC, "it says sync paused"))[0]
    assert FIRST_STEP in steps.said()
    # Said briefly instead: which article, and what to do next; never its steps again.
    assert FIRST_STEP not in detail.said() and "Files are not syncing" in detail.said()
    assert "what happened" in detail.said() and detail.agent == "technical"


async def test_more_of_the_same_trouble_after_that_is_taken_further_not_told_again(tmp_path):
    steps, detail, more = (await talk(tmp_path, SYNC, "it says sync paused", "the sync icon is grey now"))[0]
    assert "won't paste them again" in detail.said()
    # Said once is enough: the steps did not fix it, so it goes up a level with the summary.
    assert "won't paste them again" not in more.said() and FIRST_STEP not in more.said()
    assert more.handoffs() == ["technical>senior"]
