"""Where the reasoning ends: TRL's reasoning delimiters, shared by the accuracy rewards.

``math_accuracy`` and ``gsm8k_accuracy`` take a ``reasoning_delimiters``
setting (e.g. ``["</think>"]``, as TRL's ``reasoning_accuracy_reward``
does by default): the answer is looked for only after the reasoning, and a
completion whose reasoning never ends scores 0, so a model cannot skip the
reasoning or leave it unfinished and still be rewarded.
"""

from __future__ import annotations

from collections.abc import Sequence

from rewardsmith.core.errors import RewardConfigError

__all__ = ["after_reasoning", "check_delimiters"]


def after_reasoning(text: str, delimiters: Sequence[str]) -> str | None:
    """The text after the last occurrence of the first delimiter (in the given order) that occurs, or ``None``.

    >>> after_reasoning("<think>maybe 5</think> so 6 </think> 7", ["</think>"])
    ' 7'
    >>> after_reasoning("<think>unfinished", ["</think>"]) is None
    True
    >>> after_reasoning("a </R> b", ["</think>", "</R>"])
    ' b'
    """
    for delimiter in delimiters:
        at = text.rfind(delimiter)
        if at >= 0:
            return text[at + len(delimiter) :]
    return None


def check_delimiters(name: str, delimiters: Sequence[str] | None) -> tuple[str, ...] | None:
    """The delimiters as a tuple, or a clear error for an empty list or an empty delimiter (``None`` stays ``None``).

    >>> check_delimiters("demo", ["</think>"])
    ('</think>',)
    """
    if delimiters is None:
        return None
    if isinstance(delimiters, str):
        delimiters = [delimiters]
    out = tuple(delimiters)
    if not out or not all(isinstance(d, str) and d for d in out):
        raise RewardConfigError(
            f"reward {name!r}: reasoning_delimiters must be a non-empty list of non-empty texts (e.g. ['</think>']), "
            f"got {delimiters!r}"
        )
    return out
