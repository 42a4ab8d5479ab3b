"""A port in the style of Unsloth's Gemma-3 GRPO notebook: custom reasoning and solution markers.

The notebook's rewards are plain TRL functions over chat completions that
look for ``<start_working_out> ... <end_working_out>`` reasoning and a
``<SOLUTION> ... </SOLUTION>`` answer, and compare the solution with the
dataset's ``answer`` column, exactly or as a number. They train unchanged;
the same functions score plain text in ``rewardsmith eval`` and in
``reward.check(text)``.

    python examples/ports/unsloth_gemma3.py [OUTPUT_DIR]
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _tiny import ROWS, evaluate_text, tiny_trainer, train

REASONING_START, REASONING_END = "<start_working_out>", "<end_working_out>"
SOLUTION_START, SOLUTION_END = "<SOLUTION>", "</SOLUTION>"
SYSTEM_PROMPT = (
    f"You are given a problem. Think about it and put your working out between {REASONING_START} and "
    f"{REASONING_END}. Then put your solution between {SOLUTION_START}{SOLUTION_END}"
)
_FORMAT = re.compile(
    rf"^[\s]*{REASONING_START}.+?{REASONING_END}.*?{SOLUTION_START}(.+?){SOLUTION_END}[\s]*$", re.DOTALL
)
_NUMBER = re.compile(rf"{SOLUTION_START}.*?([\d\.]+)", re.DOTALL)


def match_format_exactly(completions, **kwargs) -> list[float]:
    """3 points for the whole layout: working out, then the solution, nothing else around them."""
    return [3.0 if _FORMAT.search(c[0]["content"]) else 0.0 for c in completions]


def match_format_approximately(completions, **kwargs) -> list[float]:
    """Half a point per marker seen exactly once, minus one per marker missing or repeated."""
    markers = (REASONING_START, REASONING_END, SOLUTION_START, SOLUTION_END)
    return [sum(0.5 if c[0]["content"].count(m) == 1 else -1.0 for m in markers) for c in completions]


def check_answer(prompts, completions, answer, **kwargs) -> list[float]:
    """3 for the exact answer, 1.5 for the same text up to spacing, partial credit within 10-20%."""
    scores = []
    for completion, truth in zip(completions, answer):
        found = _FORMAT.search(completion[0]["content"])
        if found is None:
            scores.append(0.0)
            continue
        guess = found.group(1)
        if guess == truth:
            scores.append(3.0)
        elif guess.strip() == truth.strip():
            scores.append(1.5)
        else:
            try:
                ratio = float(guess) / float(truth)
                scores.append(0.5 if 0.9 <= ratio <= 1.1 else 0.25 if 0.8 <= ratio <= 1.2 else -1.0)
            except (ValueError, ZeroDivisionError):
                scores.append(-0.5)
    return scores


def check_numbers(prompts, completions, answer, **kwargs) -> list[float]:
    """1.5 when the first number after the solution marker equals the answer."""
    question = prompts[0][-1]["content"]  # the notebook prints it while training
    assert isinstance(question, str)
    scores = []
    for completion, truth in zip(completions, answer):
        found = _NUMBER.search(completion[0]["content"])
        try:
            scores.append(1.5 if found and float(found.group(1)) == float(truth) else 0.0)
        except ValueError:
            scores.append(0.0)
    return scores


REWARDS = [match_format_exactly, match_format_approximately, check_answer, check_numbers]
GOOD = f"{REASONING_START}2 plus 3 is 5{REASONING_END}{SOLUTION_START}5{SOLUTION_END}"


def main(output_dir: str | Path, steps: int = 2) -> dict[str, Any]:
    """Train ``steps`` steps, evaluate a text column, check one completion; what each step gave."""
    out = Path(output_dir)
    config = {
        "model": {"name_or_path": "builtin:tiny"},
        "dataset": {"source": ROWS, "converter": "gsm8k", "system_prompt": SYSTEM_PROMPT},
        "rewards": [f"{__file__}:{fn.__name__}" for fn in REWARDS],
        "trainer": tiny_trainer(out / "train", steps),
    }
    trained = train(config)
    rows = [{**ROWS[11], "completion": GOOD}, {**ROWS[11], "completion": "5"}]  # 2 + 3
    report = evaluate_text(config, rows, out / "eval")
    from rewardsmith import get_reward

    checked = {fn.__name__: get_reward(fn).check(GOOD, "What is 2 + 3?", answer="5").score for fn in REWARDS}
    return {"steps": trained.trainer.state.global_step, "eval": report.summary["rewards"], "check": checked}


if __name__ == "__main__":
    print(main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()))
