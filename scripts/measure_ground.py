"""Measure the ground reader (readers/gates.py `ground`) on labelled lines, and choose its calibration.

    python scripts/measure_ground.py HELD.jsonl ...                      (the shipped reader)
    python scripts/measure_ground.py --calibrate BANKING77_GIT CLINC_GIT [HELD.jsonl ...]

Each file holds labelled lines ({"text", "ground"}: one of gates.GROUNDS, or "none" for a desk
matter that must not go to a person). Printed per ground: precision (of the lines read as it, how
many are it), recall (of its lines, how many are read as it), and the desk matters sent to a
person. A line is read as the desk reads it: without the desk's name (cues.without_desk_name).

--calibrate is the dev half: the labelled lines the reader trains on (data/TRAINING.json's
"ground" files) are read k-fold, each fold by a reader built without it (build_readers.ground_part),
with the conversation tune halves' turns that must name a ground (`told_grounds`), and each temperature and threshold of the grid is scored on those readings, precision first: a
false ground costs a customer the desk's answer (sent to a person), a missed one costs a turn
(the desk answers, and the customer asks for a person). The held files are never read for
choosing; they are measured with the shipped reader only when named.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from supportdesk.models.offline.cues import without_desk_name  # noqa: E402
from supportdesk.readers import gates  # noqa: E402

FOLDS = 5
TEMPERATURES = (1.0, 1.25, 1.5, 2.0, 3.0)
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
# A desk matter sent to a person weighs this many grounds missed or misnamed: precision first (a
# customer with a matter the desk answers in seconds waits for a person; a missed ground costs a
# turn, and a misnamed one still reaches a person).
FALSE_GROUND_COST = 3
# Settings whose cost is within this share of the best are as good on the dev readings (a few
# hundred lines: one line more or less is noise); among them the one sending the fewest desk
# matters to a person is chosen, then the one reading the most grounds, then the plainer
# temperature and the higher threshold.
COST_TIE = 0.02


def rows_of(path: str | Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def score(rows: Iterable[dict], read: Callable[[str], str | None]) -> dict[str, Counter[str]]:
    """Per ground: "tp", "fp" (another line read as it), "fn"; under "none": "sent" (desk
    matters read as a ground) and "n"."""
    out: dict[str, Counter[str]] = {g: Counter() for g in (*gates.GROUNDS, gates.NO_GROUND)}
    for r in rows:
        got, want = read(r["text"]) or gates.NO_GROUND, r["ground"]
        if want == gates.NO_GROUND:
            out[gates.NO_GROUND]["n"] += 1
            out[gates.NO_GROUND]["sent"] += got != gates.NO_GROUND
        if got == want and want != gates.NO_GROUND:
            out[want]["tp"] += 1
        else:
            if got != gates.NO_GROUND:
                out[got]["fp"] += 1
            if want != gates.NO_GROUND:
                out[want]["fn"] += 1
    return out


def report(name: str, counts: dict[str, Counter[str]]) -> None:
    print(name)
    for g in gates.GROUNDS:
        c = counts[g]
        if not (c["tp"] or c["fp"] or c["fn"]):
            continue
        p = f"{c['tp'] / (c['tp'] + c['fp']):.2f}" if c["tp"] + c["fp"] else "  - "
        r = f"{c['tp'] / (c['tp'] + c['fn']):.2f}" if c["tp"] + c["fn"] else "  - "
        print(f"  {g:16} precision {p} ({c['tp']}/{c['tp'] + c['fp']})  recall {r} ({c['tp']}/{c['tp'] + c['fn']})")
    tp, fp, fn = (sum(counts[g][k] for g in gates.GROUNDS) for k in ("tp", "fp", "fn"))
    print(f"  all grounds      precision {tp / max(tp + fp, 1):.2f} ({tp}/{tp + fp})  recall {tp / max(tp + fn, 1):.2f} ({tp}/{tp + fn});"
          f"  desk matters sent to a person {counts[gates.NO_GROUND]['sent']}/{counts[gates.NO_GROUND]['n']}")


def told_grounds() -> list[dict]:
    """{"text", "ground"} of each turn of evals/*-tune*.jsonl whose reply must name a ground
    (cues.LEARNED_GROUND's words for the customer): dev readings beside the folds'."""
    from supportdesk.models.offline.cues import LEARNED_GROUND

    named = {said: ground for ground, said in LEARNED_GROUND.items()}
    out = []
    for path in sorted((REPO / "evals").glob("*-tune*.jsonl")):
        for convo in rows_of(path):
            for turn in convo.get("turns") or []:
                said = [named[r] for r in turn.get("expect", {}).get("reply", []) if r in named] if isinstance(turn, dict) else []
                if said and isinstance(turn.get("customer"), str):
                    out.append({"text": turn["customer"], "ground": said[0]})
    return out


def shipped(text: str) -> str | None:
    return gates.ground(without_desk_name(text))


def calibrate(b77: str, clinc_dir: str) -> tuple[float, float]:
    import build_readers

    lines = build_readers.ground_lines()
    corpora = build_readers.ground_corpora(b77, clinc_dir)
    # (line, its reading by a reader that never saw it) for every fold
    readings: list[tuple[dict, gates.SparseReader]] = []
    for k in range(FOLDS):
        fold = [r for i, r in enumerate(lines) if i % FOLDS == k]
        reader = gates.SparseReader(build_readers.ground_part(corpora, {r["text"] for r in fold}), gates.FEATURES["ground"])
        readings += [(r, reader) for r in fold]
        print(f"fold {k + 1}/{FOLDS} built", file=sys.stderr)
    # The conversation evals' tune halves whose turn must name a ground to the customer are read
    # by the reader built from every line (none of them is trained on as a ground).
    whole = gates.SparseReader(build_readers.ground_part(corpora), gates.FEATURES["ground"])
    readings += [(r, whole) for r in told_grounds()]
    results: list[tuple[int, int, int, float, float]] = []  # cost, sent, right, temperature, threshold
    for t in TEMPERATURES:
        read = [(r, gates.ground_reading(reader, without_desk_name(r["text"]), t)) for r, reader in readings]
        for th in THRESHOLDS:
            by_text = {r["text"]: (g[0] if g is not None and g[1] >= th else None) for r, g in read}
            counts = score((r for r, _ in read), by_text.get)
            tp, fp, fn = (sum(counts[g][k] for g in gates.GROUNDS) for k in ("tp", "fp", "fn"))
            sent = counts[gates.NO_GROUND]["sent"]
            cost = FALSE_GROUND_COST * sent + fn
            results.append((cost, sent, tp, t, th))
            print(f"temperature {t:<4} threshold {th:<5} right grounds {tp:3}  false grounds {fp:3} (desk matters {sent:2}/{counts[gates.NO_GROUND]['n']})  missed or misnamed {fn:3}  cost {cost}")
    least = min(r[0] for r in results)
    cost, sent, tp, t, th = min((r for r in results if r[0] <= least * (1 + COST_TIE)), key=lambda r: (r[1], -r[2], r[3], -r[4]))
    print(f"chosen: temperature {t}, threshold {th}: {tp} grounds read right, {sent} desk matters sent to a person, cost {cost} "
          f"(the least {least}; {FALSE_GROUND_COST} a desk matter sent, 1 a ground missed or misnamed)")
    # what the chosen setting still gets wrong on the dev readings (trained lines: to be read)
    for r, reader in readings:
        g = gates.ground_reading(reader, without_desk_name(r["text"]), t)
        got = g[0] if g is not None and g[1] >= th else gates.NO_GROUND
        if got != r["ground"]:
            print(f"  dev {'SENT' if r['ground'] == gates.NO_GROUND else 'miss'}: {r['ground']} read as {got}: {r['text']}")
    return t, th


def main(argv: list[str]) -> int:
    if argv[:1] == ["--calibrate"]:
        if len(argv) < 3:
            print(__doc__, file=sys.stderr)
            return 2
        calibrate(argv[1], argv[2])
        held = argv[3:]
    else:
        held = argv
    for path in held:
        report(f"{path} (shipped reader: temperature {gates.GROUND_TEMPERATURE}, threshold {gates.GROUND_THRESHOLD})", score(rows_of(path), shipped))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
