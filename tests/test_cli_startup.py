"""The `supportdesk` command's start-up path: the TUI must not pay for features it does not use."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys
from supportdesk.cli import build_parser
argv = sys.argv[1:]
build_parser(argv).parse_args(argv)
print(*(name in sys.modules for name in ("supportdesk.commands.evals", "supportdesk.commands.doctor", "pydantic")))
"""


def _loaded(*argv: str) -> list[bool]:
    out = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True)
    return [word == "True" for word in out.stdout.split()]


@pytest.mark.parametrize("argv", [[], ["chat"], ["--db", "eval", "chat", "--session", "s1"], ["--theme", "doctor"]])
def test_the_tui_path_imports_no_plug_in_and_no_pydantic(argv):
    # "--db eval": an option's value that happens to be a plug-in's name is not the command
    assert _loaded(*argv) == [False, False, False]


def test_a_plug_in_is_imported_when_its_command_is_asked_for():
    assert _loaded("eval", "routing", "x.jsonl")[0] is True
    assert _loaded("--db", "x.db", "doctor")[1] is True


def test_help_lists_plug_ins_without_importing_them():
    out = subprocess.run([sys.executable, "-m", "supportdesk.cli", "--help"], capture_output=True, text=True, check=True)
    assert "eval" in out.stdout and "doctor" in out.stdout
