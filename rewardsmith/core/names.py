"""Helpers for things looked up by name (rewards, dataset converters): validation, suggestions, descriptions."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any

from rewardsmith.core.errors import RewardConfigError

__all__ = ["check_name", "did_you_mean", "first_line", "suggest_field"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")


def check_name(name: object, what: str) -> str:
    """``name`` if it can be registered, else a :class:`RewardConfigError` saying what a name may contain.

    >>> check_name("gsm8k", "converter")
    'gsm8k'
    >>> check_name("my/reward", "reward")
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.RewardConfigError: cannot register a reward as 'my/reward': ...
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise RewardConfigError(
            f"cannot register a {what} as {name!r}: names start with a letter or '_' and contain only "
            "letters, digits, '_' and '-' (':' and '/' are reserved for import and file paths)"
        )
    return name


def did_you_mean(name: str, options: Iterable[str], *, cutoff: float = 0.6) -> str:
    """``" Did you mean: a, b?"`` for the options close to ``name`` (at most three), or ``""``.

    >>> did_you_mean("gsm8", ["gsm8k", "math", "chat"])
    ' Did you mean: gsm8k?'
    >>> did_you_mean("zzz", ["gsm8k"])
    ''
    """
    close = difflib.get_close_matches(name, list(options), n=3, cutoff=cutoff)
    return f" Did you mean: {', '.join(close)}?" if close else ""


def first_line(doc: str | None) -> str:
    """The first non-blank line of a docstring, stripped (``""`` for none).

    >>> first_line('''
    ...     Turns rows into prompts.
    ...
    ...     More text.''')
    'Turns rows into prompts.'
    """
    for line in (doc or "").strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


def _edits(a: str, b: str) -> int:
    """Edits (insert, delete, replace, swap two neighbours) from ``a`` to ``b``."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i]
        for j, cb in enumerate(b, 1):
            cost = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cost = min(cost, prev2[j - 2] + 1)
            row.append(cost)
        prev2, prev = prev, row
    return prev[-1]


def suggest_field(name: str, fields: Any) -> str:
    """``" Did you mean: x?"`` only for a field ``name`` is a typo of (at most two edits), else ``""``.

    A close-looking field with other words in it is another setting, not a
    spelling of this one, and suggesting it would change what the run does:

    >>> suggest_field("max_step", ["max_steps", "save_steps"]), suggest_field("repetition_max_penalty",
    ...                                                                       ["repetition_penalty"])
    (' Did you mean: max_steps?', '')
    """
    limit = 1 if len(name) <= 5 else 2
    close = sorted((d, f) for f in fields if (d := _edits(name.lower(), f.lower())) <= limit)
    return f" Did you mean: {', '.join(f for _, f in close[:3])}?" if close else ""
