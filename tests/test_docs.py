"""Rules the docs state that the code can check, and things defined in one place only.

Each test here fails when the code drifts from what README.md, docs/architecture.md or
docs/extending.md say, or when a helper that must exist once is written a second time.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

from supportdesk.cli import PLUG_INS, build_parser

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "supportdesk"


def _functions_named(name: str) -> set[str]:
    """The modules (paths under supportdesk/) that define a module-level function `name`."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.FunctionDef) and node.name == name for node in tree.body):
            found.add(path.relative_to(PACKAGE).as_posix())
    return found


@pytest.mark.parametrize(
    "names, home",
    [
        (("estimate_tokens",), "engine/history_window.py"),
        (("money",), "text.py"),
        # one shortener of a text to one line: desk_state's and the CLI's copies are gone
        (("one_line", "_one_line", "_clip"), "text.py"),
    ],
)
def test_a_helper_is_defined_once(names: tuple[str, ...], home: str) -> None:
    defined = set().union(*(_functions_named(n) for n in names))
    # The browser's `_one_line` makes the text inert first (safe_text) and the inspector's
    # `_clip` cuts without flattening: both call or differ from text.one_line on purpose.
    defined -= {"tui/screens/browser.py", "tui/widgets/inspector.py"}
    assert defined == {home}


def test_role_titles_are_one_table() -> None:
    """The TUI's and the exports' speaker words for customer/staff/system are one dict."""
    from supportdesk.export import speaker
    from supportdesk.items import ROLE_TITLES, Message

    twins = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Dict) and {getattr(k, "value", None) for k in node.keys} == set(ROLE_TITLES):
                twins.append(path.relative_to(PACKAGE).as_posix())
    assert twins == ["items.py"]
    assert speaker(Message(role="staff", text="x", agent="billing")) == ROLE_TITLES["staff"]


def _help_listed(parser: argparse.ArgumentParser) -> dict[str, str | None]:
    for action in parser._subparsers._group_actions:  # type: ignore[union-attr]
        if isinstance(action, argparse._SubParsersAction):
            return {a.dest: a.help for a in action._choices_actions}
    raise AssertionError("no subcommands")


@pytest.mark.parametrize("name", sorted(PLUG_INS))
def test_subcommand_help_is_written_once(name: str) -> None:
    """`supportdesk --help` lists a plug-in from cli.PLUG_INS without importing it; asked for,
    the command's own module registers it: the help shown is the same either way."""
    listed = _help_listed(build_parser(["--help"]))
    registered = _help_listed(build_parser([name, "--help"]))
    assert listed[name] == registered[name] == PLUG_INS[name][1]
