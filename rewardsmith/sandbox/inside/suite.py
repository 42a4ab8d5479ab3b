"""Running a suite of Python tests against a program through the judge, one record per test or call.

A suite (built on the host, see :mod:`rewardsmith.sandbox.suites`) is:

* ``program``: ``{"source", "filename"}``, the untrusted code;
* ``bind``: ``{name in the tests: name in the program}``, the program's
  functions and classes the tests use (as proxies);
* ``setup``: trusted code run after binding (test helpers, fixtures);
* ``tests``: steps ``{"code", "left", "right", "test"}``: an ``assert a == b``
  is given as ``left``/``right`` expressions so that a failure can show both
  values; other steps are ``code`` to run; ``test: false`` marks a step that is
  not a test (it runs, and is replayed after a restart);
* or ``calls``: ``{"inputs": [[args...], ...]}``: the function bound as
  ``__target__`` (or the method of that name of a ``__Solution__()`` instance)
  is called with each list of arguments, and each result is reported as a
  wire value for the host to compare (the expected values never enter the
  sandbox);
* ``test_timeout``, ``load_timeout`` and ``budget`` (seconds), ``stop_on_failure``,
  ``limits`` for the worker, ``output_limit`` (bytes of its output).

Records: ``{"kind": "load", "ok", "error"}``, then ``{"kind": "test", "index",
"passed", "error", "left", "right", "timeout"}`` or ``{"kind": "call", "index",
"ok", "value", "error", "timeout"}``, then ``{"kind": "output", "stdout",
"stderr"}``.
"""

from __future__ import annotations

import time

from rewardsmith.sandbox.inside.judge import Judge, ProgramError, Remote, WorkerLost, describe, remote_ident
from rewardsmith.sandbox.inside.wire import decode_value, encode_value


def _failure(exc: BaseException) -> dict:
    if isinstance(exc, WorkerLost):
        return {"error": str(exc), "timeout": exc.timed_out, "lost": True}
    if isinstance(exc, AssertionError):
        return {"error": "assertion failed" + (f": {str(exc)[:300]}" if str(exc) else "")}
    if isinstance(exc, ProgramError):
        return {"error": f"the program raised {str(exc)[:400]}"}
    return {"error": f"{type(exc).__name__}: {str(exc)[:400]}"}


def _run_step(judge: Judge, step: dict) -> dict:
    namespace = judge.namespace
    try:
        if step.get("left") is not None:
            left = eval(compile(step["left"], "<test>", "eval"), namespace)
            right = eval(compile(step["right"], "<test>", "eval"), namespace)
            if left == right:
                return {"passed": True}
            return {"passed": False, "error": "assertion failed", "left": describe(left), "right": describe(right)}
        exec(compile(step["code"], "<test>", "exec"), namespace)
        return {"passed": True}
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):  # from trusted test code only; never the program's
            raise
        return {"passed": False, **_failure(exc)}


class _Run:
    def __init__(self, suite: dict, emit, judge: Judge) -> None:
        self.suite, self.emit, self.judge = suite, emit, judge
        self.test_timeout = float(suite.get("test_timeout", 5))
        self.load_timeout = float(suite.get("load_timeout", self.test_timeout))
        self.end = time.monotonic() + float(suite.get("budget", 60))
        self.lost = False
        self.replay: list = []

    def ready(self) -> str | None:
        """Load the program (again, after a lost worker); the error, or ``None``."""
        judge = self.judge
        judge.deadline = min(time.monotonic() + self.load_timeout, self.end)
        try:
            if self.lost:
                judge.restart()
            judge.load()
            for step in self.replay:
                if not _run_step(judge, step)["passed"]:
                    return "a setup step failed when the program was loaded again"
        except BaseException as exc:
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            self.lost = True
            return _failure(exc)["error"]
        self.lost = False
        return None

    def arm(self) -> str | None:
        """Get ready for the next test: why it cannot run, or ``None`` (its deadline is then set)."""
        if time.monotonic() >= self.end:
            return "not run: the time budget of the whole sample was used up"
        if self.lost and (error := self.ready()) is not None:
            return f"the program could not be loaded again: {error}"
        self.judge.deadline = min(time.monotonic() + self.test_timeout, self.end)
        return None

    def tests(self) -> None:
        index = 0
        for step in self.suite.get("tests") or []:
            is_test = step.get("test", True)
            blocked = self.arm()
            if blocked is not None:
                record = {"passed": False, "error": blocked}
            else:
                record = _run_step(self.judge, step)
                self.lost = bool(record.pop("lost", False))
            if not is_test:
                if not record["passed"]:
                    self.emit({"kind": "setup", "ok": False, "error": record["error"]})
                    return
                self.replay.append(step)
                continue
            self.emit({"kind": "test", "index": index, **record})
            index += 1
            if not record["passed"] and self.suite.get("stop_on_failure"):
                return

    def target(self) -> object:
        namespace = self.judge.namespace
        target = namespace.get("__target__")
        if target is None and "__Solution__" in namespace:
            target = getattr(namespace["__Solution__"](), self.suite["calls"]["name"])
        if target is None:
            raise NameError(f"the program defines no function {self.suite['calls']['name']!r}")
        return target

    def calls(self) -> None:
        def keep(obj: object) -> int:
            if isinstance(obj, Remote):
                return remote_ident(obj)
            raise TypeError(type(obj).__name__)

        for index, args in enumerate(self.suite["calls"]["inputs"]):
            blocked = self.arm()
            if blocked is not None:
                record = {"ok": False, "error": blocked}
            else:
                try:
                    value = self.target()(*decode_value(args))
                    record = {"ok": True, "value": encode_value(value, keep)}
                except BaseException as exc:
                    if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                        raise
                    record = {"ok": False, **_failure(exc)}
                    self.lost = bool(record.pop("lost", False))
            self.emit({"kind": "call", "index": index, **record})
            if not record["ok"] and self.suite.get("stop_on_failure"):
                return


def run_suite(suite: dict, emit, first, blob: bytes, boot, own_uid: bool) -> None:
    """Run ``suite`` (see the module docs), calling ``emit(record)`` for each record."""
    judge = Judge(suite, first, blob, boot, own_uid)
    run = _Run(suite, emit, judge)
    error = run.ready()
    emit({"kind": "load", "ok": error is None, "error": error})
    if error is None:
        if suite.get("calls") is not None:
            run.calls()
        else:
            run.tests()
    emit({"kind": "output", **judge.output()})
