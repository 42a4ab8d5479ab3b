"""An evaluation job from a YAML config (what ``rewardsmith eval CONFIG`` reads), with overrides.

The config has the shape of a training config's ``dataset:`` and ``rewards:``
sections, plus where the completions come from and where results go::

    dataset:                       # prepare_dataset's arguments: source, split, config, converter, ...
      source: openai/gsm8k
      config: main
      split: test
      converter: gsm8k
      max_samples: 500
    rewards: [think_format, gsm8k_accuracy]
    completions_column: completion # or:
    generation:                    # GenerationConfig's settings
      model: Qwen/Qwen2.5-0.5B-Instruct
      base_url: http://127.0.0.1:8000/v1
      n: 4
    output_dir: runs/eval-gsm8k
    batch_size: 64                 # optional: also pass_threshold, overwrite, progress

Relative paths are taken from the current directory, as on the command line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from rewardsmith.core.configfile import read_config_file
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.names import did_you_mean

__all__ = ["load_eval_config"]

_KEYS = (
    "dataset",
    "rewards",
    "completions_column",
    "generation",
    "output_dir",
    "batch_size",
    "pass_threshold",
    "overwrite",
    "progress",
)


def load_eval_config(
    config: str | os.PathLike[str] | Mapping[str, Any] | None = None, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The keyword arguments of :func:`~rewardsmith.evaluation.evaluate` from a YAML file or mapping, with overrides.

    ``overrides`` has the config's shape; its ``dataset`` and ``generation``
    mappings are merged key by key into the config's, other keys replace.
    Unknown keys, and a job with no dataset, rewards or output folder, are
    errors that say what is expected.

    >>> kwargs = load_eval_config(
    ...     {"dataset": {"source": "data/gsm8k_test.jsonl", "converter": "gsm8k"}, "rewards": "gsm8k_accuracy",
    ...      "completions_column": "solution", "output_dir": "runs/eval"},
    ...     overrides={"dataset": {"max_samples": 10}})
    >>> sorted(kwargs)
    ['completions_column', 'converter', 'dataset', 'max_samples', 'output_dir', 'rewards']
    """
    data: dict[str, Any] = dict(_read(config)) if config is not None else {}
    for key, value in (overrides or {}).items():
        if key in ("dataset", "generation") and isinstance(data.get(key), Mapping) and isinstance(value, Mapping):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    for key in data:
        if key not in _KEYS:
            raise RewardConfigError(
                f"unknown key {key!r} in the evaluation config.{did_you_mean(str(key), _KEYS)} Keys: {', '.join(_KEYS)}"
            )
    dataset = data.pop("dataset", None)
    if isinstance(dataset, str):
        dataset = {"source": dataset}
    if not isinstance(dataset, Mapping) or not dataset.get("source"):
        raise RewardConfigError(
            "the evaluation needs a dataset: `dataset: {source: openai/gsm8k, converter: gsm8k}` in the config, "
            "or --dataset on the command line (a Hub name, a local file, or fireworks:ACCOUNT/ID)"
        )
    for key, what in (
        ("rewards", "rewards: [gsm8k_accuracy] (or --rewards)"),
        ("output_dir", "output_dir (or --output-dir)"),
    ):
        if data.get(key) in (None, "", []):
            raise RewardConfigError(f"the evaluation needs {what}")
    options = {k: v for k, v in dataset.items() if k != "source" and v is not None}
    return {"dataset": dataset["source"], **options, **{k: v for k, v in data.items() if v is not None}}


def _read(config: str | os.PathLike[str] | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(config, Mapping):
        return config
    return read_config_file(config, what="evaluation config", sections="dataset:, rewards:, output_dir:, ...")
