"""The two demos behind the CLI, both offline: built-in rewards on a bundled sample, and a tiny training run.

* ``rewardsmith rewards demo`` (:func:`score_sample`): built-in rewards score
  a bundled sample of completions, and each score is shown with its reason.
  The sample holds GSM8K questions (MIT licence, openai/grade-school-math)
  with hand-written completions, good and bad: correct and well formatted,
  hedging between answers, chatter after the answer, empty reasoning, no
  tags, wrong.
* ``rewardsmith demo`` / ``make demo`` (:func:`train_demo`): the embedded
  default config (:data:`DEMO_CONFIG`, ``rewardsmith/configs/tiny_cpu.yaml``)
  trained end to end: the offline tiny model learns the answer format on 2 CPU
  cores in about a minute.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["DEMO_CONFIG", "DEMO_REWARDS", "load_demo_sample", "score_sample", "train_demo"]

DEMO_REWARDS = "think_format, tag_count, gsm8k_accuracy"
#: The embedded training config that ``make demo`` runs (copy it to start a config of your own).
DEMO_CONFIG = Path(str(resources.files("rewardsmith.configs").joinpath("tiny_cpu.yaml")))


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


def train_demo(output_dir: str | Path = "runs/demo", max_steps: int | None = None, console: Any = None) -> Any:
    """Train the tiny model on the bundled task with built-in rewards; returns the run's ``TrainResult``.

    The summary it prints gives the mean total reward over the first and the
    last 10% of logged steps, each reward's start and end, and the path of
    ``reward_curve.png``. Needs the ``train`` extra.
    """
    from rewardsmith.train.recipe import run

    overrides = [f"trainer.output_dir={Path(output_dir)}"]
    if max_steps is not None:
        overrides.append(f"trainer.max_steps={max_steps}")
    return run(DEMO_CONFIG, overrides, console=console)
