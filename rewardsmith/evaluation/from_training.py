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

from rewardsmith.config.read import EVAL_KEYS, dataset_arguments, training_part
from rewardsmith.config.tokens import with_tokenizer
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
        rewards = _with_weights(list(sections.rewards), sections.reward_weights, problems)
        model = sections.model
        if model is not None:  # completions scored from text have no token ids: the model's tokenizer counts them

            def tokenizer() -> str | None:
                from rewardsmith.train.model import model_path
                from rewardsmith.train.plan import cache_dir

                with problems.check():
                    return model_path(model, cache_dir())
                return None

            rewards = with_tokenizer(rewards, tokenizer)
        out["rewards"] = rewards
    if sections.dataset is not None and sections.dataset.mix:
        problems.add("the training config's dataset.mix cannot be evaluated as one job; evaluate each part")
    elif sections.dataset is not None:
        out["dataset"] = dataset_arguments(sections.dataset.model_dump(exclude_none=True), evaluation=True)
    if sections.imports:
        out["imports"] = list(sections.imports)
    trainer_dir = (sections.trainer or {}).get("output_dir")
    if trainer_dir:
        out["output_dir"] = str(Path(str(trainer_dir)) / "eval")
    return out
