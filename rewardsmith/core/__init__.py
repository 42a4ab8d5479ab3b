"""The reward core: the Reward contract, authoring forms, input injection, the engine, composites, the registry.

Importing it loads nothing but these modules (no other layer of rewardsmith,
no torch, no TRL), so it is what worker processes load.
"""

from rewardsmith.core.async_reward import AsyncReward, run_sync
from rewardsmith.core.composite import AsyncComposite, Composite, Steps
from rewardsmith.core.describe import RewardInfo, describe_reward
from rewardsmith.core.engine import Scored
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
from rewardsmith.core.functions import AsyncFunctionReward, BatchFunctionReward, FunctionReward, reward
from rewardsmith.core.injection import Column, Computed, Input, Value
from rewardsmith.core.inputs import Batch
from rewardsmith.core.registry import (
    get_reward,
    get_rewards,
    list_rewards,
    register_entry_kind,
    register_reward,
    unregister_reward,
)
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward

__all__ = [
    "AsyncComposite",
    "AsyncFunctionReward",
    "AsyncReward",
    "Batch",
    "BatchFunctionReward",
    "Column",
    "Composite",
    "Computed",
    "DatasetError",
    "FunctionReward",
    "Input",
    "MissingColumnError",
    "Reward",
    "RewardConfigError",
    "RewardExecutionError",
    "RewardInfo",
    "RewardResult",
    "RewardReturnError",
    "RewardsmithError",
    "Scored",
    "Steps",
    "UnknownConverterError",
    "UnknownRewardError",
    "Value",
    "describe_reward",
    "get_reward",
    "get_rewards",
    "list_rewards",
    "register_entry_kind",
    "register_reward",
    "reward",
    "run_sync",
    "unregister_reward",
]
