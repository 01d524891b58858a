"""Every retail, airline and telecom task, gold actions through the single and the split desk
(slow: about five CPU-minutes, so the six runs go two at a time as real `supportdesk bench`
processes; telecom's two add about 20 CPU-seconds).

All score 1.0. Four retail tasks hold a gold write that tau2's own environment refuses
(GOLD_WRITES_THAT_FAIL); they score 1.0 too, because tau2 builds the gold database by running
the same actions and passing over the failure, so the database the desk leaves matches it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from tests.bench_support import require_tau2

require_tau2()

from supportdesk.bench.tau2env import load_domain  # noqa: E402
from supportdesk.bench.tools import tool_kinds  # noqa: E402
from supportdesk.items import Notice, Offer, ToolResult  # noqa: E402
from supportdesk.store import SessionStore  # noqa: E402

GOLD_WRITES_THAT_FAIL = {
    # return to a payment method other than the original one
    "retail": {"12": "return_delivered_order_items", "13": "return_delivered_order_items",
               # exchange on an order that is not delivered
               "64": "exchange_delivered_order_items",
               # exchange the gift card cannot pay the difference of
               "105": "exchange_delivered_order_items"},
    "airline": {},
    # none of telecom's, the agent's or the customer's own calls on their phone
    "telecom": {},
}
TASK_COUNTS = {"retail": 114, "airline": 50, "telecom": 114}


def _command(domain, desk, db):
    return [sys.executable, "-m", "supportdesk.cli", "bench", "tau2", "--domain", domain, "--desk", desk,
            "--agent", "gold", "--db", str(db), "--json"]


async def _failed_writes(db, domain):
    writes = {n for n, kind in tool_kinds(load_domain(domain, "base").environment()).items() if kind == "write"}
    failed = {}
    async with await SessionStore.open(db) as store:
        for info in await store.list_sessions(limit=1000):
            if "bench_run" in info.meta:
                continue  # the run's record, not a task
            task = info.title.split(" task ")[1].split(" ")[0]
            # Each write is held as an offer first (the desk's confirmation gate): its "not run"
            # result is no failure; the scripted customer's yes runs it under `<offer id>-yes`.
            offered = {o.call_id for o in await store.of_kind(info.id, "offer") if isinstance(o, Offer)}
            items = await store.of_kind(info.id, "tool_result")
            for item in items:
                assert isinstance(item, ToolResult)
                if item.name in writes and item.call_id not in offered:
                    assert item.call_id.endswith("-yes"), (task, item.name)  # no write ran without the yes
                    if item.is_error:
                        failed[task] = item.name
            for notice in await store.of_kind(info.id, "notice"):  # the customer's calls on their phone
                assert isinstance(notice, Notice)
                if notice.notice_kind == "customer_action" and notice.data["customer_action"]["is_error"]:
                    failed[task] = notice.data["customer_action"]["name"]
    return failed


@pytest.mark.slow
@pytest.mark.timeout(3 * 1200 + 60)  # three pairs of runs, each given 1200 s
def test_gold_scores_one_on_every_task_of_every_domain_through_both_desks(tmp_path):
    runs = [(d, desk) for d in ("retail", "airline", "telecom") for desk in ("single", "split")]
    reports = {}
    for pair in (runs[:2], runs[2:4], runs[4:]):
        procs = {
            run: subprocess.Popen(_command(*run, tmp_path / f"{run[0]}-{run[1]}.db"), stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
            for run in pair
        }
        for run, proc in procs.items():
            out, _ = proc.communicate(timeout=1200)
            assert proc.returncode == 0, run
            reports[run] = json.loads(out)
    for (domain, desk), report in reports.items():
        rewards = {r["task_id"]: r["reward"] for r in report["results"]}
        assert len(rewards) == TASK_COUNTS[domain]
        assert {t: r for t, r in rewards.items() if r != 1.0} == {}, (domain, desk)
        assert report["pass_hat"] == {"1": 1.0}
        failed = asyncio.run(_failed_writes(tmp_path / f"{domain}-{desk}.db", domain))
        assert failed == GOLD_WRITES_THAT_FAIL[domain], (domain, desk)
