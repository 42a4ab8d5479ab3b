"""Worker processes and what rewards start in them: nothing outlives a timeout, a closed pool or a dead parent;
the number of workers stays within what the batch and the machine can use."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from engine_rewards import SpawnsChildren, worker_pid
from process_helpers import alive, wait_gone

from rewardsmith import RewardConfigError, get_reward
from rewardsmith.core.processes import usable_cpus

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("engine")]

ROOT = Path(__file__).resolve().parents[1]


def _pids(pid_file: Path) -> list[int]:
    deadline = time.monotonic() + 60  # a hang guard: returns as soon as the file is written
    while time.monotonic() < deadline:
        if pid_file.exists() and pid_file.read_text().strip():
            return [int(p) for p in pid_file.read_text().split()]
        time.sleep(0.05)
    raise AssertionError("the reward never wrote its children's pids")


@pytest.fixture(autouse=True)
def _linux_only():
    if not Path("/proc/self/stat").exists():
        pytest.skip("checks the process table in /proc")


def test_a_timed_out_reward_takes_every_process_it_started_with_it(tmp_path):
    pid_file = tmp_path / "pids"
    spawner = SpawnsChildren(pid_file=str(pid_file), timeout=2.0)
    scores = spawner(completions=["stay"])
    children = _pids(pid_file)
    assert scores == [None] and spawner.stats["timeouts"] == 1
    assert len(children) == 3  # a child, one in a session of its own, a fork
    assert wait_gone(children) == []  # they ran at full CPU after the parent moved on, before
    spawner.close()


def test_closing_the_pool_stops_what_its_rewards_leftalive(tmp_path):
    pid_file = tmp_path / "pids"
    spawner = SpawnsChildren(pid_file=str(pid_file), workers=1, timeout=30.0)
    assert spawner(completions=["return"]) == [1.0]
    children = _pids(pid_file)
    assert all(alive(p) for p in children)  # the sample is done, its processes still run
    spawner.close()
    assert wait_gone(children) == []


@pytest.mark.parametrize("how", ["exit", "kill"])
def test_nothing_a_reward_started_outlives_the_training_process(tmp_path, how):
    pid_file = tmp_path / "pids"
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent(f"""
            import os, signal, sys
            sys.path.insert(0, {str(ROOT / "tests")!r})
            from engine_rewards import SpawnsChildren
            r = SpawnsChildren(pid_file={str(pid_file)!r}, workers=1, timeout=60.0)
            r(completions=["return"])
            if {how!r} == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
        """)
    )
    subprocess.run([sys.executable, str(script)], cwd=ROOT, timeout=120, check=False)
    children = _pids(pid_file)
    assert wait_gone(children) == []


def test_a_pool_never_starts_more_workers_than_samples_or_cpus(caplog):
    r = worker_pid.configure(workers=32)
    with caplog.at_level(logging.WARNING, logger="rewardsmith"):
        pids = r(completions=["slow0.3", "slow0.3"])
    assert len(set(pids)) <= min(2, usable_cpus())
    assert len(r._pool().pids) <= min(2, usable_cpus())  # 32 processes for a 2-sample batch before
    if usable_cpus() < 32:
        assert "usable CPUs" in caplog.text
    r.close()


@pytest.mark.parametrize("workers", [100_000, 1025, 0, -1, 2.5, "4", True])
def test_an_absurd_number_of_workers_is_a_config_error(workers):
    with pytest.raises(RewardConfigError, match="workers"):
        get_reward("math_accuracy", workers=workers)


def test_the_training_dry_run_refuses_absurd_workers_and_notes_capped_ones(tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text('{"question": "2+2?", "answer": "#### 4"}\n{"question": "2+3?", "answer": "#### 5"}\n')
    config = tmp_path / "run.yaml"

    def dry_run(workers: int, **environ: str) -> subprocess.CompletedProcess:
        config.write_text(
            textwrap.dedent(f"""
                model: {{name_or_path: "builtin:tiny"}}
                dataset: {{source: {str(data)!r}, converter: gsm8k}}
                rewards:
                  - {{name: gsm8k_accuracy, kwargs: {{workers: {workers}}}}}
                trainer: {{num_generations: 2, per_device_train_batch_size: 2, learning_rate: 1.0e-3}}
            """)
        )
        env = {**os.environ, "PYTHONWARNINGS": "ignore", **environ}
        command = [sys.executable, "-m", "rewardsmith.cli", "train", str(config), "--dry-run"]
        return subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)

    refused = dry_run(100_000)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "workers=100000 is more than 1024" in refused.stdout + refused.stderr
    many = usable_cpus() + 1
    noted = dry_run(many)
    assert noted.returncode == 0, noted.stdout + noted.stderr
    assert f"asks for workers={many}" in noted.stdout + noted.stderr
    # the node's budget, as the pool itself counts it (REWARDSMITH_NODE_CPUS here; ranks share it in a launch)
    shared = dry_run(2, REWARDSMITH_NODE_CPUS="1")
    assert shared.returncode == 0, shared.stdout + shared.stderr
    assert "asks for workers=2, but this rank's CPU budget is 1" in shared.stdout + shared.stderr


def test_worker_process_groups_are_their_own():
    r = worker_pid.configure(workers=1, timeout=30.0)
    [pid] = r(completions=["x"])
    assert os.getpgid(int(pid)) == int(pid) != os.getpgid(0)  # a group to kill whole, apart from this one
    r.close()
    assert signal.SIGKILL  # the group is killed with SIGKILL; nothing to clean up here
