"""agents.toml validation: every problem is one line naming the file, the key and the fix."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from supportdesk.config import ConfigError, load_desk, parse_desk, resolve_config_path
from tests.conftest import REPO, TEST_DESK

TOOLS = ["refund", "explode"]


def problems(text: str) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        parse_desk(text, "desk.toml", tool_names=TOOLS)
    return exc.value.problems


def test_default_desk_is_valid():
    desk = load_desk(REPO / "agents.toml")
    assert desk.desk.entry == "triage"
    assert set(desk.agents) == {"triage", "billing", "technical", "senior"}
    assert desk.agents["senior"].level == 2
    assert desk.model.provider == "offline"
    assert all(desk.agents[t] for a in desk.agents.values() for t in a.handoffs)


def test_unknown_key_names_the_valid_ones():
    [line] = problems(TEST_DESK.replace("[desk.limits]", "[desk.limits]\nmax_hops = 3"))
    assert line.startswith("desk.toml: desk.limits.max_hops: unknown key")
    assert "max_handoffs_per_message" in line


def test_unknown_agent_key():
    [line] = problems(TEST_DESK.replace('title = "Billing"', 'title = "Billing"\ncolour = "red"'))
    assert "agents.billing.colour: unknown key" in line and "color" in line


def test_unknown_handoff_target():
    [line] = problems(TEST_DESK.replace('handoffs = ["triage"]', 'handoffs = ["triag"]'))
    assert "agents.senior.handoffs[0]: no agent named 'triag'" in line
    assert "valid agents: billing, senior, technical, triage" in line


def test_unknown_tool():
    [line] = problems(TEST_DESK.replace('tools = ["refund"]', 'tools = ["refnd"]'))
    assert "agents.senior.tools[0]: no tool named 'refnd'" in line and "valid tools: explode, refund" in line


def test_missing_entry_agent():
    [line] = problems(TEST_DESK.replace('entry = "triage"', 'entry = "reception"'))
    assert "desk.entry: no agent named 'reception'" in line


def test_wrong_type_and_missing_required_key_reported_together():
    text = TEST_DESK.replace("level = 2", 'level = "two"').replace('description = "fixes"\n', "")
    lines = problems(text)
    assert len(lines) == 2
    assert any("agents.senior.level:" in p and "integer" in p and "'two'" in p for p in lines)
    assert any("agents.technical.description: required key is missing" in p for p in lines)


def test_bad_toml_names_the_line():
    [line] = problems("[desk\nentry = 1")
    assert line.startswith("desk.toml: not valid TOML") and "line 1" in line


def test_openai_provider_needs_url_and_model():
    lines = problems(TEST_DESK + '\n[model]\nprovider = "openai"\n')
    assert any("model.base_url: required" in p for p in lines)
    assert any("model.model: required" in p for p in lines)


def test_api_key_env_must_be_a_name_not_a_key():
    lines = problems(TEST_DESK + '\n[model]\napi_key_env = "sk-abc123-secret"\n')
    assert any("model.api_key_env" in p and "NAME" in p for p in lines)
    assert not any("sk-abc123-secret" in p for p in lines), "a key must never be echoed"


def test_bad_colour_and_pingpong_bounds():
    text = TEST_DESK.replace('title = "Triage"', 'title = "Triage"\ncolor = "blurple"').replace(
        "pingpong_min_unique = 3", "pingpong_min_unique = 9"
    )
    lines = problems(text)
    assert any("agents.triage.color: 'blurple' is not a colour" in p for p in lines)
    assert any("desk.limits.pingpong_min_unique" in p for p in lines)


def test_resolution_order(tmp_path, monkeypatch):
    monkeypatch.delenv("SUPPORTDESK_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    packaged = resolve_config_path(None)
    assert packaged.name == "agents.toml" and packaged.is_file()
    user = tmp_path / "xdg" / "supportdesk" / "agents.toml"
    user.parent.mkdir(parents=True)
    user.write_text(TEST_DESK)
    assert resolve_config_path(None) == user
    (tmp_path / "agents.toml").write_text(TEST_DESK)
    assert resolve_config_path(None) == tmp_path / "agents.toml"
    monkeypatch.setenv("SUPPORTDESK_CONFIG", "/x/env.toml")
    assert resolve_config_path(None) == Path("/x/env.toml")
    assert resolve_config_path("cli.toml") == Path("cli.toml")


def test_config_check_command(tmp_path):
    bad = tmp_path / "agents.toml"
    bad.write_text(TEST_DESK.replace('entry = "triage"', 'entry = "nobody"'))
    run = subprocess.run(
        [sys.executable, "-m", "supportdesk.cli", "config", "check", str(bad)], capture_output=True, text=True
    )
    assert run.returncode == 2
    assert f"{bad}: desk.entry: no agent named 'nobody'" in run.stderr
    assert "Traceback" not in run.stderr
    ok = subprocess.run(
        [sys.executable, "-m", "supportdesk.cli", "config", "check", str(REPO / "agents.toml")],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0 and "ok" in ok.stdout


def test_missing_file():
    with pytest.raises(ConfigError, match="no such file"):
        load_desk("/nonexistent/agents.toml")
