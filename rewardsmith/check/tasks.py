"""What an audit knows of two task shapes whose holes are their own: number puzzles and code with visible tests.

**Number puzzles** (Countdown): a row gives a list of integers and a target,
and the answer is an equation over those numbers. The audit solves each row
itself (:func:`solve_numbers`, a bounded search with exact fractions), so it
has a right equation to compare with, a plausible wrong one (the sum of the
numbers), and the probes a reward that ignores the numbers pays: the target
alone, the target built from numbers that were not given, a given number used
twice.

**Code with visible tests** (MBPP's prompt lists its asserts; HumanEval's
docstrings show ``>>>`` calls): a policy sees those examples, so a program
that answers exactly the calls it saw (a lookup table) is the best-known
code-RL hack. :func:`visible_calls` reads the examples a prompt shows and
:func:`lookup_program` writes that program; :func:`stub_program` is an
honest-looking wrong one (the right name, no work).
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

__all__ = ["VisibleCall", "given_numbers", "lookup_program", "solve_numbers", "stub_program", "visible_calls"]

#: Expressions tried at most when solving a number puzzle (a 6-number puzzle is cut short, not slow).
SOLVE_BUDGET = 200_000
#: Numbers in a puzzle the audit tries to solve.
MAX_NUMBERS = 6


def given_numbers(value: Any) -> list[int] | None:
    """A column value that is a puzzle's list of integers (2 to 8 of them), else ``None``.

    >>> given_numbers([3, 5, 2]), given_numbers("[3, 5]"), given_numbers([1.5, 2]), given_numbers([7])
    ([3, 5, 2], [3, 5], None, None)
    """
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            value = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    if not isinstance(value, (list, tuple)) or not 2 <= len(value) <= 8:
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return None
    return list(value)


def solve_numbers(numbers: list[int], target: int, budget: int = SOLVE_BUDGET) -> str | None:
    """An equation reaching ``target`` with ``numbers`` (each once; all of them when possible), else ``None``.

    >>> solve_numbers([3, 5, 2], 16)
    '2 * (3 + 5)'
    >>> solve_numbers([2, 2], 7) is None
    True
    """
    if len(numbers) > MAX_NUMBERS:
        return None
    left = [budget]
    start = [(Fraction(n), str(n)) for n in numbers]
    for use_all in (True, False):
        found = _search(start, Fraction(target), use_all, left)
        if found is not None:
            return found
    return None


def _combine(a: tuple[Fraction, str], b: tuple[Fraction, str]) -> list[tuple[Fraction, str]]:
    (x, ex), (y, ey) = a, b
    out = [(x + y, f"{ex} + {ey}"), (x * y, f"{_wrap(ex)} * {_wrap(ey)}"), (x - y, f"{ex} - {_wrap(ey)}")]
    if y != 0:
        out.append((x / y, f"{_wrap(ex)} / {_wrap(ey, True)}"))
    return out


def _wrap(expr: str, strict: bool = False) -> str:
    simple = expr.lstrip("-").isdigit() or (not strict and " + " not in expr and " - " not in expr)
    return expr if simple else f"({expr})"


def _search(items: list[tuple[Fraction, str]], target: Fraction, use_all: bool, left: list[int]) -> str | None:
    if len(items) == 1 or not use_all:
        for value, expr in items:
            if value == target:
                return expr
    if len(items) == 1:
        return None
    for i, j in itertools.permutations(range(len(items)), 2):
        rest = [items[k] for k in range(len(items)) if k not in (i, j)]
        for made in _combine(items[i], items[j]):
            left[0] -= 1
            if left[0] <= 0:
                return None
            found = _search([*rest, made], target, use_all, left)
            if found is not None:
                return found
    return None


@dataclass(frozen=True)
class VisibleCall:
    """One example call a prompt shows: the function, its arguments and the expected value, as source text."""

    function: str
    arguments: str
    expected: str


def visible_calls(prompt: str) -> list[VisibleCall]:
    """The example calls a prompt shows: ``assert f(x) == y`` lines and ``>>> f(x)`` lines followed by a value.

    >>> [c.expected for c in visible_calls("Add.\\nassert add(1, 2) == 3\\nassert add(2, 2)==4")]
    ['3', '4']
    >>> visible_calls('def f(x):\\n    \\"\\"\\"\\n    >>> f(2)\\n    4\\n    \\"\\"\\"')[0]
    VisibleCall(function='f', arguments='2', expected='4')
    """
    calls: list[VisibleCall] = []
    lines = prompt.splitlines()[:2000]
    for k, line in enumerate(lines):
        text = line.strip()
        if text.startswith("assert ") and len(text) < 5000:
            call = _from_assert(text)
        elif text.startswith(">>> ") and k + 1 < len(lines) and lines[k + 1].strip():
            call = _from_source(text[4:], lines[k + 1].strip())
        else:
            call = None
        if call is not None:
            calls.append(call)
    return calls


def _from_assert(text: str) -> VisibleCall | None:
    try:
        test = ast.parse(text).body[0]
    except (SyntaxError, ValueError, MemoryError, RecursionError, IndexError):
        return None
    if not isinstance(test, ast.Assert) or not isinstance(test.test, ast.Compare):
        return None
    compare = test.test
    if len(compare.ops) != 1 or not isinstance(compare.ops[0], (ast.Eq, ast.Is)):
        return None
    left, right = compare.left, compare.comparators[0]
    call, expected = (left, right) if isinstance(left, ast.Call) else (right, left)
    return _call(call, ast.unparse(expected))


def _from_source(call_text: str, expected: str) -> VisibleCall | None:
    try:
        node = ast.parse(call_text, mode="eval").body
        ast.parse(expected, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return _call(node, expected)


def _call(node: ast.AST, expected: str) -> VisibleCall | None:
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.keywords:
        return None
    arguments = ", ".join(ast.unparse(a) for a in node.args)
    return VisibleCall(node.func.id, arguments, expected)


def lookup_program(calls: list[VisibleCall]) -> str | None:
    """A program that answers exactly the calls the prompt showed, by looking them up: no work at all.

    >>> program = lookup_program(visible_calls("assert add(1, 2) == 3\\nassert add(2, 2) == 4"))
    >>> namespace = {}
    >>> exec(program, namespace)
    >>> namespace["add"](1, 2), namespace["add"](2, 2), namespace["add"](5, 5)
    (3, 4, None)
    """
    if not calls:
        return None
    name = calls[0].function
    entries = [f"    repr(({c.arguments},)): ({c.expected})," for c in calls if c.function == name]
    return "\n".join(["_SEEN = {", *entries, "}", "", "", f"def {name}(*args):", "    return _SEEN.get(repr(args))"])


def stub_program(calls: list[VisibleCall]) -> str | None:
    """An honest-looking wrong program: the function the tests call, returning nothing.

    >>> stub_program(visible_calls("assert add(1, 2) == 3"))
    'def add(*args):\\n    return None'
    """
    return f"def {calls[0].function}(*args):\n    return None" if calls else None
