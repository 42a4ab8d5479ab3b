r"""Answer forms compared before math-verify: choice letters, inequalities as intervals, ordered lists, units.

* :func:`choice_letters`: ``\text{(B)}``, ``(B)``, ``B``, ``\text{A,D}`` are
  multiple-choice letters, compared as sets of letters;
* :func:`interval_form`: ``k < -5`` is the interval ``(-\infty, -5)``, so an
  inequality and the same interval agree;
* :func:`list_parts`: a bare list ``2, 3, 4`` keeps its order (a sequence or
  tuple), unless the prompt asks for all solutions or values (then it is a
  set, as ``\{...\}`` always is);
* :func:`without_unit`: ``12cm``, ``5 \text{ inches}``, ``45 degrees``: the
  number, when a common unit follows it.
"""

from __future__ import annotations

import re

__all__ = ["choice_letters", "interval_form", "list_parts", "ordered_prompt", "without_unit"]

_CHOICE_WRAP = re.compile(r"\\(?:text\w{0,6}|mathrm|mbox)\s{0,5}\{([^{}]{0,40})\}")
_CHOICES = re.compile(r"\(?([A-H])\)?(?:\s{0,3},\s{0,3}\(?([A-H])\)?){0,7}")


def choice_letters(text: str) -> frozenset[str] | None:
    r"""The multiple-choice letters an answer names (``\text{(B)}``, ``(B)``, ``A,D``), or ``None``.

    >>> choice_letters(r"\text{A,D}") == choice_letters("D, A"), choice_letters(r"\text{(B)}"), choice_letters("x")
    (True, frozenset({'B'}), None)
    """
    bare = _CHOICE_WRAP.sub(r"\1", text).replace("$", "").replace("\\", "").strip().rstrip(".")
    if len(bare) > 60 or _CHOICES.fullmatch(bare) is None:
        return None
    return frozenset(re.findall(r"[A-H]", bare))


_INEQUALITY = re.compile(r"^\s*([a-zA-Z])\s*(<|>|\\le(?:q|qslant)?|\\ge(?:q|qslant)?)\s*([^<>=]{1,100})$")
_BETWEEN = re.compile(
    r"^\s*([^<>=]{1,100}?)\s*(<|\\le(?:q|qslant)?)\s*([a-zA-Z])\s*(<|\\le(?:q|qslant)?)\s*([^<>=]{1,100})$"
)


def interval_form(text: str) -> str | None:
    r"""The interval an inequality in one variable describes (``k < -5`` is ``(-\infty, -5)``), or ``None``.

    >>> interval_form("k < -5"), interval_form(r"x \ge 2"), interval_form(r"-1 < x \le 3"), interval_form("x+1")
    ('(-\\infty, -5)', '[2, \\infty)', '(-1, 3]', None)
    """
    match = _INEQUALITY.match(text)
    if match:
        _, relation, bound = match.groups()
        closed = relation.startswith("\\")
        if relation == "<" or relation.startswith("\\le"):
            return f"(-\\infty, {bound.strip()}{']' if closed else ')'}"
        return f"{'[' if closed else '('}{bound.strip()}, \\infty)"
    match = _BETWEEN.match(text)
    if match:
        low, left, _, right, high = match.groups()
        return f"{'(' if left == '<' else '['}{low.strip()}, {high.strip()}{')' if right == '<' else ']'}"
    return None


_THOUSANDS = re.compile(r"(?<=\d)(?:\{,\}|,\\!|,)(?=\d{3}(?!\d))")


def list_parts(text: str) -> list[str]:
    r"""The parts of a bare comma-separated list (``2, 3, 4``), or ``[]`` for anything else.

    Bracketed tuples, intervals and sets are not bare lists (math-verify
    compares them itself); thousands separators do not separate.

    >>> list_parts("2, 4, 3"), list_parts("10,000"), list_parts("(1, 2)"), list_parts(r"\{1, 2\}")
    (['2', '4', '3'], [], [], [])
    """
    text = _THOUSANDS.sub("", text.strip())
    if not text or text[0] in "([{" or text.startswith(("\\left", "\\{", "\\begin")) or "\\cup" in text:
        return []
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch in "([{") - (ch in ")]}")
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts if len(parts) > 1 and all(parts) else []


_UNORDERED = re.compile(
    r"\ball\b[^.?]{0,80}\b(?:solutions|values|roots|zeros|numbers|possibilities|answers|integers|points)\b"
    r"|separated by commas",
    re.IGNORECASE,
)


def ordered_prompt(prompt: str | None) -> bool:
    """Whether a list answer to ``prompt`` keeps its order (yes, unless the prompt asks for all solutions or values).

    >>> ordered_prompt("Find all real solutions, separated by commas.")
    False
    >>> ordered_prompt("Find p and q."), ordered_prompt(None)
    (True, True)
    """
    return not (prompt and _UNORDERED.search(prompt))


_UNIT = re.compile(
    r"^(-?\d+(?:\.\d+)?)\s{0,3}(?:\\(?:text|mbox|mathrm)\s{0,3}\{\s{0,3})?"
    r"(?:cm|mm|km|m|in|inch|inches|ft|feet|foot|yd|yards?|miles?|kg|g|mg|lb|lbs|pounds?|oz|ounces?|s|sec|seconds?"
    r"|min|minutes?|h|hr|hours?|days?|weeks?|years?|units?|degrees?|dollars?|cents?|meters?|liters?|L|mL|ml|mph)"
    r"(?:\^\{?[23]\}?)?\s{0,3}\}?(?:\^\{?[23]\}?)?$"
)


def without_unit(answer: str) -> str:
    r"""A number with a common unit after it (``12cm``, ``5 \text{ inches}``) as the number; anything else as is.

    >>> without_unit("12cm"), without_unit(r"5 \text{ inches}"), without_unit("4mm"), without_unit("3x")
    ('12', '5', '4', '3x')
    """
    match = _UNIT.match(answer) if len(answer) < 60 else None
    return match.group(1) if match else answer
