"""What two database adapters both write, read with `ast` (nothing run): the check behind
tests/test_store_core.py and tests/test_business_core.py (issue 36: one place for each thing).

A function body (its docstring left out, `await` left out, placeholders made alike) or an SQL
statement (a string or an f-string as written, anywhere in the module, placeholders `?`, `?n`,
`$n` and `:name` made alike) written on both sides is a copy: it belongs in the shared core.
"""

from __future__ import annotations

import ast
import re

PLACEHOLDER = re.compile(r"\$\d+|\?\d*|(?<!:):[A-Za-z_]\w*")
SQL_WORD = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE)\b")


def _alike(text: str) -> str:
    """SQL text with its placeholders made one and its spacing collapsed."""
    return " ".join(PLACEHOLDER.sub("?", text).split())


class _Plain(ast.NodeTransformer):
    """A body as either driver would write it: no `await`, placeholders alike."""

    def visit_Await(self, node: ast.Await) -> ast.AST:
        return self.visit(node.value)

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        return ast.Constant(_alike(node.value)) if isinstance(node.value, str) else node


def _bodies(sources: dict[str, str]) -> dict[str, list[str]]:
    """Each function's body (its docstring left out), made plain, as an AST dump -> where it is written."""
    found: dict[str, list[str]] = {}
    for name, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = node.body
                if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                    body = body[1:]
                if body:
                    plain = _Plain().visit(ast.Module(body=body, type_ignores=[]))
                    found.setdefault(ast.dump(plain), []).append(f"{name}:{node.name}")
    return found


def _statements(sources: dict[str, str]) -> dict[str, list[str]]:
    """Each SQL statement written in a module (a string or an f-string as written, wherever it
    stands), placeholders alike -> where it is written (file:line)."""
    found: dict[str, list[str]] = {}
    for name, text in sources.items():
        tree = ast.parse(text)
        inside_fstring = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                written = ast.unparse(node)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in inside_fstring:
                written = node.value
            else:
                continue
            if SQL_WORD.search(written):
                found.setdefault(_alike(written), []).append(f"{name}:{node.lineno}")
    return found


def written_twice(left_side: dict[str, str], right_side: dict[str, str], core: str) -> list[str]:
    """What two sides both write: function bodies and SQL statements, one line each, naming
    the module (`core`) where the one copy belongs."""
    problems = []
    for read in (_bodies, _statements):
        left, right = read(left_side), read(right_side)
        for key in left.keys() & right.keys():
            problems.append(f"{', '.join(left[key])} = {', '.join(right[key])}: move it to {core}")
    return sorted(problems)
