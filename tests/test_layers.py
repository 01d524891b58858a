"""The layers import one way: the rule of docs/architecture.md ("Layers"), checked over the
real import graph of `supportdesk/` so it cannot drift again.

The graph is read from the source with `ast` (nothing is imported). An import inside a function
counts like one at the top of the module: such imports are there for start-up speed, never to
hide a cycle, so the graph with them must still be circle-free. Imports under
`if TYPE_CHECKING:` are never executed; they still have to respect the layers, but they are left
out of the cycle check.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "supportdesk"

# Each rule: the part that imports, the parts (of the desk, or outside it) it must not import,
# and why. A part is a top-level module or package of supportdesk ("tui", "engine", "config")
# or, for a name outside the desk, the top-level module ("rich", "sqlite3").
ABOVE_ENGINE = {"tui", "channels", "cli", "commands", "bench", "dbtools", "wiring", "staff.command", "reports.stats_command"}
# The staff package spans layers (supportdesk/staff/__init__.py): who acts, times and the audit
# sit below the engine with the log's other parts; its acts on a log (the runner's staff
# actions) and the requests the CLI and web API make of them sit at the engine's level; its
# subcommands with the commands. Each of those modules is a layer of its own here.
STAFF_LAYERS = {"acts", "requests", "command"}
# `reports` spans layers the same way: the transcripts and the figures sit below the engine,
# beside the store they read; its `stats` subcommand (which opens the dashboard) with the commands.
SPLIT_LAYERS = {"staff": STAFF_LAYERS, "reports": {"stats_command"}}
# The two parts at the very top, which may import any other: the command's entry point and the
# composition root. Every other part of the package is checked by a rule of its own.
AT_THE_TOP = {"cli", "wiring"}
PLUG_INS = {"models", "tools", "hooks"}
RULES: list[tuple[str, set[str], str]] = [
    (
        "tui",
        {"store", "business", *PLUG_INS, "channels", "integrations", "dbtools"},
        "the TUI reads the log through the engine (engine/log.py) and opens a desk through wiring.py",
    ),
    (
        "channels",
        {"store", "business", *PLUG_INS, "tui", "integrations", "bench"},
        "channels read the log through the engine and open a desk through wiring.py",
    ),
    (
        "engine",
        ABOVE_ENGINE | PLUG_INS | {"integrations"},
        "providers, tools and hooks plug into the engine: it knows their protocols, wiring.py knows them",
    ),
    ("models", ABOVE_ENGINE | {"tools", "integrations"}, "a provider plugs into the engine and knows no tool"),
    ("tools", ABOVE_ENGINE | {"models", "integrations"}, "a tool plugs into the engine and works without any model"),
    (
        "bench",
        {"tui", "channels", "cli", "commands", "dbtools", "integrations", *PLUG_INS},
        "bench sits below the TUI (its screen lists bench runs): it opens a desk through wiring.py, never draws",
    ),
    ("hooks", ABOVE_ENGINE | {"tools", "integrations"}, "a hook plugs into the engine"),
    (
        "staff.acts",
        ABOVE_ENGINE | PLUG_INS | {"integrations", "staff.requests"},
        "staff's acts append through the runner's turn lease: engine level, below the commands and screens",
    ),
    ("staff.requests", ABOVE_ENGINE | PLUG_INS | {"integrations", "store"}, "the CLI and web API's staff requests run the acts"),
    ("staff.command", {"tui", "channels", "bench", "integrations"}, "a subcommand, loaded by cli.PLUG_INS"),
    *(
        (
            base,
            ABOVE_ENGINE | PLUG_INS | {"engine", "integrations", "staff.acts", "staff.requests"},
            "the log and its parts sit below the engine",
        )
        for base in (
            "store", "business", "items", "config", "text", "patterns", "lexicon", "reports", "records", "folders", "exact", "argtypes",
            "staff", "folds", "readers",
        )
    ),
    ("commands", {"tui", "channels", "bench", "integrations"}, "doctor and eval are subcommands, loaded by cli.PLUG_INS"),
    (
        "reports.stats_command",
        {"channels", "bench", "integrations", *PLUG_INS},
        "a subcommand, loaded by cli.PLUG_INS: it opens the dashboard or prints the figures",
    ),
    (
        "dbtools",
        {"tui", "channels", "bench", "integrations", "engine", *PLUG_INS},
        "db copy and db check work through the store's and the business data's contracts only",
    ),
    ("config", {"rich", "textual"}, "the desk file is read without a terminal library"),
    ("integrations", ABOVE_ENGINE | PLUG_INS | {"engine"}, "the framework bridges work on the store and items alone"),
]
TEXTUAL_ONLY_IN = {"tui"}
# The store and the business data's two adapters are the only code that talks to a database.
DRIVERS_ONLY_IN = ("store/", "business/sqlite.py", "business/postgres.py")
# Modules outside the standard library that those adapters may import and that are no database
# driver (none today: an adapter's only third-party imports are its drivers).
NOT_DRIVERS: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Import:
    source: str  # importing module, dotted
    target: str  # imported module (a submodule when `from pkg import submodule`), dotted
    line: int
    in_function: bool
    type_checking: bool
    path: str  # the importing file, relative to the package

    @property
    def where(self) -> str:
        return f"supportdesk/{self.path}:{self.line}"


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path = PACKAGE) -> list[Import]:
    """Every import statement in the package under `root`, resolved to the module it loads."""
    files = sorted(root.rglob("*.py"))
    modules = {_module_name(path, root) for path in files}
    found: list[Import] = []
    for path in files:
        name = _module_name(path, root)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        rel = path.relative_to(root).as_posix()

        def visit(node: ast.AST, in_function: bool, type_checking: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    visit(child, True, type_checking)
                elif isinstance(child, ast.If) and _is_type_checking(child.test):
                    for stmt in child.body:
                        visit(ast.Module(body=[stmt], type_ignores=[]), in_function, True)
                    for stmt in child.orelse:
                        visit(ast.Module(body=[stmt], type_ignores=[]), in_function, type_checking)
                elif isinstance(child, ast.Import):
                    for alias in child.names:
                        found.append(Import(name, alias.name, child.lineno, in_function, type_checking, rel))
                elif isinstance(child, ast.ImportFrom):
                    if child.level:
                        base = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                        target = ".".join(base + ([child.module] if child.module else []))
                    else:
                        target = child.module or ""
                    for alias in child.names:
                        sub = f"{target}.{alias.name}"
                        # `from pkg import submodule` loads the submodule: that is the edge.
                        resolved = sub if sub in modules else target
                        found.append(Import(name, resolved, child.lineno, in_function, type_checking, rel))
                else:
                    visit(child, in_function, type_checking)

        visit(ast.parse(path.read_text(encoding="utf-8")), False, False)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def part(module: str) -> str:
    """The layer a dotted module belongs to: the part after `supportdesk.`, else the top name."""
    pieces = module.split(".")
    if pieces[0] == "supportdesk":
        if len(pieces) > 2 and pieces[2] in SPLIT_LAYERS.get(pieces[1], set()):
            return f"{pieces[1]}.{pieces[2]}"
        return pieces[1] if len(pieces) > 1 else "supportdesk"
    return pieces[0]


def _top(module: str) -> str:
    return module.split(".")[0]


def _outside_the_desk(imp: Import) -> bool:
    return _top(imp.target) not in ("supportdesk", "") and not imp.target.startswith("supportdesk.")


@cache
def follows_pep249(name: str) -> bool:
    """True when the installed top-level module `name` is a DB-API 2.0 driver (PEP 249): its
    top-level files declare `paramstyle` (sqlite3, psycopg, pymysql, aiosqlite ...). Read from
    the source, nothing imported; a module that is not installed is not judged here."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    if spec is None or spec.origin in (None, "built-in", "frozen"):
        return False
    places = spec.submodule_search_locations
    files = [p for place in places for p in Path(place).glob("*.py")] if places else [Path(spec.origin)]
    marker = re.compile(r"\bparamstyle\b")
    for path in files:
        try:
            if marker.search(path.read_text(encoding="utf-8", errors="replace")):
                return True
        except OSError:
            continue
    return False


def database_drivers(graph: list[Import]) -> set[str]:
    """The modules that talk to a database, derived, not listed: every module outside the standard
    library that the store's adapters import (NOT_DRIVERS aside), and every module the desk
    imports anywhere that follows PEP 249 (the standard library's sqlite3 included)."""
    adapters = {
        _top(imp.target)
        for imp in graph
        if imp.path.startswith(DRIVERS_ONLY_IN) and _outside_the_desk(imp)
    }
    drivers = {name for name in adapters if name not in sys.stdlib_module_names and name not in NOT_DRIVERS}
    imported = {_top(imp.target) for imp in graph if _outside_the_desk(imp)}
    return drivers | {name for name in imported if follows_pep249(name)}


def layer_violations(graph: list[Import]) -> list[str]:
    problems = []
    drivers = database_drivers(graph)
    for imp in graph:
        source, target = part(imp.source), part(imp.target)
        if source == target:
            continue
        for importer, forbidden, why in RULES:
            if source == importer and target in forbidden:
                problems.append(f"{imp.where}: {imp.source} imports {imp.target} ({source} -> {target}: {why})")
        if target == "textual" and source not in TEXTUAL_ONLY_IN:
            problems.append(f"{imp.where}: {imp.source} imports {imp.target} (nothing below tui imports Textual)")
        if target in drivers and not imp.path.startswith(DRIVERS_ONLY_IN):
            problems.append(f"{imp.where}: {imp.source} imports {imp.target} (only store/ and the business adapters talk to a database)")
    return list(dict.fromkeys(problems))  # `from x import a, b` is one problem, not two


def import_cycles(graph: list[Import]) -> list[list[str]]:
    """Every strongly connected group of more than one desk module (Tarjan), counting imports
    inside functions and leaving out those under TYPE_CHECKING."""
    edges: dict[str, set[str]] = {}
    for imp in graph:
        if not imp.type_checking and imp.target.startswith("supportdesk.") and imp.target != imp.source:
            edges.setdefault(imp.source, set()).add(imp.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return cycles


@pytest.fixture(scope="module")
def graph() -> list[Import]:
    return import_graph()


def test_the_graph_is_read_from_the_real_package(graph):
    # A walk that found nothing would pass every rule below.
    sources = {imp.source for imp in graph}
    assert {"supportdesk.engine.runner", "supportdesk.tui.app", "supportdesk.wiring"} <= sources
    assert any(imp.source == "supportdesk.engine.runner" and imp.target == "supportdesk.store" for imp in graph)


def test_layers_import_one_way(graph):
    assert layer_violations(graph) == []


def test_the_module_map_has_no_cycles(graph):
    assert import_cycles(graph) == []


def test_no_module_outside_the_store_imports_a_database_driver(graph):
    drivers = database_drivers(graph)
    offenders = [imp.where for imp in graph if _top(imp.target) in drivers and not imp.path.startswith(DRIVERS_ONLY_IN)]
    assert offenders == []
    # and the rule sees the drivers where they are, found, not listed
    assert {"sqlite3", "aiosqlite", "asyncpg"} <= drivers
    assert not drivers & {"json", "pydantic", "textual", "rich", "httpx", "starlette", "openai"}
    assert any(imp.target == "aiosqlite" and imp.path.startswith("store/") for imp in graph)


def test_a_driver_the_rule_never_heard_of_is_still_a_driver(tmp_path, monkeypatch):
    # A new backend's driver (here `duckling`, a DB-API module, and `asyncdb`, an async driver
    # like asyncpg without PEP 249's marks) is kept inside store/ without anyone adding its
    # name to a list: the first because it declares `paramstyle`, the second because store/
    # imports it.
    modules = tmp_path / "site"
    (modules / "duckling").mkdir(parents=True)
    (modules / "duckling" / "__init__.py").write_text("apilevel = '2.0'\nparamstyle = 'qmark'\n\ndef connect(path): ...\n")
    (modules / "asyncdb").mkdir()
    (modules / "asyncdb" / "__init__.py").write_text("async def connect(url): ...\n")
    monkeypatch.syspath_prepend(str(modules))
    follows_pep249.cache_clear()
    try:
        package = _write(
            tmp_path,
            {
                "__init__.py": "",
                "store/__init__.py": "",
                "store/newdb.py": "import asyncdb\nimport json\n",
                "channels/__init__.py": "",
                "channels/mail.py": "def save():\n    import duckling\n",
                "engine/__init__.py": "",
                "engine/runner.py": "from asyncdb import connect\nimport json\n",
            },
        )
        graph = import_graph(package)
        problems = layer_violations(graph)
        assert database_drivers(graph) >= {"duckling", "asyncdb"}
        assert "json" not in database_drivers(graph)
        assert any("supportdesk.channels.mail imports duckling (only store/" in p for p in problems), problems
        assert any("supportdesk.engine.runner imports asyncdb (only store/" in p for p in problems), problems
        assert not any("store.newdb" in p for p in problems), problems
    finally:
        follows_pep249.cache_clear()


def _write(root: Path, files: dict[str, str]) -> Path:
    package = root / "supportdesk"
    for rel, text in files.items():
        path = package / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return package


def test_the_check_catches_an_upward_import_a_driver_and_a_cycle_hidden_in_a_function(tmp_path):
    package = _write(
        tmp_path,
        {
            "__init__.py": "",
            "engine/__init__.py": "",
            "engine/runner.py": "from supportdesk.tui import app\n",
            "tui/__init__.py": "",
            "tui/app.py": "import sqlite3\nfrom supportdesk.engine import runner\n",
            "config.py": "def colour():\n    from supportdesk import text  # looks lazy, closes a circle\n",
            "text.py": "from supportdesk import config\n",
        },
    )
    graph = import_graph(package)
    problems = layer_violations(graph)
    assert any("supportdesk.engine.runner imports supportdesk.tui.app" in p for p in problems), problems
    assert any("supportdesk.tui.app imports sqlite3" in p for p in problems), problems
    assert import_cycles(graph) == [
        ["supportdesk.config", "supportdesk.text"],
        ["supportdesk.engine.runner", "supportdesk.tui.app"],
    ]


def test_type_checking_imports_still_respect_the_layers_but_close_no_cycle(tmp_path):
    package = _write(
        tmp_path,
        {
            "__init__.py": "",
            "store.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from supportdesk.engine import runner\n",
            "engine/__init__.py": "",
            "engine/runner.py": "from supportdesk import store\n",
        },
    )
    graph = import_graph(package)
    assert import_cycles(graph) == []
    assert any("supportdesk.store imports supportdesk.engine.runner" in p for p in layer_violations(graph))


def test_the_staff_package_s_modules_are_checked_each_at_its_own_layer(tmp_path):
    """Who acts and the audit sit below the engine; the acts on a log at the engine's level; the
    subcommands with the commands (supportdesk/staff/__init__.py)."""
    package = _write(
        tmp_path,
        {
            "__init__.py": "",
            "engine/__init__.py": "",
            "engine/errors.py": "",
            "tui/__init__.py": "",
            "tui/app.py": "",
            "cli.py": "",
            "staff/__init__.py": "",
            "staff/people.py": "from supportdesk.engine import errors\n",
            "staff/acts.py": "from supportdesk.engine import errors\nfrom supportdesk.tui import app\n",
            "staff/command.py": "from supportdesk.cli import x\nfrom supportdesk.staff import acts\n",
        },
    )
    problems = layer_violations(import_graph(package))
    assert [p.split(": ", 1)[1].split(" (")[0] for p in problems] == [
        "supportdesk.staff.acts imports supportdesk.tui.app",
        "supportdesk.staff.people imports supportdesk.engine.errors",
    ]


def top_level_parts(root: Path = PACKAGE) -> set[str]:
    """The root's modules and packages: what the folder tree shows."""
    return {
        path.name.removesuffix(".py")
        for path in root.iterdir()
        if (path.suffix == ".py" or (path / "__init__.py").is_file()) and path.name not in ("__init__.py", "__main__.py")
    }


def unchecked_parts(root: Path = PACKAGE) -> list[str]:
    """The parts no rule checks the imports of (none: a new package is placed when it is added)."""
    checked = {importer.split(".")[0] for importer, _, _ in RULES} | AT_THE_TOP
    return sorted(top_level_parts(root) - checked)


def test_every_part_of_the_package_has_its_place_in_the_layers():
    assert {"folds", "reports", "commands", "hooks", "staff", "engine"} <= top_level_parts()
    assert unchecked_parts() == []


def test_a_new_package_without_a_rule_is_named(tmp_path):
    package = _write(tmp_path, {"__init__.py": "", "cli.py": "", "items.py": "", "mail/__init__.py": "", "notes.txt": ""})
    assert unchecked_parts(package) == ["mail"]
