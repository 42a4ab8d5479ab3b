"""Case and language constraints: ``change_case:english_capital``, ``change_case:english_lowercase``,
``change_case:capital_word_frequency``, ``language:response_language``.

Languages are detected with ``langdetect``, as IFEval does (see
:mod:`rewardsmith.rewards.language`). As in IFEval, a text in which
``langdetect`` finds nothing to detect (no letters) counts as followed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rewardsmith.rewards.ifeval.registry import Arg, constraint
from rewardsmith.rewards.ifeval.text import capital_words_at_least, relation_holds
from rewardsmith.rewards.language import detect_language, same_language

__all__ = ["capital_word_frequency", "english_capital", "english_lowercase", "response_language"]


def _in_language(text: str, language: str) -> bool:
    detected = detect_language(text)
    return detected is None or same_language(detected, language)


@constraint("change_case:english_capital")
def english_capital(response: str, args: Mapping[str, Any]) -> bool:
    """The response is in English and in capitals (``str.isupper()``: cased letters, none in lower case).

    >>> english_capital("THIS IS FINE, THANK YOU.", {}), english_capital("THIS is not.", {})
    (True, False)
    """
    return response.isupper() and _in_language(response, "en")


@constraint("change_case:english_lowercase")
def english_lowercase(response: str, args: Mapping[str, Any]) -> bool:
    """The response is in English and in lower case (``str.islower()``).

    >>> english_lowercase("this is all lower case english text.", {})
    True
    """
    return response.islower() and _in_language(response, "en")


@constraint("change_case:capital_word_frequency", Arg("capital_frequency", "int"), Arg("capital_relation", "relation"))
def capital_word_frequency(response: str, args: Mapping[str, Any]) -> bool:
    """The number of words in capitals (NLTK ``word_tokenize`` tokens that are ``isupper()``) is `capital_relation`
    `capital_frequency`.

    >>> capital_word_frequency("I LOVE NEW YORK", {"capital_frequency": 4, "capital_relation": "at least"})
    True
    """
    return relation_holds(capital_words_at_least(response, args["capital_frequency"]), args["capital_relation"])


@constraint("language:response_language", Arg("language", "text"))
def response_language(response: str, args: Mapping[str, Any]) -> bool:
    """The whole response is in the language with this ISO 639-1 code (``langdetect``'s verdict).

    >>> response_language("Ceci est une réponse entièrement en français.", {"language": "fr"})
    True
    """
    return _in_language(response, args["language"])
