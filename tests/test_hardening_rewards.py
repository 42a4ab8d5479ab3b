"""Rewards under attack: each case a way a policy beat a reward, and the class of inputs it stands for.

Time: linear work on degenerate text. Penalties: no escape by breaking the checker, by invisible
characters, by hedging, by NaN, by notation the checker misreads. Real data: placeholders and restated
boxes are not answers, words are not math, tag names may carry brackets.
"""

from __future__ import annotations

import pytest
from cpu_timing import cpu_time
from engine_rewards import FlakyCheck

from rewardsmith import RewardConfigError, get_reward
from rewardsmith.compose import combine, format_and_content, gate, route

# -- time bounded on every input ---------------------------------------------------------------------------------


def _seconds(reward, text, **columns):
    """The CPU seconds of scoring ``text`` (best of three), and its score."""
    reward(completions=["warm up"], **{k: [v] for k, v in columns.items()})
    seconds, score = cpu_time(lambda: reward(completions=[text], **{k: [v] for k, v in columns.items()}))
    return seconds, score[0]


@pytest.mark.parametrize(
    "text",
    ["\n" * 200_000, "\n \n" * 60_000, " \n" * 100_000, "\nA" * 100_000, "answer\n" * 30_000, "0," * 100_000],
    ids=["newlines", "blank-lines", "space-newline", "newline-A", "answer-newline", "digits-commas"],
)
def test_gsm8k_accuracy_is_fast_on_degenerate_text(text):
    seconds, score = _seconds(get_reward("gsm8k_accuracy"), text, answer="18")
    assert score == 0.0
    assert seconds < 0.5  # 40 KB of newlines took 8 s before


@pytest.mark.parametrize(
    "text",
    ["<tool_call>" * 20_000, "<tool_call>{" * 20_000, "<tool_call>" * 10_000 + "</tool_call>"],
    ids=["unclosed", "unclosed-brace", "one-closing-at-the-end"],
)
def test_tool_call_match_is_fast_on_repeated_unclosed_tags(text):
    seconds, _ = _seconds(get_reward("tool_call_match"), text, tool_calls=[{"name": "f", "arguments": {}}])
    assert seconds < 0.5  # 220 KB of unclosed tags took about 40 s before


# -- no escape from a penalty: breaking the checker --------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [r"9^{9^{9}}", r"10^{10^{10}}", r"2^{3^{4^{5}}}", r"1000000!", r"\binom{10^{6}}{500000}", r"(x+1)^{100000}",
     r"x^{9^{9^{9}}}", r"\left(\frac{1}{2}\right)^{10^{10}}", r"(2x)^{10^{9}}", r"10^{-10^{10}}"],
)  # fmt: skip
def test_astronomically_large_answers_are_wrong_at_once_not_a_checker_timeout(answer):
    acc = get_reward("math_accuracy")
    seconds, [result] = cpu_time(lambda: acc.explain(completions=[rf"so it is $\boxed{{{answer}}}$"], answer=["12"]))
    assert seconds < 1.0  # CPU seconds, workers included: decided before any symbolic work
    assert result.score == 0.0 and "astronomically" in result.reason
    acc.close()


def test_a_checker_timeout_scores_as_a_wrong_answer_in_every_correctness_reward():
    # both sides astronomically large: no cheap decision, so sympy runs until the hard timeout
    acc = get_reward("math_accuracy", timeout=1.0)
    hard = [r"\boxed{\binom{10^{6}}{500001}}"]
    [result] = acc.explain(completions=hard, answer=[r"\binom{10^{6}}{500000}"])
    assert result.score == 0.0 and "timed out" in result.reason  # not None: None would beat a wrong answer
    assert acc.stats["timeouts"] == 1
    # through cosine_length the timeout is the wrong answer's score at that length, far below what None gives TRL
    scaled = get_reward("cosine_length", correctness=acc, unit="chars", max_length=100)
    wrong = scaled(completions=[r"\boxed{7}"], answer=[r"\binom{10^{6}}{500000}"])[0]
    timed_out = scaled(completions=hard, answer=[r"\binom{10^{6}}{500000}"])[0]
    assert timed_out is not None and timed_out <= max(wrong, -0.5) < 0
    acc.close()
    for name in ("math_accuracy", "gsm8k_accuracy", "countdown", "tool_call_match", "json_schema"):
        assert get_reward(name).on_error == "zero", name


def test_a_failed_check_never_beats_a_wrong_answer_in_any_composite():
    check = FlakyCheck()  # on_error="none": a failure comes back as None, flagged as failed
    texts = ["right", "wrong", "boom"]
    cosine = get_reward("cosine_length", correctness=check, unit="chars", max_length=10)
    scores = cosine(completions=texts)
    assert scores[2] is not None and scores[2] <= scores[1] < 0 < scores[0]
    for composite in (
        combine(["think_format", check], weights=[0.2, 1.0]),
        combine([check, "think_format"], weights=[1.0, 0.2], missing="zero"),
        format_and_content("think_format", check),
        format_and_content("think_format", check, gated=True),
        gate("tag_count", check, threshold=0.0),
        route({"t": check}),
    ):
        got = composite(completions=[f"<think>x</think><answer>{t}</answer>" for t in texts], task=["t"] * 3)
        assert got[2] is not None and got[2] <= got[1], (composite.name, got)
    # a failed condition never opens a gate
    assert gate(check, "tag_count", threshold=1.0)(completions=["boom"]) == [0.0]


# -- no escape from a penalty: invisible characters --------------------------------------------------------------

ZERO_WIDTH = ("\u200b", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u3164", "\u2800", "\U000e0041", "\ufe0f")


@pytest.mark.parametrize("mark", ZERO_WIDTH, ids=[f"U+{ord(c):04X}" for c in ZERO_WIDTH])
def test_invisible_content_is_no_content(mark):
    fmt = get_reward("think_format")
    assert fmt(completions=[f"<think>{mark}</think><answer>{mark}</answer>"]) == [0.0]
    assert fmt(completions=[f"<think>{mark}\u0301</think><answer>4</answer>"]) == [0.0]  # a lone accent neither
    seen_as_tag = 0.0 if mark in ("\u3164", "\u2800") else 1.0  # a blank splits the tag; nothing else does
    assert fmt(completions=[f"<thi{mark}nk>x</think><answer>4</answer>"]) == [seen_as_tag]
    steps = get_reward("reasoning_steps")
    assert steps(completions=[f"Step 1: {mark * 20}\nStep 2: {mark * 20}\nStep 3: {mark * 20}"]) == [0.0]
    words = " ".join(["go"] * 50)
    padded = " ".join(f"go{mark * (i % 5)}" for i in range(50))
    rep = get_reward("repetition")
    assert rep(completions=[padded]) == rep(completions=[words]) == [pytest.approx(-0.9791666)]
    length = get_reward("length", target=100, unit="chars")
    assert length(completions=["short" + mark * 95]) == length(completions=["short"])


def test_look_alike_letters_do_not_make_repeated_words_new():
    rep = get_reward("repetition")
    plain = " ".join(["the cat sat"] * 10)
    disguised = " ".join(["thе cаt sаt", "𝐭𝐡𝐞 ｃａｔ sat", "THE CAT SAT", "thé cat sat"] * 2 + ["the cat sat"] * 2)
    assert rep(completions=[disguised]) == rep(completions=[plain])


# -- no escape from a penalty: hedging, NaN, misread notation ----------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["The answer is 18 or 20", "The answer is 20 or 18", "#### 17\n#### 18", "The answer is 1, 18, 20.",
     "Answer: 18 and 19", "A: 20 or 18", r"\boxed{18} \boxed{20}", "<answer>18 or 20</answer>", "#### 18, 20"],
)  # fmt: skip
def test_a_final_answer_naming_several_numbers_is_a_hedge_in_every_form(text):
    assert get_reward("gsm8k_accuracy")(completions=[text], answer=["18"]) == [0.0]


@pytest.mark.parametrize(
    "text", ["The answer is 18.", "The answer is 18. She sold 9 clips on day one.", "Answer: $18", "A: 18", "#### 18"]
)
def test_a_single_stated_number_still_counts(text):
    assert get_reward("gsm8k_accuracy")(completions=[text], answer=["18"]) == [1.0]


@pytest.mark.parametrize("value", ["NaN", "-NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
def test_json_schema_rejects_numbers_json_does_not_have(value):
    schema = {"type": "object", "properties": {"p": {"type": "number", "minimum": 0, "maximum": 1}}, "required": ["p"]}
    r = get_reward("json_schema", schema=schema)
    assert r(completions=[f'{{"p": {value}}}', '{"p": 0.5}']) == [0.0, 1.0]


@pytest.mark.parametrize(
    "answer, gold, score",
    [(r"12.\overline{5}", "12", 0.0), (r"0.\overline{3}", r"\frac{1}{3}", 1.0),
     (r"0.1\overline{6}", r"\frac{1}{6}", 1.0), (r"0.\overline{9}", "1", 1.0), (r"0.\bar{3}", r"\frac13", 1.0),
     (r"1.\overline{142857}", r"\frac{8}{7}", 1.0), (r"0.\overline{3}", "0.3", 0.0), (r"0.3\overline{}", "0.3", 0.0)],
)  # fmt: skip
def test_repeating_decimals_are_exact_or_not_checked(answer, gold, score):
    acc = get_reward("math_accuracy")
    assert acc(completions=[rf"$\boxed{{{answer}}}$"], answer=[gold]) == [score]
    acc.close()


BYPASSES = {
    "builtins by subscript": "__builtins__['exec']('import os')",
    "loader": "__loader__.load_module('o' + 's').system('ls')",
    "match class pattern": "match ():\n    case object(__class__=c):\n        pass",
    "frame walk": "g = (i for i in [1])\nf = g.gi_frame.f_back.f_globals",
    "traceback frame": "try:\n    1 / 0\nexcept Exception as e:\n    e.__traceback__.tb_frame.f_globals",
    "format string": "'{0.__class__.__base__}'.format(1)",
    "attribute name in a string": "import operator\noperator.attrgetter('__globals__')",
    "filler in a name": "import\u3164os",
    "syntax error beside a disallowed name": "import os\nx = (",
}


@pytest.mark.parametrize("code", BYPASSES.values(), ids=BYPASSES.keys())
def test_code_syntax_closes_the_cheap_bypasses(code):
    syntax = get_reward("code_syntax", allow_imports=True, disallowed_modules=("os", "sys"))
    assert syntax(completions=[f"<code>{code}</code>"]) == [0.0]


def test_code_syntax_checks_every_block_so_a_harmless_one_hides_nothing():
    syntax = get_reward("code_syntax")
    hidden = "<code>print('hello')</code>\nand also:\n```python\nimport os\nos.system('rm -rf ~')\n```"
    assert syntax(completions=[hidden, "<code>print('hello')</code>"]) == [0.0, 1.0]
    assert syntax(completions=["<code>print(1)</code><code>import subprocess"]) == [0.0]  # an unclosed block too


# -- correctness on real data ------------------------------------------------------------------------------------

PLACEHOLDER_PROMPT = r"What number goes in the box so that $\boxed{\phantom{2}} \times 4 = 20$?"


@pytest.mark.parametrize(
    "completion",
    [r"We need $\boxed{\phantom{2}} \times 4 = 20$, so the number in $\boxed{\phantom{2}}$ is $\boxed{5}$.",
     r"Restating: $\boxed{\phantom{2}} \times 4 = 20$. Dividing, $\boxed{5}$.",
     r"The blank $\boxed{\square}$ holds $\boxed{5}$.", r"Fill $\boxed{}$ with $\boxed{5}$.",
     r"Fill $\boxed{\_}$: the answer is $\boxed{5}$."],
)  # fmt: skip
def test_placeholders_and_restated_prompt_boxes_are_not_answers(completion):
    acc = get_reward("math_accuracy")
    assert acc(prompts=[PLACEHOLDER_PROMPT], completions=[completion], answer=["5"]) == [1.0]
    assert acc(prompts=[PLACEHOLDER_PROMPT], completions=[completion.replace("{5}", "{6}")], answer=["5"]) == [0.0]
    acc.close()


def test_a_box_of_the_prompt_is_an_answer_when_it_is_the_only_one():
    acc = get_reward("math_accuracy")
    asked = r"Is it $\boxed{5}$ or $\boxed{6}$?"
    assert acc(prompts=[asked], completions=[r"It is $\boxed{5}$."], answer=["5"]) == [1.0]
    assert acc(prompts=[asked], completions=[r"$\boxed{5}$ or $\boxed{6}$"], answer=["5"]) == [0.0]  # hedging
    acc.close()


@pytest.mark.parametrize("reference", ["forty two", "Answer is forty two.", "the answer is forty-two", "two dozen"])
def test_a_reference_in_words_is_not_math(reference):
    acc = get_reward("math_accuracy")
    [result] = acc.explain(completions=[r"\boxed{42}"], answer=[reference])
    assert result.score is None and "words" in result.reason
    scaled = get_reward("cosine_length", correctness=acc, unit="chars")
    assert scaled(completions=[r"\boxed{42}"], answer=[reference]) == [None]  # not -0.75 for every answer
    acc.close()


def test_single_word_references_still_work():
    acc = get_reward("math_accuracy")
    assert acc(completions=[r"\boxed{\text{Evelyn}}", r"\boxed{\text{Navin}}"], answer=["Evelyn"] * 2) == [1.0, 0.0]
    acc.close()


@pytest.mark.parametrize("name", ["think_format", "tag_count"])
def test_tag_names_may_be_written_with_brackets(name):
    perfect = "<think>2 and 2 make 4</think><answer>4</answer>"
    assert get_reward(name, think_tag="<think>", answer_tag="<answer>")(completions=[perfect]) == [1.0]
    assert get_reward(name, think_tag="</think>", answer_tag=" answer ")(completions=[perfect]) == [1.0]


@pytest.mark.parametrize("bad", ["", "<>", "think tag", "<think", "a>b", "1think", "<<think>>"])
def test_a_tag_name_that_cannot_be_one_is_a_clear_error(bad):
    with pytest.raises(RewardConfigError, match="think_tag must be a tag name"):
        get_reward("think_format", think_tag=bad)
    with pytest.raises(RewardConfigError, match="think_tag must be a tag name"):
        get_reward("countdown", think_tag=bad)
