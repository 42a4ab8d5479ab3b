"""Prompt groups: the rows of a batch that are completions of the same prompt.

GRPO samples several completions per prompt and compares them within that
*group*. TRL passes the completions of one prompt consecutively and does not
pass the group size to reward functions, so the groups are inferred as runs of
identical consecutive prompts, or cut every ``group_size`` rows when that is
given. Used by group normalisation (:mod:`rewardsmith.compose.groups`) and by
rewards that compare a completion with its group (``group_length``).
"""

from __future__ import annotations

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.inputs import Batch

__all__ = ["prompt_groups"]


def prompt_groups(batch: Batch, group_size: int | None = None, reward_name: str = "reward") -> list[range]:
    """The rows of each prompt's group, in order.

    >>> b = Batch.from_call(["p", "p", "q", "q", "q"], ["a", "b", "c", "d", "e"], None, {})
    >>> prompt_groups(b)
    [range(0, 2), range(2, 5)]
    >>> prompt_groups(Batch.from_call(None, ["a", "b", "c", "d"], None, {}), group_size=2)
    [range(0, 2), range(2, 4)]
    """
    n = len(batch)
    if group_size is not None:
        if n % group_size:
            raise RewardConfigError(
                f"reward {reward_name!r}: a batch of {n} completions does not split into groups of "
                f"group_size={group_size}; set group_size to TRL's num_generations, or leave it unset to infer "
                "the groups from consecutive identical prompts"
            )
        return [range(start, start + group_size) for start in range(0, n, group_size)]
    prompts = batch.prompts
    if prompts is None:
        return [range(n)] if n else []
    groups = []
    start = 0
    for i in range(1, n):
        if prompts[i] != prompts[i - 1]:
            groups.append(range(start, i))
            start = i
    if n:
        groups.append(range(start, n))
    return groups
