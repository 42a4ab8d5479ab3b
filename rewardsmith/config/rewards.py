"""Rewards named the way a command line names them: a config file of any dialect, or a list of names.

What ``rewardsmith serve`` and the verl / OpenRLHF adapters take: a YAML file
(a training config of any dialect or an evaluation config works as it is; its
rewards, ``reward_weights`` and ``imports:`` are read the way ``rewardsmith
train`` reads them, :func:`rewardsmith.config.read.reward_spec`), or a
comma-separated list of reward names.
"""

from __future__ import annotations

from pathlib import Path

from rewardsmith.compose.config import rewards_from_config
from rewardsmith.config.imports import import_modules
from rewardsmith.config.read import read_config, reward_spec
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.problems import ConfigProblems
from rewardsmith.core.reward import Reward

__all__ = ["rewards_from_spec"]


def rewards_from_spec(spec: str | Path) -> tuple[list[Reward], list[float]]:
    """The rewards and weights a config file (``.yaml``/``.yml``/``.json``) or a list of names describes.

    Every problem of the file is reported at once (a :class:`~rewardsmith.core.problems.ConfigError`).

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
    config = read_config(text, what="rewards config", sections="rewards (and optionally reward_weights, imports)")
    problems = ConfigProblems("the rewards config")
    found = reward_spec(config, problems)
    if found.rewards is None:
        problems.add(
            f"{str(config.path)!r} has no rewards: give rewards: [...] as in a training config "
            "(rewards: [{name: think_format, weight: 0.2}, ...]) or reward_funcs: as in a seed-style one"
        )
    imported = import_modules(found.imports, problems)
    problems.raise_if_any()
    assert imported
    return rewards_from_config(found.rewards, found.weights)
