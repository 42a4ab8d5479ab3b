"""How the local pool sends samples to its workers in batches, and what one batch in flight knows.

One message to a worker and its answer cost the dispatcher 100-250 µs under
load, more than a cheap reward spends on a sample; so samples travel in
batches sized by the reward's measured cost (the workers report the time they
spent): the first batch of a pool is one sample per worker; after that each
holds about :data:`BATCH_SECONDS` of work, never more than an equal share of
what is left (every worker gets work), at most :data:`MAX_BATCH` samples.

A worker reports results as it goes: after each sample once :func:`report_every`
seconds have passed since its last report, and at the end. That keeps the
per-sample guarantees:

* a deadline runs from the last report: the sample running then started at most
  ``report_every`` after it, so killing at ``last report + timeout +
  report_every`` never cuts a sample short of its ``timeout`` (and a sample
  that hangs is stopped at most a quarter of its ``timeout``, and 50 ms, late);
* when a worker is killed (a timeout) or dies (a crash), the results it reported
  are kept; when one sample was without a result, it is the one; when more were,
  they are sent again one per batch (*careful*), which finds the one that hangs
  or crashes while the others are scored (that one runs twice).

>>> sizes = BatchSizes(workers=2)
>>> sizes.take(pending=100)  # no cost measured yet: one sample
1
>>> sizes.measured(seconds=0.001, count=10)  # 0.1 ms a sample
>>> sizes.take(pending=100), sizes.take(pending=1000)
(50, 200)
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BATCH_SECONDS", "MAX_BATCH", "BatchSizes", "Task", "report_every"]

#: Seconds of work a batch aims at, once the reward's cost is measured.
BATCH_SECONDS = float(os.environ.get("REWARDSMITH_POOL_BATCH_SECONDS", "0.02"))
#: The most samples in one batch (bounds what a crash sends again one by one).
MAX_BATCH = 256
_REPORT_SECONDS = 0.05


def report_every(timeout: float | None, careful: bool) -> float:
    """Seconds between a worker's reports: every sample when ``careful``; else at most a quarter of ``timeout``.

    >>> report_every(None, False), report_every(0.1, False), report_every(10.0, True)
    (0.05, 0.025, 0.0)
    """
    if careful:
        return 0.0
    return _REPORT_SECONDS if timeout is None else min(_REPORT_SECONDS, timeout / 4)


@dataclass
class BatchSizes:
    """The batch size for a pool of ``workers``, from the measured seconds per sample (kept between calls).

    ``target`` (seconds of work a batch aims at; :data:`BATCH_SECONDS` when ``None``) and ``most`` (samples at
    most) are the pool's: the Ray engine's batches are bigger, as a Ray call costs more than a pipe message.
    """

    workers: int
    cost: float | None = None
    target: float | None = None
    most: int = MAX_BATCH

    def measured(self, seconds: float, count: int) -> None:
        """Fold in ``count`` samples that took ``seconds`` (a moving average, so a slow first sample fades)."""
        if count <= 0:
            return
        per = max(seconds / count, 1e-7)
        self.cost = per if self.cost is None else 0.5 * self.cost + 0.5 * per

    def take(self, pending: int) -> int:
        """How many of ``pending`` samples the next batch takes."""
        if self.cost is None:
            return 1
        share = math.ceil(pending / max(1, self.workers))
        target = BATCH_SECONDS if self.target is None else self.target
        return max(1, min(int(target / self.cost), share, self.most))


@dataclass
class Task:
    """One batch in flight on one worker: its handle (the pool's task id, the Ray engine's stream), its rows
    (indices of the call), how many came back, when last."""

    handle: Any
    rows: list[int]
    careful: bool
    every: float
    progress_at: float = field(default_factory=time.monotonic)
    done: int = 0

    def deadline(self, timeout: float | None) -> float | None:
        """When the sample running now has had its ``timeout`` for sure (see the module docs)."""
        return None if timeout is None else self.progress_at + timeout + self.every

    @property
    def unreported(self) -> list[int]:
        return self.rows[self.done :]

    @property
    def finished(self) -> bool:
        return self.done >= len(self.rows)
