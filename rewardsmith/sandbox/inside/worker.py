"""The program's side of the Python test judge: load the untrusted program, then answer the judge's requests.

The worker is a process of its own; once the program is loaded, everything in
it is the program's (it can patch this code, print, exit, fork). It serves
requests the judge sends on fd 3 (one JSON line each) and answers on fd 4;
the program's ``stdin`` is ``/dev/null`` and its ``stdout`` and ``stderr`` go
to pipes the judge reads. Nothing it answers is trusted: the judge accepts
only plain values (:mod:`~rewardsmith.sandbox.inside.wire`) and decides every
verdict itself, with test code the worker never sees.

Requests are ``{"op": name, "args": [...], "kwargs": {...}}`` with wire-encoded
arguments; objects that are not plain data (the program's functions, classes
and instances) stay here and travel as references. Answers are
``{"ok": true, "value": ...}`` or ``{"ok": false, "error": [type name, message]}``.
"""

from __future__ import annotations

import builtins
import os
import sys

from rewardsmith.sandbox.inside.procs import PR_SET_DUMPABLE, add_exit_builtins, apply_limits, prctl
from rewardsmith.sandbox.inside.wire import decode_value, dumps, encode_value, loads

REQUEST_FD, REPLY_FD = 3, 4


def _load(source: str, filename: str, want: list) -> dict:
    """Run the program as a module named ``__solution__``; the wanted names it defines, encoded."""
    module = type(sys)("__solution__")
    namespace = module.__dict__
    namespace.update({"__file__": filename, "__builtins__": builtins})
    sys.modules["__solution__"] = module
    exec(compile(source, filename, "exec"), namespace)
    return {name: namespace[name] for name in want if name in namespace}


_OPS = {
    "call": lambda target, *args, **kwargs: target(*args, **kwargs),
    "getattr": getattr,
    "setattr": setattr,
    "str": str,
    "repr": repr,
    "bool": bool,
    "len": len,
    "iter": iter,
    "next": next,
    "getitem": lambda target, key: target[key],
    "setitem": lambda target, key, value: target.__setitem__(key, value),
    "contains": lambda target, item: item in target,
}


def _answer(state: dict, message: dict) -> object:
    refs = state["refs"]
    op = message["op"]
    if op == "load":
        if message.get("cwd"):
            os.chdir(message["cwd"])
        apply_limits(message.get("limits") or {})
        found = _load(message["source"], message["filename"], message["want"])
        return {"$d": [[name, encode_value(value, state["keep"])] for name, value in found.items()]}
    args = decode_value(message.get("args", []), lambda ident, _type: refs[ident], functions=True)
    kwargs = decode_value(message.get("kwargs", {"$d": []}), lambda ident, _type: refs[ident], functions=True)
    return encode_value(_OPS[op](*args, **kwargs), state["keep"])


def _message(exc: BaseException) -> str:
    try:
        return str.__str__(str(exc))[:500]
    except BaseException:
        return "(no message)"


def _lines(fd: int):
    """The lines written to ``fd``, as text, until it closes."""
    pending = b""
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return
        pending += chunk
        while b"\n" in pending:
            line, _, pending = pending.partition(b"\n")
            yield line.decode("utf-8", "surrogateescape")


def _send(text: str) -> None:
    data = (text + "\n").encode("utf-8", "surrogateescape")
    while data:
        data = data[os.write(REPLY_FD, data) :]


def worker_main() -> None:
    """Serve the judge's requests until it closes the request pipe (fds 0-4 are set up by the caller)."""
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    prctl(PR_SET_DUMPABLE, 1)  # a fork of the judge is not dumpable; the program's process may be
    add_exit_builtins()
    refs: dict = {}

    def keep(obj: object) -> int:
        refs[len(refs) + 1] = obj
        return len(refs)

    state = {"refs": refs, "keep": keep}
    for line in _lines(REQUEST_FD):
        ident = None
        try:
            message = loads(line)
            ident = message.get("id")
            reply = {"id": ident, "ok": True, "value": _answer(state, message)}
        except BaseException as exc:  # the program's own errors, SystemExit included, are answers
            reply = {"id": ident, "ok": False, "error": [type(exc).__name__[:80], _message(exc)]}
        try:
            text = dumps(reply)
        except BaseException as exc:  # e.g. a str subclass whose methods raise
            error = [type(exc).__name__[:80], "the value could not be sent back"]
            text = dumps({"id": ident, "ok": False, "error": error})
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        _send(text)
    os._exit(0)
