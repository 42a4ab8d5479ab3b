"""``countdown``: an arithmetic equation that reaches a target with the given numbers.

The equation is the single ``<answer>`` block after the reasoning (after the
last ``</think>``). It is parsed with :mod:`ast` and evaluated by walking the
tree with exact fractions, never ``eval``: only integers, ``+ - * /``, unary
minus and parentheses are allowed, so no attribute walk or call can run.
Division by zero, huge numbers and absurdly long or deep expressions score 0
at once.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from rewardsmith.core.engine import OnError
from rewardsmith.core.errors import RewardConfigError, RewardsmithError
from rewardsmith.core.registry import register_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward
from rewardsmith.rewards._text import final_segment, tag_blocks, tag_name, visible_text

__all__ = ["Countdown", "InvalidEquation", "evaluate_equation"]

_MAX_CHARS = 1000
_MAX_NUMBER_DIGITS = 30
_ALLOWED_TEXT = re.compile(r"^[\d\s+\-*/().=]*$")
_UNICODE = str.maketrans({"×": "*", "·": "*", "÷": "/", "−": "-", "–": "-"})
_OPERATORS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
}


class InvalidEquation(RewardsmithError, ValueError):
    """The answer is not an allowed arithmetic expression."""


def _evaluate(node: ast.AST, used: list[int]) -> Fraction:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, used)
    if isinstance(node, ast.Constant) and type(node.value) is int:
        used.append(node.value)
        return Fraction(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _evaluate(node.left, used), _evaluate(node.right, used)
        if isinstance(node.op, ast.Div) and right == 0:
            raise InvalidEquation("division by zero")
        value = _OPERATORS[type(node.op)](left, right)
        if abs(value.numerator) > 10**60 or value.denominator > 10**60:
            raise InvalidEquation("intermediate value too large")
        return value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _evaluate(node.operand, used)
        return -value if isinstance(node.op, ast.USub) else value
    raise InvalidEquation(f"{type(node).__name__} is not allowed (only integers, + - * / and parentheses)")


def evaluate_equation(expression: str) -> tuple[Fraction, list[int]]:
    """Evaluate an arithmetic expression safely: its exact value and the integers it uses.

    >>> evaluate_equation("(8 * 2) - 1")
    (Fraction(15, 1), [8, 2, 1])
    >>> evaluate_equation("().__class__")
    Traceback (most recent call last):
    ...
    rewardsmith.rewards.countdown.InvalidEquation: only digits, + - * / ( ) and spaces are allowed
    """
    text = expression.translate(_UNICODE).strip()
    if len(text) > _MAX_CHARS:
        raise InvalidEquation(f"the expression is longer than {_MAX_CHARS} characters")
    if not _ALLOWED_TEXT.match(text) or "=" in text:
        raise InvalidEquation("only digits, + - * / ( ) and spaces are allowed")
    if "**" in text or "//" in text:
        raise InvalidEquation("only + - * / are allowed (no ** or //)")
    if any(len(run) > _MAX_NUMBER_DIGITS for run in re.findall(r"\d+", text)):
        raise InvalidEquation("a number in the expression is absurdly long")
    if re.search(r"\d\.|\.\d|\.", text):
        raise InvalidEquation("only integers are allowed")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise InvalidEquation(f"not a valid expression ({type(exc).__name__})") from exc
    used: list[int] = []
    try:
        return _evaluate(tree, used), used
    except RecursionError as exc:
        raise InvalidEquation("the expression is nested too deeply") from exc


def _as_numbers(value: Any) -> list[int] | None:
    if isinstance(value, str):
        value = re.findall(r"-?\d+", value)
    try:
        return [int(v) for v in value]
    except (TypeError, ValueError):
        return None


@register_reward("countdown")
@dataclass
class Countdown(Reward):
    """The ``<answer>`` equation uses only the given numbers (each at most once) and equals the target.

    Only integers, ``+ - * /`` and parentheses; evaluated exactly by walking
    the syntax tree (no ``eval``); equal to ``target`` exactly, as a
    fraction (``7 + 3/(97*98*99)`` is not 7; ``tolerance`` allows a difference,
    0 by default, for targets that are rounded decimals). An
    equation written as ``8 * 2 - 1 = 15`` is accepted when the right side is
    the target. ``use_all_numbers`` requires every number exactly once. Only
    the answer after the reasoning counts (after the last ``</think>``).

    Columns: ``nums`` (list of ints), ``target`` (number). Range: {0, 1}.

    >>> cd = Countdown()
    >>> cd(completions=["<answer> 8 * 2 - 1 </answer>", "<answer>8*2-1-0</answer>", "<answer>8 * 2 * 1</answer>",
    ...                 "<answer>8 * 8 - 49</answer>", "<answer>(8+4)/0</answer>"],
    ...    nums=[[4, 8, 2, 1]] * 5, target=[15, 15, 15, 15, 15])
    [1.0, 0.0, 0.0, 0.0, 0.0]
    >>> Countdown(use_all_numbers=True).check("<answer>8 + 4 + 2 + 1</answer>", nums=[4, 8, 2, 1], target=15).score
    1.0
    """

    default_name = "countdown"
    score_range = (0.0, 1.0)

    use_all_numbers: bool = False
    tolerance: float = 0.0
    think_tag: str = "think"
    #: A sample whose check times out or crashes scores as a wrong answer, never better.
    on_error: OnError = field(default="zero", kw_only=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.tolerance, bool) or not isinstance(self.tolerance, (int, float)) or not self.tolerance >= 0:
            raise RewardConfigError(f"reward {self.name!r}: tolerance must be a number >= 0, got {self.tolerance!r}")
        try:
            self.think_tag = tag_name(self.think_tag, "think_tag")
        except ValueError as exc:
            raise RewardConfigError(f"reward {self.name!r}: {exc}") from None

    def score(self, completion: str, nums: Any, target: Any) -> RewardResult:
        numbers = _as_numbers(nums)
        try:
            goal = Fraction(str(target)) if not isinstance(target, (int, Fraction)) else Fraction(target)
        except (TypeError, ValueError, ZeroDivisionError):
            return RewardResult(None, f"the target {target!r} is not a number")
        if numbers is None:
            return RewardResult(None, f"the numbers {nums!r} are not a list of integers")
        blocks = tag_blocks(final_segment(visible_text(completion), self.think_tag), "answer", limit=1)
        if not blocks:
            return RewardResult(0.0, "no single well-formed <answer> block after the reasoning")
        if len(blocks) > 1:
            return RewardResult(0.0, "more than one <answer> block")
        equation = blocks[0]
        if "=" in equation:
            left, _, right = equation.partition("=")
            try:
                stated = Fraction(right.strip())
            except (ValueError, ZeroDivisionError):
                return RewardResult(0.0, "the right side of '=' is not a number")
            if "=" in right or stated != goal:
                return RewardResult(0.0, f"the equation claims {right.strip()}, not the target {target}")
            equation = left
        try:
            value, used = evaluate_equation(equation)
        except InvalidEquation as exc:
            return RewardResult(0.0, str(exc))
        available, spent = Counter(numbers), Counter(used)
        if spent - available:
            extra = sorted((spent - available).elements())
            return RewardResult(0.0, f"uses numbers not available: {extra}")
        if self.use_all_numbers and spent != available:
            return RewardResult(
                0.0, f"does not use every number exactly once: {sorted((available - spent).elements())}"
            )
        if value != goal and abs(value - goal) > Fraction(self.tolerance):
            return RewardResult(0.0, f"equals {value}, not {target}")
        return RewardResult(1.0, f"{equation.strip()} = {target}")
