"""Every built-in reward on arbitrary, empty, None, odd-unicode and 1 MB inputs: never raises, stays in its
documented range (or None), and gives the same score for the same input."""

from __future__ import annotations

import math

import pytest
from cpu_timing import cpu_time
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewardsmith import get_reward

pytestmark = pytest.mark.xdist_group("properties")

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}

# name -> (settings, columns for one row drawn by hypothesis)
TAGGY = st.sampled_from(
    ["<think>", "</think>", "<answer>", "</answer>", "\\boxed{", "}", "####", "```", "<code>", "</code>",
     "<tool_call>", "</tool_call>", "Step 1:", "The answer is", " ", "\n", "7", "1,000", "$", "{", "(", ")"]
)  # fmt: skip
TEXT = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(TAGGY, st.text(max_size=12)), max_size=40).map("".join),
    st.just(""),
)
IFEVAL_ROWS = [
    {"instruction_id": ["punctuation:no_comma", "detectable_format:title"], "kwargs": [{}, {}]},
    {"instruction_id": ["length_constraints:number_sentences", "change_case:capital_word_frequency"],
     "kwargs": [{"num_sentences": 3, "relation": "less than"},
                {"capital_frequency": 2, "capital_relation": "at least"}]},
    {"instruction_id": ["detectable_format:number_bullet_lists", "detectable_content:number_placeholders",
                        "language:response_language"],
     "kwargs": [{"num_bullets": 2}, {"num_placeholders": 1}, {"language": "en"}]},
    {"instruction_id": ["detectable_format:json_format", "keywords:frequency"],
     "kwargs": [{}, {"keyword": "think", "frequency": 2, "relation": "at least"}]},
]  # fmt: skip
ANSWER = st.one_of(st.none(), st.text(max_size=20), st.integers(-(10**6), 10**6).map(str), st.just("\\frac{1}{2}"))

CODE_TESTS = st.one_of(
    st.none(),
    st.just('{"format": "stdio", "inputs": ["1 2"], "outputs": ["3"]}'),
    st.just('["assert f(1) == 1"]'),
    st.text(max_size=20),
)

CASES = {
    "think_format": ({}, {}),
    "tag_count": ({}, {}),
    "gsm8k_accuracy": ({}, {"answer": ANSWER}),
    "math_accuracy": ({"timeout": 5.0}, {"answer": ANSWER}),
    "countdown": ({}, {"nums": st.lists(st.integers(0, 100), max_size=6), "target": st.integers(-100, 1000)}),
    "length": ({"target": 20, "unit": "chars"}, {}),
    "cosine_length": ({"max_length": 50, "unit": "chars"}, {"correct": st.one_of(st.none(), st.booleans())}),
    "soft_overlong": ({"max_length": 40, "cache_length": 10, "unit": "chars"}, {}),
    "repetition": ({}, {}),
    "json_schema": ({"schema": SCHEMA, "partial_credit": True}, {}),
    "tool_call_match": ({}, {"tool_calls": st.one_of(st.none(), st.just([{"name": "f", "arguments": {"x": 1}}]))}),
    "code_syntax": ({}, {}),
    "code_tests": ({"workers": 1, "test_timeout": 2.0}, {"tests": CODE_TESTS}),
    "reasoning_steps": ({}, {}),
    "ifeval": ({"mode": "loose"}, {"ground_truth": st.one_of(st.none(), st.sampled_from(IFEVAL_ROWS))}),
    "group_length": ({"unit": "chars"}, {"correct": st.one_of(st.none(), st.booleans())}),
    "tool_schema": ({"tools": [{"name": "calculator", "parameters": {"type": "object"}}]}, {}),
    "tool_success": ({}, {}),
    "tool_schema_turns": ({"tools": [{"name": "calculator", "parameters": {"type": "object"}}]}, {}),
    "tool_success_turns": ({}, {}),
    "tool_efficiency": ({}, {"correct": st.one_of(st.none(), st.booleans())}),
    "environment_reward": ({}, {}),
    "language_consistency": ({}, {"language": st.one_of(st.none(), st.sampled_from(["en", "fr", "zh", "hi"]))}),
}

_REWARDS: dict = {}


def _reward(name: str):
    if name not in _REWARDS:
        _REWARDS[name] = get_reward(name, **CASES[name][0])
    return _REWARDS[name]


def _check(name: str, completions: list, columns: dict) -> list:
    reward = _reward(name)
    first = reward(prompts=["p"] * len(completions), completions=completions, **columns)
    second = reward(prompts=["p"] * len(completions), completions=completions, **columns)
    assert first == second, f"{name} is not deterministic"
    low, high = reward.score_range or (-math.inf, math.inf)
    for value in first:
        assert value is None or (isinstance(value, float) and low <= value <= high), (name, value)
    return first


def test_every_builtin_is_covered():
    from rewardsmith import list_rewards
    from rewardsmith.core.registry import registered_target

    builtins = {name for name, text in list_rewards().items() if not text.startswith(("alias", "plug-in"))}
    assert set(CASES) <= builtins
    missing = {n for n in builtins if registered_target(n).__module__.startswith("rewardsmith.rewards")} - set(CASES)
    assert not missing, f"built-in rewards without property tests: {missing}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_arbitrary_text_never_raises_and_stays_in_range(name):
    column_strategies = CASES[name][1]
    row = st.fixed_dictionaries({"completion": st.one_of(TEXT, st.none()), **column_strategies})
    examples = 25 if name == "math_accuracy" else 60

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(rows=st.lists(row, min_size=1, max_size=4))
    def run(rows):
        completions = [r["completion"] for r in rows]
        columns = {key: [r[key] for r in rows] for key in column_strategies}
        _check(name, completions, columns)

    run()


@pytest.mark.parametrize("name", sorted(CASES))
def test_conversational_and_odd_unicode(name):
    odd = [
        "\u202e\u0000\ufeff𝟘𝟙 \u200b<think>é</think><answer>٣</answer>",
        "\udcff".encode("utf-8", "surrogatepass").decode("utf-8", "replace"),
    ]
    conversational = [[{"role": "assistant", "content": text}] for text in odd]
    columns = {key: [None] * len(odd) for key in CASES[name][1]}
    _check(name, conversational, columns)


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_megabyte_completion_is_scored_quickly(name):
    chunk = "<think>reasoning 12345 " + "\\boxed{" * 3 + "</answer>```" + "Step 1: x = 1,000. " + "ab" * 30
    huge = (chunk * (1_000_000 // len(chunk) + 1))[:1_000_000]
    columns = {key: [None] for key in CASES[name][1]}
    if "nums" in columns:
        columns = {"nums": [[1, 2, 3]], "target": [6]}
    seconds, _ = cpu_time(lambda: _check(name, [huge], columns), repeats=1)
    limit = (_reward(name).timeout or 0) + 1.0 + 4.0  # CPU seconds (workers included): a timeout + 1 s, plus slack
    assert seconds < 2 * limit  # (two calls)
