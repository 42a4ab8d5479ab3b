"""The backend interface: where programs run. Local (bubblewrap, or limits only) or a remote executor.

A backend has two methods:

* ``run(program, inputs, limits)``: compile the program once (compiled
  languages), run it on each input (its ``stdin``), and give an
  :class:`~rewardsmith.sandbox.results.Execution`; ``stop(index, result)``
  may end it early (at the first wrong answer);
* ``run_suite(program, suite, limits)``: run Python tests against the
  program with the judge (:mod:`rewardsmith.sandbox.inside.judge`), and give a
  :class:`~rewardsmith.sandbox.results.SuiteResult`.

An infrastructure failure (the sandbox could not start, the executor is
down) raises :class:`~rewardsmith.sandbox.limits.SandboxError`; whatever the
program does is a result. Backends are settings-only objects (picklable), so
a reward carrying one runs in worker processes.

The built-in backends are registered by name in :mod:`rewardsmith.sandbox.backends`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence

from rewardsmith.sandbox.limits import Limits
from rewardsmith.sandbox.results import Execution, Program, RunResult, Suite, SuiteResult

__all__ = ["Backend", "Stop"]

Stop = Callable[[int, RunResult], bool]


class Backend(ABC):
    """Where programs run (see the module docs)."""

    @abstractmethod
    def run(
        self,
        program: Program,
        inputs: Sequence[str],
        limits: Limits,
        *,
        compile_timeout: float = 60.0,
        stop: Stop | None = None,
    ) -> Execution:
        """Compile ``program`` (if its language needs it) and run it on each input, in order."""

    @abstractmethod
    def run_suite(
        self, program: Program, suite: Suite, limits: Limits, *, load_timeout: float = 10.0, budget: float = 60.0
    ) -> SuiteResult:
        """Run a suite of Python tests against ``program``: ``limits.timeout`` per test, ``budget`` for all."""

    def describe(self) -> str:
        """One line on where and how programs run."""
        return type(self).__name__
