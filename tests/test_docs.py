"""Rules the docs state that the code can check, and things defined in one place only.

Each test here fails when the code drifts from what README.md, docs/architecture.md or
docs/extending.md say, or when a helper that must exist once is written a second time.
"""

from __future__ import annotations

import argparse
import re
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
    from supportdesk.reports.export import speaker
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


# --- every reader of the item kinds ends in assert_never (docs/architecture.md, "Item kinds") ---

# A match that names only a few kinds on purpose, and why it is not a reader of every kind.
PARTIAL_MATCHES = {
    # called from actor_of's branches for the older kinds only, on staff actions written before
    # they named a person; a new kind carries its actor in its own fields
    ("staff/audit.py", "_legacy_actor"),
}


def _kind_names() -> set[str]:
    from supportdesk.items import ITEM_TYPES

    return {model.__name__ for model in ITEM_TYPES}


def _class_named(pattern: ast.pattern) -> str | None:
    match pattern:
        case ast.MatchClass(cls=ast.Attribute(attr=name)) | ast.MatchClass(cls=ast.Name(id=name)):
            return name
        case ast.MatchOr(patterns=alternatives):
            return next((n for n in map(_class_named, alternatives) if n), None)
        case ast.MatchAs(pattern=inner) if inner is not None:
            return _class_named(inner)
    return None


def _ends_in_assert_never(node: ast.Match) -> bool:
    last = node.cases[-1]
    if not (isinstance(last.pattern, ast.MatchAs) and last.pattern.pattern is None):
        return False
    calls = [n for stmt in last.body for n in ast.walk(stmt) if isinstance(n, ast.Call)]
    return any(getattr(c.func, "id", getattr(c.func, "attr", None)) == "assert_never" for c in calls)


def kind_matches_without_assert_never(package: Path) -> list[tuple[str, str]]:
    """(module, function) of every `match` whose cases name an item kind and whose last case is
    not `case _: assert_never(...)`."""
    kinds = _kind_names()
    found = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(func):
                if isinstance(node, ast.Match) and {_class_named(c.pattern) for c in node.cases} & kinds:
                    if not _ends_in_assert_never(node):
                        found.append((path.relative_to(package).as_posix(), func.name))
    return found


def test_every_match_over_item_kinds_ends_in_assert_never() -> None:
    assert set(kind_matches_without_assert_never(PACKAGE)) <= PARTIAL_MATCHES


def test_the_kind_check_finds_a_catch_all(tmp_path: Path) -> None:
    (tmp_path / "reader.py").write_text(
        "def text(item):\n    match item:\n        case Message():\n            return item.text\n"
        "        case _:\n            return ''\n"
    )
    assert kind_matches_without_assert_never(tmp_path) == [("reader.py", "text")]


# --- a hook's allowed answers (docs/extending.md, "A hook") -----------------------------------


def _section(path: Path, heading: str) -> str:
    text = path.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_the_hook_answers_table_is_what_the_runner_takes() -> None:
    from supportdesk.engine.hooks import ANSWERS

    rows = {}
    for line in _section(ROOT / "docs" / "extending.md", "A hook").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `before_") and len(cells) == 2:
            rows[cells[0].strip("`")] = {name for name in ("Veto", "AskApproval") if f"`{name}(" in cells[1]}
    assert rows == {moment: {t.__name__ for t in taken} for moment, taken in ANSWERS.items()}


async def test_an_answer_a_moment_does_not_take_is_reported_and_ignored(db_path, test_desk) -> None:
    from supportdesk.engine.events import Appended, Done
    from supportdesk.engine.hooks import AskApproval, DeskHook, HookSet, Veto
    from supportdesk.engine.protocol import Answer
    from supportdesk.engine.runner import drain
    from supportdesk.items import Message, Notice
    from supportdesk.wiring import open_desk
    from tests.conftest import make_test_tools
    from tests.scripted import ScriptedModel

    class Overreaching(DeskHook):
        def before_turn(self, event):  # type: ignore[no-untyped-def]
            return AskApproval("hold the whole turn")

        def before_model_step(self, event):  # type: ignore[no-untyped-def]
            return Veto("no model today")

    tools, _ = make_test_tools()
    desk = await open_desk(db_path, test_desk, provider=ScriptedModel([Answer("Hello!")]), tools=tools, customers=False)
    try:
        desk.runner.hooks = HookSet([("Overreaching", Overreaching())])
        events = await drain(desk.runner.send(None, "hi"))
        items = [e.item for e in events if isinstance(e, Appended)]
        ignored = [i.data for i in items if isinstance(i, Notice) and i.data.get("ignored")]
        assert ignored == [
            {"hook": "Overreaching", "moment": "before_turn", "ignored": "AskApproval"},
            {"hook": "Overreaching", "moment": "before_model_step", "ignored": "Veto"},
        ]
        assert [i.text for i in items if isinstance(i, Message) and i.role == "agent"] == ["Hello!"]
        assert [e.outcome for e in events if isinstance(e, Done)] == ["answered"]
    finally:
        await desk.close()


async def test_a_before_turn_hook_that_raises_is_reported_and_the_turn_goes_on(db_path, test_desk) -> None:
    from supportdesk.engine.events import Appended, Done
    from supportdesk.engine.hooks import DeskHook, HookSet
    from supportdesk.engine.protocol import Answer
    from supportdesk.engine.runner import drain
    from supportdesk.items import Message, Notice
    from supportdesk.wiring import open_desk
    from tests.conftest import make_test_tools
    from tests.scripted import ScriptedModel

    class Broken(DeskHook):
        def before_turn(self, event):  # type: ignore[no-untyped-def]
            raise RuntimeError("boom")

    tools, _ = make_test_tools()
    desk = await open_desk(db_path, test_desk, provider=ScriptedModel([Answer("Hello!")]), tools=tools, customers=False)
    try:
        desk.runner.hooks = HookSet([("Broken", Broken())])
        events = await drain(desk.runner.send(None, "hi"))
        items = [e.item for e in events if isinstance(e, Appended)]
        assert [i.data["moment"] for i in items if isinstance(i, Notice)] == ["before_turn"]
        assert [i.text for i in items if isinstance(i, Message) and i.role == "agent"] == ["Hello!"]
        assert [e.outcome for e in events if isinstance(e, Done)] == ["answered"]
    finally:
        await desk.close()


# --- the layer diagram names every part of the package (docs/architecture.md, "Layers") -------


def test_the_layer_diagram_names_every_top_level_part() -> None:
    section = _section(ROOT / "docs" / "architecture.md", "Layers")
    diagram = section.split("```")[1]
    named = {word.removesuffix(".py") for word in diagram.replace(",", " ").split()}
    parts = {
        path.name.removesuffix(".py")
        for path in PACKAGE.iterdir()
        if (path.suffix == ".py" or (path.is_dir() and (path / "__init__.py").exists()))
        and path.name not in ("__init__.py", "__main__.py")
    }
    assert sorted(parts - named) == []


# --- the README: short, its commands real, its installs editable ------------------------------


def test_the_newcomer_docs_stay_short() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) < 200
    assert len((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines()) < 500


def test_every_command_the_readme_shows_exists() -> None:
    listed = _help_listed(build_parser(["--help"]))
    section = _section(ROOT / "README.md", "Common commands").split("```")[1]
    shown = set()
    for line in section.splitlines():
        words = line.split("#")[0].split()
        if len(words) > 1 and words[0] == "supportdesk" and not words[1].startswith("-"):
            shown.update(words[1].split("|"))
    assert shown and shown <= set(listed), shown - set(listed)


def test_the_docs_install_extras_editably() -> None:
    """A plain `pip install '.[extra]'` after the editable test install would replace it with a
    copy, so the tests would stop seeing edits: every install the docs show keeps `-e`."""
    # docs/bench.md installs tau2 into an environment of its own, without the test extra.
    owned = ("architecture.md", "extending.md", "reference.md", "usage.md")
    for path in (ROOT / "README.md", *(ROOT / "docs" / name for name in owned)):
        for line in path.read_text(encoding="utf-8").splitlines():
            assert "pip install '." not in line and "pip install ." not in line, f"{path.name}: {line.strip()}"


# --- agent colours: agents.toml and the shipped themes agree (issue 36 item 9, kept) -----------


def test_every_shipped_theme_colours_exactly_the_shipped_agents() -> None:
    """An agent's colour is written in agents.toml and again, per background, in each shipped
    theme's [agents] table (kept: a theme is loaded before any desk, its colours are chosen to
    read on its background, and they become the CSS variables $agent-NAME). So the copies
    cannot drift silently: every shipped theme names exactly the shipped agents, and the default
    dark theme uses the desk file's own colours."""
    import tomllib

    desk = tomllib.loads((ROOT / "agents.toml").read_text(encoding="utf-8"))
    colours = {name: agent["color"].lower() for name, agent in desk["agents"].items()}
    themes = sorted((ROOT / "themes").glob("*.toml"))
    assert themes
    for path in themes:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get("agents", {})
        assert set(table) == set(colours), f"{path.name}: [agents] must name {sorted(colours)}"
    dark = tomllib.loads((ROOT / "themes" / "desk-dark.toml").read_text(encoding="utf-8"))["agents"]
    assert {name: value.lower() for name, value in dark.items()} == colours


# --- the session panes' styles are written once (tui/screens/panes.tcss) ------------------------


def test_the_pane_styles_are_written_once() -> None:
    import re

    shared = re.compile(r"^(#timeline|#inspector|#agent-bar|#agent-badge|#session-facts|#working|Footer\.-compact)\s*[{,:]", re.M)
    sheets = sorted((PACKAGE / "tui" / "screens").glob("*.tcss"))
    elsewhere = {path.name: shared.findall(path.read_text(encoding="utf-8")) for path in sheets if path.name != "panes.tcss"}
    assert {name: found for name, found in elsewhere.items() if found} == {}
    from supportdesk.tui.app import SupportDeskApp

    assert [Path(p).name for p in SupportDeskApp.CSS_PATH] == ["panes.tcss", "chat.tcss"]  # type: ignore[union-attr]


# --- every file a doc or a docstring names exists ----------------------------------------------

_PATH_IN_CODE = re.compile(r"(?<![\w./-])((?:[a-z_]+/)+[a-z_0-9]+\.(?:py|tcss|toml))\b")
_PATH_IN_DOCS = re.compile(r"`([A-Za-z0-9_./-]+\.(?:py|tcss|toml|md|jsonl))`")
# Files of other projects the docs name (the Agents SDK's tests, pydantic's, a user's settings).
_NOT_OURS = {"settings.toml", "version.py", "tests/memory/test_session.py", "test_session_limit.py"}
_DOC_BASES = [
    ROOT, PACKAGE, ROOT / "themes", ROOT / "tests", ROOT / "evals", ROOT / "benchmarks", ROOT / "docs",
    *(path for path in PACKAGE.rglob("*") if path.is_dir() and path.name != "__pycache__"),
]


def missing_paths_in_code(package: Path, root: Path) -> list[tuple[str, str]]:
    """(module, path) for each file path a module's docstrings or comments name that does not
    exist (resolved from the repository, the package, or the module's own folder)."""
    found = []
    for module in sorted(package.rglob("*.py")):
        for named in _PATH_IN_CODE.findall(module.read_text(encoding="utf-8")):
            if not any((base / named).exists() for base in (root, package, module.parent)):
                found.append((module.relative_to(package).as_posix(), named))
    return found


def test_every_file_a_docstring_names_exists() -> None:
    assert missing_paths_in_code(PACKAGE, ROOT) == []


def test_the_path_check_finds_a_wrong_folder(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "engine").mkdir(parents=True)
    (package / "guardrails.py").write_text("")
    (package / "config.py").write_text('"""The shipped hooks (engine/guardrails.py)."""\n')
    assert missing_paths_in_code(package, tmp_path) == [("config.py", "engine/guardrails.py")]


@pytest.mark.parametrize(
    "doc", ["README.md", "benchmarks/README.md", "evals/README.md", "docs/architecture.md", "docs/reference.md",
            "docs/extending.md", "docs/usage.md"],
)
def test_every_file_a_doc_names_exists(doc: str) -> None:
    named = set(_PATH_IN_DOCS.findall((ROOT / doc).read_text(encoding="utf-8")))
    missing = sorted(
        p for p in named - _NOT_OURS
        if not p.startswith("../") and not any((base / p).exists() for base in _DOC_BASES)
    )
    assert missing == []


# --- the item kinds table names the declared kinds (docs/architecture.md, "Item kinds") -------


def test_the_item_kinds_table_is_the_union() -> None:
    from typing import get_args

    from supportdesk.folds.desk_state import State
    from supportdesk.items import ITEM_KINDS, HandoffKind

    section = _section(ROOT / "docs" / "architecture.md", "Item kinds (`supportdesk/items.py`)")
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == list(ITEM_KINDS)
    handoff = next(row for row in rows if row.startswith("| `handoff`"))
    assert all(kind in handoff for kind in get_args(HandoffKind))
    stands = _section(ROOT / "docs" / "architecture.md", "Packages: each one's job and contract")
    assert f"({', '.join(get_args(State))})" in stands
