"""Reward-health overhead: ``rewardsmith train`` (monitor on) vs the same run written by hand with ``GRPOTrainer``.

Both runs train the embedded default config (``tiny_cpu.yaml``: the offline
tiny model, three rewards, 128 completions per step) for the same number of
steps, from the same seed, alternately in this one process. The subject is
``rewardsmith.train.run`` as the CLI calls it: our console, the reward
history and the reward-health monitor (``health/...`` metrics every logging
step, fail-fast check after the first step). The baseline is TRL alone: the
same rewards, dataset and ``GRPOConfig`` given to a ``GRPOTrainer`` built by
hand, with no callback of ours. Time per step is the trainer's own
``train_runtime`` over the steps (model loading and saving are outside it).
Printed: median seconds per step of each, the ratio of the medians and the
median of the per-round ratios (target <= 1.03), and, as a figure noise cannot
blur, the time spent inside our callbacks, measured directly, per step.

    python benchmarks/health_overhead.py [--steps 30] [--rounds 5]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from _common import verdict


def overrides(steps: int, logging_steps: int | None) -> list[str]:
    out = [f"max_steps={steps}", f"trainer.output_dir={tempfile.mkdtemp(prefix='health-bench-')}"]
    return out + ([f"trainer.logging_steps={logging_steps}"] if logging_steps else [])


@contextlib.contextmanager
def callback_clock() -> Iterator[list[float]]:
    """Seconds spent in the ``on_*`` events of our callbacks (health monitor, console, history), summed."""
    from rewardsmith.health.callback import RewardHealth
    from rewardsmith.train.callbacks import RewardConsole, RewardHistory

    spent = [0.0]
    originals = []
    for cls in (RewardHealth, RewardConsole, RewardHistory):
        for name, method in list(vars(cls).items()):
            if name.startswith("on_") and callable(method):
                originals.append((cls, name, method))

                def timed(*args, _method=method, **kwargs):
                    start = time.perf_counter()
                    try:
                        return _method(*args, **kwargs)
                    finally:
                        spent[0] += time.perf_counter() - start

                setattr(cls, name, functools.wraps(method)(timed))
    try:
        yield spent
    finally:
        for cls, name, method in originals:
            setattr(cls, name, method)


def through_rewardsmith_train(steps: int, logging_steps: int | None) -> float:
    """Seconds per step of ``rewardsmith train`` on the default config (health monitor on, as by default)."""
    from rich.console import Console

    from rewardsmith.demo import DEMO_CONFIG
    from rewardsmith.train import run

    result = run(DEMO_CONFIG, overrides(steps, logging_steps), console=Console(file=io.StringIO()))
    assert result.summary.health is not None, "the health monitor did not run"
    runtime = next(e["train_runtime"] for e in reversed(result.trainer.state.log_history) if "train_runtime" in e)
    return runtime / steps


def by_hand(steps: int, logging_steps: int | None) -> float:
    """Seconds per step of the same run: the same rewards, data and GRPOConfig in a GRPOTrainer, nothing else."""
    from trl import GRPOTrainer

    from rewardsmith.demo import DEMO_CONFIG
    from rewardsmith.train.model import load_model_and_tokenizer
    from rewardsmith.train.plan import plan_training

    plan = plan_training(DEMO_CONFIG, overrides(steps, logging_steps))
    plan.args.disable_tqdm = True
    model, tokenizer, _ = load_model_and_tokenizer(
        plan.config.model, plan.model_path, plan.config.dataset.conversational
    )
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        reward_funcs=plan.rewards,
        args=plan.args,
        train_dataset=plan.train_dataset,
    )
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    for quiet in (PrinterCallback, ProgressCallback):  # the subject prints to a buffer; the baseline prints nothing
        trainer.remove_callback(quiet)
    output = trainer.train()
    return output.metrics["train_runtime"] / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=30, help="optimisation steps per run")
    parser.add_argument("--rounds", type=int, default=5, help="runs of each, alternating")
    parser.add_argument(
        "--logging-steps", type=int, default=None, help="how often the monitor computes (default: the config's, 10)"
    )
    args = parser.parse_args()

    cases = {"by hand (GRPOTrainer)": by_hand, "rewardsmith train (health on)": through_rewardsmith_train}
    times: dict[str, list[float]] = {name: [] for name in cases}
    in_callbacks: list[float] = []
    for fn in cases.values():  # warm-up: imports, the tiny model's files, first-call caches
        fn(2, args.logging_steps)
    for round_ in range(args.rounds):
        order = list(cases.items()) if round_ % 2 == 0 else list(reversed(cases.items()))
        for name, fn in order:
            with callback_clock() as spent:
                times[name].append(fn(args.steps, args.logging_steps))
            if fn is through_rewardsmith_train:
                in_callbacks.append(spent[0] / args.steps)
        print(f"round {round_ + 1}/{args.rounds}: " + ", ".join(f"{n} {t[-1] * 1e3:.1f} ms" for n, t in times.items()))

    every = args.logging_steps or "the config's 10"
    print(f"\n{args.steps} steps per run, {args.rounds} runs each, health metrics every {every} step(s)")
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, seconds in medians.items():
        print(f"  {name:<32} {seconds * 1e3:8.1f} ms per step (median)")
    subject, baseline = times["rewardsmith train (health on)"], times["by hand (GRPOTrainer)"]
    ratio = medians["rewardsmith train (health on)"] / medians["by hand (GRPOTrainer)"]
    paired = statistics.median(a / b for a, b in zip(subject, baseline))
    print(f"  ratio of the medians, rewardsmith train / by hand: {ratio:.3f}  ({verdict(ratio, 1.03, False)})")
    print(f"  median of the per-round ratios:                    {paired:.3f}  ({verdict(paired, 1.03, False)})")
    spent = statistics.median(in_callbacks)
    share = spent / medians["by hand (GRPOTrainer)"]
    print(
        f"  inside our callbacks (monitor, console, history): {spent * 1e3:.2f} ms per step, {share:.1%} of a step "
        f"(as a ratio: {1 + share:.3f}, {verdict(1 + share, 1.03, False)})"
    )


if __name__ == "__main__":
    main()
