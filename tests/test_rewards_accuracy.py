"""gsm8k_accuracy and math_accuracy: extraction, normalisation, hedging, real data, and hard timeouts."""

from __future__ import annotations

import json
import time

import pytest

from rewardsmith import get_reward

GSM = get_reward("gsm8k_accuracy")


@pytest.mark.parametrize(
    ("completion", "gold", "expected"),
    [
        ("#### 1,000", "1000", 1.0),
        ("The answer is $5.", "5", 1.0),
        ("Answer: 5.00", "5", 1.0),
        ("A: -3", "-3", 1.0),
        ("so it is 1/2 of the cake. #### 1/2", "0.5", 1.0),
        (r"\boxed{\frac{1}{2}}", "0.5", 1.0),
        ("<answer>18 dollars</answer>", "18", 1.0),
        ("<answer>9 * 2 = 18</answer>", "18", 1.0),
        ("#### 18.", "18", 1.0),
        (r"\boxed{1{,}000}", "1,000", 1.0),
        ("#### 123456789012345678901234567890", "123456789012345678901234567890", 1.0),
        ("#### 123456789012345678901234567891", "123456789012345678901234567890", 0.0),
        ("#### 120006", "120000", 0.0),
        ("#### 120000", "Total: 100000 + 20000 = 120000\n#### 120000", 1.0),
        ("#### 3.333", "3.33", 1.0),
        ("#### 3.3", "3.33", 0.0),
    ],
)
def test_gsm8k_normalisation(completion, gold, expected):
    assert GSM(completions=[completion], answer=[gold]) == [expected]


@pytest.mark.parametrize(
    ("completion", "why"),
    [
        (r"\boxed{18} \boxed{20}", "two boxed answers"),
        ("#### 18\n#### 20", "two #### answers"),
        ("<answer>18</answer> #### 20", "answer tag and #### disagree"),
        ("<answer>18 or 20</answer>", "two numbers in one answer"),
        ("<answer>eighteen</answer>", "a marked answer with no number does not fall back to the text"),
        ("18 is close, but #### 20", "the marked answer wins over a number in the text"),
        ("<think>it is 18</think> #### 20", "the reasoning's numbers do not count"),
        ("", "empty"),
    ],
)
def test_gsm8k_does_not_reward_hedging_or_stray_numbers(completion, why):
    assert GSM(completions=[completion], answer=["18"]) == [0.0], why


def test_gsm8k_fallback_last_number_is_a_setting():
    text = "she sells 9 eggs for 2 dollars each, 18 in all"
    assert GSM(completions=[text], answer=["18"]) == [1.0]
    assert get_reward("gsm8k_accuracy", fallback_last_number=False)(completions=[text], answer=["18"]) == [0.0]


def test_gsm8k_unusable_reference_is_not_scored_and_column_is_configurable():
    assert GSM(completions=["#### 1"], answer=["no number here"]) == [None]
    custom = get_reward("gsm8k_accuracy", answer_column="gold")
    assert custom(completions=["#### 7"], gold=["7"]) == [1.0]
    assert custom.required_columns == ["gold"]


def test_gsm8k_every_reference_solution_matches_its_own_answer(shared_data):
    rows = [json.loads(line) for line in (shared_data / "gsm8k_test.jsonl").read_text().splitlines()]
    solutions = [r["answer"] for r in rows]
    golds = [s.rsplit("####", 1)[1].strip() for s in solutions]
    assert GSM(completions=solutions, answer=golds) == [1.0] * len(rows)
    shifted = golds[1:] + golds[:1]
    accepted = sum(s == 1.0 for s, g, o in zip(GSM(completions=solutions, answer=shifted), golds, shifted) if g != o)
    assert accepted == 0


# -- math ---------------------------------------------------------------------------------------------

MATH = get_reward("math_accuracy", timeout=None)  # in this process: fast, deterministic examples


@pytest.mark.parametrize(
    ("completion", "gold"),
    [
        (r"The area is $\boxed{7\pi}$.", r"7\pi"),
        (r"\boxed{\frac{1}{9}}", r"\dfrac{1}{9}"),
        (r"\boxed{10000}", r"10{,}000"),
        (r"\boxed{0.5}", r"\frac12"),
        (r"\boxed{\left( 3, \frac{\pi}{2} \right)}", r"\left( 3, \frac{\pi}{2} \right)"),
        (r"so the final answer is $\sqrt{2}/2$.", r"\frac{\sqrt{2}}{2}"),
        (r"<answer>$x^2+2x+1$</answer>", r"(x+1)^2"),
        (r"<think>maybe \boxed{3}</think> it is \boxed{4}", "4"),
        (r"\boxed{4} and again \boxed{4.0}", "4"),
        (r"Full solution ... \boxed{12}", r"The total is $\boxed{12}$."),
    ],
)
def test_math_accepts_equivalent_final_answers(completion, gold):
    assert MATH(completions=[completion], answer=[gold]) == [1.0]


@pytest.mark.parametrize(
    ("completion", "why"),
    [
        ("The result is 7 after all.", "a number in the text is not an answer"),
        (r"\boxed{7} or maybe \boxed{8}", "hedging between boxed answers"),
        (r"<answer>7</answer> \boxed{8}", "answer block and box disagree"),
        (r"\boxed{}", "empty box"),
        ("<answer>7", "unbalanced answer tag"),
        ("", "empty"),
    ],
)
def test_math_only_the_final_answer_counts(completion, why):
    assert MATH(completions=[completion], answer=["8"]) == [0.0], why


def test_math_answers_inside_the_reasoning_do_not_count():
    assert MATH(completions=[r"\boxed{7}</think> so \boxed{8}"], answer=["7"]) == [0.0]
    assert MATH(completions=[r"\boxed{7}</think> so \boxed{8}"], answer=["8"]) == [1.0]


def test_math_reference_from_solution_column_and_unparseable_reference():
    assert MATH(completions=[r"\boxed{5}"], solution=[r"so $x=\boxed{5}$"]) == [1.0]
    assert MATH(completions=[r"\boxed{5}"], answer=[r"\frac{"]) == [None]
    assert get_reward("math_accuracy", answer_column="gold", timeout=None)(completions=[r"\boxed{5}"], gold=["5"]) == [
        1.0
    ]


def test_math_500_reference_solutions(shared_data):
    rows = [json.loads(line) for line in (shared_data / "math500_test.jsonl").read_text().splitlines()]
    solutions = [r["solution"] for r in rows]
    golds = [r["answer"] for r in rows]
    own = MATH(completions=solutions, answer=golds)
    assert sum(s == 1.0 for s in own) / len(rows) >= 0.995
    others = []
    for i in range(len(rows)):
        j = (i + 1) % len(rows)
        while golds[j].strip() == golds[i].strip():
            j = (j + 1) % len(rows)
        others.append(golds[j])
    accepted = MATH(completions=solutions, answer=others)
    assert sum(s == 1.0 for s in accepted) / len(rows) <= 0.005


@pytest.mark.slow
def test_math_hard_timeout_bounds_hostile_answers():
    hostile = get_reward("math_accuracy", timeout=2.0)
    completions = [
        r"\boxed{" + "9^{" * 12 + "9" + "}" * 12 + "}",
        r"\boxed{" + r"\sqrt{" * 400 + "2" + "}" * 400 + "}",
        r"\boxed{" + "+".join(f"x_{{{i}}}^{{{i}}}" for i in range(400)) + "}",
        r"\boxed{(x+1)^{100000}}",
    ]
    for completion in completions:
        # An easy sample first, untimed: it waits for the worker that replaces a timed-out one to start
        # (and import sympy), so the bound below measures the timeout, not start-up on a loaded machine.
        assert hostile(completions=[r"\boxed{\frac{1}{3}}"], answer=[r"\frac{1}{3}"]) == [1.0]
        started = time.monotonic()
        scores = hostile(completions=[completion], answer=[r"\frac{1}{3}"])
        assert time.monotonic() - started < 2.0 + 20.0  # the timeout fired: each of these runs for minutes or more
        assert scores[0] in (0.0, None)
    assert hostile(completions=[r"\boxed{\frac{1}{3}}"], answer=[r"\frac{1}{3}"]) == [1.0]  # and it still works
    hostile.close()


@pytest.mark.slow
def test_math_with_two_workers_matches_in_process_scores():
    completions = [rf"\boxed{{{i % 5}}}" for i in range(40)] + [rf"\boxed{{\frac{{{i}}}{{2}}}}" for i in range(10)]
    golds = [str(i % 3) for i in range(50)]
    parallel = get_reward("math_accuracy", workers=2)
    assert parallel(completions=completions, answer=golds) == MATH(completions=completions, answer=golds)
    parallel.close()
