"""Sandboxes that wait and serve many jobs, each in new namespaces of its own: one start per worker thread.

Starting a bubblewrap sandbox costs about as much CPU as running a small
program. In ``namespaces`` mode each worker thread therefore starts one
server (:mod:`~rewardsmith.sandbox.inside.forkserver`) and hands it every job:
the server forks each job's runner into new mount, IPC, network and PID
namespaces with new ``tmpfs`` and ``devpts`` and no capabilities, so a job
sees nothing any other job left (files, terminals, IPC objects, sockets and
network counters, processes), as with a sandbox started for it, at several
milliseconds less CPU per job. The host sends the job's pipes over a
socket and waits for the server's word that nothing of the job runs before it
returns.

:func:`run_served` returns ``None`` where this path cannot be used (limits-only
mode; a bubblewrap that will not keep the capabilities; a server that failed
to start or died), and the caller starts a sandbox per job instead
(:func:`~rewardsmith.sandbox.launch.run_runner`).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import threading
import time

from rewardsmith.sandbox.code import compiled_runner
from rewardsmith.sandbox.inside.wire import dumps
from rewardsmith.sandbox.isolation import Isolation, bwrap_command
from rewardsmith.sandbox.launch import Launch, Request, as_user, collect, on_close, run_uid, thread_token
from rewardsmith.sandbox.limits import Limits, SandboxError
from rewardsmith.sandbox.seccomp import seccomp_fd

__all__ = ["close_servers", "run_served", "serves"]

_READY_SECONDS = 30.0  # a server's start, or the end of a job it was told to end (generous: a busy machine)
_SERVERS: dict[tuple, _Server] = {}
_UNSERVED: set[tuple] = set()
_FAILED_STARTS: dict[tuple, int] = {}
_STARTS_TRIED = 3  # failed starts in a row before a sandbox per job is used for good, in this process
_LOCK = threading.Lock()


class _Server:
    """One waiting sandbox, and the socket it takes jobs on."""

    def __init__(self, iso: Isolation, limits: Limits, role: str, binds: tuple[str, ...]) -> None:
        blob = compiled_runner(iso.python, role)
        self.sock, inside = socket.socketpair()
        seccomp = seccomp_fd()
        try:
            command = bwrap_command(iso, limits, role, len(blob), binds, serve_fd=inside.fileno(), seccomp_fd=seccomp)
            command, switch = as_user(run_uid() if iso.uid is not None else None, command)  # a uid of its own
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(inside.fileno(),) + (() if seccomp is None else (seccomp,)),
                start_new_session=True,
                env={},
                **switch,
            )
        except OSError:
            self.sock.close()
            raise
        finally:
            inside.close()
            if seccomp is not None:
                os.close(seccomp)
        try:
            self.process.stdin.write(blob)
            self.process.stdin.close()
            self.sock.settimeout(_READY_SECONDS)
            ready = self.sock.recv(1)
        except OSError:
            ready = b""
        if ready != b"r":
            self.close()
            raise SandboxError(f"the sandbox server did not start: {self.stderr()}")
        self.jobs = 0

    def stderr(self) -> str:
        """The end of what the server wrote on its stderr (read once it is gone)."""
        with contextlib.suppress(OSError, ValueError):
            if self.process.poll() is not None:
                return self.process.stderr.read()[-500:].decode("utf-8", "replace").strip() or "no message"
        return "no message"

    def run(self, request: Request, started: float, limits: Limits) -> tuple[Launch, str]:
        """Run ``request``; the launch and the server's state after it: ``ok``; ``retire`` (a job's files may still be
        held: start another); ``unsupported`` (a new server could not set up a job's namespaces); ``broken``."""
        launch = Launch()
        job_r, job_w = os.pipe()
        records_r, records_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            socket.send_fds(self.sock, [b"j"], [job_r, records_w, err_w])
        except OSError:
            for fd in (job_w, records_r, err_r):
                os.close(fd)
            return launch, "broken"
        finally:
            for fd in (job_r, records_w, err_w):
                os.close(fd)
        try:
            data = dumps({"cwd": "/work", **request.job}).encode()
            reason = collect(launch, (records_r, err_r), (job_w, data), request, started, limits)
        finally:
            os.close(records_r)
            os.close(err_r)
        try:
            if reason != "closed":  # the job still runs: end it
                self.sock.sendall(b"x")
            answer = self.sock.recv(1)
        except OSError:
            answer = b""
        state = {b"k": "ok", b"q": "retire", b"n": "unsupported" if not self.jobs else "broken"}.get(answer, "broken")
        self.jobs += 1
        if answer == b"n":  # the runner never read the job
            launch.ending, launch.records = "crashed", []
        return launch, state

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self, wait: float = 0.0) -> None:
        """Stop the server and every job in it: at once, or after ``wait`` seconds for it to end by itself (as it
        does when its socket closes, reaping its jobs: their CPU time then counts as this process's children's)."""
        self.sock.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(wait)
        with contextlib.suppress(OSError):
            os.killpg(self.process.pid, 9)
        with contextlib.suppress(OSError):
            self.process.kill()
        self.process.wait()
        self.process.stderr.close()


def _take(key: tuple, iso: Isolation, limits: Limits, role: str, binds: tuple[str, ...]) -> _Server:
    """This thread's server for these settings, started when there is none (servers of ended threads are gone)."""
    with _LOCK:
        gone = [k for k, server in _SERVERS.items() if not server.alive()]
        dead = [_SERVERS.pop(k) for k in gone]
        server = _SERVERS.pop(key, None)
    for old in dead:
        old.close()
    return server if server is not None else _Server(iso, limits, role, binds)


def run_served(iso: Isolation, limits: Limits, request: Request) -> Launch | None:
    """Run ``request`` on this thread's server (see the module docs); ``None`` where a sandbox per job must."""
    settings = (iso, request.role, limits.disk_mb, request.binds)
    if not iso.isolated or settings in _UNSERVED:
        return None
    started = time.monotonic()
    key = (os.getpid(), thread_token(), *settings)  # a forked child never shares its parent's servers
    try:
        server = _take(key, iso, limits, request.role, request.binds)
    except (OSError, SandboxError):
        _FAILED_STARTS[settings] = _FAILED_STARTS.get(settings, 0) + 1
        if _FAILED_STARTS[settings] >= _STARTS_TRIED:  # not a busy moment: servers cannot start here
            _UNSERVED.add(settings)
        return None
    _FAILED_STARTS.pop(settings, None)
    launch, state = server.run(request, started, limits)
    if state == "ok":
        with _LOCK:
            _SERVERS[key] = server
    else:
        server.close()
    if state == "unsupported":
        _UNSERVED.add(settings)
        return None
    if state == "broken" and not launch.records:  # the server died under the job: run it in a sandbox of its own
        return None
    launch.seconds = time.monotonic() - started
    return launch


def serves(iso: Isolation) -> bool:
    """Whether jobs in ``iso`` run on waiting servers in this process (not after a server could not be used).

    >>> from rewardsmith.sandbox import detect
    >>> serves(detect("limits"))
    False
    """
    return iso.isolated and not any(settings[0] == iso for settings in _UNSERVED)


def close_servers() -> None:
    """Stop every waiting server of this process (they also stop with the threads that started them)."""
    with _LOCK:
        servers = list(_SERVERS.values())
        _SERVERS.clear()
    for server in servers:
        server.close(wait=5.0)


def _forget_servers() -> None:
    """In a forked child: the servers are the parent's, to use and to stop; this process starts its own."""
    global _LOCK
    _LOCK = threading.Lock()
    _SERVERS.clear()


on_close(close_servers)
os.register_at_fork(after_in_child=_forget_servers)
