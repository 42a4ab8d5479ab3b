"""The rewards a config file of any dialect (or a list of names) describes, built the way training builds them.

What ``rewardsmith serve``, ``rewardsmith check --config`` and the verl /
OpenRLHF adapters take: a YAML file (a training config of any dialect or an
evaluation config works as it is; its rewards, ``reward_weights``,
``imports:`` and dataset are read the way ``rewardsmith train`` reads them,
:func:`rewardsmith.config.read.config_spec`), or a comma-separated list of
reward names.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardsmith.compose.config import rewards_from_config
from rewardsmith.config.imports import import_modules
from rewardsmith.config.read import ConfigFile, config_spec, read_config
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.problems import ConfigProblems
from rewardsmith.core.reward import Reward

__all__ = ["ConfigRewards", "config_rewards", "rewards_from_spec"]


@dataclass
class ConfigRewards:
    """A config's rewards as built, their weights, and the dataset they are scored on (``None``: none named)."""

    rewards: list[Reward]
    weights: list[float]
    dataset: dict[str, Any] | None


def config_rewards(config: str | os.PathLike[str] | ConfigFile) -> ConfigRewards:
    """The rewards, weights and dataset of a config file (imports done); every problem reported at once.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "run.yaml"
    >>> _ = path.write_text("model_name_or_path: m\\nreward_funcs: [accuracy, format]\\nreward_weights: [1, 0.5]\\n")
    >>> found = config_rewards(path)
    >>> [r.name for r in found.rewards], found.weights
    (['math_accuracy', 'think_format'], [1.0, 0.5])
    """
    if not isinstance(config, ConfigFile):
        config = read_config(config, what="rewards config", sections="rewards (and optionally reward_weights, imports)")
    problems = ConfigProblems("the rewards config")
    found = config_spec(config, problems)
    if found.rewards is None:
        problems.add(
            f"{str(config.path)!r} has no rewards: give rewards: [...] as in a training config "
            "(rewards: [{name: think_format, weight: 0.2}, ...]) or reward_funcs: as in a seed-style one"
        )
    imported = import_modules(found.imports, problems)
    problems.raise_if_any()
    assert imported
    rewards, weights = rewards_from_config(found.rewards, found.weights)
    return ConfigRewards(rewards, weights, found.dataset)


def rewards_from_spec(spec: str | Path) -> tuple[list[Reward], list[float]]:
    """The rewards and weights a config file (``.yaml``/``.yml``/``.json``) or a list of names describes.

    >>> rewards, weights = rewards_from_spec("think_format,gsm8k_accuracy")
    >>> [r.name for r in rewards], weights
    (['think_format', 'gsm8k_accuracy'], [1.0, 1.0])
    """
    if not isinstance(spec, (str, Path)) or not str(spec).strip():
        raise RewardConfigError(
            f"name the rewards: a config file or names like 'think_format,gsm8k_accuracy', got {spec!r}"
        )
    text = str(spec).strip()
    if not (text.endswith((".yaml", ".yml", ".json")) or Path(text).expanduser().is_file()):
        return rewards_from_config(text)
    found = config_rewards(text)
    return found.rewards, found.weights
