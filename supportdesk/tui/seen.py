"""How far this terminal's staff have read each session, so the browser can mark unread activity.

Kept in the state file beside the remembered theme: session id -> the item count last shown.
Only the most recent `KEEP` sessions are remembered; older ones read as unread if they change.
"""

from __future__ import annotations

from supportdesk.tui.themes import remember_setting, remembered_setting

KEEP = 500


def seen_counts() -> dict[str, int]:
    value = remembered_setting("seen", {})
    return {k: v for k, v in value.items() if isinstance(v, int)} if isinstance(value, dict) else {}


def mark_seen(session_id: str, item_count: int) -> None:
    seen = seen_counts()
    if seen.get(session_id) == item_count:
        return
    seen.pop(session_id, None)
    seen[session_id] = item_count  # newest last, so the oldest go first
    remember_setting("seen", dict(list(seen.items())[-KEEP:]))


def unseen(seen: dict[str, int], session_id: str, item_count: int) -> bool:
    """The session has items this terminal has not shown (or was never opened here)."""
    return item_count > seen.get(session_id, 0)
