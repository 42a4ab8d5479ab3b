"""Which column of the audited data holds the reference answers, chosen by what the columns mean.

The probes that matter most (hedging, lists, wrong answers) are built from
each row's reference answer, so reading it from the wrong column (a
``data_source`` of ``"openai/gsm8k"``) audits nothing while looking like a
pass. The column is, in order:

1. the one named (``answer_column`` / ``--answer-column``);
2. the reference column the reward reads, among :data:`REFERENCE_COLUMNS`
   (``answer``, ``ground_truth``, ``target``, ...): ``ground_truth`` for a verl
   function ``compute_score(data_source, solution_str, ground_truth, ...)``;
3. else the data's reference columns (``answer``, what the converters write;
   ``ground_truth``, what verl's ``reward_model.ground_truth`` becomes);
4. else the one other column the reward reads with a short value (never
   metadata such as ``data_source``).

Several candidates at one step that disagree on a row are an error naming
``--answer-column``: guessing would audit the wrong thing.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any, NamedTuple

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.reward import Reward
from rewardsmith.rewards._text import boxed_contents, format_number, parse_number

__all__ = [
    "REFERENCE_COLUMNS",
    "Reference",
    "answer_text",
    "choose_reference",
    "declared_columns",
    "numeric_value",
    "reference_column",
    "same_answer",
]

#: Column names that mean "the reference answer" (in the order preferred when the data has several).
REFERENCE_COLUMNS = (
    "answer",
    "ground_truth",
    "target",
    "reference_answer",
    "final_answer",
    "expected_answer",
    "reference",
    "solution",
)
#: The column of worked solutions: a reference answer only when no other reference column is there.
SOLUTION = "solution"
#: Columns that describe a row but never hold its answer (verl's layout, task routing, ids).
METADATA_COLUMNS = frozenset(
    {"data_source", "ability", "extra_info", "reward_model", "task", "id", "index", "split", "prompt", "question"}
)
#: The longest reference answer used as an answer in probes (longer ones are worked solutions).
_MAX_ANSWER = 200


def answer_text(value: Any) -> str | None:
    """A reference answer as text: a worked solution is cut to its final answer; lists, empty values: ``None``.

    >>> answer_text("She makes 9 * 2 = 18.\\n#### 18"), answer_text(r"so $\\boxed{\\frac{1}{2}}$"), answer_text(16)
    ('18', '\\\\frac{1}{2}', '16')
    >>> answer_text([3, 5]) is None, answer_text("  ") is None
    (True, True)
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float, Fraction)):
        return format_number(Fraction(str(value))) if not isinstance(value, Fraction) else format_number(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text[:1] in "[{" and _is_json_container(text):
        return None
    if "####" in text:
        text = text.rsplit("####", 1)[1].strip()
    elif "\\boxed" in text:
        boxed = boxed_contents(text)
        if boxed:
            text = boxed[-1].strip()
    if not text or len(text) > _MAX_ANSWER:
        return None
    return text


def _is_json_container(text: str) -> bool:
    import json

    try:
        return isinstance(json.loads(text), (dict, list))
    except (ValueError, RecursionError):
        return False


def numeric_value(text: str) -> Fraction | None:
    """The number ``text`` states, or ``None``.

    >>> numeric_value("1,000"), numeric_value("x")
    (Fraction(1000, 1), None)
    """
    try:
        return parse_number(text)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None


def same_answer(a: str, b: str) -> bool:
    """Whether two answers are the same text (case and spacing aside) or the same number.

    >>> same_answer("18", "18.0"), same_answer("Paris", " paris"), same_answer("7", "8")
    (True, True, False)
    """
    if " ".join(a.split()).lower() == " ".join(b.split()).lower():
        return True
    va, vb = numeric_value(a), numeric_value(b)
    return va is not None and va == vb


def declared_columns(reward: Reward) -> list[str]:
    """Every dataset column the reward reads (required with their fallbacks, then optional), in order.

    A plain TRL batch function ``f(completions, answer, **kwargs)`` reads the
    columns its signature names.

    >>> from rewardsmith import get_reward
    >>> declared_columns(get_reward("math_accuracy"))
    ['answer', 'solution']
    >>> def naive(completions, answer, **kwargs):
    ...     return [1.0] * len(completions)
    >>> declared_columns(get_reward(naive))
    ['answer']
    """
    return list(dict.fromkeys(c for group in _column_groups(reward) for c in group))


def _column_groups(reward: Reward) -> list[list[str]]:
    """The columns the reward reads, one list per input: a column with its fallbacks, in the reward's order."""
    groups: list[list[str]] = []
    for need in reward.missing_columns([]):
        head, _, rest = need.partition(" (or ")
        groups.append([head, *[n for n in rest.rstrip(")").split(", ") if n]])
    groups += [[name] for name in reward.optional_columns]
    fn = getattr(reward, "fn", None)
    if fn is not None and not groups and reward.is_batch_reward():
        import inspect

        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            params = []  # type: ignore[assignment]
        skip = {"prompts", "completions", "completion_ids", "trainer_state", "log_extra", "log_metric", "self"}
        groups += [[p.name] for p in params if p.name not in skip and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    return groups


class Reference(NamedTuple):
    """The reference-answer column chosen (``None``: none) and why, in words for the report."""

    column: str | None
    how: str


def choose_reference(
    reward: Reward, rows: Sequence[dict[str, Any]], chosen: str | None = None, *, option: str = "--answer-column"
) -> Reference:
    """The reference-answer column of ``rows`` for auditing ``reward``, by meaning (see the module docs).

    ``option`` is how the user names a column, for the error.

    >>> from rewardsmith import get_reward
    >>> def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    ...     return 0.0
    >>> rows = [{"data_source": "openai/gsm8k", "ground_truth": "18", "answer": "18"}]
    >>> choose_reference(get_reward(compute_score), rows)
    Reference(column='ground_truth', how='the reward reads it')
    >>> choose_reference(get_reward("think_format"), [{"answer": "4", "target": "5"}])
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.RewardConfigError: the reference answers could be in 'answer' or 'target', ...
    """
    if chosen:
        return Reference(chosen, f"named with {option}")
    have = list(rows[0]) if rows else []
    first = rows[0] if rows else {}
    groups = _column_groups(reward)
    read = [next((c for c in group if c in have), None) for group in groups]
    read = list(dict.fromkeys(c for c in read if c is not None))
    steps = [  # (why, the candidates, whether a candidate needs an answer in the first row)
        ("the reward reads it", [c for c in read if _is_reference_name(c)], False),
        ("the data's reference column", [c for c in REFERENCE_COLUMNS if c in have], False),
        ("the reward reads it", [c for c in read if c not in METADATA_COLUMNS and not _is_reference_name(c)], True),
    ]
    fallback: Reference | None = None  # a column named as a reference with no answer in it (a dict of tests)
    for how, names, strict in steps:
        usable = [c for c in names if answer_text(first.get(c)) is not None]
        if len(usable) > 1 and SOLUTION in usable:  # a worked solution is the reference answer only alone
            usable.remove(SOLUTION)
        if usable:
            _raise_if_they_disagree(usable, rows, option)
            return Reference(usable[0], how)
        if names and not strict and fallback is None:
            fallback = Reference(names[0], how)
    if fallback is not None:
        return fallback
    return Reference(None, "none found")


def _is_reference_name(column: str) -> bool:
    return column in REFERENCE_COLUMNS or column.endswith(".ground_truth")


def _raise_if_they_disagree(candidates: list[str], rows: Sequence[dict[str, Any]], option: str) -> None:
    first = candidates[0]
    for other in candidates[1:]:
        for i, row in enumerate(rows):
            a, b = answer_text(row.get(first)), answer_text(row.get(other))
            if a is not None and b is not None and not same_answer(a, b):
                raise RewardConfigError(
                    f"the reference answers could be in {first!r} or {other!r}, and they differ (row {i}: {a!r} vs "
                    f"{b!r}); name the column that holds them: {option} {first} (or {other}); in Python "
                    f"answer_column={first!r}"
                )


def reference_column(
    reward: Reward, columns: Sequence[str], chosen: str | None = None, first_row: dict[str, Any] | None = None
) -> str | None:
    """The column holding each row's reference answer (:func:`choose_reference` on one row).

    >>> from rewardsmith import get_reward
    >>> reference_column(get_reward("countdown"), ["nums", "target"], first_row={"nums": [3, 5], "target": 8})
    'target'
    >>> reference_column(get_reward("math_accuracy"), ["prompt", "solution"])
    'solution'
    >>> reference_column(get_reward("think_format"), ["prompt", "answer"]), reference_column(
    ...     get_reward("think_format"), ["prompt"])
    ('answer', None)
    """
    row = first_row if first_row is not None else dict.fromkeys(columns)
    return choose_reference(reward, [row], chosen).column
