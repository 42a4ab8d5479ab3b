"""What a backend is asked to run (:class:`Program`, :class:`Suite`) and what it gives back.

A backend runs a program on inputs (:class:`Execution`: the compile step, then
one :class:`RunResult` per input), or a :class:`Suite` of Python tests against
it (:class:`SuiteResult`). Both are built from the runner's records
(:func:`execution_from_records`, :func:`suite_from_records`), whichever
backend ran it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.sandbox.inside.wire import WireError, decode_value, loads

__all__ = [
    "CallOutcome",
    "Execution",
    "Opaque",
    "Program",
    "RunResult",
    "Suite",
    "SuiteResult",
    "TestOutcome",
    "TestStep",
    "execution_from_records",
    "records_from_text",
    "suite_from_records",
]


@dataclass(frozen=True)
class Program:
    """Source code in a language (``python``, ``cpp``, ``javascript``), and extra files beside it.

    >>> Program("print(1)").language
    'python'
    """

    source: str
    language: str = "python"
    files: Mapping[str, str] = field(default_factory=dict)


@dataclass
class RunResult:
    """One run of a program: how it ended, what it wrote, how long it took.

    ``status``: ``ok`` (exit status 0), ``exit`` (another status), ``signal``
    (killed by one: a crash, or a memory or CPU limit), ``timeout``,
    ``output_limit`` (wrote more than allowed), ``not_run`` (an earlier step,
    such as compiling, failed).
    """

    status: str
    exit_code: int | None = None
    signal: int | None = None
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    cpu_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Whether the program exited normally with status 0."""
        return self.status == "ok"

    def describe(self) -> str:
        """How the run ended, in words.

        >>> RunResult("exit", exit_code=3).describe(), RunResult("timeout", seconds=2.0).describe()
        ('exited with status 3', 'timed out after 2.0 s')
        """
        if self.status == "ok":
            return "exited normally"
        if self.status == "exit":
            return f"exited with status {self.exit_code}"
        if self.status == "signal":
            return f"was killed by signal {self.signal}"
        if self.status == "timeout":
            return f"timed out after {self.seconds:.1f} s"
        if self.status == "output_limit":
            return "wrote more output than allowed"
        return "was not run"


@dataclass
class Execution:
    """A program run on each of its inputs: the compile step (compiled languages), then one result per input."""

    runs: list[RunResult]
    compile: RunResult | None = None

    @property
    def compiled(self) -> bool:
        """Whether the program compiled (always, for interpreted languages)."""
        return self.compile is None or self.compile.ok


@dataclass(frozen=True)
class TestStep:
    """One step of a suite: ``code`` to run; an ``assert a == b`` also as ``left``/``right`` expressions (so a
    failure shows both values); ``test=False`` for a step that is not a test (it prepares later ones)."""

    __test__ = False  # not a pytest test class

    code: str
    left: str | None = None
    right: str | None = None
    test: bool = True


@dataclass(frozen=True)
class Suite:
    """Python tests run against a program by the judge (:mod:`rewardsmith.sandbox.inside.judge`).

    ``bind`` maps names the tests use to names the program defines (its
    functions and classes, used through proxies); ``setup`` is trusted code
    run after binding; then either ``tests`` (steps) or ``calls`` (argument
    lists for the function ``call_name``, or the method of that name of a
    ``Solution()`` instance), whose results come back as values.
    """

    bind: Mapping[str, str] = field(default_factory=dict)
    setup: str = ""
    tests: Sequence[TestStep] = ()
    calls: Sequence[Sequence[Any]] | None = None
    call_name: str = ""
    stop_on_failure: bool = False

    @property
    def size(self) -> int:
        """The number of tests (or calls)."""
        return len(self.calls) if self.calls is not None else sum(1 for step in self.tests if step.test)


@dataclass
class TestOutcome:
    """The verdict of one test: passed or not, why, and for ``a == b`` both values."""

    __test__ = False  # not a pytest test class

    passed: bool
    error: str = ""
    left: str | None = None
    right: str | None = None
    timeout: bool = False


@dataclass
class CallOutcome:
    """One call of a call suite: the value returned (``ok``), or the error."""

    ok: bool
    value: Any = None
    error: str = ""
    timeout: bool = False


class Opaque:
    """An object of the program that is not plain data: equal to nothing but itself."""

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<{self.type_name} object of the program>"


@dataclass
class SuiteResult:
    """A suite's outcome: ``load_error`` when the program (or the setup) could not run; one outcome per test or
    call (those that did not run are failures saying why); the end of what the program printed."""

    load_error: str | None
    tests: list[TestOutcome] = field(default_factory=list)
    calls: list[CallOutcome] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""


def records_from_text(text: str) -> list[dict]:
    """The runner's records in its output (one JSON object per line; other lines are skipped).

    >>> records_from_text('{"kind": "done"}\\nnoise\\n')
    [{'kind': 'done'}]
    """
    records = []
    for line in text.splitlines():
        try:
            record = loads(line)
        except WireError:
            continue
        if type(record) is dict:
            records.append(record)
    return records


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def execution_from_records(records: list[dict], steps: int, compiled: bool) -> Execution:
    """The :class:`Execution` of ``steps`` runner steps (the first the compile step when ``compiled``).

    Steps without a record did not run (``not_run``).
    """
    results = [RunResult("not_run") for _ in range(steps)]
    for record in records:
        index = record.get("index")
        if record.get("kind") == "run" and isinstance(index, int) and 0 <= index < steps:
            results[index] = RunResult(
                status=_text(record.get("status")) or "exit",
                exit_code=record.get("exit_code") if isinstance(record.get("exit_code"), int) else None,
                signal=record.get("signal") if isinstance(record.get("signal"), int) else None,
                stdout=_text(record.get("stdout")),
                stderr=_text(record.get("stderr")),
                seconds=float(record.get("time") or 0.0),
                cpu_seconds=float(record.get("cpu") or 0.0),
            )
    if compiled:
        return Execution(results[1:], results[0])
    return Execution(results)


def _value(data: Any) -> Any:
    try:
        return decode_value(data, lambda ident, type_name: Opaque(type_name))
    except WireError:
        return Opaque("malformed")


def suite_from_records(records: list[dict], suite: Suite, missing: str) -> SuiteResult:
    """The :class:`SuiteResult` of a suite's records; tests and calls without a record failed for ``missing``."""
    load_error: str | None = missing
    tests = [TestOutcome(False, missing) for _ in range(suite.size if suite.calls is None else 0)]
    calls = [CallOutcome(False, error=missing) for _ in range(suite.size if suite.calls is not None else 0)]
    out = SuiteResult(None, tests, calls)
    for record in records:
        kind, index = record.get("kind"), record.get("index")
        if kind == "load":
            load_error = None if record.get("ok") else _text(record.get("error")) or "the program could not be loaded"
        elif kind == "setup":
            load_error = f"the test setup failed: {_text(record.get('error'))}"
        elif kind == "test" and isinstance(index, int) and 0 <= index < len(tests):
            tests[index] = TestOutcome(
                bool(record.get("passed")),
                _text(record.get("error")),
                record.get("left") if isinstance(record.get("left"), str) else None,
                record.get("right") if isinstance(record.get("right"), str) else None,
                bool(record.get("timeout")),
            )
        elif kind == "call" and isinstance(index, int) and 0 <= index < len(calls):
            ok = bool(record.get("ok"))
            calls[index] = CallOutcome(ok, _value(record.get("value")) if ok else None, _text(record.get("error")))
            calls[index].timeout = bool(record.get("timeout"))
        elif kind == "output":
            out.stdout, out.stderr = _text(record.get("stdout")), _text(record.get("stderr"))
    out.load_error = load_error
    if load_error is not None:
        for outcome in (*out.tests, *out.calls):
            if outcome.error == missing:
                outcome.error = load_error
    return out
