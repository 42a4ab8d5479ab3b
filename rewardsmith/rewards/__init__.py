"""Built-in rewards, one module per family, each registered by name on import.

Heavy dependencies (math-verify, jsonschema) are imported inside the rewards
that need them, so importing rewardsmith stays fast (worker processes import
it too).
"""

from rewardsmith.rewards.format import TagCount, ThinkFormat
from rewardsmith.rewards.gsm8k import GSM8KAccuracy
from rewardsmith.rewards.math import MathAccuracy

__all__ = ["GSM8KAccuracy", "MathAccuracy", "TagCount", "ThinkFormat"]
