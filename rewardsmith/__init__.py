"""rewardsmith: reward functions for LLM reinforcement learning, as tested, first-class objects.

Every reward is a picklable callable with TRL's reward-function signature, so
the same object scores completions inside ``trl.GRPOTrainer``, in evaluation
jobs, and by name from a YAML config.

>>> from rewardsmith import reward
>>> @reward
... def brevity(completion: str, max_chars: int = 200) -> float:
...     return 1.0 if len(completion) <= max_chars else max_chars / len(completion)
>>> brevity(prompts=["Say hi"], completions=["hi"])
[1.0]

The core (the reward contract, the registry, the engine) is imported with the
package; everything else (composition, evaluation, reward-kit compatibility,
TRL helpers) is imported when first used, so ``import rewardsmith`` and the
worker processes stay light.
"""

from __future__ import annotations

import importlib
from typing import Any

from rewardsmith.core import (
    AsyncReward,
    Batch,
    Column,
    Composite,
    DatasetError,
    MissingColumnError,
    Reward,
    RewardConfigError,
    RewardExecutionError,
    RewardResult,
    RewardReturnError,
    RewardsmithError,
    UnknownConverterError,
    UnknownRewardError,
    Value,
    describe_reward,
    get_reward,
    get_rewards,
    list_rewards,
    register_reward,
    reward,
    unregister_reward,
)

__version__ = "0.2.0"

#: Names imported on first use: name -> module.
_LAZY = {
    "combine": "rewardsmith.compose",
    "gate": "rewardsmith.compose",
    "route": "rewardsmith.compose",
    "rewards_from_config": "rewardsmith.compose",
    "evaluate": "rewardsmith.evaluation",
    "EvalReport": "rewardsmith.evaluation",
    "reward_function": "rewardsmith.integrations.reward_kit",
    "EvaluateResult": "rewardsmith.integrations.reward_kit",
    "MetricResult": "rewardsmith.integrations.reward_kit",
    "to_trl": "rewardsmith.integrations.trl",
    "Turn": "rewardsmith.core.turns",
    "TurnReward": "rewardsmith.core.turns",
    "turn_reward": "rewardsmith.core.turns",
}


#: Subpackages reached as attributes (``rewardsmith.check(...)`` runs an audit: the package is callable).
_SUBPACKAGES = ("check",)


def __getattr__(name: str) -> Any:
    if name in _SUBPACKAGES:
        return importlib.import_module(f"rewardsmith.{name}")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'rewardsmith' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, *_SUBPACKAGES})


__all__ = [
    "AsyncReward",
    "Batch",
    "Column",
    "Composite",
    "DatasetError",
    "EvalReport",
    "EvaluateResult",
    "MetricResult",
    "MissingColumnError",
    "Reward",
    "RewardConfigError",
    "RewardExecutionError",
    "RewardResult",
    "RewardReturnError",
    "RewardsmithError",
    "Turn",
    "TurnReward",
    "UnknownConverterError",
    "UnknownRewardError",
    "Value",
    "__version__",
    "check",
    "combine",
    "describe_reward",
    "evaluate",
    "gate",
    "get_reward",
    "get_rewards",
    "list_rewards",
    "register_reward",
    "reward",
    "reward_function",
    "rewards_from_config",
    "route",
    "to_trl",
    "turn_reward",
    "unregister_reward",
]
