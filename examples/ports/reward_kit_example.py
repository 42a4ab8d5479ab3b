"""A port of a reward-kit ``@reward_function``: one overall score with named sub-scores.

reward-kit rewards take the conversation and a ground truth and return an
``EvaluateResult`` whose ``metrics`` hold ``MetricResult`` sub-scores. With
rewardsmith's ``@reward_function`` the function is a reward as it is: TRL
trains on its score and logs each sub-score's mean as
``<reward>/<metric>``; ``explain()``, ``reward.check`` and evaluation results
show them per sample.

    python examples/ports/reward_kit_example.py [OUTPUT_DIR]
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _tiny import evaluate_text, tiny_trainer, train

from rewardsmith.integrations.reward_kit import EvaluateResult, MetricResult, reward_function

ROWS = [{"prompt": f"Repeat {d}: ", "ground_truth": str(d)} for d in range(10)] * 2


@reward_function
def digit_with_format(messages, ground_truth=None, **kwargs) -> EvaluateResult:
    """Half for answering inside <answer> tags, half for the right digit there."""
    said = messages[-1]["content"]
    found = re.search(r"<answer>(.*?)</answer>", said, re.DOTALL)
    formatted = MetricResult(score=1.0 if found else 0.0, reason="tagged" if found else "no <answer> block")
    right = found is not None and found.group(1).strip() == ground_truth
    answer = MetricResult(score=1.0 if right else 0.0, reason=f"expected {ground_truth!r}", success=right)
    return EvaluateResult(
        score=0.5 * formatted.score + 0.5 * answer.score,
        reason="; ".join([formatted.reason, answer.reason]),
        metrics={"format": formatted, "answer": answer},
    )


GOOD = "<answer>3</answer>"


def main(output_dir: str | Path, steps: int = 2) -> dict[str, Any]:
    """Train ``steps`` steps, evaluate a text column, check one completion; what each step gave."""
    out = Path(output_dir)
    config = {
        "model": {"name_or_path": "builtin:tiny"},
        "dataset": {"source": ROWS},
        "rewards": [f"{__file__}:digit_with_format"],
        "trainer": tiny_trainer(out / "train", steps),
    }
    trained = train(config)
    logged = [k for entry in trained.trainer.state.log_history for k in entry if k.startswith("digit_with_format/")]
    rows = [{**ROWS[3], "completion": GOOD}, {**ROWS[3], "completion": "3"}]
    report = evaluate_text(config, rows, out / "eval")
    result = digit_with_format.check(GOOD, ground_truth="3")
    return {
        "steps": trained.trainer.state.global_step,
        "logged": sorted(set(logged)),
        "eval": report.summary["rewards"],
        "check": {"digit_with_format": result.score},
        "metrics": result.metrics,
    }


if __name__ == "__main__":
    print(main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()))
