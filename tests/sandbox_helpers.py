"""Helpers for the sandbox tests: whether namespaces work here, and what is left in the process table."""

from __future__ import annotations

import functools
import json
import os
import time

import pytest

from rewardsmith.sandbox import SandboxError, detect
from rewardsmith.sandbox.launch import close_sandboxes


@functools.cache
def isolation_here():
    """How programs run on this machine (``None`` when no sandbox can run at all)."""
    try:
        return detect("auto")
    except SandboxError:
        return None


def namespaces() -> bool:
    iso = isolation_here()
    return iso is not None and iso.isolated


requires_namespaces = pytest.mark.skipif(
    not namespaces(),
    reason="bubblewrap cannot create namespaces here (see `rewardsmith sandbox doctor`); "
    "the namespace isolation tests need it",
)
requires_sandbox = pytest.mark.skipif(isolation_here() is None, reason="no Python interpreter can run the sandbox here")


def _stat(pid: str) -> tuple[str, int] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            head, _, rest = file.read().rpartition(b")")
        return head.partition(b"(")[2].decode(errors="replace"), int(rest.split()[1])
    except (OSError, ValueError, IndexError):
        return None


def descendants(root: int | None = None) -> dict[int, str]:
    """Every process below ``root`` (default: this one): pid to command name."""
    root = os.getpid() if root is None else root
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        info = _stat(pid)
        if info is not None:
            names[int(pid)], parents[int(pid)] = info
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found:
                found[pid] = names[pid]
                frontier.append(pid)
    return found


def with_marker(marker: str) -> list[int]:
    """Processes whose command line or name holds ``marker``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as file:
                cmdline = file.read()
            with open(f"/proc/{pid}/comm", "rb") as file:
                comm = file.read()
        except OSError:
            continue
        if marker.encode() in cmdline or marker.encode()[:15] in comm:
            found.append(int(pid))
    return found


def settle(check, seconds: float = 5.0):
    """``check()`` until it is falsy (processes take a moment to be reaped); its last value."""
    deadline = time.monotonic() + seconds
    value = check()
    while value and time.monotonic() < deadline:
        time.sleep(0.05)
        value = check()
    return value


def _uid(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def _cmdline(pid: int) -> list[bytes]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            return file.read().split(b"\0")
    except OSError:
        return []


def waiting_servers(found: dict[int, str]) -> set[int]:
    """The servers of jobs in ``found`` (a bubblewrap started to serve, and its first process): by design they
    wait for the next job; what runs below them (a job) is not one of them."""
    servers = {pid for pid, name in found.items() if name == "bwrap" and b"serve" in _cmdline(pid)}
    return servers | {pid for pid in found if (_stat(str(pid)) or ("", 0))[1] in servers}


def sandboxes_below_me(spares: bool = False) -> dict[int, str]:
    """Sandboxes (bubblewrap, or the processes of another uid: programs and runners) still running below this
    process (the reward engine's worker processes included), other than the servers of jobs waiting for the next
    one in the worker processes; the spares and servers of this process are stopped first, unless ``spares``."""
    if not spares:
        close_sandboxes()
    me = os.getuid()
    found = {pid: name for pid, name in descendants().items() if name == "bwrap" or _uid(pid) not in (me, None)}
    waiting = waiting_servers(found)
    return {pid: name for pid, name in found.items() if pid not in waiting}


def sandbox_count(found: dict[int, str]) -> int:
    """How many sandboxes ``found`` (from :func:`sandboxes_below_me`) holds: one per bubblewrap (or the
    ``setpriv`` about to become one) whose parent is not a bubblewrap; a sandbox still starting has a second
    bubblewrap process below the first for a moment."""
    parents = {pid: (_stat(str(pid)) or ("", 0))[1] for pid in found}
    return sum(1 for pid, name in found.items() if name in ("bwrap", "setpriv") and found.get(parents[pid]) != "bwrap")


def stdio(expected: str, inputs: str = "") -> str:
    """A ``tests`` value: one standard-input test with the expected output."""
    return json.dumps({"format": "stdio", "inputs": [inputs], "outputs": [expected]})


def block(code: str, tag: str = "python") -> str:
    """A completion holding ``code`` in a fenced block."""
    return f"Here is my solution.\n```{tag}\n{code}\n```\n"
