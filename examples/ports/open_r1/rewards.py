"""Rewards in the style of open-r1's ``rewards.py``: accuracy, format and tag count over chat completions.

They are plain TRL functions (``completion[0]["content"]``, the ``solution``
column through the signature), so rewardsmith takes them as they are. The
recipe next to this file names open-r1's rewards instead, which run
rewardsmith's built-ins (see ``docs/coming-from.md`` for how they differ);
``main.py`` scores the same completions with both.
"""

from __future__ import annotations

import re

from math_verify import LatexExtractionConfig, parse, verify


def accuracy_reward(completions, solution, **kwargs) -> list[float | None]:
    """1 when the completion's LaTeX answer equals the solution's; ``None`` when the solution does not parse."""
    scores: list[float | None] = []
    for completion, reference in zip(completions, solution):
        gold = parse(reference, extraction_mode="first_match")
        if not gold:
            scores.append(None)
            continue
        answer = parse(completion[0]["content"], extraction_config=[LatexExtractionConfig()])
        scores.append(float(verify(gold, answer)))
    return scores


def format_reward(completions, **kwargs) -> list[float]:
    """1 for reasoning in <think> then an answer in <answer>, each on its own lines."""
    pattern = r"^<think>\n.*?\n</think>\n<answer>\n.*?\n</answer>$"
    return [1.0 if re.match(pattern, c[0]["content"], re.DOTALL | re.MULTILINE) else 0.0 for c in completions]


def tag_count_reward(completions, **kwargs) -> list[float]:
    """A quarter point for each of the four tags found once (with its newline)."""

    def count(text: str) -> float:
        tags = ("<think>\n", "\n</think>\n", "\n<answer>\n", "\n</answer>")
        return sum(0.25 for tag in tags if text.count(tag) == 1)

    return [count(c[0]["content"]) for c in completions]
