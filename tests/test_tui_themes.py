"""Theme files: the shipped ones load, user themes load, a broken file is one line, the choice is remembered."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App

from supportdesk.tui import themes
from supportdesk.tui.themes import (
    DEFAULT_THEME,
    agent_colors,
    load_themes,
    remember_theme,
    remembered_theme,
    shipped_themes_dir,
)

REPO = Path(__file__).resolve().parent.parent

USER_THEME = """
name = "night-shift"
dark = true
primary = "#ff8800"
background = "#101010"
[agents]
billing = "#00ff00"
"""


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


def _write_user_theme(config_home: Path, name: str, text: str) -> Path:
    folder = config_home / "supportdesk" / "themes"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_three_shipped_themes_load_without_errors() -> None:
    loaded, errors = load_themes()
    by_name = {t.name: t for t in loaded}
    assert errors == []
    assert shipped_themes_dir() == REPO / "themes"
    assert {"desk-dark", "desk-light", "desk-contrast"} <= set(by_name)
    assert DEFAULT_THEME in by_name
    assert by_name["desk-dark"].dark is True
    assert by_name["desk-light"].dark is False
    assert by_name["desk-contrast"].background == "#000000"
    # every shipped theme colours every agent of the default desk
    for name in ("desk-dark", "desk-light", "desk-contrast"):
        assert set(agent_colors(name)) >= {"triage", "billing", "technical", "senior"}
    assert agent_colors("desk-light")["billing"] != agent_colors("desk-dark")["billing"]
    assert not (REPO / "themes" / ".keep").exists()


def test_a_user_theme_loads_beside_the_shipped_ones(config_home: Path) -> None:
    _write_user_theme(config_home, "night.toml", USER_THEME)
    loaded, errors = load_themes()
    names = [t.name for t in loaded]
    assert errors == []
    assert "night-shift" in names and "desk-dark" in names
    night = next(t for t in loaded if t.name == "night-shift")
    assert night.primary == "#ff8800"
    assert agent_colors("night-shift") == {"billing": "#00ff00"}
    # agent colours also become CSS variables ($agent-billing)
    assert night.variables["agent-billing"] == "#00ff00"


def test_a_user_theme_replaces_a_shipped_one_of_the_same_name(config_home: Path) -> None:
    _write_user_theme(config_home, "mine.toml", 'name = "desk-dark"\nprimary = "#123456"\n')
    loaded, errors = load_themes()
    assert errors == []
    assert [t.primary for t in loaded if t.name == "desk-dark"] == ["#123456"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('name = "x"\nprimary = "#ffffff"\n[agents\n', "not valid TOML"),
        ('name = "x"\nprimary = "not-a-colour"\n', "primary = 'not-a-colour' is not a colour"),
        ('name = "x"\nbackground = "#000000"\n', "primary is missing"),
        ('name = "x"\nprimary = "#ffffff"\ndark = "yes"\n', "dark must be true or false"),
        ('name = "x"\nprimary = "#ffffff"\nprimry = "#ffffff"\n', "unknown key 'primry'"),
        ('primary = "#ffffff"\n', "name must be a word"),
        ('name = "x"\nprimary = "#ffffff"\n[agents]\nbilling = "blurple"\n', "agents.billing"),
    ],
)
def test_a_broken_theme_file_is_one_clear_line_and_the_rest_still_load(
    config_home: Path, text: str, expected: str
) -> None:
    _write_user_theme(config_home, "broken.toml", text)
    _write_user_theme(config_home, "night.toml", USER_THEME)
    loaded, errors = load_themes()
    assert len(errors) == 1
    line = errors[0]
    assert "\n" not in line
    assert "broken.toml" in line and expected in line
    names = {t.name for t in loaded}
    assert {"desk-dark", "desk-light", "desk-contrast", "night-shift"} <= names
    assert "x" not in names


def test_remember_and_restore_the_theme(config_home: Path) -> None:
    assert remembered_theme() is None
    assert remember_theme("desk-light") is True
    assert remembered_theme() == "desk-light"
    state = config_home / "supportdesk" / "state.json"
    assert state.is_file()
    remember_theme("desk-contrast")
    assert remembered_theme() == "desk-contrast"


def test_a_corrupt_state_file_means_nothing_remembered(config_home: Path) -> None:
    state = config_home / "supportdesk" / "state.json"
    state.parent.mkdir(parents=True)
    state.write_text("{not json", encoding="utf-8")
    assert remembered_theme() is None
    assert remember_theme("desk-dark") is True  # and it is repaired by the next choice
    assert remembered_theme() == "desk-dark"


def test_an_unwritable_config_folder_is_not_an_error(config_home: Path) -> None:
    config_home.mkdir(parents=True)
    (config_home / "supportdesk").write_text("a file where the folder should be")
    assert remember_theme("desk-light") is False
    assert remembered_theme() is None


def test_an_unloaded_theme_has_no_agent_colours() -> None:
    load_themes()
    assert agent_colors("textual-dark") == {}
    assert "desk-dark" in themes.loaded_theme_names()


async def test_loaded_themes_apply_in_a_textual_app() -> None:
    loaded, _ = load_themes()

    class Host(App[None]):
        pass

    app = Host()
    async with app.run_test(size=(40, 10)) as pilot:
        for theme in loaded:
            app.register_theme(theme)
        for name in ("desk-dark", "desk-light", "desk-contrast"):
            app.theme = name
            await pilot.pause()
            assert app.current_theme.name == name
            assert app.theme_variables["agent-billing"].lower() == agent_colors(name)["billing"].lower()
        assert app.current_theme.dark is True
        app.theme = "desk-light"
        await pilot.pause()
        assert app.current_theme.dark is False
