"""length, cosine_length, soft_overlong, repetition, reasoning_steps, json_schema, tool_call_match, code_syntax."""

from __future__ import annotations

import itertools
import json

import pytest

from rewardsmith import RewardConfigError, get_reward

# -- length family ------------------------------------------------------------------------------------


def test_length_counts_tokens_from_completion_ids_words_or_chars():
    by_tokens = get_reward("length", target=3)
    assert by_tokens(completions=["a b c d e"], completion_ids=[[1, 2, 3]]) == [1.0]  # tokens, not words
    assert get_reward("length", target=5, unit="words")(completions=["a b c d e"]) == [1.0]
    assert get_reward("length", target=9, unit="chars")(completions=["a b c d e"]) == [1.0]


def test_length_in_tokens_without_ids_is_a_clear_error():
    with pytest.raises(RewardConfigError, match="completion_ids"):
        get_reward("length", target=3)(completions=["a b c"])


def test_length_uses_a_tokenizer_when_given(tiny_model):
    r = get_reward("length", target=3, tokenizer=str(tiny_model))
    assert r(completions=["abc", "abcdef"]) == [1.0, 0.0]  # one token per character


def test_length_range_and_falloffs():
    r = get_reward("length", min_length=2, max_length=4, unit="words")
    assert r(completions=["a", "a b", "a b c d", "a b c d e f", "a " * 9]) == [0.5, 1.0, 1.0, 0.5, 0.0]
    cosine = get_reward("length", max_length=4, unit="words", falloff="cosine")
    assert cosine(completions=["a b c d e f", "a " * 8, "a " * 80]) == pytest.approx([0.5, 0.0, 0.0])


@pytest.mark.parametrize("settings", [{}, {"target": 3, "max_length": 5}, {"min_length": 5, "max_length": 2},
                                      {"target": 3, "unit": "bytes"}, {"target": 3, "falloff": "step"}])  # fmt: skip
def test_length_bad_settings_are_clear_errors(settings):
    with pytest.raises(RewardConfigError):
        get_reward("length", **settings)


def test_cosine_length_is_clamped_so_long_outputs_never_score_high_again():
    r = get_reward("cosine_length", max_length=10, unit="words")
    lengths = list(range(0, 200, 3))
    correct = r(completions=["w " * n for n in lengths], correct=[True] * len(lengths))
    wrong = r(completions=["w " * n for n in lengths], correct=[False] * len(lengths))
    assert all(a >= b for a, b in itertools.pairwise(correct))  # never rises again (an unclamped cosine would)
    assert all(a <= b for a, b in itertools.pairwise(wrong))
    assert correct[-1] == pytest.approx(0.5) and wrong[-1] == pytest.approx(-0.5)
    assert min(correct) > max(wrong)


def test_cosine_length_takes_correctness_from_another_reward():
    r = get_reward("cosine_length", max_length=100, unit="chars", correctness="gsm8k_accuracy")
    assert r.required_columns == ["answer"]
    scores = r(completions=["#### 4", "#### 5", "#### 4"], answer=["4", "4", "no number"])
    assert scores[0] > 0.9 and scores[1] < -0.9 and scores[2] is None


def test_soft_overlong_follows_dapo():
    r = get_reward("soft_overlong", max_length=100, cache_length=20)
    ids = [[0] * n for n in (10, 80, 90, 100, 150)]
    assert r(completions=[""] * 5, completion_ids=ids) == [0.0, 0.0, -0.5, -1.0, -1.0]
    with pytest.raises(RewardConfigError):
        get_reward("soft_overlong", max_length=10, cache_length=20)


# -- repetition and steps ------------------------------------------------------------------------------


def test_repetition_penalty_is_bounded_and_zero_without_repeats():
    r = get_reward("repetition", ngram_size=3, max_penalty=-0.5)
    no_repeat, all_repeat = r(completions=["one two three four five six", "la la la la la la la la"])
    assert no_repeat == 0.0 and all_repeat == pytest.approx(-0.5 * (1 - 1 / 6))
    tokens = get_reward("repetition", ngram_size=2, unit="tokens")
    assert tokens(completions=["x"], completion_ids=[[1, 2, 1, 2, 1, 2]]) == pytest.approx([-0.6])


def test_reasoning_steps_ignores_empty_steps():
    r = get_reward("reasoning_steps")
    real = "1. Add the apples together.\n2. Add the pears together.\n3. Sum the two totals."
    assert r(completions=[real, "Step 1:\nStep 2:\nStep 3:", "- a\n- b\n- c"]) == [1.0, 0.0, 0.0]


# -- json ----------------------------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


def test_json_schema_from_a_column_as_object_or_string():
    r = get_reward("json_schema")
    scores = r(
        completions=['{"name": "Ada", "age": 36}', 'Sure:\n```json\n{"name": "Ada", "age": -1}\n```', "{not json"],
        schema=[SCHEMA, json.dumps(SCHEMA), SCHEMA],
    )
    assert scores == [1.0, 0.0, 0.0]


def test_json_schema_partial_credit_and_unusable_schemas():
    r = get_reward("json_schema", schema=SCHEMA, partial_credit=True)
    assert r(completions=['{"name": "Ada"}', '{"name": 1, "age": "x"}', "[]"]) == [0.25, 0.0, 0.0]
    broken = get_reward("json_schema")
    assert broken(completions=["{}", "{}"], schema=[{"type": "nonsense"}, None]) == [None, None]


def test_json_schema_survives_hostile_json():
    r = get_reward("json_schema", schema={"type": "array"})
    assert r(completions=["[" * 100_000 + "]" * 100_000, "1" * 10_000]) == [0.0, 0.0]


# -- tool calls -----------------------------------------------------------------------------------------

EXPECTED = [{"name": "search", "arguments": {"q": "cats", "limit": 5}}, {"name": "open", "arguments": {"id": 1}}]


def _text_calls(*calls):
    return "".join(f"<tool_call>{json.dumps(c)}</tool_call>" for c in calls)


def test_tool_calls_in_text_and_openai_messages():
    r = get_reward("tool_call_match")
    in_text = _text_calls(
        {"name": "open", "arguments": {"id": 1.0}}, {"name": "search", "arguments": {"limit": 5, "q": "cats"}}
    )
    openai = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"type": "function", "function": {"name": "search", "arguments": '{"q": "cats", "limit": 5}'}},
                {"type": "function", "function": {"name": "open", "arguments": '{"id": 1}'}},
            ],
        }
    ]
    assert r(completions=[in_text], tool_calls=[EXPECTED]) == [1.0]
    assert r(prompts=[[{"role": "user", "content": "q"}]], completions=[openai], tool_calls=[json.dumps(EXPECTED)]) == [
        1.0
    ]


def test_tool_calls_partial_order_extras_and_types():
    r = get_reward("tool_call_match")
    first_only = _text_calls(EXPECTED[0])
    extra = _text_calls(*EXPECTED, {"name": "delete", "arguments": {}})
    # F1 of matched calls: one of two expected (2/3), two of two expected among three made (4/5)
    assert r(completions=[first_only, extra], tool_calls=[EXPECTED, EXPECTED]) == [pytest.approx(2 / 3), 0.8]
    swapped = _text_calls(EXPECTED[1], EXPECTED[0])
    # in order, only one of the two swapped calls can count (the longest matching subsequence)
    assert get_reward("tool_call_match", ordered=True)(completions=[swapped], tool_calls=[EXPECTED]) == [0.5]
    true_not_one = _text_calls({"name": "open", "arguments": {"id": True}})
    assert r(completions=[true_not_one], tool_calls=[[EXPECTED[1]]]) == [0.0]
    assert get_reward("tool_call_match", partial_credit=False)(completions=[first_only], tool_calls=[EXPECTED]) == [0.0]


def test_tool_calls_malformed_and_empty():
    r = get_reward("tool_call_match")
    assert r(completions=["<tool_call>{oops</tool_call>"], tool_calls=[[EXPECTED[1]]]) == [0.0]
    assert r(completions=["no calls"], tool_calls=[[]]) == [1.0]
    assert r(completions=["x"], tool_calls=[["not a call"]]) == [None]


# -- code -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        "().__class__.__bases__[0].__subclasses__()",
        "eval('1+1')",
        "exec('x=1')",
        "open('/etc/passwd').read()",
        "import subprocess",
        "from os import system",
        "import math",
        "getattr(__builtins__, 'eval')",
        "x = sys.modules",
    ],
)
def test_code_syntax_disallowed_constructs_score_zero(code):
    assert get_reward("code_syntax")(completions=[f"```python\n{code}\n```"]) == [0.0]


def test_code_syntax_good_bad_and_missing_code():
    r = get_reward("code_syntax")
    good = "<code>def add(a, b):\n    return a + b</code>"
    text_mentions_eval = "Never call eval() here.\n```python\nprint(sum([1, 2]))\n```"
    assert r(completions=[good, text_mentions_eval, "<code>def f(:</code>", "no code", "```python\n\n```"]) == [
        1.0,
        1.0,
        0.3,
        0.0,
        0.0,
    ]
    assert get_reward("code_syntax", allow_imports=True)(completions=["<code>import math</code>"]) == [1.0]
    assert get_reward("code_syntax", allow_imports=True)(completions=["<code>import os</code>"]) == [0.0]
    assert get_reward("code_syntax", syntax_error_score=0.0)(completions=["<code>def f(:</code>"]) == [0.0]
