"""What customers and staff read (issue 39 §5): text cut short ends on a whole word with "…",
and counts agree with their nouns ("1 item", never "1 items")."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from supportdesk.text import clip_words, counted
from supportdesk.tui.widgets.inspector import seen_text

WORDS = st.lists(st.text(alphabet="abcdefghij'()", min_size=1, max_size=12), min_size=1, max_size=40).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(WORDS, st.integers(5, 120))
def test_a_clipped_text_ends_on_a_whole_word(text, width):
    clipped = clip_words(text, width)
    assert len(clipped) <= width
    if len(text) <= width:
        assert clipped == text
        return
    assert clipped.endswith("…")
    kept = clipped[:-1]
    assert text.startswith(kept)
    # What is kept ends where a word ends (a single over-long first word aside): the text goes
    # on with a space or with punctuation dropped before the "…", never with a letter.
    if len(text.split()[0]) < width - 1:
        assert not text[len(kept)].isalnum()


def test_the_bug_summary_cut_of_the_issue_ends_on_a_word():
    summary = "My files are not syncing on windows. Then: still broken, the icon is red. Steps from 'Files are not syncing' did not help."
    cut = clip_words(summary, 110)
    assert cut.endswith("…") and not cut.endswith("hel…") and cut[:-1].rstrip().split()[-1] in summary.split()


def test_counts_agree_with_their_nouns():
    assert counted(1, "item") == "1 item"
    assert counted(2, "handoff") == "2 handoffs"
    assert counted(1204, "item") == "1,204 items"
    assert seen_text({"items": 1}) == "last call saw 1 item"
    assert seen_text({"items": 3}) == "last call saw 3 items"


async def test_the_first_screen_says_how_to_quit(db_path, test_desk):
    from supportdesk.tui.app import SupportDeskApp
    from tests.tui_seed import scripted_desk, until

    desk, _, _ = await scripted_desk(db_path, test_desk)
    app = SupportDeskApp(desk=desk)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.loaded == "")
        await pilot.pause()
        shown = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "ctrl+q quits" in shown
    await desk.close()


async def test_the_palettes_screenshot_saves_where_it_says_without_a_downloads_folder(db_path, test_desk, tmp_path, monkeypatch):
    import platformdirs

    from supportdesk.folders import data_dir
    from supportdesk.tui.app import SupportDeskApp
    from tests.tui_seed import scripted_desk, until

    monkeypatch.setattr(platformdirs, "user_downloads_path", lambda: tmp_path / "no-downloads-here")
    desk, _, _ = await scripted_desk(db_path, test_desk)
    app = SupportDeskApp(desk=desk)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.loaded == "")
        [screenshot] = [c for c in app.get_system_commands(app.screen) if c.title == "Screenshot"]
        screenshot.callback()
        await until(pilot, lambda: any("screenshot" in str(n.message).lower() for n in app._notifications))
        said = " ".join(str(n.message) for n in app._notifications)
        folder = data_dir() / "screenshots"
        saved = list(folder.glob("*.svg"))
        assert saved and str(folder) in said, said
        assert "Failed" not in said
    await desk.close()


def test_what_the_customer_did_that_worked_reads_as_thanks():
    from supportdesk.models.offline import cues

    for text in ("Resuming it worked, thanks", "Resuming the sync worked, thanks!", "Restarting the app helped. Thank you"):
        assert cues.courtesy_only(text), text
    for text in ("Nothing worked, thanks", "Resuming it worked but now it is stuck again"):
        assert not cues.courtesy_only(text), text


async def test_resuming_it_worked_thanks_is_not_a_new_question(tmp_path):
    from tests.test_offline_moves import talk

    turns, _ = await talk(tmp_path, "my files are not syncing on windows", "Resuming it worked, thanks")
    first, thanks = turns
    assert first.calls("search_kb")
    assert not thanks.calls("search_kb") and not thanks.calls("create_ticket") and not thanks.handoffs()


async def test_a_policy_refusal_is_never_told_as_a_technical_failure_and_the_email_unlocks_it(tmp_path):
    from tests.test_offline_moves import talk

    turns, _ = await talk(
        tmp_path,
        "I was charged twice for my subscription this month", "29.99 on March 1 and March 3", "yes please refund the duplicate",
        "I want to downgrade from Pro to the Starter plan", "dana@example.com",
    )
    for turn in turns:
        assert "couldn't read your account" not in turn.said()
    asked, email = turns[-2:]
    assert "email address" in asked.said()  # what the policy needs, said as it is
    assert any(c.arguments == {"query": "dana@example.com"} for c in email.calls("find_customer"))
    assert "email address on it" not in email.said()  # no loop: the named account is read


async def test_an_unknown_plan_name_is_asked_about_not_guessed(tmp_path):
    from supportdesk.models.offline import cues
    from tests.test_offline_moves import talk

    assert cues.unknown_plan("I want to downgrade from Pro to the Basic plan") == "Basic"
    assert cues.unknown_plan("move me to the cheapest plan") is None and cues.unknown_plan("switch to the Starter plan") is None
    turns, _ = await talk(tmp_path, "I want to downgrade from Pro to the Basic plan", "dana@example.com", "Starter please")
    first, email, starter = turns
    assert not email.calls("change_plan") and "Starter" not in email.said().split("?")[0]
    assert 'plan called "Basic"' in email.said() and "Which plan" in email.said()
    assert [c.arguments["plan"] for c in starter.calls("change_plan")] == ["starter"]


def test_a_release_to_another_agent_tells_the_customer_once():
    from supportdesk.channels.view import customer_event
    from supportdesk.config import load_desk
    from supportdesk.items import Handoff, Release
    from supportdesk.staff import PART_OF_ACT
    from tests.conftest import REPO

    config = load_desk(REPO / "agents.toml")
    # What runner.release appends when the conversation goes back to another agent.
    release = [
        Release(person="dana", to_agent="billing", summary="refund done", agent="triage", seq=7),
        Handoff(from_agent="triage", to_agent="billing", reason="released by dana", handoff_kind="manual",
                agent="triage", meta={PART_OF_ACT: True}, seq=8),
    ]
    said = [e.data["text"] for e in (customer_event(item, config) for item in release) if e is not None]
    assert said == ["You are now talking to Billing."]
    # An agent's own handoff is still said.
    routed = customer_event(Handoff(from_agent="triage", to_agent="billing", reason="refund", agent="triage", seq=3), config)
    assert routed is not None and routed.data["text"] == "You are now talking to Billing."


def test_a_staff_note_is_labelled_with_its_author():
    from supportdesk.items import Message
    from supportdesk.staff import Actor
    from supportdesk.tui.widgets.render import AgentLook, speaker

    look = AgentLook(None)
    note = Message(role="staff", text="customer is a VIP", agent="billing", meta=Actor("dana", "tui").meta())
    assert str(speaker(note, look)) == "dana (staff note)"
    assert str(speaker(Message(role="staff", text="old note", agent="billing"), look)) == "Staff"  # no author kept
    assert str(speaker(Message(role="customer", text="hi", agent="billing"), look)) == "Customer"
