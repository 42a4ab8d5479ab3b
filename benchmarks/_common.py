"""Timing helpers for the benchmarks: interleaved rounds, medians, ratios measured in the same run.

These machines are shared and noisy, so every benchmark measures its baseline
and its subject alternately in the same process and reports ratios of medians.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


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


def tiny_grpo_trainer(
    model: Path, reward_funcs: list[Any], prompt: Any, reward_weights: list[float] | None = None
) -> Any:
    """A ``GRPOTrainer`` on the offline tiny model, built only to time its reward path (``_calculate_rewards``)."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    args = GRPOConfig(
        output_dir=tempfile.mkdtemp(),
        use_cpu=True,
        report_to="none",
        per_device_train_batch_size=8,
        num_generations=8,
        max_completion_length=8,
        bf16=False,
        reward_weights=reward_weights,
    )
    train = Dataset.from_list([{"prompt": prompt, "answer": "1"}] * 8)
    return GRPOTrainer(model=str(model), reward_funcs=reward_funcs, args=args, train_dataset=train)
