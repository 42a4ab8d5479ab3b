"""Adapter overhead: a cheap reward over 1024 completions, direct vs through TRL's reward path.

The cheap reward is the ``think_format`` built-in (a few microseconds per
completion); a stress case with a sub-microsecond reward follows, where the
per-sample Python call itself is a visible share.

The same reward logic is written twice: as a hand-written TRL batch function
(the baseline) and as a rewardsmith ``@reward``. Both are timed called
directly and called through the real ``GRPOTrainer._calculate_rewards`` (the
method TRL runs every step, on a trainer built on the offline tiny model),
round-robin in the same process. Printed: microseconds per completion and
the ratios. The target (<= 1.05) is for rewardsmith through TRL's path vs
the plain function through TRL's path.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from _common import interleaved, tiny_grpo_trainer, verdict

from rewardsmith import get_reward, reward, to_trl

N = 1024
ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


def answer_matches(completions, answer, **kwargs):
    """Hand-written TRL reward function: the <answer> block equals the reference."""
    out = []
    for completion, gold in zip(completions, answer):
        text = completion if isinstance(completion, str) else completion[0]["content"]
        match = ANSWER.search(text)
        out.append(1.0 if match and match.group(1).strip() == gold else 0.0)
    return out


@reward
def answer_matches_rs(completion: str, answer: str) -> float:
    """The same logic as a rewardsmith per-sample reward."""
    match = ANSWER.search(completion)
    return 1.0 if match and match.group(1).strip() == answer else 0.0


def _report(title: str, times: dict[str, float]) -> None:
    print(title)
    for name, seconds in times.items():
        print(f"  {name:<24} {seconds * 1e3:8.3f} ms per call   {seconds * 1e6 / N:6.3f} us per completion")
    trl_ratio = times["rewardsmith, TRL path"] / times["plain, TRL path"]
    direct_ratio = times["rewardsmith, direct"] / times["plain, direct"]
    path_ratio = times["rewardsmith, TRL path"] / times["rewardsmith, direct"]
    added = (times["rewardsmith, direct"] - times["plain, direct"]) * 1e6 / N
    print(f"  ratio rewardsmith / plain, through TRL's path: {trl_ratio:.3f}  ({verdict(trl_ratio, 1.05, False)})")
    print(f"  ratio rewardsmith / plain, called directly:    {direct_ratio:.3f}  ({added:+.3f} us per completion)")
    print(f"  ratio TRL path / direct, rewardsmith reward:   {path_ratio:.3f}  (TRL's own per-batch work included)")


def main() -> None:
    from rewardsmith.train.tiny_model import build_tiny_model

    model = build_tiny_model(Path(tempfile.gettempdir()) / "rewardsmith-bench-tiny")
    prompts = [[{"role": "user", "content": f"question {i % 64}"}] for i in range(N)]
    completions = [
        [{"role": "assistant", "content": f"<think>{'reasoning ' * 20}</think><answer>{i % 10}</answer>"}]
        for i in range(N)
    ]
    answers = [str(i % 7) for i in range(N)]
    inputs = [{"prompt": p, "answer": a} for p, a in zip(prompts, answers)]
    ids = [[1, 2, 3]] * N

    def trainer_with(fn):
        return tiny_grpo_trainer(model, [fn], prompts[0])

    plain_trainer = trainer_with(answer_matches)
    ours_trainer = trainer_with(to_trl(answer_matches_rs))
    extras = {"trainer_state": None, "log_metric": lambda *a: None, "log_extra": lambda *a: None}
    assert answer_matches(completions, answers) == answer_matches_rs(prompts, completions, answer=answers)

    # The cheap reward: the think_format built-in, its ThinkFormat.score logic looped by hand in a plain TRL
    # function vs run by the engine as a rewardsmith reward.
    fmt = get_reward("think_format")

    def think_format_plain(completions, **kwargs):
        return [fmt.score(c if isinstance(c, str) else c[0]["content"]).score for c in completions]

    plain_fmt_trainer = trainer_with(think_format_plain)
    ours_fmt_trainer = trainer_with(fmt)
    assert think_format_plain(completions) == fmt(prompts, completions)
    cases = {
        "plain, direct": lambda: think_format_plain(prompts=prompts, completions=completions, **extras),
        "rewardsmith, direct": lambda: fmt(prompts=prompts, completions=completions, **extras),
        "plain, TRL path": lambda: plain_fmt_trainer._calculate_rewards(inputs, prompts, completions, ids),
        "rewardsmith, TRL path": lambda: ours_fmt_trainer._calculate_rewards(inputs, prompts, completions, ids),
    }
    _report(
        f"adapter overhead: a cheap reward (the think_format built-in), {N} completions",
        interleaved(cases, rounds=30, inner=2),
    )

    # A stress case: a reward so cheap (one regex, about 0.5 us) that the cost of calling a Python function
    # once per sample shows. The ratio here measures that call, not the adapter.
    cases = {
        "plain, direct": lambda: answer_matches(prompts=prompts, completions=completions, answer=answers, **extras),
        "rewardsmith, direct": lambda: answer_matches_rs(
            prompts=prompts, completions=completions, answer=answers, **extras
        ),
        "plain, TRL path": lambda: plain_trainer._calculate_rewards(inputs, prompts, completions, ids),
        "rewardsmith, TRL path": lambda: ours_trainer._calculate_rewards(inputs, prompts, completions, ids),
    }
    length = len(completions[0][0]["content"])
    print()
    _report(
        f"stress case: a sub-microsecond reward (one regex over a {length}-char completion), {N} completions",
        interleaved(cases, rounds=60, inner=5),
    )


if __name__ == "__main__":
    main()
