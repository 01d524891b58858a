"""The context inspector (a DataTable) is mounted after the chat screen's first frame, in the place
of a light slot (`panes.InspectorSlot`), and starts from everything the slot was shown."""

from __future__ import annotations

from datetime import datetime, timezone

from supportdesk.items import ContextSet
from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.screens.chat import ChatScreen
from supportdesk.tui.widgets import ContextInspector, HandoffTimeline
from supportdesk.tui.widgets.panes import InspectorSlot
from tests.tui_seed import SEED_ID, scripted_desk, seed_double_charge, until


async def test_the_chat_screen_is_drawn_before_the_inspector_is_mounted(db_path, test_desk, monkeypatch):
    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_double_charge(desk.store)
    seen: dict[str, object] = {}
    mount = ChatScreen._inspector_then_ready

    async def watched(screen: ChatScreen) -> None:
        # The moment the inspector is about to be mounted: the screen has been drawn with the slot.
        seen["inspectors"] = len(screen.query(ContextInspector))
        seen["slot"] = screen.query_one(InspectorSlot).region.height
        seen["timeline drawn"] = screen.query_one(HandoffTimeline).region.height
        seen["published"] = pilot.app.chat is not None
        # An item arriving now (at the live end) reaches the inspector too.
        stamp = datetime(2026, 1, 1, tzinfo=timezone.utc)
        await screen.extend_panes([ContextSet(session_id=SEED_ID, seq=15, key="late_key", value="late", writer="billing", created_at=stamp)])
        await mount(screen)

    monkeypatch.setattr(ChatScreen, "_inspector_then_ready", watched)
    app = SupportDeskApp(desk=desk, session_id=SEED_ID)
    async with app.run_test(size=(120, 35)) as pilot:
        await until(pilot, lambda: app.chat is not None, settle_workers=True)
        assert seen == {"inspectors": 0, "slot": seen["slot"], "timeline drawn": seen["timeline drawn"], "published": False}
        assert seen["slot"] and seen["timeline drawn"]  # laid out and drawn, with the slot in place
        inspector = app.chat.query_one(ContextInspector)
        assert not app.chat.query(InspectorSlot)
        # The seeded session's context, and the key that arrived while the slot stood in.
        assert {"customer_id", "late_key"} <= set(inspector.context)
        assert inspector.row_count == len(inspector.context)
        assert inspector in app.chat.panes  # later items reach it
        stamp = datetime(2026, 1, 1, tzinfo=timezone.utc)
        await app.chat.extend_panes([ContextSet(session_id=SEED_ID, seq=16, key="later_key", value=1, writer="billing", created_at=stamp)])
        assert "later_key" in inspector.context
    await desk.close()
