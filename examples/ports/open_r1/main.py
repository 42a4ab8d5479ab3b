"""Train the open-r1 style recipe a few steps, then evaluate and check with the recipe's rewards and the ports.

python examples/ports/open_r1/main.py [OUTPUT_DIR]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from _tiny import evaluate_text, train  # noqa: E402

RECIPE = HERE / "recipe.yaml"
PORTS = [f"{HERE / 'rewards.py'}:{name}" for name in ("accuracy_reward", "format_reward", "tag_count_reward")]
GOOD = "<think>\nHalf of 4 is 2, plus 1.\n</think>\n<answer>\n$3$\n</answer>"


def main(output_dir: str | Path, steps: int = 2) -> dict[str, Any]:
    """Train, evaluate the recipe's rewards (``rewardsmith eval recipe.yaml``) and the ports, check both."""
    out = Path(output_dir)
    trained = train(RECIPE, [f"output_dir={out / 'train'}", f"max_steps={steps}"])
    row = {"problem": "What is $\\frac{4}{2} + 1$?", "solution": "$\\frac{4}{2} + 1 = \\boxed{3}$"}
    rows = [{**row, "completion": GOOD}, {**row, "completion": "<think>\nno\n</think>\n<answer>\n$4$\n</answer>"}]
    recipe = evaluate_text(RECIPE, rows, out / "eval_recipe")
    ports = evaluate_text(RECIPE, rows, out / "eval_ports", rewards=PORTS)
    from rewardsmith import get_reward

    checked = {spec.rpartition(":")[2]: get_reward(spec).check(GOOD, solution=row["solution"]).score for spec in PORTS}
    return {
        "steps": trained.trainer.state.global_step,
        "eval": recipe.summary["rewards"],
        "eval_ports": ports.summary["rewards"],
        "check": checked,
    }


if __name__ == "__main__":
    print(main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()))
