"""When an evaluation failed: a reward whose scoring failed on every row (or on more than a set share).

An evaluation whose reward raised on every row measured nothing, so it is a
failure, not a table of ``None``. :class:`FailureTracker` keeps the first
failed row of each reward while the job runs; :func:`failed_rewards` then
names each reward over the limit with its error rate, its first error, and
the traceback of scoring that row again with ``on_error="raise"`` (results
rows keep only the message), which ``rewardsmith eval`` prints before it
exits with status 1.
"""

from __future__ import annotations

import math
import traceback
from typing import Any

from rewardsmith.core.inputs import Batch
from rewardsmith.core.reward import Reward

__all__ = ["FailureTracker", "check_max_error_rate", "failed_rewards"]


def check_max_error_rate(value: Any) -> str | None:
    """The problem with a ``max_error_rate`` setting, or ``None`` when it is a share in [0, 1] (or unset).

    >>> check_max_error_rate(0.2), check_max_error_rate(2)
    (None, 'max_error_rate must be a share between 0 and 1 (0.05: at most 5% of rows may fail), got 2')
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or not 0 <= value <= 1:
        return f"max_error_rate must be a share between 0 and 1 (0.05: at most 5% of rows may fail), got {value!r}"
    return None


class FailureTracker:
    """The first results row on which each reward failed (rows that had no completion to score aside)."""

    def __init__(self) -> None:
        self.first: dict[str, dict[str, Any]] = {}

    def add(self, row: dict[str, Any]) -> None:
        """Look at one results row."""
        if row.get("completion") is None:
            return
        for name, entry in row["rewards"].items():
            if entry.get("error") is not None and name not in self.first:
                self.first[name] = row


def _traceback_of(reward: Reward, row: dict[str, Any]) -> str:
    """The traceback of scoring ``row`` again, raising; empty when it does not fail again."""
    columns = {k: [v] for k, v in (row.get("columns") or {}).items()}
    batch = Batch.from_call([row.get("prompt")], [row["completion"]], None, columns, reward.name)
    try:
        raising = reward.configure(on_error="raise")
    except Exception:  # a reward without on_error (a composite), or the failure itself: both are answers
        return ""
    try:
        raising.run_batch(batch)
    except Exception:  # a reward without on_error (a composite), or the failure itself: both are answers
        return traceback.format_exc()
    return ""


def failed_rewards(
    summary: dict[str, Any], rewards: list[Reward], tracker: FailureTracker, max_error_rate: float | None
) -> dict[str, dict[str, Any]]:
    """Each reward whose error rate is 1 (or above ``max_error_rate``): rate, first error, traceback.

    >>> from rewardsmith import reward
    >>> @reward
    ... def broken(completion: str) -> float:
    ...     return 1 / 0
    >>> row = {"index": 0, "sample": 0, "prompt": "p", "completion": "c", "columns": {},
    ...        "rewards": {"broken": {"score": None, "error": "ZeroDivisionError: division by zero"}}}
    >>> tracker = FailureTracker()
    >>> tracker.add(row)
    >>> summary = {"rewards": {"broken": {"rows": 1, "error_rate": 1.0}}}
    >>> failed = failed_rewards(summary, [broken], tracker, None)
    >>> failed["broken"]["error"], "ZeroDivisionError" in failed["broken"]["traceback"]
    ('ZeroDivisionError: division by zero', True)
    """
    out: dict[str, dict[str, Any]] = {}
    by_name = {r.name: r for r in rewards}
    for name, stats in summary["rewards"].items():
        rate = stats.get("error_rate") or 0.0
        if not stats.get("rows") or rate == 0:
            continue
        if rate < 1.0 and (max_error_rate is None or rate <= max_error_rate):
            continue
        row = tracker.first.get(name)
        entry = {"error_rate": rate, "max_error_rate": max_error_rate, "error": None, "traceback": ""}
        if row is not None:
            entry["error"] = row["rewards"][name].get("error")
            if name in by_name:
                entry["traceback"] = _traceback_of(by_name[name], row)
        out[name] = entry
    return out
