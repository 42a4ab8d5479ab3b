"""The DeepScaleR-style port (examples/ports/deepscaler): its math reward and data, used as their authors write them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rewardsmith import get_reward
from rewardsmith.data import prepare_dataset

ROOT = Path(__file__).resolve().parents[1]
PORT = ROOT / "examples" / "ports" / "deepscaler"
SCORE = f"{PORT / 'math_reward.py'}:deepscaler_reward_fn"
DATA = PORT / "data.jsonl"
SHAPE = "<think>{reasoning}</think>\nThe answer is $\\boxed{{answer}}$."


def test_deepscaler_reward_fn_is_a_per_sample_reward_with_its_setting():
    made = get_reward(SCORE)
    assert made.settings == {"enable_llm": False} and made.required_columns == ["ground_truth"]
    texts = [
        "<think>2 + 5/3 + 1</think>\nSo $\\boxed{\\dfrac{14}{3}}$.",  # right, after the reasoning
        "<think>2 + 5/3 + 1</think>\nSo $\\boxed{4}$.",  # wrong
        "So $\\boxed{\\frac{14}{3}}$.",  # no reasoning block: a format error
        "2 + 5/3 + 1</think>\nSo $\\boxed{\\frac{14}{3}}$.",  # DeepScaleR wants both <think> and </think>
        "<think>It is \\boxed{\\frac{14}{3}}</think>\nI am not sure.",  # the box is in the reasoning only
        "<think>.</think>\n$\\boxed{4}$, no: $\\boxed{\\frac{28}{6}}$",  # the last box, by value
    ]
    assert made(completions=texts, ground_truth=["\\frac{14}{3}"] * len(texts)) == [1.0, 0.0, 0.0, 0.0, 0.0, 1.0]


def test_a_list_of_accepted_answers_and_a_boxed_reference_are_references():
    made = get_reward(SCORE)
    text = "<think>pairs</think>\n$\\boxed{-50}$"
    assert made(completions=[text] * 3, ground_truth=[["-50", "\\boxed{-50}"], ["\\boxed{-50}"], ["7", "8"]]) == [
        1.0,
        1.0,
        0.0,
    ]


def test_the_ports_data_loads_in_deepscalers_verl_layout():
    ds = prepare_dataset(str(DATA), "train")
    assert ds[0]["data_source"] == "" and ds[0]["ground_truth"] == "\\frac{14}{3}"
    assert ds[0]["prompt"][0]["content"].endswith("output the final answer within \\boxed{}.")
    assert ds[6]["ground_truth"] == ["-50", "\\boxed{-50}"]  # a list of accepted answers stays a list


def test_the_port_and_math_accuracy_after_the_reasoning_agree_on_these_completions():
    port = get_reward(SCORE)
    builtin = get_reward("math_accuracy", reasoning_delimiters=["</think>"], timeout=None)
    texts = [
        "<think>a</think>\nThe answer is $\\boxed{3\\sqrt{13}}$.",
        "<think>a</think>\nThe answer is $\\boxed{\\sqrt{117}}$.",
        "<think>a</think>\nThe answer is $\\boxed{13}$.",
        "<think>The answer is $\\boxed{3\\sqrt{13}}$.</think>\nDone.",
        "The answer is $\\boxed{3\\sqrt{13}}$.",
    ]
    ours = builtin(completions=texts, answer=["3\\sqrt{13}"] * len(texts))
    assert port(completions=texts, ground_truth=["3\\sqrt{13}"] * len(texts)) == ours == [1.0, 1.0, 0.0, 0.0, 0.0]


def test_rewardsmith_check_finds_that_the_reward_pays_several_boxes(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-m", "rewardsmith.cli", "check", SCORE, "--dataset", str(DATA), "--no-progress",
         "--timeout", "0", "--families", "empty,hedging", "--probe-format", SHAPE],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
    )  # fmt: skip
    out = run.stdout + run.stderr
    assert "reference answers ground_truth (the reward reads it)" in out, out[-3000:]
    assert "hedging/boxes_in_block" in out and run.returncode == 1  # the last of several boxes is graded


@pytest.mark.slow
def test_the_deepscaler_port_trains_evaluates_and_checks(tmp_path, monkeypatch):
    import importlib.util

    monkeypatch.setenv("REWARDSMITH_CACHE", str(ROOT / ".cache"))
    spec = importlib.util.spec_from_file_location("port_deepscaler", PORT / "main.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.main(tmp_path, steps=2)
    assert result["steps"] == 2 and result["check"] == 1.0
    for name in ("deepscaler_reward_fn", "math_accuracy"):  # right; wrong; no reasoning block
        assert result["eval"][name]["histogram"]["values"] == [[0.0, 2], [1.0, 1]]
    assert result["audit"]["answer_column"] == "ground_truth"
    assert "hedging/boxes_in_block" in result["audit"]["findings"]
