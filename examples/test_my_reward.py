"""Testing a reward of your own with ``rewardsmith.testing``: ``pytest examples/test_my_reward.py``.

Three kinds of test: the scores you expect on hand-written completions, the
gaming probes of ``rewardsmith check`` generated from your rows (one test per
probe and row), and the reference solutions scoring the maximum.
"""

import pytest
from my_reward import answer_number

from rewardsmith.testing import assert_gold_is_max, assert_not_gamed, assert_scores, probe_cases

ROWS = [
    {
        "prompt": f"What is {a} times {b}? Reason in <think></think>, then answer in <answer></answer>.",
        "answer": str(a * b),
        "solution": f"<think>{a} times {b} is {a * b}.</think>\n<answer>{a * b}</answer>",
    }
    for a, b in [(3, 4), (12, 11), (7, 8), (25, 40)]
]


def test_expected_scores():
    assert_scores(
        answer_number,
        [
            ("<answer>12</answer>", {"answer": "12"}, 1.0),
            ("<think>3 fours</think><answer> 12 </answer>", {"answer": "12"}, 1.0),
            ("<answer>1,000</answer>", {"answer": "1000"}, 1.0),
            ("<answer>13</answer>", {"answer": "12"}, 0.0),
            ("<answer>12</answer><answer>13</answer>", {"answer": "12"}, 0.0),
            ("<answer>12 or 13</answer>", {"answer": "12"}, 0.0),
            ("the answer is 12", {"answer": "12"}, 0.0),
        ],
    )


@pytest.mark.parametrize("case", probe_cases(answer_number, ROWS), ids=str)
def test_cannot_be_gamed(case):
    assert_not_gamed(case)


def test_reference_solutions_score_the_maximum():
    assert_gold_is_max(answer_number, ROWS)
