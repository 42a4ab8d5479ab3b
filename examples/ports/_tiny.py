"""What the five ports share: a few GRPO steps on the offline tiny model, then an evaluation and a check.

Each port trains on its own rows with its own rewards exactly as the original
code would hand them to TRL, then scores hand-written text completions with
the same rewards (``rewardsmith eval`` over a text column) and checks one
completion with ``reward.check(text)``. Nothing here needs the network.
"""

from __future__ import annotations

import io
import tempfile
from pathlib import Path
from typing import Any

#: Addition questions in GSM8K's shape (the reference ends with "#### N").
ROWS = [
    {"question": f"What is {a} + {b}?", "answer": f"{a} plus {b} is {a + b}.\n#### {a + b}"}
    for a in range(4)
    for b in range(4)
]


def tiny_trainer(output_dir: str | Path, steps: int = 2) -> dict[str, Any]:
    """Trainer settings for ``steps`` GRPO steps on the tiny model, on the CPU."""
    return {
        "learning_rate": 1e-3,
        "max_steps": steps,
        "per_device_train_batch_size": 8,
        "num_generations": 4,
        "max_completion_length": 8,
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": "none",
        "output_dir": str(output_dir),
    }


def train(config: Any, overrides: list[str] | None = None) -> Any:
    """Run ``rewardsmith train`` on ``config`` (a dict or a YAML path), quietly; returns the trainer's result."""
    from rich.console import Console

    from rewardsmith.train import run

    return run(config, overrides, console=Console(file=io.StringIO()))


def evaluate_text(config: Any, rows: list[dict[str, Any]], output_dir: str | Path, **options: Any) -> Any:
    """``rewardsmith eval CONFIG`` over a text column ``completion`` of ``rows`` (written to a JSONL file)."""
    import json

    from rewardsmith.evaluation import evaluate_config

    data = Path(tempfile.mkdtemp()) / "completions.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    overrides = {"dataset": {"source": str(data)}, "completions_column": "completion", "output_dir": str(output_dir)}
    return evaluate_config(config, {**overrides, "progress": False, **options})
