"""`rewardsmith demo --seed`: the run trains with the seed asked for, and says so in its saved config."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.xdist_group("training")
def test_demo_seed_is_the_runs_training_seed(tmp_path):
    env = {**os.environ, "REWARDSMITH_CACHE": str(ROOT / ".cache"), "COLUMNS": "200"}
    command = [sys.executable, "-m", "rewardsmith.cli", "demo", "--max-steps", "2", "--seed", "7",
               "--output-dir", str(tmp_path / "run")]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    saved = yaml.safe_load((tmp_path / "run" / "rewardsmith_config.yaml").read_text())
    assert saved["trainer"]["seed"] == 7 and saved["trainer"]["max_steps"] == 2
    assert "which rewards learned" in done.stdout
