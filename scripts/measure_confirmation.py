"""Measure the confirmation reader (engine/confirmation.py) on public labelled answers.

    python scripts/measure_confirmation.py SGD_GIT [dev|test|train]

SGD_GIT is a git directory of github.com/google-research-datasets/dstc8-schema-guided-dialogue
(SGD, CC BY-SA 4.0), read with `git show HEAD:path`. The answers measured are the user turns
right after a system turn that asks to confirm something or offers an intent (CONFIRM,
OFFER_INTENT): AFFIRM turns (a yes, perhaps with thanks) should read "yes"; NEGATE turns (a
no, often with a correction: "please make that 3 rooms") must never read "yes". The two
errors are printed apart; the sentences are printed, never stored. The reader's learned part
(scripts/build_confirmation.py) is trained on SGD's train split only: dev and test are held out.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from supportdesk.engine.confirmation import read_answer  # noqa: E402

ASKING = {"CONFIRM", "OFFER_INTENT"}


def user_turns(git_dir: str, split: str) -> Iterator[tuple[set[str], set[str], str]]:
    """(the user turn's acts, the acts of the turn before it, its words) for every user turn of a
    split, read with `git show` (a file missing from the copy is skipped with a message)."""
    listing = subprocess.run(
        ["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", "HEAD", f"{split}/"],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    for path in listing:
        if not path.rsplit("/", 1)[-1].startswith("dialogues_"):
            continue
        shown = subprocess.run(["git", "--git-dir", git_dir, "show", f"HEAD:{path}"], capture_output=True, text=True)
        if shown.returncode or not shown.stdout.strip():
            print(f"skipped {path}: not in this copy of the repository", file=sys.stderr)
            continue
        for dialogue in json.loads(shown.stdout):
            before: set[str] = set()
            for turn in dialogue["turns"]:
                acts = {a["act"] for f in turn["frames"] for a in f["actions"]}
                if turn["speaker"] == "USER":
                    yield acts, before, turn["utterance"]
                before = acts


def answers(git_dir: str, split: str) -> tuple[list[str], list[str]]:
    affirm: set[str] = set()
    negate: set[str] = set()
    for acts, before, text in user_turns(git_dir, split):
        if before & ASKING:
            if acts & {"AFFIRM", "AFFIRM_INTENT"} and acts <= {"AFFIRM", "AFFIRM_INTENT", "THANK_YOU"}:
                affirm.add(text)
            elif acts & {"NEGATE", "NEGATE_INTENT"}:
                negate.add(text)
    return sorted(affirm), sorted(negate)


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 2:
        print("usage: python scripts/measure_confirmation.py SGD_GIT [dev|test|train]", file=sys.stderr)
        return 2
    split = argv[1] if len(argv) == 2 else "dev"
    affirm, negate = answers(argv[0], split)
    yes_read = Counter(read_answer(t) for t in affirm)
    no_as_yes = [t for t in negate if read_answer(t) == "yes"]
    print(f"SGD {split}: {len(affirm)} yes answers, read as yes {yes_read['yes']} ({yes_read['yes'] / max(len(affirm), 1):.1%}), "
          f"missed {len(affirm) - yes_read['yes']} {dict(yes_read)}")
    print(f"SGD {split}: {len(negate)} no answers, read as yes {len(no_as_yes)}")
    for text in no_as_yes:
        print(f"  no read as yes: {text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
