"""Timing helpers for the benchmarks: interleaved rounds, medians, ratios measured in the same run.

These machines are shared and noisy, so every benchmark measures its baseline
and its subject alternately in the same process and reports ratios of medians.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def interleaved(cases: dict[str, Callable[[], object]], rounds: int = 30, inner: int = 1) -> dict[str, float]:
    """Median seconds per call of each case, measured round-robin so that noise hits all alike."""
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for fn in cases.values():  # warm up
        fn()
    for _ in range(rounds):
        for name, fn in cases.items():
            start = time.perf_counter()
            for _ in range(inner):
                fn()
            samples[name].append((time.perf_counter() - start) / inner)
    return {name: statistics.median(values) for name, values in samples.items()}


def verdict(value: float, target: float, higher_is_better: bool) -> str:
    ok = value >= target if higher_is_better else value <= target
    return f"{'meets' if ok else 'MISSES'} target {'>=' if higher_is_better else '<='} {target}"
