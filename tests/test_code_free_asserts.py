"""Asserts that do not involve the program are not tests: HumanEval's debugging lines, asserts on constants and
on the tests' own locals pay nothing, in HumanEval's, MBPP's and the converters' layouts."""

from __future__ import annotations

import json

import pytest
from sandbox_helpers import block, requires_sandbox

from rewardsmith import get_reward
from rewardsmith.rewards.code_formats import (
    AssertTests,
    HumanEvalTests,
    TestFormatError,
    assert_suite,
    check_tests,
    count_tests,
)

pytestmark = [requires_sandbox, pytest.mark.xdist_group("sandbox")]

#: HumanEval/83 as the dataset has it: two `assert True, "..."` debugging lines among five tests.
HE83_PROMPT = (
    "\ndef starts_one_ends(n):\n"
    '    """\n'
    "    Given a positive integer n, return the count of the numbers of n-digit\n"
    "    positive integers that start or end with 1.\n"
    '    """\n'
)
HE83_TEST = (
    "def check(candidate):\n\n"
    "    # Check some simple cases\n"
    '    assert True, "This prints if this assert fails 1 (good for debugging!)"\n'
    "    assert candidate(1) == 1\n"
    "    assert candidate(2) == 18\n"
    "    assert candidate(3) == 180\n"
    "    assert candidate(4) == 1800\n"
    "    assert candidate(5) == 18000\n\n"
    "    # Check some edge cases that are easy to work out by hand.\n"
    '    assert True, "This prints if this assert fails 2 (also good for debugging!)"\n\n'
)
HE83_SOLUTION = "    if n == 1: return 1\n    return 18 * (10 ** (n - 2))\n"


@pytest.fixture(scope="module")
def reward():
    r = get_reward("code_tests", workers=2, test_timeout=5.0)
    yield r
    r.close()


def test_humaneval_83_debugging_asserts_pay_nothing(reward):
    tests = json.dumps(
        {"format": "humaneval", "prompt": HE83_PROMPT, "test": HE83_TEST, "entry_point": "starts_one_ends"}
    )
    completions = [
        block(HE83_PROMPT + "    pass\n"),
        block(HE83_PROMPT + "    return None\n"),
        block(HE83_PROMPT + HE83_SOLUTION),
    ]
    results = reward.explain(completions=completions, tests=[tests] * 3)
    assert [r.score for r in results] == [0.0, 0.0, 1.0], [r.reason for r in results]
    assert results[2].metrics["total"] == 5


def test_humaneval_own_layout_row_scores_the_same():
    raw = get_reward("code_tests", workers=1, extract="raw")
    try:
        scores = raw(
            completions=[HE83_SOLUTION, "    pass\n"],
            prompts=[HE83_PROMPT] * 2,
            test=[HE83_TEST] * 2,
            entry_point=["starts_one_ends"] * 2,
        )
    finally:
        raw.close()
    assert scores == [1.0, 0.0]


def test_asserts_on_locals_and_constants_are_not_counted_but_locals_from_the_candidate_are():
    test = (
        "def check(candidate):\n"
        "    expected = 5\n"
        "    assert expected == 5\n"
        "    assert 1 + 1 == 2\n"
        "    out = []\n"
        "    for x in range(3):\n"
        "        out.append(candidate(x))\n"
        "    assert out == [0, 1, 2]\n"
        "    got = candidate(7)\n"
        "    assert got == 7\n"
    )
    assert count_tests(HumanEvalTests("def f(x):\n    pass\n", test, "f")) == 2
    mbpp = AssertTests(
        ("assert True", "assert 2 > 1", "x = 3\nassert x == 3", "assert f(1) == 2", "y = f(2)\nassert y == 3")
    )
    assert count_tests(mbpp) == 2


def test_tests_that_test_nothing_of_the_program_are_refused():
    with pytest.raises(TestFormatError, match="no test involves the program"):
        check_tests({"format": "assert", "asserts": ["assert True", "x = 1\nassert x == 1"]})
    with pytest.raises(TestFormatError, match="tests nothing"):
        check_tests(
            {
                "format": "humaneval",
                "prompt": "def f():\n    pass\n",
                "test": "def check(c):\n    assert True\n",
                "entry_point": "f",
            }
        )


def test_mbpp_own_layout_with_constant_asserts(reward):
    row = {
        "test_list": ["assert True", "assert add(1, 2) == 3", "assert add(2, 2) == 4", "base = 10\nassert base == 10"],
        "test_setup_code": "",
    }
    good = block("def add(a, b):\n    return a + b\n")
    empty = block("def add(a, b):\n    pass\n")
    results = reward.explain(completions=[good, empty], test_list=[row["test_list"]] * 2, test_setup_code=[""] * 2)
    assert [r.score for r in results] == [1.0, 0.0], [r.reason for r in results]
    assert results[0].metrics["total"] == 2


def _mbpp_rows(shared_data, **settings) -> list[dict]:
    from rewardsmith.data import prepare_dataset

    ds = prepare_dataset(str(shared_data / "mbpp.jsonl"), converter="mbpp", conversational=False, **settings)
    return list(ds)


def test_every_mbpp_assert_is_a_test(shared_data):
    raw = [json.loads(line) for line in (shared_data / "mbpp.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(raw) == 974
    for settings, column in (({}, ("test_list",)), ({"challenge": True}, ("test_list", "challenge_test_list"))):
        rows = _mbpp_rows(shared_data, **settings)
        assert len(rows) == len(raw)
        for row, source in zip(rows, raw):
            expected = sum(len(source[c] or []) for c in column)
            parsed = check_tests(row["tests"])
            suite = assert_suite(parsed)
            counted = [step.test for step in suite.tests]
            assert len(counted) == expected and all(counted), (source["task_id"], settings, counted)
            assert count_tests(parsed) == expected
    # MBPP's own layout, read as the reward reads it from the row's columns
    for source in raw:
        tests = AssertTests(tuple(source["test_list"]), setup=source["test_setup_code"] or "")
        assert count_tests(tests) == len(source["test_list"]) == 3, source["task_id"]


def test_every_mbpp_reference_is_scored_on_all_its_asserts(shared_data):
    # Task 123's reference spends about 5 CPU seconds on one assert: the limit is far above any
    # reference's need, so a slow or busy machine cannot change which references pass.
    rows = _mbpp_rows(shared_data)
    reward = get_reward("code_tests", workers=2, test_timeout=60.0, max_seconds=240.0)
    try:
        results = reward.explain(completions=[block(row["code"]) for row in rows], tests=[row["tests"] for row in rows])
    finally:
        reward.close()
    totals = [r.metrics.get("total") for r in results]
    assert totals == [3] * len(rows), [(row["task_id"], t) for row, t in zip(rows, totals) if t != 3][:5]
    failed = [row["task_id"] for row, r in zip(rows, results) if r.score != 1.0]
    assert failed == [596, 642], failed  # sys.getsizeof and set order: their asserts fail on any interpreter
