"""Text helpers shared by the built-in rewards: tags, ``\\boxed{}``, numbers.

All of them run in linear time on any input (no regex that can backtrack
catastrophically), so a 1 MB adversarial completion costs milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from fractions import Fraction
from typing import NamedTuple

__all__ = [
    "Tag",
    "boxed_contents",
    "find_tags",
    "parse_number",
    "tag_blocks",
]


class Tag(NamedTuple):
    """One occurrence of ``<name>`` or ``</name>`` in a text."""

    name: str
    closing: bool
    start: int
    end: int


def _tag_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"<(/?)({alternatives})>", re.IGNORECASE)


_PATTERNS: dict[tuple[str, ...], tuple[re.Pattern[str], dict[str, str]]] = {}


def find_tags(text: str, names: tuple[str, ...]) -> list[Tag]:
    """Every opening and closing tag of the given names, in order.

    Tags are matched exactly as written (``<think>``, ``</think>``) but
    case-insensitively, so ``<THINK>`` cannot smuggle in a second block.

    >>> [(t.name, t.closing) for t in find_tags("<think>a</think><ANSWER>b</answer>", ("think", "answer"))]
    [('think', False), ('think', True), ('answer', False), ('answer', True)]
    """
    cached = _PATTERNS.get(names)
    if cached is None:
        cached = _PATTERNS[names] = (_tag_pattern(names), {n.lower(): n for n in names})
    pattern, canonical = cached
    out = []
    for m in pattern.finditer(text):
        slash, name = m.groups()
        out.append(Tag(canonical.get(name) or canonical[name.lower()], slash == "/", m.start(), m.end()))
    return out


def tag_blocks(text: str, name: str) -> list[str] | None:
    """The contents of each well-formed ``<name>...</name>`` block, or ``None`` when tags are unbalanced or nested.

    >>> tag_blocks("<answer> 4 </answer>", "answer")
    [' 4 ']
    >>> tag_blocks("<answer>4", "answer") is None
    True
    >>> tag_blocks("no tags", "answer")
    []
    """
    blocks = []
    open_at: int | None = None
    for tag in find_tags(text, (name,)):
        if not tag.closing:
            if open_at is not None:
                return None  # nested or repeated opening
            open_at = tag.end
        else:
            if open_at is None:
                return None  # closing without opening
            blocks.append(text[open_at : tag.start])
            open_at = None
    if open_at is not None:
        return None
    return blocks


_BOXED = re.compile(r"\\(?:boxed|fbox)\s*")
_BRACE = re.compile(r"[{}]")


#: More stated answers than this is hedging at any scale; extraction stops there.
MAX_ANSWERS = 50


def boxed_contents(text: str, limit: int | None = None) -> list[str]:
    """The contents of every outermost ``\\boxed{...}`` (and ``\\fbox{...}``), braces matched.

    ``\\boxed 5`` (no braces) gives ``"5"``. A box inside another box is part
    of the outer one's content. An unclosed brace ends the search. Linear
    time: nested or unclosed boxes cannot make it quadratic. With ``limit``,
    stops after ``limit + 1`` boxes (enough to tell that there are too many).

    >>> boxed_contents(r"so \\boxed{\\frac{1}{2}} and \\boxed 7.")
    ['\\\\frac{1}{2}', '7']
    >>> boxed_contents(r"\\boxed{\\boxed{3}}")
    ['\\\\boxed{3}']
    """
    out: list[str] = []
    resume = 0
    for match in _BOXED.finditer(text):
        if limit is not None and len(out) > limit:
            break
        if match.start() < resume:
            continue  # inside the previous box
        i = match.end()
        if i < len(text) and text[i] == "{":
            depth = 0
            for brace in _BRACE.finditer(text, i):
                depth += 1 if brace.group() == "{" else -1
                if depth == 0:
                    out.append(text[i + 1 : brace.start()])
                    resume = brace.end()
                    break
            else:
                break
        else:
            token = re.match(r"[^\s$\\]+", text[i : i + 200])
            if token:
                out.append(token.group(0).rstrip(".,;"))
    return out


# A number as people write it in an answer: optional sign, optional currency,
# digits with optional thousands separators, optional decimals; or a fraction a/b.
_NUMBER = re.compile(
    r"(?<![\w.])(-|−|\+)?\s?\$?\s?"
    r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:\s?/\s?(\d+(?:\.\d+)?))?"
    r"(?![\w])"
)

_LATEX_CLEANUP = (
    (re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}"), r"\1/\2"),
    (re.compile(r"\\text\s*\{[^{}]*\}"), " "),
    (re.compile(r"\\(?:mathrm|textbf|mathbf)\s*\{([^{}]*)\}"), r"\1"),
    (re.compile(r"\{,\}"), ","),
    (re.compile(r"\\[,;!: ]"), ""),
    (re.compile(r"\\\$|\\%|%|\\left|\\right|\^\\circ|\\circ|\\cdot"), " "),
)


def clean_latex(text: str) -> str:
    r"""Strip the LaTeX people wrap numeric answers in.

    >>> clean_latex(r"\$1{,}000 \text{ dollars}")
    ' 1,000  '
    >>> clean_latex(r"\dfrac{3}{4}")
    '3/4'
    """
    for pattern, repl in _LATEX_CLEANUP:
        text = pattern.sub(repl, text)
    return text


def iter_numbers(text: str) -> Iterator[tuple[Fraction, int, int]]:
    """Every number in ``text`` as an exact ``Fraction``, with its span.

    >>> [str(v) for v, _, _ in iter_numbers("paid $1,200.50 for 3/4 of it, -2 left")]
    ['2401/2', '3/4', '-2']
    """
    for match in _NUMBER.finditer(text):
        sign, digits, denominator = match.groups()
        try:
            value = Fraction(digits.replace(",", ""))
            if denominator is not None:
                den = Fraction(denominator)
                if den == 0:
                    continue
                value /= den
        except (ValueError, ZeroDivisionError):
            continue
        if sign in ("-", "−"):
            value = -value
        yield value, match.start(), match.end()


def parse_number(text: str) -> Fraction | None:
    """The single number a short answer states, or ``None`` (no number, or several different ones).

    An equation's right-hand side counts (``9 * 2 = 18`` is 18); units,
    currency, thousands separators, trailing punctuation and LaTeX wrapping
    are ignored.

    >>> parse_number("$1,000.")
    Fraction(1000, 1)
    >>> parse_number("9 * 2 = 18 dollars")
    Fraction(18, 1)
    >>> parse_number("18 or 19") is None
    True
    """
    text = clean_latex(text)
    if "=" in text:
        text = text.rsplit("=", 1)[1]
    values = {value for value, _, _ in iter_numbers(text)}
    if len(values) != 1:
        return None
    return values.pop()


def format_number(value: Fraction) -> str:
    """A readable rendering of an exact number.

    >>> format_number(Fraction(18)), format_number(Fraction(1, 2))
    ('18', '0.5')
    """
    if value.denominator == 1:
        return str(value.numerator)
    as_float = float(value)
    return f"{as_float:.6g}" if Fraction(repr(as_float)) == value else str(value)


def final_segment(text: str, think_tag: str = "think") -> str:
    """The part of a completion after its reasoning: the text after the last ``</think>`` (all of it if none).

    Answers stated inside the reasoning are drafts; only what follows the
    reasoning is final.

    >>> final_segment("<think>maybe \\\\boxed{5}</think> so \\\\boxed{6}")
    ' so \\\\boxed{6}'
    >>> final_segment("no reasoning tags")
    'no reasoning tags'
    """
    closing = [t for t in find_tags(text, (think_tag,)) if t.closing]
    return text[closing[-1].end :] if closing else text


_ANSWER_PHRASE = re.compile(r"(?:final\s+answer|answer)\s*(?:is|:|=)\s*", re.IGNORECASE)


def answer_phrase(text: str) -> str | None:
    r"""What follows the last explicit answer statement ("the answer is", "Final Answer:"), up to the line's end.

    >>> answer_phrase("so the final answer is $\\frac{1}{2}$.\nThanks")
    '$\\frac{1}{2}$'
    >>> answer_phrase("no statement") is None
    True
    """
    matches = list(_ANSWER_PHRASE.finditer(text))
    if not matches:
        return None
    tail = text[matches[-1].end() :].split("\n", 1)[0].strip()
    tail = tail.rstrip(" .;,!")
    return tail or None
