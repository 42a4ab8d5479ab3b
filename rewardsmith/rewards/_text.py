"""Text helpers shared by the built-in rewards: what a text shows, tags, ``\\boxed{}``, numbers.

Every rule reward scores a completion as it is *seen*: :func:`visible_text`
removes the characters that show nothing (zero-width and other format
characters, variation selectors, tag characters, controls) and turns the
ones drawn as blank space (Hangul fillers, the Braille blank) into spaces,
and :func:`has_content` says whether a part shows anything at all, so that
invisible padding can neither fill an empty block nor split or join words.

All of them run in linear time on any input (no regex that can backtrack
over a run it already scanned, block extraction by scanning), so a 1 MB
adversarial completion costs milliseconds.
"""

from __future__ import annotations

import functools
import itertools
import re
import sys
import unicodedata
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import NamedTuple

__all__ = [
    "Tag",
    "boxed_contents",
    "count_tag",
    "fenced_blocks",
    "find_tags",
    "fold_word",
    "has_content",
    "iter_tags",
    "matches_near",
    "paired_blocks",
    "parse_number",
    "tag_blocks",
    "tag_name",
    "visible_text",
]

# -- what a text shows -------------------------------------------------------------------------------------

#: Characters drawn as blank space that Unicode does not call white space: Hangul fillers, the Braille blank.
BLANK_LIKE = "\u115f\u1160\u3164\uffa0\u2800"
#: Format characters that are drawn (Arabic and Kaithi number signs): kept.
_DRAWN_FORMAT = frozenset("\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd")
#: Marks that change nothing a reader sees: variation selectors, the combining grapheme joiner, Mongolian FVS,
#: and Unicode's other default-ignorable code points that are not format characters (Khmer inherent vowels,
#: the reserved ones: drawn as nothing when a font lacks them).
_NO_OP_MARKS = (
    "\u034f\u180b-\u180d\u180f\ufe00-\ufe0f\U000e0100-\U000e01ef\u17b4\u17b5\u2065\ufff0-\ufff8\U000e0000-\U000e0fff"
)
_ASCII_INVISIBLE = re.compile(r"[\x00-\x08\x0e-\x1b\x7f]+")
_BLANKS = str.maketrans(dict.fromkeys(BLANK_LIKE, " "))


def _ranges(codepoints: list[int]) -> str:
    out, start, previous = [], None, None
    for c in [*codepoints, -2]:
        if previous is not None and c == previous + 1:
            previous = c
            continue
        if start is not None:
            out.append(re.escape(chr(start)) + ("" if previous == start else "-" + re.escape(chr(previous))))
        start = previous = c
    return "".join(out)


@functools.lru_cache(maxsize=1)
def _invisible_pattern() -> re.Pattern[str]:
    """Format characters (Cf), controls that are not white space (Cc), lone surrogates, and no-op marks.

    Built from this Python's Unicode database on first use (about 0.1 s, once per process).
    """
    invisible = [
        c
        for c in range(sys.maxunicode + 1)
        if (cat := unicodedata.category(chr(c))) in ("Cf", "Cs") or (cat == "Cc" and not chr(c).isspace())
    ]
    kept = [c for c in invisible if chr(c) not in _DRAWN_FORMAT]
    return re.compile(f"[{_ranges(kept)}{_NO_OP_MARKS}]+")


def visible_text(text: str) -> str:
    r"""``text`` as it is seen: characters that show nothing removed, characters drawn as blank space made spaces.

    Removed: format characters (zero-width space and joiners, word joiner,
    byte-order mark, soft hyphen, direction marks and overrides, tag
    characters, invisible operators), controls other than white space, lone
    surrogates, variation selectors and the combining grapheme joiner.
    Made spaces: Hangul fillers and the Braille blank. Everything else, accents
    and other combining marks included, is kept as written.

    >>> visible_text("<think>\u200b</think> go\u200d go\u3164go \u2800x\ufe0f")
    '<think></think> go go go  x'
    >>> visible_text("plain text") == "plain text"
    True
    """
    if text.isascii():
        return _ASCII_INVISIBLE.sub("", text) if not text.isprintable() else text
    return _invisible_pattern().sub("", text).translate(_BLANKS)


def has_content(text: str) -> bool:
    r"""Whether ``text`` shows anything: a letter, digit, punctuation mark or symbol that is not blank.

    White space, invisible characters, blank-drawn characters and combining
    marks with nothing to combine with are no content.

    >>> has_content(" x "), has_content("\u200b \u3164\u2800"), has_content("\u0301\u0301"), has_content("")
    (True, False, False, False)
    """
    for ch in text:
        if ch.isascii():
            if ch.isprintable() and not ch.isspace():
                return True
        elif ch not in BLANK_LIKE and unicodedata.category(ch)[0] in "LNPS":
            return True
    return False


#: Letters that look like Latin ones (Cyrillic, Greek), folded to them when words are compared.
_LOOK_ALIKES = str.maketrans(
    "аеорсхуіјѕԁһӏԛԝкмнтвАЕОРСХУІЈЅВМНТКΑΒΕΖΗΙΚΜΝΟΡΤΥΧαοικνρτυχ",
    "aeopcxyijsdhlqwkmhtbAEOPCXYIJSBMHTKABEZHIKMNOPTYXaoikvptux",
)


def fold_word(word: str) -> str:
    r"""A word as compared for repetition: compatibility forms, case, accents and look-alike letters folded.

    >>> fold_word("Ｇо́"), fold_word("𝐠𝐨"), fold_word("go")
    ('go', 'go', 'go')
    """
    if word.isascii():
        return word.lower()
    decomposed = unicodedata.normalize("NFKD", word.translate(_LOOK_ALIKES)).casefold()
    base = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return unicodedata.normalize("NFKC", base).translate(_LOOK_ALIKES)


# -- tags ----------------------------------------------------------------------------------------------------

_TAG_NAME = re.compile(r"[A-Za-z_][\w.:-]{0,63}")


def tag_name(name: str, setting: str = "tag") -> str:
    r"""A tag name as the rewards match it: ``think``, also when written ``<think>`` or ``</think>``.

    Raises :class:`ValueError` for anything that cannot be a tag name.

    >>> tag_name("<think>"), tag_name("answer")
    ('think', 'answer')
    """
    bare = name.strip() if isinstance(name, str) else name
    if isinstance(bare, str) and bare.startswith("<") and bare.endswith(">"):
        bare = bare[1:-1].lstrip("/").strip()
    if not isinstance(bare, str) or not _TAG_NAME.fullmatch(bare):
        raise ValueError(
            f"{setting} must be a tag name like 'think' (or '<think>'): letters, digits, '_', '-', '.' or ':', "
            f"starting with a letter; got {name!r}"
        )
    return bare


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


def find_tags(text: str, names: tuple[str, ...], limit: int | None = None) -> list[Tag]:
    """Every opening and closing tag of the given names, in order (with ``limit``, at most ``limit + 1``).

    Tags are matched exactly as written (``<think>``, ``</think>``) but
    case-insensitively, so ``<THINK>`` cannot smuggle in a second block.
    ``limit`` stops the scan once there are more tags than a caller can
    accept, so that a run of repeated tags costs nothing more.

    >>> [(t.name, t.closing) for t in find_tags("<think>a</think><ANSWER>b</answer>", ("think", "answer"))]
    [('think', False), ('think', True), ('answer', False), ('answer', True)]
    >>> len(find_tags("<think>" * 1000, ("think",), limit=4))
    5
    """
    out = []
    for tag in iter_tags(text, names):
        out.append(tag)
        if limit is not None and len(out) > limit:
            break
    return out


def iter_tags(text: str, names: tuple[str, ...]) -> Iterator[Tag]:
    """The tags :func:`find_tags` finds, one at a time, so that a caller can stop at the first one it rejects.

    >>> next(iter_tags("x <Think> y", ("think",))).start
    2
    """
    cached = _PATTERNS.get(names)
    if cached is None:
        cached = _PATTERNS[names] = (_tag_pattern(names), {n.lower(): n for n in names})
    pattern, canonical = cached
    for m in pattern.finditer(text):
        slash, name = m.groups()
        yield Tag(canonical.get(name) or canonical[name.lower()], slash == "/", m.start(), m.end())


def count_tag(text: str, name: str, closing: bool) -> int:
    """How often ``<name>`` (or ``</name>``) occurs, case-insensitively, without building a list.

    >>> count_tag("<think>a</THINK><think>", "think", False)
    2
    """
    tag = f"</{name}>" if closing else f"<{name}>"
    return text.lower().count(tag.lower())


def tag_blocks(text: str, name: str, limit: int | None = None) -> list[str] | None:
    """The contents of each well-formed ``<name>...</name>`` block, or ``None`` when tags are unbalanced or nested.

    With ``limit``, stops after ``limit + 1`` blocks (enough to tell that there are too many).

    >>> tag_blocks("<answer> 4 </answer>", "answer")
    [' 4 ']
    >>> tag_blocks("<answer>4", "answer") is None
    True
    >>> tag_blocks("no tags", "answer")
    []
    """
    blocks = []
    open_at: int | None = None
    for tag in iter_tags(text, (name,)):  # one at a time: a repeated or stray tag ends the scan where it is
        if not tag.closing:
            if open_at is not None:
                return None  # nested or repeated opening
            open_at = tag.end
        else:
            if open_at is None:
                return None  # closing without opening
            blocks.append(text[open_at : tag.start])
            open_at = None
            if limit is not None and len(blocks) > limit:
                return blocks
    if open_at is not None:
        return None
    return blocks


def fenced_blocks(text: str, languages: tuple[str, ...] | None = None) -> list[str]:
    r"""The contents of Markdown fenced blocks (```` ```lang ```` ... ```` ``` ````) whose language is in ``languages``.

    ``languages`` are lower-case info strings, ``""`` for a fence without one;
    ``None`` accepts any. A block in another language is skipped whole (its
    closing fence never opens a block), and an unclosed fence ends the search.
    Found by scanning, in linear time.

    >>> fenced_blocks("```bash\nls\n```\n```python\nx = 1\n```", ("python", ""))
    ['x = 1\n']
    >>> fenced_blocks("```JSON\n{}\n```", ("json",))
    ['{}\n']
    """
    out: list[str] = []
    position = 0
    while True:
        start = text.find("```", position)
        if start == -1:
            return out
        line_end = text.find("\n", start + 3)
        if line_end == -1:
            return out
        close = text.find("```", line_end + 1)
        if close == -1:
            return out
        info = text[start + 3 : line_end].strip(" \t\r").lower()
        if languages is None or info in languages:
            out.append(text[line_end + 1 : close])
        position = close + 3


def paired_blocks(text: str, opening: str, closing: str, limit: int | None = None) -> list[str]:
    """The text between each ``opening`` and the next ``closing`` after it, in order; an unclosed one ends the search.

    Found by scanning (``<tool_call>(.*?)</tool_call>`` as a regex is quadratic on repeated unclosed openings).
    With ``limit``, stops after ``limit + 1`` blocks.

    >>> paired_blocks("<c>a</c> <c>b<c>c</c> <c>d", "<c>", "</c>")
    ['a', 'b<c>c']
    """
    out: list[str] = []
    position = 0
    while limit is None or len(out) <= limit:
        start = text.find(opening, position)
        if start == -1:
            break
        end = text.find(closing, start + len(opening))
        if end == -1:
            break
        out.append(text[start + len(opening) : end])
        position = end + len(closing)
    return out


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


# A number as people write it in an answer: optional sign (ASCII, the minus sign, dashes and hyphens that models
# write for it), optional currency, digits with optional thousands separators, optional decimals and exponent; or a
# fraction a/b. A unit glued on (``2.5kg``, ``12cm``) ends a number; a letter or digit before it starts none.
MINUS_SIGNS = "-\u2212\u2013\u2010\u2012\ufe63\uff0d"
_NUMBER = re.compile(
    rf"(?<![\w.])([{MINUS_SIGNS}+])?([ \t]?)\$?[ \t]?"
    r"(\d{1,3}(?:,\d{3})+(?!\d)(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:[eE]([-+]?\d{1,3})(?![\w.]))?"
    r"(?:[ \t]?/[ \t]?(\d+(?:\.\d+)?)(?![\d.]))?"
    r"(?!\d|\.\d|(?:st|nd|rd|th)\b)"  # an ordinal (3rd, 21st) counts nothing
)

_LATEX_CLEANUP = (
    (re.compile(r"\\[dt]?frac\s{0,20}\{([^{}]*)\}\s{0,20}\{([^{}]*)\}"), r"\1/\2"),
    (re.compile(r"\\(?:[hv]?phantom|[hv]space\*?)\s{0,20}\{[^{}]*\}"), " "),
    (re.compile(r"\\(?:text\w{0,6}|mathrm|mathbf|mbox|operatorname)\s{0,20}\{([^{}]*)\}"), r" \1 "),
    (re.compile(r"\{,\}"), ","),
    (re.compile(r"\\[,;!: ]"), ""),
    (re.compile(r"\\\$|\\%|%|\\left|\\right|\^\\circ|\\circ|\\cdot"), " "),
)


def clean_latex(text: str) -> str:
    r"""Strip the LaTeX people wrap numeric answers in (the words of ``\text{}`` are kept: ``\text{or 20}`` says 20).

    >>> clean_latex(r"\$1{,}000 \text{dollars}")
    ' 1,000  dollars '
    >>> clean_latex(r"\dfrac{3}{4}"), clean_latex(r"\phantom{18}")
    ('3/4', ' ')
    """
    for pattern, repl in _LATEX_CLEANUP:
        text = pattern.sub(repl, text)
    return text


def _is_bullet(text: str, sign_at: int) -> bool:
    """Whether the sign at ``sign_at`` opens its line (after white space): a Markdown bullet, not a minus sign."""
    line_start = text.rfind("\n", 0, sign_at) + 1
    return not text[line_start:sign_at].strip()


def _value(digits: str, exponent: str | None, denominator: str | None) -> Fraction | None:
    try:
        value = Fraction(digits.replace(",", ""))
        if exponent is not None:
            value *= Fraction(10) ** int(exponent)
        if denominator is not None:
            den = Fraction(denominator)
            if den == 0:
                return None
            value /= den
    except (ValueError, ZeroDivisionError):
        return None
    return value


def iter_numbers(text: str) -> Iterator[tuple[Fraction, int, int]]:
    r"""Every number in ``text`` as an exact ``Fraction``, with its span.

    A unit glued on ends a number (``2.5kg`` is 2.5, ``1.8e1`` is 18); en
    dashes, hyphens and full-width or small minus signs are minus signs, and a
    ``-`` that opens a line before a space is a bullet.

    >>> [str(v) for v, _, _ in iter_numbers("paid $1,200.50 for 3/4 of it, -2 left")]
    ['2401/2', '3/4', '-2']
    >>> [str(v) for v, _, _ in iter_numbers("2.5kg, 12cm, 1.8e1, \u201318, \uff0d3\n- 7, 21st")]
    ['5/2', '12', '18', '-18', '-3', '7']
    """
    for match, value in _numbers(text):
        if value is not None:
            yield value, match.start(), match.end()


_DIGIT = re.compile(r"\d")


def _numbers(text: str) -> Iterator[tuple[re.Match[str], Fraction | None]]:
    for match in _NUMBER.finditer(text):
        yield match, _match_value(text, match)


def _match_value(text: str, match: re.Match[str]) -> Fraction | None:
    sign, gap, digits, exponent, denominator = match.groups()
    value = _value(digits, exponent, denominator)
    if value is not None and sign and sign != "+" and not (gap and _is_bullet(text, match.start())):
        value = -value
    return value


def number_at(text: str, start: int) -> Fraction | None:
    """The value of the number :func:`number_spans` found at ``start``.

    >>> number_at("so -18.", 3)
    Fraction(-18, 1)
    """
    match = _NUMBER.match(text, start)
    return None if match is None else _match_value(text, match)


def number_spans(text: str) -> Iterator[tuple[str, int, int]]:
    """Each number's spelling (sign, digits, exponent, denominator) and span, without computing its value (fast).

    >>> [s for s, _, _ in number_spans("1/2 and -3")]
    ['1/2', '-3/']
    """
    if _DIGIT.search(text) is None:
        return
    for match in _NUMBER.finditer(text):
        sign, gap, digits, exponent, denominator = match.groups()
        negative = bool(sign) and sign != "+" and not (gap and _is_bullet(text, match.start()))
        power = f"e{exponent}" if exponent else ""
        key = f"{'-' if negative else ''}{digits.replace(',', '')}{power}/{denominator or ''}"
        yield key, match.start(), match.end()


def parse_number(text: str) -> Fraction | None:
    """The single number a short answer states, or ``None`` (no number, or several different ones).

    An equation's right-hand side counts (``9 * 2 = 18`` is 18); units,
    currency, thousands separators, trailing punctuation and LaTeX wrapping
    are ignored.

    >>> parse_number("$1,000.")
    Fraction(1000, 1)
    >>> parse_number("9 * 2 = 18 dollars")
    Fraction(18, 1)
    >>> parse_number("18 or 19") is None, parse_number("x = 18 = 20") is None, parse_number("3 * 6 = 18 = 18.0")
    (True, True, Fraction(18, 1))
    >>> parse_number("20 = 18 + 2")
    Fraction(20, 1)
    """
    text = clean_latex(text)
    if "=" in text:
        sides = text.split("=")
        singles = {v for side in sides if (v := _single_number(side)) is not None}
        if len(singles) > 1:
            return None  # 18 = 20: two different values
        if singles and _single_number(sides[-1]) is None:
            return singles.pop()  # 20 = 18 + 2: the working after the value
        text = sides[-1]
    values = {value for value, _, _ in iter_numbers(text)}
    if len(values) != 1:
        return None
    return values.pop()


def _single_number(side: str) -> Fraction | None:
    """The number one side of an equation is, when it is nothing but one number (``$18``, ``18 dollars``)."""
    numbers = list(itertools.islice(iter_numbers(side), 2))
    return numbers[0][0] if len(numbers) == 1 and not re.search(r"[-+*/×÷^]\s*$|^\s*[*/×÷^]", side) else None


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
    end = last_tag_end(text, think_tag, closing=True)
    return text[end:] if end is not None else text


def last_tag_end(text: str, name: str, closing: bool = False) -> int | None:
    """Where the last ``<name>`` (or ``</name>``) ends, case-insensitively; ``None`` if there is none.

    >>> last_tag_end("<think>a</think>b</THINK>c", "think", closing=True)
    25
    """
    tag = f"</{name}>" if closing else f"<{name}>"
    if text.isascii() and tag.isascii():
        at = text.lower().rfind(tag.lower())
        return None if at == -1 else at + len(tag)
    end = None
    for match in _tag_pattern((name,)).finditer(text):
        if (match.group(1) == "/") == closing:
            end = match.end()
    return end


# -- patterns tried only near their words ----------------------------------------------------------------------


def matches_near(
    text: str, pattern: re.Pattern[str], words: tuple[str, ...], reach: int, longest: int, limit: int | None = None
) -> list[re.Match[str]]:
    r"""The matches ``pattern.finditer(text)`` gives, found by trying the pattern only around ``words``.

    Every match must hold one of ``words`` (matched in any case) at most
    ``reach`` characters after its start, and reach no further than
    ``longest`` characters from its start, the characters its lookarounds
    read included. The pattern is then tried only in windows from ``reach``
    before a word, a few times ``longest`` long, and a match is taken only
    where it ends well inside its window: the same matches, without running
    a costly pattern from every position of a long text. A window that holds
    no match moves the search past all of it but its last ``longest``
    characters, so the work stays linear however densely the words occur.
    With ``limit``, at most ``limit + 1``.

    >>> pattern = re.compile(r"(?:the\s)?answer is (\d+)", re.IGNORECASE)
    >>> [m.group(1) for m in matches_near("So the answer is 5; the ANSWER is 6.", pattern, ("answer",), 4, 20)]
    ['5', '6']
    """
    next_word = _word_finder(text, words)
    window = 4 * (reach + longest)
    found: list[re.Match[str]] = []
    position = 0  # every match not found yet starts here or later
    while limit is None or len(found) <= limit:
        near = next_word(position)  # a match starting at ``position`` or later holds a word from there on
        if near < 0:
            break
        start, end = max(position, near - reach), near + window
        match = pattern.search(text, start, end)
        if match is not None and (match.start() + longest < end or end >= len(text)):
            found.append(match)  # it ends inside the window: it is what the whole text gives there
            position = max(match.end(), match.start() + 1)
        else:
            # no match starts before ``end - longest`` (one there would end inside the window and be found), nor
            # before the one found, which may be cut short by the window's end
            bound = end - longest if match is None else min(match.start(), end - longest)
            position = max(position + 1, bound)
    return found


def _word_finder(text: str, words: tuple[str, ...]) -> Callable[[int], int]:
    """A function giving where the next of ``words`` (any case) starts from a position on, or -1."""
    if text.isascii():
        lowered = text.lower()  # the same length: the same positions
        ahead = [-1] * len(words)  # where each word is next found (looked for again only once passed)

        def find(position: int) -> int:
            best = -1
            for i, word in enumerate(words):
                at = ahead[i]
                if at != len(text) and at < position:
                    at = lowered.find(word, position)
                    ahead[i] = at = len(text) if at < 0 else at
                if at != len(text) and (best < 0 or at < best):
                    best = at
            return best

        return find
    keyword = _keyword_pattern(words)

    def search(position: int) -> int:
        hit = keyword.search(text, position)
        return -1 if hit is None else hit.start()

    return search


@functools.lru_cache(maxsize=32)
def _keyword_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)
