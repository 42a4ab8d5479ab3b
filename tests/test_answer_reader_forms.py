"""The answer reader on the forms Math-Verify's own test cases write: right and wrong twins for each class.

Each class was found misread by ``benchmarks/math_verify_suite.py``; the cases
here are synthetic, several per class, each with a twin that must score 0.
"""

from __future__ import annotations

import pytest

from rewardsmith import get_reward

ACC = get_reward("math_accuracy", timeout=None)
GSM = get_reward("gsm8k_accuracy")


def _math(completion: str, answer: str, prompt: str | None = None) -> float | None:
    return ACC(completions=[completion], answer=[answer], prompts=[prompt])[0]


@pytest.mark.parametrize(
    ("completion", "gold", "expected"),
    [
        ("<answer>Let x be 7. This must be incorrect. However, it is $8$. Final answer: $8$</answer>", "8", 1.0),
        ("<answer>Let x be 7. This must be incorrect. However, it is $8$. Final answer: $9$</answer>", "8", 0.0),
        ("<answer>the error in it is small, so it is $\\boxed{12}$</answer>", "12", 1.0),
        ("<answer>the error in it is small, so it is $\\boxed{13}$</answer>", "12", 0.0),
    ],
)
def test_a_revision_inside_an_answer_block_keeps_the_block(completion, gold, expected):
    assert _math(completion, gold) == expected


@pytest.mark.parametrize(
    ("completion", "expected"),
    [("<answer>Wait, it was wrong: 8.</answer>", 1.0), ("<answer>Wait, it was wrong: 9.</answer>", 0.0)],
)
def test_gsm8k_reads_a_revised_answer_block_too(completion, expected):
    assert GSM(completions=[completion], answer=["8"])[0] == expected


@pytest.mark.parametrize(
    ("completion", "gold", "expected"),
    [
        ("Then $y = 8.8 - 2.8 = 6$ So, the ordered pair is $(7, 6)$.", "(7,6)", 1.0),
        ("Then $y = 8.8 - 2.8 = 6$ So, the ordered pair is $(7, 5)$.", "(7,6)", 0.0),
        ("we get: $$x = 2.$$ Therefore, the value grows by 100.", "100", 1.0),
        ("we get: $$x = 2.$$ Therefore, the value grows by 90.", "100", 0.0),
    ],
)
def test_a_formula_followed_by_a_capital_ends_its_sentence(completion, gold, expected):
    assert _math(completion, gold) == expected


@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        ("1000,99", "1000.99", 1.0),
        ("1000,98", "1000.99", 0.0),
        ("1.22", "1,22", 1.0),
        ("1.23", "1,22", 0.0),
        ("0.111", "0,111", 1.0),
        ("0.112", "0,111", 0.0),
        ("1,000", "1000", 1.0),  # a thousands separator stays one
        ("1,000", "1", 0.0),
    ],
)
def test_a_decimal_comma_is_the_decimal_point(predicted, gold, expected):
    assert _math(f"<answer>{predicted}</answer>", gold) == expected


@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        (r"x=1/3\approx0.33", "1/3", 1.0),
        (r"x=1/4\approx0.33", "1/3", 0.0),
        (r"2\sqrt{2} \approx 2.83", r"2\sqrt{2}", 1.0),
        (r"2\sqrt{3} \approx 2.83", r"2\sqrt{2}", 0.0),
        (r"\frac{\pi}{2} \approx 1.57", "1.57", 0.0),  # the exact value is the answer, not its rounding
        (r"18 \approx 20", "20", 0.0),  # between two numbers it still offers both
    ],
)
def test_an_exact_value_is_the_answer_not_its_rounding(predicted, gold, expected):
    assert _math(f"<answer>${predicted}$</answer>", gold) == expected


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        (r"Special matrix: $\begin{pmatrix}1 & 2 \\ 3 & 4\end{pmatrix}$", 1.0),
        (r"Special matrix: $\begin{pmatrix}1 & 2 \\ 3 & 5\end{pmatrix}$", 0.0),
        (r"The matrix, simplified: $\left[\begin{array}{cc}1 & 2 \\ 3 & 4\end{array}\right]$", 1.0),
        (r"Find the matrix: $\begin{pmatrix}1 & 2 \\ 3 & 4\end{pmatrix}$", 0.0),  # an instruction, not a label
    ],
)
def test_a_short_label_before_an_answer_blocks_formula(block, expected):
    assert _math(f"<answer>{block}</answer>", r"\begin{pmatrix}1 & 2 \\ 3 & 4\end{pmatrix}") == expected


@pytest.mark.parametrize(
    ("completion", "gold", "expected"),
    [
        (r"\boxed{a_{37} = 19, \quad a_3 = 2}", "a_3 = 2, a_{37} = 19", 1.0),
        (r"\boxed{a_{37} = 2, \quad a_3 = 19}", "a_3 = 2, a_{37} = 19", 0.0),
        (r"\boxed{q = 5, p = 3}", "p = 3, q = 5", 1.0),
        (r"\boxed{q = 3, p = 5}", "p = 3, q = 5", 0.0),
        (r"\boxed{4, 5}", "AB=4, CD=5", 1.0),
        (r"\boxed{5, 4}", "AB=4, CD=5", 0.0),
        (r"\boxed{\frac{1}{\sqrt{6}}}", r"\frac{NO}{BO}=\frac{1}{\sqrt{6}}", 1.0),
        (r"\boxed{\frac{1}{\sqrt{5}}}", r"\frac{NO}{BO}=\frac{1}{\sqrt{6}}", 0.0),
    ],
)
def test_named_parts_and_segment_names(completion, gold, expected):
    assert _math(completion, gold) == expected


def test_a_reference_in_words_still_gives_none():
    assert _math(r"\boxed{4}", "AB is four") is None


@pytest.mark.parametrize(
    ("completion", "gold", "expected"),
    [
        (r"\boxed{1, 2}", r"\boxed{1} papers and \boxed{2} bins", 1.0),
        (r"\boxed{2}", r"\boxed{1} papers and \boxed{2} bins", 0.0),  # the last box alone is not the answer
        (r"\boxed{-2, 1}", r"so the solutions are $n = \boxed{1,-2}.$", 1.0),
        (r"\boxed{-2, 3}", r"so the solutions are $n = \boxed{1,-2}.$", 0.0),
        (r"\boxed{-2, 1}", r"so $(a, b) = \boxed{1,-2}.$", 0.0),  # a pair keeps its order
    ],
)
def test_references_listing_boxes_or_solutions(completion, gold, expected):
    assert _math(completion, gold) == expected


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("Final Answer: Jane started growing the sphere 3 hours ago. I hope it is correct.", 1.0),
        ("Final Answer: Jane started growing the sphere 4 hours ago. I hope it is correct.", 0.0),
        ("Final Answer: Jane walked 2 miles in 3 hours.", 0.0),  # two numbers in prose state no answer
    ],
)
def test_an_answer_statement_in_prose_states_its_one_number(completion, expected):
    assert _math(completion, "3") == expected


@pytest.mark.parametrize(
    ("completion", "gold", "expected"),
    [
        (r"\\boxed{\\left( 3, \\frac{\\pi}{2} \\right)}", r"(3, \frac{\pi}{2})", 1.0),
        (r"\\boxed{\\left( 3, \\frac{\\pi}{3} \\right)}", r"(3, \frac{\pi}{2})", 0.0),
        (r"\boxed{\begin{pmatrix} 1 \\ 2 \end{pmatrix}}", r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}", 1.0),
    ],
)
def test_an_escaped_answer_is_read_as_latex(completion, gold, expected):
    assert _math(completion, gold) == expected


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        (r"it lies between $\boxed{12 $ and $13}$.", 1.0),
        (r"it lies between $\boxed{12 $ and $14}$.", 0.0),
    ],
)
def test_a_box_that_closes_its_formula_inside(completion, expected):
    assert _math(completion, r"12\text{ and }13") == expected


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        (r"first $= \boxed{200}$, then $= \boxed{255}$, so $10,455$. Final Answer: The final answer is $10,455$.", 1.0),
        (r"first $= \boxed{200}$, then $= \boxed{255}$, so $10,455$. Final Answer: The final answer is $10,454$.", 0.0),
        (r"first $= \boxed{200}$, then $= \boxed{10455}$. The answer is $10,455$.", 0.0),  # not a final statement
    ],
)
def test_a_final_answer_statement_after_working_boxes(completion, expected):
    assert _math(completion, "10455") == expected


_FRAGMENTS = (
    "answer", "Answer", "ANSWER", "final ", "Final ", "the ", "The ", " is ", ": ", "**", "__", "#", "## ", "####",
    " ", "\n", "\t", "$5$", r"\boxed{3}", r"\(7\)", "12", "-3.5", "not ", "is not ", "isn't ", "instead of ",
    "rather than ", " incorrect", " wrong", " would be ", "equals ", "=", "A:", "A :", "x", "Total", ".",
)  # fmt: skip


@pytest.mark.parametrize("seed", range(40))
def test_patterns_tried_near_their_words_find_what_a_full_scan_finds(seed):
    import random
    import re

    from rewardsmith.rewards import _answers, _rejections, gsm8k
    from rewardsmith.rewards._text import matches_near

    rng = random.Random(seed)
    text = "".join(rng.choice(_FRAGMENTS) for _ in range(rng.randrange(5, 400 if seed % 2 else 4000)))
    if seed % 4 == 0:
        text = text.replace("x", "\u00e9")  # not ASCII: words are found by a case-insensitive search
    near = (_answers._REACH, _answers._LONGEST)
    scans = [(_answers.ANSWER_PHRASE, _answers.PHRASE_WORDS, *near), (gsm8k._PHRASES, gsm8k._PHRASE_WORDS, *near)]
    scans += list(_rejections._SCANS)
    for pattern, words, reach, span in scans:
        assert isinstance(pattern, re.Pattern)
        expected = [(m.start(), m.end()) for m in pattern.finditer(text)]
        assert [(m.start(), m.end()) for m in matches_near(text, pattern, words, reach, span)] == expected


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        (r"\boxed{\{10, 11, 12\}, \{-2, -1, 0\}}", 1.0),
        (r"\boxed{(10, 11, 12), (-2, -1, 0)}", 1.0),
        (r"\boxed{\{10, 11, 12\}, \{-2, -1, 1\}}", 0.0),
        (r"\boxed{\{10, 11\}, \{-2, -1, 0\}}", 0.0),  # five values are not the reference's six
        (r"\boxed{\{-2, -1, 0\}, \{10, 11, 12\}}", 0.0),  # a flat list keeps its order
    ],
)
def test_groups_against_a_reference_listing_their_values_flat(completion, expected):
    assert _math(completion, "10,11,12,-2,-1,0", "Determine these two sequences.") == expected
