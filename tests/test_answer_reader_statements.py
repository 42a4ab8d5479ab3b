"""The answer-statement reader, continued: statements without a colon, values named before their verb, references.

Synthetic right and wrong twins for the classes Math-Verify's own test cases
showed misread (``benchmarks/math_verify_suite.py``).
"""

from __future__ import annotations

import pytest

from rewardsmith import get_reward

ACC = get_reward("math_accuracy", timeout=None)


def _math(completion: str, answer: str) -> float | None:
    return ACC(completions=[completion], answer=[answer])[0]


@pytest.mark.parametrize(
    "template",
    ["Answer $ {v} $", "Answer \\[ {v} \\]", "Answer $$ {v} $$", "Answer \\( {v} \\)", "Answer $$ \n {v} \n $$"],
)
def test_answer_followed_by_a_formula_is_a_statement(template):
    assert _math(template.format(v="9"), "9") == 1.0
    assert _math(template.format(v="8"), "9") == 0.0


@pytest.mark.parametrize(
    ("completion", "gold", "expected"),
    [
        (r"Therefore $x \geq 5$ is the solution.", r"x \ge 5", 1.0),
        (r"Therefore $x \geq 6$ is the solution.", r"x \ge 5", 0.0),
        (r"Thus $x \le 2$ is our answer.", r"(-\infty, 2]", 1.0),
        (r"Thus $x \le 3$ is our answer.", r"(-\infty, 2]", 0.0),
        (r"So $18$ is the final answer.", "18", 1.0),
        (r"We find that $x < 3$.", "x < 3", 1.0),
        (r"We find that $x < 4$.", "x < 3", 0.0),
        (r"We get $y = 7$.", "7", 1.0),
    ],
)
def test_a_value_named_before_its_verb_or_after_we_find(completion, gold, expected):
    assert _math(completion, gold) == expected


@pytest.mark.parametrize(
    ("completion", "gold", "expected"),
    [
        (r"\boxed{6, 8}", r"\(\boxed{6 \text{ and } 8}\)", 1.0),
        (r"\boxed{6, 9}", r"\(\boxed{6 \text{ and } 8}\)", 0.0),
        (r"\boxed{1,2,3}", "$1$ and $2$ and $3$", 1.0),
        (r"\boxed{1,2}", "$1$ and $2$ and $3$", 0.0),
        (r"\boxed{1,2}", r"$\boxed{1}\boxed{2}$", 1.0),
        (r"\boxed{1} and \boxed{2} and \boxed{3}", "$${1,2,3}$$", 1.0),
        (r"\boxed{1},\boxed{2},\boxed{3}", "$${1,2,3}$$", 1.0),
        (r"\boxed{1},\boxed{2},\boxed{4}", "$${1,2,3}$$", 0.0),
        (r"\boxed{(7,11), (11,7)}", "$(11,7)or(7,11)$", None),  # a reference offering alternatives: no verdict
    ],
)
def test_a_reference_listing_its_parts_in_words_or_boxes(completion, gold, expected):
    assert _math(completion, gold) == expected


@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        (r"x \approx 11", "11", 1.0),  # a variable approximately a value states the value
        (r"18 \approx 20", "18", 0.0),  # two numbers: one of them is offered as an alternative
        (r"18 \approx 20", "20", 0.0),
    ],
)
def test_approximately_between_numbers_hedges(predicted, gold, expected):
    assert _math(rf"\boxed{{{predicted}}}", gold) == expected


GSM = get_reward("gsm8k_accuracy")


@pytest.mark.parametrize("token", ["<|im_start|>", "<|im_end|>", "<|eot_id|>", "<|endoftext|>"])
def test_the_text_after_an_end_of_turn_token_is_not_the_completion(token):
    text = f"Therefore, there are 12 distinct sequences. I hope it is correct. {token}user\nHow many are 13?"
    assert _math(text, "12") == 1.0
    assert _math(text, "13") == 0.0
    assert GSM(completions=[text], answer=["12"]) == [1.0]
    assert GSM(completions=[text], answer=["13"]) == [0.0]


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        (r"So $a=\boxed{3}$ and $b=\boxed{5}$, so the pair is $\boxed{(3,5)}$.", 1.0),
        (r"So $a=\boxed{3}$ and $b=\boxed{6}$, so the pair is $\boxed{(3,6)}$.", 0.0),
        (r"So $a=\boxed{3}$ and $b=\boxed{6}$, so the pair is $\boxed{(3,5)}$.", 0.0),  # the parts disagree: a hedge
        (r"The pair is $\boxed{(3,5)}$: $a = \boxed{3}$, $b = \boxed{5}$.", 1.0),
    ],
)
def test_parts_boxed_and_then_the_tuple_boxed_are_one_answer(completion, expected):
    assert _math(completion, "(3,5)") == expected


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("\\boxed{\\begin{pmatrix} 1 & 2 \\\\\n 3 & 4 \\end{pmatrix}}", 1.0),
        ("\\boxed{\\begin{pmatrix}\n1 & 2 \\\\\n3 & 4\n\\end{pmatrix}}", 1.0),
        ("\\boxed{\\begin{pmatrix} 1 & 2 \\\\\n 3 & 5 \\end{pmatrix}}", 0.0),
    ],
)
def test_a_matrix_with_line_breaks_is_the_same_matrix(completion, expected):
    assert _math(completion, r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}") == expected


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        (r"\boxed{(1, 2), (2, 1), (-1, -20), (-20, -1)}", 1.0),
        (r"The solutions are \boxed{(1, 2)}, \boxed{(2, 1)}, \boxed{(-1, -20)} and \boxed{(-20, -1)}.", 1.0),
        (r"\boxed{(1, 2), (2, 1), (-1, -20), (-20, 1)}", 0.0),
        (r"\boxed{(1, 2), (2, 1), (-1, -20)}", 0.0),
    ],
)
def test_a_list_of_tuples_is_a_set_of_solutions(completion, expected):
    assert _math(completion, "(2,1),(1,2),(-1,-20),(-20,-1)") == expected


def test_answer_before_a_formula_inside_a_sentence_is_no_statement():
    text = "Note that the answer $x$ must be positive.\nSo, $x = 5$."
    assert _math(text, "5") == 1.0


SUMMARY = "Summary of Solutions:\n- \\( d(6) = {a} \\)\n- \\( d(16) = {b} \\)\n- \\( d(72) = \\frac{{1}}{{9}} \\)"


@pytest.mark.parametrize(
    ("completion", "gold", "expected"),
    [
        (SUMMARY.format(a="\\frac{1}{3}", b="1"), r"\frac{1}{3},1,\frac{1}{9}", 1.0),
        (SUMMARY.format(a="\\frac{1}{3}", b="2"), r"\frac{1}{3},1,\frac{1}{9}", 0.0),
        (SUMMARY.format(a="1", b="\\frac{1}{3}"), r"\frac{1}{3},1,\frac{1}{9}", 0.0),  # in order
        (SUMMARY.format(a="\\frac{1}{3}", b="1"), r"\frac{1}{9}", 0.0),  # a list against one value is a hedge
        ("Options:\n- 3 apples\n- 5 apples", "5", 0.0),
    ],
)
def test_a_closing_list_of_formulas_is_a_multi_part_answer(completion, gold, expected):
    assert _math(completion, gold) == expected
