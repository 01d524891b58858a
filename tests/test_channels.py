"""The channel contract (issue 36): every channel name the code writes is declared once, in
`engine/channels.CHANNELS`, which the TUI and `serve` read; the web page and Chatwoot are both
`Channel`s, started and closed by the app through that one contract; Chatwoot pushes (`Delivers`),
the web page pulls. The worked example of a new channel is run by tests/test_extending.py."""

from __future__ import annotations

import ast
from pathlib import Path

from supportdesk.channels.conversations import Conversations, WebChannel
from supportdesk.channels.protocol import Channel, Delivers
from supportdesk.channels.web import create_app
from supportdesk.config import parse_desk
from supportdesk.engine.channels import CHANNELS, SERVED, is_served
from supportdesk.wiring import open_desk
from tests.test_chatwoot import ENV, chatwoot_desk

ROOT = Path(__file__).resolve().parents[1]


def _written_channel_names() -> dict[str, str]:
    """Every literal the package gives a session as its channel: `CHANNEL = "..."` constants,
    `channel="..."` arguments and `channel: str = "..."` defaults, and the TUI's own `_channel`."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "supportdesk").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "supportdesk/store/postgres.py":
            continue  # its CHANNEL is PostgreSQL's LISTEN/NOTIFY channel, not a session's
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            values: list[ast.expr] = []
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "CHANNEL" or isinstance(t, ast.Attribute) and t.attr == "_channel"
                for t in node.targets
            ):
                values.append(node.value)
            elif isinstance(node, ast.keyword) and node.arg == "channel":
                values.append(node.value)
            elif isinstance(node, ast.arguments):
                named = [*node.posonlyargs, *node.args]
                values += [d for a, d in zip(named[len(named) - len(node.defaults):], node.defaults) if a.arg == "channel"]
                values += [d for a, d in zip(node.kwonlyargs, node.kw_defaults) if a.arg == "channel" and d is not None]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "channel" and node.value:
                values.append(node.value)
            for value in values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    found.setdefault(value.value, f"{rel}:{value.lineno}")
    return found


def test_every_channel_name_the_code_writes_is_declared():
    written = _written_channel_names()
    assert {"tui", "cli", "web", "chatwoot", "bench"} <= set(written)  # (the scan finds them)
    assert {name: where for name, where in written.items() if name not in CHANNELS} == {}
    assert SERVED == ("web", "chatwoot") and all(is_served(name) for name in SERVED)
    assert not is_served("tui") and not is_served("bench") and not is_served("no-such-channel")


def test_no_reader_writes_a_served_channel_s_name_itself():
    """The TUI and the serve host read the table; a channel's name is written by its own class
    only (the web channel's lives in conversations.py, beside the host)."""
    found = []
    for path in [*sorted((ROOT / "supportdesk" / "tui").rglob("*.py")), ROOT / "supportdesk" / "channels" / "conversations.py"]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        own = {  # WebChannel's own name
            id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "CHANNEL" for t in node.targets)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in SERVED and id(node) not in own:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}")
    assert found == []


async def test_the_app_runs_web_and_chatwoot_on_the_one_contract(tmp_path: Path):
    config = chatwoot_desk("http://127.0.0.1:9")
    async with await open_desk(tmp_path / "desk.db", config) as desk:
        app = create_app(desk, chatwoot_options={"env": ENV})
        web, chatwoot = app.state.channels
        assert isinstance(web, WebChannel) and web.name == "web" and web.session_for("abc123") == "abc123"
        assert chatwoot is app.state.chatwoot and chatwoot.name == "chatwoot"
        assert chatwoot.session_for("42") == f"cw-{config.channels.chatwoot.account_id}-42"
        assert all(isinstance(channel, Channel) and channel.name in CHANNELS for channel in (web, chatwoot))
        assert isinstance(chatwoot, Delivers) and not isinstance(web, Delivers)
        await chatwoot.close()
    # Without Chatwoot in the desk file, the web page is the only channel.
    plain_config = parse_desk((ROOT / "agents.toml").read_text(encoding="utf-8"), "agents.toml")
    async with await open_desk(tmp_path / "plain.db", plain_config) as desk:
        plain = create_app(desk)
        assert [channel.name for channel in plain.state.channels] == ["web"]
        assert isinstance(plain.state.conversations, Conversations)
