"""Code rewards that cannot be gamed from the prompt, and rows read whole in the datasets' own layouts.

A policy sees its prompt: a program built from the prompt alone (a lookup table
of the calls it shows) must score well below a real solution under the
training prompt, in the real sandbox.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from sandbox_helpers import block, requires_sandbox

from rewardsmith import get_reward
from rewardsmith.core.errors import DatasetError
from rewardsmith.data import prepare_dataset

pytestmark = [requires_sandbox, pytest.mark.xdist_group("sandbox")]

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def reward(request):
    made = get_reward("code_tests", workers=2)
    request.addfinalizer(made.close)
    return made


@pytest.fixture(scope="module")
def mbpp_rows(shared_data):
    return [json.loads(line) for line in (shared_data / "mbpp.jsonl").read_text().splitlines()]


def _simple_calls(asserts: list[str]) -> list[tuple[str, str, str]] | None:
    """``(function, arguments tuple, expected)`` of each ``assert f(...) == expected``; ``None`` if one is not so."""
    calls = []
    for text in asserts:
        test = ast.parse(text).body[0].test
        if not (isinstance(test, ast.Compare) and isinstance(test.left, ast.Call)):
            return None
        call = test.left
        if not isinstance(call.func, ast.Name) or call.keywords:
            return None
        args = ast.unparse(ast.Tuple(call.args, ast.Load())) if call.args else "()"
        calls.append((call.func.id, args, ast.unparse(test.comparators[0])))
    return calls


def lookup_table(prompt: str) -> str | None:
    """A program that hard-codes the calls the prompt shows: ``{args: expected}``, nothing computed."""
    shown = [line for line in prompt.splitlines() if line.startswith("assert ")]
    calls = _simple_calls(shown) if shown else None
    if not calls:
        return None
    names = sorted({name for name, _, _ in calls})
    table = ", ".join(f"({name!r}, {args}, {want})" for name, args, want in calls)
    lines = [f"TABLE = [{table}]"]
    lines += [
        f"def {name}(*args):\n    return next((w for n, a, w in TABLE if (n, a) == ({name!r}, args)), None)"
        for name in names
    ]
    return "\n".join(lines)


def test_a_lookup_table_of_the_training_prompt_scores_well_below_a_real_solution(reward, mbpp_rows):
    rows = [r for r in mbpp_rows if _simple_calls(r["test_list"]) and not r["test_setup_code"]][:40:4]
    training = prepare_dataset(rows, converter="mbpp", conversational=False)
    evaluation = prepare_dataset(rows, converter="mbpp", show_tests="all_for_eval", conversational=False)
    tests = list(training["tests"])
    assert tests == list(evaluation["tests"])  # the same graded tests: only the prompt differs
    real = reward(completions=[block(r["code"].replace("\r\n", "\n")) for r in rows], tests=tests)
    trained = reward(completions=[block(lookup_table(p)) for p in training["prompt"]], tests=tests)
    shown_all = reward(completions=[block(lookup_table(p)) for p in evaluation["prompt"]], tests=tests)
    assert len(rows) == 10 and sum(real) == 10.0
    assert shown_all == [1.0] * 10  # the threat: MBPP's own prompt is passed by a lookup table
    assert max(trained) <= 0.34 and sum(trained) / 10 <= 0.34, trained
    hidden = [json.loads(t)["asserts"][1:] for t in tests]
    assert all(a not in p for p, h in zip(training["prompt"], hidden) for a in h)


def test_the_signature_prompt_and_the_refusal_of_an_ambiguous_setting(mbpp_rows):
    row = mbpp_rows[0]
    out = prepare_dataset([row], converter="mbpp", show_tests="signature", conversational=False)[0]
    assert "def min_cost(cost, m, n):" in out["prompt"] and "assert" not in out["prompt"]
    same = next(r for r in mbpp_rows if r["task_id"] == 37)  # three identical asserts: one shown is all shown
    out = prepare_dataset([same], converter="mbpp", conversational=False)[0]
    assert "assert" not in out["prompt"] and "def sort_mixed_list(" in out["prompt"]
    with pytest.raises(DatasetError, match="all_for_eval"):
        prepare_dataset([row], converter="mbpp", show_tests=True, conversational=False)
    with pytest.raises(DatasetError, match="show_tests must be one of"):
        prepare_dataset([row], converter="mbpp", show_tests="everything", conversational=False)


def test_mbpp_rows_in_their_own_layout_run_their_setup_code(reward, mbpp_rows):
    rows = [r for r in mbpp_rows if r["test_setup_code"].strip()]
    assert [r["task_id"] for r in rows] == [367, 927]
    solutions = [block(r["code"].replace("\r\n", "\n")) for r in rows]
    columns = {key: [r[key] for r in rows] for key in ("test_list", "test_setup_code")}
    assert reward(completions=solutions, **columns) == [1.0, 1.0]


def test_humaneval_rows_in_their_own_layout_are_read_whole_or_refused_naming_the_converter(reward):
    rows = [json.loads(line) for line in (DATA / "humaneval_sample.jsonl").read_text().splitlines()]
    whole = [block(r["prompt"] + r["canonical_solution"]) for r in rows]
    wrong = [block(r["prompt"] + "    return None\n") for r in rows]
    columns = {"test": [r["test"] for r in rows], "entry_point": [r["entry_point"] for r in rows]}
    prompts = [r["prompt"] for r in rows]
    assert reward(prompts=prompts, completions=whole, **columns) == [1.0] * len(rows)
    assert max(reward(prompts=prompts, completions=wrong, **columns)) < 1.0
    chat = [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": p}] for p in prompts]
    assert reward(prompts=chat, completions=whole, **columns) == [1.0] * len(rows)
    wrapped = [f"Complete this function:\n```python\n{p}```" for p in prompts]
    refused = reward.explain(prompts=wrapped, completions=whole, **columns)
    assert all(r.score is None and "converter: humaneval" in r.reason for r in refused)
    no_entry = reward.explain(prompts=prompts[:1], completions=whole[:1], test=columns["test"][:1])[0]
    assert no_entry.score is None and "entry_point" in no_entry.reason and "converter: humaneval" in no_entry.reason


def test_an_assert_inside_a_function_that_never_runs_asserts_nothing(reward):
    check = "def check(candidate):\n    assert candidate(1) == 2\n"
    result = reward.explain(completions=[block("def f(x):\n    return 0")], tests=[json.dumps([check])])[0]
    assert result.score is None and "asserts nothing" in result.reason


def test_call_tests_give_floats_a_tolerance_and_integers_none(reward):
    tests = json.dumps({"format": "call", "fn_name": "f", "inputs": [[1]], "outputs": [123456789012]})
    floats = json.dumps({"format": "call", "fn_name": "f", "inputs": [[1]], "outputs": [0.3]})
    programs = [
        "def f(x):\n    return 123456700000.0",
        "def f(x):\n    return 123456789012",
        "def f(x):\n    return 0.1 + 0.2",
    ]
    got = reward(completions=[block(p) for p in programs], tests=[tests, tests, floats])
    assert got == [0.0, 1.0, 1.0]


def test_a_reference_program_without_a_fence_is_graded_and_prose_is_not(reward, mbpp_rows):
    rows = [r for r in mbpp_rows if r["task_id"] in (2, 11, 126, 367)]
    ds = prepare_dataset(rows, converter="mbpp", conversational=False)
    tests = list(ds["tests"])
    assert reward(completions=[r["code"] for r in rows], tests=tests) == [1.0] * 4
    first = tests[0]
    others = [
        "The answer is (4, 5).",  # prose
        "similar_elements = lambda a, b: tuple(set(a) & set(b))",  # defines no function the tests call
        "Here it is:\n" + rows[0]["code"],  # code mixed with text
        "def other(a, b):\n    return 1",  # not the function under test
    ]
    results = reward.explain(completions=others, tests=[first] * len(others))
    assert [r.score for r in results] == [0.0] * 4 and all("no ```python block" in r.reason for r in results)


def test_the_code_example_config_trains_on_prompts_that_show_at_most_one_test(shared_data):
    import yaml

    config = yaml.safe_load((Path(__file__).resolve().parents[1] / "examples" / "code_grpo.yaml").read_text())
    data = config["dataset"]
    ds = prepare_dataset(
        str(shared_data / "mbpp.jsonl"),
        converter=data["converter"],
        conversational=False,
        **data.get("converter_settings", {}),
    )
    shown = [sum(line.startswith("assert ") for line in p.splitlines()) for p in ds["prompt"]]
    assert max(shown) == 1 and len(shown) == 974
