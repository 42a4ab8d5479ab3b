"""A sandbox that waits and serves many jobs, each in namespaces of its own (the fast path of ``namespaces`` mode).

Bubblewrap starts it as the sandbox's PID 1 (``python -I -S -c BOOT serve ROLE
DISK SHM FD``), with ``CAP_SYS_ADMIN``, ``CAP_SETPCAP`` and ``CAP_NET_ADMIN``
kept, which count only in the sandbox's own user namespace. The server never
reads a job. For each job the host sends it three fds over the socket ``FD``
(the job's input, its records and its stderr); the server forks a child,
which unshares new mount, IPC, network and PID namespaces, brings the new
loopback interface up and forks the job's runner, PID 1 of the new PID
namespace. Before it reads anything, the runner makes every mount private,
mounts new size-limited ``tmpfs`` at ``/work``, ``/tmp`` and ``/dev/shm``, a
new ``devpts`` instance and a ``/proc`` of its own (``/proc/sys`` and the like
read-only, as bubblewrap mounts them), drops every capability, sets
``no_new_privs``, checks in ``/proc/self/status`` that it holds no capability,
and then runs the job as a runner started by bubblewrap would.

Nothing of one job reaches the next: its files were on its own ``tmpfs``, its
terminals on its own ``devpts``, its SysV and POSIX IPC objects in its own IPC
namespace, its sockets, ports and network counters in its own network
namespace, its processes in its own PID namespace (all killed when the
runner, its PID 1, exits). When the runner ends, or the host ends the job,
the server kills every process but itself and reaps them. Files a program
put "in flight" (sent over a unix socket in a cycle) outlive its processes
until the kernel's collector runs: the server then starts it, and waits
until no socket of the job's network namespace is left (it opened that
namespace's ``/proc/net/sockstat`` when the child made it). Then it answers
one byte on the socket: ``k`` (the job is over and nothing of it runs or is
held), ``n`` (the namespaces could not be set up here: the host then starts
a sandbox per job) or ``q`` (the job is over, but something of it may still
be held: the host stops this server). A byte from the host while a job
runs ends that job at once. The server sends ``r`` when it is ready, and ends
with the socket.
"""

from __future__ import annotations

import os
import select
import sys
import time

from rewardsmith.sandbox.inside.procs import SIGKILL, libc_call, prctl, protect_self

SETUP_FAILED = 97
_NEW_NAMESPACES = 0x00020000 | 0x08000000 | 0x40000000 | 0x20000000  # CLONE_NEWNS, NEWIPC, NEWNET, NEWPID
_SIOCSIFFLAGS, _IFF_UP = 0x8914, 1
_SETTLE_SECONDS = 10.0  # for the collector to free what a job put in flight (its work may wait on a busy machine)
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 38, 47, 4
_CAPABILITY_VERSION_3 = 0x20080522
_PROC_READ_ONLY = (b"sys", b"sysrq-trigger", b"irq", b"bus")


def _mount(source: bytes | None, target: bytes, kind: bytes | None, flags: int, data: bytes | None = None) -> None:
    if libc_call("mount", source, target, kind, flags, data) != 0:
        raise OSError(f"cannot mount {target.decode()} in the job's namespace")


def fresh_mounts(disk: int, shm: int) -> None:
    """Private mounts, new ``tmpfs`` at ``/work``, ``/tmp`` and ``/dev/shm``, a new ``devpts`` (``/dev/ptmx`` links
    there) and a ``/proc`` of this PID namespace."""
    _mount(None, b"/", None, _MS_REC | _MS_PRIVATE)  # nothing mounted here reaches the server or the next job
    for target, size in ((b"/work", disk), (b"/tmp", disk), (b"/dev/shm", shm)):
        _mount(b"tmpfs", target, b"tmpfs", _MS_NOSUID | _MS_NODEV, b"mode=0755,size=%d" % size)
    _mount(b"devpts", b"/dev/pts", b"devpts", _MS_NOSUID | _MS_NOEXEC, b"newinstance,ptmxmode=0666,mode=620")
    _mount(b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    for name in _PROC_READ_ONLY:
        path = b"/proc/" + name
        if os.path.exists(path):
            _mount(path, path, None, _MS_BIND | _MS_REC)
            _mount(path, path, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    os.chdir("/work")  # the old working directory is the server's, under the new mount


def _status() -> dict[str, str]:
    with open("/proc/self/status", encoding="ascii") as status:
        return dict(line.split(":", 1) for line in status.read().splitlines() if ":" in line)


def bounding_set() -> list[int]:
    """The capabilities in this process's bounding set (bubblewrap leaves only those it was asked to keep)."""
    mask = int(_status()["CapBnd"], 16)
    return [capability for capability in range(64) if mask >> capability & 1]


def drop_capabilities(bounding: list[int]) -> None:
    """Give up every capability for good (``bounding``, then the ambient and the other sets), set
    ``no_new_privs``, and check that none is left."""
    prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL)
    for capability in bounding:
        prctl(_PR_CAPBSET_DROP, capability)
    prctl(_PR_SET_NO_NEW_PRIVS, 1)
    header = _CAPABILITY_VERSION_3.to_bytes(4, sys.byteorder) + bytes(4)
    libc_call("capset", header, bytes(24))
    fields = _status()
    held = [name for name in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb") if int(fields[name], 16)]
    if held or fields.get("NoNewPrivs", "").strip() != "1":
        raise OSError(f"the job's runner still holds capabilities: {held}")


def _loopback_up() -> None:
    """Bring the new network namespace's loopback interface up (as bubblewrap does for its own)."""
    import _socket
    import fcntl

    request = b"lo".ljust(16, b"\0") + _IFF_UP.to_bytes(2, sys.byteorder) + bytes(22)  # struct ifreq
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
    try:
        fcntl.ioctl(sock.fileno(), _SIOCSIFFLAGS, request)
    finally:
        sock.close()


def _sockets_in_use(sockstat: int) -> int:
    """The sockets of the job's network namespace still allocated (``sockstat`` is that namespace's)."""
    text = os.pread(sockstat, 4096, 0).decode("ascii", "replace")
    return int(text.split("sockets: used", 1)[1].split()[0])


def _settled(sockstat: int) -> bool:
    """Whether every socket of the job is gone, starting the collector for what a program put in flight."""
    import _socket

    deadline = time.monotonic() + _SETTLE_SECONDS
    while _sockets_in_use(sockstat):
        if time.monotonic() > deadline:
            return False
        for end in _socket.socketpair():  # closing a unix socket starts the collector of sockets in flight
            end.close()
        time.sleep(0.002)
    return True


def _runner(run_job, role: str, sizes: tuple[int, int], bounding: list[int]) -> None:
    """The job's runner: PID 1 of the new PID namespace; mounts, no capabilities, then the job."""
    try:
        fresh_mounts(*sizes)
        drop_capabilities(bounding)
    except BaseException:
        os._exit(SETUP_FAILED)
    try:
        run_job(role)
    finally:
        os._exit(1)  # run_job ends with os._exit(0): here only if it raised


def _job(fds: list[int], control: int, made: tuple, run_job, role: str, sizes: tuple, bounding: list) -> None:
    """The forked child: new namespaces (said on ``made``, then waiting for the server to have seen them), then
    the runner as their PID 1; exits with the runner's status."""
    code = SETUP_FAILED
    try:
        os.close(control)
        if libc_call("unshare", _NEW_NAMESPACES) != 0:
            os._exit(SETUP_FAILED)
        _loopback_up()
        made_w, seen_r = made
        os.write(made_w, b"1")
        os.read(seen_r, 1)
        moved = [os.dup(fd) for fd in fds]
        for number, fd in enumerate(moved):
            os.dup2(fd, number)
        os.closerange(3, 1 << 20)
        pid = os.fork()
        if pid == 0:
            _runner(run_job, role, sizes, bounding)
        null = os.open(os.devnull, os.O_RDWR)
        for number in range(3):  # the job's streams end with its runner
            os.dup2(null, number)
        _, status = os.waitpid(pid, 0)
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1
    finally:
        os._exit(code)


def _job_sockets(pid: int, made_r: int, seen_w: int) -> int | None:
    """``/proc/net/sockstat`` of the job's network namespace, once the child made it (``None``: it did not), and
    then the child may go on (it cannot have ended before: its namespace is there to be opened)."""
    try:
        if not os.read(made_r, 1):
            return None
        try:
            return os.open(f"/proc/{pid}/net/sockstat", os.O_RDONLY)
        except OSError:
            return -1
    finally:
        try:
            os.write(seen_w, b"1")
        except OSError:  # the child is gone: it could not make its namespaces
            pass
        os.close(made_r)
        os.close(seen_w)


def _sweep() -> None:
    """Kill every process but this one (PID 1) and reap them all: then nothing of a job runs."""
    while True:
        try:
            os.kill(-1, SIGKILL)
        except OSError:
            pass
        try:
            while True:
                os.waitpid(-1, 0)
        except ChildProcessError:
            pass
        if [name for name in os.listdir("/proc") if name.isdigit() and name != "1"] == []:
            return


def _wait(pid: int, control: int) -> bool:
    """Wait for the job's child to end, or for the host to end it; whether the host is still there."""
    try:
        ended = os.pidfd_open(pid)
    except (AttributeError, OSError):
        ended = None
    readers = [control] + ([ended] if ended is not None else [])
    while True:
        ready = select.select(readers, [], [], None if ended is not None else 0.005)[0]
        if control in ready:
            there = bool(os.read(control, 1))
            break
        if ended in ready or (ended is None and os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)):
            there = True
            break
    if ended is not None:
        os.close(ended)
    return there


def _receive(sock) -> tuple[bytes, list[int]]:
    """One byte from the host, and the fds sent with it (``_socket`` only: ``socket`` costs 25 modules)."""
    import _socket

    message, ancillary, _, _ = sock.recvmsg(1, _socket.CMSG_SPACE(3 * 4))
    fds = []
    for level, kind, data in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            fds += [int.from_bytes(data[i : i + 4], sys.byteorder) for i in range(0, len(data) - len(data) % 4, 4)]
    return message, fds


def serve(run_job, role: str, disk: str, shm: str, control: str) -> None:
    """Serve jobs until the host closes the socket (see the module docs); ``run_job(role)`` is the runner."""
    import _socket

    protect_self()
    sizes, bounding = (int(disk), int(shm)), bounding_set()
    sock = _socket.socket(fileno=int(control))
    sock.sendall(b"r")
    while True:
        try:
            message, fds = _receive(sock)
        except OSError:
            break
        if not message:
            break
        if len(fds) != 3:  # a late "end the job" for a job that had ended already
            for fd in fds:
                os.close(fd)
            continue
        (made_r, made_w), (seen_r, seen_w) = os.pipe(), os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(made_r)
            os.close(seen_w)
            _job(fds, sock.fileno(), (made_w, seen_r), run_job, role, sizes, bounding)
        for fd in (*fds, made_w, seen_r):
            os.close(fd)
        sockstat = _job_sockets(pid, made_r, seen_w)
        there = _wait(pid, sock.fileno())
        status = 0
        try:
            _, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        _sweep()
        if not there:
            break
        settled = sockstat is None or (sockstat >= 0 and _settled(sockstat))  # also for a job the host ended
        if sockstat is not None and sockstat >= 0:
            os.close(sockstat)
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        sock.sendall(b"n" if code == SETUP_FAILED else b"k" if settled else b"q")
    _sweep()
    os._exit(0)
