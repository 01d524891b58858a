"""The mutation script's table (scripts/mutants.py) cannot rot: every mutant's snippet is still in
its file exactly once, its replacement changes it, and the tests it names exist. The script itself
is slow (each mutant runs its tests on a scratch copy) and runs by hand, never in the test run."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from tests.conftest import REPO

SCRIPT = REPO / "scripts" / "mutants.py"


def load_mutants():
    spec = importlib.util.spec_from_file_location("supportdesk_mutants_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (dataclasses look their module up)
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_every_mutants_snippet_is_in_its_file_once_and_the_named_tests_exist():
    script = load_mutants()
    names = [m.name for m in script.MUTANTS]
    assert len(names) == len(set(names))
    # The seventeen of issue 37 (five it saw escape, twelve it saw caught), the refusal it found
    # without a unit test, and some of our own.
    groups = [m.group for m in script.MUTANTS]
    assert set(groups) == {"escaped", "caught", "refusal", "ours"}
    assert (groups.count("escaped"), groups.count("caught"), groups.count("refusal")) == (5, 12, 1)
    assert groups.count("ours") >= 3
    for m in script.MUTANTS:
        text = (REPO / m.path).read_text(encoding="utf-8")
        assert text.count(m.original) == 1, f"{m.name}: its snippet is in {m.path} {text.count(m.original)} times"
        assert m.replacement != m.original
        for target in m.tests:
            if target.startswith("tests/"):
                file, _, test = target.partition("::")
                assert (REPO / file).is_file(), f"{m.name}: no {file}"
                if test:
                    assert f"def {test}(" in (REPO / file).read_text(encoding="utf-8"), f"{m.name}: no {target}"
