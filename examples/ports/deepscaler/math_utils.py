"""Answer extraction and grading for the DeepScaleR-style math reward (written for rewardsmith, not copied).

The answer is the content of the last ``\\boxed{...}`` (or ``\\fbox{...}``),
braces matched. Two answers are equal when their normalised strings are, or
when math-verify finds them equivalent (numbers, fractions, expressions,
intervals, sets).
"""

import re

from math_verify import parse, verify

_BOX_COMMANDS = ("\\boxed", "\\fbox")


def last_boxed_only_string(text):
    """The last ``\\boxed{...}`` of ``text`` with its braces, or None."""
    start = max(text.rfind(command) for command in _BOX_COMMANDS)
    if start < 0:
        return None
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return None


def remove_boxed(boxed):
    """The content of ``\\boxed{...}``, or None when ``boxed`` is not one box."""
    if boxed is None:
        return None
    for command in _BOX_COMMANDS:
        opening = command + "{"
        if boxed.startswith(opening) and boxed.endswith("}"):
            return boxed[len(opening) : -1]
    return None


def extract_answer(passage):
    """The last boxed answer of ``passage``, or None when it boxes nothing."""
    if "\\boxed" not in passage and "\\fbox" not in passage:
        return None
    return remove_boxed(last_boxed_only_string(passage))


def _normalize(answer):
    answer = answer.strip()
    text = re.fullmatch(r"\\text\{(.+)\}", answer)
    if text:
        answer = text.group(1)
    for old, new in (("\\left", ""), ("\\right", ""), ("\\!", ""), ("dfrac", "frac"), ("tfrac", "frac"),
                     ("^{\\circ}", ""), ("^\\circ", ""), ("\\$", ""), ("$", ""), ("\\%", ""), (" ", "")):  # fmt: skip
        answer = answer.replace(old, new)
    return answer.rstrip(".")


def grade_answer(given_answer, ground_truth):
    """Whether ``given_answer`` equals ``ground_truth``: the same normalised text, or math-verify's equivalence."""
    if given_answer is None or ground_truth is None:
        return False
    given, truth = _normalize(given_answer), _normalize(ground_truth)
    if not given:
        return False
    if given == truth:
        return True
    gold = parse(f"${ground_truth}$")
    answer = parse(f"${given_answer}$")
    return bool(gold) and bool(answer) and verify(gold, answer)
