"""The staff actions live in `supportdesk/staff/acts.py`, beside the rest of staff (issue 36):
the runner keeps only their names, each one statement handing on to the act of the same name,
so the turn loop's module does not grow its own copy again."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from supportdesk.engine.runner import Runner
from supportdesk.staff import acts

ROOT = Path(__file__).resolve().parents[1]
ACTS = sorted(name for name, fn in vars(acts).items() if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn))


def test_the_runner_s_staff_methods_hand_on_to_the_acts():
    assert {"takeover", "release", "staff_reply", "set_state", "tag", "staff_note", "force_handoff", "set_context",
            "decide_approval", "withdraw_offer", "held_by", "resolved", "pending_approvals"} <= set(ACTS)
    tree = ast.parse((ROOT / "supportdesk" / "engine" / "runner.py").read_text(encoding="utf-8"))
    [runner] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Runner"]
    methods = {f.name: f for f in runner.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)}
    for name in (n for n in ACTS if not n.startswith("_")):
        body = [s for s in methods[name].body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        assert len(body) == 1 and isinstance(body[0], ast.Return), name
        call = body[0].value.value if isinstance(body[0].value, ast.Await) else body[0].value  # type: ignore[union-attr]
        assert isinstance(call, ast.Call) and ast.unparse(call.func) == f"staff_acts.{name}", name
    assert not [n for n in methods if n in ("_decide", "_staff_append")]


def test_the_runner_names_every_public_act():
    assert [name for name in ACTS if not name.startswith("_") and not hasattr(Runner, name)] == []
