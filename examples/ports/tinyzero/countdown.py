"""A countdown scorer in the style of TinyZero's ``reward_score/countdown.py`` (written for rewardsmith, not copied).

``ground_truth`` is ``{"target": int, "numbers": [int, ...]}``. As TinyZero's scorer, it reads the
text after ``Assistant:`` (it is given the prompt and the response together: ``on: sequence`` here)
and the last ``<answer>`` block of its last line. Every number must be used exactly once.
"""

import re


def extract_solution(solution_str):
    # TinyZero scores the prompt and the response together: the response is what follows the marker
    if "Assistant:" in solution_str:
        solution_str = solution_str.split("Assistant:", 1)[1]
    elif "<|im_start|>assistant" in solution_str:
        solution_str = solution_str.split("<|im_start|>assistant", 1)[1]
    else:
        return None
    found = re.findall(r"<answer>(.*?)</answer>", solution_str.split("\n")[-1])
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
