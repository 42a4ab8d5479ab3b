"""think_format, tag_count and countdown: the worked example, and the ways they get gamed."""

from __future__ import annotations

import pytest
from cpu_timing import cpu_time

from rewardsmith import get_reward
from rewardsmith.rewards.countdown import InvalidEquation, evaluate_equation

# The worked example from a GRPO tutorial: the chat template prefills <think>, target 15, nums [4, 8, 2, 1].
WORKED = [
    "Let's use the numbers 4, 8, 2, and 1 to get 15. \nWe can try: 8 * 2 - 1 = 15... </think>\n"
    "<answer> 8 * 2 - 1 </answer>",
    " ... </think>\n<answer> 8 * 2 - 1 </answer>",
    "Using 4, 8, 2, 1, make 15: 8 * 2 - 1 = 15",
    "<answer> 8 + 4 + 2 + 1 </answer>\n<think> This should equal 15 </think>",
    " ... </think>\n<answer> 8 + 4 - 2 </answer>",
    " ... </think>\n<answer> 10 * 2 - 5 </answer>",
]


def test_worked_example_format_scores():
    assert get_reward("think_format", prefilled_think=True)(completions=WORKED) == [1, 1, 0, 0, 1, 1]


def test_worked_example_countdown_scores():
    scores = get_reward("countdown")(completions=WORKED, nums=[[4, 8, 2, 1]] * 6, target=[15] * 6)
    assert scores == [1, 1, 0, 0, 0, 0]


FMT = get_reward("think_format")


@pytest.mark.parametrize(
    ("completion", "why"),
    [
        ("<think>a</think><answer>1</answer><think>b</think><answer>2</answer>", "repeated blocks"),
        ("<think>a</think><answer>1</answer><answer>2</answer>", "two answers"),
        ("<think><think>a</think></think><answer>1</answer>", "nested reasoning"),
        ("<think>a<answer>1</answer></think>", "answer inside reasoning"),
        ("<think>a<answer>1</answer>", "unclosed reasoning"),
        ("<think>a</think><answer>1", "unclosed answer"),
        ("</think><answer>1</answer>", "closing without opening"),
        ("<think>a</think><answer>   </answer>", "empty answer"),
        ("<think> \n </think><answer>1</answer>", "empty reasoning"),
        ("<answer>1</answer><think>a</think>", "answer before reasoning"),
        ("<think>a</think><answer>1</answer>\nand more text\n", "junk after the answer (multiline $ trap)"),
        ("<THINK>a</THINK><answer>1</answer><Answer>2</Answer>", "case variants are still tags"),
        ("Sure!\n<think>a</think><answer>1</answer>", "text before the reasoning in strict mode"),
        ("", "empty"),
    ],
)
def test_format_gaming_patterns_score_zero(completion, why):
    assert FMT(completions=[completion]) == [0.0], why


def test_format_accepts_the_right_shape_with_white_space():
    assert FMT(completions=["\n<think>\nwork\n</think>\n\n<answer>\n4\n</answer>\n"]) == [1.0]


def test_lenient_mode_allows_text_between_and_after_the_blocks_but_not_before_or_repeats():
    lenient = get_reward("think_format", strict=False)
    assert lenient(completions=["<think>a</think> so <answer>1</answer> done"]) == [1.0]
    assert lenient(completions=["\n <think>a</think> so <answer>1</answer> done"]) == [1.0]
    assert lenient(completions=["Sure. <think>a</think> so <answer>1</answer> done"]) == [0.0]  # reasoning starts
    assert lenient(completions=["<think>a</think><answer>1</answer> <answer>2</answer>"]) == [0.0]


def test_reasoning_block_only_is_trls_think_format():
    think_only = get_reward("think_format", answer_tag=None)
    assert think_only(completions=["<think>a</think>The answer is 4.", "<think>a</think>"]) == [1.0, 1.0]
    assert think_only(completions=["So <think>a</think> 4", "<think>a<think>b</think></think> 4"]) == [0.0, 0.0]
    assert think_only(completions=["<think> </think> 4", "no tags"]) == [0.0, 0.0]  # empty reasoning scores 0
    prefilled = get_reward("think_format", answer_tag=None, prefilled_think=True)
    assert prefilled(completions=["a</think> 4", "<think>a</think> 4"]) == [1.0, 0.0]


def test_prefilled_think_does_not_require_and_does_not_allow_an_opening_tag():
    prefilled = get_reward("think_format", prefilled_think=True)
    assert prefilled(completions=["reasoning</think><answer>1</answer>"]) == [1.0]
    assert prefilled(completions=["<think>reasoning</think><answer>1</answer>"]) == [0.0]
    assert FMT(completions=["reasoning</think><answer>1</answer>"]) == [0.0]


def test_custom_tag_names():
    custom = get_reward("think_format", think_tag="reasoning", answer_tag="solution")
    assert custom(completions=["<reasoning>r</reasoning><solution>s</solution>"]) == [1.0]
    assert custom(completions=["<think>r</think><answer>s</answer>"]) == [0.0]


def test_tag_count_gives_partial_credit():
    tags = get_reward("tag_count")
    scores = tags(
        completions=[
            "<think>a</think><answer>b</answer>",
            "<think>a</think>",
            "<think>a</think><answer>b</answer><answer>c</answer>",
            "nothing",
        ]
    )
    assert scores == [1.0, 0.5, 0.5, 0.0]
    assert get_reward("tag_count", prefilled_think=True)(completions=["a</think><answer>b</answer>"]) == [1.0]


def test_format_reasons_say_what_is_wrong():
    assert FMT.check("<think>a</think><answer>1</answer><answer>2</answer>").reason == "<answer> appears 2 times"
    assert "after the answer" in FMT.check("<think>a</think><answer>1</answer> hi").reason


# -- countdown -------------------------------------------------------------------------------------

CD = get_reward("countdown")


def _cd(answer: str, nums=(4, 8, 2, 1), target=15, **settings) -> float:
    reward = get_reward("countdown", **settings) if settings else CD
    return reward(completions=[f"<answer>{answer}</answer>"], nums=[list(nums)], target=[target])[0]


@pytest.mark.parametrize(
    "answer",
    [
        "().__class__.__bases__[0].__subclasses__()",
        "__import__('os').system('true')",
        "8*2-1 if True else 0",
        "[8*2-1][0]",
        "lambda: 15",
        "8 ** 2 - 49",
        "16 // 1 - 1",
        "15.0",
        "8*2-1; 0",
        "8*2-1 == 15",
    ],
)
def test_countdown_rejects_anything_but_arithmetic(answer):
    assert _cd(answer) == 0.0


def test_countdown_numbers_each_at_most_once_and_only_given_ones():
    assert _cd("8 * 2 - 1") == 1.0
    assert _cd("8 + 8 - 1", nums=(8, 1), target=15) == 0.0  # 8 twice
    assert _cd("16 - 1") == 0.0  # 16 is not given
    assert _cd("8 * 2 - 1", nums=(8, 8, 2, 1)) == 1.0  # duplicates in nums are separate numbers


def test_countdown_use_all_numbers():
    assert _cd("8 * 2 - 1", use_all_numbers=True) == 0.0
    assert _cd("8 + 4 + 2 + 1", use_all_numbers=True) == 1.0


def test_countdown_exact_arithmetic_and_tolerance():
    assert _cd("(8 - 2) / 4 * 10", nums=(8, 2, 4, 10), target=15) == 1.0
    assert _cd("1 / 3 * 3", nums=(1, 3, 3), target=1) == 1.0  # exact: no float error
    assert _cd("10 / 4", nums=(10, 4), target=2.5) == 1.0


def test_countdown_equation_with_the_target_on_the_right():
    assert _cd("8 * 2 - 1 = 15") == 1.0
    assert _cd("8 * 2 - 1 = 16") == 0.0
    assert _cd("8 * 2 = 16 = 15") == 0.0


def test_countdown_division_by_zero_and_absurd_sizes_are_fast_zeros():
    def all_zeros() -> None:
        assert _cd("(8 + 4) / (2 - 2)", nums=(8, 4, 2, 2)) == 0.0
        assert _cd("9" * 5000) == 0.0
        assert _cd("(" * 5000 + "8" + ")" * 5000) == 0.0
        assert _cd("*".join(["9"] * 400), nums=[9] * 400, target=1) == 0.0

    seconds, _ = cpu_time(all_zeros)
    assert seconds < 1.0  # CPU seconds


def test_countdown_answer_must_follow_the_reasoning():
    completion = "<answer>8 * 2 - 1</answer><think>done</think>"
    assert CD(completions=[completion], nums=[[4, 8, 2, 1]], target=[15]) == [0.0]
    two = "</think><answer>8 * 2 - 1</answer><answer>8 + 4 + 2 + 1</answer>"
    assert CD(completions=[two], nums=[[4, 8, 2, 1]], target=[15]) == [0.0]


def test_countdown_accepts_columns_as_strings_and_unicode_operators():
    assert CD(completions=["<answer>8 × 2 − 1</answer>"], nums=["[4, 8, 2, 1]"], target=["15"]) == [1.0]


def test_countdown_bad_rows_are_not_scored():
    assert CD(completions=["<answer>1</answer>"], nums=[[1]], target=[None]) == [None]
    assert CD(completions=["<answer>1</answer>"], nums=[None], target=[1]) == [None]


def test_evaluate_equation_never_evaluates_code():
    with pytest.raises(InvalidEquation):
        evaluate_equation("open('/etc/passwd').read()")
    assert evaluate_equation("-(4 - 8) * 2")[0] == 8
