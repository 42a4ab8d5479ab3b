"""`rewardsmith demo` (what `make demo` runs) works offline and prints real scores."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

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


#: The suite's shortened demo run: its first 300 of 1,000 steps (a constant learning rate makes it the start of
#: the full run). Over the last 10% of those steps the mean ``gsm8k_accuracy`` was 0.51-0.99 on six seeds (0.58
#: on the config's seed 0), from 0.01-0.02 at the first logged step; the run asserts at least 0.3, three times
#: chance, a margin that held on every one of them.
REDUCED_STEPS = 300
MIN_END_ACCURACY = 0.3


@pytest.mark.slow
@pytest.mark.xdist_group("training")
def test_demo_learns_the_task_not_only_the_format(tmp_path, monkeypatch):
    """The embedded default, shortened: correctness (an exact check of the copied digit) rises from chance
    (one digit in ten) to well above it, the format is learned, and the summary gives each reward's verdict."""
    from rewardsmith.demo import train_demo

    monkeypatch.setenv("REWARDSMITH_CACHE", str(ROOT / ".cache"))
    out = io.StringIO()
    result = train_demo(tmp_path / "demo", max_steps=REDUCED_STEPS, console=Console(file=out, width=200))
    summary = result.summary
    assert summary.steps == REDUCED_STEPS
    # The start is the first logged step (as in the demo's verdicts): the first 10% already holds the climb.
    first = json.loads((tmp_path / "demo" / "reward_history.json").read_text())[0]
    assert first["gsm8k_accuracy"] <= 0.1, first  # chance: one digit in ten
    assert summary.rewards_end["gsm8k_accuracy"] >= MIN_END_ACCURACY, summary
    assert summary.rewards_end["think_format"] > first["think_format"] + 0.3, summary
    verdicts = out.getvalue().split("which rewards learned")[-1]
    assert "think_format: " in verdicts and "learned" in verdicts and "gsm8k_accuracy: " in verdicts
    curve = Path(summary.curve)
    assert curve.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "demo" / "health_history.json").exists()  # the curve's health panel has its data
    saved = json.loads((tmp_path / "demo" / "summary.json").read_text())
    assert saved["reward_end"] == pytest.approx(summary.reward_end)
    assert (tmp_path / "demo" / "model.safetensors").exists()


def test_demo_summary_says_which_rewards_learned():
    from rewardsmith.demo import reward_verdicts

    start = {"think_format": 0.05, "gsm8k_accuracy": 0.1, "tag_count": 0.4, "length": 0.9}
    end = {"think_format": 0.99, "gsm8k_accuracy": 0.15, "tag_count": 1.0, "length": 0.5}
    assert reward_verdicts(start, end) == {
        "think_format": "learned",
        "gsm8k_accuracy": "flat",
        "tag_count": "learned",
        "length": "fell",
    }
