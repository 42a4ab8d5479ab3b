r"""Values a completion rejects (``20 apples, not 18``, ``\boxed{18} is incorrect``), and working after a value.

A rejected value is never the answer, wherever else the completion states it
(checking a candidate, ``\boxed{18} would give 40, so \boxed{18} is
incorrect``, states it twice and rejects it once). Shared by
``math_accuracy`` and ``gsm8k_accuracy``; linear time (bounded quantifiers).
"""

from __future__ import annotations

import re

from rewardsmith.rewards._text import matches_near

__all__ = ["rejected_values", "without_negation", "without_working"]

_VALUE = (
    r"(?:\\boxed\s{0,3}\{(?P<box>[^{}]{1,60})\}|\$(?P<dollar>[^$]{1,60})\$|\\\((?P<paren>[^()]{0,60}?)\\\)"
    r"|\*\*(?P<bold>[^*]{1,40})\*\*|(?P<number>[-\u2212]?\d[\d,]{0,20}(?:\.\d{1,20})?))"
)
_BEFORE = re.compile(
    rf"(?<![\w-])(?:not|instead\s{{1,3}}of|rather\s{{1,3}}than|isn't|is\s{{1,3}}not)\s{{1,3}}(?:equal\s{{1,3}}to\s{{1,3}})?"
    rf"{_VALUE}",
    re.IGNORECASE,
)
_AFTER = re.compile(
    rf"{_VALUE}\s{{0,3}}(?:is|was|would\s{{1,3}}be)\s{{1,3}}(?:incorrect|wrong|invalid|impossible|extraneous"
    r"|not\s{1,3}(?:correct|right|valid|possible|a\s{1,3}solution|the\s{1,3}answer))\b",
    re.IGNORECASE,
)


#: Each pattern, the words it holds, how far after its start the first of them can be, and how far it reads:
#: a rejection before a value starts with its word; one after a value has it at most 87 characters in; neither
#: reads more than 106 characters.
_SCANS = (
    (_BEFORE, ("not", "instead", "rather", "is"), 0, 120),
    (_AFTER, ("incorrect", "wrong", "invalid", "impossible", "extraneous", "not"), 100, 120),
)
_BOXED = re.compile(r"\\boxed\s{0,3}\{([^{}]{1,60})\}")


def rejected_values(text: str) -> list[str]:
    r"""The values ``text`` rejects, as written (``not 18``, ``instead of $5$``, ``\boxed{18} is incorrect``).

    >>> rejected_values("So she has 20 apples, not 18."), rejected_values(r"so \boxed{18} is incorrect")
    (['18'], ['18'])
    >>> rejected_values("It is not divisible by 3, so it is 12."), rejected_values("x = 5 is not a solution")
    ([], ['5'])
    """
    found: list[str] = []
    text = text[-20000:]
    for pattern, words, reach, span in _SCANS:  # each tried only where its words occur
        for match in matches_near(text, pattern, words, reach, span):
            value = next(v for v in match.groupdict().values() if v is not None).strip()
            boxed = _BOXED.fullmatch(value)
            found.append(boxed.group(1).strip() if boxed else value)
    return found


_NEGATION = re.compile(
    r"\s{0,5}(?:\\text\w{0,6}\s{0,3}\{\s{0,3})?[(,]?\s{0,3}(?:but\s{1,3})?(?:not|instead\s{1,3}of|rather\s{1,3}than)\b.*$",
    re.DOTALL,
)


def without_negation(answer: str) -> str:
    r"""An answer without the value it rules out after it (``7 \text{ (not } 8)`` is ``7``).

    >>> without_negation(r"7 \text{ (not } 8)"), without_negation("20, not 18"), without_negation("18")
    ('7', '20', '18')
    """
    cut = _NEGATION.search(answer)
    return answer[: cut.start()].strip() if cut and cut.start() > 0 else answer


_WORKING = re.compile(
    r"(?<=\d)\s{0,5}(?:\\text\s{0,3}\{\s{0,3})?\(\s{0,3}(?=[^()]{0,80}?(?:[-+*/\u00d7\u00f7=]|\\times|\\cdot))"
    r"(?:[\d.,\s+\-*/\u00d7\u00f7=$]|\\times|\\cdot|\\[,;! ]){1,80}\)\s{0,3}\}?\s{0,3}[.,;]?\s{0,3}$"
)


def without_working(answer: str) -> str:
    r"""A number without the arithmetic that shows how it was found after it (``20 (18 + 2)`` is ``20``).

    >>> without_working("20 (18 + 2)"), without_working(r"20 \text{(18+2)}"), without_working("2(x+1)")
    ('20', '20', '2(x+1)')
    """
    cut = _WORKING.search(answer) if len(answer) < 200 else None
    return answer[: cut.start()].rstrip() if cut else answer
