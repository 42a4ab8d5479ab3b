"""Rewards read as their standards read: json_schema's partial credit, formats and ECMA-262 patterns; countdown's
exact arithmetic; the ``correct`` column of the length rewards as CSV data holds it."""

from __future__ import annotations

import pytest

from rewardsmith import get_reward
from rewardsmith.compose import coverage
from rewardsmith.core.errors import DatasetError
from rewardsmith.rewards.json_formats import conforms

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}, "email": {"type": "string"}},
    "required": ["name"],
}


def test_partial_credit_never_pays_emptiness_more_than_an_attempt():
    r = get_reward("json_schema", schema=PERSON, partial_credit=True)
    empty, wrong_types, half_right, right = r(
        completions=["{}", '{"name": 7, "age": "old"}', '{"name": 7, "age": 36}', '{"name": "Ada", "age": 36}']
    )
    assert empty == 0.0 and wrong_types == 0.0  # {} scored 0.375 before, more than the attempt
    assert empty <= wrong_types < half_right < right == 1.0


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ("email", "ada@example.org", ["ada", "@", "ada@", "a b@example.org", "ada@-bad-.org"]),
        ("date-time", "2024-02-29T23:59:60+01:00", ["yesterday", "2024-02-30T10:00:00Z", "2024-01-01 10:00:00Z"]),
        ("date", "2024-02-29", ["2023-02-29", "20240101", "2024-1-1"]),
        ("time", "10:00:00Z", ["25:00:00Z", "10:00", "10:00:00"]),
        ("ipv4", "192.168.0.1", ["1.2.3", "10.0.0.256", "01.2.3.4"]),
        ("ipv6", "2001:db8::1", ["2001:db8::g", "fe80::1%eth0"]),
        ("uri", "https://example.org/a?b=c#d", ["example.org", "https://exa mple.org"]),
        ("hostname", "example.org", ["-bad.org", "a" * 64 + ".org"]),
        ("uuid", "123e4567-e89b-12d3-a456-426614174000", ["123e4567"]),
    ],
)
def test_formats_are_checked(fmt, good, bad):
    schema = {"type": "object", "properties": {"v": {"type": "string", "format": fmt}}, "required": ["v"]}
    r = get_reward("json_schema", schema=schema)
    scores = r(completions=[f'{{"v": "{v}"}}' for v in [good, *bad]])
    assert scores == [1.0] + [0.0] * len(bad), [good, *bad]
    assert conforms(good, fmt) and not any(conforms(v, fmt) for v in bad)


def test_patterns_have_ecma_262_semantics():
    schema = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "n": {"type": "string", "pattern": r"^\d+$"},
        },
        "patternProperties": {"^x-.$": {"type": "integer"}},
    }
    r = get_reward("json_schema", schema=schema)
    texts = ['{"code": "ABC"}', '{"code": "ABC\\n"}', '{"n": "123"}', '{"n": "\u0661\u0662"}', '{"x-a": 1}']
    texts += ['{"x-a\\n": "a key ECMA does not match (Python did)"}', '{"x-a": "a string"}']
    assert r(completions=texts) == [1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0]


def test_countdown_is_exact():
    cd = get_reward("countdown")
    nums, target = [7, 3, 97, 98, 99], 7
    texts = ["<answer>7 + 3/(97*98*99)</answer>", "<answer>7 * (99 - 98)</answer>", "<answer>7 + 3 - 3</answer>"]
    assert cd(completions=texts, nums=[nums] * 3, target=[target] * 3) == [0.0, 1.0, 0.0]
    assert cd(completions=["<answer>10 / 4</answer>"], nums=[[10, 4]], target=["2.5"]) == [1.0]


@pytest.mark.parametrize("name", ["cosine_length", "group_length"])
def test_a_correct_column_of_csv_text_is_decided_per_row(name):
    r = get_reward(name, unit="chars")
    texts = ["short", "short", "a much longer answer", "a much longer answer"]
    as_text = r(prompts=["p"] * 4, completions=texts, correct=["True", "False", "true", "FALSE"])
    as_bools = r(prompts=["p"] * 4, completions=texts, correct=[True, False, True, False])
    assert as_text == as_bools and as_text[0] > as_text[1]
    unknown = r(prompts=["p"] * 2, completions=texts[:2], correct=["", float("nan")])
    assert unknown == [None, None]


@pytest.mark.parametrize("name", ["cosine_length", "group_length"])
def test_a_correct_column_that_is_not_true_false_or_a_score_is_an_error_before_training(name):
    r = get_reward(name, unit="chars")
    rows = [{"prompt": "p", "correct": "True"}, {"prompt": "q", "correct": "maybe"}]
    with pytest.raises(DatasetError, match=r"row 1: 'maybe' is not true, false or a score"):
        coverage(rows, r)
