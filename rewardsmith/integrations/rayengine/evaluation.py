"""The ``ray`` evaluation engine: an evaluation job's shards scored as Ray tasks, several at a time.

``rewardsmith eval --engine ray`` (``evaluate(..., engine="ray")``) keeps the
job in the calling process (reading the data, generating completions, writing
``results.jsonl``, the statistics, ``summary.json``, the report) and sends the
scoring of the batches (shards of ``batch_size`` prompts) to Ray tasks of one
CPU. A Ray task costs about a millisecond, so consecutive shards share a task:
one shard per task until the first results give the scoring time per shard,
then about :data:`GROUP_SECONDS` of work per task (at most
:data:`MAX_GROUP` shards). Up to twice as many tasks as the cluster has CPUs are
in flight; results are taken back in the order the shards were sent, so
``results.jsonl`` is written in ``(index, sample)`` order exactly as by the
local engine, and resume after a kill works the same (the rows of the shards
in flight are simply scored again).

The rewards are pickled once (:func:`~rewardsmith.core.pickling.dumps_for_worker`),
put in Ray's object store, and rebuilt once per Ray worker process. A task
whose worker dies is retried by Ray (``REWARDSMITH_RAY_TASK_RETRIES``, default
2); when the retries are spent, each shard of the task is sent again on its own,
and a shard whose task still dies has its samples written with no score and the
error, like any reward failure, so nothing is lost and the job goes
on. An error of the rewards themselves (a bad column) stops the job as it would
locally.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from collections import deque
from collections.abc import Iterator
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.extras import require_extra
from rewardsmith.core.pickling import dumps_for_worker, file_modules
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward
from rewardsmith.evaluation.engines import EvalEngine, Shard, ShardScores, score_shard
from rewardsmith.integrations.rayengine.cluster import connect, load_reward

__all__ = ["GROUP_SECONDS", "MAX_GROUP", "RAY_EVAL_ENGINE", "score_shards_task"]

_TASK_RETRIES = int(os.environ.get("REWARDSMITH_RAY_TASK_RETRIES", "2"))
#: Seconds of scoring a Ray task aims at, once the time per shard is measured.
GROUP_SECONDS = float(os.environ.get("REWARDSMITH_RAY_BATCH_SECONDS", "0.05"))
#: The most shards one Ray task scores.
MAX_GROUP = 8
_LOADED: dict[str, list[Reward]] = {}


def score_shards_task(
    key: str, payloads: list[bytes], modules: dict[str, str], sys_path: list[str], shards: list[Shard]
) -> list[ShardScores]:
    """What a Ray task runs: the rewards rebuilt (once per worker process), then :func:`score_shard` per shard.

    >>> from rewardsmith import get_reward
    >>> out = score_shards_task("k", [dumps_for_worker(get_reward("think_format"))], {}, [], [Shard([None], ["x"], {})])
    >>> [r.score for r in out[0].results["think_format"]]
    [0.0]
    """
    rewards = _LOADED.get(key)
    if rewards is None:
        rewards = _LOADED[key] = [load_reward(p, modules, sys_path) for p in payloads]
    return [score_shard(rewards, shard) for shard in shards]


class _Groups:
    """Cuts the stream of shards into groups for Ray tasks, sized by the measured scoring time per shard."""

    def __init__(self) -> None:
        self.per_shard: float | None = None

    def size(self) -> int:
        if self.per_shard is None:
            return 1
        return max(1, min(MAX_GROUP, int(GROUP_SECONDS / max(self.per_shard, 1e-6))))

    def measured(self, shard: Shard, scores: ShardScores) -> None:
        seconds = scores.seconds_per_sample * max(1, len(shard))
        self.per_shard = seconds if self.per_shard is None else 0.5 * self.per_shard + 0.5 * seconds


def _score_on_ray(rewards: list[Reward], shards: Iterator[Shard]) -> Iterator[tuple[Shard, ShardScores]]:
    ray = connect("rewardsmith eval --engine ray")
    payloads = [dumps_for_worker(r) for r in rewards]
    key = hashlib.sha256(b"".join(hashlib.sha256(p).digest() for p in payloads)).hexdigest()
    payload_refs = ray.put(payloads)
    task = ray.remote(score_shards_task).options(num_cpus=1, max_retries=_TASK_RETRIES)
    modules, sys_path = file_modules(), list(sys.path)

    def send(group: list[Shard]) -> Any:
        return task.remote(key, payload_refs, modules, sys_path, [_without_context(s) for s in group])

    ahead = max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
    in_flight: deque[tuple[list[Shard], Any]] = deque()
    groups, group = _Groups(), []
    try:
        for shard in shards:
            group.append(shard)
            if len(group) >= groups.size():
                in_flight.append((group, send(group)))
                group = []
            if len(in_flight) >= ahead:
                yield from _collect(ray, rewards, *in_flight.popleft(), send, groups)
        if group:
            in_flight.append((group, send(group)))
        while in_flight:
            yield from _collect(ray, rewards, *in_flight.popleft(), send, groups)
    finally:  # stopped early (Ctrl-C, an error, the job closed): the shards still running are not needed
        for _, ref in in_flight:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)


def _without_context(shard: Shard) -> Shard:
    """The shard as sent to Ray: the job's bookkeeping stays here."""
    return Shard(shard.prompts, shard.completions, shard.columns)


def _collect(
    ray: Any, rewards: list[Reward], group: list[Shard], ref: Any, send: Any, groups: _Groups
) -> Iterator[tuple[Shard, ShardScores]]:
    try:
        scores = ray.get(ref)
    except ray.exceptions.RayTaskError as exc:  # the rewards raised: the same error as locally
        raise exc.as_instanceof_cause() from None
    except ray.exceptions.RayError as exc:  # the worker died (OOM, segfault, lost node), retries spent
        if len(group) > 1:  # each shard on its own: only the one that kills its worker goes unscored
            for shard in group:
                yield from _collect(ray, rewards, [shard], send([shard]), send, groups)
            return
        reason = f"the Ray task scoring this shard died after {_TASK_RETRIES} retries: {str(exc).strip()[-500:]}"
        failed = {r.name: [RewardResult(None, "", {}, reason) for _ in range(len(group[0]))] for r in rewards}
        yield group[0], ShardScores(failed, 0.0)
        return
    for shard, shard_scores in zip(group, scores, strict=True):
        groups.measured(shard, shard_scores)
        yield shard, shard_scores


def _check(rewards: list[Reward]) -> None:
    """Ray is installed, and every reward can be pickled for the Ray workers (checked before the job writes)."""
    require_extra("ray", "rewardsmith eval --engine ray")
    for reward in rewards:
        try:
            dumps_for_worker(reward)
        except Exception as exc:
            raise RewardConfigError(
                f"reward {reward.name!r} cannot be sent to Ray workers ({type(exc).__name__}: {exc}); keep what "
                "it holds picklable (create locks, clients and models in prepare_worker() or on first use), or "
                "evaluate with the local engine"
            ) from None


#: The ``ray`` evaluation engine.
RAY_EVAL_ENGINE = EvalEngine("ray", _score_on_ray, _check, "shards scored as Ray tasks, on this machine or a cluster")
