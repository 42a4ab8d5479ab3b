"""One answer-container notion (tag names, [opening, closing] pairs, start_X markers) in every reward reading it."""

from __future__ import annotations

import pytest

from rewardsmith import get_reward
from rewardsmith.core.errors import RewardConfigError

UNSLOTH = {"think_tag": "<start_working_out>", "answer_tag": ["<SOLUTION>", "</SOLUTION>"]}
GOOD = "<start_working_out>9 times 2 is 18<end_working_out><SOLUTION>18</SOLUTION>"
TWO = "<start_working_out>9 times 2<end_working_out><SOLUTION>17</SOLUTION><SOLUTION>18</SOLUTION>"


def test_the_format_rewards_read_unsloth_markers():
    fmt = get_reward("think_format", **UNSLOTH)
    assert fmt(completions=[GOOD, TWO, GOOD.replace("<end_working_out>", "</start_working_out>")]) == [1.0, 0.0, 0.0]
    count = get_reward("tag_count", **UNSLOTH)
    assert count(completions=[GOOD, TWO]) == [1.0, 0.5]
    assert "<SOLUTION>" in fmt.check(TWO).reason


@pytest.mark.parametrize("name", ["math_accuracy", "gsm8k_accuracy"])
def test_two_solution_blocks_are_a_hedge_as_two_answer_blocks_are(name):
    kwargs = {"timeout": None} if name == "math_accuracy" else {}
    reward = get_reward(name, **UNSLOTH, **kwargs)
    assert reward(completions=[GOOD, TWO], answer=["18", "18"]) == [1.0, 0.0]
    plain = get_reward(name, **kwargs)
    assert plain(completions=["<answer>17</answer><answer>18</answer>"], answer=["18"]) == [0.0]
    # the reasoning's draft answer does not count
    draft = "<start_working_out>so \\boxed{17}?<end_working_out><SOLUTION>18</SOLUTION>"
    assert reward(completions=[draft], answer=["18"]) == [1.0]


@pytest.mark.parametrize("name", ["think_format", "tag_count", "math_accuracy", "gsm8k_accuracy"])
@pytest.mark.parametrize(
    ("setting", "words"),
    [
        ({"think_tag": "working out!"}, "tag name"),
        ({"answer_tag": ["<SOLUTION>"]}, "[opening, closing]"),
        ({"answer_tag": ["<s>", "<S>"]}, "must differ"),
    ],
)
def test_a_marker_that_names_no_container_is_a_clear_error(name, setting, words):
    with pytest.raises(RewardConfigError, match=words.replace("[", r"\[").replace("]", r"\]")):
        get_reward(name, **setting)


def test_start_markers_are_understood_as_their_end_pair():
    fmt = get_reward("think_format", think_tag="<start_working_out>", answer_tag=None)
    assert fmt.think_tag == "start_working_out" or fmt.think_tag == ("<start_working_out>", "<end_working_out>")
    assert fmt(completions=["<start_working_out>r<end_working_out> then 4"]) == [1.0]
