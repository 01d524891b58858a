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


def test_dumped_eval_answers_compare_equal_run_to_run_and_a_changed_answer_differs(tmp_path, capsys) -> None:
    """`--dump-evals` / `--same-answers` (issue 34): two runs of the same code dump the same items
    (ids and times taken out, so what is compared is what was said and done); an answer changed
    is found, with the conversation named."""
    import json

    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    bench_routing.dump_evals(first, "route-7-config-held.jsonl")
    bench_routing.dump_evals(second, "route-7-config-held.jsonl")
    rows = [json.loads(line) for line in first.read_text().splitlines()]
    assert rows and all(r["items"] for r in rows)
    assert any('"kind": "handoff"' in i and '"to_agent": "security"' in i for r in rows for i in r["items"])  # the config desk
    assert bench_routing.same_answers(first, second) == 0
    rows[2]["items"][-1] = rows[2]["items"][-1].replace('"text": "', '"text": "changed: ', 1)
    second.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert bench_routing.same_answers(first, second) == 1
    assert "route-7-config-held.jsonl #2" in capsys.readouterr().out
