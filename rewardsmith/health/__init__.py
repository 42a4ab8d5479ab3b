"""Reward health during training, in one place: is each reward still carrying signal?

* :mod:`~rewardsmith.health.monitor`: :class:`~rewardsmith.health.monitor.HealthMonitor` reads what a GRPO
  trainer logs and gives ``health/...`` metrics and one warning per crossed threshold; the fail-fast rule
  (:func:`~rewardsmith.health.monitor.silent_reward`);
* :mod:`~rewardsmith.health.tools`: the tool-use metrics and warnings of agent rollouts;
* :mod:`~rewardsmith.health.callback`: :class:`~rewardsmith.health.callback.RewardHealth`, the monitor as
  a TRL callback (on by default in ``rewardsmith train``; it imports transformers, the rest does not).
"""
