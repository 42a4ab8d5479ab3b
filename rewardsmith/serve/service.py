"""What the reward server serves: rewards and weights from a config, and how one batch is scored.

:class:`RewardService` holds the rewards a config's ``rewards:`` list (or a
comma-separated list of names) describes, in the same forms as training, and
scores one batch with all of them, with reasons and metrics. It knows nothing
of HTTP: :mod:`rewardsmith.serve.app` turns requests into calls of
:meth:`RewardService.score` and its answers into JSON.

Sync rewards run on a thread, and so do reading the batch and gathering the
answer (so the event loop keeps answering health checks and other batches
while one batch is scored); async rewards (judges)
are awaited on the server's loop with :meth:`~rewardsmith.core.async_reward.AsyncReward.arun_batch`,
never through a nested loop.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewardsmith.compose.spec import weighted_sum
from rewardsmith.config.rewards import rewards_from_spec
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.inputs import RESERVED_KWARGS, Batch
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward
from rewardsmith.integrations.named import run_batch_async

__all__ = ["BatchRequestError", "RewardService", "ServedBatch", "load_service"]


#: Names a batch's columns may not take: the trainer's own arguments.
RESERVED_COLUMNS = RESERVED_KWARGS | {"prompts", "completions", "completion_ids"}


class BatchRequestError(RewardConfigError):
    """A batch that cannot be scored as sent (wrong shapes, missing columns): the client's to fix (HTTP 400/422)."""


@dataclass
class ServedBatch:
    """One scored batch: the weighted score per sample, and each reward's scores, reasons and metrics."""

    scores: list[float | None]
    rewards: dict[str, list[float | None]]
    reasons: dict[str, list[str]]
    metrics: dict[str, list[dict[str, Any]]]
    errors: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)  # each reward's time on the batch (not sent)

    def to_json(self) -> dict[str, Any]:
        """The JSON body of ``POST /score``."""
        return {
            "scores": self.scores,
            "rewards": self.rewards,
            "reasons": self.reasons,
            "metrics": self.metrics,
            "errors": self.errors,
        }


def _json_metrics(metrics: dict[str, Any]) -> dict[str, Any]:
    """Metrics as JSON can carry them: finite numbers, strings, booleans; anything else as text."""
    clean: dict[str, Any] = {}
    for key, value in metrics.items():
        if isinstance(value, float) and not math.isfinite(value):
            clean[str(key)] = None
        elif value is None or isinstance(value, (bool, int, float, str)):
            clean[str(key)] = value
        else:
            clean[str(key)] = str(value)
    return clean


class RewardService:
    """Rewards and their weights, scoring whole batches (what ``rewardsmith serve`` serves).

    >>> import asyncio
    >>> service = RewardService.from_spec("think_format,gsm8k_accuracy")
    >>> texts = ["<think>.</think><answer>4</answer>", "#### 4"]
    >>> served = asyncio.run(service.score(None, texts, {"answer": ["4", "4"]}))
    >>> served.rewards
    {'think_format': [1.0, 0.0], 'gsm8k_accuracy': [1.0, 1.0]}
    >>> served.scores
    [2.0, 1.0]
    """

    def __init__(self, rewards: list[Reward], weights: list[float] | None = None) -> None:
        if not rewards:
            raise RewardConfigError("the server needs at least one reward")
        self.rewards = list(rewards)
        self.weights = list(weights) if weights is not None else [1.0] * len(rewards)
        if len(self.weights) != len(self.rewards):
            raise RewardConfigError(f"{len(self.weights)} weights for {len(self.rewards)} rewards")

    @classmethod
    def from_spec(cls, spec: str | Path) -> RewardService:
        """From a YAML config file (its ``rewards:``, ``reward_weights`` and ``imports:``) or a list of names.

        A training config of any dialect (sectioned, seed-style, an open-r1
        recipe) or an evaluation config works as it is, read as training reads
        it (:func:`rewardsmith.config.rewards.config_rewards`). Every problem
        is reported before the server starts.
        """
        return load_service(spec)

    @property
    def names(self) -> list[str]:
        """The rewards' names, as TRL would log them."""
        return [r.name for r in self.rewards]

    @property
    def columns(self) -> dict[str, list[str]]:
        """The columns each reward needs (``required``) or can use (``optional``)."""
        required = sorted({c for r in self.rewards for c in r.required_columns})
        optional = sorted({c for r in self.rewards for c in r.optional_columns} - set(required))
        return {"required": required, "optional": optional}

    def select(self, only: list[str] | None) -> tuple[list[Reward], list[float]]:
        """The rewards named in ``only`` (all when ``None``) with their weights; an unknown name is a request error."""
        if only is None:
            return self.rewards, self.weights
        unknown = [name for name in only if name not in self.names]
        if unknown or not only:
            raise BatchRequestError(
                f"'rewards' names {unknown or 'nothing'}; this server serves {', '.join(self.names)}"
            )
        chosen = [i for i, name in enumerate(self.names) if name in only]
        return [self.rewards[i] for i in chosen], [self.weights[i] for i in chosen]

    def check_columns(self, columns: dict[str, Any], n: int, rewards: list[Reward] | None = None) -> None:
        """Raise :class:`BatchRequestError` when a column has the wrong length, a reserved name (``log_metric``,
        ``trainer_state``, ...: what a trainer passes besides the columns) or a reward's column is missing."""
        reserved = sorted(RESERVED_COLUMNS & set(columns))
        if reserved:
            raise BatchRequestError(
                f"column name(s) {', '.join(map(repr, reserved))} are reserved (a trainer passes them besides the "
                "dataset's columns); rename the column(s)"
            )
        for name, values in columns.items():
            if not isinstance(values, list) or len(values) != n:
                got = f"{len(values)} values" if isinstance(values, list) else type(values).__name__
                raise BatchRequestError(f"column {name!r} must be a list of {n} values (one per completion), got {got}")
        for reward in self.rewards if rewards is None else rewards:
            missing = reward.missing_columns(columns)
            if missing:
                raise BatchRequestError(
                    f"reward {reward.name!r} needs the column(s) {', '.join(map(repr, missing))}; send them in "
                    f"'columns' (one value per completion). Columns sent: {sorted(columns) or 'none'}"
                )

    async def score(
        self,
        prompts: list[Any] | None,
        completions: list[Any],
        columns: dict[str, Any],
        only: list[str] | None = None,
    ) -> ServedBatch:
        """Score one batch with every reward (or those named in ``only``), concurrently.

        A sample a reward fails on scores ``None`` there and is counted in ``errors``.
        """
        rewards_used, weights, batch = await asyncio.to_thread(self._prepare, prompts, completions, columns, only)
        scored = await asyncio.gather(*(self._run(reward, batch) for reward in rewards_used))
        return await asyncio.to_thread(self._assemble, rewards_used, weights, scored)

    def _prepare(
        self, prompts: list[Any] | None, completions: list[Any], columns: dict[str, Any], only: list[str] | None
    ) -> tuple[list[Reward], list[float], Batch]:
        """The rewards to run and the batch, checked (on a thread: a big batch takes a while to read)."""
        rewards_used, weights = self.select(only)
        self.check_columns(columns, len(completions), rewards_used)
        return rewards_used, weights, Batch.from_call(prompts, completions, None, dict(columns))

    @staticmethod
    def _assemble(
        rewards_used: list[Reward], weights: list[float], scored: list[tuple[list[Any], set[int], float]]
    ) -> ServedBatch:
        rewards: dict[str, list[float | None]] = {}
        reasons: dict[str, list[str]] = {}
        metrics: dict[str, list[dict[str, Any]]] = {}
        errors: dict[str, int] = {}
        seconds: dict[str, float] = {}
        for reward, (results, failed, took) in zip(rewards_used, scored):
            seconds[reward.name] = took
            rewards[reward.name] = [r.score if isinstance(r, RewardResult) else None for r in results]
            reasons[reward.name] = [
                (r.error or r.reason) if isinstance(r, RewardResult) else "not scored" for r in results
            ]
            metrics[reward.name] = [_json_metrics(r.metrics) if isinstance(r, RewardResult) else {} for r in results]
            errors[reward.name] = len(failed)
        weighted = weighted_sum(list(rewards.values()), weights)
        return ServedBatch(weighted, rewards, reasons, metrics, errors, seconds)

    @staticmethod
    async def _run(reward: Reward, batch: Batch) -> tuple[list[Any], set[int], float]:
        start = time.perf_counter()
        scored = await run_batch_async(reward, batch, explain=True)
        return scored.values, scored.failed, time.perf_counter() - start

    def close(self) -> None:
        """Stop the rewards' worker processes (or Ray actors)."""
        for reward in self.rewards:
            reward.close()


def load_service(spec: str | Path) -> RewardService:
    """The :class:`RewardService` a config file or a comma-separated list of reward names describes.

    See :func:`rewardsmith.config.rewards.rewards_from_spec` for the forms.

    >>> load_service("think_format").names
    ['think_format']
    >>> load_service("think_fromat")
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.UnknownRewardError: rewards[0]: unknown reward 'think_fromat'. ...
    """
    from rewardsmith.train import training_tokenizer

    rewards, weights = rewards_from_spec(spec, model_tokenizer=training_tokenizer)  # tokens: the model's tokenizer
    return RewardService(rewards, weights)
