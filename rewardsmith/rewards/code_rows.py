"""What ``code_tests`` reads from a row besides its ``tests``: the datasets' own layouts, and unfenced programs.

Rows that did not go through a converter are read whole, or refused with the
converter to use, never read in part:

* HumanEval's own layout (``prompt`` the function stub, ``test`` defining
  ``check``, ``entry_point``): the program is the stub followed by the
  completion's code, as the ``humaneval`` converter's tests say. When the
  prompt is not that stub (an instruction around it), the row is refused.
* MBPP's own layout (``test_list`` with ``test_setup_code`` and
  ``test_imports``): the setup and imports run before the asserts.

A completion with no code fence at all counts as the program when it is one
whole Python module that defines, at its top level, every function the tests
call from the program (a dataset's reference solutions are written so). That
only changes how the program is found, never what is graded: the same code in
a fence scores the same, and prose, a bare answer or code mixed with text does
not parse as a module and scores 0 as before.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from typing import Any

from rewardsmith.rewards.code_formats import (
    AssertTests,
    CallTests,
    HumanEvalTests,
    TestFormatError,
    Tests,
    assert_suite,
    parse_python,
    parse_tests,
)

__all__ = ["row_tests", "unfenced_program"]

_TO_HUMANEVAL = "prepare the dataset with converter: humaneval (it writes the 'tests' column code_tests reads)"


def _defines(code: str, names: frozenset[str] | set[str]) -> bool:
    try:
        tree = parse_python(code)
    except (SyntaxError, ValueError, RecursionError):
        return False
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    return bool(names) and names <= defined


def _humaneval(test: str, prompt: Any, entry_point: Any) -> HumanEvalTests:
    if not isinstance(entry_point, str) or not entry_point.isidentifier():
        raise TestFormatError(
            "this row's test defines check(candidate) (HumanEval's layout) and it has no 'entry_point' column; "
            + _TO_HUMANEVAL
        )
    if not isinstance(prompt, str) or not _defines(prompt, {entry_point}):
        raise TestFormatError(
            f"this row is in HumanEval's own layout (test, entry_point {entry_point!r}), and its prompt is not "
            f"the function stub the program completes; {_TO_HUMANEVAL}"
        )
    return HumanEvalTests(prompt, test, entry_point)


@functools.lru_cache(maxsize=1024)
def _defines_check(text: str) -> bool:
    try:
        tree = parse_python(text)
    except (SyntaxError, ValueError, RecursionError):
        return False
    return any(isinstance(n, ast.FunctionDef) and n.name == "check" for n in tree.body)


def row_tests(
    tests: Any, prompt: Any = None, entry_point: Any = None, setup: Any = None, imports: Any = None
) -> Tests | None:
    """The row's tests, read whole from whichever layout it has (see the module docs).

    >>> row_tests(["assert f() == 1"], setup="x = 1", imports=["import re"]).setup
    'import re\\nx = 1'
    >>> stub = "def inc(x):\\n    '''x + 1'''\\n"
    >>> row_tests("def check(candidate):\\n    assert candidate(1) == 2\\n", stub, "inc").entry_point
    'inc'
    >>> row_tests("def check(candidate):\\n    assert candidate(1) == 2\\n", "Complete inc.", "inc")
    Traceback (most recent call last):
    ...
    rewardsmith.rewards.code_formats.TestFormatError: this row is in HumanEval's own layout ...
    """
    if isinstance(tests, str) and tests.strip()[:1] not in ("{", "[", "") and _defines_check(tests):
        return _humaneval(tests, prompt, entry_point)
    parsed = parse_tests(tests)
    if isinstance(parsed, AssertTests) and not parsed.setup.strip():
        lines = [i for i in imports or [] if isinstance(i, str)] if not isinstance(imports, str) else [imports]
        joined = "\n".join([*lines, setup if isinstance(setup, str) else ""]).strip()
        if joined:
            parsed = dataclasses.replace(parsed, setup=joined)
    return parsed


@functools.lru_cache(maxsize=1024)
def _called(tests: Tests) -> frozenset[str]:
    if isinstance(tests, HumanEvalTests):
        return frozenset({tests.entry_point})
    if isinstance(tests, CallTests):
        return frozenset({tests.fn_name})
    if isinstance(tests, AssertTests):
        calls = {
            n.func.id
            for text in tests.asserts
            for n in ast.walk(parse_python(text))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        }
        return frozenset(calls & set(assert_suite(tests).bind.values()))
    return frozenset()


def _mentions_definitions(code: str, names: frozenset[str]) -> bool:
    """A cheap test before parsing: a line starting ``def NAME`` or ``class NAME`` for each name."""
    return bool(names) and all(
        re.search(rf"(?m)^(?:async[ \t]+)?def[ \t]+{re.escape(n)}\b|^class[ \t]+{re.escape(n)}\b", code) for n in names
    )


def unfenced_program(completion: str, tests: Tests, max_chars: int = 100_000) -> str | None:
    """The completion as the program when it has no fence and is a whole module defining what the tests call.

    Longer than ``max_chars``, or with no line defining those names, it is
    not parsed at all (a long text of prose costs one scan).

    >>> tests = AssertTests(("assert add(1, 2) == 3",))
    >>> unfenced_program("def add(a, b):\\r\\n    return a + b", tests)
    'def add(a, b):\\n    return a + b'
    >>> unfenced_program("add = lambda a, b: a + b", tests), unfenced_program("The answer: 3", tests)
    (None, None)
    """
    if len(completion) > max_chars or "```" in completion or "~~~" in completion:
        return None
    code = completion.replace("\r\n", "\n").strip("\n")
    for names in [_called(tests), *([frozenset({"Solution"})] if isinstance(tests, CallTests) else [])]:
        if _mentions_definitions(code, names) and _defines(code, names):
            return code
    return None
