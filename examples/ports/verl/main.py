"""A port in verl's style: its custom reward file, the scorer module beside it, and its dataset layout, unchanged.

* ``verl_score.py``: ``compute_score(data_source, solution_str, ground_truth, extra_info=None)``, what
  verl's ``custom_reward_function.path/.name`` names; it imports ``gsm8k`` from its own folder and
  returns ``{"score": ..., "acc": ...}``;
* ``data.jsonl``: rows as verl's preprocess scripts write them (``data_source``, a chat ``prompt``,
  ``ability``, ``reward_model: {style, ground_truth}``, ``extra_info``), loaded without a converter.

It trains a few steps on the tiny model, evaluates a text column and audits the reward with
``rewardsmith check`` (which finds that the scorer pays ``#### 18 or 20``).

    python examples/ports/verl/main.py [OUTPUT_DIR]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from _tiny import evaluate_text, tiny_trainer, train  # noqa: E402

SCORE = f"{HERE / 'verl_score.py'}:compute_score"
DATA = HERE / "data.jsonl"


def main(output_dir: str | Path, steps: int = 2) -> dict[str, Any]:
    """Train ``steps`` steps, evaluate a text column, audit the reward; what each step gave."""
    import json

    from rewardsmith import check, get_reward

    out = Path(output_dir)
    config = {
        "model": {"name_or_path": "builtin:tiny"},
        "dataset": {"source": str(DATA)},
        "rewards": [{"name": SCORE}, "gsm8k_accuracy"],
        "trainer": tiny_trainer(out / "train", steps),
    }
    trained = train(config)
    row = json.loads(DATA.read_text().splitlines()[5])  # 1 + 1
    rows = [{**row, "completion": "1 plus 1 is 2.\n#### 2"}, {**row, "completion": "#### 3"}]
    report = evaluate_text(config, rows, out / "eval")
    checked = get_reward(SCORE).explain(
        completions=["so #### 2"], data_source=[row["data_source"]], ground_truth=["2"], extra_info=[row["extra_info"]]
    )[0]
    audit = check(SCORE, str(DATA), split="train", families=["empty", "hedging"], timeout=None, progress=False)
    found = sorted(f.name for f in audit.findings)
    return {
        "steps": trained.trainer.state.global_step,
        "eval": report.summary["rewards"],
        "check": {"score": checked.score, "metrics": checked.metrics},
        "audit": {"answer_column": audit.summary["setup"]["answer_column"], "findings": found},
    }


if __name__ == "__main__":
    print(main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()))
