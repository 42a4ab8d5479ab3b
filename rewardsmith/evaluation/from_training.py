"""An evaluation job from a training config: the rewards you train with, without copying them.

``rewardsmith eval train.yaml --completions-column completion`` reads the
training config (sectioned or seed-style, checked the way ``rewardsmith
train`` checks it) and takes from it:

* the rewards, with their settings, ``as:`` names and weights (the weights are
  stated in the job's description; each reward is still scored on its own);
* the dataset and its converter, with the same keys (``converter_settings``
  included); the evaluation split (``eval_source``/``eval_split``) when the
  config has one, else the training split;
* the ``imports:``;
* the output folder: ``<trainer.output_dir>/eval`` unless one is given.

The model and trainer settings are not used: the completions come from a
column or from ``generation:``, as in any evaluation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rewardsmith.core.problems import ConfigProblems

__all__ = ["TRAINING_KEYS", "eval_from_training", "is_training_config"]

#: Keys only a training config has (a seed-style one also has flat training arguments or ``reward_funcs``).
TRAINING_KEYS = ("model", "trainer", "reward_weights", "health", "resume_from_checkpoint", "reward_funcs")


def is_training_config(data: dict[str, Any], eval_keys: tuple[str, ...]) -> bool:
    """Whether ``data`` is a training config rather than an evaluation one.

    >>> is_training_config({"model": {"name_or_path": "m"}, "rewards": ["a"]}, ("rewards",))
    True
    >>> is_training_config({"dataset": "d.jsonl", "rewards": ["a"]}, ("dataset", "rewards"))
    False
    """
    return any(k in data for k in TRAINING_KEYS) or "model_name_or_path" in data or "learning_rate" in data


def _with_weights(rewards: list[Any], weights: list[float] | None) -> list[Any]:
    if weights is None or len(weights) != len(rewards):
        return rewards
    out = []
    for entry, weight in zip(rewards, weights):
        out.append({**entry, "weight": weight} if isinstance(entry, dict) else {"name": entry, "weight": weight})
    return out


def _dataset(settings: Any) -> dict[str, Any]:
    data = settings.model_dump(exclude_none=True)
    if data.pop("mix", None):
        raise ValueError("mix")
    source = settings.eval_source if settings.eval_source is not None else settings.source
    out = {k: v for k, v in data.items() if not k.startswith("eval_") and k != "converter_settings"}
    out["source"] = source
    out["split"] = settings.eval_split or settings.split
    if settings.eval_config:
        out["config"] = settings.eval_config
    if settings.eval_max_samples:
        out["max_samples"] = settings.eval_max_samples
    return {**out, **settings.converter_settings}


def eval_from_training(
    data: dict[str, Any], base: Path | None, eval_keys: tuple[str, ...], problems: ConfigProblems
) -> dict[str, Any]:
    """The evaluation config a training config implies (its problems recorded in ``problems``).

    >>> shaped = eval_from_training({"model_name_or_path": "m", "dataset": "d.jsonl", "converter": "gsm8k",
    ...                              "reward_funcs": "think_format,gsm8k_accuracy", "reward_weights": "0.2,1",
    ...                              "output_dir": "runs/a", "completions_column": "reply"}, None,
    ...                             ("completions_column",), ConfigProblems())
    >>> shaped["rewards"][0], shaped["dataset"]["converter"], shaped["output_dir"], shaped["completions_column"]
    ({'name': 'think_format', 'weight': 0.2}, 'gsm8k', 'runs/a/eval', 'reply')
    """
    from rewardsmith.train.config import read_sections

    training = {k: v for k, v in data.items() if k not in eval_keys or k in ("dataset", "rewards", "imports")}
    if "output_dir" in data and "trainer" not in data:
        training["output_dir"] = data["output_dir"]  # a seed-style training argument
    own = {k: v for k, v in data.items() if k in eval_keys and k not in ("dataset", "rewards", "imports", "output_dir")}
    sections = read_sections(training, base, None, problems)
    out: dict[str, Any] = dict(own)
    if sections.rewards is not None:
        out["rewards"] = _with_weights(list(sections.rewards), sections.reward_weights)
    if sections.dataset is not None:
        try:
            out["dataset"] = _dataset(sections.dataset)
        except ValueError:
            problems.add("the training config's dataset.mix cannot be evaluated as one job; evaluate each part")
    if sections.imports:
        out["imports"] = list(sections.imports)
    trainer_dir = (sections.trainer or {}).get("output_dir")
    if trainer_dir:
        out["output_dir"] = str(Path(str(trainer_dir)) / "eval")
    return out
