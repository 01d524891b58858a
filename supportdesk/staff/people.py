"""Who of staff acts, and from where: `Actor` (the person, the origin, the macro), the name an
action is by when nobody said (`--as`, `$SUPPORTDESK_STAFF`, `[staff] name` in settings.toml, the
OS login), and what an item of an older kind carries in its meta to say so."""

from __future__ import annotations

import getpass
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from supportdesk.folders import config_dir
from supportdesk.items import STAFF_META, Origin

ORIGINS: tuple[str, ...] = get_args(Origin)
# The staff name when none is given (`--as`, the TUI's settings): this variable, else the OS user.
STAFF_NAME_VARIABLE = "SUPPORTDESK_STAFF"


def settings_path() -> Path:
    """The person's own settings (`[staff] name = "Dana"`), beside their replies.toml."""
    return config_dir() / "settings.toml"


class SettingsError(ValueError):
    """settings.toml cannot be used; the message is one line naming what to fix."""


def chosen_name() -> str | None:
    """The display name this person chose: $SUPPORTDESK_STAFF, else `[staff] name` in
    settings.toml; None when neither says. A settings file that cannot be read is a SettingsError."""
    name = os.environ.get(STAFF_NAME_VARIABLE, "").strip()
    if name:
        return name
    path = settings_path()
    if path.is_file():
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as exc:
            raise SettingsError(f"{path}: cannot be read ({exc}); fix it or remove it") from None
        staff = raw.get("staff", {})
        given = staff.get("name") if isinstance(staff, dict) else None
        if given is not None and (not isinstance(given, str) or not given.strip()):
            raise SettingsError(f"{path}: staff.name must be your name as text, like name = \"Dana\"")
        if given:
            return given.strip()
    return None


def default_person() -> str:
    """Who staff actions are by when nobody said (`--as`): the chosen name (`chosen_name`), else
    the OS user."""
    return chosen_name() or _os_user()


def default_actor(origin: Origin = "tui") -> Actor:
    """The acting person when nobody said (`--as`). An OS login nobody chose as a display name
    ("root") is kept for the audit but never shown to a customer (`Actor.unnamed`)."""
    name = chosen_name()
    return Actor(name, origin) if name else Actor(_os_user(), origin, unnamed=True)


def _os_user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no user name in this environment (a container without passwd entry)
        return "staff"


@dataclass(frozen=True)
class Actor:
    """A member of staff acting from somewhere (tui, cli, api, chatwoot)."""

    person: str
    origin: Origin = "tui"
    macro: str = ""  # the macro this action is a step of (replies.toml), if any
    # The name is the OS login, not a display name anyone chose (`default_actor`): customers
    # are shown the team instead (issue 39 §5: a web customer read "root").
    unnamed: bool = False

    def meta(self) -> dict[str, Any]:
        """What an item of an older kind carries in its meta to say who wrote it."""
        said: dict[str, Any] = {"person": self.person, "origin": self.origin}
        if self.macro:
            said["macro"] = self.macro
        return {STAFF_META: said}

    def act_meta(self) -> dict[str, Any]:
        """The meta of a staff kind's item (its person and origin are fields): the macro, if any."""
        said: dict[str, Any] = {}
        if self.macro:
            said["macro"] = self.macro
        if self.unnamed:
            said["unnamed"] = True
        return {STAFF_META: said} if said else {}
