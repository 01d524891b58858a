"""Sessions other frameworks recorded, turned into desk sessions (`supportdesk import`).

Two sources:

- an OpenAI Agents SDK `SQLiteSession` database (`agent_sessions`/`agent_messages`): each SDK
  item becomes one of our items exactly as `DeskSession` writes it live (`sdk_items`), the
  output of a `transfer_to_*` call a handoff, and each item is held by the agent the handoffs
  so far give (the SDK stores no agent names, so the first holder is `entry_agent`);
- a Strands Agents `FileSessionManager` folder (`session_<id>/session.json`, `agents/agent_<id>/`
  with `agent.json` and `messages/message_<n>.json`, `multi_agents/multi_agent_<id>/
  multi_agent.json`): an agent's messages with their text, tool uses and results (a
  `handoff_to_agent` call's result is the handoff, its `context` argument shared context), the
  agent's `state` as shared context; a swarm's task, its `node_history` as handoffs, each
  node's last answer and the `shared_context` each node wrote.

Readers return `ImportedSession`s (plain data, no store); `write_session` appends one to a store
with the source's own times. Nothing here is imported unless `supportdesk import` runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from collections.abc import Callable
from typing import Any

from supportdesk.integrations.sdk_items import item_from_sdk
from supportdesk.items import ContextSet, Handoff, Item, Message, Notice, ToolCall, ToolResult
from supportdesk.store import SessionInfo, Store
from supportdesk.store.foreign import is_sqlite_file, read_agents_sdk_sqlite

CHANNEL = "import"
STRANDS_HANDOFF_TOOL = "handoff_to_agent"


class SourceError(Exception):
    """A path that is not a session source we can read; the message is one line for the user."""


@dataclass
class ImportedSession:
    source: str  # "openai-agents-sqlite" | "strands-file-session"
    source_id: str  # the session's id in its source
    entry_agent: str
    meta: dict[str, Any]
    # Each step is appended as one transaction stamped with its time, as the desk writes steps.
    steps: list[tuple[datetime, list[Item]]] = field(default_factory=list)


def read_source(path: Path, *, entry_agent: str = "agent") -> list[ImportedSession]:
    """The sessions at `path`: an Agents SDK SQLite database or a Strands session folder."""
    if path.is_dir():
        return read_strands_folder(path)
    if not path.exists():
        raise SourceError(f"{path}: no such file or folder")
    if is_sqlite_file(path):
        return read_agents_sdk_database(path, entry_agent=entry_agent)
    raise SourceError(f"{path}: neither an Agents SDK SQLite database nor a Strands session folder")


# --- OpenAI Agents SDK ----------------------------------------------------------------------------


def _sdk_time(text: str) -> datetime:
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        return datetime.now(timezone.utc)
    # SQLite's CURRENT_TIMESTAMP is UTC without a zone.
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def read_agents_sdk_database(path: Path, *, entry_agent: str = "agent") -> list[ImportedSession]:
    from supportdesk.store import StoreError

    try:
        dumps = read_agents_sdk_sqlite(path)
    except StoreError as exc:
        raise SourceError(str(exc)) from None
    sessions: list[ImportedSession] = []
    for dump in dumps:
        imported = ImportedSession(
            source="openai-agents-sqlite",
            source_id=dump.session_id,
            entry_agent=entry_agent,
            meta={"source": "openai-agents-sqlite", "path": str(path.resolve()), "session_id": dump.session_id},
        )
        holder = entry_agent
        calls: dict[str, ToolCall] = {}
        skipped = 0
        for data, created in dump.messages:
            try:
                raw = json.loads(data)
            except ValueError:
                skipped += 1  # SQLiteSession skips rows it cannot parse; so do we
                continue
            if not isinstance(raw, dict):
                skipped += 1
                continue
            item = item_from_sdk(raw, agent=holder, calls=calls)
            if isinstance(item, ToolCall):
                calls[item.call_id] = item
            if isinstance(item, Handoff):
                holder = item.to_agent
            when = _sdk_time(created)
            if imported.steps and imported.steps[-1][0] == when:
                imported.steps[-1][1].append(item)
            else:
                imported.steps.append((when, [item]))
        if skipped:
            imported.meta["skipped_rows"] = skipped
        sessions.append(imported)
    return sessions


# --- Strands Agents -------------------------------------------------------------------------------


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SourceError(f"{path}: not a readable Strands JSON file ({exc.__class__.__name__})") from None
    if not isinstance(data, dict):
        raise SourceError(f"{path}: not a Strands session file (a JSON object was expected)")
    return data


def _strands_time(text: Any, fallback: datetime) -> datetime:
    if isinstance(text, str):
        try:
            stamp = datetime.fromisoformat(text)
            return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)
        except ValueError:
            pass
    return fallback


def _session_folders(root: Path) -> list[Path]:
    if (root / "session.json").is_file():
        return [root]
    found = sorted(p for p in root.glob("session_*") if (p / "session.json").is_file())
    if not found:
        raise SourceError(f"{root}: not a Strands session folder (no session.json, no session_*/session.json)")
    return found


def read_strands_folder(root: Path) -> list[ImportedSession]:
    return [_read_strands_session(folder) for folder in _session_folders(root)]


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif isinstance(block, dict) and "json" in block:
            parts.append(json.dumps(block["json"], ensure_ascii=False))
    return "\n".join(parts)


def _usage_meta(message: dict[str, Any]) -> dict[str, Any]:
    usage = (message.get("metadata") or {}).get("usage") if isinstance(message.get("metadata"), dict) else None
    if not isinstance(usage, dict):
        return {}
    return {
        "usage": {
            "input_tokens": int(usage.get("inputTokens", 0) or 0),
            "output_tokens": int(usage.get("outputTokens", 0) or 0),
            "reported": True,
        }
    }


def strands_message_items(message: dict[str, Any], agent: str, calls: dict[str, ToolCall]) -> list[Item]:
    """Our items for one Strands message (its content blocks, in order)."""
    role = message.get("role")
    items: list[Item] = []
    for block in message.get("content") or []:
        if not isinstance(block, dict):
            continue
        if isinstance(block.get("text"), str):
            items.append(Message(role="customer" if role == "user" else "agent", text=block["text"], agent=agent))
        elif isinstance(block.get("toolUse"), dict):
            use = block["toolUse"]
            arguments = use.get("input") if isinstance(use.get("input"), dict) else {"input": use.get("input")}
            call = ToolCall(call_id=str(use.get("toolUseId", "")), name=str(use.get("name", "")), arguments=arguments, agent=agent)
            calls[call.call_id] = call
            items.append(call)
            if call.name == STRANDS_HANDOFF_TOOL and isinstance(arguments.get("context"), dict):
                items.extend(ContextSet(key=str(k), value=v, writer=agent, agent=agent) for k, v in arguments["context"].items())
        elif isinstance(block.get("toolResult"), dict):
            result = block["toolResult"]
            call_id = str(result.get("toolUseId", ""))
            answered = calls.get(call_id)
            if answered is not None and answered.name == STRANDS_HANDOFF_TOOL and result.get("status") != "error":
                items.append(
                    Handoff(
                        from_agent=agent,
                        to_agent=str(answered.arguments.get("agent_name", "")),
                        reason=str(answered.arguments.get("message", "")),
                        agent=agent,
                    )
                )
            else:
                items.append(
                    ToolResult(
                        call_id=call_id,
                        name=answered.name if answered is not None else "",
                        output=_block_text(result.get("content")),
                        is_error=result.get("status") == "error",
                        agent=agent,
                    )
                )
        else:
            kind = next(iter(block), "unknown")
            items.append(Notice(notice_kind="info", text=f"Strands {kind} block", agent=agent))
    if items:
        usage = _usage_meta(message)
        if usage:
            items[0] = replace(items[0], meta={**items[0].meta, **usage})
    return items


def _read_strands_session(folder: Path) -> ImportedSession:
    info = _read_json(folder / "session.json")
    session_id = str(info.get("session_id", folder.name.removeprefix("session_")))
    started = _strands_time(info.get("created_at"), datetime.now(timezone.utc))
    imported = ImportedSession(
        source="strands-file-session",
        source_id=session_id,
        entry_agent="agent",
        meta={"source": "strands-file-session", "path": str(folder.resolve()), "session_id": session_id,
              "session_type": info.get("session_type")},
    )
    timed: list[tuple[datetime, int, list[Item]]] = []  # (time, order, items): merged by time
    agents = sorted((folder / "agents").glob("agent_*/agent.json"))
    for agent_file in agents:
        agent_info = _read_json(agent_file)
        agent = str(agent_info.get("agent_id", agent_file.parent.name.removeprefix("agent_")))
        if imported.entry_agent == "agent":
            imported.entry_agent = agent
        state = agent_info.get("state")
        if isinstance(state, dict) and state:
            when = _strands_time(agent_info.get("created_at"), started)
            timed.append((when, len(timed), [ContextSet(key=str(k), value=v, writer=agent, agent=agent) for k, v in state.items()]))
        calls: dict[str, ToolCall] = {}
        messages = sorted(
            (agent_file.parent / "messages").glob("message_*.json"),
            key=lambda p: int(p.stem.removeprefix("message_")) if p.stem.removeprefix("message_").isdigit() else 0,
        )
        for message_file in messages:
            record = _read_json(message_file)
            message = record.get("redact_message") or record.get("message")
            if not isinstance(message, dict):
                raise SourceError(f"{message_file}: not a Strands message file (no message)")
            items = strands_message_items(message, agent, calls)
            if items:
                timed.append((_strands_time(record.get("created_at"), started), len(timed), items))
    for swarm_file in sorted((folder / "multi_agents").glob("multi_agent_*/multi_agent.json")):
        steps, entry = _swarm_steps(_read_json(swarm_file), _strands_time(info.get("updated_at"), started))
        if entry and imported.entry_agent == "agent":
            imported.entry_agent = entry
        timed.extend((when, len(timed) + n, items) for n, (when, items) in enumerate(steps))
        imported.meta["times"] = "a swarm keeps no per-node times: its steps are spaced 1 ms apart"
    timed.sort(key=lambda entry: (entry[0], entry[1]))
    imported.steps = [(when, items) for when, _order, items in timed]
    if not imported.steps:
        raise SourceError(f"{folder}: a Strands session with no messages and no swarm state")
    return imported


def _swarm_steps(state: dict[str, Any], when: datetime) -> tuple[list[tuple[datetime, list[Item]]], str | None]:
    """A swarm's task, each node's turn (context it shared, its last answer) and the handoffs."""
    history = [str(node) for node in state.get("node_history") or []]
    results = _table(state, "node_results")
    context = _table(state, "context")
    shared = _table(context, "shared_context")
    entry = history[0] if history else None
    steps: list[list[Item]] = []
    task = state.get("current_task")
    if task:
        steps.append([Message(role="customer", text=_block_text(task), agent=entry or "agent")])
    last_turn = {node: n for n, node in enumerate(history)}
    for n, node in enumerate(history):
        step: list[Item] = []
        if last_turn[node] == n:  # a node's result and shared context are kept once, as of its last turn
            for key, value in (shared.get(node) or {}).items():
                step.append(ContextSet(key=str(key), value=value, writer=node, agent=node))
            result = _table(results, node).get("result")
            message = result.get("message") if isinstance(result, dict) else None
            if isinstance(message, dict):
                text = _block_text(message.get("content"))
                if text:
                    step.append(Message(role="agent", text=text, agent=node, meta=_usage_meta(message)))
        if n + 1 < len(history):
            reason = str(context.get("handoff_message") or "") if n + 2 == len(history) else ""
            step.append(Handoff(from_agent=node, to_agent=history[n + 1], reason=reason, agent=node))
        if step:
            steps.append(step)
    return [(when + timedelta(milliseconds=n), items) for n, items in enumerate(steps)], entry


# --- writing ----------------------------------------------------------------------------------------


async def write_session(store: Store, imported: ImportedSession) -> SessionInfo:
    """Append one imported session, each step one transaction stamped with the source's time."""
    steps = [(when, items) for when, items in imported.steps if items]
    kept_clock = store.clock
    info: SessionInfo | None = None
    try:
        first: Callable[[], datetime] = lambda: steps[0][0] if steps else kept_clock()  # noqa: E731
        store.clock = first
        info = await store.create_session(imported.entry_agent, channel=CHANNEL, meta=imported.meta)
        for when, items in steps:
            store.clock = _at(when)
            await store.append(info.id, items)
    except BaseException:
        if info is not None:  # no half-imported session left behind
            store.clock = kept_clock
            await store.delete_session(info.id)
        raise
    finally:
        store.clock = kept_clock
    final = await store.get_session(info.id)
    assert final is not None
    return final


def _table(value: dict[str, Any], key: str) -> dict[str, Any]:
    """The JSON object under `key`, or an empty one when the file holds something else there."""
    found = value.get(key)
    return found if isinstance(found, dict) else {}


def _at(when: datetime) -> Callable[[], datetime]:
    """A clock stopped at `when` (each imported step is stored at its own time)."""
    return lambda: when
