"""Correctness of the accuracy rewards on real data: reference solutions against their own answers and others'.

For GSM8K (test and train) and MATH-500, each reference solution is scored
as a completion against its own reference answer (should score 1) and
against the answer of a different problem (should score 0). The different
problem is the next one whose answer differs as written, so that two
problems that happen to share the answer "7" are not counted as errors.
TRL's ``accuracy_reward`` is scored on the same pairs for comparison.
Targets: at least 99.5% on own answers, at most 0.5% accepted on others.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import verdict

from rewardsmith import get_reward

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _load(name: str) -> list[dict]:
    with open(DATA / name, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _others(golds: list[str]) -> list[str]:
    """For each row, the next row's gold that differs from it as written."""
    out = []
    n = len(golds)
    for i, gold in enumerate(golds):
        j = (i + 1) % n
        while golds[j].strip() == gold.strip():
            j = (j + 1) % n
        out.append(golds[j])
    return out


def _rates(scores_own: list, scores_other: list) -> tuple[float, float, int]:
    own = sum(s == 1.0 for s in scores_own) / len(scores_own)
    other = sum(s == 1.0 for s in scores_other) / len(scores_other)
    unscored = sum(s is None for s in scores_own)
    return own, other, unscored


def _report(label: str, own: float, other: float, unscored: int, n: int) -> None:
    print(
        f"  {label:<34} own {own:7.2%} ({verdict(own, 0.995, True)})   "
        f"others accepted {other:6.2%} ({verdict(other, 0.005, False)})   unscored {unscored}/{n}"
    )


def main() -> None:
    logging.disable(logging.WARNING)
    from trl.rewards import accuracy_reward

    gsm = get_reward("gsm8k_accuracy")
    for name in ("gsm8k_test.jsonl", "gsm8k_train.jsonl"):
        rows = _load(name)
        solutions = [r["answer"] for r in rows]
        golds = [s.rsplit("####", 1)[1].strip() for s in solutions]
        others = _others(golds)
        print(f"{name}: {len(rows)} reference solutions")
        own, other, unscored = _rates(
            gsm(completions=solutions, answer=golds), gsm(completions=solutions, answer=others)
        )
        _report("gsm8k_accuracy", own, other, unscored, len(rows))
        if name == "gsm8k_test.jsonl":
            conv = [[{"role": "assistant", "content": s}] for s in solutions]
            own, other, unscored = _rates(accuracy_reward(conv, golds), accuracy_reward(conv, others))
            _report("trl accuracy_reward", own, other, unscored, len(rows))

    rows = _load("math500_test.jsonl")
    solutions = [r["solution"] for r in rows]
    golds = [r["answer"] for r in rows]
    others = _others(golds)
    print(f"math500_test.jsonl: {len(rows)} reference solutions")
    acc = get_reward("math_accuracy", workers=2)
    own, other, unscored = _rates(acc(completions=solutions, answer=golds), acc(completions=solutions, answer=others))
    _report("math_accuracy", own, other, unscored, len(rows))
    acc.close()
    conv = [[{"role": "assistant", "content": s}] for s in solutions]
    own, other, unscored = _rates(accuracy_reward(conv, golds), accuracy_reward(conv, others))
    _report("trl accuracy_reward", own, other, unscored, len(rows))


if __name__ == "__main__":
    main()
