"""The reward types of a DeepScaleR-style reward (written for rewardsmith in that project's style, not copied).

A reward function object takes one ``RewardInput`` (the problem, the model's
response and the reference answers) and gives one ``RewardOutput`` (the
reward and whether the answer is right); ``RewardConfig`` holds the values it pays.
"""

from dataclasses import dataclass, field
from enum import Enum


@dataclass
class RewardConfig:
    """What each outcome pays, and whether a language model may grade what the rules cannot."""

    correct_reward: float = 1.0
    incorrect_reward: float = 0.0
    format_error_reward: float = 0.0
    unk_error_reward: float = 0.0
    use_math_orm: bool = False


class RewardType(Enum):
    MATH = "MATH"
    CODE = "CODE"
    UNK = "UNK"


@dataclass(kw_only=True)
class RewardInput:
    """One response to grade: ``ground_truth`` is ``{"answer": str or list of str}``."""

    problem: str
    problem_type: RewardType = RewardType.UNK
    model_response: str
    ground_truth: dict = field(default_factory=dict)


@dataclass(kw_only=True)
class RewardOutput:
    reward: float
    is_correct: bool


class RewardFn:
    """A reward function object: configured once, called on each ``RewardInput``."""

    def __init__(self, config: RewardConfig):
        self.config = config

    def __call__(self, input: RewardInput) -> RewardOutput:
        raise NotImplementedError("a reward function class implements __call__")
