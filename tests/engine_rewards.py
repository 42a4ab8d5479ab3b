"""Hostile per-sample rewards for the engine tests (importable, so worker processes can load them)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from dataclasses import dataclass

from rewardsmith import Reward, reward


@reward(timeout=1.0)
def hostile(completion: str) -> float:
    """Misbehaves on request: sleeps or loops forever, exits, segfaults, dies like the OOM killer did it."""
    if completion == "sleep":
        time.sleep(10_000)
    if completion == "loop":
        while True:
            pass
    if completion == "exit":
        os._exit(3)
    if completion == "segfault":
        ctypes.string_at(0)
    if completion == "oom":
        os.kill(os.getpid(), signal.SIGKILL)
    if completion == "raise":
        raise ValueError("asked to raise")
    return float(len(completion))


@reward
def worker_pid(completion: str) -> float:
    """The process id that scored the sample (a float, like any score)."""
    if completion.startswith("slow"):
        time.sleep(float(completion[4:] or 0.2))
    return float(os.getpid())


@dataclass
class BusyWork(Reward):
    """About ``millis`` milliseconds of pure-Python CPU work per sample."""

    millis: float = 5.0

    def score(self, completion: str) -> float:
        end = time.perf_counter() + self.millis / 1000
        n = 0
        while time.perf_counter() < end:
            n += 1
        return float(len(completion))


@dataclass
class PidByGroup(Reward):
    """The worker's process id; rows of the same ``group`` prefer the same worker."""

    def affinity(self, row: dict) -> object:
        return row["group"]

    def score(self, completion: str, group: str) -> float:
        time.sleep(0.05)
        return float(os.getpid())


@dataclass
class FlakyCheck(Reward):
    """A correctness check in [0, 1] that fails on request: ``boom`` raises, ``sleep`` never returns."""

    score_range = (0.0, 1.0)

    def score(self, completion: str) -> float:
        if "boom" in completion:
            raise RuntimeError("the checker broke")
        if "sleep" in completion:
            time.sleep(10_000)
        return 1.0 if "right" in completion else 0.0


@dataclass
class SpawnsChildren(Reward):
    """Starts processes that would run for ever (a busy child, a forked child, one in a session of its own),
    writes their pids to ``pid_file``, then sleeps past any timeout (``"stay"``) or returns (``"return"``)."""

    pid_file: str = ""

    def score(self, completion: str) -> float:
        import subprocess
        import sys

        busy = [sys.executable, "-c", "while True: pass"]
        pids = [subprocess.Popen(busy).pid, subprocess.Popen(busy, start_new_session=True).pid]
        child = os.fork()
        if child == 0:  # the forked child spins until killed
            while True:
                pass
        pids.append(child)
        with open(self.pid_file, "w") as handle:
            handle.write(" ".join(map(str, pids)))
        if completion == "stay":
            time.sleep(10_000)
        return 1.0


@contextlib.contextmanager
def warmed(r):
    """``r`` after one cheap call (the pool has measured the reward's cost and sends big batches); closed after."""
    try:
        assert r(completions=["a"] * 8) is not None
        yield r
    finally:
        r.close()
