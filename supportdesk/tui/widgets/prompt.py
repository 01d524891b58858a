"""The input line: customer text by default, staff commands when it starts with `/`."""

from __future__ import annotations

from collections.abc import Iterable

from textual.suggester import SuggestFromList
from textual.widgets import Input

from supportdesk.tui.slash import suggestions


# What the empty input says it writes as: the customer (a local session's default, to try the
# desk), or staff to the customer (F7 on a local session; always on a web or Chatwoot one).
AS_CUSTOMER = "Write as the customer · /help for staff commands"
AS_STAFF = "Write to the customer as staff · F7: as the customer · /help for staff commands"
AS_STAFF_ON_CHANNEL = "Write to the customer as staff · /help for staff commands"


class Prompt(Input):
    """Always usable, even while agents work; suggests commands and agent names."""

    def writing_as(self, who: str, *, on_channel: bool = False) -> None:
        self.placeholder = AS_CUSTOMER if who == "customer" else AS_STAFF_ON_CHANNEL if on_channel else AS_STAFF

    def __init__(self, agents: Iterable[str] = (), **kwargs):
        super().__init__(
            placeholder=AS_CUSTOMER,
            suggester=SuggestFromList(suggestions(agents), case_sensitive=False),
            **kwargs,
        )
