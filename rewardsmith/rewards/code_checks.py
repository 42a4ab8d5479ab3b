"""Running a row's tests against a program, and deciding each test: outputs compared as the peers compare them.

Standard output is compared as whitespace-normalised lines: each line split
into tokens, trailing blank lines ignored, and *every* line compared (a
program that prints only the first line of the answer fails). A token that
differs may still match as a number when the expected token is a decimal
number (has a ``.`` or an exponent) and the two are within ``float_tolerance``
(absolute, or relative to the expected value); integers must be equal. A run
must also end normally (exit status 0): right output followed by a crash fails.

Return values of call tests are compared by value, with the same tolerance
when the expected value is a float (an expected integer must be met exactly);
tuples compare as lists (JSON has no tuples), and, as in APPS, an expected
value wrapped in a one-element list also matches the bare value.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.rewards.code_formats import (
    AssertTests,
    CallTests,
    HumanEvalTests,
    StdioTests,
    assert_suite,
    call_suite,
    humaneval_suite,
)
from rewardsmith.sandbox.backend import Backend
from rewardsmith.sandbox.limits import Limits
from rewardsmith.sandbox.results import Opaque, Program, RunResult

__all__ = ["Verdict", "check_program", "outputs_match", "values_match"]


@dataclass
class Verdict:
    """Each test's outcome, and why the first failure failed."""

    passed: list[bool]
    failure: str = ""
    stderr: str = ""
    compile_error: bool = False
    timeouts: int = 0
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return len(self.passed)

    @property
    def count(self) -> int:
        return sum(self.passed)


def _short(text: Any, limit: int = 200) -> str:
    text = text if isinstance(text, str) else repr(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _decimal(token: str) -> bool:
    return any(c in token for c in ".eE")


def _tokens_match(got: str, want: str, tolerance: float) -> bool:
    if got == want:
        return True
    if tolerance <= 0 or not _decimal(want):
        return False
    try:
        a, b = float(got), float(want)
    except ValueError:
        return False
    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    return abs(a - b) <= tolerance * max(1.0, abs(b))


def _lines(text: str) -> list[list[str]]:
    lines = [line.split() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def outputs_match(got: str, want: str, float_tolerance: float = 1e-6) -> tuple[bool, str]:
    """Whether standard output ``got`` matches ``want`` (see the module docs), and where it differs.

    >>> outputs_match("3 \\n4\\n\\n", "3\\n4")
    (True, '')
    >>> outputs_match("3\\n", "3\\n4\\n")
    (False, '1 line(s) printed, 2 expected')
    >>> outputs_match("0.3333333", "0.333333333"), outputs_match("1000001", "1000000")[0]
    ((True, ''), False)
    """
    mine, theirs = _lines(got), _lines(want)
    if len(mine) != len(theirs):
        return False, f"{len(mine)} line(s) printed, {len(theirs)} expected"
    for number, (a, b) in enumerate(zip(mine, theirs), 1):
        if len(a) != len(b) or not all(_tokens_match(x, y, float_tolerance) for x, y in zip(a, b)):
            return False, f"line {number}: got {_short(' '.join(a), 80)!r}, expected {_short(' '.join(b), 80)!r}"
    return True, ""


def _as_lists(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_as_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_lists(v) for k, v in value.items()}
    return value


def _equal(a: Any, b: Any, tolerance: float) -> bool:
    if isinstance(a, Opaque) or isinstance(b, Opaque):
        return False
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if isinstance(a, float) or isinstance(b, float):
        if not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
            return False
        if not isinstance(b, float):  # an integer answer is exact: 123456700000.0 is not 123456789012
            return a == b
        return a == b or (math.isfinite(a) and math.isfinite(b) and abs(a - b) <= tolerance * max(1.0, abs(b)))
    if isinstance(a, list) or isinstance(b, list):
        return (
            isinstance(a, list)
            and isinstance(b, list)
            and len(a) == len(b)
            and all(map(_equal, a, b, [tolerance] * len(a)))
        )
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict)
            and isinstance(b, dict)
            and a.keys() == b.keys()
            and all(_equal(a[k], b[k], tolerance) for k in a)
        )
    return a == b


def values_match(got: Any, want: Any, float_tolerance: float = 1e-6) -> bool:
    """Whether a call's return value ``got`` matches the expected ``want`` (see the module docs).

    >>> values_match((1, 2), [1, 2]), values_match(3, [3]), values_match(0.1 + 0.2, 0.3), values_match(True, 1)
    (True, True, True, False)
    >>> values_match(123456700000.0, 123456789012), values_match(3.0, 3), values_match(3, 3.0000001)
    (False, True, True)
    """
    got = _as_lists(got)
    if _equal(got, want, float_tolerance):
        return True
    return isinstance(want, list) and len(want) == 1 and _equal(got, want[0], float_tolerance)


def _stdio(backend: Backend, program: Program, tests: StdioTests, limits: Limits, options: dict) -> Verdict:
    tolerance, stop_early = options["float_tolerance"], options["stop_on_first_failure"]
    verdict = Verdict([False] * len(tests.inputs))
    budget_end = time.monotonic() + options["max_seconds"]

    def judge(index: int, run: RunResult) -> bool:
        ok, why = (run.ok, "") if not run.ok else outputs_match(run.stdout, tests.outputs[index], tolerance)
        verdict.passed[index] = ok
        if not ok and not verdict.failure:
            why = why or f"the program {run.describe()}"
            verdict.failure = f"test {index + 1}: {why}; input {_short(tests.inputs[index], 80)!r}"
            verdict.stderr = run.stderr
        verdict.timeouts += run.status == "timeout"
        if index + 1 < len(tests.inputs) and time.monotonic() > budget_end:
            if not verdict.failure:
                verdict.failure = (
                    f"tests {index + 2}-{len(tests.inputs)} not run: max_seconds={options['max_seconds']:g} used up"
                )
            return True
        return not ok and stop_early

    execution = backend.run(program, tests.inputs, limits, compile_timeout=options["compile_timeout"], stop=judge)
    if not execution.compiled:
        assert execution.compile is not None
        verdict.compile_error = True
        verdict.failure = f"the program did not compile ({execution.compile.describe()})"
        verdict.stderr = execution.compile.stderr
    return verdict


def _suite(backend: Backend, program: Program, tests: Any, limits: Limits, options: dict) -> Verdict:
    if isinstance(tests, CallTests):
        suite = call_suite(tests)
    elif isinstance(tests, HumanEvalTests):
        suite = humaneval_suite(tests)
        program = Program(f"{tests.prompt}\n{program.source}", program.language, program.files)
    else:
        suite = assert_suite(tests)
    if options["stop_on_first_failure"]:
        suite = dataclasses.replace(suite, stop_on_failure=True)
    result = backend.run_suite(program, suite, limits, load_timeout=limits.timeout, budget=options["max_seconds"])
    verdict = Verdict([], stderr=result.stderr)
    if isinstance(tests, CallTests):
        for index, (call, want) in enumerate(zip(result.calls, tests.outputs)):
            ok = call.ok and values_match(call.value, want, options["float_tolerance"])
            verdict.passed.append(ok)
            verdict.timeouts += call.timeout
            if not ok and not verdict.failure:
                why = f"returned {_short(call.value)}, expected {_short(want)}" if call.ok else call.error
                verdict.failure = f"test {index + 1}: {why}; arguments {_short(list(tests.inputs[index]), 120)}"
    else:
        for index, outcome in enumerate(result.tests):
            verdict.passed.append(outcome.passed)
            verdict.timeouts += outcome.timeout
            if not outcome.passed and not verdict.failure:
                step = [s for s in suite.tests if s.test][index]
                values = f" ({outcome.left} != {outcome.right})" if outcome.left is not None else ""
                verdict.failure = f"test {index + 1}: {_short(step.code, 160)}: {outcome.error}{values}"
    if result.load_error and not verdict.failure:
        verdict.failure = result.load_error
    return verdict


def check_program(backend: Backend, program: Program, tests: Any, limits: Limits, **options: Any) -> Verdict:
    """Run ``program`` against ``tests`` (a parsed test format) on ``backend``; one verdict per test.

    ``options``: ``float_tolerance``, ``stop_on_first_failure``, ``compile_timeout``, ``max_seconds``.
    """
    if isinstance(tests, StdioTests):
        return _stdio(backend, program, tests, limits, options)
    if isinstance(tests, (AssertTests, HumanEvalTests, CallTests)):
        return _suite(backend, program, tests, limits, options)
    raise TypeError(f"not a test format: {type(tests).__name__}")
