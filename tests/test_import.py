"""`supportdesk import`: a real Agents SDK SQLiteSession database and a real Strands session folder.

Both sources are written here by the real packages (the SDK's scripted model, a scripted Strands
model provider; no network), then imported, replayed through the panes' fold and exported.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from agents import Agent, Runner, SQLiteSession, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel as SdkScriptedModel
from agents.testing import assistant_message, function_call

from supportdesk.cli import main
from supportdesk.items import ContextSet, Handoff, Message, ToolCall, ToolResult
from supportdesk.store import open_store
from supportdesk.tui.projection import snapshot

set_tracing_disabled(True)


# --- sources written by the real frameworks ------------------------------------------------------


@function_tool
def find_charges(customer: str) -> str:
    """The customer's recent charges."""
    return "CH-1 $20 on March 1, CH-2 $20 on March 3"


async def write_sdk_database(path: Path) -> None:
    model = SdkScriptedModel(
        [
            [function_call("transfer_to_billing_agent", {}, call_id="call_handoff")],
            [function_call("find_charges", {"customer": "C-1"}, call_id="call_charges")],
            [assistant_message("CH-2 is a duplicate; I refunded it.")],
            [assistant_message("Happy to help. Anything else?")],
        ]
    )
    billing = Agent(name="Billing Agent", model=model, tools=[find_charges])
    triage = Agent(name="Triage Agent", model=model, handoffs=[billing])
    case = SQLiteSession("case-charged-twice", path)
    await Runner.run(triage, "I was charged twice", session=case)
    other = SQLiteSession("case-hello", path)
    await Runner.run(triage, "hello", session=other)
    case.close()
    other.close()


def write_strands_folder(root: Path) -> None:
    import strands  # the test extra installs it: a plain import, never a skip
    from strands.models.model import Model
    from strands.multiagent import Swarm
    from strands.session.file_session_manager import FileSessionManager

    class ScriptedStrandsModel(Model):
        """A Strands model provider that streams scripted steps: text or one tool use."""

        def __init__(self, steps):
            self.steps = list(steps)
            self.config = {}

        def update_config(self, **config):
            self.config.update(config)

        def get_config(self):
            return self.config

        async def structured_output(self, *args, **kwargs):
            raise NotImplementedError
            yield

        async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
            step = self.steps.pop(0)
            yield {"messageStart": {"role": "assistant"}}
            if "text" in step:
                yield {"contentBlockStart": {"start": {}}}
                yield {"contentBlockDelta": {"delta": {"text": step["text"]}}}
                stop = "end_turn"
            else:
                yield {"contentBlockStart": {"start": {"toolUse": {"name": step["tool"], "toolUseId": step["id"]}}}}
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(step["input"])}}}}
                stop = "tool_use"
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": stop}}
            yield {"metadata": {"usage": {"inputTokens": 12, "outputTokens": 4, "totalTokens": 16}, "metrics": {"latencyMs": 1}}}

    @strands.tool
    def lookup_charges(customer: str) -> str:
        """Find the customer's charges."""
        return "CH-1 $20, CH-2 $20"

    handoff = {"agent_name": "billing", "message": "duplicate charge", "context": {"customer_id": "C-1"}}
    triage = strands.Agent(
        name="triage",
        model=ScriptedStrandsModel([{"tool": "handoff_to_agent", "id": "h1", "input": handoff}, {"text": "Billing will take it from here."}]),
    )
    billing = strands.Agent(
        name="billing",
        model=ScriptedStrandsModel([{"tool": "lookup_charges", "id": "t1", "input": {"customer": "C-1"}}, {"text": "Refunded CH-2."}]),
        tools=[lookup_charges],
    )
    swarm = Swarm([triage, billing], entry_point=triage, session_manager=FileSessionManager(session_id="swarm-1", storage_dir=str(root)))
    result = swarm("I was charged twice")
    assert [node.node_id for node in result.node_history] == ["triage", "billing"]

    solo = strands.Agent(
        name="solo",
        agent_id="solo",
        model=ScriptedStrandsModel([{"tool": "lookup_charges", "id": "t9", "input": {"customer": "C-2"}}, {"text": "Two charges of $20."}]),
        tools=[lookup_charges],
        session_manager=FileSessionManager(session_id="agent-1", storage_dir=str(root)),
        state={"plan": "pro"},
    )
    solo("what did you charge me?")


# --- helpers --------------------------------------------------------------------------------------


async def imported_sessions(db: Path) -> dict[str, tuple]:
    """source session id -> (info, items)"""
    out = {}
    async with await open_store(db) as store:
        for info in await store.list_sessions(limit=100):
            out[info.meta["session_id"]] = (info, await store.range(info.id, 1, info.item_count))
    return out


def shape(items) -> list[tuple[str, str]]:
    return [(item.kind, item.agent) for item in items]


# --- the Agents SDK ---------------------------------------------------------------------------------


async def test_an_agents_sdk_database_imports_with_its_handoff(tmp_path: Path, capsys):
    source = tmp_path / "agents.db"
    await write_sdk_database(source)
    db = tmp_path / "desk.db"
    assert await_main(["import", str(source), "--db", str(db), "--entry-agent", "Triage Agent"]) == 0
    out = capsys.readouterr().out
    assert "imported 2 sessions" in out and "openai-agents-sqlite:case-charged-twice" in out

    sessions = await imported_sessions(db)
    info, items = sessions["case-charged-twice"]
    assert info.channel == "import" and info.meta["source"] == "openai-agents-sqlite"
    assert info.meta["path"] == str(source.resolve())
    assert (info.entry_agent, info.active_agent, info.handoff_count) == ("Triage Agent", "Billing Agent", 1)
    assert shape(items) == [
        ("message", "Triage Agent"),
        ("tool_call", "Triage Agent"),
        ("handoff", "Triage Agent"),
        ("tool_call", "Billing Agent"),
        ("tool_result", "Billing Agent"),
        ("message", "Billing Agent"),
    ]
    assert isinstance(items[2], Handoff) and items[2].to_agent == "Billing Agent"
    assert isinstance(items[4], ToolResult) and items[4].name == "find_charges" and "CH-2" in items[4].output
    assert info.title == "I was charged twice"

    # Replay and handoff stepping are the panes' fold over the imported log.
    async with await open_store(db) as store:
        at_handoff = await snapshot(store, info.id, 3)
        before = await snapshot(store, info.id, 2)
    assert at_handoff is not None and at_handoff.stops == [3] and at_handoff.agent == "Billing Agent"
    assert before is not None and before.agent == "Triage Agent"

    hello, hello_items = sessions["case-hello"]
    assert [i.kind for i in hello_items] == ["message", "message"] and hello.handoff_count == 0


async def test_an_imported_session_exports_and_is_found_by_search(tmp_path: Path, capsys):
    source = tmp_path / "agents.db"
    await write_sdk_database(source)
    db = tmp_path / "desk.db"
    assert await_main(["import", str(source), "--db", str(db)]) == 0
    info, _ = (await imported_sessions(db))["case-charged-twice"]
    capsys.readouterr()
    assert await_main(["export", info.id, "--db", str(db), "--format", "json"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert [i["kind"] for i in exported["items"]].count("handoff") == 1
    assert await_main(["sessions", "list", "--db", str(db), "--search", "duplicate"]) == 0
    assert info.id in capsys.readouterr().out


# --- Strands ----------------------------------------------------------------------------------------


async def test_a_strands_folder_imports_its_swarm_and_its_agent(tmp_path: Path, capsys):
    source = tmp_path / "strands"
    write_strands_folder(source)
    db = tmp_path / "desk.db"
    assert await_main(["import", str(source), "--db", str(db)]) == 0
    assert "imported 2 sessions" in capsys.readouterr().out
    sessions = await imported_sessions(db)

    swarm, items = sessions["swarm-1"]
    assert swarm.channel == "import" and swarm.meta["source"] == "strands-file-session"
    assert (swarm.entry_agent, swarm.active_agent, swarm.handoff_count) == ("triage", "billing", 1)
    assert shape(items) == [
        ("message", "triage"),
        ("context_set", "triage"),
        ("message", "triage"),
        ("handoff", "triage"),
        ("message", "billing"),
    ]
    assert isinstance(items[0], Message) and items[0].role == "customer" and items[0].text == "I was charged twice"
    assert isinstance(items[1], ContextSet) and (items[1].key, items[1].value, items[1].writer) == ("customer_id", "C-1", "triage")
    assert isinstance(items[3], Handoff) and (items[3].from_agent, items[3].to_agent) == ("triage", "billing")
    assert isinstance(items[4], Message) and items[4].text == "Refunded CH-2."
    async with await open_store(db) as store:
        assert (await store.context_at(swarm.id))["customer_id"].value == "C-1"
        assert (await snapshot(store, swarm.id, 3)).agent == "triage"

    solo, solo_items = sessions["agent-1"]
    assert solo.entry_agent == "solo" and solo.handoff_count == 0
    assert [i.kind for i in solo_items] == ["context_set", "message", "tool_call", "tool_result", "message"]
    call, result = solo_items[2], solo_items[3]
    assert isinstance(call, ToolCall) and call.arguments == {"customer": "C-2"}
    assert isinstance(result, ToolResult) and result.name == "lookup_charges" and result.output == "CH-1 $20, CH-2 $20"
    assert solo_items[0].key == "plan" and solo_items[0].value == "pro"
    async with await open_store(db) as store:
        assert (await store.usage_totals(solo.id))["solo"]["output_tokens"] == 8


async def test_strands_handoff_to_agent_calls_in_an_agents_messages_are_handoffs(tmp_path: Path):
    """An agent folder whose messages hold a handoff_to_agent call and its result (the format
    FileSessionManager writes, built with Strands' own classes)."""
    import strands  # the test extra installs it: a plain import, never a skip
    from strands.session.file_session_manager import FileSessionManager
    from strands.types.session import SessionAgent, SessionMessage

    manager = FileSessionManager(session_id="handoff-1", storage_dir=str(tmp_path / "s"))
    manager.session_repository.create_agent("handoff-1", SessionAgent(agent_id="triage", state={}, conversation_manager_state={}))
    messages = [
        {"role": "user", "content": [{"text": "my card was charged twice"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "h", "name": "handoff_to_agent",
                                                       "input": {"agent_name": "billing", "message": "double charge", "context": {"card": "visa"}}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "h", "status": "success", "content": [{"text": "handed off"}]}}]},
    ]
    for n, message in enumerate(messages):
        manager.session_repository.create_message("handoff-1", "triage", SessionMessage(message=message, message_id=n))
    assert strands is not None
    db = tmp_path / "desk.db"
    assert await_main(["import", str(tmp_path / "s"), "--db", str(db)]) == 0
    info, items = (await imported_sessions(db))["handoff-1"]
    assert [i.kind for i in items] == ["message", "tool_call", "context_set", "handoff"]
    assert (items[3].to_agent, items[3].reason) == ("billing", "double charge")
    assert info.active_agent == "billing"


# --- bad input ----------------------------------------------------------------------------------------


def bad_sources(tmp_path: Path) -> dict[str, Path]:
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    ours = tmp_path / "ours.db"
    sqlite3.connect(ours).execute("CREATE TABLE items (id INTEGER)").connection.commit()
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    broken = tmp_path / "broken" / "session_x"
    (broken / "agents" / "agent_a" / "messages").mkdir(parents=True)
    (broken / "session.json").write_text('{"session_id": "x"}')
    (broken / "agents" / "agent_a" / "agent.json").write_text('{"agent_id": "a"}')
    (broken / "agents" / "agent_a" / "messages" / "message_0.json").write_text("{not json")
    return {
        "neither an Agents SDK SQLite database nor a Strands session folder": text,
        "not an Agents SDK session database": ours,
        "not a Strands session folder": empty_dir,
        "not a readable Strands JSON file": tmp_path / "broken",
        "no such file or folder": tmp_path / "missing.db",
    }


@pytest.mark.parametrize(
    "expected",
    ["neither an Agents SDK SQLite database nor a Strands session folder", "not an Agents SDK session database", "not a Strands session folder",
     "not a readable Strands JSON file", "no such file or folder"],
)
def test_an_unreadable_or_foreign_source_is_one_line_and_exit_2(tmp_path: Path, capsys, expected):
    source = bad_sources(tmp_path)[expected]
    db = tmp_path / "desk.db"
    assert main(["import", str(source), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected.lower() in err.lower() and "Traceback" not in err
    assert not db.exists() or not list_ids(db)


def list_ids(db: Path) -> list[str]:
    import asyncio

    async def ids() -> list[str]:
        async with await open_store(db) as store:
            return [info.id for info in await store.list_sessions()]

    return asyncio.run(ids())


def await_main(argv: list[str]) -> int:
    """`main` runs its own event loop; call it from a thread so these async tests can use it."""
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(main, argv).result()


def test_import_is_listed_but_not_imported_for_other_commands():
    import subprocess
    import sys

    code = (
        "import sys; from supportdesk.cli import build_parser; build_parser(['run', 'x']); "
        "print('supportdesk.integrations.import_command' in sys.modules, 'supportdesk.integrations' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
    help_text = subprocess.run([sys.executable, "-m", "supportdesk.cli", "--help"], capture_output=True, text=True).stdout
    assert "import" in help_text


@pytest.mark.postgres
async def test_an_import_into_postgresql_is_the_same_session(tmp_path: Path, pg_url: str):
    source = tmp_path / "agents.db"
    await write_sdk_database(source)
    assert await_main(["import", str(source), "--db", pg_url, "--entry-agent", "Triage Agent"]) == 0
    async with await open_store(pg_url) as store:
        [info] = [s for s in await store.list_sessions() if s.meta.get("session_id") == "case-charged-twice"]
        items = await store.range(info.id, 1, info.item_count)
        stops = await store.kind_seqs(info.id, "handoff")
    assert info.channel == "import" and (info.active_agent, info.handoff_count) == ("Billing Agent", 1)
    assert shape(items)[2] == ("handoff", "Triage Agent") and stops == [3]


async def test_importing_the_same_database_twice_adds_nothing_the_second_time(tmp_path: Path, capsys):
    """Issue 39 §5: a second import of the same SDK database duplicated every session."""
    source = tmp_path / "agents.db"
    await write_sdk_database(source)
    db = tmp_path / "desk.db"
    assert await_main(["import", str(source), "--db", str(db), "--entry-agent", "Triage Agent"]) == 0
    first = capsys.readouterr().out
    assert "imported 2 sessions" in first
    async with await open_store(db) as store:
        before = sorted(info.id for info in await store.list_sessions(limit=50))
    assert await_main(["import", str(source), "--db", str(db), "--entry-agent", "Triage Agent"]) == 0
    second = capsys.readouterr().out
    assert "imported 0 sessions" in second and "(2 imported before)" in second and "already imported" in second
    async with await open_store(db) as store:
        assert sorted(info.id for info in await store.list_sessions(limit=50)) == before
