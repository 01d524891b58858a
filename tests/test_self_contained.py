"""`pytest` and the benchmarks run on a fresh clone with nothing beside it (issue 39 §7): no test,
benchmark or module names a path outside the repository; data they need ships in it."""

from __future__ import annotations

import re

from tests.conftest import REPO, TRIAGE_DEV

# A path reached by going above the repository: `REPO.parent`, `../shared`, `parents[2]` of a
# file one folder deep, and the like.
OUTSIDE = re.compile(r"REPO\.parent\b|\.\./shared|parent\.parent\.parent|[\"']shared[\"']\s*/")


def test_no_test_benchmark_or_module_reads_outside_the_repository():
    sources = [*REPO.glob("tests/**/*.py"), *REPO.glob("benchmarks/**/*.py"), *REPO.glob("supportdesk/**/*.py")]
    sources = [path for path in sources if path.name != "test_self_contained.py"]
    assert len(sources) > 100
    found = [
        f"{path.relative_to(REPO)}:{n}: {line.strip()}"
        for path in sources
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert found == []


def test_the_triage_dev_set_ships_with_its_licence():
    assert TRIAGE_DEV.is_relative_to(REPO) and TRIAGE_DEV.exists()
    assert sum(1 for _ in TRIAGE_DEV.open(encoding="utf-8")) > 3000
    note = (TRIAGE_DEV.parent / "README.md").read_text(encoding="utf-8")
    assert "CC BY 4.0" in note and "Banking77" in note


def test_the_tests_import_from_the_checkout_however_the_package_was_installed():
    """A non-editable `pip install '.[serve]'` took the checkout off sys.path and `import tests`
    failed; pytest now puts the checkout there itself."""
    import subprocess
    import sys

    import os

    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    # `-I`-like: a python that has neither the checkout nor PYTHONPATH on its path, started
    # outside the repository, runs pytest on it with the repository as its root.
    code = (
        # (only the checkout itself comes off: a virtual environment may live inside it, as CI's does)
        f"import sys, os, pytest; sys.path[:] = [p for p in sys.path if p and p != '.' and os.path.abspath(p) != {str(REPO)!r}];"
        f"sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '--rootdir', {str(REPO)!r}, '-c', {str(REPO / 'pyproject.toml')!r},"
        f" {str(REPO / 'tests' / 'test_self_contained.py')!r}, '-k', 'ships_with_its_licence']))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd="/", env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
