"""The two demos behind the CLI, both offline: built-in rewards on a bundled sample, and a tiny training run.

* ``rewardsmith rewards demo`` (:func:`score_sample`): built-in rewards score
  a bundled sample of completions, and each score is shown with its reason.
  The sample holds GSM8K questions (MIT licence, openai/grade-school-math)
  with hand-written completions, good and bad: correct and well formatted,
  hedging between answers, chatter after the answer, empty reasoning, no
  tags, wrong.
* ``rewardsmith demo`` / ``make demo`` (:func:`train_demo`): the embedded
  default config (:data:`DEMO_CONFIG`, ``rewardsmith/configs/tiny_cpu.yaml``)
  trained end to end on one CPU thread: the offline tiny model, from random
  weights, learns the answer format and then to repeat the digit in its
  prompt, scored by an exact-answer check (``gsm8k_accuracy``); the summary
  says which rewards were learned.
* ``rewardsmith demo real`` (:func:`train_demo` with :data:`REAL_DEMO_CONFIG`,
  ``rewardsmith/configs/real_cpu.yaml``): a real pretrained chat model,
  SmolLM2-135M-Instruct (``builtin:smollm2-135m-instruct``, converted once
  from the GGUF file ``make install`` installs), learns with LoRA to answer
  one-digit sums briefly and right instead of chatting (a correctness reward
  and a format reward gated on it), on one CPU thread; the same summary.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = [
    "DEMO_CONFIG",
    "DEMO_REWARDS",
    "LEARNED_RISE",
    "REAL_DEMO_CONFIG",
    "load_demo_sample",
    "reward_verdicts",
    "score_sample",
    "train_demo",
]

DEMO_REWARDS = "think_format, tag_count, gsm8k_accuracy"
#: The embedded training config that ``make demo`` runs (copy it to start a config of your own).
DEMO_CONFIG = Path(str(resources.files("rewardsmith.configs").joinpath("tiny_cpu.yaml")))
#: The real model's demo config (``rewardsmith demo real``).
REAL_DEMO_CONFIG = Path(str(resources.files("rewardsmith.configs").joinpath("real_cpu.yaml")))


def load_demo_sample() -> list[dict[str, Any]]:
    """The bundled demo rows: ``prompt``, ``answer``, ``completion`` and a ``note`` on each.

    >>> rows = load_demo_sample()
    >>> sorted(rows[0])
    ['answer', 'completion', 'note', 'prompt']
    """
    text = resources.files("rewardsmith.data").joinpath("samples/demo_completions.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def score_sample(console: Any = None) -> dict[str, list[float | None]]:
    """Score the bundled sample with built-in rewards, print a table, return the scores by reward."""
    from rich.console import Console
    from rich.table import Table

    from rewardsmith.core.registry import get_rewards

    console = console or Console()
    rows = load_demo_sample()
    rewards = get_rewards(DEMO_REWARDS)
    prompts = [row["prompt"] for row in rows]
    completions = [row["completion"] for row in rows]
    answers = [row["answer"] for row in rows]
    results = {r.name: r.explain(prompts=prompts, completions=completions, answer=answers) for r in rewards}

    table = Table(title="rewardsmith demo: built-in rewards on a bundled sample", show_lines=True)
    table.add_column("completion", max_width=48)
    table.add_column("what it is", style="dim", max_width=22)
    for r in rewards:
        table.add_column(r.name, justify="center")
    for i, row in enumerate(rows):
        cells = []
        for r in rewards:
            result = results[r.name][i]
            score = "n/a" if result.score is None else f"{result.score:g}"
            cells.append(f"[bold]{score}[/]\n[dim]{result.reason}[/]")
        table.add_row(row["completion"], row["note"], *cells)
    console.print(table)
    for r in rewards:
        scores = [res.score for res in results[r.name] if res.score is not None]
        console.print(f"mean {r.name}: {sum(scores) / len(scores):.3f} over {len(scores)} completions")
    return {name: [res.score for res in res_list] for name, res_list in results.items()}


#: How much a reward's mean must rise (first logged step to the last 10% of them) for the demo to call it learned.
LEARNED_RISE = 0.2


def reward_verdicts(
    rewards_start: dict[str, float | None], rewards_end: dict[str, float | None], min_rise: float = LEARNED_RISE
) -> dict[str, str]:
    """Whether each reward was learned: ``"learned"`` (rose by ``min_rise`` or more), ``"rose a little"`` (by a
    quarter of that or more), ``"fell"`` (by ``min_rise`` or more) or ``"flat"``.

    >>> start = {"format": 0.1, "accuracy": 0.12, "length": 0.9}
    >>> reward_verdicts(start, {"format": 0.95, "accuracy": 0.15, "length": 0.4})
    {'format': 'learned', 'accuracy': 'flat', 'length': 'fell'}
    >>> reward_verdicts({"accuracy": 0.01}, {"accuracy": 0.19})
    {'accuracy': 'rose a little'}
    >>> reward_verdicts({"accuracy": None}, {"accuracy": None})
    {'accuracy': 'n/a'}
    """
    verdicts = {}
    for name, start in rewards_start.items():
        end = rewards_end.get(name)
        if start is None or end is None:
            verdicts[name] = "n/a"
        elif end - start >= min_rise:
            verdicts[name] = "learned"
        elif end - start >= min_rise / 4:
            verdicts[name] = "rose a little"
        else:
            verdicts[name] = "fell" if start - end >= min_rise else "flat"
    return verdicts


def train_demo(
    output_dir: str | Path = "runs/demo",
    max_steps: int | None = None,
    console: Any = None,
    seed: int | None = None,
    config: str | Path = DEMO_CONFIG,
) -> Any:
    """Train a demo config (the tiny model's, or :data:`REAL_DEMO_CONFIG`) on its bundled task; returns the
    run's ``TrainResult``.

    The summary it prints gives the mean total reward over the first and the
    last 10% of logged steps, each reward's start and end, the path of
    ``reward_curve.png``, and then which rewards were learned
    (:func:`reward_verdicts`, from the first logged step to the last 10%).
    ``seed`` replaces the config's training seed (data order and sampling). Needs the ``train`` extra.
    """
    from rich.console import Console

    from rewardsmith.train.recipe import run

    console = console or Console()
    overrides = [f"trainer.output_dir={Path(output_dir)}"]
    if max_steps is not None:
        overrides.append(f"trainer.max_steps={max_steps}")
    if seed is not None:
        overrides.append(f"trainer.seed={seed}")
    with _one_thread():
        result = run(config, overrides, console=console)
    _show_verdicts(result.summary, console)
    return result


@contextmanager
def _one_thread() -> Iterator[None]:
    """Run torch on one thread: for these models on a shared CPU, extra threads cost more than they save
    (benchmarks/real_model.py)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _show_verdicts(summary: Any, console: Any) -> None:
    # The start is the first logged step, not the first 10%: a format learned within the first tenth of the
    # run would otherwise look flat.
    history = Path(summary.output_dir) / "reward_history.json"
    first = json.loads(history.read_text())[0] if history.exists() else {}
    start = {name: first.get(name, value) for name, value in summary.rewards_start.items()}
    verdicts = reward_verdicts(start, summary.rewards_end)
    step = first.get("step", "?")
    console.print(f"[bold]which rewards learned[/] (step {step} vs the last 10% of logged steps):", highlight=False)
    for name, verdict in verdicts.items():
        begin, end = start[name], summary.rewards_end.get(name)
        figures = "" if begin is None or end is None else f"{begin:.3f} -> {end:.3f}"
        style = {"learned": "green", "fell": "red"}.get(verdict, "yellow")
        console.print(f"  {name}: {figures} [{style}]{verdict}[/]", highlight=False)
