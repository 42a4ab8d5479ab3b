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


#: The small task the training tests run on: 500 prompts "Repeat 7: " with their digit.
TASK = Path(__file__).resolve().parents[1] / "rewardsmith" / "data" / "samples" / "copy_digits.jsonl"


def tiny_train_config(output_dir: str | Path, rewards: list[Any], **trainer: Any) -> dict[str, Any]:
    """A ``rewardsmith train`` config: the tiny model on 64 of :data:`TASK`'s prompts, 2 steps unless told."""
    return {
        "model": {"name_or_path": "builtin:tiny"},
        "dataset": {"source": str(TASK), "conversational": False, "max_samples": 64},
        "rewards": rewards,
        "trainer": {
            "learning_rate": 1e-3,
            "max_steps": 2,
            "per_device_train_batch_size": 8,
            "num_generations": 4,
            "max_completion_length": 6,
            "logging_steps": 1,
            "gradient_checkpointing": False,
            "save_strategy": "no",
            "output_dir": str(output_dir),
            **trainer,
        },
    }
