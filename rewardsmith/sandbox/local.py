"""The local backend: programs run on this machine, in fresh namespaces each under bubblewrap (or with limits only).

Every call runs one job (files, then the program on each input) in a sandbox
of its own: by default (``reuse``) a runner forked by this worker thread's
waiting bubblewrap sandbox into new mount, IPC, network and PID namespaces
(:mod:`~rewardsmith.sandbox.servers`), else a bubblewrap sandbox started for
the call (:func:`~rewardsmith.sandbox.launch.run_runner`). Either way the
runner compiles the program once, runs it on each input, and is gone with
everything it started: nothing a program writes or leaves running reaches
the next one. Which isolation is used is decided once per process
(:func:`~rewardsmith.sandbox.probe.detect`): ``isolation="auto"`` (bubblewrap
if it works here, else limits only, with a warning), ``"require"``
(bubblewrap or refuse), ``"limits"``.

>>> from rewardsmith.sandbox import LocalBackend, Limits, Program
>>> backend = LocalBackend()
>>> run = backend.run(Program("print(sum(map(int, input().split())))"), ["1 2", "3 4"], Limits(timeout=5))
>>> [r.stdout for r in run.runs], [r.status for r in run.runs]
(['3\\n', '7\\n'], ['ok', 'ok'])
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.pool import engine_workers
from rewardsmith.core.processes import usable_cpus
from rewardsmith.sandbox.backend import Backend, Stop
from rewardsmith.sandbox.isolation import Isolation
from rewardsmith.sandbox.jobs import program_steps, suite_job
from rewardsmith.sandbox.languages import language, resolve_tool
from rewardsmith.sandbox.launch import Launch, Request, run_runner
from rewardsmith.sandbox.limits import Limits, SandboxError
from rewardsmith.sandbox.probe import detect
from rewardsmith.sandbox.results import (
    Execution,
    Program,
    Suite,
    SuiteResult,
    execution_from_records,
    suite_from_records,
)
from rewardsmith.sandbox.servers import run_served

__all__ = ["LocalBackend", "choose_prestart"]

_SLACK = 10.0  # seconds of wall clock for the sandbox itself, beyond its programs' own limits
_AUTO_PRESTART = 2  # spares per worker when a core is left idle: one ready, one starting


def choose_prestart(setting: int | str, workers: int, cpus: int) -> int:
    """How many sandboxes a worker starts ahead: ``setting`` when it is a number, else the rule for ``"auto"``.

    ``"auto"``: 2 when the reward's ``workers`` leave a CPU idle (fewer workers than
    CPUs this process may use), so that a sandbox starts there while a program runs;
    0 when the workers fill the CPUs, where starting ahead only takes CPU from
    another worker's program.

    >>> choose_prestart("auto", workers=1, cpus=2), choose_prestart("auto", workers=2, cpus=2)
    (2, 0)
    >>> choose_prestart(False, workers=1, cpus=2), choose_prestart(3, workers=8, cpus=2)
    (0, 3)
    """
    if setting == "auto":
        return _AUTO_PRESTART if workers < cpus else 0
    return int(setting)


def _tasks_of(uid: int) -> int:
    """How many processes and threads ``uid`` has now (what ``RLIMIT_NPROC`` counts)."""
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    count += len(os.listdir(f"/proc/{name}/task"))
            except OSError:
                continue
    return count


def _failed(launch: Launch) -> None:
    """Raise :class:`SandboxError` when the sandbox itself failed (not the program)."""
    errors = [r.get("message") for r in launch.records if r.get("kind") == "error"]
    if errors:
        raise SandboxError(f"the sandbox's runner failed: {errors[0]}")
    if launch.ending in ("crashed", "output_limit"):
        detail = launch.stderr.strip()[-500:] or "no message"
        raise SandboxError(f"the sandbox ended without finishing its job ({launch.ending}): {detail}")


@dataclass(frozen=True)
class LocalBackend(Backend):
    """Programs run here (see the module docs).

    Settings: ``isolation`` (``auto``, ``require``, ``limits``); ``bwrap`` (the
    bubblewrap executable; default ``$REWARDSMITH_BWRAP`` or ``bwrap`` on
    ``PATH``); ``python`` (the interpreter the sandbox uses; default this one,
    else the system's); ``tools`` (commands per language, e.g.
    ``{"cpp": "clang++"}``); ``binds`` (more host folders to show read-only);
    ``reuse`` (default ``True``: one waiting sandbox per worker thread serves its
    programs, each forked into new namespaces; ``False``: a bubblewrap sandbox
    started per program); ``prestart`` (with ``reuse`` off: how many sandboxes to
    start ahead, while programs run, so that one is ready when the next program
    comes; ``0`` or ``False``: none; ``"auto"``, the default: 2 when the reward
    engine's workers leave a CPU idle, else none, see :func:`choose_prestart`).
    """

    isolation: str = "auto"
    bwrap: str | None = None
    python: str | None = None
    tools: Mapping[str, str] = field(default_factory=dict)
    binds: tuple[str, ...] = ()
    prestart: int | str = "auto"
    reuse: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.reuse, bool):
            raise RewardConfigError(f"sandbox setting reuse must be true or false, got {self.reuse!r}")
        ok = self.prestart == "auto" or (isinstance(self.prestart, int) and self.prestart >= 0)
        if not ok:
            raise RewardConfigError(
                f"sandbox setting prestart must be 'auto', a number >= 0 or a bool, got {self.prestart!r}"
            )

    def spares(self) -> int:
        """How many sandboxes to start ahead here (``prestart``, with ``"auto"`` decided for this process).

        >>> LocalBackend(prestart=0).spares()
        0
        """
        return choose_prestart(self.prestart, engine_workers(), usable_cpus())

    def isolation_info(self) -> Isolation:
        """How programs run here (probed once per process)."""
        return detect(self.isolation, self.bwrap, self.python)

    def describe(self) -> str:
        iso = self.isolation_info()
        return f"local, {iso.mode}: {iso.reason}"

    def _launch(self, iso: Isolation, limits: Limits, request: Request) -> Launch:
        """Run ``request`` on this thread's waiting server when ``reuse`` is on and it can be used here, else in a
        sandbox started for it."""
        if self.reuse:
            launch = run_served(iso, limits, request)
            if launch is not None:
                return launch
        return run_runner(iso, limits, request, prestart=self.spares())

    def _extra_processes(self, iso: Isolation) -> int:
        if iso.isolated or os.geteuid() == 0:
            return 0
        return _tasks_of(os.getuid())  # limits only, as this user: the limit counts all of its processes

    def run(
        self,
        program: Program,
        inputs: Sequence[str],
        limits: Limits,
        *,
        compile_timeout: float = 60.0,
        stop: Stop | None = None,
    ) -> Execution:
        lang = language(program.language)
        tool = resolve_tool(lang, self.tools)
        iso = self.isolation_info()
        steps = program_steps(lang, tool, inputs, limits, compile_timeout, self._extra_processes(iso))
        compiled = lang.compile is not None
        job = {"files": {**program.files, lang.filename: program.source}, "steps": steps}
        wall = (compile_timeout if compiled else 0) + len(inputs) * (limits.timeout + 1) + _SLACK
        offset = 1 if compiled else 0

        def on_record(record: dict) -> bool:
            index = record.get("index")
            if stop is None or record.get("kind") != "run" or not isinstance(index, int) or index < offset:
                return False
            return stop(index - offset, execution_from_records([{**record, "index": 0}], 1, False).runs[0])

        request = Request(
            "run",
            job,
            wall=wall,
            binds=(*self.binds, *(tool.folders if tool else ())),
            stop=on_record,
            output_limit=len(steps) * (7 * limits.output_bytes + 65536) + (1 << 20),  # JSON escapes: 6 bytes a byte
        )
        launch = self._launch(iso, limits, request)
        _failed(launch)
        execution = execution_from_records(launch.records, len(steps), compiled)
        if launch.ending == "timeout":  # the sandbox's own clock ran out: the runs it did not finish timed out
            for run in execution.runs:
                if run.status == "not_run" and execution.compiled:
                    run.status, run.seconds = "timeout", limits.timeout
        return execution

    def run_suite(
        self, program: Program, suite: Suite, limits: Limits, *, load_timeout: float = 10.0, budget: float = 60.0
    ) -> SuiteResult:
        iso = self.isolation_info()
        job = {
            "files": dict(program.files),
            "suite": suite_job(program, suite, limits, load_timeout, budget, self._extra_processes(iso)),
        }
        request = Request(
            "suite",
            job,
            wall=load_timeout + budget + _SLACK,
            binds=self.binds,
            output_limit=suite.size * 8192 + 4 * limits.output_bytes + (1 << 20),
        )
        launch = self._launch(iso, limits, request)
        _failed(launch)
        missing = {
            "done": "not run: the suite stopped at the first failure",
            "timeout": "not run: the sandbox's time limit was reached",
        }.get(launch.ending, "not run")
        return suite_from_records(launch.records, suite, missing)
