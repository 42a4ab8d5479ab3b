"""A port of the custom reward examples in TRL's GRPO documentation, every signature they show.

* a length reward, ``f(completions, **kwargs)``;
* a format reward over chat completions (``completion[0]["content"]``, as all of them here);
* a reward reading a dataset column by name, ``f(completions, ground_truth, **kwargs)``
  (the column is required: the dry run names it when the data lacks it);
* multi-task rewards that return ``None`` off their task;
* a reward over token ids only, ``f(completion_ids, **kwargs)``.

They train unchanged on the tiny model, then score plain text in
``rewardsmith eval`` and ``reward.check(text)`` (token ids exist only in
training, so the last one is left out there).

    python examples/ports/trl_docs.py [OUTPUT_DIR]
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _tiny import evaluate_text, tiny_trainer, train

ROWS = [
    {"prompt": f"Repeat {d}: ", "ground_truth": str(d), "task": "copy" if d % 2 else "other"} for d in range(10)
] * 2


def reward_len(completions, **kwargs) -> list[float]:
    """Closer to 20 characters is better."""
    return [-abs(20 - len(completion[0]["content"])) for completion in completions]


def format_reward_func(completions, **kwargs) -> list[float]:
    """1 for <think>...</think><answer>...</answer> and nothing else."""
    pattern = r"^<think>.*?</think><answer>.*?</answer>$"
    return [1.0 if re.match(pattern, c[0]["content"], re.DOTALL) else 0.0 for c in completions]


def exact_ground_truth(completions, ground_truth, **kwargs) -> list[float]:
    """1 when the completion's text is the ground truth (a column, one value per completion)."""
    return [1.0 if c[0]["content"].strip() == gt else 0.0 for c, gt in zip(completions, ground_truth)]


def copy_task_reward(completions, task, ground_truth, **kwargs) -> list[float | None]:
    """Scores the copy task only; ``None`` elsewhere, so another reward can take those rows."""
    return [
        (1.0 if gt in c[0]["content"] else 0.0) if t == "copy" else None
        for c, t, gt in zip(completions, task, ground_truth)
    ]


def token_budget(completion_ids, **kwargs) -> list[float]:
    """Fewer tokens is better (TRL passes the token ids of each completion)."""
    return [1.0 / (1 + len(ids)) for ids in completion_ids]


TEXT_REWARDS = [reward_len, format_reward_func, exact_ground_truth, copy_task_reward]


def main(output_dir: str | Path, steps: int = 2) -> dict[str, Any]:
    """Train ``steps`` steps, evaluate a text column, check one completion; what each step gave."""
    out = Path(output_dir)
    paths = [f"{__file__}:{fn.__name__}" for fn in TEXT_REWARDS]
    config = {
        "model": {"name_or_path": "builtin:tiny"},
        "dataset": {"source": ROWS},
        "rewards": [*paths, f"{__file__}:token_budget"],
        "trainer": tiny_trainer(out / "train", steps),
    }
    trained = train(config)
    rows = [{**ROWS[3], "completion": "3"}, {**ROWS[4], "completion": "<think>copy</think><answer>4</answer>"}]
    report = evaluate_text({**config, "rewards": paths}, rows, out / "eval")
    from rewardsmith import get_reward

    checked = {fn.__name__: get_reward(fn).check("3", ground_truth="3", task="copy").score for fn in TEXT_REWARDS}
    return {"steps": trained.trainer.state.global_step, "eval": report.summary["rewards"], "check": checked}


if __name__ == "__main__":
    print(main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()))
