"""The reward core: the Reward contract, authoring forms, input normalisation, the engine, the registry."""

from rewardsmith.core.async_reward import AsyncReward
from rewardsmith.core.describe import RewardInfo, describe_reward
from rewardsmith.core.errors import (
    DatasetError,
    MissingColumnError,
    RewardConfigError,
    RewardExecutionError,
    RewardReturnError,
    RewardsmithError,
    UnknownConverterError,
    UnknownRewardError,
)
from rewardsmith.core.functions import AsyncFunctionReward, BatchFunctionReward, FunctionReward, reward, to_reward
from rewardsmith.core.inputs import Batch
from rewardsmith.core.registry import (
    get_reward,
    get_rewards,
    list_rewards,
    register_reward,
    unregister_reward,
)
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward

__all__ = [
    "AsyncFunctionReward",
    "AsyncReward",
    "Batch",
    "BatchFunctionReward",
    "DatasetError",
    "FunctionReward",
    "MissingColumnError",
    "Reward",
    "RewardConfigError",
    "RewardExecutionError",
    "RewardInfo",
    "RewardResult",
    "RewardReturnError",
    "RewardsmithError",
    "UnknownConverterError",
    "UnknownRewardError",
    "describe_reward",
    "get_reward",
    "get_rewards",
    "list_rewards",
    "register_reward",
    "reward",
    "to_reward",
    "unregister_reward",
]
