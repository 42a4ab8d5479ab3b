"""Running untrusted programs: a bubblewrap sandbox with resource limits, or a remote executor.

Usable on its own::

    from rewardsmith.sandbox import Limits, LocalBackend, Program

    backend = LocalBackend()                      # bubblewrap, or limits only (with a warning)
    run = backend.run(Program("print(input()[::-1])"), ["abc"], Limits(timeout=5))
    run.runs[0].stdout                            # 'cba\\n'

* :class:`Program`: source code in ``python``, ``cpp`` or ``javascript``;
* :class:`Limits`: time, CPU, memory, file size, processes, open files, output;
* backends (:class:`Backend`): :class:`LocalBackend` (``isolation="auto"``,
  ``"require"`` or ``"limits"``), :class:`SandboxFusionBackend`, or any
  registered with :func:`register_backend`, by name with :func:`get_backend`;
* :meth:`Backend.run` runs a program on inputs; :meth:`Backend.run_suite` runs
  Python tests against it through a judge the program cannot reach (:class:`Suite`);
* :func:`detect` says which isolation works here (``rewardsmith sandbox doctor``).

The code that runs inside the sandbox is in :mod:`rewardsmith.sandbox.inside`.
See ``docs/code.md`` for the threat model: what is isolated, and what is not.
"""

from rewardsmith.sandbox.backend import Backend
from rewardsmith.sandbox.backends import backend_names, get_backend, register_backend
from rewardsmith.sandbox.isolation import ISOLATION_CHOICES, Isolation
from rewardsmith.sandbox.languages import LANGUAGES, language
from rewardsmith.sandbox.limits import Limits, SandboxError, SandboxUnavailableError, ToolchainMissingError
from rewardsmith.sandbox.local import LocalBackend
from rewardsmith.sandbox.probe import detect, forget_detection
from rewardsmith.sandbox.results import (
    CallOutcome,
    Execution,
    Opaque,
    Program,
    RunResult,
    Suite,
    SuiteResult,
    TestOutcome,
    TestStep,
)
from rewardsmith.sandbox.sandboxfusion import SandboxFusionBackend

__all__ = [
    "ISOLATION_CHOICES",
    "LANGUAGES",
    "Backend",
    "CallOutcome",
    "Execution",
    "Isolation",
    "Limits",
    "LocalBackend",
    "Opaque",
    "Program",
    "RunResult",
    "SandboxError",
    "SandboxFusionBackend",
    "SandboxUnavailableError",
    "Suite",
    "SuiteResult",
    "TestOutcome",
    "TestStep",
    "ToolchainMissingError",
    "backend_names",
    "detect",
    "forget_detection",
    "get_backend",
    "language",
    "register_backend",
]
