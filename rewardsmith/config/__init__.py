"""The config layer: every config file is read here, once, whatever command reads it.

``rewardsmith train``, ``eval``, ``serve``, ``check --config`` and the verl /
OpenRLHF adapters read a file with :func:`read_config` and take its rewards
with :func:`config_spec` (or :func:`rewards_from_spec`); the dialects
(sectioned, seed-style, open-r1 recipes, evaluation configs) are translated in
this package only. Nothing below it reads YAML or a config mapping itself.

>>> from rewardsmith.config import dialect_of
>>> dialect_of({"model_name_or_path": "m", "reward_funcs": ["accuracy", "format"]})
'open-r1'
"""

from __future__ import annotations

from typing import Any

from rewardsmith.config.files import MAX_YAML_NODES, load_yaml, read_config_file, read_text
from rewardsmith.config.imports import import_modules, resolve_import_path
from rewardsmith.config.read import (
    EVAL_KEYS,
    TRAINING_KEYS,
    ConfigFile,
    ConfigSpec,
    config_spec,
    dialect_of,
    is_training_config,
    read_config,
    training_part,
    training_shape,
)
from rewardsmith.config.seed import SECTIONS, SEED_KEYS, comma_list, normalize_flat, split_overrides

__all__ = [
    "EVAL_KEYS",
    "MAX_YAML_NODES",
    "SECTIONS",
    "SEED_KEYS",
    "TRAINING_KEYS",
    "ConfigFile",
    "ConfigSpec",
    "comma_list",
    "config_spec",
    "dialect_of",
    "import_modules",
    "is_training_config",
    "load_yaml",
    "normalize_flat",
    "read_config",
    "read_config_file",
    "read_text",
    "resolve_import_path",
    "rewards_from_spec",
    "split_overrides",
    "training_part",
    "training_shape",
]


def __getattr__(name: str) -> Any:
    # rewards_from_spec builds rewards (the compose layer): loaded on first use, so reading a config stays light.
    if name == "rewards_from_spec":
        from rewardsmith.config.rewards import rewards_from_spec

        return rewards_from_spec
    raise AttributeError(f"module 'rewardsmith.config' has no attribute {name!r}")
