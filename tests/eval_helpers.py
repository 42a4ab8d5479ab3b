"""Rewards and data for the evaluation tests (loaded by file path, also in subprocesses)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path


def slow_contains(completions, answer, **kwargs):
    """1.0 when the completion contains the answer; sleeps 50 ms per batch so a job runs long enough to stop."""
    time.sleep(0.05)
    return [float(str(a) in str(c)) for c, a in zip(completions, answer)]


#: Rows from this index on wait for their ``gate`` file (see :func:`gated_contains`).
GATED_FROM = 64


def gated_contains(completions, answer, gate, **kwargs):
    """:func:`slow_contains`, but a batch holding a row from index ``GATED_FROM`` on waits until its ``gate`` file
    exists: a job stopped by a test cannot have finished before the test stopped it, however busy the machine."""
    if any(int(a) >= GATED_FROM for a in answer):
        while not os.path.exists(gate[0]):
            time.sleep(0.02)
    return slow_contains(completions, answer)


def write_rows(path: Path, count: int, pad: int = 0, gate: Path | None = None) -> Path:
    """``count`` rows with a prompt, an answer and a completion (padded to ``pad`` characters) as JSON Lines;
    with ``gate``, each row names that file in a ``gate`` column."""
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(count):
            completion = ("x" * pad) + f" the answer is {i if i % 3 else i + 1}"
            row = {"prompt": f"question {i}", "answer": str(i), "completion": completion}
            handle.write(json.dumps(row if gate is None else {**row, "gate": str(gate)}) + "\n")
    return path
