"""What a reward counts while it runs: samples, errors, timeouts, crashes; and how failures are reported.

Each reward object keeps one :class:`RewardStats` per process (never pickled).
After every batch, :meth:`RewardStats.account` counts the batch's failures
and unscored samples, keeps the first failure (with its traceback) and the
last batch's scores for monitors to read, raises for ``on_error="raise"``,
logs the first traceback of each kind of failure once, and reports counts
through TRL's ``log_metric`` as ``<name>/errors`` (and ``<name>/timeouts`` for
rewards with a timeout).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from rewardsmith.core.errors import RewardExecutionError
from rewardsmith.core.result import Failure

__all__ = ["RewardStats"]

logger = logging.getLogger("rewardsmith")


class RewardStats:
    """Counts of one reward's samples and failures in this process, and the reporting of failures.

    >>> stats = RewardStats()
    >>> stats.account("demo", "none", [(1, Failure("timeout", "timed out after 1s", "Timeout"))], 4, None, True)
    >>> stats.as_dict()
    {'samples': 4, 'errors': 1, 'timeouts': 1, 'crashes': 0}
    >>> stats.first_failure.kind, stats.batches
    ('timeout', 1)
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.samples = 0
        self.errors = 0
        self.timeouts = 0
        self.crashes = 0
        #: Samples that were not scored (``None``: not applicable, or failed under ``on_error="none"``).
        self.nones = 0
        #: Batches scored so far.
        self.batches = 0
        #: The first failure seen in this process (its traceback kept), for messages about a failing reward.
        self.first_failure: Failure | None = None
        #: The scores of the last batch (a reference to the list returned, not a copy), for monitors.
        self.last_scores: list[float | None] | None = None
        self.seen: set[str] = set()

    def as_dict(self) -> dict[str, int]:
        """The counts: samples scored, errors (all failures), timeouts, worker crashes."""
        return {"samples": self.samples, "errors": self.errors, "timeouts": self.timeouts, "crashes": self.crashes}

    def account(
        self,
        name: str,
        on_error: str,
        failures: list[tuple[int, Failure]],
        n: int,
        log_metric: Callable[[str, float], None] | None,
        log_timeouts: bool,
        scores: list[float | None] | None = None,
    ) -> None:
        """Count, log and (for ``on_error="raise"``) raise the failures of one batch of ``n`` samples.

        ``scores`` are the batch's scores (``None`` where not scored), counted
        and kept as :attr:`last_scores`.
        """
        timeouts = sum(1 for _, f in failures if f.kind == "timeout")
        crashes = sum(1 for _, f in failures if f.kind == "crash")
        with self.lock:
            self.samples += n
            self.batches += 1
            self.errors += len(failures)
            self.timeouts += timeouts
            self.crashes += crashes
            if scores is not None:
                self.nones += scores.count(None)
                self.last_scores = scores
            if failures and self.first_failure is None:
                self.first_failure = failures[0][1]
                self.first_failure.format_traceback()
            new = []
            for index, failure in failures:
                if failure.signature not in self.seen:
                    self.seen.add(failure.signature)
                    new.append((index, failure))
        if failures and on_error == "raise":
            index, failure = failures[0]
            if failure.exc is not None:
                raise failure.exc
            raise RewardExecutionError(
                f"reward {name!r} failed on sample {index} ({failure.message}):\n{failure.format_traceback()}"
            )
        for index, failure in new:
            what = {"timeout": "timed out", "crash": "crashed its worker"}.get(failure.kind, "raised an error")
            logger.warning(
                "reward %r %s on sample %d; it scores %s (on_error=%r). Shown once per kind of failure; "
                "all are counted in %s/errors.\n%s",
                name,
                what,
                index,
                "None" if on_error == "none" else "0.0",
                on_error,
                name,
                failure.format_traceback().rstrip(),
            )
        if failures and not new:
            logger.debug("reward %r: %d samples failed in this batch", name, len(failures))
        if log_metric is not None:
            log_metric(f"{name}/errors", float(len(failures)))
            if log_timeouts:
                log_metric(f"{name}/timeouts", float(timeouts))
