"""The probe families an audit asked for that made no probe, each with the reason, so none is skipped silently.

A family makes probes only from what the data gives: hedging needs each row's
reference answer and another row's different one, ``numbers`` a number
puzzle, ``hardcoded`` a prompt that shows example calls, ``trajectory``
rollouts. A report that lists only the families that ran reads as "all
clear" when the audit could not look; the report says which did not run and
what would make them run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["families_not_run"]

_NEED_ANSWER = ("bare_answer", "hedging", "lists")


def families_not_run(
    families: Iterable[str], ran: set[str], contexts: Sequence[Any], answer_column: str | None
) -> dict[str, str]:
    """Each family of ``families`` that is not in ``ran`` (no probe was scored), with the reason in words.

    >>> from rewardsmith.check.rows import RowContext
    >>> rows = [RowContext(0, "What is 2+2?", {}), RowContext(1, "What is 3+3?", {})]
    >>> reasons = families_not_run(["empty", "hedging", "numbers"], {"empty"}, rows, None)
    >>> sorted(reasons), reasons["hedging"].split(":")[0]
    (['hedging', 'numbers'], 'no reference answers')
    """
    out: dict[str, str] = {}
    for family in families:
        if family in ran:
            continue
        out[family] = _reason(family, contexts, answer_column)
    return out


def _reason(family: str, contexts: Sequence[Any], answer_column: str | None) -> str:
    answers = {c.answer for c in contexts if c.answer}
    if family in _NEED_ANSWER and answer_column is None:
        return (
            "no reference answers: no column of the data holds them (name it with --answer-column, answer_column= "
            "in Python)"
        )
    if family in _NEED_ANSWER and not answers:
        return f"no reference answers: the column {answer_column!r} holds no short answer on the rows checked"
    if family in ("hedging", "lists") and len(answers) < 2:
        return f"only one distinct reference answer in {answer_column!r}: no wrong one to hedge with (check more rows)"
    if family == "numbers":
        return "no row is a number puzzle (a column of integer lists and a target)"
    if family == "hardcoded":
        return "no prompt shows example calls of a function (not a code task)"
    if family == "trajectory":
        return "completions are not rollouts here: the reward reads no tool calls and the data has no tools column"
    if family == "huge":
        return "no row was checked"
    return "no row gave a probe of this family"
