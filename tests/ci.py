"""Skips that CI would notice: a test that cannot run here skips on a developer's machine, but
under CI (CI=true, 1 or yes: `pg.in_ci()`) the same reason fails it, by name, so a protection is
never reported as passing by not running."""

from __future__ import annotations

from typing import NoReturn

import pytest

from tests.pg import in_ci


def cannot_run(why: str) -> NoReturn:
    """Skip with `why`; under CI, fail with it (CI sets the machine up for every test)."""
    if in_ci():
        pytest.fail(f"{why} (a skip fails under CI)")
    pytest.skip(why)
