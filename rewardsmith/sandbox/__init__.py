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

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

#: Where each name lives: modules are imported on first use, so that rewards importing this package (and the
#: reward engine's worker processes, which import every built-in reward) do not load the backends' machinery.
_HOMES = {
    "Backend": "backend",
    "backend_names": "backends",
    "get_backend": "backends",
    "register_backend": "backends",
    "ISOLATION_CHOICES": "isolation",
    "Isolation": "isolation",
    "LANGUAGES": "languages",
    "language": "languages",
    "Limits": "limits",
    "SandboxError": "limits",
    "SandboxUnavailableError": "limits",
    "ToolchainMissingError": "limits",
    "LocalBackend": "local",
    "detect": "probe",
    "forget_detection": "probe",
    "CallOutcome": "results",
    "Execution": "results",
    "Opaque": "results",
    "Program": "results",
    "RunResult": "results",
    "Suite": "results",
    "SuiteResult": "results",
    "TestOutcome": "results",
    "TestStep": "results",
    "SandboxFusionBackend": "sandboxfusion",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'rewardsmith.sandbox' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"rewardsmith.sandbox.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


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
