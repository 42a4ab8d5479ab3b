"""Rewards for the audit's tests: sound ones (no probe may flag them) and broken ones (each hole must be flagged)."""

from __future__ import annotations

import re
import time
from fractions import Fraction

from rewardsmith import RewardResult, reward

_INVISIBLE = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff\u00ad]")
_TAGS = re.compile(r"<(/?)(think|answer)>")
_ANSWER_TAGS = re.compile(r"<(/?)answer>")
_OTHER_MARKERS = re.compile(r"\\boxed\{([^{}]*)\}|####[ \t]*([^\n]*)")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")


def _visible(text: str) -> str:
    return _INVISIBLE.sub("", text).strip()


def _value(text: str) -> object:
    text = text.strip().replace(",", "").rstrip(".").strip("$ ")
    return Fraction(text) if _NUMBER.match(text) else " ".join(text.split())


def _stated(completion: str) -> list[str] | None:
    """Every answer the completion states, in linear time (``None`` for unbalanced answer tags)."""
    tags = [(m.group(1), m.start(), m.end()) for m in _ANSWER_TAGS.finditer(completion)]
    if [t[0] for t in tags] != ["", "/"] * (len(tags) // 2):
        return None
    stated = [completion[tags[i][2] : tags[i + 1][1]] for i in range(0, len(tags), 2)]
    return stated + [next(g for g in m.groups() if g is not None) for m in _OTHER_MARKERS.finditer(completion)]


@reward
def strict_answer(completion: str, answer: str) -> RewardResult:
    """Sound: exactly one stated final answer (one <answer>, \\boxed{} or ####), equal to the reference."""
    stated = _stated(completion)
    if stated is None:
        return RewardResult(0.0, "unbalanced answer tags")
    if len(stated) != 1:
        return RewardResult(0.0, f"{len(stated)} stated answers")
    got = _visible(stated[0])
    if not got:
        return RewardResult(0.0, "empty answer")
    ok = _value(got) == _value(str(answer))
    return RewardResult(float(ok), f"stated {got!r}")


@reward
def strict_format(completion: str) -> RewardResult:
    """Sound: <think>…</think> then <answer>…</answer>, once each, non-empty (invisible characters do not count),
    nothing outside."""
    tags = [(m.group(1), m.group(2)) for m in _TAGS.finditer(completion)]
    if tags != [("", "think"), ("/", "think"), ("", "answer"), ("/", "answer")]:
        return RewardResult(0.0, "tags out of shape")
    head, rest = completion.split("<think>", 1)
    think, rest = rest.split("</think>", 1)
    between, rest = rest.split("<answer>", 1)
    answer, tail = rest.split("</answer>", 1)
    if _visible(head) or _visible(between) or _visible(tail):
        return RewardResult(0.0, "text outside the blocks")
    if not _visible(think) or not _visible(answer):
        return RewardResult(0.0, "an empty block")
    return RewardResult(1.0, "well formed")


@reward
def any_number_matches(completion: str, answer: str) -> float:
    """Broken: 1 when any number in the completion equals the reference."""
    return float(any(_value(n) == _value(answer) for n in re.findall(r"-?\d+(?:\.\d+)?", completion)))


@reward
def rewards_length(completion: str) -> float:
    """Broken: longer is better, up to 2,000 characters."""
    return min(1.0, len(completion) / 2000)


@reward
def answer_tag_present(completion: str, answer: str) -> float:
    """Broken: reads the answer column, but only checks that an <answer> block exists."""
    return float("<answer>" in completion and "</answer>" in completion)


@reward
def quadratic_on_long_text(completion: str, answer: str) -> float:
    """Broken: fine on short text, hangs on long text (a stand-in for catastrophic backtracking)."""
    if len(completion) > 100_000:
        time.sleep(3600)
    return float(completion.strip().endswith(str(answer)))


@reward
def crashes_on_empty(completion: str, answer: str) -> float:
    """Broken: IndexError on a completion without words."""
    return float(completion.split()[-1].strip(".") == str(answer))


def slow_exact(completions, answer, **kwargs):
    """Sound but slow (0.1 s a call), for the Ctrl-C test."""
    time.sleep(0.1)
    return [float(str(c).strip().endswith(f"#### {a}")) for c, a in zip(completions, answer)]
