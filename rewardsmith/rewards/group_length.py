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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rewardsmith.core.composite import Composite, Steps
from rewardsmith.core.engine import Scored
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.groups import prompt_groups
from rewardsmith.core.injection import Column, Input
from rewardsmith.core.inputs import Batch
from rewardsmith.core.registry import get_reward, register_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward
from rewardsmith.rewards.length import Unit, check_correct_column, check_unit, correct_or_unknown, measure_length

__all__ = ["GroupLength"]


@register_reward("group_length", aliases=("len_reward", "kimi_length"))
@dataclass
class GroupLength(Composite):
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

    correctness: Any = None
    correct_column: str = "correct"
    threshold: float = 1.0
    unit: Unit = "tokens"
    tokenizer: str | None = None
    group_size: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        check_unit(self.name, self.unit)
        if self.group_size is not None and self.group_size < 1:
            raise RewardConfigError(f"reward {self.name!r}: group_size must be >= 1, got {self.group_size}")
        if self.correctness is not None:
            self.correctness = get_reward(self.correctness)

    def components(self) -> list[Reward]:
        return [self.correctness] if self.correctness is not None else []

    def inputs(self) -> dict[str, Input]:
        return {} if self.correctness is not None else {"correct": Column(self.correct_column)}

    def check_data(self, columns: dict[str, Sequence[Any]]) -> None:
        check_correct_column(self, self.correct_column, columns.get("correct"))

    def steps(self, batch: Batch, explain: bool) -> Steps:
        failed: set[int] = set()
        if self.correctness is not None:
            (scored,) = yield [(self.correctness, batch)]
            correct, failed = scored.scores, scored.failed
        else:
            correct = [correct_or_unknown(v) for v in self.injection.values(batch, "correct") or []]
        ids = batch.completion_ids or [None] * len(batch)
        lengths = [measure_length(t, i, self.unit, self.tokenizer, self.name) for t, i in zip(batch.texts, ids)]
        out: list[Any] = [None] * len(batch)
        for rows in prompt_groups(batch, self.group_size, self.name):
            low = min(lengths[i] for i in rows)
            high = max(lengths[i] for i in rows)
            for i in rows:
                if correct[i] is None:
                    value, reason = None, "correctness unknown"
                else:
                    ok = correct[i] >= self.threshold
                    lam = 0.0 if high == low else 0.5 - (lengths[i] - low) / (high - low)
                    value = lam if ok else min(0.0, lam)
                    reason = f"{'correct' if ok else 'wrong'}, {lengths[i]} {self.unit} in [{low}, {high}]"
                out[i] = RewardResult(value, reason) if explain else value
        return Scored(out, failed)
