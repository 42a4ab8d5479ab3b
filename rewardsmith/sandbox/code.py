"""The sandbox runner's code: the modules of :mod:`rewardsmith.sandbox.inside` as one program, compiled once.

The modules are joined in dependency order (their imports of each other
dropped: in one file they share a namespace), then compiled by the Python
that will run them in the sandbox (its own bytecode format) and marshalled.
Each sandbox receives those bytes on its standard input; its bootstrap
(:func:`~rewardsmith.sandbox.inside.runner.boot_source`) only unmarshals
them, which takes a fraction of a millisecond where compiling the source
would take about 10 ms, as long as a Python program's whole start.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import threading
from pathlib import Path

from rewardsmith.sandbox.limits import SandboxError

__all__ = ["compiled_runner", "runner_source"]

_INSIDE = Path(__file__).resolve().parent / "inside"
_ORDER = ("wire", "procs", "forkserver", "worker", "judge", "suite", "runner")
#: The modules a sandbox of each role needs: running programs needs no test judge (its code is 60%
#: as large, and unmarshalled at every start).
_ROLES = {"run": ("wire", "procs", "forkserver", "runner"), "suite": _ORDER}
_LOCK = threading.Lock()
_COMPILED: dict[tuple[str, float, int, str], bytes] = {}

_COMPILE = (
    "import marshal,sys\n"
    "source=sys.stdin.buffer.read().decode('utf-8')\n"
    "sys.stdout.buffer.write(marshal.dumps(compile(source,'<rewardsmith sandbox runner>','exec')))\n"
)


def _without_local_imports(text: str) -> list[str]:
    lines, skipping = [], False
    for line in text.splitlines():
        if skipping:
            skipping = not line.rstrip().endswith(")")
            continue
        if line.startswith("from __future__ import"):
            continue
        if line.startswith("from rewardsmith."):
            skipping = line.rstrip().endswith("(")
            continue
        lines.append(line)
    return lines


@functools.cache
def runner_source(role: str = "suite") -> str:
    """The runner as one Python program (what a sandbox of ``role`` runs: ``suite``, everything; ``run``,
    the runner without the Python test judge).

    >>> source = runner_source()
    >>> source.startswith("from __future__ import annotations") and "def worker_main" in source
    True
    >>> compile(source, "runner", "exec") is not None
    True
    >>> small = runner_source("run")
    >>> "def run_step" in small and "def worker_main" not in small and len(small) < 0.65 * len(source)
    True
    """
    parts = ["from __future__ import annotations"]
    for name in _ROLES[role]:
        parts += _without_local_imports((_INSIDE / f"{name}.py").read_text(encoding="utf-8"))
    source = "\n".join(parts) + "\n"
    if re.search(r"^\s*(from|import) rewardsmith", source, re.MULTILINE):
        raise SandboxError("the sandbox runner's modules may import each other only at their top level")
    return source


def compiled_runner(python: str, role: str = "suite") -> bytes:
    """The runner for ``role`` compiled by ``python`` and marshalled (computed once per interpreter, role and
    process)."""
    try:
        stat = os.stat(python)
    except OSError as exc:
        raise SandboxError(f"the sandbox's Python {python!r} cannot be used: {exc}") from exc
    key = (python, stat.st_mtime, stat.st_size, role)
    with _LOCK:
        if key not in _COMPILED:
            result = subprocess.run(
                [python, "-I", "-S", "-c", _COMPILE],
                input=runner_source(role).encode("utf-8"),
                capture_output=True,
                env={},
                timeout=60,
                check=False,
            )
            if result.returncode != 0 or not result.stdout:
                tail = result.stderr.decode("utf-8", "replace")[-500:]
                raise SandboxError(f"{python} cannot compile the sandbox runner (it needs Python 3.9 or later): {tail}")
            _COMPILED[key] = result.stdout
        return _COMPILED[key]
