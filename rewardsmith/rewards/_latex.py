r"""Cheap checks on LaTeX answers, made before any symbolic work: each runs in linear time.

* :func:`repeating_decimal`: ``0.\overline{3}`` as the exact fraction 1/3
  (``\overline``, ``\bar`` and ``\dot`` over the repeating digits);
  :func:`has_repeat_notation` finds notation that is not one of those exact
  forms, which is then not checked at all (a reader of ``12.\overline{5}`` as
  12 would accept a wrong answer);
* :func:`is_placeholder`: ``\boxed{}``, ``\boxed{\phantom{2}}``, ``\square``,
  ``\_``: a blank to fill in, not an answer;
* :func:`is_prose`: a reference written in words (``forty two``) that a LaTeX
  parser would read as a product of letters;
* :func:`blow_up`: an expression whose value or expansion is astronomically
  large (``9^{9^{9}}``, ``10^{10^{10}}``, ``1000000!``, ``\binom{10^6}{5}``,
  ``(x+1)^{100000}``): sympy would spend minutes computing it, while a short
  estimate of its size already tells that it cannot equal an ordinary answer.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from fractions import Fraction

from rewardsmith.core.errors import RewardsmithError

__all__ = ["blow_up", "has_repeat_notation", "is_placeholder", "is_prose", "repeating_decimal"]

# -- repeating decimals ---------------------------------------------------------------------------------------

_REPEAT = re.compile(
    r"^(-?)(\d{0,50})\.(\d{0,50})(?:\\overline|\\bar|\\dot)\s{0,5}\{\s{0,5}(\d{1,50})\s{0,5}\}$"
    r"|^(-?)(\d{0,50})\.(\d{0,50})(?:\\overline|\\bar|\\dot)\s{0,5}(\d)$"
)
_REPEAT_NOTATION = re.compile(r"\\(?:overline|bar|dot)\s{0,5}\{?\s{0,5}\d")


def repeating_decimal(latex: str) -> Fraction | None:
    r"""The exact value of a repeating decimal (``0.\overline{3}``, ``0.1\overline{6}``, ``12.\bar{5}``), else ``None``.

    >>> repeating_decimal(r"0.\overline{3}"), repeating_decimal(r"-1.0\overline{45}"), repeating_decimal("0.3")
    (Fraction(1, 3), Fraction(-23, 22), None)
    """
    match = _REPEAT.match(latex.replace(" ", ""))
    if match is None:
        return None
    groups = match.groups()
    sign, whole, fixed, repeat = groups[:4] if groups[3] is not None else groups[4:]
    value = Fraction(int(whole or "0")) + Fraction(int(fixed or "0"), 10 ** len(fixed))
    value += Fraction(int(repeat), 10 ** len(fixed) * (10 ** len(repeat) - 1))
    return -value if sign else value


def has_repeat_notation(latex: str) -> bool:
    r"""Whether ``latex`` writes repeating digits (``\overline{3}``, ``\dot 3``) in any form.

    >>> has_repeat_notation(r"0.\overline{3}"), has_repeat_notation(r"\overline{AB}")
    (True, False)
    """
    return _REPEAT_NOTATION.search(latex) is not None


# -- blanks and prose -----------------------------------------------------------------------------------------

_BLANK_PARTS = re.compile(
    r"\\(?:[hv]?phantom|hspace\*?|vspace\*?|underline|text|mathrm|textbf|mbox)\s{0,5}(?=\{)"
    r"|\\(?:square|Box|blacksquare|qquad|quad|ldots|cdots|dots|_|,|;|!|:| )"
    r"|[{}\s_?.$]"
)
# A spacing command's width (``\hspace{1cm}``) is no content; elsewhere ``12cm`` is an answer with a unit.
_SPACE_WIDTH = re.compile(r"\\[hv]space\*?\s{0,5}\{[^{}]{0,40}\}")


def is_placeholder(latex: str) -> bool:
    r"""Whether a stated answer is a blank to fill in: empty, ``\phantom{..}``, ``\square``, ``\_``, ``?``, dots.

    >>> is_placeholder(r"\phantom{2}"), is_placeholder(r"\underline{\hspace{1cm}}"), is_placeholder("x")
    (True, True, False)
    >>> is_placeholder("12cm"), is_placeholder(r"\hspace{2em}")
    (False, True)
    """
    without_phantoms = _PHANTOM.sub("", _SPACE_WIDTH.sub("", latex))
    return not _BLANK_PARTS.sub("", without_phantoms)


_PHANTOM = re.compile(r"\\[hv]?phantom\s{0,5}\{[^{}]{0,200}\}")
_COMMAND_OR_TEXT = re.compile(
    r"\\(?:text|mathrm|textbf|mbox|operatorname|begin|end)\s{0,5}\{[^{}]{0,200}\}|\\[A-Za-z]+"
)
_WORD = re.compile(r"[A-Za-z]{2,}")
#: Capitals naming points, segments or triangles (``AB``, ``NO``, ``ABC``) are no words.
_NAME = re.compile(r"[A-Z]{2,3}")


def is_prose(text: str) -> bool:
    r"""Whether a reference is written in words (two or more words outside LaTeX commands and ``\text{}``).

    A single word (``Evelyn``) is not prose: it is compared as written, and neither are the capitals that name
    points and segments (``AB=4, CD=5``, ``\frac{NO}{BO}``).

    >>> is_prose("forty two"), is_prose("Answer is forty two."), is_prose("Evelyn"), is_prose(r"2\text{ and }3")
    (True, True, False, False)
    >>> is_prose("AB=4, CD=5"), is_prose(r"\frac{NO}{BO}=\frac{1}{\sqrt{6}}"), is_prose("AB is four")
    (False, False, True)
    >>> is_prose(r"\frac{\sqrt{3}}{2}"), is_prose(r"x \in [-2, 7]"), is_prose(r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}")
    (False, False, False)
    """
    bare = _COMMAND_OR_TEXT.sub(" ", text)
    words = (w for w in _WORD.finditer(bare) if not _NAME.fullmatch(w.group(0)))
    return len(list(itertools.islice(words, 2))) == 2


# -- size blow-ups --------------------------------------------------------------------------------------------

#: An answer whose value has more decimal digits than this, or whose expansion has more terms, is astronomical.
MAX_DIGITS = 100_000
MAX_TERMS = 200
_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\d+(?:\.\d+)?|[A-Za-z]|\S")
_MAX_DEPTH = 60


@dataclass(frozen=True)
class _Size:
    """Upper bounds of an expression's magnitude (``log10`` of its absolute value, 0 for symbols and for values
    of at most 1) and of its terms once expanded."""

    digits: float
    terms: float
    numeric: bool

    def value_bound(self) -> float:
        """An upper bound of the absolute value when numeric (``inf`` when astronomically large)."""
        return 10.0**self.digits if self.digits < 300 else math.inf


_SYMBOL = _Size(0.0, 1.0, False)


class _TooLarge(RewardsmithError):
    pass


class _Unreadable(RewardsmithError):
    pass


class _Estimator:
    """A recursive-descent reading of arithmetic LaTeX that bounds sizes instead of computing values."""

    def __init__(self, latex: str) -> None:
        self.tokens = _TOKEN.findall(latex)
        self.i = 0
        self.depth = 0

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise _Unreadable
        self.i += 1
        return token

    def sequence(self, closing: str | None) -> _Size:
        """Expressions until ``closing`` (relations, commas and other separators between them)."""
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise _TooLarge("nested more than 60 levels deep")
        result = _Size(0.0, 1.0, True)
        while self.peek() is not None and self.peek() != closing:
            token = self.peek()
            if token in ("=", ",", ";", "<", ">", "\\le", "\\ge", "\\leq", "\\geq", "\\neq", "&", "\\\\", "|", ":"):
                self.take()
                continue
            part = self.expression(closing)
            result = _Size(
                max(result.digits, part.digits), max(result.terms, part.terms), result.numeric and part.numeric
            )
        if closing is not None:
            self.take()
        self.depth -= 1
        return result

    def expression(self, closing: str | None) -> _Size:
        size = self.term(closing)
        while self.peek() in ("+", "-", "\\pm", "\\mp"):
            self.take()
            other = self.term(closing)
            size = _Size(max(size.digits, other.digits) + 1, size.terms + other.terms, size.numeric and other.numeric)
        return size

    def term(self, closing: str | None) -> _Size:
        size = self.unary(closing)
        while True:
            token = self.peek()
            if token in ("*", "/", "\\cdot", "\\times", "\\div"):
                self.take()
            elif token is None or token == closing or not self._starts_factor(token):
                return size
            other = self.unary(closing)
            size = _Size(size.digits + other.digits, size.terms * other.terms, size.numeric and other.numeric)

    @staticmethod
    def _starts_factor(token: str) -> bool:
        return (
            token[0].isalnum()
            or token in ("(", "{", "[", "\\left", "\\{")
            or (token.startswith("\\") and token[1:].isalpha() and token not in ("\\right", "\\le", "\\ge", "\\pm"))
        )

    def unary(self, closing: str | None) -> _Size:
        if self.peek() in ("-", "+"):
            self.take()
        return self.power(closing)

    def power(self, closing: str | None) -> _Size:
        base = self.postfix(self.atom(closing))
        while self.peek() == "^":
            self.take()
            exponent = self.postfix(self.atom(None, single=True))
            base = self.postfix(_raise(base, exponent))
        if self.peek() == "_":  # a subscript (a_{n+1}, \log_2): a name, not arithmetic
            self.take()
            self.atom(None, single=True)
        return base

    def postfix(self, size: _Size) -> _Size:
        while self.peek() == "!":
            self.take()
            size = _factorial(size)
        return size

    def atom(self, closing: str | None, single: bool = False) -> _Size:
        token = self.take()
        if token[0].isdigit():
            if single and len(token) > 1 and "." not in token:  # x^23 is x^2 times 3 in LaTeX
                self.tokens[self.i - 1 : self.i] = [token[0], token[1:]]
                token = token[0]
            return _Size(math.log10(max(float(token), 1.0)) if len(token) < 300 else float(len(token)), 1.0, True)
        if token in ("{", "(", "[", "\\{"):
            return self.sequence({"{": "}", "(": ")", "[": "]", "\\{": "\\}"}[token])
        if token == "\\left":
            self.take()  # the opening delimiter
            return self.sequence_until_right()
        if token in ("\\frac", "\\dfrac", "\\tfrac", "\\binom", "\\dbinom", "\\tbinom", "\\sqrt"):
            return self.command(token)
        if token.startswith("\\") and token[1:].isalpha():
            return _SYMBOL
        if token[0].isalpha():
            return _SYMBOL
        raise _Unreadable

    def sequence_until_right(self) -> _Size:
        result = _Size(0.0, 1.0, True)
        while self.peek() not in (None, "\\right"):
            token = self.peek()
            if token in (",", ";", "="):
                self.take()
                continue
            part = self.expression("\\right")
            result = _Size(
                max(result.digits, part.digits), max(result.terms, part.terms), result.numeric and part.numeric
            )
        if self.peek() == "\\right":
            self.take()
            self.take()  # the closing delimiter
        return result

    def braced(self) -> _Size:
        if self.peek() == "{":
            self.take()
            return self.sequence("}")
        return self.atom(None, single=True)

    def command(self, name: str) -> _Size:
        if name == "\\sqrt":
            if self.peek() == "[":
                self.take()
                self.sequence("]")
            inner = self.braced()
            return _Size(inner.digits / 2 + 1, inner.terms, inner.numeric)
        top, bottom = self.braced(), self.braced()
        if "binom" in name:
            if top.numeric and bottom.numeric:
                n = top.value_bound()
                if n == math.inf or n * math.log10(2) > MAX_DIGITS:
                    raise _TooLarge("a binomial coefficient with astronomically many digits")
                return _Size(n * math.log10(2) + 1, 1.0, True)
            return _Size(top.digits + bottom.digits, top.terms * bottom.terms, False)
        return _Size(top.digits + bottom.digits, top.terms * bottom.terms, top.numeric and bottom.numeric)


def _raise(base: _Size, exponent: _Size) -> _Size:
    if not exponent.numeric:
        return _Size(base.digits, base.terms, False)  # 2^x stays symbolic: nothing is computed
    e = exponent.value_bound()
    if base.digits > 0 and (e == math.inf or base.digits * e > MAX_DIGITS):
        raise _TooLarge("a power with astronomically many digits")
    terms = 1.0
    if base.terms > 1:
        if e == math.inf or e > MAX_TERMS:
            raise _TooLarge("a power of a sum whose expansion has astronomically many terms")
        terms = math.comb(int(min(base.terms, 1e6) + e - 1), int(e)) if base.terms < 50 else math.inf
        if terms > MAX_TERMS**2:
            raise _TooLarge("a power of a sum whose expansion has astronomically many terms")
    return _Size(base.digits * e if base.digits > 0 else 0.0, terms, base.numeric)


def _factorial(size: _Size) -> _Size:
    if not size.numeric:
        return size
    n = size.value_bound()
    if n == math.inf or n * math.log10(max(n, 2)) > MAX_DIGITS:
        raise _TooLarge("a factorial with astronomically many digits")
    return _Size(n * math.log10(max(n, 2)) + 1, 1.0, True)


def blow_up(latex: str) -> str | None:
    r"""Why evaluating ``latex`` would be astronomically large, or ``None`` when it is not (or cannot be read).

    The estimate reads numbers, ``+ - * /``, ``\cdot``, ``\times``, ``\frac``,
    ``\sqrt``, ``\binom``, powers, factorials and brackets, and bounds the
    digits of every value and the terms of every expansion; it computes none
    of them. Whatever it cannot read is left to the symbolic check (which runs
    with a hard timeout).

    >>> blow_up("9^{9^{9}}"), blow_up("1000000!")
    ('a power with astronomically many digits', 'a factorial with astronomically many digits')
    >>> blow_up("(x+1)^{100000}")
    'a power of a sum whose expansion has astronomically many terms'
    >>> blow_up(r"2^{10}"), blow_up(r"\frac{\sqrt{3}}{2}"), blow_up("(x+1)^{2}"), blow_up("10!")
    (None, None, None, None)
    """
    try:
        _Estimator(latex).sequence(None)
    except _TooLarge as exc:
        return str(exc)
    except (_Unreadable, RecursionError, OverflowError, ValueError):
        return None
    return None
