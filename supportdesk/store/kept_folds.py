"""The three summaries both stores keep beside each session, advanced together over new items.

`desk_state` (where the conversation stands), the figures' share (`figure_summary`) and the SLA
clocks (`sla`) are folds of the log. An append advances all three over its items in one pass:
the desk state item by item (the clocks read the state before and after each item, so the two
never disagree), the share and the clocks once per batch, each built once at the end.
No SQL here: both adapters call it inside their append's transaction.
"""

from __future__ import annotations

from collections.abc import Iterable

from supportdesk.folds import sla
from supportdesk.folds.desk_state import ConversationState, advance
from supportdesk.items import Item
from supportdesk.folds.sla import SlaProgress
from supportdesk.store import figure_summary
from supportdesk.store.figure_summary import FigureSummary


def advance_all(
    state: ConversationState, share: FigureSummary, progress: SlaProgress, items: Iterable[Item]
) -> tuple[ConversationState, FigureSummary, SlaProgress]:
    """Every kept fold, over the items (stamped with their seqs and time), in order."""
    items = list(items)
    steps = []
    for item in items:
        after = advance(state, item)
        steps.append((state, after, item))
        state = after
    resolved = [after.state == "resolved" for _, after, _ in steps]
    # A fork's copied items (seq <= forked_at) are its source's events: its figures and its SLA
    # clocks leave them out alike (the desk state still folds them: it is where the copy stands).
    new = steps if not share.copied else [step for step in steps if step[2].seq > share.copied]
    return state, figure_summary.fold(items, share, resolved), sla.advance_many(progress, new)
