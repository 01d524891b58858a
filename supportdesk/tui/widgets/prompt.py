"""The input line: customer text by default, staff commands when it starts with `/`."""

from __future__ import annotations

from collections.abc import Iterable

from textual.suggester import SuggestFromList
from textual.widgets import Input

from supportdesk.tui.slash import suggestions


class Prompt(Input):
    """Always usable, even while agents work; suggests commands and agent names."""

    def __init__(self, agents: Iterable[str] = (), **kwargs):
        super().__init__(
            placeholder="Write as the customer · /help for staff commands",
            suggester=SuggestFromList(suggestions(agents), case_sensitive=False),
            **kwargs,
        )
