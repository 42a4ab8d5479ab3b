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

from rewardsmith.config.read import EVAL_KEYS, training_part
from rewardsmith.core.problems import ConfigProblems

__all__ = ["eval_from_training"]


def _with_weights(rewards: list[Any], weights: list[float] | None, problems: ConfigProblems) -> list[Any]:
    """The entries with ``reward_weights`` on them; a count that differs is a problem, as in training."""
    if weights is None:
        return rewards
    if len(weights) != len(rewards):
        names = ", ".join(e.get("as") or e.get("name", "?") if isinstance(e, dict) else str(e) for e in rewards)
        problems.add(
            f"reward_weights: {len(weights)} reward weights for {len(rewards)} rewards ({names}); give one weight "
            "per reward"
        )
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


def eval_from_training(data: dict[str, Any], base: Path | None, problems: ConfigProblems) -> dict[str, Any]:
    """The evaluation config a training config implies (its problems recorded in ``problems``).

    >>> shaped = eval_from_training({"model_name_or_path": "m", "dataset": "d.jsonl", "converter": "gsm8k",
    ...                              "reward_funcs": "think_format,gsm8k_accuracy", "reward_weights": "0.2,1",
    ...                              "output_dir": "runs/a", "completions_column": "reply"}, None, ConfigProblems())
    >>> shaped["rewards"][0], shaped["dataset"]["converter"], shaped["output_dir"], shaped["completions_column"]
    ({'name': 'think_format', 'weight': 0.2}, 'gsm8k', 'runs/a/eval', 'reply')
    """
    from rewardsmith.train.config import read_sections

    own = {k: v for k, v in data.items() if k in EVAL_KEYS and k not in ("dataset", "rewards", "imports", "output_dir")}
    sections = read_sections(training_part(data), base, None, problems)
    out: dict[str, Any] = dict(own)
    if sections.rewards is not None:
        out["rewards"] = _with_weights(list(sections.rewards), sections.reward_weights, problems)
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
