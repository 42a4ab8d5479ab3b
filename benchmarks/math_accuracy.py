"""math_accuracy vs TRL's accuracy_reward: speed and agreement on MATH-500 reference solutions.

Completions are MATH-500 reference solutions, each scored against its own
answer (right answer: 1) and against a different problem's answer (0).
"Agreement" is the share of those scores each reward gets right, over all
1000.

Each contender (TRL's function in its process; rewardsmith on one worker
process, and on two) runs in a fresh Python process: it first scores the
pairs of problems 1-250, then is timed on the pairs of problems 251-500.
Different strings, so no cached result can be reused; parsers and libraries
warmed by the same amount of work for everyone. Rounds are interleaved, and
each round runs every contender with the same fixed ``PYTHONHASHSEED``; the
speed-up is the median over rounds of the ratio within a round. Targets: at least
1.5x TRL with one process, at least 2.5x with two workers, at equal or better
agreement.

``--real`` times both on long real model output instead: the 1,025 ProcessBench
dev solutions (``../shared/data/processbench_dev.jsonl``), each against its
reference, in one process each (``math_accuracy`` with ``timeout=None``, so
that everything it does is in that process), warmed on the first half and timed
in CPU seconds on the second. Target: at least 2x TRL.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import verdict

from rewardsmith import get_reward

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "math500_test.jsonl"
REAL = DATA.with_name("processbench_dev.jsonl")
REAL_CONTENDERS = ("trl accuracy_reward", "math_accuracy, in process")
ROUNDS = 5


def _pairs() -> tuple[list[str], list[str], list[float]]:
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    golds = [r["answer"] for r in rows]
    completions, answers, expected = [], [], []
    for i, row in enumerate(rows):
        j = (i + 1) % len(rows)
        while golds[j].strip() == golds[i].strip():
            j = (j + 1) % len(rows)
        completions += [row["solution"], row["solution"]]
        answers += [golds[i], golds[j]]
        expected += [1.0, 0.0]
    return completions, answers, expected


def _run_trl(completions, answers, split) -> tuple[float, list]:
    from trl.rewards import accuracy_reward

    conversational = [[{"role": "assistant", "content": c}] for c in completions]
    warm = accuracy_reward(conversational[:split], answers[:split])
    start = time.perf_counter()
    timed = accuracy_reward(conversational[split:], answers[split:])
    return time.perf_counter() - start, warm + timed


def _run_ours(workers: int, completions, answers, split) -> tuple[float, list]:
    reward = get_reward("math_accuracy", workers=workers)
    warm = reward(completions=completions[:split], answer=answers[:split])
    start = time.perf_counter()
    timed = reward(completions=completions[split:], answer=answers[split:])
    elapsed = time.perf_counter() - start
    reward.close()
    return elapsed, warm + timed


CONTENDERS = {"trl accuracy_reward": None, "math_accuracy, 1 worker": 1, "math_accuracy, 2 workers": 2}


def _one(name: str) -> None:
    """One contender, one round, in this (fresh) process; prints seconds and agreement as JSON."""
    logging.disable(logging.WARNING)
    completions, answers, expected = _pairs()
    split = len(completions) // 2
    workers = CONTENDERS[name]
    if workers is None:
        elapsed, scores = _run_trl(completions, answers, split)
    else:
        elapsed, scores = _run_ours(workers, completions, answers, split)
    agreement = sum(s == e for s, e in zip(scores, expected)) / len(expected)
    print(json.dumps({"seconds": elapsed, "agreement": agreement, "timed": len(completions) - split}))


def _one_real(name: str) -> None:
    """One contender on the real solutions in this (fresh) process: CPU seconds on the second half, as JSON."""
    logging.disable(logging.WARNING)
    rows = [json.loads(line) for line in REAL.read_text(encoding="utf-8").splitlines() if line.strip()]
    completions, answers = [r["completion"] for r in rows], [r["reference_answer"] for r in rows]
    prompts = [r["problem"] for r in rows]
    split = len(rows) // 2
    if name == REAL_CONTENDERS[0]:
        from trl.rewards import accuracy_reward

        def run(lo: int, hi: int) -> None:
            for c, a in zip(completions[lo:hi], answers[lo:hi]):  # one at a time: one odd row cannot fail a batch
                with contextlib.suppress(Exception):
                    accuracy_reward([[{"role": "assistant", "content": c}]], [a])

    else:
        reward = get_reward("math_accuracy", timeout=None)

        def run(lo: int, hi: int) -> None:
            reward(completions=completions[lo:hi], answer=answers[lo:hi], prompts=prompts[lo:hi])

    run(0, split)
    start = time.process_time()
    run(split, len(rows))
    print(json.dumps({"seconds": time.process_time() - start, "timed": len(rows) - split}))


def _rounds(flag: str, contenders: list[str], rounds: int) -> tuple[dict[str, list[float]], dict[str, dict]]:
    """Each contender's CPU seconds per round, and its last run's result, from interleaved rounds in fresh processes.

    Every run is a fresh process, so no contender inherits warm caches. Each round fixes PYTHONHASHSEED for all
    contenders alike: hash randomisation changes set and dict order inside the LaTeX parser and moves a run's
    speed by up to 1.6x, so every contender gets the same seeds.
    """
    times: dict[str, list[float]] = {name: [] for name in contenders}
    last: dict[str, dict] = {}
    for seed in range(rounds):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        for name in contenders:
            out = subprocess.run(
                [sys.executable, __file__, flag, name], capture_output=True, text=True, check=True, env=env
            )
            last[name] = json.loads(out.stdout.strip().splitlines()[-1])
            times[name].append(last[name]["seconds"])
    return times, last


def main_real() -> None:
    """TRL's accuracy_reward against math_accuracy on the real solutions, rounds interleaved, fresh processes."""
    times, last = _rounds("--one-real", list(REAL_CONTENDERS), 3)
    timed_n = last[REAL_CONTENDERS[0]]["timed"]
    trl, ours = times[REAL_CONTENDERS[0]], times[REAL_CONTENDERS[1]]
    ratio = statistics.median(t / o for t, o in zip(trl, ours))
    print(f"on {timed_n} real solutions (ProcessBench dev, second half), CPU seconds, one process each:")
    for name, values in times.items():
        print(f"  {name:<26} {statistics.median(values):6.2f} s  ({timed_n / statistics.median(values):6.1f}/s)")
    print(f"  math_accuracy {ratio:.2f}x TRL ({verdict(ratio, 2.0, True)})")


def main() -> None:
    times, last = _rounds("--one", list(CONTENDERS), ROUNDS)
    agreement = {name: result["agreement"] for name, result in last.items()}
    timed_n = last[next(iter(CONTENDERS))]["timed"]
    print(
        f"math_accuracy vs trl.rewards.accuracy_reward on MATH-500 reference solutions "
        f"(own answer / other answer; each run in a fresh process, timed on {timed_n} after {timed_n} to warm up)"
    )
    trl = times["trl accuracy_reward"]

    def paired(name: str) -> float:
        """Median over rounds of TRL's time / this contender's time, both measured with the same seed."""
        return statistics.median(base / mine for base, mine in zip(trl, times[name]))

    for name, values in times.items():
        t = statistics.median(values)
        spread = f"(runs: {timed_n / max(values):.0f}-{timed_n / min(values):.0f}/s)"
        print(
            f"  {name:<26} {timed_n / t:7.1f} completions/s {spread:<20} {paired(name):5.2f}x TRL   "
            f"agreement {agreement[name]:.2%}"
        )
    one = paired("math_accuracy, 1 worker")
    two = paired("math_accuracy, 2 workers")
    print(f"  one process: {one:.2f}x ({verdict(one, 1.5, True)}); two workers: {two:.2f}x ({verdict(two, 2.5, True)})")
    better = all(agreement[k] >= agreement["trl accuracy_reward"] for k in agreement)
    print(f"  agreement equal or better than TRL: {'yes' if better else 'NO'}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        _one(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "--one-real":
        _one_real(sys.argv[2])
    elif sys.argv[1:] == ["--real"]:
        main_real()
    else:
        main()
