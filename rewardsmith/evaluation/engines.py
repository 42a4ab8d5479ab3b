"""Evaluation engines: where an evaluation job's batches are scored.

``evaluate(..., engine="local")`` (the default) scores each batch in this
process, one after the other. Other engines are declared by installed
packages in the ``rewardsmith.eval_engines`` entry-point group and loaded only
when named; ``rewardsmith[ray]`` declares ``"ray"``, which scores the batches
(shards) as Ray tasks, several at a time
(:mod:`rewardsmith.integrations.rayengine.evaluation`)::

    [project.entry-points."rewardsmith.eval_engines"]
    ray = "rewardsmith.integrations.rayengine:RAY_EVAL_ENGINE"

An engine only decides where :func:`score_shard` runs. The job keeps
everything else in the calling process: reading the data, generating the
completions, writing ``results.jsonl`` in ``(index, sample)`` order, the
statistics, ``summary.json`` and the report. So the files of a job are the
same whatever the engine, and a job started with one engine resumes with
another (the engine is not part of the job's identity).

The contract of ``EvalEngine.score_shards(rewards, shards)``: ``shards`` is an
iterator of :class:`Shard`; it yields one ``(shard, ShardScores)`` per shard,
in the order the shards came, and may take several shards ahead of the one it
yields (to keep its workers busy).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.lookup import Registry
from rewardsmith.core.reward import Reward

__all__ = ["EVAL_ENGINES", "EVAL_ENGINE_GROUP", "EvalEngine", "Shard", "ShardScores", "eval_engine", "score_shard"]

#: The entry-point group where installed packages declare evaluation engines by name.
EVAL_ENGINE_GROUP = "rewardsmith.eval_engines"


@dataclass
class Shard:
    """The scoring work of one batch: prompts, completions and columns of the samples that have a completion.

    ``context`` is whatever the job needs to turn the scores back into rows; engines pass it along untouched.
    """

    prompts: list[Any]
    completions: list[Any]
    columns: dict[str, list[Any]]
    context: Any = None

    def __len__(self) -> int:
        return len(self.completions)


@dataclass
class ShardScores:
    """Per reward, one ``RewardResult`` per sample of the shard, and the scoring time per sample (seconds)."""

    results: dict[str, list[Any]] = field(default_factory=dict)
    seconds_per_sample: float = 0.0


def score_shard(rewards: list[Reward], shard: Shard) -> ShardScores:
    """Score a shard with every reward (``reward.explain``): what every engine runs, wherever it runs it.

    >>> from rewardsmith import get_reward
    >>> out = score_shard([get_reward("gsm8k_accuracy")], Shard(["q"], ["#### 4"], {"answer": ["4"]}))
    >>> [r.score for r in out.results["gsm8k_accuracy"]]
    [1.0]
    """
    started = time.perf_counter()
    results: dict[str, list[Any]] = {}
    for reward in rewards:
        results[reward.name] = (
            reward.explain(prompts=shard.prompts, completions=shard.completions, **shard.columns) if len(shard) else []
        )
    return ShardScores(results, (time.perf_counter() - started) / max(1, len(shard)))


def _score_here(rewards: list[Reward], shards: Iterator[Shard]) -> Iterator[tuple[Shard, ShardScores]]:
    for shard in shards:
        yield shard, score_shard(rewards, shard)


@dataclass(frozen=True)
class EvalEngine:
    """A named way to score an evaluation job's shards (see the module docs), and a check that it can run here.

    >>> eval_engine("local").name
    'local'
    """

    name: str
    score_shards: Callable[[list[Reward], Iterator[Shard]], Iterator[tuple[Shard, ShardScores]]]
    #: Called with the job's rewards before anything is written; raises a
    #: :class:`~rewardsmith.core.errors.RewardsmithError` saying what to do when the engine cannot run them
    #: (its extra is not installed, a reward cannot be sent where the engine runs it).
    check: Callable[[list[Reward]], None] = lambda rewards: None
    description: str = ""


LOCAL = EvalEngine("local", _score_here, description="each batch scored in this process, in turn")
#: The evaluation engines, on the registry mechanism names are looked up with: ``local``, and those installed
#: packages declare in :data:`EVAL_ENGINE_GROUP`, loaded when asked for.
EVAL_ENGINES = Registry("evaluation engine", EVAL_ENGINE_GROUP)
EVAL_ENGINES.register(LOCAL.name, LOCAL)


def eval_engine(name: str) -> EvalEngine:
    """The evaluation engine called ``name``: ``local``, or one an installed package declares (``ray``).

    >>> eval_engine("rya")
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.RewardConfigError: unknown evaluation engine 'rya'. Did you mean: ray? ...
    """
    if not isinstance(name, str) or not name:
        raise RewardConfigError(f"engine must name an evaluation engine such as 'local' or 'ray', got {name!r}")
    return EVAL_ENGINES.named(name, EvalEngine, " ('ray' comes with pip install 'rewardsmith[ray]')")
