"""Text a customer reads is never cut mid-word (issue 39 §5): the engineering ticket's summary,
quoted back to the customer, ends on a whole word with "…" when it is long."""

from __future__ import annotations

import re

from supportdesk.engine.events import Appended
from supportdesk.engine.runner import drain
from supportdesk.items import Message, ToolCall
from supportdesk.wiring import open_desk
from tests.conftest import REPO


async def test_the_ticket_summary_quoted_to_the_customer_ends_on_a_whole_word(db_path):
    desk = await open_desk(db_path, REPO / "agents.toml")
    async with desk:
        sid = None
        for text in ("my files are not syncing on windows", "it says sync paused", "still broken, the icon is red"):
            items = [e.item for e in await drain(desk.runner.send(sid, text)) if isinstance(e, Appended)]
            sid = items[0].session_id
        log = await desk.store.range(sid, 0, 1 << 62)
    [ticket] = [i for i in log if isinstance(i, ToolCall) and i.name == "create_ticket"]
    summary = ticket.arguments["summary"]
    [said] = [i.text for i in log if isinstance(i, Message) and i.role == "agent" and "engineering ticket" in i.text]
    quoted = re.search(r'\("(.*)"\)', said, re.S)
    assert quoted is not None, said
    shown = quoted.group(1)
    assert len(summary) > 120, "the conversation must make a summary long enough to be shortened"
    assert shown.endswith("…"), shown
    kept = shown.removesuffix("…").rstrip()
    # What is shown is the summary's start, cut where a word ends.
    assert summary.startswith(kept) and summary[len(kept)] in " .,;:!?", (kept, summary)
