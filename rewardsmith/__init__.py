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
"""

import rewardsmith.integrations.fireworks  # noqa: F401 - registers the fireworks: dataset source
from rewardsmith.core import (
    AsyncReward,
    Batch,
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
    describe_reward,
    get_reward,
    get_rewards,
    list_rewards,
    register_reward,
    reward,
    to_reward,
    unregister_reward,
)
from rewardsmith.evaluation.job import EvalReport, evaluate
from rewardsmith.integrations.reward_kit import EvaluateResult, MetricResult, reward_function
from rewardsmith.integrations.trl import to_trl

__version__ = "0.1.0"

__all__ = [
    "AsyncReward",
    "Batch",
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
    "UnknownConverterError",
    "UnknownRewardError",
    "__version__",
    "describe_reward",
    "evaluate",
    "get_reward",
    "get_rewards",
    "list_rewards",
    "register_reward",
    "reward",
    "reward_function",
    "to_reward",
    "to_trl",
    "unregister_reward",
]
