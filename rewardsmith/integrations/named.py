"""Rewards named once per process for trainers that call a plain function (verl, OpenRLHF).

verl's ``custom_reward_function`` and OpenRLHF's ``--reward.remote_url
reward_func.py`` call a function many times; the rewards it uses are built once
per process from a spec (a config file, or names such as
``think_format,gsm8k_accuracy``; see :func:`~rewardsmith.config.rewards.rewards_from_spec`)
given as an argument or in the environment variable ``REWARDSMITH_REWARDS``,
which reaches the trainer's worker processes (Ray passes the driver's
environment on through ``runtime_env``).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rewardsmith.compose.spec import weighted_sum
from rewardsmith.config.rewards import rewards_from_spec
from rewardsmith.core.async_reward import AsyncReward
from rewardsmith.core.engine import Scored
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.inputs import Batch
from rewardsmith.core.reward import Reward

__all__ = ["ENV_VAR", "NamedScores", "ascore_named", "rewards_for", "run_batch_async", "score_named"]

#: The environment variable naming the rewards when no argument does.
ENV_VAR = "REWARDSMITH_REWARDS"

_CACHE: dict[str, tuple[list[Reward], list[float]]] = {}
_LOCK = threading.Lock()


def rewards_for(
    spec: str | None = None, where: str = "the reward function's rewards argument"
) -> tuple[list[Reward], list[float]]:
    """The rewards and weights ``spec`` (or ``$REWARDSMITH_REWARDS``) names, built once per process.

    >>> [r.name for r in rewards_for("think_format")[0]]
    ['think_format']
    """
    spec = spec if spec is not None else os.environ.get(ENV_VAR)
    if not spec:
        raise RewardConfigError(
            f"no rewards named: set {where} to a rewards config file or names (think_format,gsm8k_accuracy), "
            f"or set the environment variable {ENV_VAR}"
        )
    key = str(spec)
    with _LOCK:
        if key not in _CACHE:
            from rewardsmith.train import training_tokenizer

            _CACHE[key] = rewards_from_spec(key, model_tokenizer=training_tokenizer)  # tokens: the model's tokenizer
        return _CACHE[key]


@dataclass
class NamedScores:
    """Per reward, its scores (``None`` where it does not apply), and the weighted sum (``None`` where none applies)."""

    per_reward: dict[str, list[float | None]]
    total: list[float | None]


def score_named(
    spec: str | None,
    prompts: Sequence[Any] | None,
    completions: Sequence[str],
    columns: dict[str, list[Any]],
    where: str = "the reward function's rewards argument",
) -> NamedScores:
    """Score a batch with the rewards ``spec`` names (each reward once, in order), and combine them (TRL's rule).

    >>> score_named("gsm8k_accuracy", None, ["#### 4", "#### 5"], {"answer": ["4", "4"]}).total
    [1.0, 0.0]
    """
    made, weights = rewards_for(spec, where)
    per_reward = [r.scores(prompts, list(completions), None, **columns) for r in made]
    return NamedScores({r.name: s for r, s in zip(made, per_reward)}, weighted_sum(per_reward, weights))


async def run_batch_async(reward: Reward, batch: Batch, *, explain: bool = False) -> Scored:
    """Score a batch from async code: an async reward awaited on this loop, any other on a thread.

    >>> from rewardsmith import get_reward
    >>> batch = Batch.from_call(None, ["#### 4"], None, {"answer": ["4"]})
    >>> asyncio.run(run_batch_async(get_reward("gsm8k_accuracy"), batch)).values
    [1.0]
    """
    if isinstance(reward, AsyncReward):
        return await reward.arun_batch(batch, explain=explain)
    return await asyncio.to_thread(reward.run_batch, batch, explain=explain)


async def ascore_named(
    spec: str | None,
    prompts: Sequence[Any] | None,
    completions: Sequence[str],
    columns: dict[str, list[Any]],
    where: str = "the reward function's rewards argument",
) -> NamedScores:
    """:func:`score_named` for async callers: the rewards run concurrently, async ones (judges) awaited here.

    >>> asyncio.run(ascore_named("gsm8k_accuracy", None, ["#### 4"], {"answer": ["5"]})).total
    [0.0]
    """
    made, weights = rewards_for(spec, where)
    batch = Batch.from_call(None if prompts is None else list(prompts), list(completions), None, dict(columns))
    scored = await asyncio.gather(*(run_batch_async(r, batch) for r in made))
    per_reward = [s.values for s in scored]
    return NamedScores({r.name: s for r, s in zip(made, per_reward)}, weighted_sum(per_reward, weights))
