"""The answer-statement reader on the shapes real models write: each class with right and wrong twins.

The examples are synthetic, written after the classes of misreadings found on
labelled real model output (``benchmarks/real_answers.py``).
"""

from __future__ import annotations

import pytest

from rewardsmith import get_reward

ACC = get_reward("math_accuracy", timeout=None)
GSM = get_reward("gsm8k_accuracy")


def _math(completion: str, answer: str, prompt: str | None = None) -> float:
    kwargs = {"prompts": [prompt]} if prompt is not None else {}
    return ACC(completions=[completion], answer=[answer], **kwargs)[0]


def _twins(cases: list[tuple[str, str, str]]) -> list[tuple[str, str, float]]:
    """Each case as its right twin (scores 1) and its wrong twin (the value replaced, scores 0)."""
    out = []
    for template, right, wrong in cases:
        out += [(template.format(v=right), right, 1.0), (template.format(v=wrong), right, 0.0)]
    return out


# -- closing sentences followed by a comment on them ----------------------------------------------------------------

COMMENTED = [
    (
        r"The inefficiency of the pair \((6,3)\), denoted \( I(6,3) \), is \( {v} \). This means the guess was exact.",
        "0",
        "1",
    ),
    (r"Thus, \( E(7, 3) = {v} \), as shown above. This method ensures that all switches end up on.", "3", "4"),
    (r"The least time needed is **{v}** minutes. This is true for \( n \geq 5 \), as the strategy shows.", "3", "4"),
    (
        r"The probability is approximately \({v}\). This estimation rests on the divisibility rule "
        r"for \(C\) and \(B\).",
        "1/3",
        "1/4",
    ),
    (
        r"Therefore, the function that meets the conditions is: \[f(x) = {v}.\] This function is injective, as "
        r"\(f(x)\) "
        r"has a non-zero derivative.",
        "1 - x",
        "1 + x",
    ),
    ("So the total is {v}. It follows from the two cases above.", "12", "13"),
    ("So the total is {v}. These steps cover every case.", "12", "13"),
]


@pytest.mark.parametrize(("completion", "answer", "expected"), _twins(COMMENTED))
def test_a_comment_after_the_closing_sentence_is_not_the_answer(completion, answer, expected):
    assert _math(completion, answer) == expected


@pytest.mark.parametrize(
    "completion",
    [
        "So the total is 12. This gives $9$.",  # the last sentence states its own value: 12 is not the answer
        "So the total is 12. It is 9.",
    ],
)
def test_a_pointing_back_sentence_that_states_a_value_is_no_comment(completion):
    assert _math(completion, "12") == 0.0


# -- a display formula ends its sentence ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        (r"Thus, using $\angle A$ and $\angle B$: \[ \cos A = -\cos B = -\frac{24}{25} \] Therefore, "
         r"$\cos A = -\frac{24}{25}$.", 1.0),
        (r"Thus, using $\angle A$ and $\angle B$: \[ \cos A = -\cos B = -\frac{24}{25} \] Therefore, "
         r"$\cos A = \frac{24}{25}$.", 0.0),
    ],
)  # fmt: skip
def test_a_display_formula_ends_its_sentence(completion, expected):
    assert _math(completion, r"-\frac{24}{25}") == expected


# -- statements: the value its verb states, without what qualifies it -----------------------------------------------

STATEMENTS = [
    (r"**Answer:** The smallest value of \(n\) such that \(n^2 > 90\) is \(n = {v}\).", "10", "9"),
    (r"**Answer:** The minimum is **{v}**, occurring where \(y\) is minimized and \(x = 2\).", "13", "14"),
    ("Final Answer: The largest $n$ is {v}.", "34", "35"),
    (r"Hence, the maximum is \({v}\) for all \(n \ge 1\).", "5", "6"),
    (r"So the greatest value is \({v}\), attained when \(x = 1\).", "7", "8"),
    (r"Therefore, the required value is \({v}\) given that \(a > 0\).", "4", "3"),
]


@pytest.mark.parametrize(("completion", "answer", "expected"), _twins(STATEMENTS))
def test_a_statement_states_the_value_after_its_verb_and_not_its_qualifiers(completion, answer, expected):
    assert _math(completion, answer) == expected


def test_a_solution_for_all_n_is_one_function():
    text = r"Hence, the solution is \(f(n) = n\) for all positive integers \(n\). This function satisfies the rule."
    assert _math(text, "f(z)=z") == 1.0
    assert _math(text.replace("f(n) = n", "f(n) = 2n"), "f(z)=z") == 0.0


# -- a list written across formulas ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        (r"Thus, the integer values of \(x\) that satisfy it are \(-1, 0,\) and \(1\).", 1.0),
        (r"Thus, the integer values of \(x\) that satisfy it are \(-1, 0,\) and \(2\).", 0.0),
        (r"Thus, the integer values of \(x\) are \(-1\), \(0\) and \(1\).", 1.0),
        (r"Thus, the integer values of \(x\) are \(-1\), \(0\) or \(2\).", 0.0),
    ],
)
def test_a_list_across_formulas_is_one_answer(completion, expected):
    assert _math(completion, "-1,0,1", prompt="Find all integers x with x^2 < 3.") == expected


# -- solution sets in another order, when the problem asks for the values -------------------------------------------


@pytest.mark.parametrize(
    "prompt",
    [
        "Determine the values of $x$ for which $f(x)=g(x)$.",
        "Determine the possible values of $x$.",
        "Determine all real numbers $x>0$ for which the equation holds.",
    ],
)
def test_the_values_of_a_variable_in_any_order(prompt):
    assert _math(r"Therefore the values are: \[ \boxed{-2 \text{ and } 5} \]", "5,-2", prompt) == 1.0
    assert _math(r"\boxed{\frac{1}{4}, 64}", r"64,\frac{1}{4}", prompt) == 1.0
    assert _math(r"\boxed{\frac{1}{4}, 63}", r"64,\frac{1}{4}", prompt) == 0.0


def test_quantities_named_in_order_keep_their_order():
    prompt = "Find $p$ and $q$."
    assert _math(r"\boxed{5, -2}", "5,-2", prompt) == 1.0
    assert _math(r"\boxed{-2, 5}", "5,-2", prompt) == 0.0


# -- a list of tuples, one box each ---------------------------------------------------------------------------------


def test_a_list_of_tuples_boxed_one_by_one():
    gold = "(1,7,103, 105), (3, 5, 101, 107)"
    prompt = "Determine all lists of four primes with these differences."
    good = r"The two possible lists are \(\boxed{(1, 7, 103, 105)}\) and \(\boxed{(3, 5, 101, 107)}\)."
    assert _math(good, gold, prompt) == 1.0
    assert _math(good.replace("101", "111"), gold, prompt) == 0.0
    assert _math(r"\(\boxed{(1, 7, 103, 105)}\)", gold, prompt) == 0.0  # one of the two is not the answer


# -- a function's argument is a dummy -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        ("f(y) = 1", "f(x)=1", 1.0),
        ("f(y) = 2", "f(x)=1", 0.0),
        ("f(t) = t^2 + 1", "f(x)=x^2+1", 1.0),
        ("f(t) = x^2 + 1", "f(x)=x^2+1", 0.0),  # a constant in t, not the same function
        ("g(x) = x", "f(x)=x", 0.0),
    ],
)
def test_a_function_in_another_variable_is_the_same_function(predicted, gold, expected):
    assert _math(rf"\boxed{{{predicted}}}", gold) == expected


# -- values offered as alternatives are a hedge, never a list -------------------------------------------------------


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        (r"The two values are $\boxed{3}$ and $\boxed{5}$.", 1.0),
        (r"It is either $\boxed{3}$ or $\boxed{5}$.", 0.0),
        (r"It is $\boxed{3}$, or possibly $\boxed{5}$.", 0.0),
        (r"\boxed{3 \text{ and } 5}", 1.0),
        (r"\boxed{3 \text{ or } 5}", 0.0),
        (r"\boxed{3 \lor 5}", 0.0),
        ("The answer is 3 and 5.", 1.0),
        ("The answer is 3 or 5.", 0.0),
        ("So the two values are $3$ and $5$.", 1.0),
        ("So the value is $3$ or perhaps $5$.", 0.0),
    ],
)
def test_values_offered_as_alternatives_are_a_hedge(completion, expected):
    assert _math(completion, "(3, 5)") == expected
    assert _math(completion, "3, 5", prompt="Find p and q.") == expected


# -- one reading in both rewards ------------------------------------------------------------------------------------

HEDGES = [
    "So it is 18, possibly 20.",
    "So it is 18 (or 20).",
    "So it is 18 to 20.",
    "It is 18 or perhaps 20",
    "The answer is 18, possibly 20.",
    "The answer is 18 (or 20).",
    r"\boxed{18 \text{ or } 20}",
]


@pytest.mark.parametrize("completion", HEDGES)
@pytest.mark.parametrize("gold", ["18", "20"])
def test_a_hedge_pays_nothing_in_either_reward(completion, gold):
    assert _math(completion, gold) == 0.0
    assert GSM(completions=[completion], answer=[gold]) == [0.0]


@pytest.mark.parametrize("completion", ["So it is 18.", "The answer is 18.", r"\boxed{18}", "#### 18"])
def test_the_unhedged_twin_pays_in_both(completion):
    assert _math(completion, "18") == 1.0
    assert GSM(completions=[completion], answer=["18"]) == [1.0]
    assert GSM(completions=[completion], answer=["20"]) == [0.0]


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("### Total Area\n#### Area 1\n9 + 12 + 9 = 30\n\nThus the area is \\(\\boxed{30}\\).", 1.0),
        ("### Total Area\n#### Area 1\n9 + 12 + 9 = 31\n\nThus the area is \\(\\boxed{31}\\).", 0.0),
        ("#### Step 2: add them\nThe total is 30.", 1.0),
        ("#### 30", 1.0),
        ("#### 31", 0.0),
    ],
)
def test_a_markdown_heading_of_four_hashes_is_no_answer(completion, expected):
    assert GSM(completions=[completion], answer=["30"]) == [expected]
    assert _math(completion, "30") == expected


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        (r"**Final Answer**: The probability that all 3 are aces, given 39 cards and no clubs, is \(1\).", 1.0),
        (r"**Final Answer**: The probability that all 3 are aces, given 39 cards and no clubs, is \(0\).", 0.0),
        ("Answer: The total is 12, since each of the 4 boxes holds 3.", 1.0),
        ("Answer: The total is 13, since each of the 4 boxes holds 3.", 0.0),
    ],
)
def test_an_answer_statement_in_prose_states_the_value_after_its_verb(completion, expected):
    gold = "1" if "probability" in completion else "12"
    assert GSM(completions=[completion], answer=[gold]) == [expected]
    assert _math(completion, gold) == expected


def test_a_list_of_numbers_is_not_one_number():
    assert _math(r"\boxed{32, 349}", "32349") == 0.0
    assert _math(r"\boxed{32,349}", "32349") == 1.0
    assert _math(r"\boxed{1,7,103}", "17103") == 0.0


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        (r"\boxed{f(x) = x \text{ or } f(x) = -x + 2}", 1.0),
        (r"\boxed{f(x) = x \text{ or } f(x) = -x + 3}", 0.0),
        (r"So, \( x = 5 \) or \( x = -2 \).", 1.0),
        (r"So, \( x = 5 \) or \( x = -3 \).", 0.0),
    ],
)
def test_or_lists_the_solutions_when_the_problem_asks_for_all(completion, expected):
    gold = "f(x)=x,f(x)=2-x" if "f(x)" in completion else "5,-2"
    assert _math(completion, gold, prompt="Find all functions f, or all real x, that satisfy it.") == expected
    assert _math(completion, gold, prompt="Find f(1) and f(2).") == 0.0  # not asked for all: "or" hedges


@pytest.mark.parametrize("label", ["Conclusion: Thus,", "In conclusion,", "**Summary**:", "In summary,"])
def test_a_labelled_conclusion_is_a_closing_statement(label):
    assert _math(rf"{label} \( E(7, 3) = 3 \), as shown. This method works.", "3") == 1.0
    assert _math(rf"{label} \( E(7, 3) = 4 \), as shown. This method works.", "3") == 0.0
