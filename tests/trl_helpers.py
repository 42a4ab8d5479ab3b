"""Settings for the short real-trainer runs the tests make on the offline tiny model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: A two-step GRPO or RLOO run on the tiny model, on the CPU, in a few seconds.
TINY_RUN: dict[str, Any] = dict(
    max_steps=2,
    per_device_train_batch_size=8,
    num_generations=4,
    max_completion_length=8,
    logging_steps=1,
    learning_rate=1e-3,
    use_cpu=True,
    bf16=False,
    report_to="none",
    save_strategy="no",
    gradient_checkpointing=False,
    seed=0,
)


def tiny_grpo_config(output_dir: str | Path, **overrides: Any) -> Any:
    """TRL's ``GRPOConfig`` for a tiny test run; ``overrides`` replace or add settings."""
    from trl import GRPOConfig

    return GRPOConfig(output_dir=str(output_dir), **{**TINY_RUN, **overrides})
