"""Converters for code datasets: MBPP (the real file), HumanEval, APPS-style input_output, CodeContests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardsmith.core.errors import DatasetError
from rewardsmith.data import list_converters, prepare_dataset
from rewardsmith.data.code import APPS
from rewardsmith.rewards.code_formats import AssertTests, CallTests, HumanEvalTests, StdioTests, parse_tests

DATA = Path(__file__).resolve().parent / "data"


def test_the_code_converters_are_registered():
    assert {"mbpp", "humaneval", "apps", "codecontests"} <= set(list_converters())


def test_every_mbpp_row_converts(shared_data):
    ds = prepare_dataset(str(shared_data / "mbpp.jsonl"), converter="mbpp", conversational=False)
    assert len(ds) == 974 and {"prompt", "tests", "code"} <= set(ds.column_names)
    parsed = {row["task_id"]: parse_tests(row["tests"]) for row in ds}
    assert all(isinstance(t, AssertTests) and len(t.asserts) == 3 for t in parsed.values())
    assert parsed[126].entry_points == ("sum",)  # the function under test has a builtin's name
    assert "root = Node(1)" in parsed[367].setup and not parsed[1].setup
    first = ds[0]["prompt"]
    assert first.startswith("Write a function to find the minimum cost path") and "assert min_cost(" in first


def test_mbpp_options(shared_data):
    rows = [json.loads(line) for line in (shared_data / "mbpp.jsonl").read_text().splitlines()]
    challenged = next(r for r in rows if r["challenge_test_list"])
    out = prepare_dataset([challenged], converter="mbpp", challenge=True, show_tests=False, conversational=False)[0]
    assert len(parse_tests(out["tests"]).asserts) == 3 + len(challenged["challenge_test_list"])
    assert "Your code should pass" not in out["prompt"]


def test_humaneval_rows_convert():
    rows = [json.loads(line) for line in (DATA / "humaneval_sample.jsonl").read_text().splitlines()]
    ds = prepare_dataset(rows, converter="humaneval")
    tests = parse_tests(ds[0]["tests"])
    assert isinstance(tests, HumanEvalTests) and tests.entry_point == rows[0]["entry_point"]
    assert tests.prompt == rows[0]["prompt"] and "```python" in ds[0]["prompt"][-1]["content"]


def test_apps_standard_io_call_based_and_empty_rows():
    rows = [
        {"question": "Sum.", "input_output": json.dumps({"inputs": ["1 2\n"], "outputs": ["3\n"]})},
        {
            "question": "Twice.",
            "input_output": json.dumps({"inputs": [[2]], "outputs": [[4]], "fn_name": "twice"}),
            "starter_code": "def twice(x):\n",
        },
        {"question": "No tests yet.", "input_output": ""},
        {"question": "Lines.", "input_output": json.dumps({"inputs": [["1", "2"]], "outputs": [["3", "4"]]})},
    ]
    ds = prepare_dataset(rows, converter="apps", conversational=False)
    first, second, third, fourth = (parse_tests(t) for t in ds["tests"])
    assert isinstance(first, StdioTests) and first.inputs == ("1 2\n",)
    assert isinstance(second, CallTests) and second.fn_name == "twice" and second.inputs == ((2,),)
    assert "def twice(x):" in ds[1]["prompt"] and "standard input" in ds[0]["prompt"]
    assert third is None and fourth.inputs == ("1\n2\n",)
    as_object = APPS().convert({"question": "q", "input_output": {"inputs": [[1]], "outputs": [1], "fn_name": "f"}})
    assert isinstance(parse_tests(as_object["tests"]), CallTests)


def test_apps_rows_with_broken_tests_are_errors_naming_the_row():
    rows = [{"question": "q", "input_output": '{"inputs": [1]'}]
    with pytest.raises(DatasetError, match="row 0"):
        prepare_dataset(rows, converter="apps", conversational=False)
    uneven = [{"question": "q", "input_output": json.dumps({"inputs": ["1"], "outputs": []})}]
    with pytest.raises(DatasetError, match="same length"):
        prepare_dataset(uneven, converter="apps", conversational=False)


def test_codecontests_rows_gather_every_test_split():
    row = {
        "description": "Print a + b.",
        "public_tests": {"input": ["1 2\n"], "output": ["3\n"]},
        "private_tests": {"input": ["2 2\n"], "output": ["4\n"]},
        "generated_tests": {"input": [], "output": []},
    }
    tests = parse_tests(prepare_dataset([row], converter="codecontests", conversational=False)[0]["tests"])
    assert tests.inputs == ("1 2\n", "2 2\n") and tests.outputs == ("3\n", "4\n")
