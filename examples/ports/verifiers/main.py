"""A port in the style of a verifiers (0.4) environment: its task class, with its weighted rewards and metric, as is.

``gsm8k_env.py:GSM8KTask`` is named where a reward is; each row's ``answer`` is the task's data and
the completion is the rollout verifiers would score. It trains a few steps on the tiny model,
evaluates a text column, explains one completion (each reward and the metric) and audits the task.

    python examples/ports/verifiers/main.py [OUTPUT_DIR]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from _tiny import ROWS, evaluate_text, tiny_trainer, train  # noqa: E402

TASK = f"{HERE / 'gsm8k_env.py'}:GSM8KTask"


def main(output_dir: str | Path, steps: int = 2) -> dict[str, Any]:
    """Train ``steps`` steps, evaluate a text column, explain one completion, audit; what each step gave."""
    from rewardsmith import check, get_reward

    out = Path(output_dir)
    config = {
        "model": {"name_or_path": "builtin:tiny"},
        "dataset": {"source": ROWS, "converter": "gsm8k"},
        "rewards": [{"name": TASK}],
        "trainer": tiny_trainer(out / "train", steps),
    }
    trained = train(config)
    rows = [{**ROWS[5], "completion": "1 plus 1 is \\boxed{2}"}, {**ROWS[5], "completion": "It is 3."}]
    report = evaluate_text(config, rows, out / "eval")
    explained = get_reward(TASK).explain(completions=["So \\boxed{2}"], answer=["2"])[0]
    audit = check(TASK, ROWS, converter="gsm8k", families=["empty", "hedging"], timeout=None, progress=False)
    return {
        "steps": trained.trainer.state.global_step,
        "eval": report.summary["rewards"],
        "explain": {"score": explained.score, "metrics": explained.metrics},
        "audit": {"answer_column": audit.summary["setup"]["answer_column"], "passed": audit.passed},
    }


if __name__ == "__main__":
    print(main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()))
