"""Length constraints: ``length_constraints:number_words``, ``number_sentences``, ``number_paragraphs``,
``nth_paragraph_first_word``.

Words are ``\\w+`` runs; sentences are NLTK Punkt's (English model);
paragraphs are separated by the markdown divider ``***`` for
``number_paragraphs`` but by a blank line (``\\n\\n``) for
``nth_paragraph_first_word``, as in IFEval.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rewardsmith.rewards.ifeval.registry import Arg, constraint
from rewardsmith.rewards.ifeval.text import WORD, compare, relation_holds, sentences_at_least

__all__ = ["nth_paragraph_first_word", "number_paragraphs", "number_sentences", "number_words"]


@constraint("length_constraints:number_words", Arg("num_words", "int"), Arg("relation", "relation"))
def number_words(response: str, args: Mapping[str, Any]) -> bool:
    """The number of words (``\\w+`` runs: ``"it's"`` is two) is `relation` `num_words`.

    >>> number_words("It's a well-known fact.", {"num_words": 6, "relation": "at least"})
    True
    """
    return compare(WORD, response, args["num_words"], args["relation"])


@constraint("length_constraints:number_sentences", Arg("num_sentences", "int"), Arg("relation", "relation"))
def number_sentences(response: str, args: Mapping[str, Any]) -> bool:
    """The number of sentences (NLTK Punkt, English) is `relation` `num_sentences`.

    Texts too long to count within the bounds of
    :mod:`~rewardsmith.rewards.ifeval.text` fail unless the part counted
    decides the answer.

    >>> number_sentences("Dr. Who left. He came back!", {"num_sentences": 3, "relation": "less than"})
    True
    """
    return relation_holds(sentences_at_least(response, args["num_sentences"]), args["relation"])


_DIVIDER = re.compile(r"\s?\*\*\*\s?")


@constraint("length_constraints:number_paragraphs", Arg("num_paragraphs", "int"))
def number_paragraphs(response: str, args: Mapping[str, Any]) -> bool:
    """Exactly `num_paragraphs` paragraphs separated by ``***``; an empty paragraph between two dividers fails.

    Empty text before the first divider or after the last is not a paragraph.

    >>> number_paragraphs("One.\\n***\\nTwo.\\n***\\n", {"num_paragraphs": 2})
    True
    >>> number_paragraphs("One.\\n***\\n***\\nTwo.", {"num_paragraphs": 2})
    False
    """
    wanted = args["num_paragraphs"]
    count = 0
    start = 0
    for divider in _DIVIDER.finditer(response):
        if response[start : divider.start()].strip():
            count += 1
            if count > wanted:
                return False  # more paragraphs already (stops early on a long text)
        elif start > 0:
            return False  # an empty paragraph between two dividers
        start = divider.end()
    if response[start:].strip():
        count += 1
    return count == wanted


def _nth(value: int) -> int:
    if value < 1:
        raise ValueError(f"must be 1 or more, got {value}")
    return value


def _lower(value: str) -> str:
    return value.lower()


_FIRST_WORD = re.compile(r"[^.,?!'\"]*")


@constraint("length_constraints:nth_paragraph_first_word", Arg("num_paragraphs", "int"),
            Arg("nth_paragraph", "int", _nth), Arg("first_word", "text", _lower))  # fmt: skip
def nth_paragraph_first_word(response: str, args: Mapping[str, Any]) -> bool:
    """Exactly `num_paragraphs` non-empty paragraphs separated by blank lines (``\\n\\n``), and paragraph
    `nth_paragraph` starts with `first_word` (any case; leading quotes and anything from the first ``.,?!'"`` on
    are ignored).

    As in IFEval, the paragraph is found by its position among all pieces
    between ``\\n\\n`` (empty ones included), while the count leaves empty
    pieces out.

    >>> nth_paragraph_first_word('Intro.\\n\\n"Weekend, at last."', {"num_paragraphs": 2, "nth_paragraph": 2,
    ...                                                              "first_word": "weekend"})
    True
    """
    paragraphs = response.split("\n\n")
    wanted, nth = args["num_paragraphs"], args["nth_paragraph"]
    count = 0
    for paragraph in paragraphs:
        if paragraph.strip():
            count += 1
            if count > max(wanted, nth):
                return False  # too many paragraphs already (stops early on a long text)
    if nth > count:
        return False
    paragraph = paragraphs[nth - 1].strip()
    if not paragraph:
        return False
    word = paragraph.split(None, 1)[0].lstrip("'").lstrip('"')
    first = _FIRST_WORD.match(word).group()  # type: ignore[union-attr]  # (it matches the empty string)
    return count == args["num_paragraphs"] and first.lower() == args["first_word"]
