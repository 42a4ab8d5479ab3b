"""coverage(): every row scored by some reward, every needed column present, checked from the data alone."""

from __future__ import annotations

import pandas as pd
import pytest
from datasets import Dataset

from rewardsmith import MissingColumnError, reward
from rewardsmith.compose import CoverageError, combine, coverage, for_task, gate, route


@reward
def needs_answer(completion: str, answer: str) -> float:
    return float(completion == answer)


@reward
def needs_tests(completion: str, tests: str) -> float:
    return float(tests in completion)


def trl_function(completions, **kwargs):
    return [1.0] * len(completions)


ROWS = [
    {"prompt": "2+2?", "task": "math", "answer": "4", "tests": None},
    {"prompt": "def f", "task": "code", "answer": None, "tests": "assert f()"},
    {"prompt": "hi", "task": "chat", "answer": None, "tests": None},
    {"prompt": "3+3?", "task": "math", "answer": None, "tests": None},
]


def test_a_covered_dataset_gives_a_report():
    rewards = [route({"math": needs_answer, "code": needs_tests}), "think_format"]
    report = coverage(ROWS, rewards)
    assert report.rows == 4 and report.uncovered == {}
    assert report.scored_by == {"needs_answer|needs_tests": 2, "think_format": 4}
    assert str(report).splitlines() == [
        "4 rows",
        "  needs_answer|needs_tests: scores 2 rows (50.0%)",
        "  think_format: scores 4 rows (100.0%)",
    ]


def test_uncovered_rows_are_listed_by_reason():
    with pytest.raises(CoverageError) as caught:
        coverage(ROWS, [route({"math": needs_answer, "code": needs_tests})])
    assert str(caught.value).splitlines() == [
        "2 of 4 rows would not be scored by any reward:",
        "  1 row (2): task='chat' has no reward in 'needs_answer|needs_tests' (it routes 'math', 'code')",
        "  1 row (3): 'needs_answer' needs 'answer', which is empty (None) in these rows",
    ]


def test_the_same_data_in_every_container_gives_the_same_answer():
    rewards = [route({"math": needs_answer, "code": needs_tests}), "think_format"]
    columns = {key: [row[key] for row in ROWS] for key in ROWS[0]}
    for data in (ROWS, columns, Dataset.from_list(ROWS), pd.DataFrame(ROWS)):
        assert coverage(data, rewards).scored_by == {"needs_answer|needs_tests": 2, "think_format": 4}


def test_missing_columns_are_named_with_the_reward_that_needs_them():
    data = [{"prompt": "p", "kind": "math"}]
    with pytest.raises(MissingColumnError) as caught:
        coverage(data, [combine(["think_format", gate("think_format", needs_answer)]), route({"math": needs_tests})])
    message = str(caught.value)
    assert "reward 'think_format+needs_answer_if_think_format' (component" in message
    assert "needs the column 'answer'" in message
    assert "reward 'needs_tests' routes by the column 'task'" in message
    assert "Columns present: prompt, kind" in message


def test_combinations_gates_and_for_task_follow_their_rules():
    both = combine([needs_answer, needs_tests])
    assert coverage(ROWS[:2], [both]).scored_by == {"needs_answer+needs_tests": 2}
    # a component with weight 0 does not make a row scored
    with pytest.raises(CoverageError, match="1 row \\(1\\)"):
        coverage(ROWS[:2], [combine([needs_answer, needs_tests], weights=[1.0, 0.0])])
    # a gate scores where both its condition and its reward do; a lazy gate wherever its condition does
    assert (
        coverage(ROWS[:2], [gate("think_format", needs_answer), "tag_count"]).scored_by["needs_answer_if_think_format"]
        == 1
    )
    assert coverage(ROWS[:2], [gate("think_format", needs_answer, lazy=True)]).scored_by == {
        "needs_answer_if_think_format": 2
    }
    with pytest.raises(CoverageError, match="'needs_tests' scores only task in \\['code'\\], not 'math'"):
        coverage(ROWS[:2], [for_task(needs_tests, "code")])


def test_rewards_without_declared_columns_score_every_row():
    assert coverage(ROWS, [trl_function]).scored_by == {"trl_function": 4}
    assert coverage(ROWS, "think_format,tag_count").scored_by == {"think_format": 4, "tag_count": 4}


def test_long_lists_of_rows_are_shortened():
    rows = [{"prompt": str(i), "task": "chat"} for i in range(20)]
    with pytest.raises(CoverageError, match=r"20 rows \(0, 1, 2, 3, 4, 5, 6, 7, ... and 12 more\)"):
        coverage(rows, [route({"math": "think_format"})])


def test_bad_datasets_are_clear_errors():
    with pytest.raises(Exception, match="one split"):
        from datasets import DatasetDict

        coverage(DatasetDict({"train": Dataset.from_list(ROWS)}), ["think_format"])
    with pytest.raises(Exception, match="one dict per row"):
        coverage([1, 2], ["think_format"])
    with pytest.raises(Exception, match="different lengths"):
        coverage({"a": [1], "b": [1, 2]}, ["think_format"])


def test_the_report_counts_rows_in_words():
    report = coverage(ROWS[:1], [needs_answer])
    assert str(report).splitlines() == ["1 row", "  needs_answer: scores 1 row (100.0%)"]
