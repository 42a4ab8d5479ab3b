"""Reward results and the normalisation of whatever a reward returns.

A reward may return a float, an int, a bool, ``None``, a NumPy or PyTorch
scalar, a :class:`RewardResult`, or a dict with ``score`` (verl's form; its
other keys are metrics); a batch reward may return a list, a tuple,
or a 1-D array or tensor. Everything is normalised here, in one place, to
``float | None``: bools become ``0.0``/``1.0``, NaN becomes ``None`` (the
sample is not scored), and anything that is not a number is a
:class:`~rewardsmith.core.errors.RewardReturnError` naming the reward.
"""

from __future__ import annotations

import math
import numbers
import traceback as _tb
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from rewardsmith.core.errors import RewardReturnError, RewardsmithError

__all__ = ["Failure", "NonFiniteScore", "RewardResult", "dict_metrics", "to_result", "to_score", "to_scores"]


@dataclass(slots=True)
class RewardResult:
    """A score with the reason for it, for evaluation and debugging.

    ``score`` is ``None`` when the reward does not apply to the sample (or
    failed on it, in which case ``error`` says why). ``metrics`` holds any
    extra numbers or sub-scores worth reporting.

    >>> RewardResult(1.0, "answer 42 matches the reference")
    RewardResult(score=1.0, reason='answer 42 matches the reference', metrics={}, error=None)
    >>> RewardResult(True).score  # normalised like any other return value
    1.0
    """

    score: float | None
    reason: str = ""
    metrics: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    def __post_init__(self) -> None:
        t = type(self.score)
        if t is not float and self.score is not None:
            self.score = to_score(self.score, "RewardResult")
        elif t is float and self.score != self.score:
            self.score = None


@dataclass
class Failure:
    """One sample that could not be scored: an exception, a timeout or a crash.

    Produced by the execution engine and turned into a score by the reward's
    ``on_error`` policy. ``kind`` is ``"error"``, ``"timeout"`` or ``"crash"``.
    """

    kind: str
    message: str
    exc_type: str = ""
    traceback: str = ""
    exc: BaseException | None = field(default=None, repr=False, compare=False)

    @property
    def signature(self) -> str:
        """What makes two failures 'the same kind' for logging once."""
        return f"{self.kind}:{self.exc_type}"

    def format_traceback(self) -> str:
        """The traceback of the failure, or its message when there is none."""
        if self.traceback:
            return self.traceback
        if self.exc is not None:
            self.traceback = "".join(_tb.format_exception(type(self.exc), self.exc, self.exc.__traceback__))
            return self.traceback
        return self.message


class NonFiniteScore(RewardsmithError, ValueError):
    """A reward returned +inf or -inf for one sample."""


def _slow_score(value: Any, reward_name: str) -> float | None:
    if isinstance(value, RewardResult):
        return value.score
    if isinstance(value, dict) and "score" in value:  # verl's {"score": ..., "acc": ...}: the rest are metrics
        return to_score(value["score"], reward_name)
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (numbers.Real, Decimal)) and not isinstance(value, complex):
        return _finite(float(value))
    # NumPy scalars and 0-d arrays, PyTorch 0-d tensors: anything with .item()
    # that holds exactly one element. Checked by duck typing so that neither
    # library has to be imported here.
    item = getattr(value, "item", None)
    if callable(item) and not isinstance(value, (str, bytes)):
        size = getattr(value, "size", None)
        size = size() if callable(size) and not isinstance(size, int) else size
        numel = getattr(value, "numel", None)
        count = numel() if callable(numel) else size
        if count == 1:
            inner = item()
            if isinstance(inner, (bool, int, float)) and not isinstance(inner, complex):
                return to_score(inner, reward_name)
    raise RewardReturnError(
        f"reward {reward_name!r} returned {value!r} ({type(value).__name__}); a reward must return "
        'a number, a bool, None, a RewardResult or a dict with "score" (verl\'s form) for each completion'
    )


def _finite(value: float) -> float | None:
    if value != value:
        return None
    if value in (math.inf, -math.inf):
        raise NonFiniteScore(f"score is {value}; rewards must be finite (return None to skip a sample)")
    return value


def to_score(value: Any, reward_name: str) -> float | None:
    """Normalise one return value to ``float | None``.

    >>> to_score(True, "demo"), to_score(3, "demo"), to_score(float("nan"), "demo")
    (1.0, 3.0, None)
    >>> to_score("1.0", "demo")
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.RewardReturnError: reward 'demo' returned '1.0' (str); ...
    """
    t = type(value)
    if t is float:
        if value != value:
            return None
        if value in (math.inf, -math.inf):
            raise NonFiniteScore(f"score is {value}; rewards must be finite (return None to skip a sample)")
        return value
    if t is int or t is bool:
        return float(value)
    if value is None:
        return None
    if t is RewardResult:
        return value.score  # normalised when the result was made
    return _slow_score(value, reward_name)


def to_result(value: Any, reward_name: str) -> RewardResult:
    """Normalise one return value to a :class:`RewardResult`.

    >>> to_result(0.5, "demo")
    RewardResult(score=0.5, reason='', metrics={}, error=None)
    """
    if isinstance(value, RewardResult):
        return value
    if isinstance(value, dict) and "score" in value:
        return RewardResult(to_score(value, reward_name), metrics=dict_metrics(value))
    return RewardResult(to_score(value, reward_name))


def dict_metrics(value: dict[Any, Any]) -> dict[str, Any]:
    """The keys of a returned ``{"score": ..., ...}`` other than ``score``: metrics to log beside the score.

    >>> dict_metrics({"score": 1.0, "acc": True, "pred": "18"})
    {'acc': True, 'pred': '18'}
    """
    return {str(k): v for k, v in value.items() if k != "score"}


def to_scores(values: Any, n: int, reward_name: str) -> list[Any]:
    """Normalise a batch reward's return value to a list of length ``n``.

    Accepts lists, tuples and 1-D arrays or tensors. Elements are left as they
    are (they are normalised one by one later, so that one bad element can be
    handled by the reward's ``on_error`` policy); only the container is checked.

    >>> to_scores((1, 0), 2, "demo")
    [1, 0]
    >>> to_scores([1.0], 2, "demo")
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.RewardReturnError: reward 'demo' returned 1 scores for 2 completions; ...
    """
    if isinstance(values, (list, tuple)):
        out = list(values)
    elif hasattr(values, "tolist") and getattr(values, "ndim", 1) == 1:
        out = values.tolist()
    elif isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
        raise RewardReturnError(
            f"reward {reward_name!r} returned {type(values).__name__}; a batch reward must return a list "
            "with one score per completion"
        )
    else:
        if getattr(values, "ndim", 1) != 1:
            raise RewardReturnError(
                f"reward {reward_name!r} returned an array of shape {getattr(values, 'shape', '?')}; "
                "a batch reward must return a 1-D list with one score per completion"
            )
        out = list(values)
    if len(out) != n:
        raise RewardReturnError(
            f"reward {reward_name!r} returned {len(out)} scores for {n} completions; a batch reward must "
            "return exactly one score (or None) per completion, in order"
        )
    return out
