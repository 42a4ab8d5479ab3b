"""Evaluation memory: peak RSS scoring 10,000 vs 100,000 rows (target <= 1.2x), and rows per second.

Each size runs in a fresh process (peak RSS is a high-water mark, so sizes
must not share one), scoring the reference solutions of the real GSM8K train
split, repeated to the size, with ``gsm8k_accuracy`` and ``think_format``
from a local JSON Lines file, exactly as ``rewardsmith eval`` would.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import verdict

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT.parent / "shared" / "data" / "gsm8k_train.jsonl"
SIZES = (10_000, 100_000)

CHILD = """
import json, resource, sys, time
from rewardsmith import evaluate

start = time.perf_counter()
report = evaluate(sys.argv[1], "gsm8k_accuracy,think_format", sys.argv[2], converter="gsm8k",
                  completions_column="solution", progress=False)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
print(json.dumps({"rows": report.summary["rows"], "seconds": seconds, "peak_mb": peak,
                  "accuracy": report.mean("gsm8k_accuracy")}))
"""


def _data(folder: Path, rows: int) -> Path:
    lines = [line for line in SOURCE.read_text(encoding="utf-8").splitlines() if line.strip()]
    path = folder / f"gsm8k_{rows}.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(rows):
            handle.write(lines[i % len(lines)] + "\n")
    return path


def main() -> None:
    if not SOURCE.is_file():
        print(f"skipped: {SOURCE} not found")
        return
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for rows in SIZES:
            data = _data(Path(folder), rows)
            out = Path(folder) / f"out_{rows}"
            done = subprocess.run(
                [sys.executable, "-c", CHILD, str(data), str(out)], capture_output=True, text=True, check=True
            )
            results[rows] = json.loads(done.stdout.strip().splitlines()[-1])
            r = results[rows]
            print(
                f"{rows:>7,} rows: peak RSS {r['peak_mb']:7.1f} MB, {r['seconds']:6.1f} s, "
                f"{r['rows'] / r['seconds']:8,.0f} rows/s, gsm8k_accuracy {r['accuracy']:.4f}"
            )
    small, large = (results[s] for s in SIZES)
    ratio = large["peak_mb"] / small["peak_mb"]
    growth = large["peak_mb"] - small["peak_mb"]
    print(f"peak RSS 100k / 10k: {ratio:.3f}x ({growth:+.1f} MB); {verdict(ratio, 1.2, False)}")


if __name__ == "__main__":
    main()
