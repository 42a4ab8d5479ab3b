"""Process trees: the CPUs this process may use, and killing a worker with everything it started.

A reward that runs code (a test harness, a compiler, ``subprocess``,
``fork``) starts processes of its own. When its worker is killed (a timeout)
or stopped (the pool closes, the parent exits), those must die too, or they
keep running at full CPU after the job. Each worker process is the leader of
its own process group and carries a tag in its environment
(:data:`TAG_VARIABLE`), which every process it starts inherits; killing a
worker kills its group, the descendants found in ``/proc`` (also those that
started a session of their own), and every process still carrying its tag
(also those orphaned by an earlier crash). Outside Linux the group is what
is killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

__all__ = ["TAG_VARIABLE", "descendants", "kill_tree", "tagged", "usable_cpus"]

#: The environment variable that marks a worker and every process it starts.
TAG_VARIABLE = "REWARDSMITH_WORKER_TAG"
_PROC = Path("/proc")


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the system has one).

    >>> usable_cpus() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _parents() -> dict[int, int]:
    out = {}
    for entry in _PROC.iterdir() if _PROC.is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1:
            out[int(entry.name)] = int(fields[1])
    return out


def descendants(pid: int) -> list[int]:
    """The processes ``pid`` started, and theirs, found in ``/proc`` (empty where there is no ``/proc``)."""
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def tagged(tag: str) -> list[int]:
    """The processes (of this user, other than this one) whose environment carries ``TAG_VARIABLE=tag``."""
    marker = f"{TAG_VARIABLE}={tag}".encode()
    found = []
    for entry in _PROC.iterdir() if _PROC.is_dir() else ():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def kill_tree(pid: int, tag: str | None = None, known: list[int] | None = None, *, group: bool = True) -> None:
    """``SIGKILL`` to ``pid``'s descendants, the processes carrying ``tag``, ``known`` ones, and ``pid``'s group.

    ``pid`` must lead its own process group (workers are started with a session of their own); with
    ``group=False`` the group is left alone (a worker ending what it started, but not itself).
    """
    targets = set(known or ()) | set(descendants(pid))
    if tag is not None:
        targets |= set(tagged(tag))
    targets.discard(os.getpid())
    for target in targets:
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.kill(target, signal.SIGKILL)
    if group:
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.killpg(pid, signal.SIGKILL)  # last: when called by the group's leader, this ends the caller
