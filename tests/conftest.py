from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from supportdesk.config import DeskConfig, parse_desk
from supportdesk.engine.tools import ApprovalRequired, PolicyDenied, ToolRegistry
from tests import pg

REPO = Path(__file__).resolve().parent.parent

TEST_DESK = """
[desk]
entry = "triage"
fallback = "triage"
[desk.limits]
max_handoffs_per_message = 3
max_steps_per_message = 6
pingpong_window = 4
pingpong_min_unique = 3
step_timeout = 2.0
message_timeout = 5.0

[agents.triage]
title = "Triage"
description = "routes"
handoffs = ["billing", "technical"]

[agents.billing]
title = "Billing"
description = "money"
tools = ["refund", "explode"]
handoffs = ["senior", "triage"]

[agents.technical]
title = "Technical"
description = "fixes"
handoffs = ["senior", "triage"]

[agents.senior]
title = "Senior"
description = "level 2"
level = 2
tools = ["refund"]
handoffs = ["triage"]
"""


class RefundArgs(BaseModel):
    amount: float


def _refund_policy(ctx, args: RefundArgs) -> None:
    limit = ctx.desk.policy.refund_limit(ctx.agent.level)
    if args.amount > limit:
        raise PolicyDenied(f"{ctx.agent.name} may refund at most ${limit:.2f}")
    if args.amount >= ctx.desk.policy.approval_threshold:
        raise ApprovalRequired(f"refund of ${args.amount:.2f}")


def make_test_tools() -> tuple[ToolRegistry, list[float]]:
    registry = ToolRegistry()
    refunds: list[float] = []

    @registry.tool("refund", "Refund an amount", RefundArgs, policy=_refund_policy)
    def refund(ctx, args: RefundArgs):
        refunds.append(args.amount)
        return {"refunded": args.amount}

    class Nothing(BaseModel):
        pass

    @registry.tool("explode", "Always fails", Nothing)
    def explode(ctx, args):
        raise RuntimeError("boom")

    return registry, refunds


@pytest.fixture
def test_desk() -> DeskConfig:
    return parse_desk(TEST_DESK, "test.toml", tool_names=["refund", "explode"])


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "desk.db"


@pytest.fixture(autouse=True)
def _private_user_folders(tmp_path_factory, monkeypatch):
    """Tests never read or write the real user's data, config or cache folders."""
    home = tmp_path_factory.mktemp("xdg")
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(home / name.lower()))
    monkeypatch.delenv("SUPPORTDESK_DB", raising=False)
    monkeypatch.delenv("SUPPORTDESK_CONFIG", raising=False)


@pytest.fixture
def pg_url():
    """A fresh, empty database on the test PostgreSQL server, dropped after the test.

    Skips without SUPPORTDESK_TEST_PG_URL; under CI=true that is a failure instead.
    """
    yield from pg.fresh_database()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI a skipped PostgreSQL test is a failure: CI must prove both stores."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and pg.in_ci() and item.get_closest_marker("postgres") is not None:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"a PostgreSQL test may not skip under CI=true: {reason}"
