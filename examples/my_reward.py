"""A reward written for a task: the number in the one ``<answer>`` block equals the reference.

``examples/test_my_reward.py`` tests it with ``rewardsmith.testing``.
"""

from __future__ import annotations

import re
from fractions import Fraction

from rewardsmith import RewardResult, reward

_TAG = re.compile(r"<(/?)answer>")
_NUMBER = re.compile(r"\s*(-?\d[\d,]*(?:\.\d+)?)\s*")
_INVISIBLE = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff\u00ad]")


@reward
def answer_number(completion: str, answer: str) -> RewardResult:
    """1 when the completion has exactly one ``<answer>`` block holding just the reference number, else 0."""
    tags = [(m.group(1), m.start(), m.end()) for m in _TAG.finditer(completion)]
    if [slash for slash, _, _ in tags] != ["", "/"]:
        return RewardResult(0.0, f"{len(tags) // 2 or 'no'} answer blocks, or unbalanced tags")
    stated = _INVISIBLE.sub("", completion[tags[0][2] : tags[1][1]])
    match = _NUMBER.fullmatch(stated)
    if match is None:
        return RewardResult(0.0, f"the answer block holds {stated.strip()[:40]!r}, not one number")
    value = Fraction(match.group(1).replace(",", ""))
    ok = value == Fraction(str(answer).replace(",", ""))
    return RewardResult(float(ok), f"stated {match.group(1)}, reference {answer}")
