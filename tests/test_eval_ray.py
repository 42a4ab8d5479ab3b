"""``rewardsmith eval --engine ray``: shards scored as Ray tasks on a real local Ray (2 CPUs) started here.

The files must be those of the local engine: the same rows in the same order,
the same summary, resume after ``kill -9`` with nothing lost or duplicated.
Runs on one xdist worker (group ``ray``) with the other Ray tests.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from typer.testing import CliRunner  # noqa: E402

from rewardsmith import evaluate  # noqa: E402
from rewardsmith.cli import app  # noqa: E402
from rewardsmith.core.errors import RewardConfigError  # noqa: E402
from rewardsmith.evaluation import iter_results  # noqa: E402
from tests.eval_helpers import write_rows  # noqa: E402
from tests.process_helpers import default_sigint  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray"), pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[1]
SLOW = "./tests/eval_helpers.py:slow_contains"
GATED = "./tests/eval_helpers.py:gated_contains"
HELPERS = "./tests/ray_eval_helpers.py"
TIMING = ("score_s",)


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield


@pytest.fixture(autouse=True)
def in_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # the helper rewards are named by paths relative to the checkout


def _rows(path: Path) -> list[dict]:
    return [{k: v for k, v in row.items() if k not in TIMING} for row in iter_results(path)]


def test_ray_engine_writes_the_files_of_the_local_engine(tmp_path):
    data = write_rows(tmp_path / "rows.jsonl", 45)
    options = dict(completions_column="completion", batch_size=4, progress=False)
    rewards = f"{SLOW},think_format"
    local = evaluate(str(data), rewards, tmp_path / "local", **options)
    on_ray = evaluate(str(data), rewards, tmp_path / "ray", engine="ray", **options)
    assert on_ray.complete and on_ray.summary["rows"] == 45
    assert _rows(on_ray.results_path) == _rows(local.results_path)
    assert [(r["index"], r["sample"]) for r in iter_results(on_ray.results_path)] == [(i, 0) for i in range(45)]
    assert on_ray.summary == local.summary
    assert json.loads(on_ray.summary_path.read_text()) == json.loads(local.summary_path.read_text())
    assert on_ray.report_path.read_text() == local.report_path.read_text()


def test_samples_are_scored_in_ray_worker_processes(tmp_path):
    data = write_rows(tmp_path / "rows.jsonl", 24)
    report = evaluate(
        str(data), f"{HELPERS}:contains_with_pid", tmp_path / "out", completions_column="completion",
        batch_size=2, progress=False, engine="ray",
    )  # fmt: skip
    pids = {row["rewards"]["contains_with_pid"]["metrics"]["pid"] for row in report.rows()}
    assert os.getpid() not in pids and len(pids) >= 1
    assert report.summary["rewards"]["contains_with_pid"]["scored"] == 24


def test_a_shard_whose_worker_dies_is_written_unscored_and_the_job_goes_on(tmp_path, monkeypatch):
    from rewardsmith.integrations.rayengine import evaluation as ray_eval

    monkeypatch.setattr(ray_eval, "_TASK_RETRIES", 0)
    rows = [{"prompt": f"q{i}", "answer": str(i), "completion": "die" if i == 5 else f"it is {i}"} for i in range(12)]
    report = evaluate(
        rows, f"{HELPERS}:contains_or_die", tmp_path / "out", converter="generic", completions_column="completion",
        batch_size=4, progress=False, engine="ray",
    )  # fmt: skip
    out = list(report.rows())
    assert [(r["index"], r["sample"]) for r in out] == [(i, 0) for i in range(12)]
    scores = [r["rewards"]["contains_or_die"]["score"] for r in out]
    assert scores[:4] == [1.0] * 4 and scores[8:] == [1.0] * 4
    assert scores[4:8] == [None] * 4  # the shard holding the sample that killed its worker
    assert "Ray task" in out[5]["rewards"]["contains_or_die"]["error"]
    assert report.summary["rewards"]["contains_or_die"]["error_rate"] == pytest.approx(4 / 12)


def test_kill_9_mid_run_then_resume_on_ray_loses_and_duplicates_nothing(tmp_path):
    gate = tmp_path / "gate"  # rows from 64 on wait for it: the job cannot end before the kill
    data = write_rows(tmp_path / "rows.jsonl", 160, pad=2_000, gate=gate)
    out = tmp_path / "out"
    script = textwrap.dedent(
        f"""
        import ray
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        from rewardsmith import evaluate
        evaluate({str(data)!r}, {GATED!r}, {str(out)!r}, completions_column="completion", batch_size=4,
                 progress=False, engine="ray")
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, cwd=ROOT, stderr=subprocess.PIPE)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 180
    while not (results.exists() and results.read_bytes().count(b"\n") >= 20):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the Ray job wrote nothing"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    gate.touch()
    kept = results.read_bytes().count(b"\n")
    assert 20 <= kept < 160
    with open(results, "ab") as handle:  # a torn line, as a kill in mid-write leaves
        handle.write(b'{"index": 999, "sample": 0, "prom')
    options = dict(completions_column="completion", batch_size=4, progress=False)
    resumed = evaluate(str(data), GATED, out, engine="ray", **options)
    fresh = evaluate(str(data), GATED, tmp_path / "fresh", completions_column="completion", progress=False)
    assert resumed.complete and resumed.summary["rows"] == 160
    assert [(r["index"], r["sample"]) for r in iter_results(results)] == [(i, 0) for i in range(160)]
    assert _rows(results) == _rows(fresh.results_path)
    assert resumed.summary["rewards"] == fresh.summary["rewards"]


def test_unknown_engine_is_a_config_error_and_nothing_is_written(tmp_path):
    with pytest.raises(RewardConfigError, match="unknown evaluation engine 'rya'"):
        evaluate([{"prompt": "p", "completion": "c"}], "think_format", tmp_path / "out", converter="generic",
                 completions_column="completion", engine="rya")  # fmt: skip
    assert not (tmp_path / "out").exists()


def test_a_reward_ray_cannot_receive_is_a_config_error_before_anything_is_written(tmp_path):
    import threading

    from rewardsmith import Reward

    class HoldsALock(Reward):
        def score(self, completion: str) -> float:
            return 1.0

    held = HoldsALock()
    held.lock = threading.Lock()
    with pytest.raises(RewardConfigError, match="cannot be sent to Ray workers"):
        evaluate([{"prompt": "p", "completion": "c"}], [held], tmp_path / "out", converter="generic",
                 completions_column="completion", engine="ray")  # fmt: skip
    assert not (tmp_path / "out").exists()


def test_the_command_takes_engine_ray(tmp_path):
    data = write_rows(tmp_path / "rows.jsonl", 10)
    args = ["eval", "--dataset", str(data), "--rewards", SLOW, "--completions-column", "completion"]
    args += ["--output-dir", str(tmp_path / "out"), "--engine", "ray", "--batch-size", "3", "--no-progress"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["rows"] == 10 and summary["complete"] is True
    bad = CliRunner().invoke(app, [*args[:-5], "--output-dir", str(tmp_path / "bad"), "--engine", "rya"])
    assert bad.exit_code == 2 and "unknown evaluation engine" in bad.output


def test_ctrl_c_during_a_ray_job_keeps_what_was_done_and_the_rerun_finishes(tmp_path):
    gate = tmp_path / "gate"  # rows from 64 on wait for it: the job cannot end before the Ctrl-C
    data = write_rows(tmp_path / "rows.jsonl", 160, gate=gate)
    out = tmp_path / "out"
    command = [sys.executable, "-c", "from rewardsmith.cli import main; main()", "eval", "--dataset", str(data)]
    command += ["--rewards", GATED, "--completions-column", "completion", "--output-dir", str(out)]
    command += ["--batch-size", "4", "--engine", "ray", "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    proc = subprocess.Popen(command, env=env, cwd=ROOT, preexec_fn=default_sigint, **pipes)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 180
    while not (results.exists() and results.read_bytes().count(b"\n") >= 20):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the Ray job wrote nothing"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    gate.touch()
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr[-2000:]
    assert b"interrupted" in stderr
    summary = json.loads((out / "summary.json").read_text())
    kept = [(r["index"], r["sample"]) for r in iter_results(results)]
    assert summary["complete"] is False and 20 <= summary["rows"] == len(kept) < 160
    assert kept == [(i, 0) for i in range(len(kept))]
    rerun = evaluate(str(data), GATED, out, completions_column="completion", batch_size=4, progress=False, engine="ray")
    assert rerun.complete and [(r["index"], r["sample"]) for r in rerun.rows()] == [(i, 0) for i in range(160)]
