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
import weakref

from rewardsmith.sandbox.code import compiled_runner
from rewardsmith.sandbox.inside.wire import dumps
from rewardsmith.sandbox.isolation import Isolation, StartFiles, bwrap_command
from rewardsmith.sandbox.launch import (
    Launch,
    Request,
    as_user,
    collect,
    kill_group,
    on_close,
    release_uid,
    take_uid,
    thread_token,
)
from rewardsmith.sandbox.limits import Limits, SandboxError

__all__ = ["close_servers", "run_served", "serves"]

_READY_SECONDS = 30.0  # a server's start, or the end of a job it was told to end (generous: a busy machine)
_SERVERS: dict[tuple, _Server] = {}
_LIVE: weakref.WeakSet[_Server] = weakref.WeakSet()  # every server of this process, waiting or busy
_UNSERVED: dict[tuple, float] = {}  # settings -> when servers were given up for them
_FAILURES: dict[tuple, int] = {}
_FAILURES_TRIED = 3  # servers that failed to start or to set up a first job, in a row, before giving up
_RETRY_SECONDS = 300.0  # and the time before trying again (a failure at a busy moment does not last)
_LOCK = threading.Lock()


class _Server:
    """One waiting sandbox, and the socket it takes jobs on."""

    def __init__(self, iso: Isolation, limits: Limits, role: str, binds: tuple[str, ...]) -> None:
        blob = compiled_runner(iso.python, role)
        self.sock, inside = socket.socketpair()
        start = StartFiles()
        self.uid = take_uid() if iso.uid is not None else None  # a uid of its own
        try:
            command = bwrap_command(iso, limits, role, len(blob), binds, serve_fd=inside.fileno(), start=start)
            command, switch = as_user(self.uid, command)
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(inside.fileno(), *start.fds),
                start_new_session=True,
                env={},
                **switch,
            )
        except OSError:
            self.sock.close()
            release_uid(self.uid)
            raise
        finally:
            inside.close()
            start.close()
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
        _LIVE.add(self)

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
            reason = collect(launch, (records_r, err_r), (job_w, data), request, request.deadline(started, limits))
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
        kill_group(self.process)
        self.process.stderr.close()
        release_uid(self.uid)


def _take(key: tuple, iso: Isolation, limits: Limits, role: str, binds: tuple[str, ...]) -> _Server:
    """This thread's server for these settings, started when there is none (servers of ended threads are gone)."""
    with _LOCK:
        gone = [k for k, server in _SERVERS.items() if not server.alive()]
        dead = [_SERVERS.pop(k) for k in gone]
        server = _SERVERS.pop(key, None)
    for old in dead:
        old.close()
    return server if server is not None else _Server(iso, limits, role, binds)


def _failed(settings: tuple) -> None:
    """One more server failed for these settings: after ``_FAILURES_TRIED`` in a row, stop trying for a while."""
    with _LOCK:
        _FAILURES[settings] = _FAILURES.get(settings, 0) + 1
        if _FAILURES[settings] >= _FAILURES_TRIED:
            _UNSERVED[settings] = time.monotonic()
            _FAILURES.pop(settings)


def _unserved(settings: tuple) -> bool:
    given_up = _UNSERVED.get(settings)
    return given_up is not None and time.monotonic() - given_up < _RETRY_SECONDS


def run_served(iso: Isolation, limits: Limits, request: Request) -> Launch | None:
    """Run ``request`` on this thread's server (see the module docs); ``None`` where a sandbox per job must."""
    settings = (iso, request.role, limits.disk_mb, request.binds)
    if not iso.isolated or _unserved(settings):
        return None
    started = time.monotonic()
    key = (os.getpid(), thread_token(), *settings)  # a forked child never shares its parent's servers
    try:
        server = _take(key, iso, limits, request.role, request.binds)
    except (OSError, SandboxError):
        _failed(settings)
        return None
    launch, state = server.run(request, started, limits)
    if state == "ok":
        _FAILURES.pop(settings, None)
        with _LOCK:
            _SERVERS[key] = server
    else:
        server.close()
    if state == "unsupported":  # its first job's namespaces could not be set up: the runner never read the job
        _failed(settings)
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
    return iso.isolated and not any(settings[0] == iso and _unserved(settings) for settings in list(_UNSERVED))


def close_servers() -> None:
    """Stop every waiting server of this process (they also stop with the threads that started them)."""
    with _LOCK:
        servers = list(_SERVERS.values())
        _SERVERS.clear()
    for server in servers:
        server.close(wait=5.0)


def _forget_servers() -> None:
    """In a forked child: the servers are the parent's, to use and to stop; this process starts its own, and
    closes its copies of their sockets (a server ends when its socket closes: the parent's close must do it)."""
    global _LOCK
    _LOCK = threading.Lock()
    _SERVERS.clear()
    for server in list(_LIVE):
        server.sock.close()
    _LIVE.clear()


on_close(close_servers)
os.register_at_fork(after_in_child=_forget_servers)
