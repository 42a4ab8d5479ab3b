"""The one config reader: a file read once, its dialect named, and translated into one shape.

Four dialects of config file are read (docs/training.md, docs/evaluation.md):

* ``sectioned``: ``model:``, ``dataset:``, ``rewards:``, ``trainer:``, ...;
* ``seed``: flat keys of existing GRPO scripts (``model_name_or_path``,
  ``reward_funcs: "accuracy,format"``, training arguments at the top level);
* ``open-r1``: a seed-style file that names open-r1's rewards or recipe keys
  (``reward_funcs: [accuracy, format]``, ``cosine_max_len``, ...);
* ``eval``: an evaluation job (``dataset:``, ``rewards:``, ``completions_column``
  or ``generation:``, ``output_dir``).

:func:`read_config` reads the file (:mod:`rewardsmith.config.files`: UTF-8,
YAML errors with their line, keys written twice); :func:`training_shape`
translates the three training dialects into the sectioned shape
(:mod:`rewardsmith.config.seed`, :mod:`rewardsmith.config.open_r1`, overrides
applied); :func:`config_spec` is what every front end takes the rewards,
weights, imports and dataset from. Problems are recorded, each with its path in the
file, so they are all reported at once.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewardsmith.config.files import read_config_file
from rewardsmith.config.open_r1 import OPEN_R1_KEYS, OPEN_R1_REWARDS
from rewardsmith.config.overrides import apply_overrides
from rewardsmith.config.seed import SECTIONS, normalize_flat, split_overrides
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.problems import ConfigProblems

__all__ = [
    "EVAL_KEYS",
    "TRAINING_KEYS",
    "ConfigFile",
    "ConfigSpec",
    "config_spec",
    "dataset_arguments",
    "dialect_of",
    "is_training_config",
    "read_config",
    "resolve_reward_paths",
    "training_part",
    "training_shape",
]

#: The keys of an evaluation config.
EVAL_KEYS = (
    "dataset",
    "rewards",
    "completions_column",
    "generation",
    "output_dir",
    "batch_size",
    "pass_threshold",
    "max_error_rate",
    "overwrite",
    "progress",
    "imports",
    "engine",
)
#: Keys only a training config has (a seed-style one also has flat training arguments or ``reward_funcs``).
TRAINING_KEYS = ("model", "trainer", "reward_weights", "health", "resume_from_checkpoint", "reward_funcs")
#: Keys both kinds of config have, read the same way by each.
_SHARED = ("dataset", "rewards", "imports")


@dataclass
class ConfigFile:
    """A config as read from its file: the mapping, its folder (where relative paths start), and the path.

    >>> ConfigFile({"reward_funcs": ["accuracy"], "learning_rate": 1e-3}).dialect
    'open-r1'
    """

    data: dict[str, Any]
    base: Path | None = None
    path: Path | None = None

    @property
    def dialect(self) -> str:
        """``sectioned``, ``seed``, ``open-r1`` or ``eval`` (see :func:`dialect_of`)."""
        return dialect_of(self.data)


def read_config(
    config: str | os.PathLike[str] | dict[str, Any],
    *,
    what: str = "config",
    sections: str = "rewards and the other sections",
    error: type[RewardConfigError] = RewardConfigError,
) -> ConfigFile:
    """A config file read once (or a mapping taken as it is), every front end's way in.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "run.yaml"
    >>> _ = path.write_text("reward_funcs: think_format,gsm8k_accuracy\\nlearning_rate: 1.0e-3\\n")
    >>> read = read_config(path)
    >>> read.dialect, read.base == path.resolve().parent
    ('seed', True)
    """
    if isinstance(config, dict):
        return ConfigFile(dict(config))
    path = Path(config).expanduser()
    data = read_config_file(path, what=what, sections=sections, error=error)
    return ConfigFile(data, path.resolve().parent, path)


def is_training_config(data: dict[str, Any]) -> bool:
    """Whether ``data`` is a training config (of any dialect) rather than an evaluation one.

    >>> is_training_config({"model": {"name_or_path": "m"}, "rewards": ["a"]})
    True
    >>> is_training_config({"dataset": "d.jsonl", "rewards": ["a"]})
    False
    """
    return any(k in data for k in TRAINING_KEYS) or "model_name_or_path" in data or "learning_rate" in data


def dialect_of(data: dict[str, Any]) -> str:
    """Which dialect a config is written in: ``sectioned``, ``seed``, ``open-r1`` or ``eval``.

    >>> dialect_of({"model": {"name_or_path": "m"}, "rewards": ["think_format"]})
    'sectioned'
    >>> dialect_of({"dataset": "d.jsonl", "rewards": ["think_format"], "completions_column": "reply"})
    'eval'
    >>> dialect_of({"model": {"name_or_path": "m"}, "rewards": ["a", "b"], "reward_weights": [1, 2]})
    'sectioned'
    >>> dialect_of({"model_name_or_path": "m", "reward_funcs": "think_format,gsm8k_accuracy"})
    'seed'
    """
    if not is_training_config(data):
        return "eval"
    names = data.get("reward_funcs")
    names = names.split(",") if isinstance(names, str) else names if isinstance(names, list) else []
    if any(k in OPEN_R1_KEYS for k in data) or any(str(n).strip() in OPEN_R1_REWARDS for n in names):
        return "open-r1"
    flat = [k for k in data if k not in SECTIONS]
    return "seed" if flat else "sectioned"


def training_part(data: dict[str, Any]) -> dict[str, Any]:
    """A training config without the keys only an evaluation job reads (``completions_column``, ``generation``...).

    A seed-style ``output_dir`` (a training argument) stays.

    >>> training_part({"model_name_or_path": "m", "completions_column": "reply", "output_dir": "runs/a"})
    {'model_name_or_path': 'm', 'output_dir': 'runs/a'}
    """
    own = [k for k in EVAL_KEYS if k not in _SHARED]
    out = {k: v for k, v in data.items() if k not in own}
    if "output_dir" in data and "trainer" not in data:
        out["output_dir"] = data["output_dir"]
    return out


def training_shape(
    data: dict[str, Any],
    base: Path | None,
    overrides: list[str] | None,
    problems: ConfigProblems,
    *,
    trainer_keys: bool = True,
) -> dict[str, Any]:
    """A training config of any dialect in the sectioned shape, overrides applied (problems recorded).

    Flat overrides (``max_steps=2``) apply to the file as written, dotted ones
    (``trainer.max_steps=2``) to the sectioned shape. ``trainer_keys`` checks
    flat training arguments against TRL's ``GRPOConfig`` (which imports TRL).

    >>> training_shape({"reward_funcs": "accuracy,format", "learning_rate": 1e-3}, None, ["max_steps=2"],
    ...                ConfigProblems())
    {'rewards': ['accuracy', 'format'], 'trainer': {'learning_rate': 0.001, 'max_steps': 2}}
    """
    flat, dotted = split_overrides(list(overrides or []))
    shaped = normalize_flat(apply_overrides(data, flat, problems), base, problems, trainer_keys=trainer_keys)
    return apply_overrides(shaped, dotted, problems)


@dataclass
class ConfigSpec:
    """What a config of any dialect says every front end needs, in one shape.

    ``rewards``: the entries; ``weights``: ``reward_weights`` (``None`` when
    not given); ``imports``: resolved from the config's folder; ``dataset``:
    :func:`~rewardsmith.data.prepare_dataset`'s arguments for the data the
    rewards are scored on (the training split of a training config), or
    ``None`` when the config names none; ``model``: the ``model:`` a training config trains (as written), else
    ``None``.
    """

    rewards: Any = None
    weights: Any = None
    imports: list[Any] = field(default_factory=list)
    dataset: dict[str, Any] | None = None
    model: Any = None


def config_spec(config: ConfigFile, problems: ConfigProblems) -> ConfigSpec:
    """The rewards, weights, imports and dataset of a config of any dialect, read the way training reads them.

    An evaluation config's entries are taken as written; a training config
    goes through :func:`training_shape` first, so seed-style names, open-r1
    names and recipe settings (``repetition_max_penalty``) mean what they
    mean in training. Weights are ``reward_weights`` (top level, or under
    ``trainer:``). Training arguments are not checked here (``rewardsmith
    train`` does), so reading a config's rewards never imports TRL. A
    training config's local dataset is found from its folder, as training
    finds it.

    >>> spec = config_spec(ConfigFile({"reward_funcs": "think_format,gsm8k_accuracy", "reward_weights": "0.5,1",
    ...                                "dataset": "openai/gsm8k", "converter": "gsm8k", "learning_rate": 1e-3}),
    ...                    ConfigProblems())
    >>> spec.rewards, spec.weights, spec.dataset
    (['think_format', 'gsm8k_accuracy'], [0.5, 1.0], {'source': 'openai/gsm8k', 'converter': 'gsm8k', 'split': 'train'})
    """
    from rewardsmith.config.imports import resolve_import_path

    data = config.data
    training = is_training_config(data)
    if training:
        data = training_shape(training_part(data), config.base, None, problems, trainer_keys=False)
    weights = data.get("reward_weights")
    trainer = data.get("trainer")
    if weights is None and isinstance(trainer, dict):
        weights = trainer.get("reward_weights")
    imports = data.get("imports") or []
    if isinstance(imports, str):
        imports = [imports]
    if not isinstance(imports, list):
        problems.add(f"imports takes a list of module names (pkg.module) or files (./my_rewards.py), got {imports!r}")
        imports = []
    imports = [resolve_import_path(s, config.base) if isinstance(s, str) else s for s in imports]
    dataset = dataset_arguments(data.get("dataset"), base=config.base if training else None)
    rewards = data.get("rewards")
    if training and config.base is not None:
        rewards = resolve_reward_paths(rewards, config.base)  # as training finds them
    if training and dataset is not None:
        dataset.setdefault("split", "train")  # what training reads when the config names no split
    return ConfigSpec(rewards, weights, imports, dataset, data.get("model") if training else None)


def resolve_reward_paths(rewards: Any, base: Path) -> Any:
    """Reward entries with their ``./file.py:fn`` paths made absolute from ``base`` where the file is there.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "mine.py").write_text("")
    >>> resolve_reward_paths([{"name": "./mine.py:fn"}, "think_format"], folder) == [
    ...     {"name": str(folder / "mine.py") + ":fn"}, "think_format"]
    True
    """
    if isinstance(rewards, str) and ".py:" in rewards:
        file_part, _, attr = rewards.rpartition(":")
        path = Path(file_part).expanduser()
        path = path if path.is_absolute() else base / path
        return f"{path}:{attr}" if path.exists() else rewards
    if isinstance(rewards, dict):
        return {k: resolve_reward_paths(v, base) for k, v in rewards.items()}
    if isinstance(rewards, list):
        return [resolve_reward_paths(v, base) for v in rewards]
    return rewards


def dataset_arguments(dataset: Any, *, evaluation: bool = False, base: Path | None = None) -> dict[str, Any] | None:
    """:func:`~rewardsmith.data.prepare_dataset`'s arguments for a config's ``dataset:`` (``None``: no source).

    The training split; with ``evaluation``, the evaluation split when the
    config has one (``eval_source``, ``eval_split``, ``eval_config``,
    ``eval_max_samples``). Converter settings become arguments of their own; a
    relative local source is found from ``base`` (the config's folder).

    >>> dataset_arguments({"source": "d.jsonl", "eval_split": "test", "converter_settings": {"prompt_key": "q"}},
    ...                   evaluation=True)
    {'source': 'd.jsonl', 'split': 'test', 'prompt_key': 'q'}
    """
    if isinstance(dataset, (str, list)):
        dataset = {"source": dataset}
    if not isinstance(dataset, dict) or dataset.get("source") is None:
        return None
    out = {k: v for k, v in dataset.items() if k not in ("converter_settings", "mix") and not k.startswith("eval_")}
    for key in ("source", "split", "config", "max_samples") if evaluation else ():
        if dataset.get(f"eval_{key}") not in (None, ""):
            out[key] = dataset[f"eval_{key}"]
    settings = dataset.get("converter_settings")
    out.update(settings if isinstance(settings, dict) else {})
    source = out["source"]
    local = isinstance(source, str) and not Path(source).expanduser().is_absolute()
    if base is not None and local and (base / source).exists():
        out["source"] = str(base / source)
    return out
