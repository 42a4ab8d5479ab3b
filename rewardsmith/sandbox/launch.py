"""Start one sandbox, send it a job, read its records, and leave nothing behind.

:func:`run_runner` starts the runner (in bubblewrap, or as a plain process
in limits-only mode), writes the compiled runner and the job to its standard
input, and reads its records (JSON lines) as they come, under a wall-clock
limit for the whole sandbox. ``stop(record)`` can end the sandbox early (the
first failing test, when nothing after it matters). Whatever happens, the
sandbox is gone when it returns: killing bubblewrap kills the sandbox's PID 1
(``--die-with-parent``), and with it every process of its PID namespace; in
limits-only mode the runner's session is killed, and every process of the
run's own uid.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from rewardsmith.sandbox.code import compiled_runner
from rewardsmith.sandbox.inside.procs import Capture, pump
from rewardsmith.sandbox.inside.runner import boot_source
from rewardsmith.sandbox.inside.wire import WireError, dumps, loads
from rewardsmith.sandbox.isolation import SANDBOX_ENV, Isolation, bwrap_command
from rewardsmith.sandbox.limits import Limits

__all__ = ["Launch", "run_runner"]

_UID_BASE = int(os.environ.get("REWARDSMITH_SANDBOX_UID_BASE", "1500000000"))
_COUNTER = itertools.count()


@dataclass
class Launch:
    """What one sandbox gave: its records, how it ended (``done``, ``timeout``, ``stopped``, ``crashed``,
    ``output_limit``), the end of its own ``stderr`` and its wall time."""

    records: list[dict] = field(default_factory=list)
    ending: str = "crashed"
    stderr: str = ""
    seconds: float = 0.0


def _run_uid() -> int:
    """A uid for one limits-only run (as root): its processes can then be found and killed, and capped."""
    return _UID_BASE + (((os.getpid() & 0xFFFFF) << 8) | (next(_COUNTER) & 0xFF))


class _Lines:
    """Splits the runner's ``stdout`` into records as the bytes arrive."""

    def __init__(self, launch: Launch, stop: Callable[[dict], bool] | None) -> None:
        self.launch, self.stop, self.pending = launch, stop, b""

    def __call__(self, fd: int, chunk: bytes) -> bool:
        self.pending += chunk
        *lines, self.pending = self.pending.split(b"\n")
        for line in lines:
            try:
                record = loads(line.decode("utf-8", "replace"))
            except WireError:
                continue
            if type(record) is not dict:
                continue
            self.launch.records.append(record)
            if record.get("kind") == "done":
                self.launch.ending = "done"
            elif self.stop is not None and self.stop(record):
                return True
        return False


def _kill_uid(python: str, uid: int) -> None:
    """Kill every process of ``uid`` (a run's own uid), from a process of that uid."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            [python, "-I", "-S", "-c", "import os\ntry: os.kill(-1, 9)\nexcept OSError: pass"],
            env={},
            timeout=10,
            check=False,
            user=uid,
            group=uid,
            extra_groups=[],
        )


def run_runner(
    iso: Isolation,
    limits: Limits,
    role: str,
    job: dict,
    *,
    wall: float | None = None,
    binds: tuple[str, ...] = (),
    stop: Callable[[dict], bool] | None = None,
    output_limit: int | None = None,
) -> Launch:
    """Run ``job`` in a fresh sandbox (see the module docs); ``wall`` bounds the whole sandbox in seconds."""
    blob = compiled_runner(iso.python)
    workdir = None
    uid = iso.uid
    options: dict = {"env": {}}
    if iso.isolated:
        command = bwrap_command(iso, limits, role, len(blob), binds)
        job = {"cwd": "/work", **job}
    else:
        workdir = tempfile.mkdtemp(prefix="rewardsmith-sandbox-")
        uid = _run_uid() if os.geteuid() == 0 else None
        if uid is not None:
            os.chown(workdir, uid, uid)
        command = [iso.python, "-I", "-S", "-c", boot_source(len(blob)), role]
        options = {"env": {**SANDBOX_ENV, "HOME": workdir, "TMPDIR": workdir}, "cwd": workdir}
        job = {**job, "cwd": workdir, "own_uid": uid is not None}
    if uid is not None:
        options.update(user=uid, group=uid, extra_groups=[])
    launch = Launch()
    started = time.monotonic()
    deadline = started + (wall if wall is not None else limits.timeout + 5)
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            **options,
        )
    except OSError as exc:
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
        launch.stderr = f"{type(exc).__name__}: {exc}"
        return launch
    try:
        out = Capture(output_limit or (1 << 26))
        err = Capture(1 << 16)
        sinks = {process.stdout.fileno(): out, process.stderr.fileno(): err}
        feed = os.dup(process.stdin.fileno())  # pump writes and closes this copy: the runner then sees the end
        process.stdin.close()
        reason = pump(sinks, (feed, blob + dumps(job).encode()), None, deadline, _Lines(launch, stop))
        if launch.ending != "done":
            launch.ending = {"timeout": "timeout", "stopped": "stopped", "limit": "output_limit"}.get(reason, "crashed")
    finally:
        with contextlib.suppress(OSError):
            os.killpg(process.pid, 9)
        with contextlib.suppress(OSError):
            process.kill()
        process.wait()
        if uid is not None and not iso.isolated:
            _kill_uid(iso.python, uid)
        for stream in (process.stdout, process.stderr):
            stream.close()
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
    launch.stderr = err.text(tail=True)
    launch.seconds = time.monotonic() - started
    return launch
