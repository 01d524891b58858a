"""The worked examples of docs/extending.md, built and run: if the guide's steps stop being
true of the code, these fail.

Each section builds the toy the guide builds (a tool, an agent, a provider, a hook, an item
kind's consumers, a store backend's registration) with nothing but the public pieces the guide
names, and runs it through the real desk: `open_desk`, the runner, the store, doctor.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args, get_type_hints

import pytest
from pydantic import BaseModel, Field
from textual.widgets import Static

from supportdesk.config import ConfigError, DeskConfig, ToolLimits, load_desk, parse_desk
from supportdesk.commands.doctor import diagnose
from supportdesk.engine.handoffs import handoff_kind, transfer_tool_name
from supportdesk.engine.protocol import (
    Action,
    Answer,
    CallTools,
    ModelProvider,
    ModelServer,
    RequestedCall,
    StepRequest,
    TextDelta,
    Transfer,
)
from supportdesk.engine.runner import drain
from supportdesk.engine.tools import ToolContext, ToolRegistry
from supportdesk.items import (
    ITEM_KINDS,
    ContextSet,
    Handoff,
    Item,
    Message,
    Notice,
    Release,
    StaffReply,
    StateChange,
    TagChange,
    Takeover,
    ToolCall,
    ToolResult,
)
from supportdesk.store import Store, StoreLocation, open_store
from supportdesk.tui.projection import Pane, Snapshot, advance, new_session
from supportdesk.wiring import is_colour, open_desk
from tests.conftest import TEST_DESK, make_test_tools
from tests.test_item_kinds import SAMPLES
from tests.scripted import ScriptedModel
from tests.tui_seed import SEED_ID, scripted_desk, seed_double_charge, until

# --- a new tool --------------------------------------------------------------------------------


class GiftCardArgs(BaseModel):
    customer_id: str = Field(description="The customer's id, e.g. CUS-1001")
    amount: float = Field(gt=0, description="Value of the gift card, in dollars")


# Limits live with the tool, never in a prompt: declared once, here; the desk file may set other
# values in `[tools.issue_gift_card]`. The engine enforces them in every call.
GIFT_CARD_LIMITS = ToolLimits(limit_level1=20.0, limit_level2=100.0, approval_threshold=60.0)


def toy_tools() -> ToolRegistry:
    registry, _ = make_test_tools()

    @registry.tool(
        "issue_gift_card", "Give the customer a gift card.", GiftCardArgs,
        effect="money", limits=GIFT_CARD_LIMITS, what="a gift card",
    )
    def issue_gift_card(ctx: ToolContext, args: GiftCardArgs) -> dict[str, Any]:
        return {"customer_id": args.customer_id, "gift_card": args.amount}

    return registry


GIFT_DESK = TEST_DESK.replace('tools = ["refund", "explode"]', 'tools = ["refund", "explode", "issue_gift_card"]').replace(
    'level = 2\ntools = ["refund"]', 'level = 2\ntools = ["refund", "issue_gift_card"]'
)


def gift(call_id: str, amount: float) -> CallTools:
    return CallTools([RequestedCall(call_id, "issue_gift_card", {"customer_id": "CUS-1001", "amount": amount})])


async def gift_results(tmp_path: Path, desk_text: str, script: list[Any]) -> tuple[list[ToolResult], ScriptedModel]:
    tools = toy_tools()
    config = parse_desk(desk_text, "desk.toml", tool_names=tools.declared_limits())
    model = ScriptedModel(script)
    async with await open_desk(tmp_path / "desk.db", config, provider=model, tools=tools, customers=False) as desk:
        events = await drain(desk.runner.send(None, "a gift card please"))
    return [e.item for e in events if isinstance(getattr(e, "item", None), ToolResult)], model


async def test_a_new_tool_is_offered_checked_and_run(tmp_path: Path):
    results, model = await gift_results(
        tmp_path, GIFT_DESK, [Transfer("billing", "a gift"), gift("c1", 15), gift("c2", 50), Answer("Done.")]
    )
    assert [r.is_error for r in results] == [False, True]
    assert json.loads(results[0].output) == {"customer_id": "CUS-1001", "gift_card": 15.0}
    assert "a gift card of $50.00 is above the $20.00 limit for level-1 agents" in results[1].output
    # the model was offered the tool with its argument schema, and its limits on this desk
    billing_step = model.requests[1]
    [spec] = [t for t in billing_step.tools if t.name == "issue_gift_card"]
    assert spec.json_schema()["properties"]["amount"]["exclusiveMinimum"] == 0
    assert spec.limits.per_call(1) == 20.0


async def test_a_new_tool_s_limits_are_set_in_the_desk_file(tmp_path: Path):
    """`[tools.issue_gift_card]` lowers level 1's limit and the approval threshold: 15 is now
    refused for billing, and senior's 50 waits for staff (neither needed a line of Python)."""
    desk = GIFT_DESK + "\n[tools.issue_gift_card]\nlimit_level1 = 10.0\napproval_threshold = 40.0\n"
    script = [Transfer("billing", "a gift"), gift("c1", 15), Transfer("senior", "more"), gift("c2", 50), Answer("Done.")]
    results, _ = await gift_results(tmp_path, desk, script)
    assert results[0].is_error and "above the $10.00 limit for level-1 agents" in results[0].output
    assert results[1].awaits_approval and "a gift card of $50.00 is at or above the $40.00 approval threshold" in results[1].output


def test_an_agent_naming_a_tool_nobody_registered_is_one_line():
    with pytest.raises(ConfigError) as exc:
        parse_desk(GIFT_DESK, "desk.toml", tool_names=make_test_tools()[0].names())
    assert exc.value.problems == [
        "desk.toml: agents.billing.tools[2]: no tool named 'issue_gift_card'; valid tools: explode, refund",
        "desk.toml: agents.senior.tools[1]: no tool named 'issue_gift_card'; valid tools: explode, refund",
    ]


def test_a_limit_the_new_tool_does_not_declare_is_one_line():
    with pytest.raises(ConfigError) as exc:
        parse_desk(GIFT_DESK + "\n[tools.issue_gift_card]\nlimit_per_customer = 100.0\n", "desk.toml", tool_names=toy_tools().declared_limits())
    assert exc.value.problems == [
        "desk.toml: tools.issue_gift_card.limit_per_customer: issue_gift_card declares no limit_per_customer; "
        "the limits it declares: limit_level1, limit_level2, approval_threshold"
    ]


# --- a new agent -------------------------------------------------------------------------------

RETURNS_AGENT = """
[agents.returns]
title = "Returns"
description = "Product returns and exchanges: return labels, exchange requests, return status."
instructions = "You handle returns. Never refund: hand refunds to billing."
handoffs = ["billing", "triage"]
color = "#af87ff"
"""


def returns_desk_file(tmp_path: Path) -> Path:
    text = TEST_DESK.replace('handoffs = ["billing", "technical"]', 'handoffs = ["billing", "technical", "returns"]') + RETURNS_AGENT
    path = tmp_path / "agents.toml"
    path.write_text(text)
    return path


async def test_a_new_agent_is_reachable_by_handoff(tmp_path: Path):
    config = load_desk(returns_desk_file(tmp_path), tool_names=make_test_tools()[0].names(), is_colour=is_colour)
    assert config.agents["returns"].title == "Returns"
    model = ScriptedModel([Transfer("returns", "a return"), Answer("Here is your return label.")])
    tools, _ = make_test_tools()
    async with await open_desk(tmp_path / "desk.db", config, provider=model, tools=tools, customers=False) as desk:
        events = await drain(desk.runner.send(None, "I want to return my order"))
        session_id = events[0].session_id
        assert await desk.store.agent_at(session_id, await desk.store.last_seq(session_id)) == "returns"
    handoffs = [e.item for e in events if isinstance(getattr(e, "item", None), Handoff)]
    assert [(h.from_agent, h.to_agent) for h in handoffs] == [("triage", "returns")]
    # the returns agent saw its own handoff targets as transfer tools
    assert [a.name for a in model.requests[1].handoff_targets] == ["billing", "triage"]


def test_a_new_agent_with_a_bad_handoff_or_colour_is_named_in_one_report(tmp_path: Path):
    path = returns_desk_file(tmp_path)
    path.write_text(path.read_text().replace('handoffs = ["billing", "triage"]', 'handoffs = ["biling"]').replace("#af87ff", "purplish"))
    with pytest.raises(ConfigError) as exc:
        load_desk(path, tool_names=make_test_tools()[0].names(), is_colour=is_colour)
    assert any("agents.returns.handoffs" in p and "biling" in p for p in exc.value.problems), exc.value.problems
    assert any("agents.returns.color: 'purplish' is not a colour" in p for p in exc.value.problems), exc.value.problems


# --- a new provider ----------------------------------------------------------------------------


class EchoServerProvider:
    """A toy provider for a made-up model server: answers by echoing, and transfers when told
    to. It implements ModelProvider (what the runner calls) and ModelServer (what doctor checks)."""

    name = "echo"

    def __init__(self, config: DeskConfig, served: list[str], tool_calls: bool = True):
        self.config = config
        self.served = served
        self.tool_calls = tool_calls
        self.closed = False

    async def stream(self, request: StepRequest):
        said = next((i.text for i in reversed(request.history) if isinstance(i, Message) and i.role == "customer"), "")
        target = said.removeprefix("transfer ").strip() if said.startswith("transfer ") else None
        if target and request.agent.name != target and any(a.name == target for a in request.handoff_targets):
            kind = handoff_kind(self.config, request.agent.name, target)
            call = RequestedCall("t1", transfer_tool_name(target), {"reason": "asked"})
            yield Transfer(target, "asked", handoff_kind=kind, call=call)
            return
        yield TextDelta(f"echo: {said}")
        yield Answer(f"echo: {said}")

    async def aclose(self) -> None:
        self.closed = True

    def describe(self) -> str:
        return "echo server at loopback"

    async def list_models(self) -> list[str]:
        return list(self.served)

    async def probe_tools(self, model: str) -> bool:
        return self.tool_calls


def echo_config() -> DeskConfig:
    text = TEST_DESK + '\n[model]\nprovider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "echo-1"\n'
    return parse_desk(text, "echo.toml", tool_names=["refund", "explode"])


def test_the_toy_provider_speaks_both_protocols():
    provider = EchoServerProvider(echo_config(), ["echo-1"])
    assert isinstance(provider, ModelProvider) and isinstance(provider, ModelServer)


async def test_doctor_checks_a_new_provider_without_knowing_it():
    config = echo_config()
    lines: list[str] = []
    provider = EchoServerProvider(config, ["echo-1", "echo-2"])
    assert await diagnose(config, out=lines.append, provider=provider) == 0
    assert provider.closed
    assert lines[1] == "✓ provider  echo server at loopback"
    assert any("echo-1 is served" in line for line in lines)
    assert lines[-1].startswith("✓ tools") and "echo-1 made a tool call" in lines[-1]

    lines.clear()
    failing = EchoServerProvider(config, ["other"], tool_calls=False)
    assert await diagnose(config, out=lines.append, provider=failing) == 1
    assert any(line.startswith("✗ model") and "echo-1 is not served" in line for line in lines), lines


async def test_the_runner_runs_a_new_provider_and_logs_its_transfer_by_the_desk_s_rules(tmp_path: Path):
    config = echo_config()
    tools, _ = make_test_tools()
    provider = EchoServerProvider(config, ["echo-1"])
    async with await open_desk(tmp_path / "desk.db", config, provider=provider, tools=tools, customers=False) as desk:
        events = await drain(desk.runner.send(None, "transfer billing"))
        items = await desk.store.range(events[0].session_id, 1, 100)
    handoffs = [i for i in items if isinstance(i, Handoff)]
    assert [(h.to_agent, h.handoff_kind) for h in handoffs] == [("billing", "route")]
    assert [i.text for i in items if isinstance(i, Message) and i.role == "agent"] == ["echo: transfer billing"]


# --- a new hook --------------------------------------------------------------------------------

HOOK_MODULE = '''
from supportdesk.engine.hooks import DeskHook, Veto


class NoRefundsOnSunday(DeskHook):
    """Team policy as a hook: no refund tool call on the day the books close."""

    def __init__(self, today="Sunday"):
        self.today = today

    def before_tool_call(self, event):
        if event.name == "refund" and self.today == "Sunday":
            return Veto("refunds wait until Monday")
        return None
'''


@pytest.fixture
def hook_module(tmp_path: Path, monkeypatch):
    (tmp_path / "desk_policy_hooks.py").write_text(textwrap.dedent(HOOK_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "desk_policy_hooks:NoRefundsOnSunday"
    sys.modules.pop("desk_policy_hooks", None)


async def test_a_new_hook_named_in_the_desk_file_vetoes_a_tool_call(tmp_path: Path, hook_module: str):
    config = parse_desk(TEST_DESK + f'\n[hooks]\nenabled = ["{hook_module}"]\n', "desk.toml", tool_names=["refund", "explode"])
    tools, refunds = make_test_tools()
    model = ScriptedModel([Transfer("billing", "money"), CallTools([RequestedCall("c1", "refund", {"amount": 5})]), Answer("ok")])
    async with await open_desk(tmp_path / "desk.db", config, provider=model, tools=tools, customers=False) as desk:
        assert [name for name, _ in desk.runner.hooks.hooks] == [hook_module]
        events = await drain(desk.runner.send(None, "refund me"))
    [result] = [e.item for e in events if isinstance(getattr(e, "item", None), ToolResult)]
    assert result.is_error and "refunds wait until Monday" in str(result.output)
    assert refunds == []  # the tool never ran


def test_a_hook_that_cannot_be_loaded_is_a_config_error_naming_it():
    config = parse_desk(TEST_DESK + '\n[hooks]\nenabled = ["desk_policy_hooks_missing:Nope"]\n', "desk.toml", tool_names=["refund", "explode"])
    from supportdesk.wiring import desk_hooks

    with pytest.raises(ConfigError) as exc:
        desk_hooks(config)
    [line] = exc.value.problems
    assert line.startswith("desk.toml: [hooks] hook 'desk_policy_hooks_missing:Nope' cannot be loaded")


# --- a new item kind: every consumer handles every kind ---------------------------------------

NOW = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
# One item of each kind: the first of `tests/test_item_kinds.py`'s samples (the one list of
# samples). A new kind adds its samples there first: the tests below then fail until every
# consumer the guide lists handles it.
EXAMPLES: dict[str, Item] = {kind: items[0] for kind, items in SAMPLES.items()}


def _stamped(item: Item, seq: int) -> Item:
    return replace(item, session_id="s1", seq=seq, created_at=NOW)


def test_every_kind_of_the_union_is_listed_and_has_an_example():
    union_kinds = {get_args(get_type_hints(model)["kind"])[0] for model in get_args(Item)}
    assert union_kinds == set(ITEM_KINDS) == set(EXAMPLES)


def test_every_consumer_handles_every_kind():
    from supportdesk.engine.history_window import item_text
    from supportdesk.reports.export import item_line
    from supportdesk.models.history import build_messages
    from supportdesk.models.offline.view import View
    from supportdesk.tui.widgets.items import folds, frame, renderable
    from supportdesk.tui.widgets.render import AgentLook

    config = parse_desk(TEST_DESK, "desk.toml", tool_names=["refund", "explode"])
    look = AgentLook(config, {})
    items = [_stamped(item, n) for n, item in enumerate(EXAMPLES.values(), start=1)]
    for item in items:
        assert isinstance(item_line(item, config), str)
        assert isinstance(item_text(item), str)
        frame(item)
        renderable(item, look)
        folds(item)
    request = StepRequest("s1", config.agents["billing"], config, [], [], items, {})
    assert build_messages(request)[0]["role"] == "system"
    View(request)


# --- a new store backend: every location kind reaches an adapter the contract suite runs -----


# Each kind `--db` can select, by the name the contract suite (tests/test_store.py) runs it under.
CONTRACT_SUITE_NAME = {"sqlite": "sqlite", "postgresql": "postgres"}


def test_every_location_kind_has_an_adapter_and_is_in_the_contract_suite():
    import test_store

    kinds = set(get_args(get_type_hints(StoreLocation)["kind"]))
    assert kinds <= CONTRACT_SUITE_NAME.keys(), "a new backend: name it here and add it to BACKENDS in tests/test_store.py"
    suite = {p.values[0] if hasattr(p, "values") else p for p in test_store.BACKENDS}
    assert {CONTRACT_SUITE_NAME[kind] for kind in kinds} == suite


async def test_the_sqlite_adapter_satisfies_the_store_contract(tmp_path: Path):
    async with await open_store(tmp_path / "desk.db") as store:
        assert isinstance(store, Store)


def test_actions_are_the_three_the_runner_dispatches():
    assert set(get_args(Action)) == {Answer, CallTools, Transfer}


# --- a new pane: implement the protocol; both screens show it, live and at the cursor ----------


class ContextKeysPane(Static):
    """How many shared-context keys there are as of k, and who holds the conversation."""

    def __init__(self) -> None:
        super().__init__("", id="context-keys", markup=False)
        self.snapshot = new_session("")

    async def show(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.update(f"{len(snapshot.context)} keys as of item {snapshot.position} · {snapshot.agent}")

    async def extend(self, items: Sequence[Item]) -> None:
        await self.show(advance(self.snapshot, items))


class CountedKeysPane(ContextKeysPane):
    """The example pane, saying which of the two paths reached it."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    async def show(self, snapshot: Snapshot) -> None:
        if not self.calls or self.calls[-1] != "extend…":
            self.calls.append("show")
        await super().show(snapshot)  # (the example's `extend` redraws through `show` too)

    async def extend(self, items: Sequence[Item]) -> None:
        self.calls.append("extend…")
        await super().extend(items)
        self.calls[-1] = "extend"


async def test_a_new_pane_is_shown_by_chat_and_replay_through_the_protocol(db_path: Path, test_desk, monkeypatch):
    from supportdesk.tui.app import SupportDeskApp
    from supportdesk.tui.screens import chat as chat_screen, replay as replay_screen

    # Step 3 of the guide (compose it beside the other panes), as subclasses: neither screen's
    # own code knows about the pane.
    class ChatWithKeys(chat_screen.ChatScreen):
        def compose(self):
            yield from super().compose()
            yield CountedKeysPane()

    class ReplayWithKeys(replay_screen.ReplayScreen):
        CSS_PATH = Path(replay_screen.__file__).with_name("replay.tcss")

        def compose(self):
            yield from super().compose()
            yield CountedKeysPane()

    monkeypatch.setattr(chat_screen, "ChatScreen", ChatWithKeys)
    monkeypatch.setattr(replay_screen, "ReplayScreen", ReplayWithKeys)
    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_double_charge(desk.store)

    try:
        await _new_pane_on_both_screens(SupportDeskApp(desk=desk, session_id=SEED_ID), ReplayWithKeys)
    finally:
        await desk.close()


async def _new_pane_on_both_screens(app: Any, replay_type: type) -> None:
    def says(pane: CountedKeysPane) -> str:
        return str(pane.render())

    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.loaded == SEED_ID)
        chat = app.chat
        assert chat is not None
        pane = chat.query_one(CountedKeysPane)
        assert isinstance(pane, Pane) and pane in chat.panes
        # Shown: the session loaded at its end.
        assert says(pane) == "4 keys as of item 14 · billing" and pane.calls == ["show"]
        # Extended: staff writes at the live end (one key added, one cleared), no reload.
        await chat.set_context("plan", "pro")
        await until(pilot, lambda: says(pane) == "5 keys as of item 15 · billing")
        await chat.set_context("issue", None)
        await until(pilot, lambda: says(pane) == "4 keys as of item 16 · billing")
        assert pane.calls == ["show", "extend", "extend"]
        # Shown again: a new session.
        await chat.action_new_session()
        await until(pilot, lambda: says(pane) == "0 keys as of item 0 · triage")

        # Replay: the cursor's snapshots, through the same two methods.
        app.open_replay(SEED_ID, 5)
        await until(pilot, lambda: isinstance(app.screen, replay_type) and app.screen.shown == 5)
        replay = app.screen
        keys = replay.query_one(CountedKeysPane)
        assert says(keys) == "2 keys as of item 5 · billing"
        await pilot.press("left", "left", "left")
        await until(pilot, lambda: replay.shown == 2 and not replay.workers)
        assert says(keys) == "1 keys as of item 2 · triage"
        await pilot.press("end")
        await until(pilot, lambda: replay.shown == 16 and not replay.workers)
        assert says(keys) == "4 keys as of item 16 · billing"
        assert set(keys.calls) == {"show"}  # a cursor is shown, never extended


# --- a customer channel (docs/extending.md, "A customer channel") -------------------------------

ROOT = Path(__file__).resolve().parents[1]


def channel_example() -> type:
    """The guide's worked example, run as the guide prints it (so the two cannot drift)."""
    from supportdesk.channels.conversations import Conversations
    from supportdesk.channels.view import CustomerEvent
    from supportdesk.engine.runner import DuplicateItem

    text = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
    section = text[text.index("\n## A customer channel\n"):]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, Any] = {
        "json": json, "Path": Path, "Conversations": Conversations, "CustomerEvent": CustomerEvent,
        "DuplicateItem": DuplicateItem, "__name__": "extending_channel",
    }
    exec(compile(code, "docs/extending.md (A customer channel)", "exec"), namespace)
    return namespace["JsonLinesChannel"]


async def test_a_new_channel_receives_and_delivers_through_the_host(tmp_path: Path, monkeypatch):
    import asyncio

    from supportdesk.channels.conversations import Conversations
    from supportdesk.channels.protocol import Channel, Delivers
    from supportdesk.engine.channels import CHANNELS, is_served

    monkeypatch.setitem(CHANNELS, "jsonl", "served")  # step 1: its name in engine/channels.CHANNELS
    example = channel_example()

    class Watched(example):  # type: ignore[misc, valid-type]
        """The example, telling the test each delivery (no polling for the outbox)."""

        sent: asyncio.Queue[str] = asyncio.Queue()

        async def deliver(self, session_id, event):
            done = await super().deliver(session_id, event)
            if done:
                self.sent.put_nowait(session_id)
            return done

    inbox, outbox = tmp_path / "inbox.jsonl", tmp_path / "outbox.jsonl"
    inbox.write_text(json.dumps({"thread": "t1", "text": "Where is my refund?"}) + "\n")
    config = parse_desk(TEST_DESK, "desk.toml", tool_names=make_test_tools()[0].names())
    model = ScriptedModel([Answer("It went out on Monday.")])
    async with await open_desk(tmp_path / "desk.db", config, provider=model, tools=make_test_tools()[0], customers=False) as desk:
        host = Conversations(desk)
        channel = Watched(host, inbox, outbox)
        assert isinstance(channel, Channel) and isinstance(channel, Delivers)
        await channel.start()
        await host.start()
        try:
            assert await asyncio.wait_for(channel.sent.get(), 10) == "jsonl-t1"
            info = await desk.store.get_session("jsonl-t1")
            assert info is not None and info.channel == "jsonl" and is_served(info.channel)
            assert [json.loads(line) for line in outbox.read_text().splitlines()] == [
                {"session": "jsonl-t1", "text": "It went out on Monday."}
            ]
            # A restart reads the same inbox again: the line is not stored (nor answered) twice.
            await Watched(host, inbox, outbox).start()
            await host.idle()
            customer = [i for i in await desk.store.of_kind("jsonl-t1", "message") if i.role == "customer"]  # type: ignore[union-attr]
            assert [m.text for m in customer] == ["Where is my refund?"]
            with pytest.raises(ValueError, match="letters and digits"):
                channel.session_for("../../etc")
        finally:
            await channel.close()
            await host.close()
