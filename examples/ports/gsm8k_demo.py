"""A port of the widely copied GSM8K GRPO demo script: XML format rewards and an exact-answer reward.

The reward functions below are written the way that script writes them: plain
TRL batch functions over chat completions (``completion[0]["content"]``),
reading the dataset's ``answer`` column through ``**kwargs``. They go into
``rewardsmith train`` unchanged, and the same functions then score plain text
in ``rewardsmith eval`` and ``reward.check(text)``: rewardsmith learns on the
first call that they index chat messages and hands them that shape.

    python examples/ports/gsm8k_demo.py [OUTPUT_DIR]
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _tiny import ROWS, evaluate_text, tiny_trainer, train

SYSTEM_PROMPT = "Respond in the following format:\n<reasoning>\n...\n</reasoning>\n<answer>\n...\n</answer>"


def _texts(completions: list[Any]) -> list[str]:
    return [completion[0]["content"] for completion in completions]


def _answer_block(text: str) -> str:
    return text.split("<answer>")[-1].split("</answer>")[0].strip()


def correctness_reward_func(prompts, completions, answer, **kwargs) -> list[float]:
    """2.0 when the text inside the last <answer> block is the reference answer."""
    return [2.0 if _answer_block(text) == ref else 0.0 for text, ref in zip(_texts(completions), answer)]


def int_reward_func(completions, **kwargs) -> list[float]:
    """0.5 when the answer block holds a whole number."""
    return [0.5 if _answer_block(text).isdigit() else 0.0 for text in _texts(completions)]


def strict_format_reward_func(completions, **kwargs) -> list[float]:
    """0.5 for exactly the system prompt's layout, newlines included."""
    pattern = r"^<reasoning>\n.*?\n</reasoning>\n<answer>\n.*?\n</answer>\n?$"
    return [0.5 if re.match(pattern, text, re.DOTALL) else 0.0 for text in _texts(completions)]


def soft_format_reward_func(completions, **kwargs) -> list[float]:
    """0.5 for a reasoning block followed by an answer block, whatever the spacing."""
    pattern = r"<reasoning>.*?</reasoning>\s*<answer>.*?</answer>"
    return [0.5 if re.search(pattern, text, re.DOTALL) else 0.0 for text in _texts(completions)]


def xmlcount_reward_func(completions, **kwargs) -> list[float]:
    """0.125 per tag found once on its own line, less a little for text after </answer>."""

    def count(text: str) -> float:
        score = sum(0.125 for tag in ("<reasoning>\n", "\n</reasoning>\n", "\n<answer>\n") if text.count(tag) == 1)
        if text.count("\n</answer>") == 1:
            score += 0.125 - 0.001 * len(text.split("\n</answer>")[-1].strip())
        return score

    return [count(text) for text in _texts(completions)]


REWARDS = [
    xmlcount_reward_func,
    soft_format_reward_func,
    strict_format_reward_func,
    int_reward_func,
    correctness_reward_func,
]
GOOD = "<reasoning>\n2 plus 3 is 5.\n</reasoning>\n<answer>\n5\n</answer>\n"


def main(output_dir: str | Path, steps: int = 2) -> dict[str, Any]:
    """Train ``steps`` steps, evaluate a text column, check one completion; what each step gave."""
    out = Path(output_dir)
    config = {
        "model": {"name_or_path": "builtin:tiny"},
        "dataset": {"source": ROWS, "converter": "gsm8k", "system_prompt": SYSTEM_PROMPT},
        "rewards": [f"{__file__}:{fn.__name__}" for fn in REWARDS],  # what a YAML config names
        "trainer": tiny_trainer(out / "train", steps),
    }
    trained = train(config)
    rows = [{**ROWS[11], "completion": GOOD}, {**ROWS[11], "completion": "5"}]  # 2 + 3
    report = evaluate_text(config, rows, out / "eval")
    from rewardsmith import get_reward

    checked = {fn.__name__: get_reward(fn).check(GOOD, answer="5").score for fn in REWARDS}
    return {"steps": trained.trainer.state.global_step, "eval": report.summary["rewards"], "check": checked}


if __name__ == "__main__":
    print(main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()))
