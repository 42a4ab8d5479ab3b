"""The trusted side of Python tests: test code runs here, the program in a worker process it cannot reach.

A test harness that runs the model's code in the same process as the
asserts lets the code decide the verdict: ``sys.exit(0)`` before the tests,
patched ``assert`` helpers, an ``__eq__`` that is always true, printed "pass"
markers. Here the program runs in a separate worker
(:mod:`~rewardsmith.sandbox.inside.worker`), and the test code runs in this
process, which the program cannot read or trace (it is non-dumpable), with
the program's functions bound as proxies (:class:`Remote`). A call sends the
arguments to the worker and gets back plain data (numbers, strings, bytes,
containers of them; other objects stay in the worker and are compared by
identity), so ``==`` here is Python's own on values. The verdict is written by
this process on an fd the program does not hold; the worker never sees the
expected values.

A test that times out, a worker that dies or prints past its cap fails that
test; a fresh worker (a new interpreter, not a fork of this process, which
holds the tests) loads the program again for the next one.
"""

from __future__ import annotations

import builtins
import os
import select
import sys
import time

from rewardsmith.sandbox.inside.procs import Capture, exit_fd, kill_all, spawn, write_all
from rewardsmith.sandbox.inside.wire import WireError, decode_value, dumps, encode_value, loads
from rewardsmith.sandbox.inside.worker import worker_main

_MAPPED = (
    "ArithmeticError", "AssertionError", "AttributeError", "EOFError", "FloatingPointError", "ImportError",
    "IndexError", "KeyError", "LookupError", "MemoryError", "ModuleNotFoundError", "NameError", "NotImplementedError",
    "OSError", "OverflowError", "RecursionError", "RuntimeError", "StopIteration", "TypeError", "UnboundLocalError",
    "ValueError", "ZeroDivisionError",
)  # fmt: skip


class ProgramError(Exception):
    """An exception the program raised that has no built-in counterpart here."""


class WorkerLost(Exception):
    """The worker cannot answer any more: it timed out, died, printed too much, or answered garbage."""

    def __init__(self, reason: str, timed_out: bool = False) -> None:
        super().__init__(reason)
        self.timed_out = timed_out


class Worker:
    """One worker process running the program, and the judge's ends of its pipes."""

    def __init__(self, pid: int, request_fd: int, reply_fd: int, out_fd: int, err_fd: int, limit: int) -> None:
        self.pid, self.request_fd, self.reply_fd = pid, request_fd, reply_fd
        self.exit_fd = exit_fd(pid)
        self.out, self.err = Capture(limit), Capture(limit)
        self.sinks = {out_fd: self.out, err_fd: self.err}
        self.buffer = b""
        self.reply_limit = max(limit * 4, 1 << 20)
        self.counter = 0

    def exchange(self, message: dict, deadline: float) -> dict:
        """Send one request and wait for its answer (or raise :class:`WorkerLost`)."""
        self.counter += 1
        message["id"] = self.counter
        pending = (dumps(message) + "\n").encode()
        while True:
            line, sep, rest = self.buffer.partition(b"\n")
            if sep:
                self.buffer = rest
                try:
                    reply = loads(line.decode("utf-8", "surrogateescape"))
                except WireError:
                    raise WorkerLost("the program answered something that is not a value") from None
                if type(reply) is dict and reply.get("id") == self.counter:
                    return reply
                continue
            if len(self.buffer) > self.reply_limit:
                raise WorkerLost(f"the program returned more than {self.reply_limit} bytes")
            wait = deadline - time.monotonic()
            if wait <= 0:
                raise WorkerLost("timed out", timed_out=True)
            readers = [self.reply_fd, *self.sinks] + ([self.exit_fd] if self.exit_fd is not None else [])
            ready, writable, _ = select.select(readers, [self.request_fd] if pending else [], [], wait)
            if writable:
                try:
                    pending = pending[os.write(self.request_fd, pending[: 1 << 16]) :]
                except OSError:
                    raise WorkerLost("the program stopped reading requests") from None
            for fd in ready:
                if fd == self.exit_fd:
                    continue
                chunk = os.read(fd, 1 << 16)
                if fd == self.reply_fd:
                    if not chunk:
                        raise WorkerLost(self.ended())
                    self.buffer += chunk
                elif not chunk:
                    del self.sinks[fd]
                else:
                    self.sinks[fd].add(chunk)
                    if self.sinks[fd].exceeded:
                        raise WorkerLost(f"the program printed more than {self.sinks[fd].limit} bytes")
            if self.exit_fd in ready and self.reply_fd not in ready:
                raise WorkerLost(self.ended())

    def ended(self) -> str:
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return "the program exited"
        if pid and os.WIFSIGNALED(status):
            return f"the program was killed by signal {os.WTERMSIG(status)}"
        if pid:
            return f"the program exited with status {os.WEXITSTATUS(status)}"
        return "the program closed its answers"

    def stop(self, own_uid: bool) -> None:
        for fd in (self.request_fd, self.reply_fd, *self.sinks, self.exit_fd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        kill_all(self.pid, own_uid)


def start_worker(blob: bytes | None, boot, limit: int) -> Worker:
    """A fresh worker: forked from this process when ``blob`` is ``None`` (only before the tests were read), else
    a new interpreter that reads the runner's code (``blob``) from its request pipe first."""
    request_r, request_w = os.pipe()
    reply_r, reply_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    null = os.open(os.devnull, os.O_RDONLY)
    target = worker_main if blob is None else [sys.executable, "-I", "-S", "-c", boot(len(blob), 3), "worker"]
    pid = spawn(target, (null, out_w, err_w, request_r, reply_w), {})  # the runner's own (clean) environment
    for fd in (null, out_w, err_w, request_r, reply_w):
        os.close(fd)
    worker = Worker(pid, request_w, reply_r, out_r, err_r, limit)
    if blob is not None:
        os.set_blocking(request_w, False)
    return worker


class Remote:
    """An object of the program, held by the worker: calls, attributes, iteration and ``str`` go there.

    Equality and hashing are by identity, here: the program's ``__eq__`` never decides a test.
    """

    __slots__ = ("_generation", "_ident", "_owner", "_type")

    def __init__(self, judge: Judge, ident: int, type_name: str) -> None:
        object.__setattr__(self, "_owner", judge)
        object.__setattr__(self, "_ident", ident)
        object.__setattr__(self, "_type", type_name)
        object.__setattr__(self, "_generation", judge.generation)

    def _op(self, op: str, *args: object, **kwargs: object) -> object:
        return self._owner.request(op, (self, *args), kwargs)

    def __call__(self, *args: object, **kwargs: object) -> object:
        return self._op("call", *args, **kwargs)

    def __getattr__(self, name: str) -> object:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._op("getattr", name)

    def __setattr__(self, name: str, value: object) -> None:
        self._op("setattr", name, value)

    def __getitem__(self, key: object) -> object:
        return self._op("getitem", key)

    def __setitem__(self, key: object, value: object) -> None:
        self._op("setitem", key, value)

    def __contains__(self, item: object) -> bool:
        return _typed(self._op("contains", item), bool, "in")

    def __iter__(self) -> object:
        return self._op("iter")

    def __next__(self) -> object:
        return self._op("next")

    def __len__(self) -> int:
        return _typed(self._op("len"), int, "len()")

    def __bool__(self) -> bool:
        return _typed(self._op("bool"), bool, "bool()")

    def __str__(self) -> str:
        return _typed(self._op("str"), str, "str()")

    def __repr__(self) -> str:
        return _typed(self._op("repr"), str, "repr()")

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    def __hash__(self) -> int:
        return id(self)


def remote_ident(obj: Remote, generation: int | None = None) -> int:
    """The worker's id of a :class:`Remote` (one of the current worker's when ``generation`` is given)."""
    if generation is not None and obj._generation != generation:
        raise WorkerLost("an object of an earlier run of the program was used")
    return obj._ident


def _typed(value: object, kind: type, what: str) -> object:
    if type(value) is not kind:
        raise TypeError(f"{what} of an object of the program gave {type(value).__name__}, not {kind.__name__}")
    return value


def describe(value: object, limit: int = 300) -> str:
    """A short text of a value for a failure message (never asks the program)."""
    if isinstance(value, Remote):
        return f"<{value._type} object of the program>"
    try:
        text = repr(value)
    except Exception as exc:
        text = f"<unprintable: {type(exc).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _raised(error: object) -> BaseException:
    """The exception the program raised, as an exception of this process."""
    if type(error) is not list or len(error) != 2 or not all(type(part) is str for part in error):
        return WorkerLost("the program answered something that is not a value")
    name, message = error
    if name in _MAPPED:
        try:
            return getattr(builtins, name)(message)
        except Exception:
            pass
    return ProgramError(f"{name}: {message}")


class Judge:
    """Runs one suite (see :func:`run_suite`)."""

    def __init__(self, suite: dict, first: Worker | None, blob: bytes, boot, own_uid: bool) -> None:
        self.suite, self.blob, self.boot, self.own_uid = suite, blob, boot, own_uid
        self.limits = suite.get("limits", {})
        self.output_limit = int(suite.get("output_limit", 1 << 20))
        self.worker = first
        if first is not None:
            first.out.limit = first.err.limit = self.output_limit
            first.reply_limit = max(self.output_limit * 4, 1 << 20)
        self.generation = 0
        self.deadline = time.monotonic() + float(suite.get("load_timeout", 10))
        self.namespace: dict = {}
        self.printed: list = []

    # -- the worker ------------------------------------------------------------------------------

    def keep(self, obj: object) -> int:
        if isinstance(obj, Remote):
            return remote_ident(obj, self.generation)
        raise TypeError(f"a {type(obj).__name__} object cannot be sent to the program, only plain data")

    def remote(self, ident: int, type_name: str) -> Remote:
        return Remote(self, ident, type_name)

    def request(self, op: str, args: tuple, kwargs: dict) -> object:
        message = {"op": op, "args": encode_value(list(args), self.keep), "kwargs": encode_value(kwargs, self.keep)}
        reply = self.worker.exchange(message, self.deadline)
        if reply.get("ok") is True:
            try:
                return decode_value(reply.get("value"), self.remote)
            except WireError as exc:
                raise WorkerLost(f"the program answered something that is not a value ({exc})") from None
        raise _raised(reply.get("error"))

    def restart(self) -> None:
        self.stop()
        self.worker = start_worker(self.blob, self.boot, self.output_limit)
        self.generation += 1
        if not write_all(self.worker.request_fd, self.blob, self.deadline):
            raise WorkerLost("a new Python process for the program did not start in time", timed_out=True)

    def stop(self) -> None:
        """Stop the worker, keeping the end of what it printed."""
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.stop(self.own_uid)
            self.printed = [(worker.out.text(tail=True), worker.err.text(tail=True)), *self.printed][:3]

    def output(self) -> dict:
        """The end of what the program printed (the last workers' output, most recent last)."""
        self.stop()
        outs = [out for out, _ in reversed(self.printed) if out]
        errs = [err for _, err in reversed(self.printed) if err]
        return {"stdout": "\n".join(outs)[-4000:], "stderr": "\n".join(errs)[-4000:]}

    def load(self) -> None:
        """Run the program in the worker, bind its names, run the setup code (raises on failure)."""
        if self.worker is None:
            self.restart()
        program = self.suite["program"]
        message = {
            "op": "load",
            "source": program["source"],
            "filename": program.get("filename", "solution.py"),
            "want": sorted(set(self.suite.get("bind", {}).values())),
            "limits": self.limits,
            "cwd": self.suite.get("cwd"),
        }
        reply = self.worker.exchange(message, self.deadline)
        if reply.get("ok") is not True:
            raise _raised(reply.get("error"))
        try:
            found = decode_value(reply.get("value"), self.remote)
        except WireError as exc:
            raise WorkerLost(f"the program answered something that is not a value ({exc})") from None
        if type(found) is not dict:
            raise WorkerLost("the program answered something that is not a value")
        namespace = {"__builtins__": builtins, "__name__": "__tests__"}
        for local, name in self.suite.get("bind", {}).items():
            if name in found:
                namespace[local] = found[name]
        self.namespace = namespace
        setup = self.suite.get("setup") or ""
        if setup:
            exec(compile(setup, "<test setup>", "exec"), namespace)
