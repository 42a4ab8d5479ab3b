"""A GSM8K scorer in the style of verl's ``reward_score/gsm8k.py`` (written for these tests, not copied).

The answer is the number after the last ``#### `` (``method="strict"``) or the
last number of the text (``"flexible"``); a right answer earns ``score``, a
wrong one ``format_score``.
"""

import re

_STRICT = re.compile(r"#### (-?[0-9.,]+)")
_ANY_NUMBER = re.compile(r"-?[0-9.,]*[0-9]")


def extract_solution(solution_str, method="strict"):
    if method == "strict":
        found = _STRICT.findall(solution_str)
        if not found:
            return None
        return found[-1].replace(",", "").rstrip(".")
    numbers = [n.replace(",", "") for n in _ANY_NUMBER.findall(solution_str)]
    return numbers[-1] if numbers else None


def compute_score(solution_str, ground_truth, method="strict", format_score=0.0, score=1.0):
    answer = extract_solution(solution_str, method=method)
    if answer is None:
        return 0.0
    return score if answer == ground_truth else format_score
