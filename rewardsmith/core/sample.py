"""Scoring one sample: the call, the normalisation, and turning exceptions into failures.

Shared by the in-process path and the worker processes, so both behave alike.
"""

from __future__ import annotations

from typing import Any

from rewardsmith.core.errors import RewardConfigError, RewardReturnError
from rewardsmith.core.result import Failure

__all__ = ["failure_from_exception", "score_sample"]


def failure_from_exception(exc: BaseException, *, with_traceback: bool) -> Failure:
    """A :class:`Failure` describing ``exc`` (its traceback formatted now, if asked)."""
    failure = Failure("error", f"{type(exc).__name__}: {exc}", type(exc).__name__, exc=exc)
    if with_traceback:  # a worker sends text: exceptions and their frames do not travel
        failure.format_traceback()
        failure.exc = None
    return failure


def score_sample(fn: Any, to_result: Any, kwargs: dict[str, Any], *, in_worker: bool) -> tuple[str, Any]:
    """Score one sample: ``("ok", RewardResult)``, ``("error", Failure)`` or ``("fatal", message)``.

    ``fatal`` is a bad return value or a configuration error (raised whatever
    the error policy: not a property of one sample). ``KeyboardInterrupt`` always propagates so Ctrl-C stops.
    """
    try:
        return "ok", to_result(fn(**kwargs))
    except (RewardReturnError, RewardConfigError) as exc:
        return "fatal", exc
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        return "error", failure_from_exception(exc, with_traceback=in_worker)
