"""Read-only readers of other programs' session databases (for `supportdesk import`).

They live here because nothing outside `store/` writes SQL. A reader opens the file read-only
(it never creates or changes it) and answers plain data; a file that is not the database it
expects is one `StoreError` line naming the file and what it is not.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from supportdesk.store.protocol import StoreError

SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass
class AgentsSdkSession:
    """One session of an OpenAI Agents SDK `SQLiteSession` database, oldest message first."""

    session_id: str
    created_at: str
    # (message_data as stored: SDK item JSON, created_at as stored)
    messages: list[tuple[str, str]] = field(default_factory=list)


def is_sqlite_file(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def read_agents_sdk_sqlite(path: Path) -> list[AgentsSdkSession]:
    """Every session in an Agents SDK SQLiteSession database (`agent_sessions`/`agent_messages`)."""
    if not is_sqlite_file(path):
        raise StoreError(f"{path}: not a SQLite database")
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot open database: {exc}") from None
    try:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"agent_sessions", "agent_messages"} <= tables:
            raise StoreError(
                f"{path}: not an Agents SDK session database (no agent_sessions/agent_messages tables)"
            )
        sessions = {
            sid: AgentsSdkSession(str(sid), str(created or ""))
            for sid, created in conn.execute("SELECT session_id, created_at FROM agent_sessions ORDER BY created_at, session_id")
        }
        for sid, data, created in conn.execute(
            "SELECT session_id, message_data, created_at FROM agent_messages ORDER BY id"
        ):
            # A message whose session row is missing still belongs to that session.
            session = sessions.setdefault(sid, AgentsSdkSession(str(sid), str(created or "")))
            session.messages.append((str(data), str(created or "")))
        return list(sessions.values())
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: cannot read the Agents SDK tables: {exc}") from None
    finally:
        conn.close()
