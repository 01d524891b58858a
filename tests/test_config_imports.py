"""The TUI's start-up path through config imports no pydantic: the settings are plain
dataclasses, and a desk validated at an earlier start is read back from the cache without it.

Each probe is a fresh interpreter, so `sys.modules` says what the path itself imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

PROBE = r"""
import dataclasses, json, sys

import supportdesk.config as config

after_import = sorted(m for m in sys.modules if m.startswith("pydantic"))
if sys.argv[2] == "from-cache":
    def validate(*args, **kwargs):
        raise AssertionError("validated again instead of read from the cache")
    config.parse_desk = validate

def is_colour(text):  # the TUI passes its terminal's check; the cache is keyed on its name
    return True

cfg = config.load_desk(sys.argv[1], tool_names=(), is_colour=is_colour, cached=True)
print(json.dumps({
    "after_import": after_import,
    "after_load": sorted(m for m in sys.modules if m.startswith("pydantic")),
    "desk": dataclasses.asdict(cfg),
    "repr": repr(cfg),
}))
"""


def _probe(desk_file: Path, mode: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    run = subprocess.run(
        [sys.executable, "-c", PROBE, str(desk_file), mode], capture_output=True, text=True, env=env, timeout=120
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_a_desk_read_from_the_cache_imports_no_pydantic(tmp_path):
    # XDG_CACHE_HOME is the test's own (conftest), and the probes inherit it.
    desk_file = tmp_path / "agents.toml"
    desk_file.write_text((REPO / "agents.toml").read_text())

    validated = _probe(desk_file, "validate")
    assert validated["after_import"] == []  # importing config alone imports none
    assert "pydantic" in validated["after_load"]  # the first start validates (and writes the cache)

    cached = _probe(desk_file, "from-cache")
    assert cached["after_import"] == [] and cached["after_load"] == []
    assert cached["desk"] == validated["desk"] and cached["repr"] == validated["repr"]
    assert cached["desk"]["source"] == str(desk_file)
