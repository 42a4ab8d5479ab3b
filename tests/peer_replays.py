"""The reward test cases of verl and reward-kit, replayed against our rewards (the cases are facts; the code is ours).

Sources:

* verl (volcengine/verl): its ``utils/reward_score`` scorers have few unit tests of their own, so each suite
  holds the cases of the tests that exist (``tests/utils/reward_score``: the prime_math grader's regression
  tests, the math_dapo delimiter tests, the numeric canonicalisation tests of ``math``) and hand-written inputs
  of the forms each scorer is written for, expected as verl's scorer at commit b178a3cd5 scores them (run on
  that checkout: ``gsm8k.compute_score``, ``math_dapo.compute_score``'s ``acc``, ``prime_math.compute_score``'s
  first value). Mapping: gsm8k -> ``gsm8k_accuracy``; math_dapo, prime_math and math -> ``math_accuracy``
  (verl's -1 for a wrong math_dapo answer is our 0: only correctness is compared).
* reward-kit (fw-ai-external/reward-kit, ``tests/test_*.py`` for the rewards we share): ``format_reward`` ->
  ``think_format``, ``tag_count_reward`` -> ``tag_count``, ``reasoning_steps_reward`` -> ``reasoning_steps``,
  ``repetition_penalty_reward`` -> ``repetition`` (its score is ``1 + ours``, its ``max_penalty=p`` ours
  ``-p``), ``length_reward`` -> ``length`` in words, ``cosine_length_reward`` -> ``cosine_length``,
  ``math_reward`` and ``accuracy_reward`` -> ``math_accuracy`` (``gsm8k_accuracy`` for ``####`` answers).
  Tests of settings we have no counterpart for (custom regexes and extractors, ``score_per_tag``,
  ``required_tags``, ``require_units``, ``tolerance``, diversity and sequence-term rewards) are not replayed.

``DELIBERATE`` lists the cases where we differ on purpose (the same list, with reasons, is in docs/rewards.md,
"Differences from verl and reward-kit"); ``READER_DEFECTS`` those where the answer reader is wrong (written up
in the notes for its maintainers and listed in docs/rewards.md as known differences). Every other case agrees.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from peer_cases import Case, msg

MATH = {"timeout": None}
ACC = ("math_accuracy", MATH)
GSM = ("gsm8k_accuracy", {})


def _verl(suite: str, reward: tuple[str, dict], text: str, reference: str, expected: float, note: str = "") -> Case:
    name = f"verl {suite} {note or repr(text)} ~ {reference!r}"
    return Case(name, *reward, [text], {"answer": [reference]}, [expected], suite=f"verl {suite}")


VERL_GSM8K = [
    _verl("gsm8k", GSM, text, truth, value)
    for text, truth, value in [
        ("so #### 18", "18", 1.0),
        ("#### 17", "18", 0.0),
        ("The answer is 18.", "18", 0.0),
        ("#### 1,000", "1000", 1.0),
        ("#### -3", "-3", 1.0),
        ("#### 18 or 20", "18", 1.0),
        ("#### 18.00", "18", 0.0),
        ("#### $18", "18", 0.0),
        ("#### 18.", "18", 0.0),
        ("#### 5\nwait, no\n#### 18", "18", 1.0),
        ("She pays 3 + 15 = 18 dollars.\n#### 18", "18", 1.0),
        ("#### 0.5", "0.5", 1.0),
        ("#### 18\n#### 5", "18", 0.0),
    ]
]

VERL_MATH_DAPO = [
    # tests/utils/reward_score/test_math_dapo.py (a verl pull request): LaTeX delimiters do not change the answer
    *[_verl("math_dapo", ACC, text, "60", 1.0, f"test_latex_math_delimiters {text!r}") for text in [
        "Answer: 60", "Answer: $60$", "Answer: \\boxed{60}", "Answer: \\(60\\)", "Answer: \\[60\\]",
        "Answer: \\( \\boxed{60} \\)"]],
    *[_verl("math_dapo", ACC, text, "60", 0.0, f"test_wrong_answers_stay_wrong {text!r}") for text in [
        "Answer: \\(61\\)", "Answer: \\[6\\]0", "Answer: \\boxed{\\frac{1}{2}}"]],
    _verl("math_dapo", ACC, "Answer: \\(\\frac{1}{2}\\)", "\\frac{1}{2}", 1.0, "test_fraction_inside_parenthesis"),
    # the scorer on the forms it reads ("Answer: X" on the last such line, normalised, compared as text)
    *[_verl("math_dapo", ACC, text, truth, value) for text, truth, value in [
        ("Answer: 3/4", "\\frac{3}{4}", 0.0),
        ("Answer: x = 5", "5", 1.0),
        ("The answer is 5.", "5", 0.0),
        ("Answer: 5 or 6", "5", 0.0),
        ("Answer: 1,000", "1000", 1.0),
        ("Answer: 90^\\circ", "90", 1.0),
        ("Answer: 5 \\text{ cm}", "5", 1.0),
        ("Answer: 0.5", "\\frac{1}{2}", 0.0),
        ("answer: 7", "7", 1.0),
        ("Answer: 7\nAnswer: 8", "8", 1.0),
        ("Answer: \\dfrac{1}{2}", "\\frac{1}{2}", 0.0),
        ("Answer: 10\\%", "10", 0.0),
    ]],
]  # fmt: skip

VERL_PRIME_MATH = [
    # tests/utils/reward_score/test_prime_math_grader (the grader's regression tests): legitimate grading
    _verl("prime_math", ACC, "The answer is \\boxed{42}", "42", 1.0, "test_boxed_answers right"),
    _verl("prime_math", ACC, "The answer is \\boxed{42}", "7", 0.0, "test_boxed_answers wrong"),
    _verl("prime_math", ACC, "\\boxed{3\\pi}", "9.42477796", 1.0, "test_pi_and_fraction_equality 3pi"),
    _verl("prime_math", ACC, "\\boxed{0.5}", "0.5", 1.0, "test_pi_and_fraction_equality 0.5"),
    _verl("prime_math", ACC, "\\boxed{[1, 2]}", "\\begin{pmatrix}9&9\\end{pmatrix}", 0.0,
          "test_matrix_branch_still_grades_list_predictions"),
    _verl("prime_math", ACC, '\\boxed{[open("pwned.txt","w").write("x"), 2]}', "\\begin{pmatrix}1&2\\end{pmatrix}",
          0.0, "test_matrix_branch_does_not_execute_payload"),
    # the scorer on the forms it reads (the last \boxed{}, or "the answer is")
    *[_verl("prime_math", ACC, text, truth, value) for text, truth, value in [
        ("\\boxed{\\frac{1}{2}}", "0.5", 1.0),
        ("\\boxed{0.5}", "\\frac{1}{2}", 1.0),
        ("\\boxed{\\sqrt{117}}", "3\\sqrt{13}", 1.0),
        ("\\boxed{(1,2)}", "(1, 2)", 1.0),
        ("\\boxed{[1,2)}", "(1,2)", 0.0),
        ("\\boxed{x^2+2x+1}", "(x+1)^2", 1.0),
        ("\\boxed{90^\\circ}", "90", 1.0),
        ("\\boxed{\\pi/2}", "\\frac{\\pi}{2}", 1.0),
        ("The answer is 5", "5", 1.0),
        ("\\boxed{5} or \\boxed{6}", "5", 0.0),
        ("\\boxed{6} then \\boxed{5}", "5", 1.0),
        ("\\boxed{3.14}", "\\pi", 1.0),
        ("\\boxed{1,000}", "1000", 1.0),
        ("\\boxed{\\text{(B)}}", "B", 1.0),
        ("\\boxed{x=3}", "3", 1.0),
        ("\\boxed{\\frac{28}{6}}", "\\frac{14}{3}", 0.0),
    ]],
]  # fmt: skip

VERL_MATH = [
    # tests/utils/reward_score/test_numeric_canonicalization_on_cpu.py: is_equiv(remove_boxed(gt), pred)
    _verl("math", ACC, f"\\boxed{{{pred}}}", truth, 1.0, f"test_is_equiv_boxed {truth!r} {pred!r}")
    for truth, pred in [("033", "33"), ("+033", "33"), ("-0", "0"), ("000", "0")]
]

# -- reward-kit ----------------------------------------------------------------------------------------------

_THINK_ANSWER = "<think>\nThis is my reasoning process.\nI think the answer is 42.\n</think>\n<answer>\n42\n</answer>"


def _rk(suite: str, test: str, reward: str, settings: dict, texts: list[str], expected=None, check=None,
        columns: dict | None = None, transform=None) -> Case:  # fmt: skip
    completions = [msg(t) if t is not None else [] for t in texts]
    return Case(f"reward-kit {suite} {test}", reward, settings, completions, columns or {}, expected, check,
                suite=f"reward-kit {suite}", transform=transform)  # fmt: skip


RK_FORMAT = [
    _rk("format", "test_think_answer_format_match", "think_format", {}, [_THINK_ANSWER], [1.0]),
    _rk("format", "test_think_answer_format_mismatch", "think_format", {},
        ["I think the answer is 42.\nThe answer is 42."], [0.0]),
    _rk("format", "test_think_answer_format_wrong_order", "think_format", {},
        ["<answer>\n42\n</answer>\n<think>\nThis is my reasoning process.\nI think the answer is 42.\n</think>"],
        [0.0]),
    _rk("format", "test_custom_format_regex [REASONING]/[RESULT]", "think_format",
        {"think_tag": ["[REASONING]", "[/REASONING]"], "answer_tag": ["[RESULT]", "[/RESULT]"]},
        ["[REASONING]\nThis is my reasoning process.\n[/REASONING]\n[RESULT]\n42\n[/RESULT]"], [1.0]),
    _rk("format", "test_no_messages", "think_format", {}, [None], [0.0]),
    _rk("format", "test_partial_match_mode exact", "think_format", {},
        [f"Here's my response:\n{_THINK_ANSWER}\nThanks for asking!"], [0.0]),
    _rk("format", "test_partial_match_mode partial", "think_format", {"strict": False},
        [f"Here's my response:\n{_THINK_ANSWER}\nThanks for asking!"], [1.0]),
]  # fmt: skip

_INDENT = "\n        "


def _indented(*lines: str) -> str:
    """Text as the peer's tests write it: inside an indented triple-quoted string."""
    return _INDENT + _INDENT.join(lines) + "\n        "


RK_TAG_COUNT = [
    _rk("tag_count", "test_basic_tag_counting", "tag_count", {}, [_indented(
        "<think>", "Let me think about this problem.", "First, I need to understand what's being asked.", "</think>",
        "", "<answer>", "The solution is 42.", "</answer>")], [1.0]),
    _rk("tag_count", "test_missing_tags", "tag_count", {}, [_indented("<answer>", "The answer is 42.", "</answer>")],
        [0.5]),
    _rk("tag_count", "test_unbalanced_tags", "tag_count", {}, [_indented(
        "<think>", "Let me think about this problem.", "First, I need to understand what's being asked.", "",
        "<answer>", "The solution is 42.", "</answer>")], [0.0]),
    _rk("tag_count", "test_no_messages", "tag_count", {}, [None], [0.0]),
    _rk("tag_count", "test_attributes_in_tags", "tag_count", {}, [_indented(
        '<think method="systematic">', "Let me analyze this step by step.", "</think>", "",
        '<answer confidence="high">', "The result is definitely 42.", "</answer>")], [1.0]),
]  # fmt: skip

RK_REASONING_STEPS = [
    _rk("reasoning_steps", "test_numbered_steps", "reasoning_steps", {}, [_indented(
        "To solve this problem, I'll use a step-by-step approach:", "", "Step 1: Identify the relevant variables",
        "Let's call the unknown quantity x.", "", "Step 2: Set up the equation", "We know that 2x + 3 = 7", "",
        "Step 3: Solve for x", "2x + 3 = 7", "2x = 4", "x = 2", "", "Therefore, x = 2 is the solution.")], [1.0]),
    _rk("reasoning_steps", "test_numbered_list", "reasoning_steps", {}, [_indented(
        "I'll break down the algorithm into steps:", "", "1. Initialize a counter variable to 0",
        "2. Iterate through each element in the array",
        "3. For each element, increment the counter if it meets the condition", "4. Return the final counter value",
        "", "This algorithm has a time complexity of O(n).")], [1.0]),
    _rk("reasoning_steps", "test_bullet_points", "reasoning_steps", {}, [_indented(
        "To implement this feature, follow these steps:", "", "* First, create a new component file",
        "* Add the necessary imports at the top", "* Implement the component's logic", "* Export the component",
        "* Import and use it in your main application", "", "This pattern ensures maintainability and modularity.")],
        [1.0]),
    _rk("reasoning_steps", "test_transition_phrases", "reasoning_steps", {}, [_indented(
        "Let me walk you through the process of solving this:", "",
        "First, I need to identify what we're looking for.",
        "Second, I'll analyze the constraints given in the problem.",
        "Third, I'll apply the formula that relates these variables.",
        "Finally, I'll calculate the answer and verify it matches the constraints.", "", "The solution is 42.")],
        [1.0]),
    _rk("reasoning_steps", "test_insufficient_steps", "reasoning_steps", {}, [_indented("The answer is 42.")],
        [0.0]),
    _rk("reasoning_steps", "test_partial_score", "reasoning_steps", {}, [_indented(
        "Step 1: Figure out what we're solving for", "Step 2: Apply the formula", "The answer is 42.")],
        check=lambda r: 0.0 < r[0] < 1.0),
    _rk("reasoning_steps", "test_max_steps (max_steps has no effect on the score)", "reasoning_steps", {},
        [_indented("I'll use a detailed approach:", "", "Step 1: Identify variables", "Step 2: Set up equations",
                   "Step 3: Simplify", "Step 4: Solve for unknowns", "Step 5: Verify the solution",
                   "Step 6: Interpret the result")], [1.0]),
    _rk("reasoning_steps", "test_sequence_reward_basic", "reasoning_steps", {}, [_indented(
        "First, let's identify what we're looking for.", "Second, we need to formulate the equation.",
        "Third, we'll solve for the unknown.", "Finally, we verify our answer.", "The solution is correct.")], [1.0]),
]  # fmt: skip

_PLAIN = _indented(
    "This is a response with unique words.", "It does not repeat phrases or use redundant language.",
    "Each sentence contains different vocabulary items.",
    "The diversity of expression is maintained throughout.")  # fmt: skip
_THIS_IS_A_TEST = _indented(*["This is a test. This is a test. This is a test."] * 3)
_CONCEPT = _indented(
    "Let me explain this concept. This concept is important.",
    "When implementing this concept, remember the key points.",
    "The key points of this concept include understanding the basics.",
    "Understanding the basics is essential for mastery.")  # fmt: skip


def _one_plus(score: float) -> float:
    return 1.0 + score


def _rep(test: str, texts: list[str], settings: dict, expected=None, check=None) -> Case:
    return _rk("repetition", test, "repetition", {"max_penalty": -0.5, **settings}, texts, expected, check,
               transform=_one_plus)  # fmt: skip


RK_REPETITION = [
    _rep("test_no_repetition", [_PLAIN], {"ngram_size": 3}, check=lambda r: r[0] >= 0.9),
    _rep("test_high_repetition", [_THIS_IS_A_TEST], {"ngram_size": 3}, check=lambda r: r[0] < 0.8),
    _rep("test_moderate_repetition", [_CONCEPT], {"ngram_size": 2}, check=lambda r: 0.5 < r[0] < 1.0),
    _rep("test_empty_response", [""], {}, [1.0]),
]


@dataclass
class TwoSettings(Case):
    """A peer test scoring the same text under two settings (``settings``, then ``second``): ``check(both)``."""

    second: dict = field(default_factory=dict)

    def run(self) -> list:
        first = Case.run(self)
        return first + Case.run(replace(self, settings=self.second))


def _pair(name: str, first: dict, second: dict, text: str, relation) -> Case:
    return TwoSettings(f"reward-kit repetition {name}", "repetition", first, [msg(text)], check=lambda r: relation(*r),
                       suite="reward-kit repetition", transform=_one_plus, second=second)  # fmt: skip


_HALF = {"max_penalty": -0.5}
RK_REPETITION += [
    _pair("test_different_ngram_sizes", {"ngram_size": 1, **_HALF}, {"ngram_size": 3, **_HALF}, _CONCEPT,
          lambda one, three: one < three),
    _pair("test_max_penalty", {"ngram_size": 3, "max_penalty": -0.3}, {"ngram_size": 3, "max_penalty": -0.9},
          _indented(*["This is a test. This is a test. This is a test."] * 2), lambda low, high: low > high),
]  # fmt: skip

_WORDS = {"unit": "words"}
_TARGET = "This is a response that has exactly the target length we are looking for."


def _length(test: str, settings: dict, texts: list[str], expected=None, check=None) -> Case:
    return _rk("length", test, "length", {**_WORDS, **settings}, texts, expected, check)


RK_LENGTH = [
    _length("test_target_length", {"target": len(_TARGET.split())}, [
        _TARGET, "This is a short response.",
        "This is a longer response that exceeds the target length by a significant margin and contains many more "
        "tokens than we would ideally want in a concise answer that gets to the point efficiently."],
        check=lambda r: r[0] == 1.0 and r[1] < 1.0 and r[2] < 1.0),
    _length("test_min_length", {"min_length": 7}, ["This response meets the minimum length requirement.",
                                                   "Too short."], check=lambda r: r[0] == 1.0 and r[1] < 1.0),
    _length("test_max_length", {"max_length": 5}, ["This is concise.",
        "This response exceeds the maximum length by including unnecessary details and being overly verbose when a "
        "shorter answer would suffice."], check=lambda r: r[0] == 1.0 and r[1] < 1.0),
    _length("test_min_max_range", {"min_length": 3, "max_length": 10}, [
        "This response is just right.", "Too short.",
        "This response is too long with unnecessary details and verbosity. It goes on and on without adding much "
        "value to the answer."], check=lambda r: r[0] == 1.0 and r[1] < 1.0 and r[2] < 1.0),
]  # fmt: skip


def _cosine_pair(test: str, correct: list, relation) -> Case:
    texts = ["Short correct answer.", "This is a much longer correct answer that provides extensive details and "
             "explanations that are technically accurate but not as concise as they could be."]  # fmt: skip
    return _rk("length", test, "cosine_length", {"max_length": 50, **_WORDS}, texts * (len(correct) // 2),
               check=relation, columns={"correct": correct})  # fmt: skip


RK_LENGTH += [
    _length("test_cosine_scaling", {"target": 9}, ["Short answer."], check=lambda r: 0.0 <= r[0] < 1.0),
    _cosine_pair(
        "test_cosine_length_reward",
        [True, True, False, False],
        lambda r: r[0] > r[1] and r[3] > r[2] and r[0] > r[2] and r[1] > r[3],
    ),
]

_ANSWER_4 = {"answer": ["4"]}


def _math(test: str, text: str, reference: str | None, expected, reward=ACC) -> Case:
    return _rk("math", test, *reward, [text], [expected], columns={"answer": [reference]})


RK_MATH = [
    # tests/test_math.py TestMathReward (math_reward: answers extracted from the reference text too)
    _math("test_basic_match_boxed", "It is \\boxed{4}.", "Answer is \\boxed{4}.", 1.0),
    _math("test_basic_match_gsm8k", "The result is #### 4", "Final answer: #### 4", 1.0, GSM),
    _math("test_basic_match_mcq", "My answer is (A).", "Choice (A).", 0.0),
    _math("test_type_mismatch_mcq_vs_number", "It is 4.", "The number is 4.", 1.0),
    _math("test_wrong_answer_numeric", "Answer: \\boxed{5}.", "Answer: \\boxed{4}.", 0.0),
    _math("test_wrong_answer_mcq", "Choice (B).", "Choice (A).", 0.0),
    _math("test_no_answer_in_generated", "Answer is (A).", "Answer is \\boxed{1}.", 0.0),
    _math("test_no_answer_in_original_when_gen_is_unparseable", "I don't know.", "Answer is \\boxed{1}.", 0.0),
    _math("test_unparseable_ground_truth", "Answer is \\boxed{1}.", "What is it?", 0.0),
    _math("test_penalty_unboxed_or_issue1", "The answer is $1/2 \\text{ or } 1$.", "The answer is $\\boxed{1/2}$.",
          0.0),
    _math("test_no_penalty_if_gen_is_single_boxed_or_expr", "The answer is $\\boxed{1/2 \\text{ or } 1}$.",
          "The answer is $\\boxed{1/2 \\text{ or } 1}$.", 1.0),
    _math("test_penalty_ambiguity_issue2", "The equation is $x=\\frac{1}{4}$. Some other numbers are 1, 2, 3.",
          "The answer is $\\boxed{1/4}$.", 0.0),
    _math("test_no_penalty_ambiguity_if_gt_is_also_ambiguous", "Solutions: $\\boxed{1}$, $\\boxed{2}$, $\\boxed{3}$.",
          "Answers: $\\boxed{1}$, $\\boxed{2}$.", 0.0),
    _math("test_issue3_scenario_correct_handling",
          "Let $x=\\frac{3}{v_{B}-v_{R}}, y=\\frac{7}{v_{B}+v_{R}}$. The solution to the last system is (0.5, 0.5). "
          "Then $v_R=4 \\mathrm{km} / \\mathrm{h}$, and $v_B=10 \\mathrm{km} / \\mathrm{h}$.",
          "The speed of the river is $v_R=4 \\mathrm{km/h}$, and the speed of the boat is $v_B=10 \\mathrm{km/h}$.",
          0.0),
    # tests/test_accuracy.py (accuracy_reward: the reference is the assistant message's content)
    _rk("math", "accuracy test_exact_match", *ACC, [_indented(
        "To solve this equation, I'll follow these steps:", "3x + 5 = 17", "3x = 12", "x = 4", "",
        "Therefore, the answer is 4.")], [1.0], columns=_ANSWER_4),
    _rk("math", "accuracy test_from_context_ground_truth", *ACC, [_indented(
        "I need to solve this equation step by step:", "2x + 8 = 16", "2x = 8", "x = 4", "", "Therefore, x = 4.")],
        [1.0], columns=_ANSWER_4),
    _rk("math", "accuracy test_incorrect_answer", *ACC, [_indented(
        "I need to solve this equation:", "4x - 3 = 9", "4x = 12", "x = 3")], [0.0], columns={"answer": ["3.5"]}),
    _rk("math", "accuracy test_non_numeric_answer", *ACC, [_indented("The capital of France is Paris.")], [1.0],
        columns={"answer": ["Paris"]}),
    _rk("math", "accuracy test_latex_expression", *ACC, [_indented(
        "The solution to the quadratic equation is:", "$x = \\frac{-b \\pm \\sqrt{b^2 - 4ac}}{2a}$", "",
        "With a=1, b=-3, c=-4:", "$x = \\frac{3 \\pm \\sqrt{9 + 16}}{2} = \\frac{3 \\pm 5}{2}$", "",
        "So $x = 4$ or $x = -1$")] * 2, check=lambda r: 1.0 in r, columns={"answer": ["4", "-1"]}),
    _rk("math", "accuracy test_no_ground_truth", *ACC, ["The answer is 42."], [0.0], columns={"answer": [None]}),
]  # fmt: skip

VERL = VERL_GSM8K + VERL_MATH_DAPO + VERL_PRIME_MATH + VERL_MATH
REWARD_KIT = RK_FORMAT + RK_TAG_COUNT + RK_REASONING_STEPS + RK_REPETITION + RK_LENGTH + RK_MATH
CASES = VERL + REWARD_KIT

_ANY_FORM = (
    'the final answer is read in any of its forms (`####`, `\\boxed{}`, "the answer is"), not only the one marker'
)
_HEDGE = "two different final answers are a hedge and score 0; the peer takes the last one"
_VALUE = "equal values score equal; the peer compares normalised text"
_UNUSABLE = "a reference the reader cannot use (prose, parts named in words, alternatives) gives None, never a verdict"
_NONE = "a row without a usable reference is not scored (None), rather than scored 0"

#: Cases where we differ on purpose (the same list, with reasons, is in docs/rewards.md).
DELIBERATE: dict[str, str] = {
    "verl gsm8k 'The answer is 18.' ~ '18'": _ANY_FORM + " (verl's strict mode wants `#### `)",
    "verl gsm8k '#### 18 or 20' ~ '18'": "a hedge scores 0; verl reads the number right after `#### ` and ignores "
    "the rest",
    "verl gsm8k '#### 18.00' ~ '18'": _VALUE + " (`18.00` is 18)",
    "verl gsm8k '#### $18' ~ '18'": "a currency sign is part of how the number is written; verl's pattern finds no "
    "number after `#### $`",
    "verl gsm8k '#### 18.' ~ '18'": "a full stop ends the sentence, not the number; verl compares `18.` with `18`",
    "verl math_dapo 'Answer: 3/4' ~ '\\\\frac{3}{4}'": _VALUE,
    "verl math_dapo 'The answer is 5.' ~ '5'": _ANY_FORM + " (math_dapo reads only `Answer:` lines)",
    "verl math_dapo 'Answer: 0.5' ~ '\\\\frac{1}{2}'": _VALUE,
    "verl math_dapo 'Answer: 7\\nAnswer: 8' ~ '8'": _HEDGE,
    "verl math_dapo 'Answer: \\\\dfrac{1}{2}' ~ '\\\\frac{1}{2}'": _VALUE,
    "verl math_dapo 'Answer: 10\\\\%' ~ '10'": "a percent sign after the answer is its unit when the reference "
    "is the bare number; verl compares `10\\\\%` with `10` as text",
    "verl prime_math '\\\\boxed{6} then \\\\boxed{5}' ~ '5'": _HEDGE,
    "verl prime_math '\\\\boxed{3.14}' ~ '\\\\pi'": "an approximation is not the exact answer (numbers are "
    "compared to 6 decimals); prime_math accepts a number close to a multiple of pi",
    "verl prime_math '\\\\boxed{\\\\frac{28}{6}}' ~ '\\\\frac{14}{3}'": "equal values score equal; prime_math "
    "rejects a fraction that is not reduced",
    "reward-kit format test_partial_match_mode partial": "the lenient think format allows text between and after the "
    "blocks, never before the reasoning (reward-kit's test passes an unanchored regex of its own)",
    "reward-kit tag_count test_unbalanced_tags": "partial credit for each marker present exactly once (0.75 for a "
    "missing `</think>`), as open-r1's tag_count; reward-kit takes a tag's share away again when it is unbalanced",
    "reward-kit math test_type_mismatch_mcq_vs_number": _UNUSABLE,
    "reward-kit math test_unparseable_ground_truth": _NONE,
    "reward-kit math test_no_penalty_if_gen_is_single_boxed_or_expr": _UNUSABLE,
    "reward-kit math test_issue3_scenario_correct_handling": _UNUSABLE,
    "reward-kit math accuracy test_latex_expression": "`x = 4` or `x = -1` against a one-value reference is a hedge: "
    "0 whichever root the reference names; reward-kit credits one of the two",
    "reward-kit math accuracy test_no_ground_truth": _NONE,
}

#: Cases where the answer reader is wrong (listed in docs/rewards.md as known differences until it is fixed).
READER_DEFECTS: dict[str, str] = {}
