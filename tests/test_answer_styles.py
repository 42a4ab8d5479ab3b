"""How real models state final answers: each style read right, its wrong twin rejected, hedges in every container 0."""

from __future__ import annotations

import pytest

from rewardsmith import get_reward

ACC = get_reward("math_accuracy", timeout=None)
GSM = get_reward("gsm8k_accuracy")

WORK = "We add the two parts: 12 + 6 gives the total we need.\n\n"


def _math(completion: str, answer: str, prompt: str | None = None) -> float:
    kwargs = {"prompts": [prompt]} if prompt is not None else {}
    return ACC(completions=[completion], answer=[answer], **kwargs)[0]


# -- 1. answer statements -------------------------------------------------------------------------------------

STATEMENTS = [
    "Final Answer: The final answer is ${}$. I hope it is correct.",
    "Final Answer: The final answer is {}. I hope it is correct.",
    "# Answer\n\n{}",
    "## Final Answer\n{}",
    "The answer is: {}",
    "The answer is: ${}$",
    "**Final answer:** {}",
    "**Final Answer**: ${}$",
    "**Final Answer**\n\n${}$",
    "so the answer is **{}**.",
    "so the answer is **${}$**.",
    "Answer: ${}$ (rounded as asked).",
    "\\[ \\boxed{{{}}} \\]",
    "\\[\n\\boxed{{{}}}\n\\]",
    "$$\\boxed{{{}}}$$",
    "The final answer is $\\boxed{{{}}}$.",
    "Thus the answer is \\( {} \\).",
]


@pytest.mark.parametrize("style", STATEMENTS)
def test_answer_statements_are_read_and_their_wrong_twins_rejected(style):
    assert _math(WORK + style.format("18"), "18") == 1.0
    assert _math(WORK + style.format("17"), "18") == 0.0
    assert GSM(completions=[WORK + style.format("18")], answer=["18"]) == [1.0]
    assert GSM(completions=[WORK + style.format("17")], answer=["18"]) == [0.0]


@pytest.mark.parametrize(
    ("completion", "gold"),
    [
        (r"so the answer is \( \frac{13}{2} \)**.", r"\frac{13}{2}"),
        (r"The final answer is **$\dfrac{3}{4}$**", r"\frac34"),
        ("Final Answer: The final answer is $x^2+1$. I hope it is correct.", "x^2 + 1"),
        ("# Answer\n\n\\frac{\\sqrt{3}}{2}", r"\frac{\sqrt3}{2}"),
    ],
)
def test_latex_answers_in_statements(completion, gold):
    assert _math(WORK + completion, gold) == 1.0
    assert _math(WORK + completion, "7") == 0.0


# -- closing sentences ----------------------------------------------------------------------------------------

CLOSING_RIGHT = [
    "Adding everything, the value of $f(9)$ is \\(33\\).",
    "So the value of f(9) is 33.",
    "Therefore, $f(9) = 33$.",
    "Putting it together, the number we want equals $33$.",
    "Hence the result is 33!",
    "Thus Alice ran 33 meters.",
    "So the total comes to $33$.",
]


@pytest.mark.parametrize("closing", CLOSING_RIGHT)
def test_a_closing_sentence_states_the_answer(closing):
    assert _math(WORK + closing, "33") == 1.0
    assert _math(WORK + closing.replace("33", "34"), "33") == 0.0


@pytest.mark.parametrize(
    ("completion", "why"),
    [
        ("We first try 33 and see what happens. Then we try more values", "a bare number mid-text"),
        ("Is the value 33?", "a question states nothing"),
        ("The candidates are 33 and 34.", "two values in the closing sentence"),
        ("So the value is $33$ or $34$.", "a hedge in the closing sentence"),
        ("Options:\n33\n34", "a list of lines"),
        ("We compute 33 in the next step, then divide", "no statement at all"),
    ],
)
def test_a_closing_sentence_is_read_conservatively(completion, why):
    assert _math(completion, "33") == 0.0, why


# -- 2. hedges in every container ---------------------------------------------------------------------------

HEDGES = [
    r"<answer>$\boxed{17}$ or $\boxed{18}$</answer>",
    r"<answer>\boxed{17}, \boxed{18}</answer>",
    r"<answer>$17$ or $18$</answer>",
    "<answer>17 or 18</answer>",
    "<answer>17</answer>\n<answer>18</answer>",
    r"\boxed{17} \boxed{18}",
    "The answer is $17$ or $18$.",
    "Answer: 17\nAnswer: 18",
    "Final Answer: The final answer is $17$ or $18$. I hope it is correct.",
    "# Answer\n\n17 or 18",
    "So the value is $17$ or $18$.",
    r"\boxed{17 \; \text{(or 18)}}",
    r"\boxed{17\text{ or 18}}",
    r"\boxed{17 \text{ or } 18}",
    r"\boxed{17 \\ 18}",
    r"\boxed{17 \hspace{1cm} 18}",
    r"\boxed{17 \quad 18}",
    r"\boxed{17 \mid 18}",
    r"\boxed{17 = 18}",
    r"\boxed{x = 17 = 18}",
]


@pytest.mark.parametrize("hedge", HEDGES)
def test_several_answers_in_any_container_score_0(hedge):
    assert _math(WORK + hedge, "18") == 0.0
    assert _math(WORK + hedge, "17") == 0.0


@pytest.mark.parametrize(
    "hedge",
    [h for h in HEDGES if "x =" not in h and "\\quad" not in h] + [r"\boxed{\phantom{18}}"],
)
def test_gsm8k_rejects_the_same_hedges(hedge):
    assert GSM(completions=[WORK + hedge], answer=["18"]) == [0.0]


def test_one_value_written_twice_is_not_a_hedge():
    assert _math(r"\boxed{18} so again \boxed{18.0}", "18") == 1.0
    assert _math(r"<answer>$\boxed{\frac{1}{2}}$ i.e. $\boxed{0.5}$</answer>", "0.5") == 1.0
    assert _math(r"\boxed{\frac{6}{2} = 3}", "3") == 1.0


# -- multi-part answers and revisions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("completion", "gold", "expected"),
    [
        (r"So $p = \boxed{3}$ and $q = \boxed{5}$.", "3, 5", 1.0),
        (r"$\boxed{3}$, $\boxed{5}$, $\boxed{7}$", "3, 5, 7", 1.0),
        (r"So $p = \boxed{5}$ and $q = \boxed{3}$.", "3, 5", 0.0),
        (r"$\boxed{3}$ and $\boxed{5}$", "5", 0.0),
        (r"$\boxed{3}$, $\boxed{5}$, $\boxed{6}$", "3, 5", 0.0),
        (r"So $x=\boxed{3}$ and $y=\boxed{4}$.", "(3,4)", 1.0),
        (r"So $x=\boxed{4}$ and $y=\boxed{3}$.", r"\left(3, 4\right)", 0.0),
        ("The solutions are $x = 2$ and $x = -2$.", "2, -2", 1.0),
        (r"\boxed{2, 3, 4}", "2, 4, 3", 0.0),
        (r"\boxed{2, 4, 3}", "2, 4, 3", 1.0),
        (r"\boxed{\{2, 3, 4\}}", r"\{2, 4, 3\}", 1.0),
    ],
)
def test_multi_part_answers_in_order(completion, gold, expected):
    assert _math(completion, gold) == expected


def test_all_solutions_are_a_set_when_the_prompt_asks_for_all():
    prompt = "Find all real solutions, separated by commas."
    assert _math(r"\boxed{7, 3}", "3, 7", prompt=prompt) == 1.0
    assert _math(r"\boxed{7, 4}", "3, 7", prompt=prompt) == 0.0


@pytest.mark.parametrize(
    "revision",
    [
        "So the answer is $\\boxed{{17}}$. Wait, that's wrong: I dropped a term. The answer is $\\boxed{{{}}}$.",
        "The answer is 17. Hmm, let me recheck the last step. Actually the answer is {}.",
        "#### 17\nOops, I made a mistake in the sum.\n#### {}",
        "\\boxed{{17}}\n\nWait, I made an arithmetic error above. Redoing it: \\boxed{{{}}}",
    ],
)
def test_a_corrected_final_answer_counts_alone(revision):
    for reward in (ACC, GSM):
        assert reward(completions=[revision.format("18")], answer=["18"]) == [1.0]
        assert reward(completions=[revision.format("19")], answer=["18"]) == [0.0]
    # the original answer is no longer the answer
    assert GSM(completions=[revision.format("18")], answer=["17"]) == [0.0]


def test_a_revision_still_needs_one_final_answer():
    text = r"\boxed{17}. Wait, that's wrong. It is \boxed{18} or \boxed{19}."
    assert _math(text, "18") == 0.0 and _math(text, "19") == 0.0
    assert _math(r"\boxed{17} and \boxed{18}", "18") == 0.0  # no revision: a hedge


# -- 3. the number reader -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("completion", "gold", "expected"),
    [
        ("#### 2.5kg", "2.5", 1.0),
        ("#### 2.5kg", "2", 0.0),
        ("The answer is 3.75km.", "3.75", 1.0),
        ("The answer is $18.50USD", "18.5", 1.0),
        ("The answer is $18.50USD", "18", 0.0),
        ("#### 1.8e1", "18", 1.0),
        ("#### 1.8e1", "1", 0.0),
        ("#### 12cm", "12", 1.0),
        ("It took 45min in all. #### 45min", "45", 1.0),
        ("#### \u201318", "-18", 1.0),
        ("#### \u201318", "18", 0.0),
        ("#### \u201018", "-18", 1.0),
        ("#### \uff0d18", "-18", 1.0),
        ("#### \ufe6318", "-18", 1.0),
        ("#### \u221218", "-18", 1.0),
        ("The total is:\n- 18", "18", 1.0),
        ("The total is:\n- 18", "-18", 0.0),
        ("so it is 1,000,000 dollars", "1000000", 1.0),
    ],
)
def test_gsm8k_number_reader(completion, gold, expected):
    assert GSM(completions=[completion], answer=[gold]) == [expected]


@pytest.mark.parametrize(
    "completion",
    [
        "The candidates:\n3\n7\n18",
        "Possible values:\n- 3\n- 7\n- 18",
        "1. 3\n2. 7\n3. 18",
        "a = 3\nb = 7\nc = 18",
        "| item | count |\n|---|---|\n| a | 3 |\n| b | 18 |",
        "(a) 3\n(b) 18",
    ],
)
def test_a_list_one_per_line_is_not_an_answer(completion):
    assert GSM(completions=[completion], answer=["18"]) == [0.0]


def test_a_total_line_after_its_parts_is_an_answer():
    assert GSM(completions=["apples = 7\npears = 11\ntotal = 18"], answer=["18"]) == [1.0]
    assert GSM(completions=["Step 1: 3 * 4 = 12\nStep 2: 12 + 6 = 18"], answer=["18"]) == [1.0]


@pytest.mark.parametrize(
    ("completion", "gold", "expected"),
    [
        (r"\boxed{12cm}", "12", 1.0),
        (r"\boxed{5in}", "5", 1.0),
        (r"\boxed{4mm}", "4", 1.0),
        (r"\boxed{4mm}", "5", 0.0),
        (r"\boxed{12 \text{ cm}}", "12", 1.0),
        (r"\boxed{\phantom{18}}", "18", 0.0),
        (r"\boxed{\hspace{1cm}}", "1", 0.0),
    ],
)
def test_math_units_and_blanks(completion, gold, expected):
    assert _math(completion, gold) == expected


# -- 4. equivalence -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        (r"\text{A,D}", "A,D", 1.0),
        ("D, A", r"\text{A, D}", 1.0),
        (r"\text{A,C}", "A,D", 0.0),
        ("(B)", "B", 1.0),
        ("B", r"\text{(B)}", 1.0),
        ("C", r"\text{(B)}", 0.0),
        ("k < -5", r"(-\infty, -5)", 1.0),
        (r"k \le -5", r"(-\infty, -5)", 0.0),
        (r"(-\infty, -5)", "k < -5", 1.0),
        (r"-1 < x \le 3", "(-1, 3]", 1.0),
        ("x = 5", "5", 1.0),
        ("x = 6", "5", 0.0),
        ("45^\\circ", "45", 1.0),
        ("45", "45^\\circ", 1.0),
        ("20\\%", "20", 1.0),
        (r"\dfrac{1}{2}", r"\tfrac12", 1.0),
        (r"2\frac{1}{2}", r"\frac{5}{2}", 1.0),
        (r"2\frac{1}{2}", "1", 0.0),
        ("10,000", "10000", 1.0),
        ("10{,}000", "10000", 1.0),
        ("(3, 2)", "(2, 3)", 0.0),
    ],
)
def test_equivalence(predicted, gold, expected):
    assert _math(f"\\boxed{{{predicted}}}", gold) == expected


def test_a_matrix_is_one_answer_and_a_value_beside_it_a_hedge():
    matrix = r"\begin{pmatrix} -18 \\ -49 \\ 96 \end{pmatrix}"
    assert _math(f"$\\boxed{{{matrix}}}$", matrix) == 1.0
    assert _math(f"$\\boxed{{5 \\\\ {matrix}}}$", matrix) == 0.0


def test_prose_with_formulas_in_an_answer_block_is_no_answer():
    asked = r"Simplify the following: $$\frac{3}{\sqrt{27}}$$"
    assert _math(f"<answer>{asked}</answer>", r"\frac{\sqrt3}{3}") == 0.0
    assert _math(r"<answer>$\frac{\sqrt3}{3}$ (simplified)</answer>", r"\frac{\sqrt3}{3}") == 1.0
    assert _math(r"<answer>So the value is $\frac{\sqrt3}{3}$.</answer>", r"\frac{\sqrt3}{3}") == 1.0


@pytest.mark.parametrize(
    ("said", "gold"),
    [
        (r"$\$32,\!348$", r"\$32,\!348"),
        (r"$11,\! 111,\! 100$", r"11,\! 111,\! 100"),
        (".35625", ".35625"),
        (r"$\$18.90$", r"\$18.90"),
    ],
)
def test_dollars_tex_spacing_and_leading_points_in_statements(said, gold):
    for style in ("Final Answer: The final answer is {}. I hope it is correct.", "# Answer\n\n{}",
                  "Putting it together, the value we want is {}.", "<answer>{}</answer>"):  # fmt: skip
        assert _math(WORK + style.format(said), gold) == 1.0, style
        assert _math(WORK + style.format(said), "7") == 0.0, style


def test_a_display_formula_opened_and_left_is_no_answer():
    assert _math("Using the identity, we get our answer: \\[\n\nThe answer is: $1$", "1") == 1.0


def test_a_question_copied_into_a_box_and_a_non_number_beside_the_answer_are_no_answers():
    assert _math(r"\boxed{Simplify the following: $$\frac{3}{\sqrt{27}}$$}", r"\frac{\sqrt3}{3}") == 0.0
    assert _math(r"\boxed{$\frac{\sqrt{3}}{3}$}", r"\frac{\sqrt3}{3}") == 1.0
    assert _math(r"\boxed{Evaluate $(1+2i)6-3i$.}", "6+9i") == 0.0
    assert _math(r"<answer>Evaluate $(1+2i)6-3i$.</answer>", "6+9i") == 0.0
    assert _math(r"\boxed{What is the value of $(26^2 - 24^2 - 10)^2 - 10^2$?}", "8000") == 0.0
    assert _math(r"We work it out. So the value we want is \pi or 9.", "9") == 0.0
