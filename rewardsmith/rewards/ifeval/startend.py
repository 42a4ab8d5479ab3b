"""Start, end and whole-response constraints: ``startend:end_checker``, ``startend:quotation``,
``combination:two_responses``, ``combination:repeat_prompt``, ``punctuation:no_comma``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rewardsmith.rewards.ifeval.registry import Arg, constraint

__all__ = ["end_checker", "no_comma", "quotation", "repeat_prompt", "two_responses"]


def _strip_lower(value: str) -> str:
    return value.strip().lower()


@constraint("startend:end_checker", Arg("end_phrase", "text", _strip_lower))
def end_checker(response: str, args: Mapping[str, Any]) -> bool:
    """The response ends with the phrase (any case), ignoring white space and double quotes around it.

    >>> end_checker('Thanks.\\nAny other questions?"', {"end_phrase": "any other questions?"})
    True
    """
    return response.strip().strip('"').lower().endswith(args["end_phrase"])


@constraint("startend:quotation")
def quotation(response: str, args: Mapping[str, Any]) -> bool:
    """The whole response (white space stripped) is wrapped in double quotation marks ``"..."``.

    >>> quotation(' "All of it." ', {}), quotation('"', {})
    (True, False)
    """
    text = response.strip()
    return len(text) > 1 and text[0] == '"' and text[-1] == '"'


@constraint("combination:two_responses")
def two_responses(response: str, args: Mapping[str, Any]) -> bool:
    """Exactly two different non-blank responses separated by ``******``; a blank one between separators fails.

    >>> two_responses("Answer one.\\n******\\nAnswer two.", {}), two_responses("Same\\n******\\nSame", {})
    (True, False)
    """
    pieces = response.split("******")
    kept = []
    for index, piece in enumerate(pieces):
        if piece.strip():
            kept.append(piece.strip())
        elif index not in (0, len(pieces) - 1):
            return False
    return len(kept) == 2 and kept[0] != kept[1]


@constraint("combination:repeat_prompt", Arg("prompt_to_repeat", "text", _strip_lower))
def repeat_prompt(response: str, args: Mapping[str, Any]) -> bool:
    """The response starts with the request repeated word for word (any case, leading white space ignored).

    >>> repeat_prompt("Write a poem. Roses are red...", {"prompt_to_repeat": "write a poem."})
    True
    """
    return response.strip().lower().startswith(args["prompt_to_repeat"])


@constraint("punctuation:no_comma")
def no_comma(response: str, args: Mapping[str, Any]) -> bool:
    """No comma ``,`` anywhere (other commas, such as ``，``, are allowed, as in IFEval).

    >>> no_comma("No commas here.", {}), no_comma("One, two", {})
    (True, False)
    """
    return "," not in response
