"""A port in TinyZero's style: its countdown scorer and its data layout, unchanged, with a base-model text prompt.

* ``countdown.py``: ``compute_score(solution_str, ground_truth, method="strict", format_score=0.1, score=1.)``
  with ``ground_truth = {"target": ..., "numbers": [...]}``: every number used exactly once;
* ``countdown.jsonl``: rows as TinyZero's countdown preprocessing writes them (``target``, ``nums``,
  ``data_source``, a ``prompt`` holding the base-model template that ends in ``Assistant: ... <think>``,
  ``reward_model.ground_truth``); the prompt is used as plain text (``conversational: false``), as TinyZero
  trains a base model on it.

The built-in ``countdown`` reward with ``use_all_numbers: true`` asks the same of the equation (every
number exactly once); it trains beside the port. TinyZero passes its scorer ``prompt + response``;
``on: sequence`` does the same here (docs/coming-from.md).

    python examples/ports/tinyzero/main.py [OUTPUT_DIR]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from _tiny import evaluate_text, tiny_trainer, train  # noqa: E402

SCORE = f"{HERE / 'countdown.py'}:compute_score"
DATA = HERE / "countdown.jsonl"
#: ``on: sequence`` gives the scorer the prompt's text and the completion's, as TinyZero gives its scorers.
REWARDS = [{"name": SCORE, "kwargs": {"on": "sequence"}}, {"name": "countdown", "kwargs": {"use_all_numbers": True}}]


def main(output_dir: str | Path, steps: int = 2) -> dict[str, Any]:
    """Train ``steps`` steps, evaluate a text column, audit the port; what each step gave."""
    import json

    from rewardsmith import check, get_reward

    out = Path(output_dir)
    config = {
        "model": {"name_or_path": "builtin:tiny"},
        "dataset": {"source": str(DATA), "conversational": False},
        "rewards": REWARDS,
        "trainer": tiny_trainer(out / "train", steps),
    }
    trained = train(config)
    row = json.loads(DATA.read_text().splitlines()[0])  # 3 and 5 make 8
    texts = ["3 and 5.</think>\n<answer>3 + 5</answer>", "</think>\n<answer>5 + 3 + 0</answer>"]
    report = evaluate_text(config, [{**row, "completion": text} for text in texts], out / "eval")
    columns = {"ground_truth": row["reward_model"]["ground_truth"], "nums": row["nums"], "target": row["target"]}
    prompt = row["prompt"][0]["content"]
    checked = {
        spec["name"].rpartition(":")[2]: get_reward(spec).check(texts[0], prompt, **columns).score for spec in REWARDS
    }
    # TinyZero reads the answer block on the last line only: the audit is told that format
    shape = "{reasoning}</think>\n<answer>{answer}</answer>"
    audit = check(REWARDS[0], str(DATA), split="train", families=["empty", "numbers"], probe_format=shape,
                  timeout=None, progress=False)  # fmt: skip
    found = sorted(f.name for f in audit.findings)
    return {
        "steps": trained.trainer.state.global_step,
        "eval": report.summary["rewards"],
        "check": checked,
        "audit": {"answer_column": audit.summary["setup"]["answer_column"], "findings": found},
    }


if __name__ == "__main__":
    print(main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()))
