"""Evaluation jobs and configs on hostile data: text that is not valid Unicode, broken lines in a streamed
file, an output folder holding someone else's files, and numbers that are not numbers."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rewardsmith import DatasetError
from rewardsmith.data import prepare_dataset
from rewardsmith.evaluation import evaluate
from rewardsmith.evaluation.results import EvaluationError
from rewardsmith.http.testing import LocalChatServer
from rewardsmith.train.trainer_args import build_trainer_args

ROOT = Path(__file__).resolve().parents[1]
LONE = "right \ud800 half of a pair, and \udfff the other"


def _rows(path: Path, completions: list[str]) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        for i, completion in enumerate(completions):
            # json.dumps escapes a lone surrogate, so the file is valid UTF-8 and reads back as the same string
            handle.write(json.dumps({"question": f"q{i}", "answer": f"#### {i}", "reply": completion}) + "\n")
    return path


def _content(completion) -> str:
    return completion[0]["content"] if isinstance(completion, list) else completion


def test_generated_completions_with_lone_surrogates_are_stored_exactly_and_the_job_finishes(tmp_path):
    data = _rows(tmp_path / "rows.jsonl", ["unused", "unused", "unused"])
    out = tmp_path / "out"
    answers = iter([f"{LONE} #### 0", "#### 1", f"#### 2 {LONE}"] * 2)
    with LocalChatServer(lambda request: next(answers)) as server:
        generation = {"model": "m", "base_url": server.base_url, "api_key_env": None, "max_concurrency": 1}
        job = dict(converter="gsm8k", generation=generation, progress=False, batch_size=1)
        report = evaluate(data, "gsm8k_accuracy,think_format", out, **job)
        assert report.complete and report.summary["rows"] == 3
        stored = [_content(row["completion"]) for row in report.rows()]
        assert stored == [f"{LONE} #### 0", "#### 1", f"#### 2 {LONE}"]  # lossless, not replaced
        assert report.mean("gsm8k_accuracy") == 1.0
        assert "\\ud800" in report.report_path.read_text(encoding="utf-8")  # shown as its escape
        json.loads(report.summary_path.read_text(encoding="utf-8"))
        rerun = evaluate(data, "gsm8k_accuracy,think_format", out, **job)
    assert rerun.complete and len(list(rerun.rows())) == 3  # the rerun resumes past it instead of crashing again


def test_rows_with_a_lone_surrogate_are_a_clear_error_not_a_crash(tmp_path):
    rows = [{"question": "q", "answer": "#### 0", "reply": f"{LONE} #### 0"}]
    with pytest.raises(DatasetError, match="half of a UTF-16 surrogate pair"):
        evaluate(rows, "gsm8k_accuracy", tmp_path / "out", converter="gsm8k", completions_column="reply",
                 progress=False)  # fmt: skip


def _broken_file(tmp_path: Path) -> Path:
    path = tmp_path / "broken.jsonl"
    path.write_text(
        '{"question": "2+2?", "answer": "#### 4", "reply": "4"}\n'
        '{"question": "2+3?", "answer": "#### 5", "reply": "5"\n'
        '{"question": "2+1?", "answer": "#### 3", "reply": "3"}\n'
    )
    return path


def test_a_broken_line_gives_the_same_error_streamed_or_not(tmp_path):
    path = _broken_file(tmp_path)
    messages = []
    for streaming in (False, True):
        with pytest.raises(DatasetError) as caught:
            prepare_dataset(path, "train", converter="gsm8k", streaming=streaming)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert "broken.jsonl" in messages[0] and "line 2" in messages[0]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-W", "ignore", "-m", "rewardsmith.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=300)


def test_eval_on_a_broken_streamed_file_is_one_clear_paragraph_and_exit_2(tmp_path):
    _broken_file(tmp_path)
    done = _cli(
        "eval", "--dataset", "broken.jsonl", "--split", "train", "--converter", "gsm8k", "--rewards",
        "gsm8k_accuracy", "--completions-column", "reply", "--output-dir", "out", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "pyarrow" not in done.stderr
    assert "'broken.jsonl' is not valid JSON Lines: line 2" in done.stderr
    assert not (tmp_path / "out").exists()  # nothing written


def test_an_output_folder_holding_other_files_is_refused_without_overwrite(tmp_path):
    data = _rows(tmp_path / "rows.jsonl", ["#### 0", "#### 1"])
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text('{"mine": "not the job\'s"}')
    (out / "notes.txt").write_text("keep me")
    with pytest.raises(EvaluationError, match="holds files this job did not write"):
        evaluate(data, "gsm8k_accuracy", out, converter="gsm8k", completions_column="reply", progress=False)
    assert (out / "summary.json").read_text() == '{"mine": "not the job\'s"}'
    report = evaluate(
        data, "gsm8k_accuracy", out, converter="gsm8k", completions_column="reply", progress=False, overwrite=True
    )
    assert report.complete and (out / "notes.txt").read_text() == "keep me"
    # the job's own folder is resumed as before
    again = evaluate(data, "gsm8k_accuracy", out, converter="gsm8k", completions_column="reply", progress=False)
    assert again.complete


@pytest.mark.parametrize(
    "settings, message",
    [({"num_generations": 0}, "num_generations must be at least 2"),
     ({"num_generations": "four"}, "num_generations must be a whole number, got 'four'"),
     ({"num_generations": 2.5}, "num_generations must be a whole number"),
     ({"per_device_train_batch_size": 0}, "per_device_train_batch_size must be at least 1"),
     ({"gradient_accumulation_steps": -1}, "gradient_accumulation_steps must be at least 1"),
     ({"learning_rate": "fast"}, "learning_rate must be a number, got 'fast'"),
     ({"learning_rate": -1e-3}, "learning_rate must be at least 0"),
     ({"temperature": 0}, "temperature must be above 0"),
     ({"num_train_epochs": float("nan")}, "num_train_epochs must be a number, got NaN"),
     ({"max_completion_length": 0}, "max_completion_length must be at least 1"),
     ({"max_steps": "ten"}, "max_steps must be a whole number")],
)  # fmt: skip
def test_numeric_trainer_settings_that_are_not_numbers_or_out_of_range_are_named(settings, message):
    from rewardsmith.core.problems import ConfigError

    with pytest.raises(ConfigError, match=message):
        build_trainer_args(settings, reward_weights=None, default_output_dir="outputs/x")


def test_train_dry_run_config_mistakes_are_one_paragraph_and_exit_2(tmp_path):
    (tmp_path / "rows.jsonl").write_text('{"question": "2+2?", "answer": "#### 4"}\n')
    (tmp_path / "rewards.txt").write_text("def polite(completion): return 1.0\n")
    for reward, trainer, expected in (
        ("gsm8k_accuracy", "num_generations: 0", "trainer.num_generations must be at least 2"),
        ("gsm8k_accuracy", "num_generations: four", "trainer.num_generations must be a whole number"),
        ("./rewards.txt", "num_generations: 2", "'rewards.txt' is not a Python file"),
        ("./rewards.txt:polite", "num_generations: 2", "'rewards.txt' is not a Python file"),
    ):
        (tmp_path / "run.yaml").write_text(
            textwrap.dedent(f"""
                model: {{name_or_path: "builtin:tiny"}}
                dataset: {{source: rows.jsonl, converter: gsm8k}}
                rewards: [{{name: "{reward}"}}]
                trainer: {{{trainer}, per_device_train_batch_size: 2, learning_rate: 1.0e-3}}
            """)
        )
        done = _cli("train", "run.yaml", "--dry-run", cwd=tmp_path)
        assert done.returncode == 2, (reward, trainer, done.stderr[-1500:])
        assert "Traceback" not in done.stderr and "unsupported operand" not in done.stderr
        assert expected in done.stderr


@pytest.mark.parametrize("threshold", ["x", float("nan"), float("inf")])
def test_a_pass_threshold_that_is_not_a_number_is_a_config_error(tmp_path, threshold):
    from rewardsmith.core.problems import ConfigError

    data = _rows(tmp_path / "rows.jsonl", ["#### 0"])
    with pytest.raises(ConfigError, match="pass_threshold must be a finite number"):
        evaluate(data, "gsm8k_accuracy", tmp_path / "out", converter="gsm8k", completions_column="reply",
                 progress=False, pass_threshold=threshold)  # fmt: skip
    assert not (tmp_path / "out").exists()


# -- configs and the command line: bounded, one paragraph, exit 2 ---------------------------------------------

BOMB = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{n}: &{n} [{', '.join(['*' + p] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi")
)


@pytest.mark.parametrize("command", ["eval", "train"])
def test_a_yaml_alias_bomb_is_refused_with_exit_2(tmp_path, command):
    assert len(BOMB) < 1000  # a few hundred bytes that expand to 9**9 values
    (tmp_path / "bomb.yaml").write_text(BOMB + "rewards: [gsm8k_accuracy]\n")
    args = ["eval", "bomb.yaml"] if command == "eval" else ["train", "bomb.yaml", "--dry-run"]
    done = _cli(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert "alias" in done.stderr and "bomb.yaml" in done.stderr


def test_a_recursive_alias_is_refused(tmp_path):
    from rewardsmith.config.files import load_yaml
    from rewardsmith.core.errors import RewardConfigError

    with pytest.raises(RewardConfigError, match="recursive alias"):
        load_yaml("a: &a [1, *a]\n", "loop.yaml")
    assert load_yaml("base: &b {x: 1}\nuse: {<<: *b, y: 2}\n", "merge.yaml")["use"] == {"x": 1, "y": 2}


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["-n", "4"], "--n is a setting for generating them with --model"),
        (["--seed", "3"], "--seed is a setting"),
        (["--temperature", "0.5", "--seed", "1"], "--temperature, --seed are settings"),
        (["--batch-size", str(10**23)], "--batch-size must be from 1 to 1,000,000"),
        (["--batch-size", "0"], "--batch-size must be from 1 to 1,000,000"),
    ],
    ids=["n", "seed", "temperature-and-seed", "huge-batch", "zero-batch"],
)
def test_contradictory_or_absurd_eval_options_are_one_paragraph_and_exit_2(tmp_path, flags, words):
    _rows(tmp_path / "rows.jsonl", ["#### 0"])
    base = ["--dataset", "rows.jsonl", "--split", "train", "--converter", "gsm8k", "--rewards", "gsm8k_accuracy"]
    done = _cli("eval", *base, "--completions-column", "reply", "--output-dir", "out", *flags, cwd=tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and words in " ".join(done.stderr.split())
    assert not (tmp_path / "out").exists()


def test_generation_settings_without_a_model_are_a_config_error():
    from rewardsmith.core.errors import RewardConfigError
    from rewardsmith.evaluation.generation import GenerationConfig

    with pytest.raises(RewardConfigError, match="name no model"):
        GenerationConfig.of({"n": 4, "seed": 1})


@pytest.mark.parametrize("where", ["read-only", "overlong"])
def test_an_output_folder_that_cannot_be_written_is_a_clear_message_and_exit_2(tmp_path, where):
    import os

    _rows(tmp_path / "rows.jsonl", ["#### 0"])
    if where == "read-only":
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        out = "locked/out"
        if os.geteuid() == 0:  # root writes anywhere: a file in the way stands in for a read-only place
            locked.chmod(0o700)
            (locked / "file").write_text("x")
            out = "locked/file/out"
    else:
        out = "x" * 300 + "/out"
    done = _cli("eval", "--dataset", "rows.jsonl", "--split", "train", "--converter", "gsm8k", "--rewards",
                "gsm8k_accuracy", "--completions-column", "reply", "--output-dir", out, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "cannot write the evaluation's output" in done.stderr


def test_a_symlinked_results_file_in_the_output_folder_is_refused(tmp_path):
    data = _rows(tmp_path / "rows.jsonl", ["#### 0", "#### 1"])
    out = tmp_path / "out"
    out.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    (out / "results.jsonl").symlink_to(outside)
    with pytest.raises(EvaluationError, match="symbolic link"):
        evaluate(data, ["gsm8k_accuracy"], split="train", converter="gsm8k", completions_column="reply",
                 output_dir=out, progress=False)  # fmt: skip
    assert outside.read_text() == "precious\n"
