"""Gating: a reward that counts only where another one reaches a threshold."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rewardsmith.compose.common import as_reward, as_weight, fmt, log_component, unique_labels
from rewardsmith.core.composite import AsyncComposite, Composite, Steps, any_async, failure_floor
from rewardsmith.core.engine import Scored
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.inputs import Batch
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward

__all__ = ["AsyncGated", "Gated", "gate"]


@dataclass(eq=False, repr=False)
class Gated(Composite):
    """``reward`` where ``condition`` reaches ``threshold``, else ``otherwise``; what :func:`gate` returns."""

    condition: Any
    reward: Any
    threshold: float = 1.0
    otherwise: float | None = 0.0
    lazy: bool = False

    def __post_init__(self) -> None:
        self.condition = as_reward(self.condition, "gate: condition")
        self.reward = as_reward(self.reward, "gate: reward")
        self.threshold = as_weight(self.threshold, "gate: threshold")
        if self.otherwise is not None:
            self.otherwise = as_weight(self.otherwise, "gate: otherwise")
        if not isinstance(self.lazy, bool):
            raise RewardConfigError(f"gate: lazy must be true or false, got {self.lazy!r}")
        super().__post_init__()

    def components(self) -> list[Reward]:
        return [self.condition, self.reward]

    @property
    def labels(self) -> list[str]:
        """The names of the condition and the reward as logged under this reward's name."""
        return unique_labels([self.condition.name, self.reward.name])

    @property
    def default_name(self) -> str:  # type: ignore[override]
        return f"{self.reward.name}_if_{self.condition.name}"

    def __repr__(self) -> str:
        extra = "".join(
            f", {key}={getattr(self, key)!r}"
            for key, default in (("threshold", 1.0), ("otherwise", 0.0), ("lazy", False))
            if getattr(self, key) != default
        )
        named = f".named({self.name!r})" if "_name" in self.__dict__ else ""
        return f"gate({self.condition.name}, {self.reward.name}{extra}){named}"

    def steps(self, batch: Batch, explain: bool) -> Steps:
        n = len(batch)
        if self.lazy:
            (cond,) = yield [(self.condition, batch)]
            opened = [i for i, c in enumerate(cond.scores) if c is not None and c >= self.threshold]
            (sub,) = yield [(self.reward, batch.subset(opened))]
            inner = Scored([None] * n, {opened[j] for j in sub.failed})
            for j, i in enumerate(opened):
                inner.values[i] = sub.values[j]
        else:
            cond, inner = yield [(self.condition, batch), (self.reward, batch)]
        cond_scores, inner_scores = cond.scores, inner.scores
        log = batch.log_metric
        cond_label, reward_label = self.labels
        log_component(log, f"{self.name}/{cond_label}", cond_scores, n)
        log_component(log, f"{self.name}/{reward_label}", inner_scores, n)
        out: list[Any] = []
        failed: set[int] = set()
        opened_count = 0
        inner_floor = failure_floor(self.reward)
        lowest = None if self.otherwise is None else min(self.otherwise, inner_floor or self.otherwise)
        for i in range(n):
            c = cond_scores[i]
            detail = ""
            if c is None and i in cond.failed:
                # the condition could not be checked: never better than the worst the gate gives
                score, why = lowest, f"{cond_label} failed, counted as the lowest score"
                if lowest is None:
                    failed.add(i)
            elif c is None:
                score, why = None, f"{cond_label} did not score this row"
            elif c >= self.threshold:
                opened_count += 1
                score, why = inner_scores[i], f"open: {cond_label} {fmt(c)} >= {fmt(self.threshold)}"
                if i in inner.failed and inner_floor is not None:
                    score, why = inner_floor, f"{why}, but {reward_label} failed: counted as its lowest score"
                elif i in inner.failed:
                    failed.add(i)
                if explain and inner.values[i].reason:
                    detail = f"; {reward_label}: {inner.values[i].reason}"
            elif inner_scores[i] is None and not self.lazy and i not in inner.failed:
                score, why = None, f"closed, but {reward_label} does not apply to this row"
            else:
                score, why = self.otherwise, f"closed: {cond_label} {fmt(c)} < {fmt(self.threshold)}"
            if explain:
                metrics = {cond_label: cond.values[i]}
                if inner.values[i] is not None:
                    metrics[reward_label] = inner.values[i]
                out.append(RewardResult(score, f"gate {why} -> {fmt(score)}{detail}", metrics))
            else:
                out.append(score)
        if log is not None:
            log(f"{self.name}/open", opened_count / n)
        return Scored(out, failed)


@dataclass(eq=False, repr=False)
class AsyncGated(Gated, AsyncComposite):
    """A :class:`Gated` with an async condition or reward."""


def gate(
    condition: Any, reward: Any, threshold: float = 1.0, otherwise: float | None = 0.0, *, lazy: bool = False
) -> Gated:
    """``reward`` only where ``condition`` scores at least ``threshold``; ``otherwise`` elsewhere.

    The usual use: correctness counts only when the format is right. Rows:

    * the condition reaches the threshold (the gate is open): the reward's
      score (``None`` where the reward does not apply);
    * the condition is below it: ``otherwise`` (default 0.0; ``None`` leaves
      those rows unscored); but a row the reward does not apply to stays
      ``None``, so on multi-task data the gate never scores rows that are not
      its reward's;
    * the condition gives ``None``: ``None`` (the gate cannot tell).

    A failure (an error or timeout of a component with ``on_error="none"``)
    never scores better than an honest outcome: a failed condition counts as
    the lowest of ``otherwise`` and the reward's lowest score, a failed reward
    behind an open gate as the reward's lowest score (where the reward
    declares a ``score_range``; otherwise the row stays unscored).

    With ``lazy=True`` the reward is scored only on rows where the gate is
    open (worth it for an expensive reward such as an LLM judge), and every
    closed row gets ``otherwise``, whether or not the reward applies there.

    Logs ``<name>/<condition>``, ``<name>/<reward>`` (means and ``/applicable``)
    and ``<name>/open`` (the share of rows where the gate is open).

    >>> from rewardsmith.compose import gate
    >>> g = gate("think_format", "gsm8k_accuracy")
    >>> g.name
    'gsm8k_accuracy_if_think_format'
    >>> g(completions=["<think>9*2</think><answer>18</answer>", "#### 18", "<think>x</think><answer>1</answer>"],
    ...   answer=["18", "18", "no number"])
    [1.0, 0.0, None]
    >>> g.check("#### 18", answer="18").reason
    'gate closed: think_format 0 < 1 -> 0'
    """
    made_condition = as_reward(condition, "gate: condition")
    made_reward = as_reward(reward, "gate: reward")
    cls = AsyncGated if any_async([made_condition, made_reward]) else Gated
    return cls(made_condition, made_reward, threshold, otherwise, lazy)
