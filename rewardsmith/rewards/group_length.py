"""``group_length``: Kimi k1.5's length reward, relative to the other completions of the same prompt.

From the Kimi k1.5 report (and open-r1's ``len_reward``): within a prompt's
group, with ``min`` and ``max`` the shortest and longest completion,

``lambda = 0.5 - (length - min) / (max - min)``; a correct completion
scores ``lambda`` (the shortest 0.5, the longest -0.5), a wrong one
``min(0, lambda)`` (never a bonus for being short and wrong). A group whose
completions all have the same length scores 0.

The groups are the runs of identical consecutive prompts, as TRL passes
them, or every ``group_size`` rows (see
:func:`~rewardsmith.core.groups.prompt_groups`). open-r1 takes the minimum
and maximum over the whole batch, which mixes prompts; here each prompt's
group has its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rewardsmith.core.composite import Composite, Steps
from rewardsmith.core.engine import Scored
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.groups import prompt_groups
from rewardsmith.core.inputs import Batch
from rewardsmith.core.registry import register_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.rewards.length import CorrectnessInput, Unit, check_unit, measure_length

__all__ = ["GroupLength", "GroupRelative", "relative_to_group"]


def relative_to_group(
    costs: list[Any], correct: list[float | None], groups: Any, threshold: float, unit: str, explain: bool
) -> list[Any]:
    """Kimi's group-relative score of each row's cost (fewer is better), a bonus only when correct.

    ``0.5 - (cost - min) / (max - min)`` within each group of row indices for a
    correct row (at or above ``threshold``), ``min(0, ...)`` of it for a wrong
    one, 0 when the group's costs are equal, ``None`` when correctness is unknown.

    >>> relative_to_group([1, 3, 0], [1.0, 1.0, 0.0], [[0, 1, 2]], 1.0, "calls", False)
    [0.16666666666666669, -0.5, 0.0]
    """
    out: list[Any] = [None] * len(costs)
    for rows in groups:
        low = min(costs[i] for i in rows)
        high = max(costs[i] for i in rows)
        for i in rows:
            if correct[i] is None:
                value, reason = None, "correctness unknown"
            else:
                ok = correct[i] >= threshold
                lam = 0.0 if high == low else 0.5 - (costs[i] - low) / (high - low)
                value = lam if ok else min(0.0, lam)
                reason = f"{'correct' if ok else 'wrong'}, {costs[i]} {unit} in [{low}, {high}]"
            out[i] = RewardResult(value, reason) if explain else value
    return out


@dataclass
class GroupRelative(CorrectnessInput, Composite):
    """Base of the group-relative rewards: a cost per completion (:meth:`costs`), scored by :func:`relative_to_group`.

    Correctness comes from the ``correct_column`` or from another reward
    (``correctness=...``); groups are the prompt's completions (or every
    ``group_size`` rows).
    """

    correctness: Any = None
    correct_column: str = "correct"
    threshold: float = 1.0
    group_size: int | None = None
    #: What the costs count, for reasons.
    cost_unit: ClassVar[str] = "units"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.group_size is not None and self.group_size < 1:
            raise RewardConfigError(f"reward {self.name!r}: group_size must be >= 1, got {self.group_size}")
        self.resolve_correctness()

    def costs(self, batch: Batch) -> list[Any]:
        """The cost of each completion (fewer is better)."""
        raise NotImplementedError

    def unit_label(self) -> str:
        return self.cost_unit

    def steps(self, batch: Batch, explain: bool) -> Steps:
        correct, failed = yield from self.read_correctness(batch)
        groups = prompt_groups(batch, self.group_size, self.name)
        return Scored(
            relative_to_group(self.costs(batch), correct, groups, self.threshold, self.unit_label(), explain), failed
        )


@register_reward("group_length", aliases=("len_reward", "kimi_length"))
@dataclass
class GroupLength(GroupRelative):
    """Kimi k1.5's length reward: shorter than the prompt's other completions is better, if correct.

    ``0.5 - (length - min) / (max - min)`` over the prompt's group for a
    correct completion; ``min(0, ...)`` of it for a wrong one; 0 when all
    lengths are equal. Correctness comes from the ``correct_column`` (a bool
    or score per row, or its text as CSV holds it: ``"True"``/``"False"``;
    other text is an error before training) or from another reward
    (``correctness="math_accuracy"``); at or above ``threshold`` is correct,
    and an unknown correctness (``None``) gives ``None``. Lengths are in
    ``tokens`` (``completion_ids``; default), ``words`` or ``chars``.

    Columns: ``correct`` (configurable), or those of the ``correctness``
    reward. Range: [-0.5, 0.5].

    >>> r = GroupLength(unit="chars")
    >>> r(prompts=["p"] * 3 + ["q"] * 2, completions=["ab", "abcd", "abcdef", "a", "a"],
    ...   correct=[True, True, False, True, False])
    [0.5, 0.0, -0.5, 0.0, 0.0]
    """

    default_name = "group_length"
    score_range = (-0.5, 0.5)

    unit: Unit = "tokens"
    tokenizer: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        check_unit(self.name, self.unit)

    def unit_label(self) -> str:
        return self.unit

    def costs(self, batch: Batch) -> list[Any]:
        ids = batch.completion_ids or [None] * len(batch)
        return [measure_length(t, i, self.unit, self.tokenizer, self.name) for t, i in zip(batch.texts, ids)]
