"""One evaluation job writes a folder at a time: the lock on ``.lock``, whatever the platform and file system.

Two things say a job holds a folder, and either refuses a second one (with or
without ``--overwrite``):

* an operating-system lock on ``.lock``: ``flock`` (POSIX) or ``msvcrt.locking``
  (Windows), released by the system when the process dies;
* the holder's record in ``.lock`` (process id, host, the process's start
  time): where no such lock exists or a file system grants it to everyone, a
  record left by a live process on this host still refuses. A record whose
  process is gone (or is another process that reused its id) is stale and is
  replaced. The record is cleared when the job ends.
"""

from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path
from typing import IO, Any

from rewardsmith.core.errors import RewardsmithError

__all__ = ["FolderLock", "FolderLockedError"]


class FolderLockedError(RewardsmithError, OSError):
    """Another job holds the folder (the message names its process)."""


def _start_time(pid: int) -> str:
    """When process ``pid`` started (clock ticks since boot, from ``/proc``), or ``""`` where unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rpartition(")")[2].split()[19]


def _record() -> str:
    return f"{os.getpid()} {socket.gethostname()} {_start_time(os.getpid())}"


def _alive(record: str) -> bool:
    """Whether the process a record names still runs (only knowable on this host, outside Windows)."""
    parts = record.split()
    if len(parts) < 2 or not parts[0].isdigit() or parts[1] != socket.gethostname() or os.name == "nt":
        return False
    pid = int(parts[0])
    if pid == os.getpid():
        return True  # this process holds it already (a second job of the same process)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, under another user
    started = parts[2] if len(parts) > 2 else ""
    return not started or started == _start_time(pid) or not _start_time(pid)


def _system_lock(handle: IO[str]) -> bool:
    """Take the operating system's lock on ``handle``; False when another process holds it."""
    try:
        import fcntl
    except ImportError:
        fcntl = None  # type: ignore[assignment]
    if fcntl is not None:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        return True
    try:
        import msvcrt
    except ImportError:
        return True  # neither: the record alone says who holds the folder
    try:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
    except OSError:
        return False
    return True


class FolderLock:
    """The lock of one folder (``path`` is the ``.lock`` file); :meth:`take` raises :class:`FolderLockedError`.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / ".lock"
    >>> first = FolderLock(path); first.take()
    >>> FolderLock(path).take()
    Traceback (most recent call last):
    ...
    rewardsmith.evaluation.folder_lock.FolderLockedError: pid ... holds the folder
    >>> first.release(); second = FolderLock(path); second.take(); second.release()
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: Any = None

    def take(self) -> None:
        handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release()
        try:
            if not _system_lock(handle):
                raise FolderLockedError(f"pid {self._holder(handle) or '(another process)'} holds the folder")
            recorded = self._holder(handle)
            if recorded and _alive(recorded) and not self._mine(recorded):
                raise FolderLockedError(f"pid {recorded.split()[0]} holds the folder")
            if recorded and self._mine(recorded) and FolderLock._held_here(self.path):
                raise FolderLockedError(f"pid {recorded.split()[0]} holds the folder")
            handle.seek(0)
            handle.truncate()
            handle.write(_record())
            handle.flush()
        except BaseException:
            handle.close()
            raise
        self._handle = handle
        _HELD.add(self.path.resolve())

    def release(self) -> None:
        if self._handle is None:
            return
        with contextlib.suppress(OSError):
            self._handle.seek(0)
            self._handle.truncate()  # no record left: the next job need not decide whether it is stale
            self._handle.flush()
        self._handle.close()  # closing the file releases the system's lock
        self._handle = None
        _HELD.discard(self.path.resolve())

    @staticmethod
    def _holder(handle: IO[str]) -> str:
        handle.seek(0)
        return handle.read(200).strip()

    @staticmethod
    def _mine(record: str) -> bool:
        return record.split()[:1] == [str(os.getpid())] and record.split()[1:2] == [socket.gethostname()]

    @staticmethod
    def _held_here(path: Path) -> bool:
        return path.resolve() in _HELD


#: Lock files this process holds (a job of this process holds a folder against another job of it, too).
_HELD: set[Path] = set()
