"""The sandbox's first process: read a job, run its programs under limits, write one JSON record per result.

Started as ``python -I -S -c BOOT ROLE`` (:func:`boot_source`): the bootstrap
reads this code, compiled and marshalled by the host, from fd 0 and runs it,
so nothing is compiled at each start. Under bubblewrap it is PID 1 of the
sandbox's PID namespace: the program cannot kill it, and ``kill(-1)`` from it
ends everything the program started. It makes itself non-dumpable, so the
program can neither trace it nor read its memory or fds through ``/proc``.

The job (JSON on fd 0, after the code): ``cwd``, ``env``, ``files`` to write,
``own_uid`` (every process of this uid belongs to the job), and either
``steps`` (programs to run one after another: ``{"kind": "exec", "argv"}`` or
``{"kind": "python", "path"}`` for a Python program run in a fork of this
process, each with ``stdin``, ``timeout``, ``limits``, ``output_limit`` and
``required``: the steps after a required step that fails are not run), or a
``suite`` of Python tests (role ``suite``; :mod:`~rewardsmith.sandbox.inside.suite`).

Records on fd 1: ``{"kind": "run", "index", "status", "exit_code", "signal",
"stdout", "stdout_bytes", "stderr", "time", "cpu"}`` per step (``status``:
``ok``, ``exit``, ``signal``, ``timeout``, ``output_limit``), the suite's
records, then ``{"kind": "done"}``. ``{"kind": "error"}`` reports a job the
runner could not run.
"""

from __future__ import annotations

import io
import os
import sys
import time

from rewardsmith.sandbox.inside.forkserver import serve
from rewardsmith.sandbox.inside.judge import start_worker
from rewardsmith.sandbox.inside.procs import (
    PR_SET_DUMPABLE,
    SIGINT,
    Capture,
    add_exit_builtins,
    exit_fd,
    kill_all,
    prctl,
    protect_self,
    pump,
    spawn,
    wait_exit,
)
from rewardsmith.sandbox.inside.suite import run_suite
from rewardsmith.sandbox.inside.wire import dumps, loads
from rewardsmith.sandbox.inside.worker import worker_main


def boot_source(length: int, fd: int = 0) -> str:
    """The ``-c`` program that reads ``length`` bytes of marshalled code from ``fd`` and runs it.

    It leaves the code in the global ``BLOB`` (a new worker is started from it).

    >>> compile(boot_source(100), "boot", "exec") is not None
    True
    """
    return (
        "import os,marshal\n"
        "BLOB=b''\n"
        f"while len(BLOB)<{int(length)}:\n"
        f" _c=os.read({int(fd)},{int(length)}-len(BLOB))\n"
        " if not _c:raise SystemExit('the sandbox runner did not receive its code')\n"
        " BLOB+=_c\n"
        "exec(marshal.loads(BLOB))\n"
    )


def emit(record: dict) -> None:
    """Write one record (a JSON line) to fd 1."""
    data = (dumps(record) + "\n").encode()
    while data:
        data = data[os.write(1, data) :]


def _python_main(path: str) -> int:
    """Run the Python program in ``path`` as ``__main__`` in this (forked) process; its exit status."""
    import builtins

    prctl(PR_SET_DUMPABLE, 1)  # the program's own process, unlike this runner's, may be inspected (by itself)
    add_exit_builtins()
    stdio = [
        io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), "utf-8", "surrogateescape"),
        io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), "utf-8", "surrogateescape"),
        io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, "w", closefd=False)), "utf-8", "backslashreplace", None, True),
    ]
    sys.stdin, sys.stdout, sys.stderr = sys.__stdin__, sys.__stdout__, sys.__stderr__ = stdio
    sys.argv = [path]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    module = type(sys)("__main__")
    module.__dict__.update({"__file__": path, "__builtins__": builtins})
    sys.modules["__main__"] = module
    status = 0
    try:
        with open(path, "rb") as file:
            exec(compile(file.read(), path, "exec"), module.__dict__)
    except SystemExit as exc:
        code = exc.code
        if code is None or isinstance(code, int):
            status = code or 0
        else:
            print(code, file=sys.stderr)
            status = 1
    except BaseException:
        kind, value, trace = sys.exc_info()
        if trace is not None and value is not None:
            trace = value.__traceback__ = trace.tb_next  # without this function's frame
        sys.excepthook(kind, value, trace)
        status = 1
    for finish in ("threading", "atexit"):
        try:
            if finish == "threading" and "threading" in sys.modules:
                sys.modules["threading"]._shutdown()
            elif finish == "atexit":
                import atexit

                atexit._run_exitfuncs()
        except BaseException:
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    return status & 0xFF


def run_step(step: dict, job: dict) -> dict:
    """Run one program to the end (or its limit) and describe how it went."""
    stdin_r, stdin_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    if step["kind"] == "python":
        path = step["path"]

        def target():
            return _python_main(path)

    else:
        target = list(step["argv"])
    started = time.monotonic()
    pid = spawn(target, (stdin_r, out_w, err_w), step.get("limits") or {}, cwd=job.get("cwd"), env=job.get("env"))
    for fd in (stdin_r, out_w, err_w):
        os.close(fd)
    done = exit_fd(pid)
    limit = int(step.get("output_limit", 1 << 20))
    out, err = Capture(limit), Capture(limit)
    sinks = {out_r: out, err_r: err}
    deadline = started + float(step.get("timeout", 10))
    reason = pump(sinks, (stdin_w, step.get("stdin", "").encode("utf-8", "surrogateescape")), done, deadline)
    if reason == "closed":
        reason = "exited" if wait_exit(done, pid, deadline) else "timeout"
    if reason != "exited":
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.monotonic() - started
    kill_all(pid, bool(job.get("own_uid")))
    pump(sinks, None, None, time.monotonic() + 1.0)
    for fd in (out_r, err_r, done):
        if fd is not None:
            os.close(fd)
    record = {
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "stdout": out.text(),
        "stdout_bytes": out.total,
        "stderr": err.text(tail=True),
        "time": round(elapsed, 4),
        "cpu": round(usage.ru_utime + usage.ru_stime, 4),
    }
    if reason == "timeout":
        record["status"] = "timeout"
    elif reason == "limit":
        record["status"] = "output_limit"
    elif record["signal"] is not None:
        record["status"] = "signal"
    else:
        record["status"] = "ok" if record["exit_code"] == 0 else "exit"
    return record


def write_files(job: dict) -> None:
    """Write the job's files under its working directory."""
    root = os.path.realpath(job.get("cwd") or ".")
    for name, text in (job.get("files") or {}).items():
        path = os.path.realpath(os.path.join(root, name))
        if not path.startswith(root + os.sep):
            raise ValueError(f"file {name!r} is outside the working directory")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as file:
            file.write(text)


def _read_job() -> dict:
    chunks = []
    while True:
        chunk = os.read(0, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(0)
    return loads(b"".join(chunks).decode("utf-8", "surrogateescape"))


def main(role: str) -> None:
    """Run as the sandbox's runner (role ``run`` or ``suite``), as a test worker (role ``worker``), or as a server
    of jobs in namespaces of their own (role ``serve``, :mod:`~rewardsmith.sandbox.inside.forkserver`)."""
    if role == "worker":
        worker_main()
        return
    if role == "serve":
        serve(main, *sys.argv[2:6])
        return
    protect_self()
    import _signal

    _signal.signal(SIGINT, _signal.SIG_DFL)  # as PID 1, then deaf to it from inside (no KeyboardInterrupt)
    blob = globals().get("BLOB", b"")
    first = start_worker(None, boot_source, 1 << 20) if role == "suite" else None  # before the tests are read
    job: dict = {}
    try:
        job = _read_job()
        write_files(job)
        if role == "suite":
            suite = {"cwd": job.get("cwd"), **job["suite"]}
            run_suite(suite, emit, first, blob, boot_source, bool(job.get("own_uid")))
        else:
            for index, step in enumerate(job.get("steps") or []):
                record = run_step(step, job)
                emit({"kind": "run", "index": index, **record})
                if step.get("required") and record["status"] != "ok":
                    break
    except BaseException as exc:
        emit({"kind": "error", "message": f"{type(exc).__name__}: {exc}"[:2000]})
    emit({"kind": "done"})
    kill_all(None, bool(job.get("own_uid")))
    os._exit(0)  # every record is written (unbuffered); tearing the interpreter down would only cost CPU


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "run")
