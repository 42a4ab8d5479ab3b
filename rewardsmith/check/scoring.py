"""Scoring one sample at a time for an audit: the score, the reward's reason, how long it took, what went wrong.

An audit feeds a reward hostile completions (1 MB of text, tag spam), so a
reward that hangs must not hang the audit. :class:`Scorer` runs every sample
in a worker process of the core's pool (:mod:`rewardsmith.core.pool`) with a
hard per-sample ``timeout``: a sample that runs over is killed and counted as
a timeout, whatever kind of reward it is (a per-sample function, a TRL batch
function, a composite). The time reported is measured in the worker, around
the reward's own call, so it does not include the trip to the worker.

Async rewards (LLM judges, remote services) run in this process instead, their
samples concurrently up to the reward's ``max_concurrency``, each timed on its
own. A reward that cannot be pickled also runs here, one sample after another,
without the hard timeout (:attr:`Scorer.note` says so).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.core.async_reward import AsyncReward, run_sync
from rewardsmith.core.composite import Composite
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.inputs import Batch
from rewardsmith.core.result import Failure, RewardResult
from rewardsmith.core.reward import Reward

__all__ = ["Outcome", "Sample", "Scorer", "SingleSample"]


@dataclass
class Sample:
    """One completion to score, with its row's prompt and columns (one value each)."""

    prompt: Any
    completion: Any
    columns: dict[str, Any] = field(default_factory=dict)


@dataclass
class Outcome:
    """What scoring one sample gave: ``score`` (``None``: not scored), the reason, a failure, the seconds taken.

    ``failure`` is ``None``, ``"error"``, ``"timeout"`` or ``"crash"``.
    """

    score: float | None
    reason: str = ""
    failure: str | None = None
    seconds: float | None = None


def _batch(reward: Reward, sample: Sample) -> Batch:
    prompts = None if sample.prompt is None else [sample.prompt]
    columns = {key: [value] for key, value in sample.columns.items()}
    return Batch.from_call(prompts, [sample.completion], None, columns, reward.name)


def _outcome(result: RewardResult, seconds: float | None) -> Outcome:
    failure = None
    if result.error is not None:
        kind = result.reason.partition(":")[0]
        failure = kind if kind in ("error", "timeout", "crash") else "error"
    return Outcome(result.score, result.reason or (result.error or ""), failure, seconds)


@dataclass(eq=False)
class SingleSample(Reward):
    """Scores one :class:`Sample` with ``inner`` and says how long that took (in ``metrics["seconds"]``).

    What an audit sends to a worker process, so that the worker's hard timeout
    covers any reward, batch functions and composites included.

    >>> from rewardsmith import get_reward
    >>> one = SingleSample(get_reward("gsm8k_accuracy"))
    >>> result = one.score(Sample("2+2?", "#### 4", {"answer": "4"}))
    >>> result.score, result.reason, result.metrics["seconds"] >= 0
    (1.0, 'predicted 4 (####), reference 4', True)
    """

    inner: Reward | None = None

    def score(self, sample: Sample) -> RewardResult:
        assert self.inner is not None
        start = time.perf_counter()
        try:
            result = self.inner.run_batch(_batch(self.inner, sample), explain=True).values[0]
        except (RewardConfigError, KeyboardInterrupt):
            raise
        except Exception as exc:  # a bad return value, or on_error="raise": a failure of this sample here
            message = f"{type(exc).__name__}: {exc}"
            return RewardResult(None, f"error: {message}", {"seconds": time.perf_counter() - start}, message)
        seconds = time.perf_counter() - start
        return RewardResult(result.score, result.reason, {"seconds": seconds}, result.error)

    def prepare_worker(self) -> None:
        if self.inner is not None:
            self.inner.prepare_worker()


def _without_own_pool(reward: Reward) -> Reward:
    """The reward scoring in the process that calls it (inside an audit's worker, a pool of its own is waste)."""
    if isinstance(reward, Composite) or reward.runs_inline:
        return reward
    try:
        return reward.configure(timeout=None, workers=1, engine="local")
    except RewardConfigError:
        return reward


class Scorer:
    """Scores samples one by one: in worker processes with a hard ``timeout`` (seconds), or in this process.

    ``timeout=None`` (or 0) scores in this process without a time limit.
    ``workers`` worker processes share the samples of a call.
    """

    def __init__(self, reward: Reward, timeout: float | None = 20.0, workers: int = 1) -> None:
        self.reward = reward
        self.timeout = timeout or None
        self.note: str | None = None
        self._isolated: SingleSample | None = None
        if isinstance(reward, AsyncReward):
            self.mode = "async"
        elif self.timeout is None:
            self.mode = "inline"
        else:
            self.mode = "isolated"
            isolated = SingleSample(_without_own_pool(reward), timeout=self.timeout, workers=workers)
            try:
                from rewardsmith.core.pickling import dumps_for_worker

                dumps_for_worker(isolated)
            except Exception as exc:  # an unpicklable reward: scored here, without the hard timeout
                self.mode = "inline"
                self.note = (
                    f"reward {reward.name!r} cannot be pickled ({type(exc).__name__}: {exc}), so its samples ran "
                    "in this process without a hard timeout"
                )
            else:
                self._isolated = isolated

    def score(self, samples: list[Sample]) -> list[Outcome]:
        """The outcome of each sample, in order."""
        if not samples:
            return []
        if self.mode == "async":
            return run_sync(self._ascore(samples))
        if self.mode == "inline":
            one = SingleSample(self.reward)
            return [_outcome(result, result.metrics["seconds"]) for result in map(one.score, samples)]
        assert self._isolated is not None
        out = []
        for value in self._isolated.run_samples([{"sample": sample} for sample in samples]):
            if isinstance(value, Failure):
                seconds = self.timeout if value.kind == "timeout" else None
                out.append(Outcome(None, f"{value.kind}: {value.message}", value.kind, seconds))
            else:
                out.append(_outcome(value, value.metrics.get("seconds")))
        return out

    async def _ascore(self, samples: list[Sample]) -> list[Outcome]:
        reward = self.reward
        assert isinstance(reward, AsyncReward)

        async def one(sample: Sample) -> Outcome:
            start = time.perf_counter()
            try:
                scored = await asyncio.wait_for(reward.arun_batch(_batch(reward, sample), explain=True), self.timeout)
            except asyncio.TimeoutError:
                return Outcome(None, f"timeout: no score after {self.timeout:g}s", "timeout", self.timeout)
            except (RewardConfigError, KeyboardInterrupt):
                raise
            except Exception as exc:
                return Outcome(None, f"error: {type(exc).__name__}: {exc}", "error", time.perf_counter() - start)
            return _outcome(scored.values[0], time.perf_counter() - start)

        return list(await asyncio.gather(*(one(sample) for sample in samples)))

    def close(self) -> None:
        """Stop the worker processes."""
        if self._isolated is not None:
            self._isolated.close()
