"""Processes under limits: start one, feed its input, collect its output with caps, kill all it left behind.

Runs inside the sandbox as part of the runner (standard library only, cheap
imports) and on the host, where the sandbox's own process is pumped the same
way (:func:`pump`).

* :func:`spawn` forks a child with its standard streams on the given fds,
  every other fd closed, resource limits set, and either ``exec``s a command
  or runs a function (the in-process Python path);
* :func:`pump` moves bytes: input written as the child reads it, output read
  into :class:`Capture` buffers (a head up to a cap, and a tail), until the
  streams close, the process exits, the deadline passes or a cap is exceeded;
* :func:`kill_all` ends everything the child left behind: everything else in
  the PID namespace when this process is its PID 1, everything of a uid of its
  own, otherwise the child's process group and every orphan adopted by this
  process (a child subreaper).
"""

from __future__ import annotations

import fcntl
import os
import resource
import select
import time

SIGINT = 2
SIGKILL = 9
SIGPIPE = 13
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
_LIMITS = {
    "memory_bytes": (resource.RLIMIT_AS,),
    "file_bytes": (resource.RLIMIT_FSIZE,),
    "processes": (resource.RLIMIT_NPROC,),
    "open_files": (resource.RLIMIT_NOFILE,),
}


_LIBC: dict = {}


def libc_call(name: str, *args: object) -> int:
    """The C library's ``name(*args)`` through ``_ctypes`` (``ctypes`` itself costs 5 ms to import): ints, bytes
    (as pointers) and ``None`` (NULL) only; -1 when unavailable."""
    try:
        import _ctypes

        if name not in _LIBC:
            _LIBC[name] = _ctypes.dlsym(_ctypes.dlopen(None), name)
        return _ctypes.call_function(_LIBC[name], args)
    except Exception:
        return -1


def prctl(option: int, value: int) -> int:
    """``prctl(option, value)``; -1 when it fails or is unavailable."""
    return libc_call("prctl", option, value, 0, 0, 0)


def add_exit_builtins() -> None:
    """``exit()`` and ``quit()``, which ``site`` adds and ``python -S`` (the sandbox's Python) does not."""
    import builtins

    def leave(code: object = None) -> None:
        raise SystemExit(code)

    for name in ("exit", "quit"):
        if not hasattr(builtins, name):
            setattr(builtins, name, leave)


def protect_self() -> None:
    """Make this process non-dumpable (no ptrace, no reading its memory or fds through ``/proc``), a subreaper,
    and killed when its parent dies."""
    prctl(PR_SET_DUMPABLE, 0)
    prctl(_PR_SET_CHILD_SUBREAPER, 1)
    prctl(_PR_SET_PDEATHSIG, SIGKILL)


def apply_limits(limits: dict) -> None:
    """Set the resource limits of this process (a child about to run a program)."""
    for key, (which,) in _LIMITS.items():
        value = limits.get(key)
        if value is not None:
            resource.setrlimit(which, (int(value), int(value)))
    cpu = limits.get("cpu_seconds")
    if cpu is not None:
        resource.setrlimit(resource.RLIMIT_CPU, (int(cpu), int(cpu) + 1))
    for which in (resource.RLIMIT_CORE, resource.RLIMIT_MEMLOCK, resource.RLIMIT_MSGQUEUE):
        resource.setrlimit(which, (0, 0))  # no core files; nothing charged to the uid that outlives the program


def spawn(target, fds: tuple, limits: dict, *, cwd: str | None = None, env: dict | None = None, group: bool = True):
    """Fork a child whose fds 0, 1, 2 (and 3, 4, ... when given) are ``fds``; return its pid.

    ``target`` is an argv list to ``exec`` (searched on ``env["PATH"]``), or a
    function called in the child (its return value is the exit status).
    """
    pid = os.fork()
    if pid:
        return pid
    status = 127
    try:
        if group and os.getpid() != 1:
            os.setpgid(0, 0)
        moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, len(fds)) for fd in fds]  # out of the way of the targets first
        for number, fd in enumerate(moved):
            os.dup2(fd, number)
        os.closerange(len(fds), 1 << 20)
        if cwd is not None:
            os.chdir(cwd)
        prctl(_PR_SET_PDEATHSIG, SIGKILL)  # the program dies with the runner, whatever kills it
        apply_limits(limits)
        if callable(target):
            import _signal

            _signal.signal(SIGINT, _signal.default_int_handler)  # as in any Python program (not the runner's)
            status = target()
        else:
            import _signal

            _signal.signal(SIGPIPE, _signal.SIG_DFL)
            os.execvpe(target[0], target, env if env is not None else os.environ)
    except BaseException as exc:
        try:
            os.write(2, f"cannot start the program: {type(exc).__name__}: {exc}\n".encode())
        except OSError:
            pass
    os._exit(status if isinstance(status, int) else 1)


class Capture:
    """Bytes read from one stream: the first ``limit`` bytes, the last ``tail`` bytes, and how many in all."""

    def __init__(self, limit: int, tail: int = 4000, keep: bool = True) -> None:
        self.limit, self.tail_size, self.keep = limit, tail, keep
        self.head = bytearray()
        self.tail = b""
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit - len(self.head)
        if room > 0 and self.keep:
            self.head += chunk[:room]
        self.tail = (self.tail + chunk)[-self.tail_size :] if self.tail_size else b""

    @property
    def exceeded(self) -> bool:
        return self.total > self.limit

    def text(self, tail: bool = False) -> str:
        data = self.tail if tail else bytes(self.head)
        return data.decode("utf-8", "replace")


def pump(sinks: dict, feed: tuple | None = None, exit_fd: int | None = None, deadline: float | None = None, stop=None):
    """Move bytes until it is time to stop, and say why.

    ``sinks`` maps fds to read to :class:`Capture` objects (a closed stream is
    removed); ``feed`` is ``(fd, bytes)`` written as the reader takes it,
    then closed; ``exit_fd`` becomes readable when the process exits (a
    pidfd); ``stop(fd, chunk)`` may return True to stop at once. Returns
    ``"closed"`` (every sink at EOF), ``"exited"``, ``"timeout"``, ``"limit"``
    (a capture went past its limit) or ``"stopped"``.
    """
    pending = b""
    write_fd = None
    if feed is not None:
        write_fd, pending = feed
        if pending:
            os.set_blocking(write_fd, False)
        else:
            os.close(write_fd)
            write_fd = None
    try:
        while sinks:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                return "timeout"
            readers = list(sinks) + ([exit_fd] if exit_fd is not None else [])
            ready, writable, _ = select.select(readers, [write_fd] if write_fd is not None else [], [], wait)
            if write_fd is not None and writable:
                try:
                    pending = pending[os.write(write_fd, pending[: 1 << 16]) :]
                except (BrokenPipeError, BlockingIOError) as exc:
                    pending = b"" if isinstance(exc, BrokenPipeError) else pending
                if not pending:
                    os.close(write_fd)
                    write_fd = None
            for fd in ready:
                if fd == exit_fd:
                    continue
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    del sinks[fd]
                    continue
                sinks[fd].add(chunk)
                if sinks[fd].exceeded:
                    return "limit"
                if stop is not None and stop(fd, chunk):
                    return "stopped"
            if exit_fd is not None and exit_fd in ready:
                return "exited"
        return "closed"
    finally:
        if write_fd is not None:
            os.close(write_fd)


def write_all(fd: int, data: bytes, deadline: float) -> bool:
    """Write ``data`` to the non-blocking ``fd`` before ``deadline``; whether it all went."""
    while data:
        wait = deadline - time.monotonic()
        if wait <= 0 or not select.select([], [fd], [], wait)[1]:
            return False
        try:
            data = data[os.write(fd, data[: 1 << 16]) :]
        except BlockingIOError:
            continue
        except OSError:
            return False
    return True


def _children(parent: int) -> list:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rpartition(b")")[2].split()
        except OSError:
            continue
        if len(fields) > 1 and int(fields[1]) == parent:
            found.append(int(name))
    return found


def kill_all(pid: int | None = None, own_uid: bool = False, spare: tuple = ()) -> None:
    """Kill ``pid``'s process group and everything else it left, then reap (see the module docs)."""
    me = os.getpid()
    if me == 1 or own_uid:
        try:
            os.kill(-1, SIGKILL)
        except OSError:
            pass
    else:
        if pid is not None:
            try:
                os.killpg(pid, SIGKILL)
            except OSError:
                pass
        for _ in range(100):  # orphans are re-parented to this process (a subreaper): kill them until none is left
            left = [child for child in _children(me) if child not in spare]
            if not left:
                break
            for child in left:
                for kill in (os.killpg, os.kill):
                    try:
                        kill(child, SIGKILL)
                    except OSError:
                        pass
            reap()
    reap()


def reap() -> None:
    """Collect every finished child (zombie) of this process."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def wait_exit(fd, pid: int, deadline: float) -> bool:
    """Wait until process ``pid`` (pidfd ``fd``) exits, without reaping it; whether it did before ``deadline``."""
    while fd is None:  # no pidfds here: poll
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.005)
    wait = deadline - time.monotonic()
    return wait > 0 and bool(select.select([fd], [], [], wait)[0])


def exit_fd(pid: int):
    """A pidfd for ``pid`` (readable once it exits), or ``None`` where the kernel has none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None
