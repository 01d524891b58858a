"""agents.toml validation: every problem is one line naming the file, the key and the fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from supportdesk.config import ConfigError, load_desk, parse_desk, resolve_config_path
from supportdesk.wiring import is_colour
from tests.conftest import REPO, TEST_DESK

TOOLS = ["refund", "explode"]


def problems(text: str) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        parse_desk(text, "desk.toml", tool_names=TOOLS, is_colour=is_colour)
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


# --- one load reports structural problems and cross-checks together ------------------------


def test_structural_and_cross_check_problems_reported_together():
    text = TEST_DESK.replace("[desk.limits]", "[desk.limits]\nmax_hops = 3").replace(
        'handoffs = ["triage"]', 'handoffs = ["triag"]'
    )
    lines = problems(text)
    assert len(lines) == 2
    assert lines[0].startswith("desk.toml: desk.limits.max_hops: unknown key")
    assert lines[1].startswith("desk.toml: agents.senior.handoffs[0]: no agent named 'triag'")


def test_a_broken_agent_is_not_also_unknown_where_it_is_named():
    # billing's table is broken; triage hands off to it, senior's fallback names it.
    text = (
        TEST_DESK.replace('title = "Billing"\ndescription = "money"\n', 'colour = "red"\n')
        .replace('fallback = "triage"', 'fallback = "billing"')
        .replace('handoffs = ["triage"]', 'handoffs = ["triag"]')
    )
    lines = problems(text)
    assert sorted(lines) == sorted(
        [
            "desk.toml: agents.billing.title: required key is missing; add `title = ...`",
            "desk.toml: agents.billing.description: required key is missing; add `description = ...`",
            "desk.toml: agents.billing.colour: unknown key; valid keys here: title, description, level, "
            "color, instructions, tools, handoffs, examples, model, history",
            "desk.toml: agents.senior.handoffs[0]: no agent named 'triag'; "
            "valid agents: billing, senior, technical, triage",
        ]
    )


def test_an_agent_that_is_not_a_table_is_still_an_agent_name():
    text = TEST_DESK.replace('[agents.senior]\ntitle = "Senior"', '[agents.spare]\ntitle = "Senior"').replace(
        "[agents.triage]", '[agents]\nsenior = "level 2"\n\n[agents.triage]'
    )
    [line] = problems(text)
    assert line.startswith("desk.toml: agents.senior: must be a valid dictionary")


def test_the_valid_fields_of_a_broken_agent_are_still_cross_checked():
    text = TEST_DESK.replace("level = 2", 'level = "two"').replace('tools = ["refund"]', 'tools = ["refnd"]')
    lines = problems(text)
    assert len(lines) == 2
    assert "agents.senior.level:" in lines[0]
    assert "agents.senior.tools[0]: no tool named 'refnd'" in lines[1]


def test_a_broken_field_is_not_cross_checked_against_its_default():
    # With entry broken, checking the default "triage" against a desk without one would be a
    # problem the user never wrote.
    text = TEST_DESK.replace('entry = "triage"', "entry = 3").replace("[agents.triage]", "[agents.reception]")
    text = text.replace('"triage"', '"reception"')
    [line] = problems(text)
    assert line == "desk.toml: desk.entry: must be a valid string (got 3)"


def test_a_broken_handoff_list_is_not_cross_checked_but_the_rest_is():
    text = TEST_DESK.replace('handoffs = ["triage"]', 'handoffs = ["triag", 3]').replace(
        'entry = "triage"', 'entry = "reception"'
    )
    lines = problems(text)
    assert len(lines) == 2
    assert lines[0] == "desk.toml: agents.senior.handoffs[1]: must be a valid string (got 3)"
    assert "desk.entry: no agent named 'reception'" in lines[1]
    assert not any("'triag'" in p for p in lines)


def test_without_an_agents_table_no_agent_names_are_checked():
    lines = problems('[desk]\nentry = "reception"\n[policy]\nrefund_limit_level1 = -1\n')
    assert len(lines) == 2
    assert any("agents: required key is missing" in p for p in lines)
    assert any("policy.refund_limit_level1" in p for p in lines)
    assert not any("no agent named" in p or "no agents" in p for p in lines)


def test_a_whole_broken_section_skips_its_checks():
    text = TEST_DESK.replace("[desk]\n", "[desk_]\n").replace("[desk.limits]", "[desk_.limits]")
    text = "desk = 3\n" + text.replace("pingpong_min_unique = 3", "pingpong_min_unique = 9")
    text = text.replace('handoffs = ["triage"]', 'handoffs = ["senior"]')
    lines = problems(text)
    assert any(p.startswith("desk.toml: desk_: unknown key") for p in lines)
    assert any(p.startswith("desk.toml: desk: must be a valid dictionary") for p in lines)
    assert any("agents.senior.handoffs[0]: an agent cannot hand off to itself" in p for p in lines)
    assert not any("pingpong" in p or "desk.entry" in p for p in lines)
    assert len(lines) == 3


def test_openai_checks_run_next_to_structural_problems_and_never_echo_a_key():
    text = TEST_DESK + '\n[model]\nprovider = "openai"\napi_key_env = "sk-abc123-secret"\nbase_url = 5\n'
    lines = problems(text)
    assert any(p.startswith("desk.toml: model.base_url: must be a valid string") for p in lines)
    assert any("model.api_key_env" in p and "NAME" in p for p in lines)
    # base_url is already reported as broken; only the missing model is a cross-check problem.
    assert [p for p in lines if "required when provider" in p] == [
        'desk.toml: model.model: required when provider = "openai"; '
        'for example base_url = "http://127.0.0.1:11434/v1" and model = "llama3.2"'
    ]
    assert not any("sk-abc123-secret" in p for p in lines)


def test_config_check_lists_both_kinds_and_exits_2(tmp_path):
    shipped = (REPO / "agents.toml").read_text()
    broken = shipped.replace('entry = "triage"', 'entry = "nobody"', 1).replace("level = 2", "level = 7", 1)
    assert broken.count("nobody") == 1 and "level = 7" in broken
    bad = tmp_path / "agents.toml"
    bad.write_text(broken)
    run = subprocess.run(
        [sys.executable, "-m", "supportdesk.cli", "config", "check", str(bad)], capture_output=True, text=True
    )
    assert run.returncode == 2
    assert run.stderr.splitlines() == [
        f"{bad}: agents.senior.level: must be less than or equal to 3 (got 7)",
        f"{bad}: desk.entry: no agent named 'nobody'; valid agents: billing, senior, technical, triage",
    ]
    assert run.stdout == ""


def test_the_tuis_cache_serves_a_validated_desk_and_never_a_changed_or_broken_one(tmp_path, monkeypatch):
    """load_desk(cached=True), the TUI's path: the second start takes the validated desk from
    the cache (no validation), a changed file is validated again, a broken one is never kept."""
    import supportdesk.config as config

    desk_file = tmp_path / "agents.toml"
    desk_file.write_text((REPO / "agents.toml").read_text())
    first = load_desk(desk_file, tool_names=(), is_colour=is_colour, cached=True)
    assert len(list((Path(os.environ["XDG_CACHE_HOME"]) / "supportdesk").glob("desk-*.pickle"))) == 1

    validated: list[str] = []
    real_parse = config.parse_desk
    monkeypatch.setattr(config, "parse_desk", lambda text, *a, **kw: validated.append(text) or real_parse(text, *a, **kw))
    again = load_desk(desk_file, tool_names=(), is_colour=is_colour, cached=True)
    assert validated == [] and again == first and again is not first
    assert again.source == str(desk_file) and again.agents["triage"].color == first.agents["triage"].color

    # Other checks asked for: validated, not served from the entry of the unchecked desk.
    with pytest.raises(ConfigError):
        load_desk(desk_file, tool_names=["refund"], is_colour=is_colour, cached=True)
    assert len(validated) == 1

    desk_file.write_text(desk_file.read_text().replace('name = "', 'name = "Renamed ', 1))
    renamed = load_desk(desk_file, tool_names=(), is_colour=is_colour, cached=True)
    assert len(validated) == 2 and renamed.desk.name.startswith("Renamed ")

    desk_file.write_text(desk_file.read_text().replace("[desk]", "[desk]\nbogus = 1", 1))
    for _ in range(2):  # a broken file is reported at every start, never served from a cache
        with pytest.raises(ConfigError) as exc:
            load_desk(desk_file, tool_names=(), is_colour=is_colour, cached=True)
        assert exc.value.problems == [f"{desk_file}: desk.bogus: unknown key; valid keys here: "
                                      "name, entry, fallback, limits, history, sla"]
    assert len(validated) == 4


def test_an_unreadable_cache_entry_is_validated_again(tmp_path):
    desk_file = tmp_path / "agents.toml"
    desk_file.write_text((REPO / "agents.toml").read_text())
    first = load_desk(desk_file, tool_names=(), is_colour=is_colour, cached=True)
    [entry] = (Path(os.environ["XDG_CACHE_HOME"]) / "supportdesk").glob("desk-*.pickle")
    entry.write_bytes(b"not a pickle")
    assert load_desk(desk_file, tool_names=(), is_colour=is_colour, cached=True) == first
    assert entry.read_bytes() != b"not a pickle"  # rewritten from the validated file
