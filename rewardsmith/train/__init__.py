"""Training: one YAML config to TRL's GRPOTrainer with rewardsmith rewards.

>>> from rewardsmith.train import load_config, run   # run(config_path_or_dict, overrides, dry_run=False)

Imported lazily: importing ``rewardsmith.train`` loads neither torch nor TRL.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = [
    "ConfigError",
    "RewardHealth",
    "SilentRewardError",
    "TrainConfig",
    "TrainResult",
    "TrainingPlan",
    "load_config",
    "plan_training",
    "run",
    "training_tokenizer",
]

_WHERE = {
    "ConfigError": "rewardsmith.train.config",
    "TrainConfig": "rewardsmith.train.config",
    "load_config": "rewardsmith.train.config",
    "TrainingPlan": "rewardsmith.train.plan",
    "plan_training": "rewardsmith.train.plan",
    "TrainResult": "rewardsmith.train.recipe",
    "RewardHealth": "rewardsmith.health.callback",
    "SilentRewardError": "rewardsmith.health.monitor",
    "run": "rewardsmith.train.recipe",
}


def training_tokenizer(model: Any, base: Path | None) -> str | None:
    """The tokenizer (a folder or Hub id) of a training config's ``model:`` section, for rewards that count
    tokens in text (see :func:`rewardsmith.train.model.training_tokenizer`; importing this loads nothing more)."""
    from rewardsmith.core.extras import require_extra

    require_extra("train", "counting tokens with the model a training config trains")
    from rewardsmith.train.model import training_tokenizer as resolve

    return resolve(model, base)


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        from rewardsmith.core.extras import require_extra

        require_extra("train", "training")
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'rewardsmith.train' has no attribute {name!r}")
