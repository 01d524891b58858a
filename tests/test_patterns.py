"""Rules compiled when first used: the same answers as `re.compile`, and none compiled on import."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from supportdesk.patterns import LazyPattern

PACKAGE = Path(__file__).resolve().parent.parent / "supportdesk"
# The modules the offline model imports before its first answer: their rules wait for their first use.
LAZY_MODULES = sorted(
    [
        *(PACKAGE / "models" / "offline").rglob("*.py"),
        *(PACKAGE / "readers").glob("*.py"),
        PACKAGE / "engine" / "confirmation.py",
        PACKAGE / "lexicon.py",
    ]
)


def _module_level_compiles(tree: ast.AST) -> list[int]:
    found: list[int] = []

    def walk(node: ast.AST, deferred: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = deferred or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))
            func = child.func if isinstance(child, ast.Call) else None
            if (
                not inside
                and isinstance(func, ast.Attribute)
                and func.attr == "compile"
                and isinstance(func.value, ast.Name)
                and func.value.id == "re"
            ):
                found.append(child.lineno)
            walk(child, inside)

    walk(tree, False)
    return found


@pytest.mark.parametrize("path", LAZY_MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_offline_models_rules_are_not_compiled_on_import(path: Path):
    """~250 rules compiled on import were a third of the model's start-up (bench_routing)."""
    lines = _module_level_compiles(ast.parse(path.read_text(encoding="utf-8")))
    assert not lines, f"{path.name}: re.compile at import on lines {lines}; write LazyPattern(...) instead"


def test_the_check_finds_a_rule_compiled_on_import():
    source = "import re\nA = re.compile('a')\nB = [(re.compile('b'), 1)]\ndef f():\n    return re.compile('c')\n"
    assert _module_level_compiles(ast.parse(source)) == [2, 3]


@pytest.mark.parametrize("method", ["search", "match", "fullmatch", "findall", "split"])
def test_a_lazy_rule_answers_as_the_compiled_one(method: str):
    source, flags = r"(?P<word>b\w+)|(\d)", re.IGNORECASE
    lazy, compiled = LazyPattern(source, flags), re.compile(source, flags)
    for text in ("Bob paid 3", "bob", "  ", "B2 b3", "BEE"):
        first = getattr(lazy, method)(text)
        again = getattr(lazy, method)(text)  # the compiled pattern's own method from here on
        expected = getattr(compiled, method)(text)
        if isinstance(expected, re.Match):
            assert first is not None and again is not None
            assert (first.span(), first.groupdict()) == (expected.span(), expected.groupdict())
            assert again.span() == expected.span()
        else:
            assert first == again == expected


def test_a_lazy_rule_substitutes_iterates_and_keeps_its_source():
    lazy = LazyPattern(r"\d+")
    assert lazy.sub("#", "a1b22") == "a#b#"
    assert lazy.subn(lambda m: m.group() * 2, "7 8") == ("77 88", 2)
    assert [m.group() for m in lazy.finditer("1 22 333")] == ["1", "22", "333"]
    assert lazy.pattern == r"\d+"
    assert re.compile(rf"x{lazy.pattern}").search("x12")  # rules are built from other rules' sources


def test_a_lazy_rule_compiles_once_and_then_calls_the_compiled_pattern():
    lazy = LazyPattern(r"a+")
    assert "search" not in vars(lazy)
    lazy.search("aa")
    bound = vars(lazy)["search"]
    assert getattr(bound, "__self__", None) is not None and isinstance(bound.__self__, re.Pattern)
