"""TRL's rule for combining rewards: the weighted sum of the rewards that apply to a sample, ``None`` when none does.

The rewards a config file or a list of names describes are read by the config
layer (:func:`rewardsmith.config.rewards.rewards_from_spec`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["weighted_sum"]


def weighted_sum(per_reward: Sequence[Sequence[float | None]], weights: Sequence[float]) -> list[float | None]:
    """Per sample, the weighted sum of the rewards that apply (TRL's rule); ``None`` where none applies.

    >>> weighted_sum([[1.0, None, None], [0.5, 1.0, None]], [2.0, 1.0])
    [2.5, 1.0, None]
    """
    n = len(per_reward[0]) if per_reward else 0
    out: list[float | None] = []
    for i in range(n):
        parts = [w * scores[i] for scores, w in zip(per_reward, weights) if scores[i] is not None]
        out.append(math.fsum(parts) if parts else None)
    return out
