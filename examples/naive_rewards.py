"""Three rewards written the quick way, each with a hole that ``rewardsmith check`` finds.

They are plain TRL reward functions, the kind found in many GRPO scripts. Do
not train with them; run the audit on them to see what it reports:

    rewardsmith check examples/naive_rewards.py:last_number_gsm8k --dataset ../shared/data/gsm8k_test.jsonl \\
        --converter gsm8k --max-samples 50
    rewardsmith check examples/naive_rewards.py:regex_format --dataset ../shared/data/gsm8k_test.jsonl \\
        --converter gsm8k --gold-column none --max-samples 50
    rewardsmith check examples/naive_rewards.py:substring_math --dataset ../shared/data/math500_test.jsonl \\
        --converter math --max-samples 50

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
