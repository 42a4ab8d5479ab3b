"""reward-kit compatibility: ``@reward_function``, ``EvaluateResult`` and ``MetricResult``.

Rewards written for Fireworks' reward-kit take the conversation and a ground
truth and return an ``EvaluateResult``::

    @reward_function
    def exact(messages, ground_truth=None, **kwargs) -> EvaluateResult:
        ...

Decorated with rewardsmith's ``@reward_function`` such a function is a
:class:`~rewardsmith.Reward`: it goes into TRL and the registry unchanged.
``messages`` is the prompt plus the completion as chat messages;
``ground_truth`` comes from a dataset column (``ground_truth`` by default,
``ground_truth_column=`` to change it); other parameters are filled from
columns by name, like ``@reward``'s. Called the reward-kit way, with
``messages=`` and no completions, it still returns the ``EvaluateResult``, so
existing tests keep passing. In training, the mean of each ``MetricResult``
sub-score over a batch is logged through TRL as ``<reward>/<metric>``, next to
the ``rewards/<reward>/mean`` TRL logs, as ``explain()`` and evaluation results
show them per sample.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.core.engine import Scored
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.functions import FunctionReward
from rewardsmith.core.injection import Column, Input
from rewardsmith.core.inputs import Batch
from rewardsmith.core.result import RewardResult, to_result, to_score

__all__ = ["EvaluateResult", "MetricResult", "RewardKitReward", "reward_function"]


class _DictLike:
    """reward-kit results can be read like dicts (``result["score"]``)."""

    def __getitem__(self, key: str) -> Any:
        if key in self.__dataclass_fields__:  # type: ignore[attr-defined]
            return getattr(self, key)
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return key in self.__dataclass_fields__  # type: ignore[attr-defined]

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key, default)

    def keys(self) -> Any:
        return self.__dataclass_fields__.keys()  # type: ignore[attr-defined]


@dataclass
class MetricResult(_DictLike):
    """One named sub-score of an :class:`EvaluateResult` (reward-kit's shape).

    >>> MetricResult(score=1.0, reason="exact match", success=True)["score"]
    1.0
    """

    score: float
    reason: str = ""
    is_score_valid: bool = True
    success: bool | None = None


@dataclass
class EvaluateResult(_DictLike):
    """The result of a reward-kit style reward: overall score, reason and named metrics.

    >>> r = EvaluateResult(score=0.5, reason="half right", metrics={"format": MetricResult(1.0, "ok")})
    >>> r.metrics["format"].score, r["reason"]
    (1.0, 'half right')
    """

    score: float | None
    reason: str | None = None
    metrics: dict[str, MetricResult] = field(default_factory=dict)
    is_score_valid: bool = True
    error: str | None = None


def _metric_dict(metric: Any) -> dict[str, Any]:
    if isinstance(metric, dict):
        return dict(metric)
    out = {"score": getattr(metric, "score", None), "reason": getattr(metric, "reason", "")}
    if getattr(metric, "success", None) is not None:
        out["success"] = metric.success
    if getattr(metric, "is_score_valid", True) is False:
        out["is_score_valid"] = False
    return out


def _evaluate_to_result(raw: Any, reward_name: str) -> RewardResult:
    """Convert an ``EvaluateResult`` (ours, reward-kit's, or a dict of that shape) to a ``RewardResult``."""
    if isinstance(raw, dict) and "score" in raw:
        raw = EvaluateResult(
            **{k: raw[k] for k in ("score", "reason", "metrics", "is_score_valid", "error") if k in raw}
        )
    if not hasattr(raw, "score") or isinstance(raw, RewardResult) or not hasattr(raw, "metrics"):
        return to_result(raw, reward_name)
    valid = getattr(raw, "is_score_valid", True) is not False and not getattr(raw, "error", None)
    score = to_score(raw.score, reward_name) if valid else None
    metrics = {name: _metric_dict(m) for name, m in (getattr(raw, "metrics", None) or {}).items()}
    return RewardResult(score, getattr(raw, "reason", None) or "", metrics, getattr(raw, "error", None))


def log_sub_scores(name: str, results: list[RewardResult], log_metric: Callable[[str, float], None]) -> None:
    """Log the mean of each ``MetricResult`` score over a batch as ``<reward>/<metric>`` (rows with it only).

    >>> logged = {}
    >>> log_sub_scores("kit", [RewardResult(1.0, "", {"format": {"score": 1.0}}),
    ...                        RewardResult(0.0, "", {"format": {"score": 0.0}, "length": {"score": 0.5}})],
    ...                logged.__setitem__)
    >>> logged
    {'kit/format': 0.5, 'kit/length': 0.5}
    """
    sums: dict[str, list[float]] = {}
    for result in results:
        for metric, value in (result.metrics or {}).items():
            score = value.get("score") if isinstance(value, dict) else value
            if isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(score):
                total = sums.setdefault(metric, [0.0, 0.0])
                total[0] += float(score)
                total[1] += 1
    for metric, (total, count) in sums.items():
        log_metric(f"{name}/{metric}", total / count)


@dataclass(eq=False, repr=False)
class RewardKitReward(FunctionReward):
    """A reward-kit style function ``(messages, ground_truth, **kwargs) -> EvaluateResult`` as a reward."""

    ground_truth_column: str = "ground_truth"

    def inputs(self) -> dict[str, Input]:
        return {**super().inputs(), "ground_truth": Column(self.ground_truth_column)}

    def to_result(self, raw: Any) -> RewardResult:
        return _evaluate_to_result(raw, self.name)

    def run_batch(self, batch: Batch, *, explain: bool = False) -> Scored:
        """Score a batch; inside TRL (which passes ``log_metric``) each sub-score's mean is logged too."""
        if explain or batch.log_metric is None:
            return super().run_batch(batch, explain=explain)
        scored = super().run_batch(batch, explain=True)
        log_sub_scores(self.name, scored.values, batch.log_metric)
        return Scored(scored.scores, scored.failed)

    def __call__(self, prompts: Any = None, completions: Any = None, completion_ids: Any = None, **kwargs: Any) -> Any:
        if completions is None and prompts is None and "messages" in kwargs:
            # Called the reward-kit way: messages=..., ground_truth=... -> EvaluateResult.
            return self.fn(**{**self.bound, **kwargs})
        return super().__call__(prompts, completions, completion_ids, **kwargs)


def reward_function(
    fn: Callable[..., Any] | None = None, *, ground_truth_column: str = "ground_truth", **engine: Any
) -> Any:
    """Make a reward from a reward-kit style function.

    >>> @reward_function(ground_truth_column="answer")
    ... def exact_answer(messages, ground_truth=None, **kwargs):
    ...     said = messages[-1]["content"].strip()
    ...     return EvaluateResult(score=float(said == ground_truth), reason=f"said {said!r}")
    >>> exact_answer(prompts=["2+2?", "2+2?"], completions=["4", "5"], answer=["4", "4"])
    [1.0, 0.0]
    >>> exact_answer(messages=[{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}],
    ...              ground_truth="4").score
    1.0
    """

    def wrap(f: Callable[..., Any]) -> RewardKitReward:
        if not callable(f):
            raise RewardConfigError(f"@reward_function decorates a function, got {f!r}")
        return RewardKitReward(f, ground_truth_column=ground_truth_column, **engine)

    return wrap(fn) if fn is not None else wrap
