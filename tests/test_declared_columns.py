"""For every built-in reward, the columns it reads on real rows are the columns it declares.

A reward's ``required_columns`` and ``optional_columns`` come from the same
declarations that fill its parameters; these tests check that on real data
(GSM8K, MATH-500, the countdown sample) by recording which columns a batch
hands out while the reward scores it: every required column is read, nothing
undeclared is read, a required column removed is a clear error (unless a
fallback is there), and an optional column removed is not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rewardsmith import Batch, MissingColumnError, get_reward, list_rewards
from rewardsmith.core.registry import registered_target
from rewardsmith.data import check_columns
from rewardsmith.http.testing import LocalChatServer

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"


def _first(path: Path, n: int = 3) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(next(handle)) for _ in range(n)]


@pytest.fixture(scope="module")
def real_rows(shared_data) -> dict[str, list[dict[str, Any]]]:
    return {
        "gsm8k": _first(shared_data / "gsm8k_test.jsonl"),
        "math": _first(shared_data / "math500_test.jsonl"),
        "countdown": _first(ROOT / "examples" / "data" / "countdown_sample.jsonl"),
    }


SCHEMA = {"type": "object", "properties": {"answer": {"type": "number"}}, "required": ["answer"]}
TOOL_CALLS = [{"name": "calculator", "arguments": {"expression": "2+2"}}]


def _columns(rows: dict[str, list[dict[str, Any]]]) -> dict[str, list[Any]]:
    """Values for every column a built-in may read, three rows each, from the real data where there is some."""
    gsm8k, math, countdown = rows["gsm8k"], rows["math"], rows["countdown"]
    return {
        "question": [r["question"] for r in gsm8k],
        "answer": [r["answer"] for r in gsm8k],
        "solution": [r["solution"] for r in math],
        "nums": [r["nums"] for r in countdown],
        "target": [r["target"] for r in countdown],
        "schema": [SCHEMA] * 3,
        "tool_calls": [TOOL_CALLS] * 3,
        "tools": [[{"name": "calculator", "parameters": {"type": "object"}}]] * 3,
        "correct": [True, False, True],
        "reference": [r["answer"].split("####")[-1].strip() for r in gsm8k],
        "tests": ['{"format": "stdio", "inputs": ["1"], "outputs": ["1"]}'] * 3,
        # constraints without arguments, so that the optional `kwargs` can be left out
        "instruction_id_list": [["punctuation:no_comma", "change_case:english_lowercase"]] * 3,
        "kwargs": [[{}, {}]] * 3,
        "language": ["en"] * 3,
        "unrelated_notes": ["not a column any reward reads"] * 3,
    }


def _completions(rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    out = []
    for row in rows["gsm8k"]:
        final = row["answer"].split("####")[-1].strip()
        out.append(f"<think>{row['answer']}</think><answer>{final}</answer>")
    return out


#: For each built-in: its settings here, and the columns it reads when every declared column is present.
READS: dict[str, tuple[dict[str, Any], set[str]]] = {
    "code_syntax": ({}, set()),
    "code_tests": ({"workers": 1}, {"tests"}),
    "cosine_length": ({"unit": "chars"}, {"correct"}),
    "countdown": ({}, {"nums", "target"}),
    "gsm8k_accuracy": ({}, {"answer"}),
    "group_length": ({"unit": "chars"}, {"correct"}),
    "ifeval": ({}, {"instruction_id_list", "kwargs"}),
    "language_consistency": ({}, {"language"}),
    "json_schema": ({}, {"schema"}),
    "length": ({"target": 100, "unit": "chars"}, set()),
    "math_accuracy": ({"timeout": None}, {"answer"}),  # `solution` only when there is no `answer`
    "reasoning_steps": ({}, set()),
    "repetition": ({}, set()),
    "soft_overlong": ({"unit": "chars"}, set()),
    "tag_count": ({}, set()),
    "think_format": ({}, set()),
    "tool_call_match": ({}, {"tool_calls"}),
    "tool_schema": ({}, {"tools"}),
    "tool_success": ({}, set()),
    "tool_schema_turns": ({}, {"tools"}),
    "tool_success_turns": ({}, set()),
    "tool_efficiency": ({}, {"correct"}),
    "environment_reward": ({}, set()),
    "llm_judge": ({}, {"reference"}),
    "reference_fidelity": ({}, {"reference"}),
    "principles": ({"principles": ["ahimsa"]}, set()),
    "reward_model": ({}, set()),
    "perplexity": ({}, set()),
}
JUDGES = {"llm_judge", "reference_fidelity", "principles"}
MODELS = {"reward_model", "perplexity"}


def test_every_built_in_is_covered():
    built_in = {
        name
        for name, description in list_rewards().items()
        if not description.startswith("alias of")
        and getattr(registered_target(name), "__module__", "").startswith(("rewardsmith.rewards", "rewardsmith.judges"))
    }
    assert built_in == set(READS)


@pytest.fixture(scope="module")
def judge_server():
    with LocalChatServer(lambda request: "Score: 7") as server:
        yield server


def _make(name: str, request: Any) -> Any:
    settings = dict(READS[name][0])
    if name in JUDGES:
        server = request.getfixturevalue("judge_server")
        settings.update(base_url=server.base_url, model="local-judge", api_key_env=None, cache=None)
    if name == "reward_model":
        settings["model"] = str(request.getfixturevalue("tiny_reward_model"))
    if name == "perplexity":
        settings["model"] = str(request.getfixturevalue("tiny_model"))
    return get_reward(name, **settings)


def _batch(columns: dict[str, list[Any]], completions: list[str]) -> Batch:
    prompts = [[{"role": "user", "content": q}] for q in columns["question"]]
    wrapped = [[{"role": "assistant", "content": c}] for c in completions]
    return Batch.from_call(prompts, wrapped, [[1, 2, 3]] * len(completions), dict(columns))


@pytest.mark.parametrize("name", sorted(READS))
def test_columns_read_on_real_rows_are_the_declared_ones(name, real_rows, request):
    made = _make(name, request)
    declared = set(made.required_columns) | set(made.optional_columns)
    batch = _batch(_columns(real_rows), _completions(real_rows))
    scored = made.run_batch(batch)
    assert len(scored.values) == 3
    assert batch.columns_read == READS[name][1]
    assert set(made.required_columns) <= batch.columns_read <= declared


@pytest.mark.parametrize("name", sorted(n for n in READS if READS[n][1]))
def test_without_a_required_column_the_error_names_it_and_without_an_optional_one_it_scores(name, real_rows, request):
    made = _make(name, request)
    completions = _completions(real_rows)
    for column in READS[name][1]:
        columns = {k: v for k, v in _columns(real_rows).items() if k != column}
        if column in made.required_columns:
            batch = _batch(columns, completions)
            try:
                made.run_batch(batch)
            except MissingColumnError as exc:  # no fallback present: the error names the column, as check_columns does
                assert repr(column) in str(exc)
                assert made.missing_columns(columns) and not made.missing_columns([*columns, column])
            else:  # a declared fallback stood in for it, is what got read, and check_columns accepts the rows
                assert batch.columns_read & set(made.optional_columns)
                assert not made.missing_columns(columns)
        else:
            batch = _batch(columns, completions)
            assert len(made.run_batch(batch).values) == 3
            assert column not in batch.columns_read


def test_math_accuracy_scores_math_rows_from_their_solution_and_check_columns_accepts_them(real_rows):
    acc = get_reward("math_accuracy", timeout=None)
    rows = real_rows["math"]
    batch = Batch.from_call(None, [r["solution"] for r in rows], None, {"solution": [r["solution"] for r in rows]})
    assert acc.run_batch(batch).values == [1.0, 1.0, 1.0]
    assert batch.columns_read == {"solution"}
    assert check_columns(rows, ["math_accuracy"], raise_error=False) == []
    assert check_columns([{"problem": "x"}], ["math_accuracy"], raise_error=False)[0].columns == [
        "answer (or solution)"
    ]
