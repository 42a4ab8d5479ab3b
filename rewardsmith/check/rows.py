"""What an audit knows about one row: its prompt, its reference answer, its reference solution, its format.

Probes are built from these (:mod:`rewardsmith.check.probes`), so they fit
whatever data and reward are audited:

* the **reference answer** is read from the column chosen by meaning
  (:mod:`rewardsmith.check.reference`: the reference column the reward reads,
  such as ``answer`` or ``ground_truth``, else the data's), or a column named
  with ``answer_column``; a worked solution there is cut to its final answer
  (last ``\\boxed{}`` or ``#### N``);
* the **reference solution** (a completion known to be right) comes from the
  gold column, when there is one;
* the **format** (tag names, ``\\boxed{}``, ``####``, a code fence) is found by
  :mod:`rewardsmith.check.formats` (``Format`` and the two functions are
  re-exported here);
* a **number puzzle** (a list of integers and a target) and the **example
  calls** a code prompt shows are read by :mod:`rewardsmith.check.tasks`;
* a **wrong answer** for each row is another row's reference answer with a
  different value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from rewardsmith.check.formats import Format, candidate_formats, choose_formats
from rewardsmith.check.reference import (
    Reference,
    answer_text,
    choose_reference,
    declared_columns,
    numeric_value,
    reference_column,
    same_answer,
)
from rewardsmith.check.tasks import VisibleCall, given_numbers, solve_numbers, stub_program, visible_calls
from rewardsmith.core.inputs import completion_text, prompt_text
from rewardsmith.core.reward import Reward
from rewardsmith.rewards._text import format_number, iter_numbers

__all__ = [
    "Format",
    "Reference",
    "RowContext",
    "answer_text",
    "build_rows",
    "candidate_formats",
    "choose_formats",
    "declared_columns",
    "near_miss",
    "occurrence",
    "reference_column",
    "replace_answer",
    "wrong_answers",
]

_WORD = re.compile(r"\w")


def wrong_answers(answers: Sequence[str | None], k: int = 12) -> list[list[str]]:
    """For each row, up to ``k`` other rows' answers that differ from its own (in text and in value).

    >>> wrong_answers(["4", "4.0", "7", None, "x"], k=2)
    [['7', 'x'], ['7', 'x'], ['x', '4'], [], ['4', '7']]
    """
    distinct = list(dict.fromkeys(a for a in answers if a))
    out: list[list[str]] = []
    for answer in answers:
        if not answer:
            out.append([])
            continue
        picked: list[str] = []
        start = (distinct.index(answer) + 1) if answer in distinct else 0
        for j in range(len(distinct)):
            other = distinct[(start + j) % len(distinct)]
            if other != answer and not same_answer(other, answer) and all(not same_answer(other, p) for p in picked):
                picked.append(other)
                if len(picked) == k:
                    break
        out.append(picked)
    return out


def _numbers(text: str) -> Iterator[tuple[Fraction, int, int]]:
    """Every number in ``text`` with the span of the number itself (no leading space or currency sign)."""
    for value, start, end in iter_numbers(text):
        while start < end and text[start] in " $\t":
            start += 1
        yield value, start, end


def occurrence(text: str, answer: str) -> int | None:
    """Where ``answer`` first occurs in ``text`` as a whole token (a number by its value), else ``None``.

    >>> occurrence("paid $1,000 then 1000 more", "1000"), occurrence("x = 12 and 2", "2"), occurrence("ab", "c")
    (6, 11, None)
    >>> occurrence(r"so $\\frac{\\pi}{2}$", r"\\frac{\\pi}{2}")
    4
    """
    value = numeric_value(answer) if re.fullmatch(r"[-+$\d.,/ ]+", answer.strip()) else None
    if value is not None:
        for found, start, _ in _numbers(text):
            if found == value:
                return start
    if not answer.strip():
        return None
    pattern = re.escape(answer.strip())
    left = r"(?<!\w)" if _WORD.match(answer.strip()[0]) else ""
    right = r"(?!\w)" if _WORD.match(answer.strip()[-1]) else ""
    match = re.search(left + pattern + right, text)
    return match.start() if match else None


def replace_answer(text: str, answer: str, other: str) -> str | None:
    """``text`` with every whole-token occurrence of ``answer`` replaced by ``other`` (``None`` if it has none).

    >>> replace_answer("9 * 2 = 18.\\n#### 18", "18", "21")
    '9 * 2 = 21.\\n#### 21'
    """
    stripped = answer.strip()
    if not stripped or occurrence(text, stripped) is None:
        return None
    value = numeric_value(stripped) if re.fullmatch(r"[-+$\d.,/ ]+", stripped) else None
    if value is not None:
        pieces, last = [], 0
        for found, start, end in _numbers(text):
            if found == value:
                pieces += [text[last:start], other]
                last = end
        return "".join(pieces) + text[last:] if pieces else None
    left = r"(?<!\w)" if _WORD.match(stripped[0]) else ""
    right = r"(?!\w)" if _WORD.match(stripped[-1]) else ""
    return re.sub(left + re.escape(stripped) + right, lambda _: other, text)


def near_miss(answer: str) -> str | None:
    """A wrong answer one away from a numeric ``answer`` (``None`` when it is not a number).

    >>> near_miss("18"), near_miss("0.5"), near_miss("x + 1")
    ('19', '1.5', None)
    """
    if not re.fullmatch(r"-?\$?\d[\d,]*(?:\.\d+)?", answer.strip()):
        return None
    value = numeric_value(answer)
    return None if value is None else format_number(value + 1)


@dataclass
class RowContext:
    """One row of the audited data, as the probes need it.

    For a number puzzle (``numbers`` given), ``answer`` is an equation the
    audit solved and ``target`` the value it must reach; ``calls`` are the
    example calls the prompt shows (code tasks).
    """

    index: int
    prompt: Any
    columns: dict[str, Any]
    answer: str | None = None
    gold: str | None = None
    wrong: list[str] = field(default_factory=list)
    numbers: list[int] | None = None
    target: str | None = None
    calls: list[VisibleCall] = field(default_factory=list)
    #: Whether completions are rollouts here (the reward reads tool calls, or the data has tools): only then
    #: are rollout probes made, so that a text reward on text data is judged on text.
    rollouts: bool = False

    @property
    def prompt_text(self) -> str:
        """The prompt's text (the last user message of a conversation)."""
        return prompt_text(self.prompt) if self.prompt is not None else ""

    @property
    def answer_in_prompt(self) -> bool:
        """Whether the reference answer appears in the prompt (echoing the prompt may then be right)."""
        return bool(self.answer) and occurrence(self.prompt_text, self.answer) is not None


def build_rows(
    rows: Sequence[dict[str, Any]],
    reward: Reward,
    *,
    answer_column: str | None = None,
    gold_column: str | None = None,
    exclude: Sequence[str] = (),
) -> tuple[list[RowContext], Reference]:
    """The :class:`RowContext` of each prepared row, and the reference-answer column used (if any) and why.

    ``exclude`` names columns that are not passed to the reward (completions, labels).
    """
    columns = list(rows[0]) if rows else []
    reference = choose_reference(reward, rows, answer_column)
    column = reference.column
    targets = [answer_text(row.get(column)) if column else None for row in rows]
    numbers = _puzzle_numbers(reward, rows, column)
    answers = [t if n is None else _solved(n, t) for n, t in zip(numbers, targets)]
    others = wrong_answers(answers)
    skip = {"prompt", *exclude}
    rollouts = reads_rollouts(reward) or any(c in columns for c in ROLLOUT_COLUMNS)
    out = []
    for i, row in enumerate(rows):
        gold = row.get(gold_column) if gold_column else None
        prompt = row.get("prompt")
        calls = visible_calls(prompt_text(prompt)) if prompt is not None else []
        out.append(
            RowContext(
                index=i,
                prompt=prompt,
                columns={k: v for k, v in row.items() if k not in skip},
                answer=answers[i],
                gold=completion_text(gold) if gold is not None else None,
                wrong=_honest_wrong(numbers[i], targets[i], calls) + others[i],
                numbers=numbers[i],
                target=targets[i],
                calls=calls,
                rollouts=rollouts,
            )
        )
    return out, reference


#: Columns that make a dataset's completions rollouts with tool calls.
ROLLOUT_COLUMNS = ("tools", "tool_calls")


def reads_rollouts(reward: Reward) -> bool:
    """Whether ``reward`` (or a part of it) reads a completion as a rollout (tool calls, trajectory, environment).

    >>> from rewardsmith import get_reward
    >>> reads_rollouts(get_reward("tool_success")), reads_rollouts(get_reward("gsm8k_accuracy"))
    (True, False)
    """
    parts = [reward, *(reward.components() if hasattr(reward, "components") else [])]
    return any(getattr(getattr(part, "injection", None), "trajectory_inputs", None) for part in parts)


def _puzzle_numbers(reward: Reward, rows: Sequence[dict[str, Any]], answer_column: str | None) -> list[Any]:
    """Each row's given numbers, when the data has a column of integer lists besides the answer's (the reward's
    own columns first: a reward that ignores the numbers is exactly what must be caught)."""
    order = [*declared_columns(reward), *(rows[0] if rows else ())]
    names = [c for c in dict.fromkeys(order) if c not in (answer_column, "prompt") and rows and c in rows[0]]
    column = next((c for c in names if given_numbers(rows[0].get(c)) is not None), None)
    return [given_numbers(row.get(column)) if column else None for row in rows]


def _solved(numbers: list[int], target: str | None) -> str | None:
    value = numeric_value(target) if target else None
    if value is None or value.denominator != 1:
        return None
    return solve_numbers(numbers, int(value))


def _honest_wrong(numbers: list[int] | None, target: str | None, calls: list[VisibleCall]) -> list[str]:
    """A plausible wrong attempt of this row's own: the numbers summed (a puzzle), a stub of the function (code)."""
    if numbers is not None:
        total = " + ".join(str(n) for n in numbers)
        value = numeric_value(target) if target else None
        return [total] if value is not None and value != sum(numbers) else []
    stub = stub_program(calls)
    return [stub] if stub else []
