"""Trajectory rewards' overhead: 1,000 stored TRL rollouts scored by ``tool_success`` vs the same logic by hand.

The rollouts have TRL 1.16's shape after its tool loop (assistant messages
with parsed ``tool_calls``, ``tool`` messages with the results, TRL's
``{'error': ...}`` text for a tool that raised, a final answer): 0 to 4 calls
each, some failing, some made with the final answer (they never run).

The baseline is ``tool_success`` written by hand as a TRL batch function with
the same checks on TRL's conversational completions (1 when every call
succeeded, else 0): structured calls (a
name, arguments that are an object or a JSON object string), results paired
in order, TRL's error text, calls that never got a result, and ``<tool_call>``
blocks in the text outside ``<think>`` when a message has no structured calls;
``None`` without calls. Both are called directly and through the real
``GRPOTrainer._calculate_rewards`` (on a trainer built on the offline tiny
model), round-robin in one process. Printed: microseconds per rollout and the
ratios (the target, <= 1.1, is for the TRL path).
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from _common import interleaved, tiny_grpo_trainer, verdict

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
        final: dict = {"role": "assistant", "content": f"<answer>{rng.randint(10, 99)}</answer>"}
        if rng.random() < 0.1:  # a call made with the final answer: it never runs
            final["tool_calls"] = [{"type": "function", "function": {"name": "lookup", "arguments": "{}"}}]
        out.append([*messages, final])
    return out


def _well_formed(raw) -> bool:
    body = raw.get("function", raw) if isinstance(raw, dict) else None
    if not isinstance(body, dict) or not isinstance(body.get("name"), str) or not body["name"].strip():
        return False
    arguments = body.get("arguments") or {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return False
    return isinstance(arguments, dict)


def _text_calls(text: str) -> list:
    visible = text[text.rfind("</think>") + 8 :] if "</think>" in text else text.split("<think>")[0]
    out = []
    for block in visible.split("<tool_call>")[1:]:
        if "</tool_call>" in block:
            try:
                out.append(json.loads(block.split("</tool_call>")[0]))
            except ValueError:
                out.append(None)
    return out


def tool_success_by_hand(completions, **kwargs):
    """Hand-written TRL reward: 1 when every call was well formed and its result came back without TRL's error
    text, else 0 (all or nothing, as ``tool_success``: junk calls cannot pad a failure)."""
    scores = []
    for messages in completions:
        good: list[bool] = []  # one per call: well formed, answered, and not with an error
        waiting: list[int] = []  # calls of the last assistant turn still waiting for a result
        for message in messages:
            role = message.get("role")
            if role == "tool" and waiting:
                text = str(message.get("content"))
                index = waiting.pop(0)
                good[index] = good[index] is None and not text.lstrip().startswith(("{'error'", '{"error"'))
            elif role == "assistant":
                raw = message.get("tool_calls") or _text_calls(str(message.get("content") or ""))
                for index in waiting:  # a new turn: the calls still waiting never get a result
                    good[index] = False
                waiting = []
                for call in raw:
                    waiting.append(len(good))
                    good.append(None if _well_formed(call) else False)  # None: well formed, no result yet
        scores.append(float(all(g is True for g in good)) if good else None)
    return scores


def main() -> None:
    from rewardsmith.train.tiny_model import build_tiny_model

    data = rollouts(N)
    ours = get_reward("tool_success")
    assert ours(completions=data) == tool_success_by_hand(data), "the two must agree"
    model = build_tiny_model(Path(tempfile.gettempdir()) / "rewardsmith-bench-tiny")
    prompts = [[{"role": "user", "content": f"What is the code for k{i % 10}?"}] for i in range(N)]
    inputs = [{"prompt": p} for p in prompts]
    ids = [[1, 2, 3]] * N
    plain_trainer = tiny_grpo_trainer(model, [tool_success_by_hand], prompts[0])
    ours_trainer = tiny_grpo_trainer(model, [ours], prompts[0])
    extras = {"trainer_state": None, "log_metric": lambda *a: None, "log_extra": lambda *a: None}

    def step(trainer):
        # Each call is a new training step (as in training), so nothing read in an earlier call is reused.
        trainer.state.global_step += 1
        return trainer._calculate_rewards(inputs, prompts, data, ids)

    cases = {
        "hand-written, direct": lambda: tool_success_by_hand(prompts=prompts, completions=data, **extras),
        "rewardsmith, direct": lambda: ours(prompts=prompts, completions=data, **extras),
        "hand-written, TRL path": lambda: step(plain_trainer),
        "rewardsmith, TRL path": lambda: step(ours_trainer),
    }
    times = interleaved(cases, rounds=30, inner=2)
    calls = sum(len(m.get("tool_calls") or []) for r in data for m in r)
    print(f"{N} stored trajectories in TRL's shape ({calls} tool calls), tool_success")
    for name, seconds in times.items():
        print(f"  {name:<24} {seconds * 1e6 / N:7.2f} us per rollout")
    trl = times["rewardsmith, TRL path"] / times["hand-written, TRL path"]
    direct = times["rewardsmith, direct"] / times["hand-written, direct"]
    print(f"  ratio through TRL's path: {trl:.2f}x ({verdict(trl, 1.1, higher_is_better=False)})")
    print(f"  ratio called directly:    {direct:.2f}x")


if __name__ == "__main__":
    main()
