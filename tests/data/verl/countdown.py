"""A countdown scorer in the style of TinyZero's ``reward_score/countdown.py`` (written for these tests).

``ground_truth`` is ``{"target": int, "numbers": [int, ...]}``; the equation is
the last ``<answer>`` block. Every number must be used exactly once.
"""

import re


def extract_solution(solution_str):
    found = re.findall(r"<answer>(.*?)</answer>", solution_str, re.DOTALL)
    return found[-1].strip() if found else None


def compute_score(solution_str, ground_truth, method="strict", format_score=0.1, score=1.0):
    equation = extract_solution(solution_str)
    if equation is None:
        return 0.0
    used = sorted(int(n) for n in re.findall(r"\d+", equation))
    if used != sorted(ground_truth["numbers"]) or not re.fullmatch(r"[\d+\-*/(). ]+", equation):
        return format_score
    try:
        value = eval(equation, {"__builtins__": None}, {})
    except Exception:
        return format_score
    return score if abs(value - ground_truth["target"]) < 1e-5 else format_score
