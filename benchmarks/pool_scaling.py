"""Pool scaling: a CPU-bound per-sample reward (about 5 ms each), workers=2 vs workers=1, 512 samples; and the
pool's cost per sample on a cheap reward, one sample per message (as before) against batches by measured cost.

workers=1 runs in this process; workers=2 runs on two worker processes that
are started before timing (pools are reused between calls, as in training).
The cold first call, start-up included, is printed too. The per-sample
overhead: a reward that does nothing, 4,096 samples on 2 workers, with
``BATCH_SECONDS`` set to 0 (every batch one sample: the old protocol's
messages) and at its default, interleaved in the same run.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import interleaved, verdict

from rewardsmith import Reward
from rewardsmith.core import pool_batches

N = 512


@dataclass
class BusyWork(Reward):
    """About ``millis`` milliseconds of pure-Python CPU work per sample."""

    millis: float = 5.0

    def score(self, completion: str) -> float:
        end = time.perf_counter() + self.millis / 1000
        x = 0
        while time.perf_counter() < end:
            x += 1
        return float(len(completion))


def main() -> None:
    completions = [f"completion {i}" for i in range(N)]
    one = BusyWork(workers=1)
    two = BusyWork(workers=2)
    start = time.perf_counter()
    expected = two(completions=completions)
    cold = time.perf_counter() - start
    assert expected == one(completions=completions)
    times = interleaved(
        {"workers=1": lambda: one(completions=completions), "workers=2": lambda: two(completions=completions)}, rounds=5
    )
    speedup = times["workers=1"] / times["workers=2"]
    print(f"pool scaling: {N} samples of ~5 ms CPU work")
    print(f"  workers=1            {times['workers=1']:.3f} s")
    print(f"  workers=2            {times['workers=2']:.3f} s   (first call with start-up: {cold:.3f} s)")
    print(f"  speed-up             {speedup:.2f}x  ({verdict(speedup, 1.6, True)})")
    two.close()
    overhead()


@dataclass
class Nothing(Reward):
    """The completion's length: no work, so what is timed is the pool itself."""

    def score(self, completion: str) -> float:
        return float(len(completion))


def overhead() -> None:
    texts = [f"c{i}" for i in range(4096)]
    r = Nothing(workers=2)
    r(completions=texts)  # workers started, cost measured
    default = pool_batches.BATCH_SECONDS

    def run(seconds: float) -> object:
        pool_batches.BATCH_SECONDS = seconds
        try:
            return r(completions=texts)
        finally:
            pool_batches.BATCH_SECONDS = default

    times = interleaved({"one per message": lambda: run(0.0), "batched": lambda: run(default)}, rounds=5)
    one, batched = (times[k] / len(texts) * 1e6 for k in ("one per message", "batched"))
    print(f"pool overhead: a reward that does nothing, {len(texts)} samples, 2 workers")
    print(f"  one sample per message   {one:8.1f} us/sample")
    print(f"  batches by measured cost {batched:8.1f} us/sample   ({one / batched:.1f}x less)")
    r.close()


if __name__ == "__main__":
    main()
