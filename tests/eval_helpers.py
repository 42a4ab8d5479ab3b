"""Rewards and data for the evaluation tests (loaded by file path, also in subprocesses)."""

from __future__ import annotations

import json
import time
from pathlib import Path


def slow_contains(completions, answer, **kwargs):
    """1.0 when the completion contains the answer; sleeps 50 ms per batch so a job runs long enough to stop."""
    time.sleep(0.05)
    return [float(str(a) in str(c)) for c, a in zip(completions, answer)]


def write_rows(path: Path, count: int, pad: int = 0) -> Path:
    """``count`` rows with a prompt, an answer and a completion (padded to ``pad`` characters) as JSON Lines."""
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(count):
            completion = ("x" * pad) + f" the answer is {i if i % 3 else i + 1}"
            handle.write(json.dumps({"prompt": f"question {i}", "answer": str(i), "completion": completion}) + "\n")
    return path
