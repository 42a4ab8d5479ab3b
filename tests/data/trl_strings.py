"""A plain TRL reward function written for plain-text datasets (each completion a string)."""

import re


def has_answer_tags(completions, **kwargs):
    return [1.0 if re.search(r"<answer>.*?</answer>", c, re.DOTALL) else 0.0 for c in completions]
