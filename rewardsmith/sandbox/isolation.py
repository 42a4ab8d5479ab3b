"""The two isolation modes, and the bubblewrap command line of the first.

* ``namespaces``: the runner is PID 1 of a bubblewrap sandbox: its own user,
  PID, network (none), mount, IPC, UTS and cgroup namespaces; ``/usr`` and the
  interpreter read-only, a few files of ``/etc``, fresh ``/proc`` and ``/dev``,
  size-limited ``tmpfs`` at ``/work`` (the working directory), ``/tmp`` and
  ``/dev/shm``, everything else read-only; an empty environment; no new user
  namespaces inside; killed with its parent.
* ``limits``: the runner is a plain process with an empty environment in a
  private temporary directory, and only resource limits.

Programs never run as root: as root, bubblewrap itself is started as an
unprivileged uid of its own per sandbox, so that the
process limit binds (``RLIMIT_NPROC`` does not bind root, even mapped into a
user namespace) and sandboxes side by side share no per-uid budget; in
limits-only mode each run gets a uid of its own.
Which mode is used is decided by :func:`rewardsmith.sandbox.probe.detect`.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field

from rewardsmith.sandbox.inside.runner import boot_source
from rewardsmith.sandbox.limits import Limits, SandboxError
from rewardsmith.sandbox.seccomp import sandbox_filter

__all__ = [
    "HOSTS",
    "ISOLATION_CHOICES",
    "OPTIONAL_FEATURES",
    "SANDBOX_UID",
    "Isolation",
    "StartFiles",
    "bwrap_command",
    "find_bwrap",
    "interpreter_candidates",
]

ISOLATION_CHOICES = ("auto", "require", "limits")
#: Set as :attr:`Isolation.uid` when rewardsmith runs as root: sandboxes are then started as unprivileged uids, each
#: its own (:func:`~rewardsmith.sandbox.launch.run_uid`), never as root.
SANDBOX_UID = 65534
#: bwrap options that older versions lack; dropped (and reported) when the probe says they are unknown.
OPTIONAL_FEATURES = ("--disable-userns", "--size")
#: The whole environment of a sandboxed program: nothing of the parent's reaches it.
SANDBOX_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/work", "LANG": "C.UTF-8", "TMPDIR": "/tmp"}
_SYSTEM_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
#: The files of ``/etc`` a program may need: the dynamic loader's cache (its ``ld.so.conf`` is read only by
#: ``ldconfig``, never at a program's start), the tool links (``cc``, ``java``) and the time zone.
_ETC = ("ld.so.cache", "alternatives", "localtime")
#: The sandbox's ``/etc/hosts``: ``localhost`` and its own host name resolve, to the loopback interface.
HOSTS = b"127.0.0.1 localhost\n127.0.1.1 sandbox\n::1 localhost ip6-localhost ip6-loopback\n"


@dataclass(frozen=True)
class Isolation:
    """How programs run on this machine, and why (what ``rewardsmith sandbox doctor`` prints).

    ``mode`` is ``"namespaces"`` or ``"limits"``; ``reason`` says why;
    ``python`` is the interpreter the runner (and Python programs) use inside;
    ``uid`` set (to ``SANDBOX_UID``) when bubblewrap is started as an unprivileged uid of its own per sandbox
    (``None``: as this process's user);
    ``features`` the optional bwrap options in use.
    """

    mode: str
    reason: str
    python: str
    python_prefix: str
    bwrap: str | None = None
    bwrap_version: str | None = None
    uid: int | None = None
    features: tuple[str, ...] = ()
    problems: tuple[str, ...] = field(default=(), compare=False)

    @property
    def isolated(self) -> bool:
        """Whether programs run in their own namespaces (no network, private file system and PIDs)."""
        return self.mode == "namespaces"


def find_bwrap(setting: str | None = None) -> str | None:
    """The bubblewrap executable: ``setting``, ``$REWARDSMITH_BWRAP``, or ``bwrap`` on ``PATH``."""
    chosen = setting or os.environ.get("REWARDSMITH_BWRAP")
    if chosen:
        return shutil.which(chosen) or (chosen if os.path.isabs(chosen) else None) or chosen
    return shutil.which("bwrap")


def interpreter_candidates(setting: str | None = None) -> list[str]:
    """Python interpreters to try, in order: ``setting``; else this one (resolved), then the system's."""
    if setting:
        found = shutil.which(setting) or setting
        return [os.path.realpath(found)]
    out: list[str] = []
    for path in (sys.executable, "/usr/bin/python3", shutil.which("python3") or ""):
        real = os.path.realpath(path) if path else ""
        if real and real not in out and _is_binary(real):
            out.append(real)
    return out


def _is_binary(path: str) -> bool:
    """Whether ``path`` is an executable file (not a shell-script shim, as pyenv's are)."""
    try:
        with open(path, "rb") as file:
            return file.read(4) == b"\x7fELF"
    except OSError:
        return False


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in _SYSTEM_LINKS:
        path = f"/{name}"
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for name in _ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return args


def _inside_usr(path: str) -> bool:
    return path == "/usr" or path.startswith("/usr/")


def bwrap_command(
    iso: Isolation,
    limits: Limits,
    role: str,
    blob_size: int,
    binds: tuple[str, ...] = (),
    serve_fd: int | None = None,
    start: StartFiles | None = None,
) -> list[str]:
    """The bubblewrap command line that starts the runner (role ``run`` or ``suite``) in a fresh sandbox.

    ``binds`` are extra host paths made visible read-only at the same place. With ``serve_fd`` (the inherited
    socket it serves on), the sandbox is a server of jobs, each in new namespaces of its own
    (:mod:`~rewardsmith.sandbox.inside.forkserver`): it keeps the three capabilities that setting them up takes,
    in its own user namespace only, and every job's runner drops them before it reads its job. ``start`` holds
    the pipes bubblewrap reads as it starts (the seccomp filter, ``/etc/hosts``).
    """
    if iso.bwrap is None:
        raise SandboxError("bubblewrap is not available")
    args = [iso.bwrap, "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--as-pid-1"]
    if serve_fd is not None:
        args += ["--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP", "--cap-add", "CAP_NET_ADMIN"]
    if "--disable-userns" in iso.features:
        args.append("--disable-userns")
    args += ["--hostname", "sandbox", "--clearenv"]
    for key, value in SANDBOX_ENV.items():
        args += ["--setenv", key, value]
    args += _system_binds() + (start.args() if start is not None else [])
    for path in dict.fromkeys((iso.python_prefix, *binds)):
        if path and not _inside_usr(path):
            args += ["--ro-bind", path, path]
    args += ["--proc", "/proc", "--dev", "/dev"]
    disk, shm = tmpfs_sizes(limits)
    for mount, size in (("/dev/shm", shm), ("/tmp", disk), ("/work", disk)):
        args += (["--size", str(size)] if "--size" in iso.features else []) + ["--tmpfs", mount]
    args += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/work"]
    command = [*args, "--", iso.python, "-I", "-S", "-c", boot_source(blob_size)]
    if serve_fd is None:
        return [*command, role]
    return [*command, "serve", role, str(disk), str(shm), str(serve_fd)]


def data_fd(data: bytes) -> int:
    """A pipe's read end holding ``data`` (small: far below a pipe's capacity), for one bubblewrap start."""
    read, write = os.pipe()
    try:
        os.write(write, data)
    finally:
        os.close(write)
    return read


class StartFiles:
    """What bubblewrap reads from pipes as one sandbox starts: the seccomp filter
    (:mod:`~rewardsmith.sandbox.seccomp`) and ``/etc/hosts`` (the loopback names and the sandbox's own). Pass
    :attr:`fds` to the process, and :meth:`close` them here once it started.

    >>> files = StartFiles()
    >>> [arg for arg in files.args() if arg.startswith("-")], len(files.fds)
    (['--seccomp', '--file'], 2)
    >>> files.close()
    """

    def __init__(self) -> None:
        program = sandbox_filter()
        self.seccomp = None if program is None else data_fd(program)
        self.hosts = data_fd(HOSTS)

    @property
    def fds(self) -> tuple[int, ...]:
        return tuple(fd for fd in (self.seccomp, self.hosts) if fd is not None)

    def args(self) -> list[str]:
        seccomp = [] if self.seccomp is None else ["--seccomp", str(self.seccomp)]
        return [*seccomp, "--file", str(self.hosts), "/etc/hosts"]

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)


def tmpfs_sizes(limits: Limits) -> tuple[int, int]:
    """Bytes of the sandbox's writable ``tmpfs``: ``/work`` and ``/tmp`` (each), and ``/dev/shm``.

    >>> tmpfs_sizes(Limits(disk_mb=256))
    (268435456, 67108864)
    """
    disk = int(limits.disk_mb * 2**20)
    return disk, min(disk, 64 * 2**20)
