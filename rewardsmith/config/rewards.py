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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardsmith.compose.config import rewards_from_config, rewards_with_problems
from rewardsmith.config.imports import import_modules
from rewardsmith.config.read import ConfigFile, config_spec, read_config
from rewardsmith.config.tokens import with_tokenizer
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.problems import ConfigProblems
from rewardsmith.core.reward import Reward

__all__ = ["ConfigRewards", "ModelTokenizer", "config_rewards", "rewards_from_spec"]

#: ``f(model, folder)``: the tokenizer (a folder or Hub id) of a training config's ``model:`` section as written,
#: the config's folder given for relative paths.
ModelTokenizer = Callable[[Any, Path | None], str | None]


@dataclass
class ConfigRewards:
    """A config's rewards as built, their weights, and the dataset they are scored on (``None``: none named)."""

    rewards: list[Reward]
    weights: list[float]
    dataset: dict[str, Any] | None


def config_rewards(
    config: str | os.PathLike[str] | ConfigFile, *, model_tokenizer: ModelTokenizer | None = None
) -> ConfigRewards:
    """The rewards, weights and dataset of a config file (imports done); every problem reported at once.

    Problems of the file, of its translation, of its imports and of each
    reward entry are raised together (a :class:`~rewardsmith.core.problems.ConfigError`),
    before any reward runs. With ``model_tokenizer`` (``f(model, folder) -> path``; the front ends pass
    :func:`rewardsmith.train.training_tokenizer`), rewards that count tokens in a training
    config count them with its model's tokenizer (:mod:`rewardsmith.config.tokens`), as ``rewardsmith eval`` does.

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
    rewards: list[Reward] = []
    weights: list[float] | None = None
    entries = found.rewards
    if model_tokenizer is not None and found.model is not None and isinstance(entries, list):
        model, base = found.model, config.base

        def tokenizer() -> str | None:
            with problems.check():
                return model_tokenizer(model, base)
            return None

        entries = with_tokenizer(entries, tokenizer)
    if import_modules(found.imports, problems) and entries is not None:
        rewards, weights = rewards_with_problems(entries, found.weights, problems)
    problems.raise_if_any()
    assert weights is not None
    return ConfigRewards(rewards, weights, found.dataset)


def rewards_from_spec(
    spec: str | Path, *, model_tokenizer: ModelTokenizer | None = None
) -> tuple[list[Reward], list[float]]:
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
    found = config_rewards(text, model_tokenizer=model_tokenizer)
    return found.rewards, found.weights
