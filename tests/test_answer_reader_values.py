"""The answer-statement reader, continued: rejected values, units, working, separators, letters, references.

Synthetic right and wrong twins per class (see ``test_answer_reader``), after
the classes of misreadings found on labelled real model output.
"""

from __future__ import annotations

import pytest

from rewardsmith import get_reward

ACC = get_reward("math_accuracy", timeout=None)
GSM = get_reward("gsm8k_accuracy")


def _math(completion: str, answer: str) -> float | None:
    return ACC(completions=[completion], answer=[answer])[0]


def _twins(cases: list[tuple[str, str, str]]) -> list[tuple[str, str, float]]:
    """Each case as its right twin (scores 1) and its wrong twin (the value replaced, scores 0)."""
    return [
        pair for t, right, wrong in cases for pair in ((t.format(v=right), right, 1.0), (t.format(v=wrong), right, 0.0))
    ]


CHECKED = r"The answer is \boxed{20}. Let me double-check: \boxed{18} would give 40, so \boxed{18} is incorrect."

# -- revisions and negations: a rejected value is never the answer --------------------------------------------------

REJECTIONS = [
    (r"The answer is \boxed{{{v}}}. Let me double-check: \boxed{{18}} would give 40, so \boxed{{18}} is incorrect.",
     "20", "19"),
    ("**Final answer:** 7\n\nActually it's **{v}**.", "8", "9"),
    ("So she has {v} apples, not 18.", "20", "21"),
    (r"\boxed{{{v} \text{{ (not }} 8)}}", "7", "6"),
    (r"So \(x = {v}\), not \(x = 4\).", "3", "5"),
    (r"We get \(\boxed{{{v}}}\), instead of \(\boxed{{4}}\).", "3", "5"),
    (r"Checking \(x = 2\): it is not a solution. So \(x = 2\) is extraneous, and \(\boxed{{{v}}}\).", "3", "5"),
]  # fmt: skip


@pytest.mark.parametrize(("completion", "answer", "expected"), _twins(REJECTIONS))
def test_a_rejected_value_is_never_the_answer(completion, answer, expected):
    assert _math(completion, answer) == expected


@pytest.mark.parametrize(
    ("completion", "rejected"),
    [
        (r"The answer is \boxed{20}. Let me double-check: \boxed{18} would give 40, so \boxed{18} is incorrect.", "18"),
        ("**Final answer:** 7\n\nActually it's **8**.", "7"),
        ("So she has 20 apples, not 18.", "18"),
        (r"\boxed{7 \text{ (not } 8)}", "8"),
        (r"\boxed{18} is incorrect.", "18"),
    ],
)
def test_the_rejected_value_pays_nothing(completion, rejected):
    assert _math(completion, rejected) == 0.0


@pytest.mark.parametrize(
    ("completion", "gold", "expected"),
    [
        ("So she has 20 apples, not 18.", "20", 1.0),
        ("So she has 20 apples, not 18.", "18", 0.0),
        ("#### 20 (not 18)", "20", 1.0),
        ("#### 20 (not 18)", "18", 0.0),
        (
            r"The answer is \boxed{20}. Let me double-check: \boxed{18} would give 40, so \boxed{18} is incorrect.",
            "20",
            1.0,
        ),
        (
            r"The answer is \boxed{20}. Let me double-check: \boxed{18} would give 40, so \boxed{18} is incorrect.",
            "18",
            0.0,
        ),
    ],
)
def test_gsm8k_never_pays_a_rejected_value(completion, gold, expected):
    assert GSM(completions=[completion], answer=[gold]) == [expected]


# -- units and multipliers ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        (r"12 \text{ mm}", r"12\text{ cm}", 0.0),
        (r"12 \text{ cm}", r"12\text{ cm}", 1.0),
        ("12 centimeters", r"12\text{ cm}", 1.0),
        ("12", r"12\text{ cm}", 1.0),
        (r"45 \text{ radians}", r"45^\circ", 0.0),
        ("45", r"45^\circ", 1.0),
        (r"45^{\circ}", r"45^\circ", 1.0),
        ("46", r"45^\circ", 0.0),
        ("20k", "20000", 1.0),
        ("20k", "20", 0.0),
        (r"\$1.5M", "1500000", 1.0),
        (r"\$1.5M", "1.5", 0.0),
        (r"3 \text{ million}", "3000000", 1.0),
        (r"3 \text{ thousand}", "3000", 1.0),
        (r"3 \text{ thousand}", "3", 0.0),
        (r"5 \text{ dozen}", "60", 1.0),
        (r"5 \text{ dozen}", "5", 0.0),
        ("4", "4t", 1.0),  # a letter after a number is not always a unit
        ("5", "4t", 0.0),
    ],
)
def test_a_different_unit_is_a_different_answer_and_a_multiplier_multiplies(predicted, gold, expected):
    assert _math(rf"\boxed{{{predicted}}}", gold) == expected


# -- working after the answer ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("The answer is 20 (18 + 2).", 1.0),
        ("The answer is 21 (18 + 3).", 0.0),
        ("#### 20 (18+2)", 1.0),
        ("#### 21 (18+3)", 0.0),
        (r"\boxed{20 = 18 + 2}", 1.0),
        (r"\boxed{21 = 18 + 3}", 0.0),
    ],
)
def test_working_after_the_answer_is_not_part_of_it(completion, expected):
    assert _math(completion, "20") == expected
    assert GSM(completions=[completion], answer=["20"]) == [expected]


def test_a_product_with_a_bracket_is_no_working():
    assert _math(r"\boxed{2(x+1)}", "2x+2") == 1.0
    assert _math(r"\boxed{2(x+1)}", "2") == 0.0


# -- separators inside one box offer alternatives -------------------------------------------------------------------


@pytest.mark.parametrize("separator", [r"\lor", r"\vee", r"\cr", r"\enspace", "~", r"\to", r"\Rightarrow", r"\approx"])
@pytest.mark.parametrize("gold", ["18", "20"])
def test_a_separator_inside_one_box_hedges(separator, gold):
    assert _math(rf"\boxed{{18 {separator} 20}}", gold) == 0.0


def test_one_value_in_the_box_is_no_hedge():
    assert _math(r"\boxed{18}", "18") == 1.0
    assert _math(r"\boxed{12~\text{cm}}", "12") == 1.0  # a tie before a unit is a space


# -- choice letters are a set; inequalities either way round --------------------------------------------------------


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        (r"\boxed{D, A}", 1.0),
        (r"\boxed{D}\boxed{A}", 1.0),
        (r"\boxed{AD}", 1.0),
        (r"\boxed{A, D}", 1.0),
        (r"\boxed{A}", 0.0),
        (r"\boxed{D, B}", 0.0),
        (r"\boxed{ABD}", 0.0),
    ],
)
def test_choice_letters_are_a_set(completion, expected):
    assert _math(completion, "A, D") == expected


def test_letters_together_are_a_segment_unless_the_reference_names_several_choices():
    assert _math(r"\boxed{AD}", "AD") == 1.0
    assert _math(r"\boxed{AD}", "D") == 0.0


@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        ("3 < x", r"(3, \infty)", 1.0),
        ("x > 3", r"(3, \infty)", 1.0),
        ("3 > x", r"(3, \infty)", 0.0),
        ("-5 > k", r"(-\infty, -5)", 1.0),
        (r"-5 \ge k", r"(-\infty, -5]", 1.0),
        (r"-5 \ge k", r"(-\infty, -5)", 0.0),
    ],
)
def test_an_inequality_either_way_round(predicted, gold, expected):
    assert _math(rf"\boxed{{{predicted}}}", gold) == expected


# -- statements with the formula displayed after them; tags with spaces ----------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        "The answer is:\n\\[\n{v}\n\\]",
        "### Final Answer\n\\[\n{v}\n\\]",
        "**Final Answer**\n$$\n{v}\n$$",
        "<answer >{v}</answer>",
        "< answer>{v}</ answer>",
    ],
)
def test_a_displayed_or_spaced_answer_is_read(template):
    assert _math(template.format(v=r"\frac{1}{2}"), r"\frac{1}{2}") == 1.0
    assert _math(template.format(v=r"\frac{1}{3}"), r"\frac{1}{2}") == 0.0


# -- references ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        (r"\boxed{4}", r"\boxed{1} and \boxed{4}", 0.0),  # the last box alone is not the answer
        (r"\boxed{1, 4}", r"\boxed{1} and \boxed{4}", 1.0),
        (r"\boxed{1, 4}", r"$\boxed{1}$, $\boxed{4}$", 1.0),
        (r"\boxed{1, 5}", r"\boxed{1} and \boxed{4}", 0.0),
        (r"\boxed{32349}", r"\boxed{32, 349}", 0.0),
        (r"\boxed{1/2 \text{ or } 1}", r"1/2 \text{ or } 1", None),  # a reference offering alternatives: no verdict
        (r"\boxed{1}", r"1/2 \text{ or } 1", None),
        (r"\boxed{4}", "AB=4, CD=5", 0.0),  # a list of named parts is read whole: one part is not the answer
        (r"\boxed{4, 5}", "AB=4, CD=5", 1.0),
    ],
)
def test_a_reference_is_read_whole_or_not_at_all(completion, reference, expected):
    assert _math(completion, reference) == expected


def test_a_worked_solution_keeps_its_last_box():
    solution = r"First $\boxed{15\frac{39}{40}}$ of them; in all, that is $\boxed{\frac{639}{40}}$."
    assert _math(r"\boxed{\frac{639}{40}}", solution) == 1.0
