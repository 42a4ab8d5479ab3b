"""Format rewards: reasoning then answer, in tags.

``think_format`` checks the whole shape and scores 1 or 0; ``tag_count``
gives partial credit per tag. Both read the tags structurally (every tag
occurrence is found and the sequence checked), which closes the holes of
regex-only checks: repeated or nested blocks, junk after the closing tag
(``$`` under ``re.MULTILINE``), empty reasoning, and the opening ``<think>``
that a chat template already put in the prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.registry import register_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward
from rewardsmith.rewards._containers import Container, checked_containers, container, count, find_markers
from rewardsmith.rewards._text import has_content, visible_text

__all__ = ["TagCount", "ThinkFormat"]


def _expected(think_tag: str | None, answer_tag: str | None, prefilled_think: bool) -> list[tuple[str, bool]]:
    """The (container name, closing) sequence a well-formed completion shows."""
    if think_tag is None:
        return [(answer_tag, False), (answer_tag, True)] if answer_tag else []
    shape = [(think_tag, False), (think_tag, True)]
    if answer_tag is not None:
        shape += [(answer_tag, False), (answer_tag, True)]
    return shape[1:] if prefilled_think else shape


def _describe(tag: tuple[str, bool], boxes: dict[str, Container]) -> str:
    name, closing = tag
    return boxes[name].describe(closing)


def _name(setting: str | tuple[str, str] | None) -> str | None:
    return None if setting is None else container(setting).name


@register_reward("think_format", aliases=("format",))
@dataclass
class ThinkFormat(Reward):
    """Reasoning then answer: ``<think>...</think>`` then ``<answer>...</answer>``, exactly once each (1 or 0).

    Scores 0 for repeated or nested blocks, unclosed or unbalanced tags, an
    empty reasoning or answer, and an answer before the reasoning. ``strict``
    (default) allows only white space outside the blocks; lenient mode allows
    text between the blocks and after the answer (never before the
    reasoning: the reasoning starts the completion). With
    ``prefilled_think`` the chat template already opened ``<think>`` in the
    prompt, so the completion starts inside the reasoning and must not open
    it again. With ``think_tag=None`` only the answer block is expected (for
    models that do not reason in tags). With ``answer_tag=None`` only the
    reasoning block is expected, at the start, and free text may follow it
    (TRL's ``think_format_reward``, except that empty reasoning scores 0
    here). Tags are matched case-insensitively; names may be given with or
    without brackets (``"think"`` or ``"<think>"``), as a pair of different
    markers (``["<SOLUTION>", "</SOLUTION>"]``), or as a ``start_X`` opening
    whose closing is ``<end_X>`` (``"<start_working_out>"``). The completion is read
    as it is seen: invisible characters are not content (a block holding
    only a zero-width space is empty).

    Columns: none. Range: {0, 1}.

    >>> fmt = ThinkFormat()
    >>> fmt(completions=[
    ...     "<think>2 and 2 make 4</think>\\n<answer>4</answer>",
    ...     "<think>x</think><answer>4</answer><answer>5</answer>",   # two answers
    ...     "<think>x</think><answer>4</answer> thanks!",             # text after the answer
    ...     "<think></think><answer>4</answer>",                      # empty reasoning
    ... ])
    [1.0, 0.0, 0.0, 0.0]
    >>> ThinkFormat(strict=False)(completions=["<think>x</think>So: <answer>4</answer> thanks!",
    ...                                        "Sure. <think>x</think><answer>4</answer>"])  # text before: never
    [1.0, 0.0]
    >>> ThinkFormat(answer_tag=None)(completions=["<think>x</think>The answer is 4.", "4 <think>x</think>"])
    [1.0, 0.0]
    >>> ThinkFormat(prefilled_think=True).check("2 and 2 make 4</think><answer>4</answer>").score
    1.0
    >>> ThinkFormat(think_tag="reasoning", answer_tag="solution").check(
    ...     "<reasoning>r</reasoning><solution>s</solution>").score
    1.0
    >>> ThinkFormat(think_tag=None)(completions=["<answer>4</answer>", "4 <answer>4</answer>"])
    [1.0, 0.0]
    >>> unsloth = ThinkFormat(think_tag="<start_working_out>", answer_tag=["<SOLUTION>", "</SOLUTION>"])
    >>> good = "<start_working_out>2 and 2<end_working_out><SOLUTION>4</SOLUTION>"
    >>> unsloth(completions=[good, good + "<SOLUTION>5</SOLUTION>"])
    [1.0, 0.0]
    """

    default_name = "think_format"
    score_range = (0.0, 1.0)

    strict: bool = True
    prefilled_think: bool = False
    think_tag: str | Sequence[str] | None = "think"
    answer_tag: str | Sequence[str] | None = "answer"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.think_tag is None and self.answer_tag is None:
            raise RewardConfigError(f"reward {self.name!r}: think_tag and answer_tag cannot both be None")
        self._boxes = {box.name: box for box in checked_containers(self) if box is not None}

    def score(self, completion: str) -> RewardResult:
        completion = visible_text(completion)
        expected = _expected(_name(self.think_tag), _name(self.answer_tag), self.prefilled_think)
        tags = find_markers(completion, tuple(self._boxes.values()), limit=len(expected))
        seen = [(t.name, t.closing) for t in tags]
        if seen != expected:
            return RewardResult(0.0, _mismatch(completion, seen, expected, self._boxes))
        if self.think_tag is None:
            answer_open, answer_close = tags
            answer = completion[answer_open.end : answer_close.start]
            if not has_content(answer):
                return RewardResult(0.0, "the answer is empty")
            outside = completion[: answer_open.start] + completion[answer_close.end :]
            if self.strict and has_content(outside):
                return RewardResult(0.0, f"text outside the answer (strict): {outside.strip()[:40]!r}")
            return RewardResult(1.0, "one answer block")
        if self.answer_tag is None:
            return _reasoning_only(completion, tags, self.prefilled_think)
        if self.prefilled_think:
            think_close, answer_open, answer_close = tags
            before, reasoning = "", completion[: think_close.start]
        else:
            think_open, think_close, answer_open, answer_close = tags
            before, reasoning = completion[: think_open.start], completion[think_open.end : think_close.start]
        between = completion[think_close.end : answer_open.start]
        answer = completion[answer_open.end : answer_close.start]
        after = completion[answer_close.end :]
        if not has_content(reasoning):
            return RewardResult(0.0, "the reasoning is empty")
        if not has_content(answer):
            return RewardResult(0.0, "the answer is empty")
        if has_content(before):
            return RewardResult(0.0, f"text before the reasoning: {before.strip()[:40]!r}")
        if self.strict:
            for label, text in (
                ("between the blocks", between),
                ("after the answer", after),
            ):
                if has_content(text):
                    return RewardResult(0.0, f"text {label} (strict): {text.strip()[:40]!r}")
        return RewardResult(1.0, "reasoning then answer, each exactly once")


def _reasoning_only(completion: str, tags: list[Any], prefilled_think: bool) -> RewardResult:
    """The reasoning block starts the completion (after white space) and is not empty; free text may follow."""
    close = tags[-1]
    start = 0 if prefilled_think else tags[0].end
    before = "" if prefilled_think else completion[: tags[0].start]
    if has_content(before):
        return RewardResult(0.0, f"text before the reasoning: {before.strip()[:40]!r}")
    if not has_content(completion[start : close.start]):
        return RewardResult(0.0, "the reasoning is empty")
    return RewardResult(1.0, "the reasoning block starts the completion")


def _mismatch(
    text: str, seen: list[tuple[str, bool]], expected: list[tuple[str, bool]], boxes: dict[str, Container]
) -> str:
    if not seen:
        return "no tags"
    for tag in expected:
        times = seen.count(tag) if len(seen) <= len(expected) else count(text, boxes[tag[0]], tag[1])
        if times == 0:
            return f"missing {_describe(tag, boxes)}"
        if times > 1:
            return f"{_describe(tag, boxes)} appears {times} times"
    extra = [t for t in seen if t not in expected]
    if extra:
        return f"unexpected {_describe(extra[0], boxes)}"
    return "tags out of order: " + " ".join(_describe(t, boxes) for t in seen)


@register_reward("tag_count")
@dataclass
class TagCount(Reward):
    """Partial credit for the format: an equal share for each expected tag that appears exactly once.

    Useful early in training, when ``think_format`` is still always 0. With
    ``prefilled_think`` the opening ``<think>`` is not expected.

    Columns: none. Range: [0, 1].

    >>> TagCount()(completions=[
    ...     "<think>a</think><answer>b</answer>",
    ...     "<think>a</think>",
    ...     "<answer>1</answer><answer>2</answer>",
    ... ])
    [1.0, 0.5, 0.0]
    """

    default_name = "tag_count"
    score_range = (0.0, 1.0)

    prefilled_think: bool = False
    think_tag: str | Sequence[str] | None = "think"
    answer_tag: str | Sequence[str] = "answer"

    def __post_init__(self) -> None:
        super().__post_init__()
        self._boxes = {box.name: box for box in checked_containers(self) if box is not None}

    def score(self, completion: str) -> RewardResult:
        completion = visible_text(completion)
        expected = _expected(_name(self.think_tag), _name(self.answer_tag), self.prefilled_think)
        once = [tag for tag in expected if count(completion, self._boxes[tag[0]], tag[1]) == 1]
        missing = [_describe(tag, self._boxes) for tag in expected if tag not in once]
        reason = "every tag exactly once" if not missing else "not exactly once: " + ", ".join(missing)
        return RewardResult(len(once) / len(expected), reason)
