"""Markers and steps as other projects' tests write them: an opening tag with attributes is that tag
(``<think method="cot">``, reward-kit's tags), a longer tag name is not (``<thinking>``), and indented
"First, / Then, / Finally," lines are steps as indented "Step 1:" lines are."""

from __future__ import annotations

import pytest

from rewardsmith import get_reward

ATTRIBUTED = [
    '<think method="cot">2 and 2 make 4</think>\n<answer>4</answer>',
    "<think effort='high'>2 and 2 make 4</think>\n<answer type=\"final\">4</answer>",
    '< think  method="cot" >2 and 2 make 4</think>\n<answer>4</answer>',
]


@pytest.mark.parametrize("text", ATTRIBUTED)
def test_an_opening_tag_with_attributes_is_the_tag(text):
    assert get_reward("think_format")(completions=[text]) == [1.0]
    assert get_reward("tag_count")(completions=[text]) == [1.0]


@pytest.mark.parametrize(
    "text",
    [
        "<thinking>2 and 2 make 4</thinking>\n<answer>4</answer>",  # another tag, not <think> with attributes
        '<think method="cot">2 and 2 make 4\n<answer>4</answer>',  # the reasoning is never closed
        '<think a="1">x</think><think b="2">y</think><answer>4</answer>',  # two reasoning blocks
    ],
)
def test_other_tags_and_repeated_attributed_tags_are_not_the_format(text):
    assert get_reward("think_format")(completions=[text]) == [0.0]


def test_tag_count_counts_an_attributed_tag_once_and_a_repeated_one_as_repeated():
    tag_count = get_reward("tag_count")
    assert tag_count(completions=['<think a="1">x</think><answer>4</answer>']) == [1.0]
    assert tag_count(completions=['<think a="1">x</think><answer>4</answer><answer k="v">5</answer>']) == [0.5]


def test_the_answer_in_an_attributed_answer_tag_is_read():
    text = '<think>2 and 2 make 4</think><answer type="final">4</answer>'
    assert get_reward("gsm8k_accuracy")(completions=[text], answer=["4"]) == [1.0]
    assert get_reward("gsm8k_accuracy")(completions=[text], answer=["5"]) == [0.0]


@pytest.mark.parametrize("indent", ["", "  ", "\t", "    "])
def test_indented_step_words_count_like_indented_numbered_steps(indent):
    words = (
        f"{indent}First, we add the numbers.\n{indent}Then, we divide by two.\n{indent}Finally, we round the result."
    )
    numbered = f"{indent}Step 1: add the numbers\n{indent}Step 2: divide by two\n{indent}Step 3: round the result"
    steps = get_reward("reasoning_steps")
    assert steps(completions=[words, numbered]) == [1.0, 1.0]


def test_step_words_inside_a_sentence_are_not_steps():
    steps = get_reward("reasoning_steps")
    assert steps(completions=["  We first add the numbers and then divide them, finally rounding the value."]) == [0.0]
