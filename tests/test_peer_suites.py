"""The reward test cases of open-r1 and TRL, replayed against our rewards: every case of a reward we share.

Sources (the cases are facts: inputs, settings and expected values; the test code is ours):

* open-r1 ``tests/test_rewards.py`` (huggingface/open-r1 main): ``accuracy_reward``, ``format_reward``,
  ``reasoning_steps_reward``, ``get_cosine_scaled_reward``, ``len_reward``, ``get_repetition_penalty_reward``,
  ``tag_count_reward``, ``get_soft_overlong_punishment``. (Its code-format and code-execution rewards have no
  counterpart here.)
* TRL ``tests/test_rewards.py`` (huggingface/trl main) and the docstring examples of ``trl/rewards`` in TRL 1.16:
  ``think_format_reward``, ``get_soft_overlong_punishment``, ``get_repetition_penalty_reward``,
  ``accuracy_reward``, ``reasoning_accuracy_reward``, ``get_cosine_scaled_reward``.

Each peer setting is mapped to ours (``max_completion_len`` -> ``max_length``, a token-id reward -> ``unit="tokens"``,
TRL's think format -> ``think_format`` with ``answer_tag=None``, ...). A case checks one value the peer asserts (or
the relation it asserts between values). The cases where we differ on purpose are listed in ``DELIBERATE`` and in
docs/rewards.md, each with its reason; every other case must agree.
"""

from __future__ import annotations

import pickle
import threading
from typing import Any

import pytest
from peer_cases import Case, msg

from rewardsmith import get_reward
from rewardsmith.core.errors import RewardConfigError

BOXED_63 = r"\boxed{\frac{63}{400}}"
BOXED_64 = r"\boxed{\frac{64}{400}}"
FRAC_63 = r"\frac{63}{400}"


MATH = {"timeout": None}  # math_accuracy in this process (the peers' tests run in one process too)
ACC = ("math_accuracy", MATH)
COSINE_CHARS = {"correctness": {"name": "math_accuracy", "kwargs": MATH}}
LEN_R1 = {"correctness": {"name": "math_accuracy", "kwargs": MATH}, "unit": "chars"}
TRL_THINK = {"answer_tag": None}


def _pad(text: str, length: int) -> str:
    return text + " " * (length - len(text))


OPEN_R1 = [
    # accuracy_reward
    Case("open-r1 test_accuracy_reward_correct_answer", *ACC, [msg(BOXED_63)], {"solution": [FRAC_63]}, [1.0]),
    Case("open-r1 test_accuracy_reward_wrong_answer", *ACC, [msg(BOXED_64)], {"solution": [FRAC_63]}, [0.0]),
    Case("open-r1 test_accuracy_reward_wrong_answer_no_latex", *ACC, [msg(r"\boxed{3}")], {"solution": ["6"]}, [0.0]),
    Case("open-r1 test_multiple_completions", *ACC, [msg(BOXED_63), msg(BOXED_64)], {"solution": [FRAC_63] * 2},
         [1.0, 0.0]),
    # format_reward (think then answer, nothing else)
    Case("open-r1 test_format_reward_correct", "think_format", {},
         [msg("<think>\nSome reasoning\n</think>\n<answer>\nThe answer\n</answer>")], expected=[1.0]),
    *[
        Case(f"open-r1 test_format_reward_incorrect {text!r}", "think_format", {}, [msg(text)], expected=[0.0])
        for text in [
            "<think>Only thinking</think>",
            "<answer>Only answer</answer>",
            "No tags at all",
            "<think>Missing closing</think><answer>Missing closing",
            "<think>Wrong order</answer><answer>Wrong order</think>",
        ]
    ],
    Case("open-r1 test_format_reward_specific_multiline", "think_format", {}, [msg(
        "<think>\nI will count each distinct object in the image:\n1. Purple scooter\n2. Red bicycle\n3. Green "
        "motorcycle\n4. Gray sedan\n5. Yellow school bus\n6. Small green double-decker bus\n7. Small red car\n8. "
        "Small purple car\n9. Small gray dirt bike\n\nThere are 9 distinct objects in total.\n</think>\n<answer>\n9"
        "\n</answer>")], expected=[1.0]),
    # reasoning_steps_reward
    *[
        Case(f"open-r1 test_reasoning_steps_reward {text!r}", "reasoning_steps", {}, [msg(text)], expected=[value])
        for text, value in [
            ("Step 1: First step\nStep 2: Second step\nStep 3: Third step", 1.0),
            ("First, we do this.\nSecond, we do that.\nFinally, we conclude.", 1.0),
            ("Step 1: Only step", 1 / 3),
            ("First, we do this.\nFinally, we conclude.", 2 / 3),
            ("Just plain text without any clear steps", 0.0),
        ]
    ],
    # get_cosine_scaled_reward (lengths in characters, max_len 100)
    *[
        Case(f"open-r1 test_cosine_scaled_reward {content} {length}", "cosine_length",
             {**COSINE_CHARS, "max_length": 100, "unit": "chars"}, [msg(_pad(content, length))],
             {"solution": [FRAC_63]}, [value], places=2)
        for content, length, value in [(BOXED_63, 20, 0.943), (BOXED_63, 80, 0.547), (BOXED_64, 20, -0.942),
                                       (BOXED_64, 80, -0.547)]
    ],
    # len_reward (Kimi k1.5): the batch is one prompt's group
    Case("open-r1 test_same_length_responses", "group_length", LEN_R1, [msg(BOXED_63), msg(BOXED_64)],
         {"solution": [FRAC_63] * 2}, [0.0, 0.0]),
    Case("open-r1 test_different_lengths_correct_answers", "group_length", LEN_R1,
         [msg(BOXED_63), msg(BOXED_63 + "  " + "x" * 10)], {"solution": [FRAC_63] * 2},
         check=lambda r: r[0] > r[1] and round(abs(r[0] - 0.5), 7) == 0),
    Case("open-r1 test_different_lengths_incorrect_answers", "group_length", LEN_R1,
         [msg(BOXED_64), msg(BOXED_64 + "  " + "x" * 10)], {"solution": [FRAC_63] * 2},
         check=lambda r: r[0] <= 0 and r[1] <= 0 and r[0] > r[1]),
    Case("open-r1 test_mixed_correctness", "group_length", LEN_R1,
         [msg(BOXED_63), msg(BOXED_63 + "  " + "x" * 10), msg(BOXED_64), msg(BOXED_64 + "  " + "x" * 10)],
         {"solution": [FRAC_63] * 4},
         check=lambda r: r[0] > 0 and r[2] > r[1] and r[1] >= r[3] and r[2] <= 0 and r[3] <= 0 and r[0] > r[1]
         and r[2] > r[3]),
    Case("open-r1 test_unparseable_solution", "group_length", LEN_R1,
         [msg(r"\boxed{answer}"), msg(r"\boxed{answer} " + "x" * 10)], {"solution": ["unparseable_latex"] * 2},
         check=lambda r: r[0] is not None and r[1] is not None and r[0] > r[1] and round(abs(r[0] - 0.5), 7) == 0),
    # get_repetition_penalty_reward (words)
    *[
        Case(f"open-r1 TestRepetitionPenaltyReward {text!r} n={n}", "repetition", {"ngram_size": n, "max_penalty": p},
             [msg(text)], expected=[value])
        for text, n, p, value in [
            ("this is a test sentence", 2, -1.0, 0.0),
            ("this this this this this", 2, -1.0, -0.75),
            ("this is a this is a test", 2, -1.0, -1 / 3),
            ("this is a test", 3, -0.5, 0.0),
            ("test test test test", 3, -0.5, -0.25),
            ("", 2, -1.0, 0.0),
            ("this is a this is a test", 3, -2.0, -0.4),
            ("word", 3, -1.0, 0.0),
            ("two words", 3, -1.0, 0.0),
            ("three different words", 3, -1.0, 0.0),
            ("word word word word", 3, -1.0, -0.5),
            ("one two one two", 3, -1.0, 0.0),
            ("A B C A B", 3, -0.5, 0.0),
            ("A B C A B C", 3, -1.0, -0.25),
            ("A B C A B C E F G A B C A B C", 3, -1.0, -0.38461538),
            ("A B C D E F G H I J K L", 3, -1.0, 0.0),
            ("that that that that that", 2, -1.0, -0.75),
        ]
    ],
    Case("open-r1 test_mixed_case", "repetition", {"ngram_size": 2}, [msg("This is A Test"), msg("this IS a test")],
         check=lambda r: r[0] == r[1]),
    Case("open-r1 test_full_repetition_with_language zh", "repetition",
         {"ngram_size": 2, "max_penalty": -1.0, "language": "zh"}, [msg("这个这个这个这个这个")], expected=[-0.75]),
    # tag_count_reward
    *[
        Case(f"open-r1 test_tag_count_rewards {text!r}", "tag_count", {}, [msg(text)], expected=[value])
        for text, value in [
            ("<think>\nSome reasoning\n</think>\n<answer>\nThe answer\n</answer>", 1.0),
            ("Some reasoning\n</think>\n<answer>\nThe answer\n</answer>", 0.75),
            ("<think>\nSome reasoning\n<answer>\nThe answer\n</answer>", 0.75),
            ("<think>\nSome reasoning\n</think>\nThe answer\n</answer>", 0.75),
            ("<think>\nSome reasoning\n</think>\n<answer>\nThe answer", 0.75),
            ("Some reasoning\nThe answer", 0.0),
        ]
    ],
    # get_soft_overlong_punishment (token ids)
    *[
        Case(f"open-r1 test_soft_overlong_punishment {n} tokens", "soft_overlong",
             {"max_length": 100, "cache_length": 20}, [""], {"completion_ids": [[1] * n]}, [value], places=4)
        for n, value in [(50, 0.0), (110, -1.0), (90, -0.5)]
    ],
]  # fmt: skip

TRL_ACC = ("math_accuracy", MATH)
TRL_REASONING = ("math_accuracy", {**MATH, "reasoning_delimiters": ["</think>"]})
TRL_COSINE = {"correctness": {"name": "math_accuracy", "kwargs": MATH}, "max_length": 100, "unit": "tokens"}
THIRD = r"\boxed{\frac{1}{3}}"
HALF = r"\boxed{\frac{1}{2}}"


def _cosine(completions: list[str], ids: list[int], expected: list[Any], settings: dict | None = None) -> dict:
    return {
        "completions": [msg(c) for c in completions],
        "columns": {"solution": [r"\frac{1}{3}"] * len(completions), "completion_ids": [[1] * n for n in ids]},
        "expected": expected,
        "settings": {**TRL_COSINE, **(settings or {})},
        "places": 4,
    }


TRL = [
    # think_format_reward: the reasoning block starts the completion; free text may follow
    *[
        Case(f"TRL test_valid_format {text!r}", "think_format", TRL_THINK, [msg(text)], expected=[1.0])
        for text in [
            "<think>This is my reasoning.</think>This is my answer.",
            "<think>\nThis is my reasoning.\n</think>\nThis is my answer.",
            "<think>\nThis is\nmy reasoning.\n</think>\nThis is my answer.",
            "<think>\nThis is <some tag> my reasoning.</think>\nThis is my answer.",
            "<think></think>\nThis is my answer.",
        ]
    ],
    *[
        Case(f"TRL test_invalid_format {text!r}", "think_format", TRL_THINK, [msg(text)], expected=[0.0])
        for text in [
            "<think>\nThis is my reasoning.\nThis is my answer.",
            "<think>This is my reasoning.\nThis is my answer.",
            "This is my reasoning. This is my answer.",
            "This is my reasoning.\nThis is my answer.",
            "This is my reasoning.</think>\nThis is my answer.",
            "This is my reasoning.</think>This is my answer.",
            "This<think>is my reasoning.</think>\nThis is my answer.",
            "<think>This is<think>my reasoning.</think></think>This is my answer.",
            "<think>This is</think>\nmy\n<think>reasoning.</think>\nThis is my answer.",
        ]
    ],
    Case("TRL test_mixed_format", "think_format", TRL_THINK, [msg(t) for t in [
        "<think>This is my reasoning.</think>This is my answer.",
        "<think>\nThis is my reasoning.\n</think>\nThis is my answer.",
        "<think>This is my reasoning.\nThis is my answer.",
        "This is my reasoning. This is my answer."]], expected=[1.0, 1.0, 0.0, 0.0]),
    Case("TRL think_format_reward docstring", "think_format", TRL_THINK, [
        msg("<think>\nThis is my reasoning.\n</think>\nThis is my answer."),
        msg("<think>\nThis is my reasoning.\nThis is my answer.")], expected=[1.0, 0.0]),
    # get_soft_overlong_punishment
    *[
        Case(f"TRL test_soft_overlong_punishment {n} tokens", "soft_overlong",
             {"max_length": 100, "cache_length": 20}, [""], {"completion_ids": [[1] * n]}, [value], places=4)
        for n, value in [(50, 0.0), (110, -1.0), (90, -0.5)]
    ],
    Case("TRL get_soft_overlong_punishment docstring", "soft_overlong", {"max_length": 100, "cache_length": 20},
         [""], {"completion_ids": [[1] * 90]}, [-0.5]),
    # get_repetition_penalty_reward (token ids)
    *[
        Case(f"TRL TestRepetitionPenaltyReward {ids} n={n}", "repetition",
             {"ngram_size": n, "max_penalty": p, "unit": "tokens"}, [""] * len(ids), {"completion_ids": ids}, values)
        for ids, n, p, values in [
            ([[1, 2, 3, 4]], 2, -1.0, [0.0]),
            ([[5, 5, 5, 5, 5]], 2, -1.0, [-0.75]),
            ([[1, 2, 1, 2, 1, 2]], 2, -1.0, [-0.6]),
            ([[1, 2]], 3, -1.0, [0.0]),
            ([[1, 2, 3]], 3, -1.0, [0.0]),
            ([[]], 3, -1.0, [0.0]),
            ([[5, 5, 5, 5, 5]], 2, -0.5, [-0.375]),
            ([[1, 2, 3, 1, 2, 3]], 2, -1.0, [-0.4]),
            ([[1, 2, 3, 1, 2, 3]], 3, -1.0, [-0.25]),
            ([[1, 2, 3, 4], [5, 5, 5, 5, 5], [9]], 2, -1.0, [0.0, -0.75, 0.0]),
            ([[1, 2, 3, 4], [5, 5, 5, 5, 5]], 2, -1.0, [0.0, -0.75]),  # the docstring example
        ]
    ],
    Case("TRL test_extra_kwargs_are_ignored", "repetition", {"ngram_size": 2, "unit": "tokens"},
         [msg("5 5 5 5 5")], {"completion_ids": [[5, 5, 5, 5, 5]], "unknown_column": ["x"]}, [-0.75], prompts=["x"]),
    # accuracy_reward
    Case("TRL test_accuracy_reward_correct_answer", *TRL_ACC, [msg(BOXED_63), msg(BOXED_63)],
         {"solution": [FRAC_63, "63/400"]}, [1.0, 1.0]),
    Case("TRL test_accuracy_reward_wrong_answer", *TRL_ACC, [msg(BOXED_64)], {"solution": [FRAC_63]}, [0.0]),
    Case("TRL test_accuracy_reward_wrong_answer_no_latex", *TRL_ACC, [msg(r"\boxed{3}")], {"solution": ["6"]}, [0.0]),
    Case("TRL test_accuracy_reward_unparsable_gold", *TRL_ACC,
         [msg("Answer is forty two."), msg(r"Some other content. \boxed{43}.")],
         {"solution": ["Answer is forty two.", "Answer is forty three."]}, [None, None]),
    Case("TRL accuracy_reward docstring", *TRL_ACC, [msg(r"My answer is \boxed{\frac{1}{3}}"),
         msg(r"My answer is \boxed{\frac{1}{2}}")], {"solution": [r"\frac{1}{3}"] * 2}, [1.0, 0.0]),
    # reasoning_accuracy_reward
    Case("TRL test_correct_answer_yields_unit_reward", *TRL_REASONING,
         [msg(rf"<think> Reasoning content </think> {BOXED_63}"), msg(rf"Reasoning content </think> {BOXED_63}")],
         {"solution": [FRAC_63] * 2}, [1.0, 1.0]),
    Case("TRL test_correct_answer_with_custom_tags_yields_unit_reward", "math_accuracy",
         {**MATH, "reasoning_delimiters": ["</REASONING_END>"]},
         [msg(rf"<REASONING_START> Reasoning content </REASONING_END> {BOXED_63}")], {"solution": [FRAC_63]}, [1.0]),
    Case("TRL test_incorrect_answer_yields_zero_reward", *TRL_REASONING,
         [msg(rf"<think> Reasoning content </think> {BOXED_64}")], {"solution": [FRAC_63]}, [0.0]),
    Case("TRL test_correct_answer_in_reasoning_yields_zero_reward", *TRL_REASONING,
         [msg(r"<think> My answer is \boxed{42} </think> Some other text."),
          msg(r"<think> The answer is \boxed{42} </think> Here's a wrong answer: \boxed{43}.")],
         {"solution": [r"\boxed{42}"] * 2}, [0.0, 0.0]),
    Case("TRL test_incomplete_reasoning_yields_zero_reward", *TRL_REASONING,
         [msg(r"<think> Incomplete reasoning without closing tag"),
          msg(r"Correct answer \frac{63}{400} but completely missing reasoning content")],
         {"solution": [FRAC_63] * 2}, [0.0, 0.0]),
    Case("TRL test_unparsable_gold_solution_yields_none_reward", *TRL_REASONING,
         [msg(r"<think> Reasoning content </think> \boxed{42}")], {"solution": ["forty two"]}, [None]),
    Case("TRL reasoning_accuracy_reward docstring", *TRL_REASONING, [
        msg(r"<think> Reasoning content </think> The final answer is \boxed{\frac{1}{3}}"),
        msg(r"<think> Reasoning content </think> The final answer is \boxed{\frac{1}{2}}"),
        msg(r"<think> Reasoning content with partial answers \boxed{\frac{1}{3}} but no final answer")],
         {"solution": [r"\frac{1}{3}"] * 3}, [1.0, 0.0, 0.0]),
    # get_cosine_scaled_reward (lengths in tokens, max_len 100)
    Case("TRL test_correct_shorter_rewarded_more", "cosine_length", **_cosine([THIRD, THIRD], [25, 75],
         [0.92678, 0.57322])),
    Case("TRL test_wrong_longer_penalized_less", "cosine_length", **_cosine([HALF, HALF], [25, 75],
         [-0.92678, -0.57322])),
    Case("TRL test_midpoint_values", "cosine_length", **_cosine([THIRD, HALF], [50, 50], [0.75, -0.75])),
    Case("TRL test_correct_boundary_values", "cosine_length", **_cosine([THIRD, THIRD], [0, 100], [1.0, 0.5])),
    Case("TRL test_wrong_boundary_values", "cosine_length", **_cosine([HALF, HALF], [0, 100], [-1.0, -0.5])),
    Case("TRL test_length_exceeding_max_len_is_clamped", "cosine_length", **_cosine([THIRD, HALF], [200, 200],
         [0.5, -0.5])),
    Case("TRL test_unparsable_gold_yields_none", "cosine_length", completions=[msg(r"\boxed{42}")],
         columns={"solution": ["forty two"], "completion_ids": [[1] * 50]}, expected=[None], settings=TRL_COSINE),
    Case("TRL test_custom_value_bounds", "cosine_length", **_cosine([THIRD], [50], [1.0],
         {"min_value_correct": 0.0, "max_value_correct": 2.0})),
    Case("TRL get_cosine_scaled_reward docstring", "cosine_length", **_cosine([THIRD, HALF], [50, 50], [0.75, -0.75])),
]  # fmt: skip

CASES = OPEN_R1 + TRL

#: Cases where we differ on purpose (the same list, with reasons, is in docs/rewards.md).
DELIBERATE = {
    "open-r1 test_unparseable_solution": "an unparseable reference makes correctness unknown, so the length reward "
    "is None (not scored); open-r1 treats it as correct and gives the shortest completion 0.5",
    "TRL test_valid_format '<think></think>\\nThis is my answer.'": "empty reasoning scores 0 here: rewarding "
    "<think></think> teaches a model to skip reasoning",
    **{
        f"open-r1 test_cosine_scaled_reward {content} 80": "lengths in characters count a run of white space as one "
        "character, so the 60 padding spaces add nothing (a wrong answer padded with spaces would otherwise buy a "
        "smaller penalty); open-r1 counts every character"
        for content in (BOXED_63, BOXED_64)
    },
}


def _id(case: Case) -> str:
    return case.source


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_peer_case(case):
    scores = case.run()
    if case.source in DELIBERATE:
        assert not case.agrees(scores), f"{case.source} now agrees with the peer: take it off the deliberate list"
    else:
        assert case.agrees(scores), f"{case.source}: got {scores}, the peer expects {case.expected or 'a relation'}"


def test_agreement_count(capsys):
    agree = sum(case.agrees(case.run()) for case in CASES)
    with capsys.disabled():
        print(f"\npeer suites: {agree} of {len(CASES)} cases agree; {len(DELIBERATE)} differ on purpose")
    assert agree == len(CASES) - len(DELIBERATE)
    assert set(DELIBERATE) <= {case.source for case in CASES}


def test_positive_max_penalty_is_an_error_as_in_both_peers():
    # open-r1 and TRL: get_repetition_penalty_reward(ngram_size=2, max_penalty=1.0) raises ValueError
    for penalty in (1.0, 1.5, 0.5):
        with pytest.raises(ValueError, match="max_penalty"):
            get_reward("repetition", ngram_size=2, max_penalty=penalty)
    assert issubclass(RewardConfigError, ValueError)


def test_rewards_survive_pickling_as_in_trl():
    # TRL: the reward must survive pickling for the async GRPO rollout worker
    for name, settings, columns, expected in [
        ("repetition", {"ngram_size": 2, "unit": "tokens"}, {"completion_ids": [[5, 5, 5, 5, 5]]}, [-0.75]),
        ("cosine_length", TRL_COSINE, {"solution": [r"\frac{1}{3}"], "completion_ids": [[1] * 50]}, [0.75]),
    ]:
        reward = pickle.loads(pickle.dumps(get_reward(name, **settings)))
        assert reward(completions=[msg(THIRD)], **columns) == pytest.approx(expected)


def test_accuracy_in_a_worker_thread_as_in_trl():
    # TRL test_accuracy_reward_in_worker_thread: math-verify's signal-based timeouts must not break off the main thread
    results, errors = [], []

    def target():
        try:
            results.extend(get_reward("math_accuracy")(completions=[msg(THIRD)], solution=[r"\frac{1}{3}"]))
        except Exception as exc:  # pragma: no cover - the failure being tested for
            errors.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    assert not errors and results == [1.0]
