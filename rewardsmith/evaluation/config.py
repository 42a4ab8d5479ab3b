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
    batch_size: 64                 # optional: also pass_threshold, max_error_rate, overwrite, progress
    imports: [./my_rewards.py]     # optional: modules or files that register rewards, imported first
    engine: ray                    # optional: score the batches as Ray tasks (default: local)

A training config works as well (sectioned or seed-style): its rewards,
weights, names, settings, dataset and converter are taken from it
(:mod:`rewardsmith.evaluation.from_training`). ``dataset.converter_settings``
is read as in a training config (or give the settings as keys of ``dataset:``).

Relative paths are taken from the current directory, as on the command line,
except ``imports:`` files, which are looked up in the config file's folder
first. :func:`evaluate_config` (what ``rewardsmith eval`` runs) reports every
problem of the config, its rewards and its data at once, and writes nothing
until they are all fixed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rewardsmith.config.imports import import_modules, resolve_import_path
from rewardsmith.config.read import EVAL_KEYS as _KEYS
from rewardsmith.config.read import is_training_config, read_config
from rewardsmith.core.names import did_you_mean
from rewardsmith.core.problems import ConfigProblems
from rewardsmith.evaluation.from_training import eval_from_training

__all__ = ["evaluate_config", "load_eval_config"]

#: Arguments of ``evaluate`` that are about where results go, not about what the job checks.
_OUTPUT = ("output_dir", "pass_threshold", "max_error_rate", "overwrite", "progress", "engine")


def load_eval_config(
    config: str | os.PathLike[str] | Mapping[str, Any] | None = None, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The keyword arguments of :func:`~rewardsmith.evaluation.evaluate` from a YAML file or mapping, with overrides.

    ``overrides`` has the config's shape; its ``dataset`` and ``generation``
    mappings are merged key by key into the config's, its ``imports`` are added
    to the config's, other keys replace. The ``imports`` are imported here.
    Unknown keys, failed imports, and a job with no dataset, rewards or output
    folder, are errors that say what is expected, all reported at once.

    >>> kwargs = load_eval_config(
    ...     {"dataset": {"source": "data/gsm8k_test.jsonl", "converter": "gsm8k"}, "rewards": "gsm8k_accuracy",
    ...      "completions_column": "solution", "output_dir": "runs/eval"},
    ...     overrides={"dataset": {"max_samples": 10}})
    >>> sorted(kwargs)
    ['completions_column', 'converter', 'dataset', 'max_samples', 'output_dir', 'rewards']
    """
    problems = ConfigProblems("the evaluation config", "nothing was written")
    kwargs, _ = _shape(config, overrides, problems)
    problems.raise_if_any()
    return kwargs


def evaluate_config(
    config: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    on_warning: Callable[[str], None] | None = None,
) -> Any:
    """Run the evaluation job a YAML config (and overrides) describes: what ``rewardsmith eval`` does.

    Every problem is reported at once, those of the config (unknown keys,
    imports, missing pieces) together with those of the job (unknown rewards,
    bad generation settings, data that does not load, missing columns);
    nothing is written until they are all fixed. Returns the
    :class:`~rewardsmith.evaluation.job.EvalReport`.

    >>> import tempfile
    >>> rows = [{"question": "2+3?", "answer": "#### 5", "reply": "It is 5."}]
    >>> report = evaluate_config({"dataset": {"source": rows, "converter": "gsm8k"}, "rewards": ["gsm8k_accuracy"],
    ...                           "completions_column": "reply", "output_dir": tempfile.mkdtemp(), "progress": False})
    >>> report.mean("gsm8k_accuracy")
    1.0
    """
    from rewardsmith.evaluation.job import evaluate
    from rewardsmith.evaluation.validate import check_job

    problems = ConfigProblems("the evaluation config", "nothing was written")
    kwargs, imported = _shape(config, overrides, problems)
    if problems:  # check the job too, so that its problems are reported with the config's
        job = {k: v for k, v in kwargs.items() if k not in (*_OUTPUT, "dataset", "rewards")}
        dataset, rewards = (kwargs.get("dataset"), kwargs.get("rewards")) if imported else (None, None)
        check_job(dataset, rewards, problems, **job)
        problems.raise_if_any()
    return evaluate(**kwargs, on_warning=on_warning)


def _shape(
    config: str | os.PathLike[str] | Mapping[str, Any] | None,
    overrides: Mapping[str, Any] | None,
    problems: ConfigProblems,
) -> tuple[dict[str, Any], bool]:
    """The arguments of ``evaluate`` (imports done), problems recorded; and whether every import worked."""
    data, base = _read(config) if config is not None else ({}, None)
    if is_training_config(data):
        data = eval_from_training(data, base, problems)
    imports = [resolve_import_path(spec, base) for spec in _as_list(data.pop("imports", None))]
    for key, value in (overrides or {}).items():
        if key == "imports":
            imports += _as_list(value)
        elif key in ("dataset", "generation") and isinstance(data.get(key), Mapping) and isinstance(value, Mapping):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    for key in data:
        if key not in _KEYS:
            problems.add(
                f"unknown key {key!r} in the evaluation config.{did_you_mean(str(key), _KEYS)} Keys: {', '.join(_KEYS)}"
            )
    imported = import_modules(imports, problems)
    dataset = data.pop("dataset", None)
    if isinstance(dataset, str):
        dataset = {"source": dataset}
    if not isinstance(dataset, Mapping) or not dataset.get("source"):
        problems.add(
            "the evaluation needs a dataset: `dataset: {source: openai/gsm8k, converter: gsm8k}` in the config, "
            "or --dataset on the command line (a Hub name, a local file, or fireworks:ACCOUNT/ID)"
        )
        dataset = {}
    for key, what in (
        ("rewards", "rewards: [gsm8k_accuracy] (or --rewards)"),
        ("output_dir", "output_dir (or --output-dir)"),
    ):
        if data.get(key) in (None, "", []):
            problems.add(f"the evaluation needs {what}")
    dataset = {**dataset, **(dataset.get("converter_settings") or {})}  # the training config's key works too
    options = {k: v for k, v in dataset.items() if k not in ("source", "converter_settings") and v is not None}
    known = {k: v for k, v in data.items() if v is not None and k in _KEYS}
    return {"dataset": dataset.get("source"), **options, **known}, imported


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _read(config: str | os.PathLike[str] | Mapping[str, Any]) -> tuple[dict[str, Any], Path | None]:
    read = read_config(
        dict(config) if isinstance(config, Mapping) else config,
        what="evaluation config",
        sections="dataset:, rewards:, output_dir:, ...",
    )
    return read.data, read.base
