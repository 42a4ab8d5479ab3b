"""Composition overhead: think_format + gsm8k_accuracy as one ``combine`` vs as two TRL reward functions.

The baseline is what TRL does without rewardsmith.compose: each reward is its
own reward function and TRL applies ``reward_weights``. The subject is one
``combine([...], weights=[0.2, 1.0])`` reward, which also computes and logs
each component's mean and applicability. Both are timed called directly (the
baseline adds the weighted sum by hand) and through the real
``GRPOTrainer._calculate_rewards`` on the offline tiny model, round-robin in
the same process. Printed: microseconds per completion and the ratios. A
second case uses two trivial rewards (constants), so that what is left is the
cost of the composition itself (the batch shared by the components, the
weighted sum, the component metrics).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from _common import interleaved, tiny_grpo_trainer, verdict

from rewardsmith import get_reward, reward
from rewardsmith.compose import combine

N = 1024


@reward
def one(completion: str) -> float:
    return 1.0


@reward
def half(completion: str) -> float:
    return 0.5


def main() -> None:
    from rewardsmith.train.tiny_model import build_tiny_model

    model = build_tiny_model(Path(tempfile.gettempdir()) / "rewardsmith-bench-tiny")
    fmt, acc = get_reward("think_format"), get_reward("gsm8k_accuracy")
    both = combine([fmt, acc], weights=[0.2, 1.0])
    prompts = [[{"role": "user", "content": f"question {i // 8}"}] for i in range(N)]
    completions = [
        [{"role": "assistant", "content": f"<think>{'reasoning ' * 20}</think><answer>{i % 10}</answer>"}]
        for i in range(N)
    ]
    answers = [f"Some working.\n#### {i % 7}" for i in range(N)]
    inputs = [{"prompt": p, "answer": a} for p, a in zip(prompts, answers)]
    ids = [[1, 2, 3]] * N
    log = {"trainer_state": None, "log_metric": lambda *a: None, "log_extra": lambda *a: None}

    def by_hand():
        f = fmt(prompts=prompts, completions=completions, answer=answers, **log)
        a = acc(prompts=prompts, completions=completions, answer=answers, **log)
        return [0.2 * x + y for x, y in zip(f, a)]

    assert by_hand() == both(prompts=prompts, completions=completions, answer=answers)

    separate = tiny_grpo_trainer(model, [fmt, acc], prompts[0], [0.2, 1.0])
    combined = tiny_grpo_trainer(model, [both], prompts[0], [1.0])
    cases = {
        "two rewards, direct": by_hand,
        "combine, direct": lambda: both(prompts=prompts, completions=completions, answer=answers, **log),
        "two rewards, TRL path": lambda: separate._calculate_rewards(inputs, prompts, completions, ids),
        "combine, TRL path": lambda: combined._calculate_rewards(inputs, prompts, completions, ids),
    }
    times = interleaved(cases, rounds=40, inner=2)
    print(f"composition overhead: think_format + gsm8k_accuracy, weights 0.2 and 1.0, {N} completions")
    for name, seconds in times.items():
        print(f"  {name:<24} {seconds * 1e3:8.3f} ms per call   {seconds * 1e6 / N:6.3f} us per completion")
    direct = times["combine, direct"] / times["two rewards, direct"]
    trl = times["combine, TRL path"] / times["two rewards, TRL path"]
    added = (times["combine, direct"] - times["two rewards, direct"]) * 1e6 / N
    print(f"  ratio combine / two rewards, called directly:    {direct:.3f}  ({added:+.3f} us per completion)")
    print(f"  ratio combine / two rewards, through TRL's path: {trl:.3f}  ({verdict(trl, 1.05, False)})")

    trivial = combine([one, half], weights=[0.2, 1.0])
    texts = [c[0]["content"] for c in completions]

    def trivial_by_hand():
        a, b = one(completions=texts, **log), half(completions=texts, **log)
        return [0.2 * x + y for x, y in zip(a, b)]

    assert trivial_by_hand() == trivial(completions=texts)
    cases = {"two rewards": trivial_by_hand, "combine": lambda: trivial(completions=texts, **log)}
    times = interleaved(cases, rounds=40, inner=5)
    added = (times["combine"] - times["two rewards"]) * 1e6 / N
    print(f"two trivial rewards (constants), {N} completions, called directly")
    for name, seconds in times.items():
        print(f"  {name:<24} {seconds * 1e3:8.3f} ms per call   {seconds * 1e6 / N:6.3f} us per completion")
    print(f"  cost of the composition itself: {added:+.3f} us per completion")


if __name__ == "__main__":
    main()
