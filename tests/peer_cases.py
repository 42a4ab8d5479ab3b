"""One replayed peer test case: our reward and settings, the call, and what the peer asserts about the scores.

The cases of open-r1 and TRL (tests/test_peer_suites.py) and of verl and reward-kit (tests/peer_replays.py)
are written with it; benchmarks/peer_replays.py counts the agreement per suite.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rewardsmith import get_reward


def msg(text: str) -> list[dict[str, str]]:
    """A completion as one assistant message."""
    return [{"role": "assistant", "content": text}]


@dataclass
class Case:
    """One peer test: our reward (name and settings), the call, and what the peer asserts about the scores.

    ``transform`` maps our score onto the peer's scale before comparing (reward-kit's repetition score is
    ``1 + ours``; verl's math_dapo pays -1 where ours pays 0); ``None`` stays ``None``.
    """

    source: str  # the peer and the test's name
    reward: str
    settings: dict[str, Any]
    completions: list[Any] | None = None
    columns: dict[str, Any] = field(default_factory=dict)
    expected: list[Any] | None = None  # values (None: not scored); compared within `places` decimals
    check: Callable[[list[Any]], bool] | None = None  # a relation the peer asserts instead of values
    places: int = 6
    prompts: list[Any] | None = None
    suite: str = ""  # the group it is counted in ("verl gsm8k", "reward-kit math", ...)
    transform: Callable[[float], float] | None = None

    def run(self) -> list[Any]:
        reward = get_reward(self.reward, **self.settings)
        scores = reward(prompts=self.prompts, completions=self.completions, **self.columns)
        if self.transform is None:
            return scores
        return [None if s is None else self.transform(s) for s in scores]

    def agrees(self, scores: list[Any]) -> bool:
        if self.check is not None:
            return bool(self.check(scores))
        assert self.expected is not None
        if len(scores) != len(self.expected):
            return False
        for got, want in zip(scores, self.expected):
            if want is None or got is None:
                if got is not want:
                    return False
            elif round(abs(got - want), self.places) != 0:
                return False
        return True
