"""The reward-health monitor as a TRL callback: on by default in ``rewardsmith train``, usable in any GRPOTrainer.

By hand::

    trainer = GRPOTrainer(model=..., reward_funcs=rewards, args=args, train_dataset=data)
    health = RewardHealth.attach(trainer)  # or trainer.add_callback(RewardHealth(rewards))
    trainer.train()
    health.summary()  # the warnings and each health metric's last, mean and worst value

At each logging step it adds ``health/...`` metrics to the log (what
:class:`~rewardsmith.health.monitor.HealthMonitor` computes) and prints one
warning per crossed threshold. After the first optimisation step it stops the
run with a :class:`~rewardsmith.health.monitor.SilentRewardError` when a reward
failed on every sample of that batch or cannot be called as TRL calls it,
unless that reward's ``on_error`` was set on purpose (or ``fail_fast=False``).

``attach`` puts the callback first after TRL's flow control, so that the
reporting integrations (W&B, TensorBoard, ...) and the trainer's log history
get the health metrics too; a callback added with ``add_callback`` comes after
the integrations, which then miss them (the log history still has them).
"""

from __future__ import annotations

from typing import Any

from transformers import TrainerCallback

from rewardsmith.health.monitor import HealthMonitor, HealthThresholds, SilentRewardError, silent_reward

__all__ = ["RewardHealth", "SilentRewardError"]


class RewardHealth(TrainerCallback):
    """Health metrics and warnings for the rewards of a GRPO run, and fail-fast on a silent reward.

    ``rewards`` are the trainer's reward functions (``trainer.reward_funcs``;
    :meth:`attach` fills them in); ``thresholds`` a
    :class:`~rewardsmith.health.monitor.HealthThresholds` or a dict of its fields.
    """

    def __init__(
        self,
        rewards: list[Any] | None = None,
        *,
        thresholds: HealthThresholds | dict[str, Any] | None = None,
        fail_fast: bool = True,
        weights: list[float] | None = None,
    ) -> None:
        self.rewards = list(rewards or [])
        self.thresholds = HealthThresholds.of(thresholds)
        self.fail_fast = fail_fast
        self.weights = weights
        self.monitor: HealthMonitor | None = None
        self.checked = False

    @classmethod
    def attach(cls, trainer: Any, **settings: Any) -> RewardHealth:
        """A monitor for ``trainer``'s rewards, placed before the reporting integrations; returns it."""
        weights = getattr(trainer, "reward_weights", None)
        callback = cls(list(getattr(trainer, "reward_funcs", []) or []), **settings)
        if callback.weights is None and weights is not None:
            callback.weights = [float(w) for w in weights]
        handler = trainer.callback_handler
        handler.callbacks.insert(min(1, len(handler.callbacks)), callback)
        return callback

    def _monitor(self, args: Any) -> HealthMonitor:
        if self.monitor is None:
            weights = self.weights
            if weights is None and getattr(args, "reward_weights", None) is not None:
                weights = list(args.reward_weights)
            self.monitor = HealthMonitor(self.rewards, weights, self.thresholds)
        return self.monitor

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        monitor = self._monitor(args)
        if state.global_step and not monitor.logs:
            # Resumed from a checkpoint: the first batch was judged before it, so its warnings are not repeated.
            monitor.logs = sum(1 for logs in getattr(state, "log_history", None) or [] if "reward" in logs)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        monitor = self._monitor(args)
        monitor.after_step()
        if self.checked:
            return
        scored = [r for r in monitor.leaves if r.counters.samples > 0]
        if not scored:
            return
        self.checked = True
        if self.fail_fast:
            for reward in monitor.ours:
                error = silent_reward(reward)
                if error is not None:
                    control.should_training_stop = True
                    raise error

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if not logs or any(k.startswith("eval_") for k in logs):
            return
        metrics, _ = self._monitor(args).observe(logs, state.global_step)
        if not metrics:
            return
        logs.update(metrics)
        history = getattr(state, "log_history", None)
        if history and history[-1].get("step") == state.global_step and "reward" in history[-1]:
            history[-1].update(metrics)

    def summary(self) -> dict[str, Any]:
        """The warnings and each health metric's last, mean and worst value."""
        return self.monitor.summary() if self.monitor is not None else {"warnings": [], "metrics": {}, "logs": 0}
