"""Built-in rewards, one module per family, each registered by name on import.

Heavy dependencies (math-verify, jsonschema, NLTK, langdetect, jieba) are imported inside the rewards
that need them, so importing rewardsmith stays fast (worker processes import
it too).
"""

from rewardsmith.rewards.code import CodeSyntax
from rewardsmith.rewards.code_tests import CodeTests
from rewardsmith.rewards.countdown import Countdown
from rewardsmith.rewards.format import TagCount, ThinkFormat
from rewardsmith.rewards.group_length import GroupLength
from rewardsmith.rewards.gsm8k import GSM8KAccuracy
from rewardsmith.rewards.ifeval import IFEval
from rewardsmith.rewards.language import LanguageConsistency
from rewardsmith.rewards.length import CosineLength, Length, SoftOverlong
from rewardsmith.rewards.math import MathAccuracy
from rewardsmith.rewards.repetition import ReasoningSteps, Repetition
from rewardsmith.rewards.structured import JSONSchema
from rewardsmith.rewards.tool_match import ToolCallMatch
from rewardsmith.rewards.tool_turns import ToolSchemaTurns, ToolSuccessTurns
from rewardsmith.rewards.tools import EnvironmentReward, ToolEfficiency, ToolSchema, ToolSuccess

__all__ = [
    "CodeSyntax",
    "CodeTests",
    "CosineLength",
    "Countdown",
    "EnvironmentReward",
    "GSM8KAccuracy",
    "GroupLength",
    "IFEval",
    "JSONSchema",
    "LanguageConsistency",
    "Length",
    "MathAccuracy",
    "ReasoningSteps",
    "Repetition",
    "SoftOverlong",
    "TagCount",
    "ThinkFormat",
    "ToolCallMatch",
    "ToolEfficiency",
    "ToolSchema",
    "ToolSchemaTurns",
    "ToolSuccess",
    "ToolSuccessTurns",
]
