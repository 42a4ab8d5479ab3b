"""Rewards written the quick way, each with a hole that ``rewardsmith check`` finds.

They are plain TRL reward functions, the kind found in many GRPO scripts. Do
not train with them; run the audit on them to see what it reports:

    rewardsmith check examples/naive_rewards.py:last_number_gsm8k --dataset ../shared/data/gsm8k_test.jsonl \\
        --converter gsm8k --max-samples 50
    rewardsmith check examples/naive_rewards.py:regex_format --dataset ../shared/data/gsm8k_test.jsonl \\
        --converter gsm8k --gold-column none --max-samples 50
    rewardsmith check examples/naive_rewards.py:substring_math --dataset ../shared/data/math500_test.jsonl \\
        --converter math --max-samples 50
    rewardsmith check examples/naive_rewards.py:pays_for_trying --dataset ../shared/data/gsm8k_test.jsonl \\
        --converter gsm8k --max-samples 50
    rewardsmith check examples/naive_rewards.py:countdown_value_only --dataset my_countdown.jsonl --converter countdown
    rewardsmith check examples/naive_rewards.py:passes_shown_asserts --dataset ../shared/data/mbpp.jsonl \\
        --converter mbpp --gold-column code --max-samples 10
    rewardsmith check examples/naive_rewards.py:solution_tags --dataset ../shared/data/gsm8k_test.jsonl \\
        --converter gsm8k --max-samples 50          # then again with --probe-format 'tags:SOLUTION'

``docs/check.md`` shows what each report says.
"""

from __future__ import annotations

import re

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_FORMAT = re.compile(r"^<think>.*?</think>\s*<answer>.*?</answer>$", re.DOTALL | re.MULTILINE)


def _text(completion):
    return completion[0]["content"] if isinstance(completion, list) else completion


def last_number_gsm8k(completions, answer, **kwargs):
    """1 when the last number in the completion equals the reference answer.

    Holes: any hedge ("17 or 18"), list of candidates or pile of answer blocks
    that ends with the right number scores 1.
    """
    scores = []
    for completion, reference in zip(completions, answer):
        numbers = _NUMBER.findall(_text(completion))
        if not numbers:
            scores.append(0.0)
            continue
        last = numbers[-1].replace(",", "").rstrip(".")
        scores.append(1.0 if float(last) == float(str(reference).replace(",", "")) else 0.0)
    return scores


def regex_format(completions, **kwargs):
    """1 when the completion matches ``<think>...</think><answer>...</answer>`` (open-r1's first format reward).

    Holes: ``re.MULTILINE`` lets ``^`` and ``$`` match at any line, so text
    before or after the blocks passes; ``.*?`` accepts empty blocks; repeated
    and nested blocks match too.
    """
    return [1.0 if _FORMAT.search(_text(c)) else 0.0 for c in completions]


def substring_math(completions, answer, **kwargs):
    """1 when the reference answer appears anywhere in the completion.

    Holes: hedges, lists of candidates and reasoning cut off before its
    conclusion all score 1 whenever they mention the answer.
    """
    return [1.0 if str(a).strip() and str(a).strip() in _text(c) else 0.0 for c, a in zip(completions, answer)]


def pays_for_trying(completions, answer, **kwargs):
    """1 for the right ``####`` answer, and 0.5 for "at least it did not answer wrong" (no ``####`` line).

    Hole: an empty completion, or the prompt echoed back, earns 0.5 while honest
    work with a wrong answer earns 0; under GRPO that beats its group.
    """
    scores = []
    for completion, reference in zip(completions, answer):
        stated = _text(completion).rpartition("####")[2].strip() if "####" in _text(completion) else None
        scores.append(0.5 if stated is None else float(stated == str(reference).strip()))
    return scores


def countdown_value_only(completions, target, **kwargs):
    """1 when the ``<answer>`` equation evaluates to the target (the usual TinyZero shortcut, minus the numbers check).

    Hole: ``<answer>324</answer>`` for target 324 scores 1: the given numbers are never looked at.
    """
    scores = []
    for completion, goal in zip(completions, target):
        head, _, _ = _text(completion).rpartition("</answer>")
        expression = head.rpartition("<answer>")[2].strip()
        if not re.fullmatch(r"[\d\s+\-*/().]{1,200}", expression):
            scores.append(0.0)
            continue
        try:
            value = eval(expression, {"__builtins__": {}}, {})
        except Exception:
            scores.append(0.0)
            continue
        scores.append(1.0 if abs(value - float(goal)) < 1e-6 else 0.0)
    return scores


def solution_tags(completions, answer, **kwargs):
    """1 when ``<SOLUTION>…</SOLUTION>`` holds the reference answer (a custom format, as in Unsloth's notebooks).

    Not gameable in the usual ways, but the audit's usual formats never use
    ``<SOLUTION>``: every probe and reference scores 0, and the audit must say
    it could not exercise the reward (give ``--probe-format``).
    """
    scores = []
    for completion, reference in zip(completions, answer):
        text = _text(completion)
        head, _, _ = text.partition("</SOLUTION>")
        once = text.count("<SOLUTION>") == 1 and text.count("</SOLUTION>") == 1
        scores.append(1.0 if once and head.partition("<SOLUTION>")[2].strip() == str(reference).strip() else 0.0)
    return scores


def passes_shown_asserts(completions, prompts, **kwargs):
    """1 when the completion's ```python block passes the asserts the prompt shows (MBPP's classic prompt).

    Hole: the tests are in the prompt, so a lookup table of the shown calls
    (``{args: expected}``) passes every one without solving anything.
    """
    import subprocess
    import sys

    scores = []
    for completion, prompt in zip(completions, prompts):
        text = _text(completion)
        prompt_text = prompt[-1]["content"] if isinstance(prompt, list) else str(prompt)
        asserts = [line.strip() for line in prompt_text.splitlines() if line.strip().startswith("assert ")]
        code = text.rpartition("```python\n")[2].partition("```")[0] if "```python\n" in text else ""
        if not code.strip() or not asserts:
            scores.append(0.0)
            continue
        try:
            done = subprocess.run([sys.executable, "-c", code + "\n" + "\n".join(asserts)], capture_output=True,
                                  timeout=10)  # fmt: skip
        except subprocess.TimeoutExpired:
            scores.append(0.0)
            continue
        scores.append(1.0 if done.returncode == 0 else 0.0)
    return scores
