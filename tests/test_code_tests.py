"""``code_tests`` on real tests: MBPP (a sample of the real file), HumanEval, standard input/output in three
languages, APPS call-based; how outputs are compared; and what it scores when there is nothing to score."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from cpu_timing import assert_linear
from sandbox_helpers import block, requires_sandbox, stdio

from rewardsmith import get_reward
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.data import prepare_dataset

pytestmark = [requires_sandbox, pytest.mark.xdist_group("sandbox")]

DATA = Path(__file__).resolve().parent / "data"
#: MBPP tasks whose reference solution fails its own tests on any interpreter (docs of the shared data).
MBPP_BROKEN = {596, 642}


@pytest.fixture(scope="module")
def reward():
    r = get_reward("code_tests", workers=2, test_timeout=5.0)
    yield r
    r.close()


@pytest.fixture(scope="module")
def mbpp_sample(shared_data):
    rows = [json.loads(line) for line in (shared_data / "mbpp.jsonl").read_text().splitlines()]
    wanted = {126, 367, 533, 927} | {row["task_id"] for row in rows[::25]}
    sample = [row for row in rows if row["task_id"] in wanted and row["task_id"] not in MBPP_BROKEN]
    return prepare_dataset(sample, converter="mbpp", conversational=False)


def test_mbpp_reference_solutions_pass_their_own_tests_and_not_others(reward, mbpp_sample):
    solutions = [block(row["code"].replace("\r\n", "\n")) for row in mbpp_sample]
    tests = list(mbpp_sample["tests"])
    own = reward.explain(completions=solutions, tests=tests)
    assert [r.score for r in own] == [1.0] * len(own), [(row["task_id"], r.reason) for row, r in zip(mbpp_sample, own)]
    others = reward(completions=solutions, tests=tests[1:] + tests[:1])
    assert sum(others) == 0.0 and len(own) >= 40


def _humaneval():
    return [json.loads(line) for line in (DATA / "humaneval_sample.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def humaneval():
    return prepare_dataset(_humaneval(), converter="humaneval", conversational=False)


def test_humaneval_reference_solutions_pass_as_whole_functions_and_as_bodies(reward, humaneval):
    rows = _humaneval()
    whole = [block(r["prompt"] + r["canonical_solution"]) for r in rows]
    assert reward(completions=whole, tests=list(humaneval["tests"])) == [1.0] * len(rows)
    bodies = get_reward("code_tests", workers=2, extract="raw")
    assert bodies(completions=[r["canonical_solution"] for r in rows], tests=list(humaneval["tests"])) == [1.0] * 8
    bodies.close()


def test_broken_humaneval_solutions_do_not_pass(reward, humaneval):
    rows = _humaneval()
    mutations = [("<", ">"), ("return", "return None and"), ("+ 1", "+ 2"), ("-", "+")]
    broken, tests = [], []
    for row, test in zip(rows, humaneval["tests"]):
        body = row["canonical_solution"]
        for old, new in mutations:
            if old in body:
                broken.append(block(row["prompt"] + body.replace(old, new, 1)))
                tests.append(test)
    scores = reward(completions=broken, tests=tests)
    assert len(scores) >= 12 and all(s < 1.0 for s in scores), scores


def test_a_humaneval_helper_from_the_prompt_cannot_be_replaced(reward, humaneval):
    row = next(r for r in _humaneval() if r["entry_point"] == "find_zero")
    cheat = "def poly(xs, x):\n    return 0\n\ndef find_zero(xs):\n    return 0.0\n"
    test = humaneval["tests"][[r["entry_point"] for r in _humaneval()].index("find_zero")]
    assert reward(completions=[block(cheat), block(row["prompt"] + row["canonical_solution"])], tests=[test] * 2) == [
        0.0,
        1.0,
    ]


SUM = {
    "python": "a, b = map(int, input().split())\nprint(a + b)",
    "cpp": "#include <iostream>\nint main() { long long a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }",
    "javascript": "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
    "console.log(a + b);",
}
SUM_TESTS = json.dumps({"format": "stdio", "inputs": ["1 2\n", "40 2\n", "5 0\n"], "outputs": ["3\n", "42\n", "5\n"]})


@pytest.mark.parametrize("language", sorted(SUM))
def test_standard_input_and_output_in_each_language(language):
    tag = {"python": "python", "cpp": "cpp", "javascript": "js"}[language]
    r = get_reward("code_tests", workers=1, language=language)
    wrong = SUM[language].replace("a + b", "a - b")
    assert r(completions=[block(SUM[language], tag), block(wrong, tag)], tests=[SUM_TESTS] * 2) == [1.0, 1 / 3]


def test_auto_language_runs_the_block_it_finds():
    r = get_reward("code_tests", workers=1, language="auto")
    completions = [block(SUM["cpp"], "cpp"), block(SUM["javascript"], "javascript"), "```\nprint(3)\n```"]
    assert r(completions=completions, tests=[SUM_TESTS] * 3) == [1.0, 1.0, 0.0]


def test_a_compile_error_scores_zero_and_says_so():
    r = get_reward("code_tests", workers=1, language="cpp")
    result = r.explain(completions=[block("int main() { return x; }", "cpp")], tests=[SUM_TESTS])[0]
    assert result.score == 0.0 and "did not compile" in result.reason and result.metrics["compile_error"] == 1
    assert "x" in result.reason  # the compiler's message is in the reason


OUTPUTS = {
    "exact": ("print(1)\nprint(2)", True),
    "trailing spaces and blank lines": ("print('1   ')\nprint(' 2')\nprint()\nprint()", True),
    "only the first line": ("print(1)", False),
    "an extra line": ("print(1)\nprint(2)\nprint(3)", False),
    "right output, then a crash": ("print(1)\nprint(2)\nraise SystemExit(3)", False),
    "right output, then an exception": ("print(1)\nprint(2)\n1 / 0", False),
    "exception swallowed, exit 0": ("try:\n    print(1)\n    1 / 0\nexcept Exception:\n    pass", False),
    "both on one line": ("print(1, 2)", False),
    "exit() after the output": ("print(1)\nprint(2)\nexit()\nprint(3)", True),
}


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_how_outputs_are_compared(reward, name):
    program, passes = OUTPUTS[name]
    assert reward(completions=[block(program)], tests=[stdio("1\n2\n")]) == [1.0 if passes else 0.0]


def test_decimal_numbers_within_the_tolerance(reward):
    tests = stdio("0.333333333 100 2.5e3\n")
    programs = {
        "print('0.3333333 100 2500')": 1.0,  # within 1e-6, and 2.5e3 == 2500
        "print('0.3334 100 2500')": 0.0,
        "print('0.333333333 100.0000001 2500')": 0.0,  # 100 is an integer: exact
    }
    assert reward(completions=[block(p) for p in programs], tests=[tests] * 3) == list(programs.values())
    loose = get_reward("code_tests", workers=1, float_tolerance=1e-3)
    assert loose(completions=[block("print('0.3334 100 2500')")], tests=[tests]) == [1.0]
    exact = get_reward("code_tests", workers=1, float_tolerance=0)
    assert exact(completions=[block("print('0.3333333 100 2.5e3')")], tests=[tests]) == [0.0]


def test_apps_call_based_tests(reward):
    tests = json.dumps(
        {"inputs": [[[1, 2, 3]], [[]], [[5]]], "outputs": [[6, [1, 3]], [0, []], [5, [5, 5]]], "fn_name": "stats"}
    )
    right = "def stats(xs):\n    return (sum(xs), [min(xs), max(xs)] if xs else [])\n"
    solution_class = (
        "class Solution:\n    def stats(self, xs):\n        return [sum(xs), [min(xs), max(xs)] if xs else []]\n"
    )
    wrong = "def stats(xs):\n    return (sum(xs), [])\n"
    assert reward(completions=[block(right), block(solution_class), block(wrong)], tests=[tests] * 3) == [
        1.0,
        1.0,
        pytest.approx(1 / 3),
    ]
    wrapped = json.dumps({"inputs": [[2]], "outputs": [[0.5]], "fn_name": "half"})  # APPS wraps some outputs in a list
    assert reward(completions=[block("def half(x):\n    return 1 / x\n")], tests=[wrapped]) == [1.0]


def test_nothing_to_run_and_nothing_to_test(reward):
    results = reward.explain(
        completions=["I would use a loop.", "```python\nprint(3)\n```", "```python\nprint(3)\n```"],
        tests=[stdio("3\n"), None, ""],
    )
    assert results[0].score == 0.0 and "no ```python block" in results[0].reason
    assert results[1].score is None and results[2].score is None and "no tests" in results[1].reason


def test_unreadable_tests_are_not_scored_and_are_counted(reward):
    before = reward.stats["errors"]
    results = reward.explain(completions=[block("print(1)")] * 2, tests=['{"inputs": [1]', '{"weird": 1}'])
    assert [r.score for r in results] == [None, None]
    assert "not valid JSON" in results[0].reason and "unknown test format" in results[1].reason
    assert reward.stats["errors"] == before + 2


def test_raw_mbpp_rows_and_tests_that_assert_nothing():
    r = get_reward("code_tests", workers=1)
    right = block("def add(a, b):\n    return a + b")
    assert r(completions=[right], test_list=[["assert add(1, 2) == 3", "assert add(0, 0) == 0"]]) == [1.0]
    result = r.explain(completions=[right], test_list=[["def check(candidate):\n    candidate(1)"]])[0]
    assert result.score is None and "asserts nothing" in result.reason


def test_python_tests_with_another_language_is_an_error_per_sample():
    r = get_reward("code_tests", workers=1, language="cpp")
    result = r.explain(completions=[block("int main(){}", "cpp")], tests=[json.dumps(["assert f() == 1"])])[0]
    assert result.score is None and "Python tests" in result.reason


def test_a_missing_toolchain_is_an_error_never_a_score():
    r = get_reward("code_tests", workers=1, language="cpp", backend_settings={"tools": {"cpp": "/nonexistent/g++"}})
    result = r.explain(completions=[block(SUM["cpp"], "cpp")], tests=[SUM_TESTS])[0]
    assert result.score is None and "/nonexistent/g++" in result.reason and r.stats["errors"] == 1


def test_results_come_back_in_input_order(reward):
    n = 24
    completions = [block(f"import time\ntime.sleep({(n - i) % 5} / 50)\nprint({i})") for i in range(n)]
    tests = [stdio(f"{i if i % 3 else i + 1}\n") for i in range(n)]
    assert reward(completions=completions, tests=tests) == [0.0 if i % 3 == 0 else 1.0 for i in range(n)]


def test_settings_are_checked_before_anything_runs():
    for settings in ({"scoring": "most"}, {"extract": "middle"}, {"test_timeout": 0}, {"language": "cobol"}):
        with pytest.raises(RewardConfigError):
            get_reward("code_tests", **settings)
    with pytest.raises(RewardConfigError, match="sandbox backend"):
        get_reward("code_tests", backend="docker")


def test_the_reward_pickles_and_still_scores(reward):
    again = pickle.loads(pickle.dumps(reward.configure(workers=1)))
    assert again(completions=[block("print(3)")], tests=[stdio("3")]) == [1.0]


@pytest.mark.parametrize(
    "unit",
    ["`", "```python\n", "```\nx\n", "~~~python\n(", "(" * 50 + "\n", "<think>```python\n", " " * 40 + "```\n"],
)
def test_adversarial_completions_take_linear_time(unit):
    r = get_reward("code_tests", workers=1, max_code_chars=1000)
    tests = [stdio("1")]

    def score(text: str) -> None:
        assert r(completions=[text], tests=tests) == [0.0]

    score("warm up")  # the worker starts here, not inside a measurement
    assert_linear(score, lambda n: unit * (n // len(unit) + 1), f"repeat:{unit!r}")


def test_many_slow_inputs_stop_at_the_sample_budget():
    r = get_reward("code_tests", workers=1, test_timeout=2.0, max_seconds=1.0)
    tests = json.dumps({"format": "stdio", "inputs": ["1"] * 10, "outputs": ["1"] * 10})
    result = r.explain(completions=[block("import time\ntime.sleep(0.4)\nprint(input())")], tests=[tests])[0]
    assert 0 < result.metrics["passed"] < 10  # stopped by the budget: all ten inputs would take 4 s
    assert "max_seconds=1" in result.reason
