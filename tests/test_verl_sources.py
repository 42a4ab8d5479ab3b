"""verl, TinyZero and DeepScaleR reward functions and data, used as their authors write them.

The fixtures in tests/data/verl/ are written for these tests in those projects' layouts: a verl custom
reward file that imports the scorer beside it, verl's dataset layout (``data_source``, chat ``prompt``,
``ability``, ``reward_model: {style, ground_truth}``, ``extra_info``), TinyZero's countdown scorer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rewardsmith import get_reward
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.data import prepare_dataset

ROOT = Path(__file__).resolve().parents[1]
VERL = ROOT / "tests" / "data" / "verl"
DATA = VERL / "gsm8k_verl.jsonl"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real CLI in a subprocess, with only the repository on the path (not the reward file's folder)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "rewardsmith.cli", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


# -- §1: a verl custom reward is a per-sample reward ---------------------------------------------------


def test_verl_custom_reward_scores_with_its_row_and_logs_the_dict_as_metrics():
    seen = []

    def compute_score(data_source, solution_str, ground_truth, extra_info=None):
        seen.append((data_source, solution_str, ground_truth, extra_info))
        right = solution_str.strip().endswith(f"#### {ground_truth}")
        return {"score": float(right), "acc": right}

    made = get_reward(compute_score)
    logged: dict[str, float] = {}
    scores = made(
        prompts=["p", "p"],
        completions=[[{"role": "assistant", "content": "so #### 18"}], [{"role": "assistant", "content": "#### 3"}]],
        data_source=["openai/gsm8k"] * 2,
        ground_truth=["18", "18"],
        extra_info=[{"index": 0}, {"index": 1}],
        log_metric=logged.__setitem__,
    )
    assert scores == [1.0, 0.0]
    assert seen[0] == ("openai/gsm8k", "so #### 18", "18", {"index": 0})
    assert logged["compute_score/acc"] == 0.5
    assert made.required_columns == ["data_source", "ground_truth"]
    assert made.explain(completions=["#### 18"], data_source=["x"], ground_truth=["18"])[0].metrics == {"acc": True}


def test_tinyzero_scorer_from_a_file_takes_its_own_settings():
    made = get_reward({"name": f"{VERL}/countdown.py:compute_score", "kwargs": {"format_score": 0.0}})
    truth = {"target": 8, "numbers": [3, 5]}
    assert made(completions=["<answer>3 + 5</answer>", "<answer>5 + 3 + 0</answer>"], ground_truth=[truth] * 2) == [
        1.0,
        0.0,
    ]


def test_an_agent_reward_file_as_docs_show_is_a_per_sample_reward():
    made = get_reward({"name": f"{VERL}/agent_reward.py:used_a_tool"})
    rollout = [
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "add", "arguments": "{}"}}]},
        {"role": "tool", "content": "4"},
        {"role": "assistant", "content": "It is 4."},
    ]
    assert made(completions=[rollout, "It is 4."]) == [1.0, 0.0]


def test_a_function_naming_no_completion_without_its_settings_is_an_error_saying_how_to_mark_it():
    with pytest.raises(RewardConfigError, match=r"cannot tell whether make_threshold\(threshold, bonus\)") as err:
        get_reward(f"{VERL}/ambiguous.py:make_threshold")
    assert "`completion`" in str(err.value) and "kwargs" in str(err.value)
    made = get_reward({"name": f"{VERL}/ambiguous.py:make_threshold", "kwargs": {"threshold": 2, "bonus": 0.5}})
    assert made(completions=["abc", "a"]) == [1.5, 0.5]


# -- §1: a reward file imports the modules beside it; verl's layout loads as it is ----------------------


def test_verl_layout_loads_as_is_from_jsonl_and_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [json.loads(line) for line in DATA.read_text().splitlines()]
    parquet = tmp_path / "gsm8k_verl.parquet"
    pq.write_table(pa.Table.from_pylist(rows), parquet)
    for source in (DATA, parquet):
        ds = prepare_dataset(str(source), "train")
        assert ds[0]["prompt"] == rows[0]["prompt"]
        assert ds[0]["ground_truth"] == ds[0]["answer"] == rows[0]["reward_model"]["ground_truth"] == "18"
        assert ds[0]["extra_info"]["index"] == 0 and ds[0]["data_source"] == "openai/gsm8k"
        builtin = get_reward("gsm8k_accuracy")
        batch = {k: ds[k][:2] for k in ds.column_names}
        assert builtin(completions=["#### 18", "#### 18"], **batch) == [1.0, 0.0]


def test_verl_reward_file_importing_its_neighbour_runs_from_the_cli(tmp_path):
    run = cli(
        "check", f"{VERL}/verl_score.py:compute_score", "--dataset", str(DATA), "--no-progress", "--timeout", "0",
        "--families", "empty", cwd=tmp_path,
    )  # fmt: skip
    assert "No module named" not in run.stdout + run.stderr
    assert "missing a required argument" not in run.stdout + run.stderr
    assert "8 of 8 rows" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]
