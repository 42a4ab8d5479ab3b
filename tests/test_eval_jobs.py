"""Evaluation jobs end to end: the real command on the shared GSM8K file, resuming after kill -9, Ctrl-C, folders."""

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
from typer.testing import CliRunner

from rewardsmith import evaluate
from rewardsmith.cli import app
from rewardsmith.evaluation import EvaluationError, iter_results, load_eval_config
from rewardsmith.evaluation.results import JobFolder
from tests.eval_helpers import write_rows
from tests.process_helpers import default_sigint

ROOT = Path(__file__).resolve().parents[1]
HELPERS = "./tests/eval_helpers.py:slow_contains"
GATED = "./tests/eval_helpers.py:gated_contains"
CLI = [sys.executable, "-c", "from rewardsmith.cli import main; main()"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}


def _keys(path: Path) -> list[tuple[int, int]]:
    return [(row["index"], row["sample"]) for row in iter_results(path)]


def _wait_for_lines(path: Path, count: int, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= count:
            return
        if proc.poll() is not None:
            raise AssertionError(f"the job ended before writing {count} rows: {proc.communicate()}")
        time.sleep(0.02)
    raise AssertionError(f"no {count} rows in {path} after {timeout}s")


def test_gsm8k_reference_solutions_score_at_least_0_995_with_the_command(shared_data, tmp_path):
    out = tmp_path / "gsm8k"
    args = ["eval", "--dataset", str(shared_data / "gsm8k_test.jsonl"), "--converter", "gsm8k"]
    args += ["--rewards", "gsm8k_accuracy,think_format", "--completions-column", "solution", "--output-dir", str(out)]
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    accuracy = summary["rewards"]["gsm8k_accuracy"]
    assert summary["rows"] == 1319 and summary["complete"] is True
    assert accuracy["mean"] >= 0.995 and accuracy["error_rate"] == 0.0 and accuracy["scored"] == 1319
    assert summary["rewards"]["think_format"]["mean"] == 0.0  # reference solutions have no tags
    assert "gsm8k_accuracy" in done.stdout and "rows/s" in done.stderr
    assert _keys(out / "results.jsonl") == [(i, 0) for i in range(1319)]


@pytest.mark.slow
def test_kill_9_mid_run_then_rerun_loses_and_duplicates_nothing(tmp_path):
    gate = tmp_path / "gate"  # rows from 64 on wait for it: the job cannot end before the kill
    data = write_rows(tmp_path / "rows.jsonl", 240, pad=20_000, gate=gate)  # 20 kB rows: written in many pieces
    out = tmp_path / "out"
    script = textwrap.dedent(
        f"""
        from rewardsmith import evaluate
        evaluate({str(data)!r}, {GATED!r}, {str(out)!r}, completions_column="completion", batch_size=8,
                 progress=False)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], env=_env(), cwd=ROOT, stderr=subprocess.PIPE)
    _wait_for_lines(out / "results.jsonl", 40, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    gate.touch()
    raw = (out / "results.jsonl").read_bytes()
    kept = raw.count(b"\n")
    assert 40 <= kept < 240
    # Whether the kill cut a line or not, leave a torn line at the end, as a kill in mid-write does.
    with open(out / "results.jsonl", "ab") as handle:
        handle.write(b'{"index": 999, "sample": 0, "prompt": "que')
    report = evaluate(str(data), GATED, out, completions_column="completion", batch_size=8, progress=False)
    assert report.complete and report.summary["rows"] == 240
    assert _keys(out / "results.jsonl") == [(i, 0) for i in range(240)]
    fresh = evaluate(str(data), GATED, tmp_path / "fresh", completions_column="completion", progress=False)
    assert report.summary["rewards"] == fresh.summary["rewards"]
    resumed_rows = [json.dumps(r, sort_keys=True) for r in iter_results(out / "results.jsonl")]
    fresh_rows = [json.dumps(r, sort_keys=True) for r in iter_results(tmp_path / "fresh" / "results.jsonl")]
    strip = lambda rows: [json.loads(r) | {"score_s": None} for r in rows]  # noqa: E731 - timing differs
    assert strip(resumed_rows) == strip(fresh_rows)


def _limit_file_size() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (250_000, 250_000))


@pytest.mark.slow
def test_a_process_killed_inside_a_write_leaves_a_torn_line_that_the_rerun_drops(tmp_path):
    # The kernel stops the write at the file size limit and kills the process (SIGXFSZ) in mid-line.
    data = write_rows(tmp_path / "rows.jsonl", 40, pad=20_000)
    out = tmp_path / "out"
    script = (  # Python ignores SIGXFSZ; the child takes the default (be killed) back
        "import signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_DFL)\nfrom rewardsmith import evaluate\n"
        f"evaluate({str(data)!r}, {HELPERS!r}, {str(out)!r}, completions_column='completion', batch_size=8, "
        "progress=False)"
    )
    done = subprocess.run([sys.executable, "-c", script], env=_env(), cwd=ROOT, preexec_fn=_limit_file_size)
    assert done.returncode == -signal.SIGXFSZ
    raw = (out / "results.jsonl").read_bytes()
    assert len(raw) == 250_000 and not raw.endswith(b"\n")  # a torn last line
    report = evaluate(str(data), HELPERS, out, completions_column="completion", batch_size=8, progress=False)
    assert report.complete and _keys(out / "results.jsonl") == [(i, 0) for i in range(40)]
    assert (out / "results.jsonl").read_bytes().startswith(raw[: raw.rindex(b"\n") + 1])


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_keeping_what_was_done_and_the_rerun_finishes(tmp_path):
    gate = tmp_path / "gate"  # rows from 64 on wait for it: the job cannot end before the Ctrl-C
    data = write_rows(tmp_path / "rows.jsonl", 200, gate=gate)
    out = tmp_path / "out"
    args = ["eval", "--dataset", str(data), "--rewards", GATED, "--completions-column", "completion"]
    args += ["--output-dir", str(out), "--batch-size", "4"]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    proc = subprocess.Popen([*CLI, *args], env=_env(), cwd=ROOT, preexec_fn=default_sigint, **pipes)
    _wait_for_lines(out / "results.jsonl", 20, proc)
    proc.send_signal(signal.SIGINT)
    gate.touch()
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert b"interrupted" in stderr and b"Traceback" not in stderr
    summary = json.loads((out / "summary.json").read_text())
    kept = _keys(out / "results.jsonl")
    assert summary["complete"] is False and 20 <= summary["rows"] == len(kept) < 200
    assert kept == [(i, 0) for i in range(len(kept))]
    assert "partial" in (out / "report.html").read_text()
    rerun = evaluate(str(data), GATED, out, completions_column="completion", batch_size=4, progress=False)
    assert rerun.complete and _keys(out / "results.jsonl") == [(i, 0) for i in range(200)]


def test_a_different_job_in_the_same_folder_is_refused_and_overwrite_starts_over(tmp_path):
    data = write_rows(tmp_path / "rows.jsonl", 5)
    first = evaluate(str(data), HELPERS, tmp_path / "out", completions_column="completion", progress=False)
    assert first.summary["rows"] == 5
    with pytest.raises(EvaluationError, match=r"another evaluation job .*max_samples.*overwrite=True"):
        evaluate(str(data), HELPERS, tmp_path / "out", completions_column="completion", max_samples=2, progress=False)
    again = evaluate(
        str(data), HELPERS, tmp_path / "out", completions_column="completion", max_samples=2, overwrite=True
    )
    assert again.summary["rows"] == 2 and len(_keys(again.results_path)) == 2
    rerun = evaluate(str(data), HELPERS, tmp_path / "out", completions_column="completion", max_samples=2)
    assert rerun.summary == again.summary  # a finished job rerun only rebuilds its summary


def test_one_job_per_folder_at_a_time(tmp_path):
    with JobFolder(tmp_path, {"job": 1}, n=1), pytest.raises(EvaluationError, match="another evaluation"):
        JobFolder(tmp_path, {"job": 1}, n=1).__enter__()


def test_a_damaged_middle_line_or_foreign_rows_are_refused(tmp_path):
    data = write_rows(tmp_path / "rows.jsonl", 4)
    report = evaluate(str(data), HELPERS, tmp_path / "out", completions_column="completion", progress=False)
    lines = report.results_path.read_text().splitlines(keepends=True)
    report.results_path.write_text(lines[0] + "not json\n" + "".join(lines[1:]))
    with pytest.raises(EvaluationError, match=r"line 2 .* not valid JSON"):
        evaluate(str(data), HELPERS, tmp_path / "out", completions_column="completion", progress=False)
    report.results_path.write_text(lines[1] + lines[0])
    with pytest.raises(EvaluationError, match=r"line 1 .* should hold prompt 0, sample 0"):
        evaluate(str(data), HELPERS, tmp_path / "out", completions_column="completion", progress=False)


def test_config_file_with_command_line_overrides(tmp_path, shared_data):
    config = tmp_path / "eval.yaml"
    config.write_text(
        textwrap.dedent(
            f"""
            dataset:
              source: {shared_data / "gsm8k_test.jsonl"}
              converter: gsm8k
              max_samples: 30
            rewards: [gsm8k_accuracy]
            completions_column: solution
            output_dir: {tmp_path / "from-config"}
            """
        )
    )
    args = ["eval", str(config), "--max-samples", "12", "--output-dir", str(tmp_path / "flags"), "--no-progress"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    assert json.loads((tmp_path / "flags" / "summary.json").read_text())["rows"] == 12
    assert not (tmp_path / "from-config").exists() and "rows/s" not in done.output
    with pytest.raises(ValueError, match=r"unknown key 'reward'.*Did you mean: rewards"):
        load_eval_config(config, {"reward": "x"})
    bad = CliRunner().invoke(app, ["eval", "--dataset", "x.jsonl"])
    assert bad.exit_code == 2 and "needs rewards" in bad.output and "Traceback" not in bad.output
