"""Trajectory rewards' overhead: 1,000 stored TRL rollouts scored by ``tool_success`` vs a hand-written TRL function.

The rollouts have TRL 1.16's shape after its tool loop (assistant messages
with parsed ``tool_calls``, ``tool`` messages with the results, TRL's
``{'error': ...}`` text for a tool that raised, a final answer), 1 to 4 calls
each, some failing, some with none. The same logic (the share of calls whose
tool returned without an error; ``None`` without calls) is written as a plain
TRL batch function that reads TRL's shape only, and timed round-robin in the
same process against rewardsmith's ``tool_success``, which normalises every
shape (TRL, OpenAI ``tool_calls`` with ids, ``<tool_call>`` text) into a
trajectory first. Printed: microseconds per rollout and the ratio (target <= 1.1).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import interleaved, verdict

from rewardsmith import get_reward

N = 1000


def rollouts(n: int, seed: int = 0) -> list[list[dict]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        messages: list[dict] = []
        for _ in range(rng.randint(0, 4)):
            call = {"type": "function", "function": {"name": "lookup", "arguments": {"key": f"k{rng.randint(0, 9)}"}}}
            messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
            failed = rng.random() < 0.2
            content = str({"error": "no such key"}) if failed else str(rng.randint(10, 99))
            messages.append({"role": "tool", "name": "lookup", "content": content})
        messages.append({"role": "assistant", "content": f"<answer>{rng.randint(10, 99)}</answer>"})
        out.append(messages)
    return out


def tool_success_by_hand(completions, **kwargs):
    """Hand-written TRL reward: share of calls whose tool message is not TRL's error text."""
    scores = []
    for messages in completions:
        calls = ok = 0
        for message in messages:
            if message["role"] == "assistant":
                calls += len(message.get("tool_calls") or [])
            elif message["role"] == "tool":
                ok += not str(message["content"]).startswith("{'error'")
        scores.append(ok / calls if calls else None)
    return scores


def main() -> None:
    data = rollouts(N)
    ours = get_reward("tool_success")
    assert ours(completions=data) == tool_success_by_hand(data), "the two must agree"
    times = interleaved(
        {"hand-written": lambda: tool_success_by_hand(data), "rewardsmith": lambda: ours(completions=data)}, rounds=30
    )
    base, mine = times["hand-written"], times["rewardsmith"]
    print(f"{N} stored trajectories (0-4 tool calls each)")
    print(f"hand-written TRL function: {base / N * 1e6:7.2f} us per rollout")
    print(f"rewardsmith tool_success:  {mine / N * 1e6:7.2f} us per rollout")
    print(f"ratio {mine / base:.2f}x ({verdict(mine / base, 1.1, higher_is_better=False)})")


if __name__ == "__main__":
    main()
