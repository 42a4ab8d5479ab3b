"""`rewardsmith demo` (what `make demo` runs) works offline and prints real scores."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_demo_scores_the_bundled_sample():
    from rewardsmith.demo import load_demo_sample, score_sample

    scores = score_sample()
    rows = load_demo_sample()
    notes = [row["note"] for row in rows]
    by_note = {note: {name: values[i] for name, values in scores.items()} for i, note in enumerate(notes)}
    assert by_note["hedges between two answers"]["gsm8k_accuracy"] == 0.0
    assert by_note["correct, chatter after the answer"]["think_format"] == 0.0
    assert by_note["correct, chatter after the answer"]["gsm8k_accuracy"] == 1.0
    assert by_note["answer before reasoning"]["think_format"] == 0.0
    assert by_note["wrong answer, good format"] == {"think_format": 1.0, "tag_count": 1.0, "gsm8k_accuracy": 0.0}


def test_demo_command_runs():
    result = subprocess.run(
        [sys.executable, "-m", "rewardsmith.cli", "rewards", "demo"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "mean gsm8k_accuracy" in result.stdout
