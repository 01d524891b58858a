"""The web chat keeps its conversation (issue 39 §2): a reload mid-answer and idle, a lost
connection (the desk killed and started again) and a closed tab reopened all come back to the
same conversation, and every event is on the page once. Headless Chromium against a real
`supportdesk serve` process."""

from __future__ import annotations

from collections import Counter
from urllib.parse import urlparse

import pytest

from tests.serve_harness import write_approval_desk
from tests.test_browser_chat import _send, _wait_for, browser  # noqa: F401  (the fixture)
from tests.test_serve_process import ServeProcess

pytestmark = pytest.mark.browser

FIRST = "I was charged twice for my subscription this month, dana@example.com"


def page_events(driver) -> list[str]:
    """Every entry of the page's log: a message by its seq, anything else by its text."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#log > li:not(.streaming)'))"
        ".map(li => li.dataset.seq ? 'seq ' + li.dataset.seq : li.className + ': ' + li.textContent)"
    )


def _seqs(events: list[str]) -> int:
    return sum(event.startswith("seq") for event in events)


def assert_once(events: list[str]) -> None:
    repeated = {event: n for event, n in Counter(events).items() if n > 1}
    assert not repeated, f"shown more than once: {repeated}"


def stored_conversation(driver) -> str | None:
    return driver.execute_script(
        "const s = localStorage.getItem('supportdesk.conversation') || sessionStorage.getItem('supportdesk.conversation');"
        " return s ? JSON.parse(s).id : null"
    )


def replies(driver) -> list[str]:
    return [el.text for el in driver.find_elements("css selector", ".msg.agent:not(.streaming) .text")]


@pytest.fixture
def desk_config(tmp_path):
    return str(write_approval_desk(tmp_path))


def test_reload_mid_answer_and_idle_keeps_the_conversation_and_shows_each_event_once(browser, db_path, desk_config):  # noqa: F811
    server = ServeProcess(db_path, "--config", desk_config)
    try:
        browser.get(server.url + "/")
        _send(browser, FIRST)
        _wait_for(browser, lambda d: stored_conversation(d), "the conversation stored")
        conversation = stored_conversation(browser)
        browser.refresh()  # mid-answer: the turn runs on while the page is gone
        _wait_for(browser, lambda d: any("duplicate" in t for t in replies(d)), "billing's answer after the reload")
        assert stored_conversation(browser) == conversation
        before = page_events(browser)
        assert_once(before)
        assert any("You" in el.text for el in browser.find_elements("css selector", ".msg.customer .who"))

        browser.refresh()  # idle
        _wait_for(browser, lambda d: len(page_events(d)) >= len(before), "the conversation shown again")
        assert stored_conversation(browser) == conversation
        assert page_events(browser) == before
        assert not browser.find_element("id", "problem").is_displayed()

        _send(browser, "thanks, that is all")
        _wait_for(browser, lambda d: len([e for e in page_events(d) if e.startswith("seq")]) > len([e for e in before if e.startswith("seq")]) + 1,
                  "the next answer, in the same conversation")
        assert stored_conversation(browser) == conversation
        assert_once(page_events(browser))
    finally:
        server.stop()


def test_a_lost_connection_and_a_reopened_tab_come_back_to_the_same_conversation(browser, db_path, desk_config):  # noqa: F811
    server = ServeProcess(db_path, "--config", desk_config)
    port = str(urlparse(server.url).port)
    try:
        browser.get(server.url + "/")
        _send(browser, FIRST)
        _wait_for(browser, lambda d: any("duplicate" in t for t in replies(d)), "billing's answer")
        conversation = stored_conversation(browser)
        before = page_events(browser)

        server.kill()  # the connection is lost: the page must not forget the conversation
        server = ServeProcess(db_path, "--config", desk_config, "--port", port)
        assert stored_conversation(browser) == conversation
        assert page_events(browser) == before
        _send(browser, "thanks, that is all")
        # The customer's message and the answer, counted by seq: the open offer's buttons go
        # when the answer closes the offer, so the page's entries need not grow by two.
        _wait_for(browser, lambda d: _seqs(page_events(d)) > _seqs(before) + 1, "the next answer")
        assert stored_conversation(browser) == conversation
        assert_once(page_events(browser))
        after = page_events(browser)

        # The tab closed and the page opened again in a new one.
        old = browser.current_window_handle
        browser.switch_to.new_window("tab")
        browser.switch_to.window(old)
        browser.close()
        browser.switch_to.window(browser.window_handles[0])
        browser.get(server.url + "/")
        _wait_for(browser, lambda d: len(page_events(d)) >= len(after), "the conversation in the new tab")
        assert stored_conversation(browser) == conversation
        assert page_events(browser) == after
    finally:
        server.stop()
