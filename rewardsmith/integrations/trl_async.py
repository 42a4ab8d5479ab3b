"""rewardsmith rewards under TRL's ``AsyncGRPOTrainer`` (``trl.experimental.async_grpo``), with their meaning kept.

TRL's async trainer scores in a rollout worker process
(``_AsyncRolloutLoop._score_group``): it calls each reward function with the
completions, prompts, completion ids and the dataset's columns, turns ``None``
into NaN, sums every function **with weight 1** (``nansum``; a rollout every
function left ``None`` gets no advantage), and passes no ``trainer_state``,
``log_metric``, ``log_extra`` or ``environments``. So a config's weights and
rewardsmith's per-component metrics would vanish there without a word. Here:

* :func:`async_reward_funcs` makes the ``reward_funcs`` to pass: one reward,
  the config's rewards combined with their weights (``combine(...,
  missing="zero")``: a ``None`` adds 0, and a rollout no component scored is
  ``None``, which is what TRL does with it), so nothing depends on the trainer's
  weighting. It warns about what cannot be kept (:func:`async_warnings`).
* :func:`keep_reward_metrics` makes the trainer's worker score through
  :class:`RewardsmithRolloutLoop`, which hands the rewards a ``log_metric`` and
  sends what they log (each component's mean and applicability, tool use, per-turn
  figures) through the worker's ``metrics_queue``, the channel the trainer drains
  into its logs.

Building the trainer needs vLLM (a GPU machine); the scoring runs anywhere
(``tests/test_trl_async.py`` runs TRL's own ``_score_group`` on CPU).
"""

from __future__ import annotations

import logging
import warnings
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.reward import Reward

__all__ = [  # noqa: F822 (the loop class is built on first use)
    "RewardsmithRolloutLoop",
    "async_reward_funcs",
    "async_warnings",
    "keep_reward_metrics",
    "reward_list",
]

logger = logging.getLogger("rewardsmith")

#: Inputs TRL's async worker never passes to a reward function.
NOT_PASSED = ("trainer_state", "environment", "environments", "log_extra")
#: GRPO training arguments the async trainer has no counterpart for.
SYNC_ONLY_ARGS = ("reward_weights", "multi_objective_aggregation")


def reward_list(rewards: Any, weights: Sequence[float] | None = None) -> tuple[list[Reward], list[float] | None]:
    """Rewards and their weights (``None``: none given) from a reward, a list, or a config list, as a config reads them.

    >>> made, weights = reward_list([{"name": "think_format", "weight": 0.5}, "gsm8k_accuracy"])
    >>> [r.name for r in made], weights
    (['think_format', 'gsm8k_accuracy'], [0.5, 1.0])
    """
    from rewardsmith.compose import rewards_from_config
    from rewardsmith.core.registry import get_reward

    if isinstance(rewards, (Reward, str)) or callable(rewards):
        rewards = [rewards]
    if isinstance(rewards, dict):
        rewards = [rewards]
    if not isinstance(rewards, (list, tuple)) or not rewards:
        raise RewardConfigError(
            f"async_reward_funcs takes a reward or a list of rewards (a config list); got {rewards!r}"
        )
    if all(isinstance(r, Reward) for r in rewards):
        made, found = list(rewards), None
    else:
        try:
            made, found = rewards_from_config(list(rewards))
        except RewardConfigError:
            made, found = [get_reward(r) for r in rewards], None
    chosen = list(weights) if weights is not None else found
    if chosen is not None and len(chosen) != len(made):
        raise RewardConfigError(f"{len(chosen)} weight(s) for {len(made)} reward(s); give one weight per reward")
    return made, chosen


def async_warnings(rewards: Any, weights: Sequence[float] | None = None, args: Any = None) -> list[str]:
    """What TRL's async trainer cannot keep of these rewards (and training arguments ``args``), one note each.

    >>> from rewardsmith import get_reward
    >>> [w.split(":")[0] for w in async_warnings([get_reward("environment_reward")])]
    ['reward environment_reward reads environment']
    >>> async_warnings(["think_format"], args={"multi_objective_aggregation": "normalize_then_sum"})[0].split(" is ")[0]
    "multi_objective_aggregation='normalize_then_sum'"
    """
    from rewardsmith.data.columns import leaf_rewards

    made, _ = reward_list(rewards, weights)
    notes = []
    for top in made:
        for leaf, _ in leaf_rewards(top):
            injection = getattr(leaf, "injection", None)
            names = set(getattr(injection, "inputs", {}) or {}) if injection is not None else set()
            for name in NOT_PASSED:
                if name in names:
                    notes.append(
                        f"reward {leaf.name} reads {name}: TRL's async trainer does not pass it, so it scores without "
                        + (
                            "it (None for every rollout). An environment's own get_reward() is summed in by TRL with "
                            "weight 1; score the rollout's messages instead, or use the synchronous GRPOTrainer"
                            if name.startswith("environment")
                            else "it (None where the reward needs it)"
                        )
                    )
    given = dict(args) if isinstance(args, dict) else ({} if args is None else vars(args))
    aggregation = given.get("multi_objective_aggregation")
    if aggregation not in (None, "sum_then_normalize"):
        notes.append(
            f"multi_objective_aggregation={aggregation!r} is a GRPOTrainer setting the async trainer has no "
            "counterpart for: its rewards are summed, then normalised per group. Put the components on one scale in "
            "the combined reward instead (combine(..., normalize='zscore'))"
        )
    if given.get("reward_weights") is not None:
        notes.append(
            "reward_weights is not used by the async trainer (every reward function has weight 1): give the weights "
            "to async_reward_funcs (or on the rewards in the config), which applies them in one combined reward"
        )
    return notes


def async_reward_funcs(
    rewards: Any, weights: Sequence[float] | None = None, *, args: Any = None, warn: bool = True
) -> list[Reward]:
    """The ``reward_funcs`` for ``AsyncGRPOTrainer``: the rewards combined with their weights into one reward.

    ``rewards`` is a reward, a list of rewards, or a config list (names,
    entries with ``weight:``); ``weights`` override the config's. One reward of
    weight 1 is passed as it is. A ``None`` from a component adds 0 and a
    rollout no component scored is ``None``, as TRL sums. With ``warn``, what
    cannot be kept is warned about (:func:`async_warnings`, also given
    ``args``, the training arguments).

    >>> (funcs,) = async_reward_funcs([{"name": "think_format", "weight": 0.5}, "gsm8k_accuracy"])
    >>> funcs.name, funcs(completions=["<think>2+2</think><answer>4</answer>", "5"], answer=["4", "4"])
    ('think_format+gsm8k_accuracy', [1.5, 0.0])
    """
    from rewardsmith.compose import combine

    made, chosen = reward_list(rewards, weights)
    if warn:
        for note in async_warnings(made, chosen, args):
            warnings.warn(note, UserWarning, stacklevel=2)
    if len(made) == 1 and (chosen is None or chosen == [1.0]):
        return made
    return [combine(made, chosen, missing="zero")]


def _loop_base() -> type:
    from trl.experimental.async_grpo.async_rollout_worker import _AsyncRolloutLoop

    return _AsyncRolloutLoop


class _Sink:
    """``log_metric`` for the rewards of one group: sums and counts per name, sent as rates (sum, count)."""

    def __init__(self) -> None:
        self.values: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])

    def __call__(self, name: str, value: float) -> None:
        if value is None or value != value:
            return
        slot = self.values[name]
        slot[0] += float(value)
        slot[1] += 1.0

    def payload(self) -> dict[str, tuple[float, float]]:
        return {name: (total, count) for name, (total, count) in self.values.items()}


def _make_loop_class() -> type:
    base = _loop_base()

    class RewardsmithRolloutLoop(base):  # type: ignore[misc, valid-type]
        """TRL's async rollout loop, scoring with a ``log_metric`` whose values go through ``metrics_queue``.

        What a reward logs while scoring a group is sent to the trainer as a rate
        ``(sum, count)`` (the trainer logs the window's mean, whatever the name);
        the rest of the scoring is TRL's own ``_score_group``.
        """

        async def _score_group(self, group: Any) -> list[Any]:
            sink = _Sink()
            group.reward_kwargs = {**group.reward_kwargs, "log_metric": sink}
            try:
                return await super()._score_group(group)
            finally:
                group.reward_kwargs.pop("log_metric", None)
                if sink.values:
                    self._push_metrics(sink.payload())

    RewardsmithRolloutLoop.__module__ = __name__
    RewardsmithRolloutLoop.__qualname__ = "RewardsmithRolloutLoop"
    return RewardsmithRolloutLoop


def __getattr__(name: str) -> Any:
    if name == "RewardsmithRolloutLoop":  # built on first use: TRL's experimental module is imported only then
        cls = _make_loop_class()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def keep_reward_metrics(trainer: Any) -> Any:
    """Make an ``AsyncGRPOTrainer`` score through :class:`RewardsmithRolloutLoop` (before ``train()``); returns it.

    The trainer's default worker spawns its rollout loop when training
    starts; this sets the class it spawns. A custom ``rollout_worker`` is left
    alone (it owns its scoring) with a warning.
    """
    from trl.experimental.async_grpo.async_rollout_worker import AsyncRolloutWorker

    worker = getattr(trainer, "rollout_worker", None)
    if worker is None:  # not the main process: no worker there
        return trainer
    if not isinstance(worker, AsyncRolloutWorker):
        warnings.warn(
            f"the trainer's rollout worker is a {type(worker).__name__}, not TRL's AsyncRolloutWorker: rewardsmith "
            "cannot hand its rewards a log_metric there, so per-component metrics are not logged",
            UserWarning,
            stacklevel=2,
        )
        return trainer
    if getattr(worker, "_process", None) is not None:
        raise RewardConfigError("keep_reward_metrics must be called before trainer.train(): the worker already runs")
    worker._loop_cls = __getattr__("RewardsmithRolloutLoop")
    return trainer
