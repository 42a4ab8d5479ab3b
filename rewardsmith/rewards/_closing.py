r"""The closing sentence of a completion, read for the answer when nothing marks one (see ``_answers``).

The last complete sentence (ending in ``.`` or ``!``, or in a displayed formula
that does), skipping sign-offs ("I hope it helps") and comments on the sentence
before ("This means ...", "This function is injective", unless they state a
value of their own at once: "This gives $5$."). Its values follow the first
"is", "are", "was", "equals", "it's" or ``=`` outside formulas, or it opens with
a conclusion ("so", "therefore", "thus", "hence", "Conclusion:", "In summary,").
"""

from __future__ import annotations

import bisect
import re

from rewardsmith.rewards._answers import MAX_STATEMENT_CHARS, masked, math_spans, statement_values
from rewardsmith.rewards._text import number_spans

__all__ = ["OFFERS", "closing_sentence", "closing_statement"]

_COPULA = re.compile(
    r"\b(?:is|are|was|were|equals|be)\b(?:\s{0,3}\((?:is|are)\))?|=|\b(?:it|that|which|answer)'s\b", re.I
)
#: "... is the solution", "... is our answer": the value stands before the verb.
_NAMED = re.compile(r"\s{1,5}(?:the|our|my)\s{1,5}(?:final\s{1,5})?(?:answer|solution|result)\b", re.IGNORECASE)
_CONCLUSION = re.compile(
    r"(?:\*\*)?(?:so|therefore|thus|hence|finally|altogether|in total|(?:in\s{1,3})?(?:conclusion|summary)"
    r"|we\s{1,3}(?:find|get|obtain|conclude)(?:\s{1,3}that)?)\b",
    re.IGNORECASE,
)
_FLUFF = re.compile(r"(?:I hope|Hope this|Let me know|This is the|That's it|Done)\b", re.IGNORECASE)
_DOLLAR = re.compile(r"(?<!\\)\$")
_LAST_SENTENCE = re.compile(  # ``\!`` is TeX spacing; a formula ends its sentence when a capital follows it
    r"(?:(?<=[.?])\s|(?<=[^\\]!)\s|\n|(?<=\\\]|[^\\]\$)[ \t]{1,20}(?=[A-Z]))"
)
#: A sentence that opens by pointing back ("This means ...", "This function is injective") comments on the
#: statement before it; it states a value of its own only when one follows its verb at once ("This gives $5$.").
_BACK = r"(?:this|that|these|those|it|such)\b"
_BACK_REFERENCE = re.compile(_BACK, re.IGNORECASE)
_OWN_VALUE = re.compile(  # "This gives $5$.", "It is 12.", "That means the total is \\(7\\)."
    rf"{_BACK}(?:\s{{1,5}}[a-z]{{2,20}}){{0,2}}\s{{1,5}}(?:is|are|was|equals|gives|yields|makes|leaves|means|shows)"
    r"\s{1,5}(?:(?:us|that|the|a|an|total|of|answer|value|result|is|equal|to)\s{1,5}){0,4}(?:\*\*)?(?:\$|\\\(|\\\[|-?\d)",
    re.IGNORECASE,
)


_DISPLAY_END = re.compile(r"\.\s{0,5}(?:\\\]|\$\$)$")


def _ends_sentence(sentence: str) -> bool:
    """Whether a sentence is complete: it ends in ``.`` or ``!``, or in a display formula that ends in ``.``."""
    return bool(sentence) and (sentence[-1] in ".!" or _DISPLAY_END.search(sentence) is not None)


def _comment(sentence: str) -> bool:
    """Whether a sentence comments on the one before it ("This means ...") rather than stating a value itself."""
    return _BACK_REFERENCE.match(sentence) is not None and _OWN_VALUE.match(sentence) is None


def closing_sentence(text: str) -> str | None:
    r"""The sentence that closes ``text`` (comments on it and sign-offs skipped), or ``None`` when it is cut off.

    >>> closing_sentence("So it is 5. This means we are done."), closing_sentence("It is 5. Is it?")
    ('So it is 5.', None)
    >>> closing_sentence("we get $y = 6$ So, the pair is $(7, 6)$."), closing_sentence("The answer is $ A$.")
    ('So, the pair is $(7, 6)$.', 'The answer is $ A$.')
    """
    tail = text[-MAX_STATEMENT_CHARS:].rstrip()
    dollars = [m.start() for m in _DOLLAR.finditer(tail)]
    for _ in range(3):
        starts = [  # after a ``$``, only one that closes its formula (``$x = 6$ So, ...``)
            m.end()
            for m in _LAST_SENTENCE.finditer(tail.rstrip(".!"))
            if tail[m.start() - 1] != "$" or bisect.bisect_left(dollars, m.start()) % 2 == 0
        ]
        sentence = tail[starts[-1] if starts else 0 :].strip()
        if not starts or not (_FLUFF.match(sentence) or _comment(sentence)):
            break
        tail = tail[: starts[-1]].rstrip()
    if not _ends_sentence(sentence) or len(sentence) > 600 or len(_DOLLAR.findall(sentence)) % 2:
        return None  # a question, a sentence cut off (a truncated completion), or a formula left open
    return sentence


#: Words and signs that offer values as alternatives: several values so offered are a hedge, never a list.
OFFERS = re.compile(r"(?<![\w\\])(?:or|either|possibly|perhaps|maybe)(?!\w)|\\lor(?![a-z])|\\vee(?![a-z])", re.I)


def closing_statement(text: str) -> list[str] | None:
    r"""The values the closing sentence states, or ``None`` when it states none (conservatively).

    The last sentence must end in ``.`` or ``!`` (a completion cut off
    mid-sentence states nothing); its values follow the first "is", "are",
    "was", "equals" or ``=`` outside formulas, or the
    sentence opens with "so", "therefore", "thus" or "hence".

    >>> closing_statement(r"Adding them up, the value of $f(9)$ is \(33\).")
    ['33']
    >>> closing_statement("Therefore Alice ran 108 meters."), closing_statement("Then x = 3 and y = 4.")
    (['108'], ['3', 'y = 4'])
    >>> closing_statement("Since x is positive, the sum is $5$."), closing_statement(r"So it is \pi or 9.")
    (['5'], ['\\pi', '9'])
    >>> closing_statement("We add 2 and 3."), closing_statement("Is it 5?"), closing_statement("First, 3.\n4")
    (None, None, None)
    """
    sentence = closing_sentence(text)
    if sentence is None:
        return None
    blank = masked(sentence)
    copulas = list(_COPULA.finditer(blank))
    if copulas and _NAMED.match(sentence, copulas[0].end()):  # "Thus $x \le 2$ is our answer."
        before = math_spans(sentence[: copulas[0].start()])
        return before[-1:] or None
    if copulas:
        said = sentence[copulas[0].end() :].rstrip(" .!")
        return statement_values(said) or None  # its formulas, or the math of each part between "or"/"and"
    if not _CONCLUSION.match(sentence):
        return None
    said = sentence.rstrip(" .!")
    values = math_spans(said) or [said[start:end].strip() for _, start, end in number_spans(said)]
    return values or None
