"""The person's own supportdesk folders, after the XDG base directories: config, cache and data.

One definition of where each lives (six modules spelled out the same fallback before). Read from
the environment at every call, so a test or a second desk can point them elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path


def config_dir() -> Path:
    """`$XDG_CONFIG_HOME/supportdesk`: the desk file, saved replies, settings, the theme."""
    return _base("XDG_CONFIG_HOME", ".config") / "supportdesk"


def cache_dir() -> Path:
    """`$XDG_CACHE_HOME/supportdesk`: what can be rebuilt (trained classifiers, validated desks)."""
    return _base("XDG_CACHE_HOME", ".cache") / "supportdesk"


def data_dir() -> Path:
    """`$XDG_DATA_HOME/supportdesk`: the default SQLite desk."""
    return _base("XDG_DATA_HOME", ".local/share") / "supportdesk"


def _base(variable: str, under_home: str) -> Path:
    return Path(os.environ.get(variable) or Path.home() / under_home)
