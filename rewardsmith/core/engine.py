"""The execution engine: how samples run, and what happens when they fail.

A reward's engine settings are ``timeout``, ``workers`` and ``on_error``
(plus ``max_concurrency`` for async rewards). This module holds the parts of
running a reward that do not depend on how it was written:

* :func:`run_inline` scores samples in this process (no timeout, one worker);
* :class:`~rewardsmith.core.pool.WorkerPool` scores them in worker processes
  (a timeout, or several workers);
* :class:`Runtime` keeps per-reward state that must not be pickled: the pool,
  the counters, which kinds of failure were already logged;
* :meth:`Runtime.account` applies ``on_error`` to failures, counts them, logs
  the first traceback of each kind once, and reports counts through TRL's
  ``log_metric``.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from typing import Any, Literal

from rewardsmith.core.errors import RewardConfigError, RewardExecutionError, RewardReturnError
from rewardsmith.core.result import Failure
from rewardsmith.core.sample import failure_from_exception

__all__ = ["ON_ERROR_CHOICES", "OnError", "Runtime", "map_inline", "run_inline", "validate_engine_settings"]

logger = logging.getLogger("rewardsmith")

OnError = Literal["none", "zero", "raise"]
ON_ERROR_CHOICES: tuple[str, ...] = ("none", "zero", "raise")


def validate_engine_settings(name: str, timeout: Any, workers: Any, on_error: Any) -> None:
    """Raise a clear :class:`RewardConfigError` for impossible engine settings."""
    if on_error not in ON_ERROR_CHOICES:
        raise RewardConfigError(
            f"reward {name!r}: on_error must be one of {', '.join(map(repr, ON_ERROR_CHOICES))}, got {on_error!r}"
        )
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        raise RewardConfigError(
            f"reward {name!r}: timeout must be a positive number of seconds or None, got {timeout!r}"
        )
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise RewardConfigError(f"reward {name!r}: workers must be a whole number >= 1, got {workers!r}")


def _call_with_row(fn: Callable[..., Any], row: dict[str, Any]) -> Any:
    return fn(**row)


def run_inline(fn: Callable[..., Any], rows: list[dict[str, Any]], *, raise_errors: bool, name: str) -> list[Any]:
    """Call ``fn(**row)`` for each row in this process; exceptions become :class:`Failure` objects.

    With ``raise_errors`` the first exception propagates at once, with a note
    naming the reward and the sample.
    """
    return map_inline(functools.partial(_call_with_row, fn), [rows], raise_errors=raise_errors, name=name)


def map_inline(fn: Callable[..., Any], columns: list[list[Any]], *, raise_errors: bool, name: str) -> list[Any]:
    """Call ``fn`` on each row of the columns (positional arguments) in this process.

    ``map`` runs the loop in C; when one call raises, its arguments have
    already been consumed, so the loop resumes at the next sample and the
    failure is recorded at the right index.
    """
    out: list[Any] = []
    calls = map(fn, *columns)
    while True:
        try:
            out.extend(calls)
            return out
        except (KeyboardInterrupt, RewardConfigError, RewardReturnError):
            raise  # Ctrl-C, a misconfigured reward and a bad return value are never per-sample failures
        except BaseException as exc:  # math-verify's timeout is a BaseException
            if raise_errors:
                note = getattr(exc, "add_note", None)
                if note is not None:
                    note(f"while reward {name!r} scored sample {len(out)}")
                raise
            out.append(failure_from_exception(exc, with_traceback=False))


class Runtime:
    """Per-reward state that lives in this process only (never pickled or copied)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pool: Any = None
        self.injection: Any = None
        self.samples = 0
        self.errors = 0
        self.timeouts = 0
        self.crashes = 0
        self.seen: set[str] = set()

    def stats(self) -> dict[str, int]:
        return {"samples": self.samples, "errors": self.errors, "timeouts": self.timeouts, "crashes": self.crashes}

    def account(
        self,
        name: str,
        on_error: str,
        failures: list[tuple[int, Failure]],
        n: int,
        log_metric: Callable[[str, float], None] | None,
        log_timeouts: bool,
    ) -> None:
        """Count, log and (for ``on_error="raise"``) raise the failures of one batch."""
        timeouts = sum(1 for _, f in failures if f.kind == "timeout")
        crashes = sum(1 for _, f in failures if f.kind == "crash")
        with self.lock:
            self.samples += n
            self.errors += len(failures)
            self.timeouts += timeouts
            self.crashes += crashes
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
