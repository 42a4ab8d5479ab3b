"""Evaluation jobs as a new user sets them up: every problem at once, nothing written before the checks pass,
imports, and optional columns the data lacks."""

from __future__ import annotations

import importlib.util
import json
import textwrap
from pathlib import Path

import pytest
import yaml
from problem_helpers import assert_all_reported
from typer.testing import CliRunner

from rewardsmith import evaluate
from rewardsmith.cli import app
from rewardsmith.core.errors import DatasetError, MissingColumnError
from rewardsmith.core.problems import ConfigError
from rewardsmith.evaluation import evaluate_config, load_eval_config

REWARD_KIT = textwrap.dedent(
    """
    from rewardsmith.integrations.reward_kit import EvaluateResult, reward_function

    @reward_function
    def exact(messages, ground_truth=None, **kwargs):
        said = messages[-1]["content"].strip()
        return EvaluateResult(score=float(said == ground_truth), reason=f"said {said!r}")
    """
)
REGISTERED = textwrap.dedent(
    """
    from rewardsmith import register_reward

    @register_reward("{name}")
    def {name}(completion: str, solution: str) -> float:
        '''1 when the completion contains the solution.'''
        return float(solution in completion)
    """
)


def _rows(path: Path, count: int = 6) -> Path:
    rows = [
        {"prompt": f"Repeat {i}: ", "solution": str(i), "completion": f"{i}" if i % 2 else "x"} for i in range(count)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _eval(*args: str):
    return CliRunner().invoke(app, ["eval", *map(str, args)])


# -- 1. every problem at once ---------------------------------------------------------------------------------


def test_an_eval_config_with_many_mistakes_reports_them_all(tmp_path):
    data = _rows(tmp_path / "rows.jsonl")
    config = {
        "dataset": {"source": str(data)},
        "rewards": ["gsm8k_acuracy", "countdown"],
        "completions_column": "completoin",
        "output_dir": str(tmp_path / "out"),
        "batch_sise": 8,
    }
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(config))
    expected = [
        "unknown key 'batch_sise' in the evaluation config. Did you mean: batch_size?",
        "rewards[0]: unknown reward 'gsm8k_acuracy'",
        "completions_column='completoin' is not a column of the prepared data",
        "countdown needs 'nums', 'target'",
    ]
    assert_all_reported(_eval(tmp_path / "eval.yaml", "--no-progress"), 4, "nothing was written", expected)
    assert not (tmp_path / "out").exists()


def test_generation_settings_are_checked_with_the_rest(tmp_path):
    data = _rows(tmp_path / "rows.jsonl")
    with pytest.raises(ConfigError) as caught:
        evaluate(
            str(data),
            ["think_format", "no_such_reward"],
            tmp_path / "out",
            generation={"model": "m", "tempreature": 0.5},
            batch_size=0,
        )
    messages = [str(p) for p in caught.value.problems]
    assert len(messages) == 3, messages
    assert (
        "no_such_reward" in messages[0] and "Did you mean: temperature" in messages[1] and "batch_size" in messages[2]
    )
    assert not (tmp_path / "out").exists()


def test_a_single_problem_keeps_its_type(tmp_path):
    data = _rows(tmp_path / "rows.jsonl")
    with pytest.raises(MissingColumnError, match="gsm8k_accuracy needs 'answer'"):
        evaluate(str(data), "gsm8k_accuracy", tmp_path / "out", completions_column="completion")
    with pytest.raises(DatasetError, match=r"no/such/file\.jsonl"):
        evaluate("no/such/file.jsonl", "think_format", tmp_path / "out", completions_column="completion")
    assert not (tmp_path / "out").exists()


def test_missing_pieces_of_the_config_are_listed_together():
    with pytest.raises(ConfigError) as caught:
        load_eval_config({"completions_column": "completion"})
    text = str(caught.value)
    assert "needs a dataset" in text and "needs rewards" in text and "needs output_dir" in text


# -- 7. nothing is written before the checks pass ---------------------------------------------------------------


def test_a_failed_eval_leaves_nothing_and_the_corrected_rerun_needs_no_overwrite(tmp_path):
    data = _rows(tmp_path / "rows.jsonl")
    out = tmp_path / "out"
    args = ["--dataset", data, "--completions-column", "completion", "--output-dir", out, "--no-progress"]
    failed = _eval(*args, "--rewards", "think_format,gsm8k_accuracy")  # gsm8k_accuracy needs 'answer'
    assert failed.exit_code == 2 and "gsm8k_accuracy needs 'answer'" in failed.output, failed.output
    assert not out.exists()
    out.mkdir()  # an existing, empty folder stays empty too
    typo = _eval(*args, "--rewards", "think_fromat")
    assert typo.exit_code == 2 and list(out.iterdir()) == []
    fixed = _eval(*args, "--rewards", "think_format")
    assert fixed.exit_code == 0, fixed.output
    assert json.loads((out / "summary.json").read_text())["rows"] == 6
    assert (out / "job.json").exists() and len((out / "results.jsonl").read_text().splitlines()) == 6


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_a_generation_backend_that_cannot_start_writes_nothing(tmp_path):
    data = _rows(tmp_path / "rows.jsonl")
    out = tmp_path / "out"
    base = ["--dataset", data, "--rewards", "think_format", "--output-dir", out, "--no-progress"]
    failed = _eval(*base, "--model", "m", "--backend", "vllm")
    assert failed.exit_code == 2 and "vLLM is not installed" in failed.output, failed.output
    assert not out.exists()
    fixed = _eval(*base, "--completions-column", "completion")
    assert fixed.exit_code == 0, fixed.output


# -- 4. imports -------------------------------------------------------------------------------------------------


def test_eval_config_imports_are_found_beside_the_config(tmp_path, monkeypatch, forget_rewards):
    forget_rewards.append("says_solution_eval_config")
    project = tmp_path / "project"
    project.mkdir()
    (project / "team_rewards.py").write_text(REGISTERED.format(name="says_solution_eval_config"))
    data = _rows(tmp_path / "rows.jsonl")
    config = {
        "imports": ["./team_rewards.py"],
        "dataset": {"source": str(data)},
        "rewards": ["says_solution_eval_config"],
        "completions_column": "completion",
        "output_dir": str(tmp_path / "out"),
        "progress": False,
    }
    (project / "eval.yaml").write_text(yaml.safe_dump(config))
    monkeypatch.chdir(tmp_path)  # not the config's folder
    result = _eval(project / "eval.yaml")
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["rewards"]["says_solution_eval_config"][
        "mean"
    ] == pytest.approx(0.5)


def test_import_option_takes_modules_and_files(tmp_path, monkeypatch, forget_rewards):
    forget_rewards += ["says_solution_eval_module", "says_solution_eval_file"]
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "eval_module_rewards.py").write_text(REGISTERED.format(name="says_solution_eval_module"))
    (tmp_path / "local_rewards.py").write_text(REGISTERED.format(name="says_solution_eval_file"))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.chdir(tmp_path)
    data = _rows(tmp_path / "rows.jsonl")
    args = ["--dataset", data, "--completions-column", "completion", "--no-progress"]
    args += ["--rewards", "says_solution_eval_module,says_solution_eval_file", "--output-dir", tmp_path / "out"]
    result = _eval(*args, "--import", "eval_module_rewards", "--import", "./local_rewards.py")
    assert result.exit_code == 0, result.output
    assert "says_solution_eval_module" in result.output and "says_solution_eval_file" in result.output


def test_a_failed_import_is_named_with_its_exception(tmp_path):
    (tmp_path / "broken.py").write_text("import no_such_dependency_here\n")
    data = _rows(tmp_path / "rows.jsonl")
    args = ["--dataset", data, "--rewards", "think_format", "--completions-column", "completion"]
    result = _eval(*args, "--output-dir", tmp_path / "out", "--import", str(tmp_path / "broken.py"))
    assert result.exit_code == 2, result.output
    assert "imports[0]: importing" in result.output and "No module named 'no_such_dependency_here'" in result.output
    assert not (tmp_path / "out").exists()


# -- 5. optional columns ----------------------------------------------------------------------------------------


def test_an_absent_optional_column_is_a_warning_naming_reward_and_column(tmp_path):
    (tmp_path / "kit.py").write_text(REWARD_KIT)
    data = _rows(tmp_path / "rows.jsonl")
    reward = f"{tmp_path / 'kit.py'}:exact"
    args = ["--dataset", data, "--rewards", reward, "--completions-column", "completion", "--no-progress"]
    result = _eval(*args, "--output-dir", tmp_path / "out")
    out = " ".join(result.output.split())
    assert result.exit_code == 0, result.output
    assert "warning: reward 'exact' reads the optional column 'ground_truth', which the dataset does not have" in out
    assert "it will use its default" in out and "The dataset has: solution" in out

    warnings: list[str] = []
    config = {"dataset": {"source": str(data)}, "rewards": [reward], "completions_column": "completion"}
    report = evaluate_config(
        {**config, "output_dir": str(tmp_path / "py"), "progress": False}, on_warning=warnings.append
    )
    assert report.mean("exact") == 0.0 and len(warnings) == 1 and "'ground_truth'" in warnings[0]
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    named = [{**row, "ground_truth": row.pop("solution")} for row in rows]
    quiet: list[str] = []
    fixed = evaluate_config(
        {**config, "dataset": {"source": named}, "output_dir": str(tmp_path / "q"), "progress": False},
        on_warning=quiet.append,
    )
    assert quiet == [] and fixed.mean("exact") == pytest.approx(0.5)
