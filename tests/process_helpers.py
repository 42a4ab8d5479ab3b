"""Looking at the process table from tests: whether a process still runs, and waiting for processes to end."""

from __future__ import annotations

import os
import time


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie is dead for our purposes)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(") ", 1)[1][0] != "Z"
    except OSError:
        return True


def wait_gone(pids, seconds: float = 30.0) -> list[int]:
    """Wait up to ``seconds`` for every process in ``pids`` to end; those still running.

    The bound is a hang guard, generous for a busy machine: it returns as soon as they are gone.
    """
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        running = [p for p in pids if alive(p)]
        if not running:
            return []
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def default_sigint() -> None:
    """A ``preexec_fn``: the child takes SIGINT as a terminal's Ctrl-C, even where this process ignores it.

    A shell starts background jobs with SIGINT ignored and children inherit that; Python then installs no
    ``KeyboardInterrupt`` handler, so a test that presses Ctrl-C on a child would see it ignored.
    """
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
