"""Start one sandbox, send it a job, read its records, and leave nothing behind.

:func:`run_runner` takes a sandbox (the runner started in bubblewrap, or as a
plain process in limits-only mode, with the compiled runner already written
to its standard input), writes the job, and reads its records (JSON lines) as
they come, under a wall-clock limit for the whole sandbox. ``stop(record)``
can end the sandbox early (the first failing test, when nothing after it
matters). Whatever happens, the sandbox is gone when it returns: killing
bubblewrap kills the sandbox's PID 1 (``--die-with-parent``), and with it every
process of its PID namespace; in limits-only mode the runner's session is
killed, and every process of the run's own uid.

Starting a sandbox (namespaces, mounts, an interpreter) takes about 12 ms, as
long as running a small program. With ``prestart`` the next sandbox for the
same settings is started as soon as one is taken (``prestart`` of them), so
it is ready, blocked on reading its job, when the next program comes: a spare has received nothing
but the runner's code, and each job still gets a sandbox of its own. Spares
die with this process (``--die-with-parent``, or the end of their input);
:func:`close_sandboxes` stops them sooner.

In namespaces mode the backend's default path is another: a waiting sandbox
that serves every job of a worker thread, each in new namespaces
(:mod:`~rewardsmith.sandbox.servers`); this one is its fallback, and the path
of ``reuse=False`` and of limits-only mode.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import functools
import itertools
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from rewardsmith.sandbox.code import compiled_runner
from rewardsmith.sandbox.inside.procs import Capture, pump
from rewardsmith.sandbox.inside.runner import boot_source
from rewardsmith.sandbox.inside.wire import WireError, dumps, loads
from rewardsmith.sandbox.isolation import SANDBOX_ENV, Isolation, StartFiles, bwrap_command
from rewardsmith.sandbox.limits import Limits, SandboxError

__all__ = [
    "Launch",
    "Request",
    "close_sandboxes",
    "collect",
    "kill_group",
    "on_close",
    "release_uid",
    "run_runner",
    "take_uid",
    "thread_token",
]

_UID_BASE = int(os.environ.get("REWARDSMITH_SANDBOX_UID_BASE", "1500000000"))
_UID_SLOTS = 128
_UIDS_HELD: set[int] = set()
_UIDS_LOCK = threading.Lock()
_F_SETPIPE_SZ = 1031
_SPARES: dict[tuple, list[_Sandbox]] = {}
_SPARES_LOCK = threading.Lock()
_THREAD = threading.local()
_TOKENS = itertools.count()
_CLOSERS: list[Callable[[], None]] = []


@dataclass
class Launch:
    """What one sandbox gave: its records, how it ended (``done``, ``timeout``, ``stopped``, ``crashed``,
    ``output_limit``), the end of its own ``stderr`` and its wall time."""

    records: list[dict] = field(default_factory=list)
    ending: str = "crashed"
    stderr: str = ""
    seconds: float = 0.0


def take_uid() -> int:
    """A uid for one sandbox (as root) that no other sandbox of this process holds: its processes can then be
    found, killed and capped, and no per-uid budget of the kernel (inotify instances, pending signals, ...) is
    shared with a sandbox running beside it. Give it back with :func:`release_uid` once the sandbox is gone.

    Each process has its own ``_UID_SLOTS`` uids (from its pid, up to 2**22), all below 2**31.
    """
    first = _UID_BASE + ((os.getpid() & 0x3FFFFF) * _UID_SLOTS)
    with _UIDS_LOCK:
        for uid in range(first, first + _UID_SLOTS):
            if uid not in _UIDS_HELD:
                _UIDS_HELD.add(uid)
                return uid
    raise SandboxError(f"more than {_UID_SLOTS} sandboxes at once in one process: use fewer threads per process")


def release_uid(uid: int | None) -> None:
    """Give back a uid from :func:`take_uid` (its sandbox and every process of it are gone)."""
    with _UIDS_LOCK:
        _UIDS_HELD.discard(uid)


class _Lines:
    """Splits the runner's ``stdout`` into records as the bytes arrive."""

    def __init__(self, launch: Launch, stop: Callable[[dict], bool] | None, fd: int) -> None:
        self.launch, self.stop, self.fd, self.pending = launch, stop, fd, b""

    def __call__(self, fd: int, chunk: bytes) -> bool:
        if fd != self.fd:  # the runner's own stderr
            return False
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


@functools.lru_cache(maxsize=4)
def _find_setpriv(path: str | None) -> str | None:
    return shutil.which("setpriv", path=path)


def as_user(uid: int | None, command: list[str]) -> tuple[list[str], dict]:
    """``command`` run as ``uid`` (``None``: as this process), and the ``Popen`` options that need.

    Through ``setpriv`` when it is there: ``Popen(user=...)`` cannot use ``vfork``, and copying the page
    tables of a large process (a trainer with PyTorch loaded) costs tens of milliseconds per program.
    """
    if uid is None:
        return command, {}
    setpriv = _find_setpriv(os.environ.get("PATH"))
    if setpriv is None:
        return command, {"user": uid, "group": uid, "extra_groups": []}
    return [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--", *command], {}


def _kill_uid(python: str, uid: int) -> None:
    """Kill every process of ``uid`` (a run's own uid), from a process of that uid."""
    command, options = as_user(uid, [python, "-I", "-S", "-c", "import os\ntry: os.kill(-1, 9)\nexcept OSError: pass"])
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(command, env={}, timeout=10, check=False, **options)


class _Sandbox:
    """One started runner, waiting for its job (the compiled runner written to its input as far as it fits)."""

    def __init__(self, iso: Isolation, limits: Limits, role: str, binds: tuple[str, ...]) -> None:
        blob = compiled_runner(iso.python, role)
        as_other_uid = iso.uid is not None if iso.isolated else os.geteuid() == 0
        self.iso, self.workdir, self.uid = iso, None, take_uid() if as_other_uid else None
        self.spare = False
        options: dict = {"env": {}}
        start = None
        if iso.isolated:
            start = StartFiles()
            command = bwrap_command(iso, limits, role, len(blob), binds, start=start)
            options["pass_fds"] = start.fds
            self.cwd = "/work"
        else:
            self.workdir = self.cwd = tempfile.mkdtemp(prefix="rewardsmith-sandbox-")
            if self.uid is not None:
                os.chown(self.workdir, self.uid, self.uid)
            command = [iso.python, "-I", "-S", "-c", boot_source(len(blob)), role]
            options = {"env": {**SANDBOX_ENV, "HOME": self.workdir, "TMPDIR": self.workdir}, "cwd": self.workdir}
        command, switch = as_user(self.uid, command)
        options.update(switch)
        try:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                **options,
            )
        except OSError:
            self.discard_workdir()
            release_uid(self.uid)
            raise
        finally:
            if start is not None:
                start.close()
        self.feed = os.dup(self.process.stdin.fileno())  # pump writes and closes this copy: the runner sees the end
        self.process.stdin.close()
        self.pending = blob
        with contextlib.suppress(OSError):
            fcntl.fcntl(self.feed, _F_SETPIPE_SZ, 1 << 20)
            os.set_blocking(self.feed, False)
            self.pending = blob[os.write(self.feed, blob) :]

    def job(self, job: dict) -> dict:
        """The job with this sandbox's working directory (and uid) in it."""
        if self.iso.isolated:
            return {"cwd": self.cwd, **job}
        return {**job, "cwd": self.cwd, "own_uid": self.uid is not None}

    def discard_workdir(self) -> None:
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def close(self) -> None:
        """Kill the sandbox and everything in it, and remove its files."""
        kill_group(self.process)
        if self.uid is not None and not self.iso.isolated:
            _kill_uid(self.iso.python, self.uid)
        release_uid(self.uid)
        if self.feed is not None:
            with contextlib.suppress(OSError):
                os.close(self.feed)
        for stream in (self.process.stdout, self.process.stderr):
            stream.close()
        self.discard_workdir()


def kill_group(process: subprocess.Popen) -> None:
    """Kill a sandbox's process (bubblewrap, or the runner) and its session's group, and reap it."""
    with contextlib.suppress(OSError):
        os.killpg(process.pid, 9)
    with contextlib.suppress(OSError):
        process.kill()
    process.wait()


def thread_token() -> int:
    """A number for this thread that no other thread gets (thread idents are reused once a thread ends)."""
    token = getattr(_THREAD, "token", None)
    if token is None:
        token = _THREAD.token = next(_TOKENS)
    return token


def _take(iso: Isolation, limits: Limits, role: str, binds: tuple[str, ...], prestart: int) -> _Sandbox:
    """A started sandbox for these settings (the oldest spare when there is one), then ``prestart`` spares ready.

    Spares are kept per thread: a sandbox dies with the thread that started it (``--die-with-parent`` and the
    runner's parent-death signal are a thread's, in Linux), so only a spare of this thread is sure to live.
    """
    key = (thread_token(), iso, role, limits.disk_mb, binds)
    with _SPARES_LOCK:
        gone = []
        for queue in _SPARES.values():  # spares of threads that ended die with them
            gone += [spare for spare in queue if spare.process.poll() is not None]
            queue[:] = [spare for spare in queue if spare not in gone]
        queue = _SPARES.setdefault(key, [])
        sandbox = queue.pop(0) if queue else None
    if sandbox is not None:
        sandbox.spare = True
    for spare in gone:
        spare.close()
    if sandbox is None:
        sandbox = _Sandbox(iso, limits, role, binds)
    for _ in range(int(prestart) - len(queue)):
        spare = _Sandbox(iso, limits, role, binds)
        with _SPARES_LOCK:
            queue.append(spare)
    return sandbox


def on_close(closer: Callable[[], None]) -> None:
    """Have :func:`close_sandboxes` call ``closer`` too (another pool of waiting sandboxes)."""
    _CLOSERS.append(closer)


def close_sandboxes() -> None:
    """Stop the sandboxes that wait for work: spares started ahead, servers of jobs (they also stop when this
    process ends)."""
    with _SPARES_LOCK:
        spares = [spare for queue in _SPARES.values() for spare in queue]
        _SPARES.clear()
    for spare in spares:
        spare.close()
    for closer in _CLOSERS:
        closer()


def _forget_spares() -> None:
    """In a forked child: the spares (and their uids) are the parent's, to use and to stop."""
    global _SPARES_LOCK, _UIDS_LOCK
    _SPARES_LOCK, _UIDS_LOCK = threading.Lock(), threading.Lock()
    _SPARES.clear()
    _UIDS_HELD.clear()


atexit.register(close_sandboxes)
os.register_at_fork(after_in_child=_forget_spares)


@dataclass(frozen=True)
class Request:
    """What a sandbox runs, and how: the runner's ``role`` (``run`` or ``suite``) and ``job``; ``wall``, the
    seconds the whole sandbox may take (default: the limits' timeout and 5); ``binds``, more host folders shown
    read-only; ``stop(record)``, which may end it early (the first failing test, when nothing after it matters);
    ``output_limit``, the most bytes of records read."""

    role: str
    job: dict
    wall: float | None = None
    binds: tuple[str, ...] = ()
    stop: Callable[[dict], bool] | None = None
    output_limit: int | None = None

    def deadline(self, started: float, limits: Limits) -> float:
        """When the sandbox started at ``started`` (``time.monotonic``) must be done."""
        return started + (self.wall if self.wall is not None else limits.timeout + 5)


def collect(
    launch: Launch, streams: tuple[int, int], feed: tuple[int, bytes], request: Request, deadline: float
) -> str:
    """Write a runner's job (``feed``: fd and bytes), read its records and stderr (``streams``) into ``launch``
    until both close or it is time to stop; why it stopped (:func:`~rewardsmith.sandbox.inside.procs.pump`)."""
    records, stderr = streams
    out = Capture(request.output_limit or (1 << 26), tail=0, keep=False)  # the records are read as they come
    err = Capture(1 << 16)
    try:
        reason = pump({records: out, stderr: err}, feed, None, deadline, _Lines(launch, request.stop, records))
    finally:
        launch.stderr = err.text(tail=True)
    if launch.ending != "done":
        launch.ending = {"timeout": "timeout", "stopped": "stopped", "limit": "output_limit"}.get(reason, "crashed")
    return reason


def run_runner(iso: Isolation, limits: Limits, request: Request, prestart: int = 0) -> Launch:
    """Run ``request`` in a fresh sandbox (see the module docs), with ``prestart`` spares started for the next."""
    launch = Launch()
    started = time.monotonic()
    try:
        sandbox = _take(iso, limits, request.role, request.binds, prestart)
    except OSError as exc:
        launch.stderr = f"{type(exc).__name__}: {exc}"
        return launch
    process = sandbox.process
    try:
        feed, sandbox.feed = sandbox.feed, None
        data = sandbox.pending + dumps(sandbox.job(request.job)).encode()
        streams = (process.stdout.fileno(), process.stderr.fileno())
        collect(launch, streams, (feed, data), request, request.deadline(started, limits))
    finally:
        sandbox.close()
    launch.seconds = time.monotonic() - started
    if sandbox.spare and launch.ending == "crashed" and not launch.records:  # a spare that died waiting
        return run_runner(iso, limits, request)
    return launch
