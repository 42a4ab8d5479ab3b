"""``rewardsmith sandbox doctor``: which isolation works here, why, and what a program can reach, checked live.

:func:`diagnose` probes the isolation (:func:`~rewardsmith.sandbox.probe.detect`),
then runs small programs in the sandbox: one per language (is its toolchain
there, does it run), and probes of what a program can reach: the network
interfaces it sees, the environment variables it gets (a marker set in this
process must not reach it), a file written outside its working directory,
the processes it sees, and the memory limit.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field

from rewardsmith.sandbox.isolation import Isolation
from rewardsmith.sandbox.languages import LANGUAGES
from rewardsmith.sandbox.limits import Limits, SandboxError
from rewardsmith.sandbox.local import LocalBackend
from rewardsmith.sandbox.results import Program
from rewardsmith.sandbox.servers import serves

__all__ = ["Check", "Diagnosis", "diagnose"]

_MARKER = "REWARDSMITH_DOCTOR_SECRET"
_HELLO = {
    "python": "import sys\nprint('hello', sys.version.split()[0])",
    "cpp": '#include <cstdio>\nint main() { std::printf("hello g++ %d\\n", __GNUC__); }',
    "javascript": "console.log('hello node', process.version)",
}
_PROBE = r"""
import os, socket, sys
target = sys.stdin.read().strip()
print("interfaces", ",".join(sorted(name for _, name in socket.if_nameindex())))
print("environment", ",".join(sorted(os.environ)))
try:
    with open(target, "w") as f:
        f.write("x")
    print("outside-write", "written")
except OSError as exc:
    print("outside-write", type(exc).__name__)
print("processes", len([p for p in os.listdir("/proc") if p.isdigit()]) if os.path.isdir("/proc") else 0)
try:
    block = bytearray(4 << 30)
    print("memory", "allocated 4 GB")
except MemoryError:
    print("memory", "refused 4 GB")
"""


@dataclass
class Check:
    """One line of the diagnosis: what was checked, whether it is as it should be, and what was seen."""

    name: str
    ok: bool
    detail: str


@dataclass
class Diagnosis:
    """The isolation in use and the checks run in it."""

    isolation: Isolation | None
    error: str | None = None
    checks: list[Check] = field(default_factory=list)

    @property
    def runs(self) -> bool:
        """Whether programs can run here at all (in whichever mode)."""
        return self.isolation is not None and self.error is None


def _languages(backend: LocalBackend) -> list[Check]:
    checks = []
    for name in LANGUAGES:
        try:
            run = backend.run(Program(_HELLO[name], name), [""], Limits(timeout=20), compile_timeout=60)
        except SandboxError as exc:
            checks.append(Check(f"language {name}", False, str(exc)))
            continue
        outcome = run.runs[0] if run.compiled else run.compile
        detail = outcome.stdout.strip() if outcome is not None and outcome.ok else f"failed: {outcome.stderr[-200:]}"
        checks.append(Check(f"language {name}", bool(outcome and outcome.ok), detail))
    return checks


def _reach(backend: LocalBackend, iso: Isolation) -> list[Check]:
    os.environ[_MARKER] = "this must not reach the program"
    try:
        with tempfile.TemporaryDirectory(prefix="rewardsmith-doctor-") as folder:
            os.chmod(folder, 0o777)
            target = os.path.join(folder, "written-by-the-program")
            run = backend.run(Program(_PROBE), [target], Limits(timeout=20, memory_mb=1024)).runs[0]
            written = os.path.exists(target)
    finally:
        os.environ.pop(_MARKER, None)
    seen = dict(line.split(" ", 1) for line in run.stdout.splitlines() if " " in line)
    interfaces = seen.get("interfaces", "?")
    return [
        Check("network", interfaces in ("lo", ""), f"interfaces seen: {interfaces}"),
        Check("environment", _MARKER not in seen.get("environment", _MARKER), f"variables: {seen.get('environment')}"),
        Check("files outside /work", not written, f"writing to {target}: {seen.get('outside-write', '?')}"),
        Check("other processes", iso.isolated, f"{seen.get('processes', '?')} processes visible in /proc"),
        Check("memory limit", seen.get("memory") == "refused 4 GB", seen.get("memory", run.describe())),
    ]


def diagnose(isolation: str = "auto", bwrap: str | None = None, python: str | None = None) -> Diagnosis:
    """Probe the sandbox here and run the checks (see the module docs)."""
    backend = LocalBackend(isolation=isolation, bwrap=bwrap, python=python, prestart=False)
    try:
        iso = backend.isolation_info()
    except SandboxError as exc:
        return Diagnosis(None, str(exc))
    diagnosis = Diagnosis(iso)
    try:
        diagnosis.checks = _languages(backend) + _reach(backend, iso) + [_serving(iso)]
    except SandboxError as exc:
        diagnosis.error = str(exc)
    return diagnosis


def _serving(iso: Isolation) -> Check:
    """How each program got its sandbox in the runs above."""
    if not iso.isolated:
        return Check("sandbox per program", True, "limits only: a process started for each program")
    if serves(iso):
        return Check("sandbox per program", True, "new namespaces for each, forked by a waiting sandbox (reuse)")
    detail = "a bubblewrap sandbox started for each: the waiting sandbox could not be used here (slower)"
    return Check("sandbox per program", False, detail)
