"""Themes as files: one TOML file per theme, shipped in `themes/` and read from the user's config.

A theme file holds the colour variables Textual's `Theme` takes plus an `[agents]` table of
per-agent colours (so an agent's label stays readable on a light background too). Every broken
file becomes one error line naming the file and what is wrong; the other themes still load.

The remembered theme lives in `$XDG_CONFIG_HOME/supportdesk/state.json`.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from textual.color import Color, ColorParseError
from textual.theme import Theme

from supportdesk.folders import config_dir

DEFAULT_THEME = "desk-dark"

# The colour variables a theme file may set; `primary` is the one Textual insists on.
COLOR_KEYS = (
    "primary",
    "secondary",
    "accent",
    "background",
    "surface",
    "panel",
    "boost",
    "foreground",
    "warning",
    "error",
    "success",
)
_NUMBER_KEYS = ("luminosity_spread", "text_alpha")
_KNOWN_KEYS = frozenset(("name", "dark", "agents", "variables", *COLOR_KEYS, *_NUMBER_KEYS))
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

# Per-agent colours of every theme loaded so far, by theme name.
_agent_colors: dict[str, dict[str, str]] = {}


class ThemeFileError(Exception):
    """One broken theme file; the message is the whole line the user sees."""


# --- where themes come from ---------------------------------------------------------------------


def shipped_themes_dir() -> Path:
    """The themes that ship with supportdesk: the package's data folder when installed, else the repo's."""
    package = Path(__file__).resolve().parent.parent
    installed = package / "data" / "themes"
    return installed if installed.is_dir() else package.parent / "themes"


def user_themes_dir() -> Path:
    return config_dir() / "themes"


# --- parsing ------------------------------------------------------------------------------------


def _color(path: Path, key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ThemeFileError(f"{path.name}: {key} must be a colour string like \"#5fafff\", got {value!r}")
    try:
        Color.parse(value)
    except ColorParseError:
        raise ThemeFileError(f"{path.name}: {key} = {value!r} is not a colour (try \"#rrggbb\")") from None
    return value


def parse_theme(path: Path, text: str) -> tuple[Theme, dict[str, str]]:
    """One theme file's text -> (Theme, agent colours). Raises ThemeFileError with one line."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ThemeFileError(f"{path.name}: not valid TOML: {exc}") from None
    unknown = sorted(set(data) - _KNOWN_KEYS)
    if unknown:
        raise ThemeFileError(
            f"{path.name}: unknown key {unknown[0]!r} (a theme has name, dark, "
            f"{', '.join(COLOR_KEYS)}, [agents], [variables])"
        )
    name = data.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ThemeFileError(f"{path.name}: name must be a word like \"my-theme\", got {name!r}")
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise ThemeFileError(f"{path.name}: dark must be true or false, got {dark!r}")
    if "primary" not in data:
        raise ThemeFileError(f"{path.name}: primary is missing (every theme needs a primary colour)")
    colors = {key: _color(path, key, data[key]) for key in COLOR_KEYS if key in data}
    numbers: dict[str, float] = {}
    for key in _NUMBER_KEYS:
        if key in data:
            value = data[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ThemeFileError(f"{path.name}: {key} must be a number between 0 and 1, got {value!r}")
            numbers[key] = float(value)
    agents = data.get("agents", {})
    if not isinstance(agents, dict):
        raise ThemeFileError(f"{path.name}: agents must be a table of agent = \"colour\"")
    agent_colors = {str(agent): _color(path, f"agents.{agent}", value) for agent, value in agents.items()}
    extra = data.get("variables", {})
    if not isinstance(extra, dict) or not all(isinstance(v, str) for v in extra.values()):
        raise ThemeFileError(f"{path.name}: variables must be a table of name = \"value\" strings")
    # Agent colours are CSS variables too ($agent-billing), so stylesheets can use them.
    variables = {f"agent-{agent}": value for agent, value in agent_colors.items()} | dict(extra)
    theme = Theme(name=name, dark=dark, variables=variables, **colors, **numbers)  # type: ignore[arg-type]
    return theme, agent_colors


def _theme_files(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.glob("*.toml") if p.is_file())
    except OSError:
        return []


def load_themes(
    shipped_dir: Path | None = None, user_dir: Path | None = None
) -> tuple[list[Theme], list[str]]:
    """The shipped themes, then the user's (a user theme replaces a shipped one of the same name).

    Returns the themes and one error line per file that could not be used.
    """
    by_name: dict[str, Theme] = {}
    errors: list[str] = []
    for folder in (shipped_dir or shipped_themes_dir(), user_dir or user_themes_dir()):
        for path in _theme_files(folder):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                errors.append(f"theme {path.name}: cannot read theme file: {exc.__class__.__name__}")
                continue
            try:
                theme, agents = parse_theme(path, text)
            except ThemeFileError as exc:
                errors.append(f"theme {exc}")
                continue
            by_name[theme.name] = theme
            _agent_colors[theme.name] = agents
    return list(by_name.values()), errors


def agent_colors(theme_name: str) -> dict[str, str]:
    """The per-agent colours of a loaded theme ({} for a theme without any, such as Textual's own)."""
    if not _agent_colors:
        load_themes()
    return dict(_agent_colors.get(theme_name, {}))


def loaded_theme_names() -> list[str]:
    """The names of the themes read from files so far (shipped and the user's)."""
    return list(_agent_colors)


# --- the remembered choice ----------------------------------------------------------------------


def _state_path() -> Path:
    return config_dir() / "state.json"


def _read_state() -> dict[str, Any]:
    try:
        data = json.loads(_state_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def remembered_theme() -> str | None:
    name = _read_state().get("theme")
    return name if isinstance(name, str) and name else None


def remember_theme(name: str) -> bool:
    """Persist the theme choice; False (and nothing raised) when the config folder is not writable."""
    return remember_setting("theme", name)


def remembered_setting(key: str, default: Any = None) -> Any:
    """A setting kept in the state file (`bell`: ring the terminal bell when staff are needed)."""
    return _read_state().get(key, default)


def remember_setting(key: str, value: Any) -> bool:
    """Persist one setting beside the others; False (nothing raised) when the folder is not writable."""
    path = _state_path()
    state = _read_state() | {key: value}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Write-then-rename: a crash mid-write never leaves a half state file behind.
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        return False
    return True


__all__ = [
    "DEFAULT_THEME",
    "ThemeFileError",
    "agent_colors",
    "load_themes",
    "loaded_theme_names",
    "parse_theme",
    "remember_setting",
    "remember_theme",
    "remembered_setting",
    "remembered_theme",
    "shipped_themes_dir",
    "user_themes_dir",
]
