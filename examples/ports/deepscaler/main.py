"""A port in DeepScaleR's style: its math reward and its data layout, unchanged.

* ``math_reward.py``: ``RewardMathFn`` and ``deepscaler_reward_fn(solution_str, ground_truth, enable_llm=False)``,
  the function DeepScaleR's trainer calls: the last ``\\boxed{}`` after ``</think>`` against each reference
  answer, ``True`` or ``False``; it imports ``math_utils`` and ``reward_types`` from its own folder;
* ``data.jsonl``: MATH-500 problems as DeepScaleR's preprocessing writes them (``data_source`` empty, the
  prompt ending in its "output the final answer within \\boxed{}" instruction, ``reward_model.ground_truth``
  a string or a list of accepted answers), loaded without a converter.

The built-in ``math_accuracy`` with ``reasoning_delimiters: ["</think>"]`` reads the final answer after
the reasoning too; it trains beside the port. The port then evaluates a text column, checks one
completion and audits the reward with ``rewardsmith check`` (which finds that the reward pays several
boxed answers: it grades the last one, as DeepScaleR's does).

    python examples/ports/deepscaler/main.py [OUTPUT_DIR]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from _tiny import evaluate_text, tiny_trainer, train  # noqa: E402

SCORE = f"{HERE / 'math_reward.py'}:deepscaler_reward_fn"
DATA = HERE / "data.jsonl"
BUILTIN = {"name": "math_accuracy", "kwargs": {"reasoning_delimiters": ["</think>"]}}


def main(output_dir: str | Path, steps: int = 2) -> dict[str, Any]:
    """Train ``steps`` steps, evaluate a text column, check one completion, audit the reward; what each gave."""
    import json

    from rewardsmith import check, get_reward

    out = Path(output_dir)
    config = {
        "model": {"name_or_path": "builtin:tiny"},
        "dataset": {"source": str(DATA)},
        "rewards": [{"name": SCORE}, BUILTIN],
        "trainer": tiny_trainer(out / "train", steps),
    }
    trained = train(config)
    row = json.loads(DATA.read_text().splitlines()[0])  # f(-2) + f(-1) + f(0) = 14/3
    texts = [
        "<think>f(-2) = 2, f(-1) = 5/3, f(0) = 1.</think>\nThe sum is $\\boxed{\\dfrac{14}{3}}$.",
        "<think>I add them up.</think>\nThe sum is $\\boxed{4}$.",
        "The sum is $\\boxed{\\frac{14}{3}}$.",  # no reasoning block: a format error for DeepScaleR
    ]
    report = evaluate_text(config, [{**row, "completion": text} for text in texts], out / "eval")
    checked = get_reward(SCORE).check(texts[0], ground_truth=row["reward_model"]["ground_truth"])
    # completions state their answer as DeepScaleR's model does: the audit is told that format
    shape = "<think>{reasoning}</think>\nThe answer is $\\boxed{{answer}}$."
    audit = check(SCORE, str(DATA), split="train", families=["empty", "hedging"], probe_format=shape,
                  timeout=None, progress=False)  # fmt: skip
    return {
        "steps": trained.trainer.state.global_step,
        "eval": report.summary["rewards"],
        "check": checked.score,
        "audit": {"answer_column": audit.summary["setup"]["answer_column"],
                  "findings": sorted(f.name for f in audit.findings)},
    }  # fmt: skip


if __name__ == "__main__":
    print(main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()))
