"""Agreement with verl's and reward-kit's reward test cases, per suite (the cases are in tests/peer_replays.py).

Each case is scored by our counterpart reward and compared with what the peer expects; the count per
suite is printed, with the cases we differ on purpose (docs/rewards.md, "Differences from verl and
reward-kit") and those left to the answer reader. With ``--verl DIR`` (a verl checkout whose
``verl.utils.reward_score`` imports), each verl case is also scored by verl's own scorer, to show
that the expected values recorded are verl's (the cases from verl's pull-request tests say where verl's
scorer at that checkout disagrees with its own test).

    python benchmarks/peer_replays.py [--verl DIR] [--show]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from peer_replays import CASES, DELIBERATE, READER_DEFECTS  # noqa: E402


def _verl_scorers(folder: str) -> dict[str, Any]:
    sys.path.insert(0, folder)
    from verl.utils.reward_score import gsm8k, math_dapo, math_reward, prime_math  # type: ignore[import-not-found]

    return {
        "verl gsm8k": lambda text, truth: float(gsm8k.compute_score(text, truth)),
        "verl math_dapo": lambda text, truth: float(math_dapo.compute_score(text, truth)["acc"]),
        "verl prime_math": lambda text, truth: float(prime_math.compute_score(text, truth)[0]),
        "verl math": lambda text, truth: float(math_reward.compute_score(text, truth)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verl", default=None, help="a verl checkout, to score the verl cases with verl's scorers")
    parser.add_argument("--show", action="store_true", help="print every case that does not agree")
    args = parser.parse_args()
    agree, total, deliberate, reader = Counter(), Counter(), Counter(), Counter()
    for case in CASES:
        scores = case.run()
        ok = case.agrees(scores)
        total[case.suite] += 1
        agree[case.suite] += ok
        deliberate[case.suite] += case.source in DELIBERATE
        reader[case.suite] += case.source in READER_DEFECTS
        if args.show and not ok:
            print(f"  {case.source}: ours {scores}, the peer {case.expected or 'a relation'}")
    for suite in total:
        print(f"{suite} {agree[suite]}/{total[suite]} (differ on purpose: {deliberate[suite]}, "
              f"answer reader: {reader[suite]})")  # fmt: skip
    print(f"all: {sum(agree.values())}/{len(CASES)}")
    if args.verl:
        _score_with_verl(args.verl)
    return 0


def _score_with_verl(folder: str) -> None:
    """Each verl case scored by verl's own scorer, in a scratch folder (one case is a payload that writes a file)."""
    import os
    import tempfile

    scorers = _verl_scorers(folder)
    same = differ = 0
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)
        try:
            for case in CASES:
                if case.suite in scorers:
                    text, truth = case.completions[0], case.columns["answer"][0]
                    value = scorers[case.suite](text, truth)
                    if value == case.expected[0]:
                        same += 1
                    else:
                        differ += 1
                        print(f"  verl's scorer gives {value} for {case.source} (its test expects {case.expected[0]})")
        finally:
            os.chdir(here)
        if (Path(scratch) / "pwned.txt").exists():
            print("  verl's prime_math ran the payload of the matrix-branch test (it wrote a file)")
    print(f"verl's own scorers give the recorded value on {same} of {same + differ} verl cases")


if __name__ == "__main__":
    sys.exit(main())
