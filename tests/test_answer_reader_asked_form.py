"""An answer equal in value but not in the form the problem asks for scores 0: right and wrong twins.

"Express your answer as a common fraction" asks for lowest terms and no decimal point; "simplest radical
form" for no decimal; "as a decimal" for no fraction of integers. Where the problem asks for no form, for
either of two, or the reference itself is not in the form asked, the value alone decides.
"""

from __future__ import annotations

import pytest

from rewardsmith import get_reward

ACC = get_reward("math_accuracy", timeout=None)

FRACTION = "What is $x$? Express your answer as a common fraction."
NOTHING = "What is $x$?"


@pytest.mark.parametrize(
    ("prompt", "predicted", "gold", "expected"),
    [
        (FRACTION, r"\frac{3}{4}", r"\frac{3}{4}", 1.0),
        (FRACTION, r"\frac{6}{8}", r"\frac{3}{4}", 0.0),
        (FRACTION, r"\frac68", r"\frac{3}{4}", 0.0),
        (FRACTION, "6/8", r"\frac{3}{4}", 0.0),
        (FRACTION, "0.75", r"\frac{3}{4}", 0.0),
        (FRACTION, r"\frac{3}{4}", "0.75", 1.0),  # the reference is not a common fraction: the value decides
        (NOTHING, "0.75", r"\frac{3}{4}", 1.0),
        (NOTHING, r"\frac{6}{8}", r"\frac{3}{4}", 1.0),
        ("Write it in lowest terms.", r"-\dfrac{10}{4}", r"-\frac{5}{2}", 0.0),
        ("Write it in lowest terms.", r"-\dfrac{5}{2}", r"-\frac{5}{2}", 1.0),
        ("Express your answer as a simplified common fraction.", r"-\frac{58}{87}", r"-\dfrac{2}{3}", 0.0),
        ("Express your answer as a common fraction in terms of $\\pi$.", r"10.5\pi", r"\frac{21}{2}\pi", 0.0),
        ("Express your answer as a common fraction in terms of $\\pi$.", r"\frac{21\pi}{2}", r"\frac{21}{2}\pi", 1.0),
        ("Express your answer in simplest radical form.", r"2\sqrt{2}", r"2\sqrt{2}", 1.0),
        ("Express your answer in simplest radical form.", r"\frac{4}{2}\sqrt{2}", r"2\sqrt{2}", 0.0),
        ("Express your answer as a decimal to the nearest tenth.", "2.5", "2.5", 1.0),
        ("Express your answer as a decimal to the nearest tenth.", r"\frac{5}{2}", "2.5", 0.0),
        ("Express your answer as a decimal or a common fraction.", "0.75", r"\frac{3}{4}", 1.0),
        ("Express your answer as a decimal or a common fraction.", r"\frac{3}{4}", "0.75", 1.0),
    ],
)
def test_the_form_asked_for(prompt, predicted, gold, expected):
    completion = f"So the answer is $\\boxed{{{predicted}}}$."
    assert ACC(completions=[completion], answer=[gold], prompts=[prompt])[0] == expected


def test_a_chat_prompt_asks_for_its_form_too():
    prompt = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": FRACTION}]
    scores = ACC(
        completions=[r"$\boxed{0.75}$", r"$\boxed{\frac{3}{4}}$"], answer=[r"\frac{3}{4}"] * 2, prompts=[prompt] * 2
    )
    assert scores == [0.0, 1.0]


def test_the_reason_names_the_form():
    result = ACC.check(r"$\boxed{\frac{6}{8}}$", answer=r"\frac{3}{4}", prompt=FRACTION)
    assert result.score == 0.0 and "asks for a fraction in lowest terms" in result.reason


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        (r"$\boxed{\frac{3}{4} = 0.75}$", 1.0),
        (r"$\boxed{0.75 = \frac{3}{4}}$", 1.0),
        (r"$\boxed{0.75 \approx \frac{6}{8}}$", 0.0),
        (r"$\boxed{x = 0.75}$", 0.0),
    ],
)
def test_an_answer_in_the_form_asked_and_another_is_in_the_form(completion, expected):
    assert ACC(completions=[completion], answer=[r"\frac{3}{4}"], prompts=[FRACTION])[0] == expected
