"""Rewards for the reward-server tests, imported by the server through a config's ``imports:``."""

from __future__ import annotations

import asyncio
import os
import time

from rewardsmith import RewardResult, register_reward, reward


@register_reward("vowel_share")
@reward
def vowel_share(completion: str) -> RewardResult:
    """Share of letters that are vowels, with the counts as metrics; ``None`` for an empty completion."""
    letters = [c for c in completion.lower() if c.isalpha()]
    if not letters:
        return RewardResult(None, "no letters")
    vowels = sum(c in "aeiou" for c in letters)
    return RewardResult(vowels / len(letters), f"{vowels}/{len(letters)} vowels", {"letters": len(letters)})


@register_reward("slow_length")
@reward
def slow_length(completion: str, delay: float = 0.0) -> float:
    """The completion's length, after sleeping ``delay`` seconds (a column), to keep a batch in flight."""
    time.sleep(float(delay or 0.0))
    return float(len(completion))


@register_reward("async_echo")
@reward
async def async_echo(completion: str, answer: str = "") -> float:
    """1.0 when the completion equals the answer column, scored on the server's event loop."""
    await asyncio.sleep(0.001)
    return float(completion.strip() == str(answer).strip())


@register_reward("fails_on_boom")
@reward
def fails_on_boom(completion: str) -> float:
    """The completion's length; raises on a completion that contains ``boom`` (the server scores it ``None``)."""
    if "boom" in completion:
        raise ValueError("boom")
    return float(len(completion))


@register_reward("gated_length")
@reward
def gated_length(completion: str, gate: str = "") -> float:
    """The completion's length, once the file ``gate`` (a column) exists: holds a batch in flight until the test
    opens the gate (it gives up after 120 s, raising)."""
    if gate:
        deadline = time.monotonic() + 120
        while not os.path.exists(gate):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the gate {gate} was not opened")
            time.sleep(0.01)
    return float(len(completion))
