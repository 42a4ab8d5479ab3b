"""Converters for particular datasets: GSM8K, MATH (and MATH-500), Countdown."""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from rewardsmith.core.errors import DatasetError
from rewardsmith.data.converters import Converter, cell_text, short_repr
from rewardsmith.rewards._text import boxed_contents, format_number, parse_number

__all__ = ["GSM8K", "Countdown", "Math", "countdown_prompt", "gsm8k_final_answer"]


def gsm8k_final_answer(solution: str) -> str:
    """The final number of a GSM8K solution (after its last ``####``), as plain digits.

    Thousands separators are dropped (``1,000`` gives ``1000``), which is how
    ``gsm8k_accuracy`` and most answer checkers compare numbers.

    >>> gsm8k_final_answer("He pays 2 * 500 = $<<2*500=1000>>1000.\\n#### 1,000")
    '1000'
    >>> gsm8k_final_answer("no marker")
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.DatasetError: the solution has no '#### N' final answer: 'no marker'
    """
    _, marker, tail = solution.rpartition("####")
    if not marker:
        raise DatasetError(f"the solution has no '#### N' final answer: {short_repr(solution)}")
    value = parse_number(tail.strip())
    if value is None:
        raise DatasetError(f"the final answer after '####' is not a single number: {short_repr(tail.strip())}")
    return format_number(value)


@dataclass
class GSM8K(Converter):
    """GSM8K rows: `question` to the prompt, the number after `####` as `answer`, the full solution as `solution`.

    >>> GSM8K().convert({"question": "2 + 2?", "answer": "2 + 2 = 4\\n#### 4"})
    {'prompt': '2 + 2?', 'answer': '4', 'solution': '2 + 2 = 4\\n#### 4'}
    """

    INPUT_SETTINGS = ("question_key", "answer_key")
    OUTPUT_COLUMNS = ("prompt", "answer", "solution")

    question_key: str = "question"
    answer_key: str = "answer"

    @property
    def removed_columns(self) -> tuple[str, ...]:
        return (self.answer_key,) if self.answer_key not in self.output_columns else ()

    def convert(self, row: Mapping[str, Any]) -> dict[str, Any]:
        solution = cell_text(row, self.answer_key, "answer")
        return {
            "prompt": cell_text(row, self.question_key, "question"),
            "answer": gsm8k_final_answer(solution),
            "solution": solution,
        }


@dataclass
class Math(Converter):
    """MATH-style rows: `problem` to the prompt; `answer` from its column, else the last `\\boxed{}` of `solution`.

    >>> Math().convert({"problem": "1/2 + 1/2?", "solution": r"It is $\\boxed{1}$."})
    {'prompt': '1/2 + 1/2?', 'answer': '1'}
    """

    INPUT_SETTINGS = ("problem_key",)
    OUTPUT_COLUMNS = ("prompt", "answer")

    problem_key: str = "problem"
    solution_key: str = "solution"
    answer_key: str = "answer"

    @property
    def removed_columns(self) -> tuple[str, ...]:
        return (self.answer_key,) if self.answer_key != "answer" else ()

    def missing_inputs(self, columns: Iterable[str]) -> list[str]:
        have = set(columns)
        missing = super().missing_inputs(have)
        if self.answer_key not in have and self.solution_key not in have:
            missing.append(f"{self.answer_key!r} or {self.solution_key!r}")
        return missing

    def convert(self, row: Mapping[str, Any]) -> dict[str, Any]:
        answer = row.get(self.answer_key)
        if answer is None or (isinstance(answer, str) and not answer.strip()):
            solution = row.get(self.solution_key)
            boxed = boxed_contents(solution) if isinstance(solution, str) else []
            if not boxed:
                raise DatasetError(
                    f"no answer: the {self.answer_key!r} column is empty and the {self.solution_key!r} column "
                    f"has no \\boxed{{}} ({short_repr(solution)}). Fill in the answer, or filter such rows out first"
                )
            answer = boxed[-1]
        return {"prompt": cell_text(row, self.problem_key, "problem"), "answer": str(answer).strip()}


def _integer(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise DatasetError(f"{what} is {value!r}, not an integer")
    if isinstance(value, numbers.Integral):
        return int(value)
    try:
        exact = Fraction(str(value).strip()) if isinstance(value, (str, float)) else None
    except ValueError:
        exact = None
    if exact is None or exact.denominator != 1:
        raise DatasetError(f"{what} is {short_repr(value)}, not an integer")
    return int(exact)


def countdown_prompt(nums: list[int], target: int) -> str:
    """The default Countdown prompt text.

    >>> print(countdown_prompt([3, 5, 2], 16))
    Using the numbers [3, 5, 2], create an equation that equals 16. You can use +, -, * and /, and each number
    exactly once.
    """
    return (
        f"Using the numbers {list(nums)}, create an equation that equals {target}. "
        "You can use +, -, * and /, and each number exactly once."
    )


@dataclass
class Countdown(Converter):
    """Countdown rows: `nums` (integers) and `target` (an integer) to a prompt; both kept for the countdown reward.

    >>> Countdown().convert({"nums": [3, 5, 2], "target": 16})["target"]
    16
    """

    INPUT_SETTINGS = ("nums_key", "target_key")
    OUTPUT_COLUMNS = ("prompt", "nums", "target")

    nums_key: str = "nums"
    target_key: str = "target"

    @property
    def removed_columns(self) -> tuple[str, ...]:
        renamed = {self.nums_key: "nums", self.target_key: "target"}
        return tuple(source for source, out in renamed.items() if source != out)

    def convert(self, row: Mapping[str, Any]) -> dict[str, Any]:
        raw = row.get(self.nums_key)
        if isinstance(raw, (str, bytes)) or not isinstance(raw, Iterable):
            raise DatasetError(f"the {self.nums_key!r} column holds {short_repr(raw)}, not a list of integers")
        nums = [_integer(n, f"a number in {self.nums_key!r}") for n in raw]
        if not nums:
            raise DatasetError(f"the {self.nums_key!r} column holds an empty list")
        target = _integer(row.get(self.target_key), f"the {self.target_key!r} value")
        return {"prompt": countdown_prompt(nums, target), "nums": nums, "target": target}
