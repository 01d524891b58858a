"""benchmarks/bench_routing.py: the one-message figure compares the offline model with a
regex-routed scripted peer doing the same store and tool work. If the model's answer to the
benchmark's message changes, the peer must follow, or the ratio measures different work."""

from __future__ import annotations

import asyncio
import sys

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))

import bench_routing  # noqa: E402


def test_the_peer_stores_and_calls_what_the_offline_model_does():
    from supportdesk.models.offline import OfflineModel

    factories = [lambda cfg: OfflineModel(cfg, use_disk_cache=False), lambda cfg: bench_routing.RegexRouted(cfg.desk.entry)]
    for new_text in (False, True):
        (_, _, ours), (_, _, peer) = asyncio.run(bench_routing._latency(factories, 1, new_text=new_text))
        assert ours == peer, (ours, peer)
        calls = [step for step in ours if step.startswith("tool_call:")]
        assert calls == ["tool_call:find_charges", "tool_call:refund_charge"]
        assert "offer:billing" in ours and "handoff:billing" in ours
