"""MBPP: the 974 reference solutions scored by ``code_tests`` against their own tests, and against another
problem's tests (the next one's), with the wall time of each pass (two workers).

The own-tests pass rate should be all but the problems whose asserts are wrong on any interpreter (596 and
642, see ``../shared/data/README.md``); against another problem's tests it must be about 0.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from rewardsmith import get_reward
from rewardsmith.data import prepare_dataset
from rewardsmith.sandbox import detect

MBPP = Path(__file__).resolve().parents[2] / "shared" / "data" / "mbpp.jsonl"


def main() -> int:
    if not MBPP.exists():
        print(f"MBPP not found at {MBPP}")
        return 1
    iso = detect()
    print(f"sandbox: {iso.mode}; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} (a shared machine)")
    rows = [json.loads(line) for line in MBPP.read_text().splitlines()]
    dataset = prepare_dataset(rows, converter="mbpp", conversational=False)
    completions = [f"```python\n{row['code']}\n```".replace("\r\n", "\n") for row in rows]
    tests = list(dataset["tests"])
    reward = get_reward("code_tests", workers=2, test_timeout=10.0, max_seconds=60.0)
    reward(completions=completions[:2], tests=tests[:2])  # start the workers
    started = time.perf_counter()
    own = reward.explain(completions=completions, tests=tests)
    own_seconds = time.perf_counter() - started
    started = time.perf_counter()
    other = reward(completions=completions, tests=tests[1:] + tests[:1])
    other_seconds = time.perf_counter() - started
    reward.close()
    passed = [r.score == 1.0 for r in own]
    print(
        f"own tests:     {sum(passed)}/{len(rows)} pass all ({100 * sum(passed) / len(rows):.1f}%), "
        f"mean score {sum(r.score or 0 for r in own) / len(rows):.4f}, {own_seconds:.1f} s "
        f"({len(rows) / own_seconds:.1f} problems/s)"
    )
    for row, result in zip(rows, own):
        if result.score != 1.0:
            print(f"  task {row['task_id']}: {result.score} {result.reason[:160]}")
    print(
        f"other's tests: {sum(s == 1.0 for s in other)}/{len(rows)} pass all, mean score "
        f"{sum(s or 0 for s in other) / len(rows):.4f}, {other_seconds:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
