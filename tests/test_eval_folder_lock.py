"""Only one evaluation job writes a folder at a time, whatever its flags: ``--overwrite`` into the folder of a
running job is refused, also where the platform has no ``flock`` (a real job in a subprocess, the second job
started while it runs; the first job's rows wait on a gate file, so it is still running, however busy the
machine)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from eval_helpers import write_rows

from rewardsmith.evaluation.folder_lock import FolderLock

ROOT = Path(__file__).resolve().parents[1]
GATED = "./tests/eval_helpers.py:gated_contains"

#: Runs evaluate() as `rewardsmith eval` would; with NO_FLOCK, as on a platform without flock.
JOB = """
import sys
from rewardsmith.evaluation.results import EvaluationError
from rewardsmith.evaluation import evaluate
if sys.argv[1] == "NO_FLOCK":
    sys.modules["fcntl"] = None  # the lock's import of it fails, as where the platform has no flock
try:
    evaluate(sys.argv[2], sys.argv[3], sys.argv[4], completions_column="completion", progress=False, batch_size=8,
             overwrite=sys.argv[5] == "overwrite", max_samples=int(sys.argv[6]))
except EvaluationError as exc:
    print("REFUSED", exc)
    sys.exit(3)
"""


def _job(mode: str, data: Path, out: Path, overwrite: bool, rows: int) -> list[str]:
    flag = "overwrite" if overwrite else "resume"
    return [sys.executable, "-c", JOB, mode, str(data), GATED, str(out), flag, str(rows)]


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("mode", ["FLOCK", "NO_FLOCK"])
def test_overwrite_into_a_running_jobs_folder_is_refused(tmp_path, mode):
    gate = tmp_path / "gate"
    data = write_rows(tmp_path / "rows.jsonl", 100, gate=gate)
    out = tmp_path / "out"
    first = subprocess.Popen(_job(mode, data, out, False, 100), cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        results = out / "results.jsonl"
        while not results.exists() or not results.stat().st_size:
            assert first.poll() is None, first.stdout.read()
            time.sleep(0.1)
        second = subprocess.run(_job(mode, data, out, True, 3), cwd=ROOT, capture_output=True, text=True, timeout=240)
        assert second.returncode == 3, second.stdout + second.stderr
        assert "another evaluation" in second.stdout and str(first.pid) in second.stdout
    finally:
        gate.touch()
        first.wait(timeout=240)
    assert first.returncode == 0
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["index"] for r in rows] == list(range(100))  # the running job's results were not touched
    # the folder is free again once the job ends, and the record it left is cleared
    assert (out / ".lock").read_text() == ""
    again = subprocess.run(_job(mode, data, out, True, 3), cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert again.returncode == 0, again.stdout + again.stderr


def test_a_record_left_by_a_dead_process_is_stale(tmp_path):
    lock = tmp_path / ".lock"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    import socket

    lock.write_text(f"{dead.stdout.strip()} {socket.gethostname()} 1")
    taken = FolderLock(lock)
    taken.take()
    taken.release()
