"""Prompt groups and per-component normalisation.

GRPO samples several completions per prompt and compares them within that
*group*; :func:`~rewardsmith.core.groups.prompt_groups` finds the groups of a
batch (it lives in the core, so that rewards can use it too). Two groups of the
same prompt that happen to be adjacent merge into one run; they are
completions of the same prompt, so normalising them together is sound. (In
multi-process training a process may hold only part of a group; the part it
holds is normalised.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.groups import prompt_groups

__all__ = ["NORMALIZE_CHOICES", "Normalize", "normalize_scores", "prompt_groups"]

Normalize = Literal["minmax", "zscore", "rank"]
NORMALIZE_CHOICES: tuple[str, ...] = ("minmax", "zscore", "rank")


def _minmax(values: Sequence[float]) -> list[float]:
    lo, hi = min(values), max(values)
    if hi == lo:
        return [0.0] * len(values)
    span = hi - lo
    return [(v - lo) / span for v in values]


def _zscore(values: Sequence[float]) -> list[float]:
    if min(values) == max(values):
        return [0.0] * len(values)
    mean = math.fsum(values) / len(values)
    deviations = [v - mean for v in values]
    # Scaled by the largest deviation first, so that tiny or huge scores neither underflow nor overflow.
    scale = max(map(abs, deviations))
    unit = [d / scale for d in deviations]
    # The rounding of the mean can be large next to the deviations when the scores are close: centre again.
    residual = math.fsum(unit) / len(unit)
    unit = [u - residual for u in unit]
    std = math.sqrt(math.fsum(u * u for u in unit) / len(unit))
    return [u / std for u in unit]


def _rank(values: Sequence[float]) -> list[float]:
    m = len(values)
    if m == 1:
        return [0.5]
    order = sorted(range(m), key=values.__getitem__)
    ranks = [0.0] * m
    i = 0
    while i < m:
        j = i
        while j + 1 < m and values[order[j + 1]] == values[order[i]]:
            j += 1
        average = (i + j) / 2  # ties share the average of their 0-based ranks
        for k in range(i, j + 1):
            ranks[order[k]] = average / (m - 1)
        i = j + 1
    return ranks


_METHODS = {"minmax": _minmax, "zscore": _zscore, "rank": _rank}


def normalize_scores(
    scores: Sequence[float | None], method: Normalize, groups: Sequence[range] | None = None
) -> list[float | None]:
    """One component's scores normalised; ``None`` (not scored) stays ``None`` and is left out of the statistics.

    * ``"minmax"``: ``(s - min) / (max - min)`` over the given rows, in [0, 1];
      0 for every row when all scores are equal.
    * ``"zscore"``: ``(s - mean) / std`` (population std) within each group; mean 0
      and std 1 in each group, 0 for every row of a group whose scores are all equal.
    * ``"rank"``: the average rank within each group scaled to [0, 1] (lowest 0,
      highest 1, ties share their average); 0.5 for a group of one or of equal scores.

    ``groups`` are the rows normalised together (default: all rows as one group).

    >>> normalize_scores([1.0, None, 3.0, 2.0], "minmax")
    [0.0, None, 1.0, 0.5]
    >>> normalize_scores([1.0, 3.0, 5.0, 5.0], "zscore", [range(0, 2), range(2, 4)])
    [-1.0, 1.0, 0.0, 0.0]
    >>> normalize_scores([0.2, 0.9, 0.2, 0.5], "rank")
    [0.16666666666666666, 1.0, 0.16666666666666666, 0.6666666666666666]
    """
    fn = _METHODS.get(method)
    if fn is None:
        choices = ", ".join(map(repr, NORMALIZE_CHOICES))
        raise RewardConfigError(f"normalize must be one of {choices} or None, got {method!r}")
    out: list[float | None] = list(scores)
    for rows in groups if groups is not None else [range(len(scores))]:
        present = [i for i in rows if scores[i] is not None]
        if present:
            for i, value in zip(present, fn([scores[i] for i in present])):  # type: ignore[misc]
                out[i] = value
    return out
