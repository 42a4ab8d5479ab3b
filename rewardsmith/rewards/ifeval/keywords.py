"""Keyword constraints: ``keywords:existence``, ``keywords:frequency``, ``keywords:forbidden_words``,
``keywords:letter_frequency``.

Keywords are matched as IFEval matches them: case-insensitively, anywhere
(``"war"`` is found in ``"software"``), except forbidden words, which must
stand between word boundaries (``\\b``). See
:func:`~rewardsmith.rewards.ifeval.text.literal_pattern` for keywords that
contain regular-expression syntax.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from rewardsmith.rewards.ifeval.registry import Arg, constraint
from rewardsmith.rewards.ifeval.text import at_least, compare, literal_pattern

__all__ = ["existence", "forbidden_words", "frequency", "letter_frequency"]


def _strip(value: str) -> str:
    return value.strip()


@constraint("keywords:existence", Arg("keywords", "words"))
def existence(response: str, args: Mapping[str, Any]) -> bool:
    """Every keyword appears, in any case, even inside a longer word.

    >>> existence("The Mother of all cats", {"keywords": ["mom", "mother"]})
    False
    >>> existence("Mom, mother!", {"keywords": ["mom", "mother"]})
    True
    """
    return all(literal_pattern(keyword).search(response) for keyword in args["keywords"])


@constraint("keywords:frequency", Arg("keyword", "text", _strip), Arg("frequency", "int"), Arg("relation", "relation"))
def frequency(response: str, args: Mapping[str, Any]) -> bool:
    """The keyword (stripped) occurs `relation` `frequency` times: non-overlapping, any case, inside words too.

    >>> frequency("War and peace; warfare.", {"keyword": "war", "frequency": 2, "relation": "at least"})
    True
    >>> frequency("War and peace; warfare.", {"keyword": "war", "frequency": 2, "relation": "less than"})
    False
    """
    return compare(literal_pattern(args["keyword"]), response, args["frequency"], args["relation"])


@constraint("keywords:forbidden_words", Arg("forbidden_words", "words"))
def forbidden_words(response: str, args: Mapping[str, Any]) -> bool:
    """None of the words appears as a whole word, in any case (``"rock"`` is in ``"Rock on"``, not in ``"rocky"``).

    >>> forbidden_words("A rocky road", {"forbidden_words": ["rock"]})
    True
    >>> forbidden_words("Let's ROCK.", {"forbidden_words": ["rock"]})
    False
    """
    return not _any_word(tuple(args["forbidden_words"])).search(response)


@functools.lru_cache(maxsize=256)
def _any_word(words: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for "any of the words, between word boundaries": one scan instead of one per word."""
    sources = [literal_pattern(word).pattern for word in words]
    return re.compile(r"\b(?:" + "|".join(sources) + r")\b", re.IGNORECASE)


def _letter(value: str) -> str:
    if len(value) != 1:
        raise ValueError(f"must be one character, got {value!r}")
    return value.lower()


@constraint("keywords:letter_frequency", Arg("letter", "text", _letter), Arg("let_frequency", "int"),
            Arg("let_relation", "relation"))  # fmt: skip
def letter_frequency(response: str, args: Mapping[str, Any]) -> bool:
    """The letter (one character, any case) occurs `let_relation` `let_frequency` times.

    >>> letter_frequency("Queen quietly quits", {"letter": "q", "let_frequency": 3, "let_relation": "at least"})
    True
    >>> letter_frequency("Hi!!", {"letter": "!", "let_frequency": 2, "let_relation": "less than"})
    False
    """
    return at_least(response.lower().count(args["letter"]), args["let_frequency"], args["let_relation"])
