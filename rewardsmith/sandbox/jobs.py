"""Jobs for the sandbox's runner: the steps that run a program on its inputs, and a suite of Python tests.

Shared by the local backend (which sends them to its runner) and remote
backends that run the runner's code themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rewardsmith.sandbox.inside.wire import encode_value
from rewardsmith.sandbox.languages import Language, Toolchain
from rewardsmith.sandbox.limits import Limits
from rewardsmith.sandbox.results import Program, Suite

__all__ = ["COMPILE_MEMORY_MB", "SOLUTION_FILE", "program_steps", "suite_job"]

#: Compilers get at least this much address space, whatever the program's limit.
COMPILE_MEMORY_MB = 2048
#: The file name of the program in a suite (what tracebacks show).
SOLUTION_FILE = "solution.py"
#: Processes the runner and the test judge's worker count against the process limit.
_OWN_PROCESSES = 4


def _argv(template: Sequence[str], tool: Toolchain | None) -> list[str]:
    return [tool.path if part == "{tool}" and tool is not None else part for part in template]


def program_steps(
    lang: Language,
    tool: Toolchain | None,
    inputs: Sequence[str],
    limits: Limits,
    compile_timeout: float,
    extra_processes: int = 0,
) -> list[dict[str, Any]]:
    """The runner's steps: compile (when the language needs it, required), then one run per input."""
    processes = limits.processes + _OWN_PROCESSES + extra_processes
    steps: list[dict[str, Any]] = []
    if lang.compile is not None:
        compiling = limits.replace(
            timeout=compile_timeout, cpu_seconds=None, memory_mb=max(limits.memory_mb, COMPILE_MEMORY_MB)
        )
        steps.append(
            {
                "kind": "exec",
                "argv": _argv(lang.compile, tool),
                "timeout": compile_timeout,
                "limits": compiling.as_runner(processes),
                "output_limit": 1 << 16,
                "required": True,
            }
        )
    run_limits = limits.as_runner(processes)
    for text in inputs:
        step: dict[str, Any] = {"kind": "python", "path": lang.filename} if lang.name == "python" else {}
        if not step:
            step = {"kind": "exec", "argv": _argv(lang.run, tool)}
        step.update(stdin=text, timeout=limits.timeout, limits=run_limits, output_limit=limits.output_bytes)
        steps.append(step)
    return steps


def suite_job(
    program: Program, suite: Suite, limits: Limits, load_timeout: float, budget: float, extra_processes: int = 0
) -> dict[str, Any]:
    """The runner's ``suite`` (see :mod:`rewardsmith.sandbox.inside.suite`)."""
    worker = limits.replace(cpu_seconds=load_timeout + budget + 1)
    job: dict[str, Any] = {
        "program": {"source": program.source, "filename": SOLUTION_FILE},
        "bind": dict(suite.bind),
        "setup": suite.setup,
        "test_timeout": limits.timeout,
        "load_timeout": load_timeout,
        "budget": budget,
        "stop_on_failure": suite.stop_on_failure,
        "limits": worker.as_runner(limits.processes + _OWN_PROCESSES + extra_processes),
        "output_limit": limits.output_bytes,
    }
    if suite.calls is not None:
        job["calls"] = {"name": suite.call_name, "inputs": [encode_value(list(args)) for args in suite.calls]}
    else:
        job["tests"] = [
            {"code": step.code, "left": step.left, "right": step.right, "test": step.test} for step in suite.tests
        ]
    return job
