"""What the composition operations share: turning their arguments into rewards and weights, labels, logging.

The machinery that runs a composite's components (sync or async, each scored
once per call) is the core's: :mod:`rewardsmith.core.composite`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rewardsmith.core.composite import failure_floor
from rewardsmith.core.engine import Scored
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.registry import get_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward

__all__ = ["as_reward", "as_weight", "floored", "fmt", "log_component", "mean_and_rate", "unique_labels"]


def as_reward(obj: Any, what: str) -> Reward:
    """``obj`` as a reward (anything :func:`~rewardsmith.get_reward` accepts), with ``what`` in errors.

    >>> as_reward("think_format", "gate: condition").name
    'think_format'
    """
    try:
        return get_reward(obj)
    except RewardConfigError as exc:
        raise type(exc)(f"{what}: {exc}") from exc


def as_weight(value: Any, what: str) -> float:
    """A finite number as a float; a clear error for anything else (bools included)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise RewardConfigError(f"{what} must be a finite number, got {value!r}")
    return float(value)


def unique_labels(names: Iterable[str]) -> list[str]:
    """Names made distinct for logging: the second ``x`` becomes ``x_2``, the third ``x_3``.

    >>> unique_labels(["think_format", "gsm8k_accuracy", "think_format"])
    ['think_format', 'gsm8k_accuracy', 'think_format_2']
    """
    seen: dict[str, int] = {}
    out: list[str] = []
    taken = set()
    for name in names:
        label = name
        while label in taken:
            seen[name] = seen.get(name, 1) + 1
            label = f"{name}_{seen[name]}"
        taken.add(label)
        out.append(label)
    return out


def mean_and_rate(scores: Sequence[float | None], n: int) -> tuple[float | None, float]:
    """The mean over the scored rows (``None`` if none is) and the share of ``n`` rows that are scored."""
    present = [s for s in scores if s is not None]
    if not present:
        return None, 0.0
    return math.fsum(present) / len(present), len(present) / n if n else 0.0


def log_component(
    log: Callable[[str, float], None] | None, prefix: str, scores: Sequence[float | None], n: int
) -> None:
    """Log ``prefix`` (mean over applicable rows, when any) and ``prefix/applicable`` through TRL's ``log_metric``."""
    if log is None:
        return
    mean, rate = mean_and_rate(scores, n)
    if mean is not None:  # TRL averages logged values, so a batch where nothing applies logs no mean
        log(prefix, mean)
    log(f"{prefix}/applicable", rate)


def floored(scored: Scored, reward: Reward) -> Scored:
    """A component's result with its failed rows counted at its lowest score, when it declares one."""
    floor = failure_floor(reward)
    if not scored.failed or floor is None:
        return scored
    values = list(scored.values)
    for i in scored.failed:
        value = values[i]
        if isinstance(value, RewardResult):
            values[i] = RewardResult(floor, f"{value.reason} (failed: counted as its lowest score)", value.metrics)
        else:
            values[i] = floor
    return Scored(values)


def fmt(value: float | None) -> str:
    """A score for a reason string: ``0.5``, ``1``, ``None``."""
    return "None" if value is None else f"{value:.4g}"
