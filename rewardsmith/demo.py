"""The embedded demo: built-in rewards scoring a bundled sample of completions (no downloads).

The sample holds GSM8K questions (MIT licence, openai/grade-school-math) with
hand-written completions, good and bad: correct and well formatted, hedging
between answers, chatter after the answer, empty reasoning, no tags, wrong.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from rich.console import Console
from rich.table import Table

from rewardsmith.core.registry import get_rewards

DEMO_REWARDS = "think_format, tag_count, gsm8k_accuracy"


def load_demo_sample() -> list[dict[str, Any]]:
    """The bundled demo rows: ``prompt``, ``answer``, ``completion`` and a ``note`` on each."""
    text = resources.files("rewardsmith.data").joinpath("samples/demo_completions.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def run_demo(console: Console | None = None) -> dict[str, list[float | None]]:
    """Score the bundled sample with built-in rewards, print a table, return the scores by reward."""
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
