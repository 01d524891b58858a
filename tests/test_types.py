"""mypy over the whole package, as configured in pyproject.toml ([tool.mypy]): strict on the
layers the rest stands on (items, the store, the engine, the wiring), the default checks
elsewhere. A type error anywhere in supportdesk/ fails the test run, so it fails CI.

mypy runs in a subprocess with the repository's own cache (.mypy_cache/): the first run checks
every module (about a minute on two cores), later runs only what changed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


# A first run checks every module (about a minute on two cores; more on a loaded CI machine).
@pytest.mark.timeout(600)
def test_the_package_type_checks():
    done = subprocess.run(
        [sys.executable, "-m", "mypy"],  # what to check and how strictly: [tool.mypy]
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout, done.stdout


def test_a_type_error_in_a_strict_layer_fails_the_check(tmp_path):
    # The configuration is real: the same mypy, with the repository's config, fails on a
    # module of the engine that calls an untyped function and returns the wrong type.
    bad = tmp_path / "supportdesk" / "engine"
    bad.mkdir(parents=True)
    (tmp_path / "supportdesk" / "__init__.py").write_text("")
    (bad / "__init__.py").write_text("")
    (bad / "broken.py").write_text("def untyped(x):\n    return x\n\n\ndef count() -> int:\n    return 'three'\n")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"), "-p", "supportdesk.engine.broken"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert 'Incompatible return value type (got "str", expected "int")' in done.stdout
    assert "Function is missing a type annotation" in done.stdout  # strict here, not by default
