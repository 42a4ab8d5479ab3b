"""Deciding whether two math answers are equal: exact checks first, math-verify for the rest, both cached.

The half of ``math_accuracy`` that compares (its other half, in :mod:`rewardsmith.rewards._math_answers`, finds the
final answer). Identical answers and plain rationals are decided exactly without sympy; answers that cannot be
equal for a cheap reason (astronomically large values, overlong answers, malformed repeating decimals) are
decided at once; everything else goes to math-verify, whose parses and decisions are kept in small LRU caches
per process. ``hedge_reason`` says whether several final answers disagree, ``compare`` whether one states the
reference (choice letters, intervals, ordered lists, units: :mod:`rewardsmith.rewards._equivalence`).
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from rewardsmith.rewards._equivalence import (
    choice_letters,
    flattened,
    interval_form,
    list_parts,
    multiplied,
    named_parts,
    renamed_variable,
    unit_of,
    without_thousands,
)
from rewardsmith.rewards._latex import blow_up, has_repeat_notation, repeating_decimal

_CACHE_SIZE = 4096


#: Answers longer than this (in characters, without spacing) are not checked symbolically: they score as wrong
#: unless written exactly as the reference.
MAX_ANSWER_CHARS = 1000


class _LRU(OrderedDict):
    """A small least-recently-used cache, safe to share between threads (the slow ``make`` runs unlocked)."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()

    def get_or(self, key: Any, make: Callable[[], Any]) -> Any:
        if sum(map(len, key if isinstance(key, tuple) else (key,))) > 2 * MAX_ANSWER_CHARS:
            return make()  # huge keys are not kept
        with self.lock:
            if key in self:
                self.move_to_end(key)
                return self[key]
        value = make()
        with self.lock:
            self[key] = value
            if len(self) > _CACHE_SIZE:
                self.popitem(last=False)
        return value


_PARSED: _LRU = _LRU()


_DECIDED: _LRU = _LRU()


_DELIMITERS = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"))


_SPACING = re.compile(r"(?<!\\)\\[,;:! ]|\\left|\\right|\s+")  # ``\\ `` is a line break, not ``\ `` spacing


_PLAIN_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
#: A decimal comma (``1000,99``, ``0,111``): one comma, never before a group of three digits of a thousand or more.
_DECIMAL_COMMA = re.compile(r"^-?(?:0,\d+|\d+,(?!\d{3}$)\d+)$")


_FRACTION = re.compile(r"^(-?)\\frac\{(-?\d+)\}\{(\d+)\}$|^(-?\d+)/(\d+)$")


def clear_caches() -> None:
    """Forget cached parses and decisions in this process (for benchmarks measuring cold runs)."""
    for cache in (_PARSED, _DECIDED):
        with cache.lock:
            cache.clear()


def strip_delimiters(text: str) -> str:
    text = text.strip().rstrip(".").strip()
    for opening, closing in _DELIMITERS:
        if len(text) >= len(opening) + len(closing) and text.startswith(opening) and text.endswith(closing):
            return text[len(opening) : len(text) - len(closing)].strip()
    return text


def normal_form(text: str) -> str:
    """A spelling-insensitive form for the identical-answer check (meaning-preserving edits only)."""
    text = without_thousands(text.replace("\\$", ""))  # before spacing goes: ``32, 349`` is a list
    return _SPACING.sub("", text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac"))


def rational(text: str) -> Fraction | None:
    r"""The exact value of a plain rational answer, else ``None``.

    Plain rationals: ``12``, ``-0.5``, ``\frac{3}{4}``, ``3/4``, ``1{,}000``, ``0.1\overline{6}``.

    >>> rational(r"-\dfrac{3}{4}"), rational("10{,}000"), rational("x+1"), rational(r"0.\overline{3}")
    (Fraction(-3, 4), Fraction(10000, 1), None, Fraction(1, 3))
    """
    form = normal_form(text)
    if len(form) > 200:
        return None
    if _PLAIN_NUMBER.match(form):
        return Fraction(form)
    repeating = repeating_decimal(form)
    if repeating is not None:
        return repeating
    match = _FRACTION.match(form)
    if match is None:
        return None
    sign, num, den, slash_num, slash_den = match.groups()
    num, den = (num, den) if num is not None else (slash_num, slash_den)
    if int(den) == 0:
        return None
    value = Fraction(int(num), int(den))
    return -value if sign else value


def _math_verify() -> Any:
    import math_verify
    from math_verify import ExprExtractionConfig, LatexExtractionConfig

    logging.getLogger("math_verify").setLevel(logging.ERROR)  # it warns when its own timeouts are off
    return math_verify, [LatexExtractionConfig(boxed_match_priority=0), ExprExtractionConfig()]


def parse_latex(latex: str, timeout: int | None) -> list[Any]:
    """math-verify's parse of ``latex`` (``[sympy_value, text]``), or ``[]`` when it does not parse.

    math-verify falls back to returning the raw text when parsing fails;
    that fallback is treated as "does not parse".
    """

    def make() -> list[Any]:
        math_verify, config = _math_verify()
        parsed = math_verify.parse(f"${latex}$", extraction_config=config, parsing_timeout=timeout)
        return parsed if parsed and not isinstance(parsed[0], str) else []

    return _PARSED.get_or(latex, make)


def _kind(value: Any) -> str:
    """The kind of a parsed answer: ``number`` (a constant), ``symbolic`` (free symbols, not a relation),
    ``range`` (an interval or a union), or ``other``."""
    import sympy

    if isinstance(value, (sympy.Interval, sympy.Union)):
        return "range"
    if isinstance(value, sympy.Expr) and not isinstance(value, sympy.Symbol):
        if value.is_number:
            return "number"
        if value.free_symbols:
            return "symbolic"
    return "other"


def _clearly_different(gold: Any, predicted: Any) -> bool:
    """Cheap proof that two parsed answers differ: two constants far apart, or a constant against a
    range or an expression in a variable. Anything else is left to math-verify."""
    if not gold or not predicted:
        return False
    g, p = gold[0], predicted[0]
    kinds = {_kind(g), _kind(p)}
    if kinds == {"number"}:
        try:
            a, b = complex(g.evalf(30)), complex(p.evalf(30))
            return abs(a - b) > 1e-4 * max(1.0, abs(a), abs(b))
        except (TypeError, ValueError, ArithmeticError):  # too large to compare as floats: not a cheap decision
            return False
    return kinds in ({"number", "range"}, {"number", "symbolic"})


#: Answer shapes that warm the LaTeX parser when a worker starts (parsed once each, then forgotten).
WARM_UP = (
    r"\frac{1}{2}", r"-\dfrac{3}{4}", r"2\sqrt{3}", r"\frac{\sqrt{3}}{2}", r"\sqrt[3]{2}", r"7\pi", r"\frac{\pi}{6}",
    r"x^2 + 2x + 1", r"(x+1)(x-2)", r"3x - 5y", r"x = 5", r"y \le 2", r"\left( 3, \frac{\pi}{2} \right)",
    r"[-2, 7)", r"(0, 9) \cup (9, 36)", r"(-\infty, 3]", r"\{1, 2, 3\}", r"1, -2", r"2 + 3i", r"45^\circ",
    r"\text{(C)}", r"\text{Evelyn}", r"10\%", r"\$1.50", r"\log_2 8", r"\sin x", r"e^{2}", r"|x|",
    r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}", r"a_{n+1}", r"\binom{5}{2}", r"n!", r"0.\overline{3}",
)  # fmt: skip


def _exact_form(latex: str) -> str:
    r"""A repeating decimal as the fraction it is (math-verify reads ``0.\overline{3}`` as 0); anything else as is.

    >>> _exact_form(r"0.\overline{3}"), _exact_form("x+1")
    ('\\frac{1}{3}', 'x+1')
    """
    value = repeating_decimal(normal_form(latex))
    return latex if value is None else f"\\frac{{{value.numerator}}}{{{value.denominator}}}"


class LazyParse:
    """A reference parsed on first use (most rational references never need sympy)."""

    def __init__(self, latex: str, timeout: int | None) -> None:
        self.latex, self.timeout = latex, timeout

    def get(self) -> Any:
        return parse_latex(_exact_form(self.latex), self.timeout)


def decide_exactly(gold: str, predicted: str) -> tuple[bool, str] | None:
    """Whether two answers are the same, when that can be decided exactly without sympy (``None`` if not).

    Besides identical answers and rationals, it decides "different" for
    answers that cannot be equal for a cheap reason: one longer than
    ``MAX_ANSWER_CHARS``, one astronomically large against one that is not,
    and repeating-digit notation that is not an exact repeating decimal.

    >>> decide_exactly("10{,}000", "10000"), decide_exactly(r"\\frac{1}{2}", "0.5"), decide_exactly("x", "y")
    ((True, 'identical'), (True, 'rationals'), None)
    >>> decide_exactly("1000,99", "1000.99"), decide_exactly("0,111", "0.111"), decide_exactly("1,000", "1.000")
    ((True, 'identical but for a decimal comma'), (True, 'identical but for a decimal comma'), (False, 'rationals'))
    >>> decide_exactly("12", "9^{9^{9}}"), decide_exactly(r"\\frac{1}{3}", r"0.\\overline{3}")
    ((False, 'not checked: a power with astronomically many digits'), (True, 'rationals'))
    """
    g_form, p_form = normal_form(gold), normal_form(predicted)
    if g_form == p_form:
        return True, "identical"
    decimal_comma = _DECIMAL_COMMA.match(g_form) or _DECIMAL_COMMA.match(p_form)
    if decimal_comma and g_form.replace(",", ".") == p_form.replace(",", "."):
        return True, "identical but for a decimal comma"
    g, p = rational(gold), rational(predicted)
    # Exact for rationals; only values within rounding distance go to math-verify,
    # which compares numbers rounded to 6 decimals.
    if g is not None and p is not None and (g == p or abs(g - p) > Fraction(1, 10**5) * max(1, abs(g))):
        return g == p, "rationals"
    for form, value in ((g_form, g), (p_form, p)):
        if value is None and has_repeat_notation(form):
            return False, "not checked: repeating digits written in a form that is not an exact repeating decimal"
    if max(len(g_form), len(p_form)) > MAX_ANSWER_CHARS:
        return False, f"not checked: more than {MAX_ANSWER_CHARS} characters (compared as written only)"
    g_big, p_big = blow_up(g_form), blow_up(p_form)
    if bool(g_big) != bool(p_big):
        return False, f"not checked: {g_big or p_big}"
    return None


def equivalent(gold: str, gold_parsed: Any, predicted: str, timeout: int | None) -> tuple[bool, str]:
    """Whether ``predicted`` states the reference answer ``gold``, and how that was decided."""

    def decide() -> tuple[bool, str]:
        exact = decide_exactly(gold, predicted)
        if exact is not None:
            return exact
        parsed = parse_latex(_exact_form(predicted), timeout)
        if not parsed:
            return False, "unparseable"
        gold_value = gold_parsed.get() if isinstance(gold_parsed, LazyParse) else gold_parsed
        if not gold_value:
            return False, "reference unparseable"
        if _clearly_different(gold_value, parsed):
            return False, "different values"
        math_verify, _ = _math_verify()
        return bool(math_verify.verify(gold_value, parsed, timeout_seconds=timeout)), "math-verify"

    return _DECIDED.get_or((gold, predicted), decide)


VARIABLE = re.compile(r"^\s*[A-Za-z](?:_\{?\w{1,5}\}?)?\s*=\s*")


_RELATIONS = ("<", ">", "\\le", "\\ge", "\\ne", "\\approx")


#: A reference's outer brackets as written, and as a joined list of the answer's parts is written.
_BRACKETS = (
    ("\\left(", "\\right)", "(", ")"),
    ("(", ")", "(", ")"),
    ("\\{", "\\}", "\\{", "\\}"),
    ("{", "}", "\\{", "\\}"),
)


def parts_of(gold: str) -> tuple[list[str], str, str]:
    r"""The parts of a reference that lists several values (``3, 5`` or the tuple ``(3, 5)``), and its brackets.

    >>> parts_of("3, 5"), parts_of(r"\left( 3, 4 \right)"), parts_of("7")
    ((['3', '5'], '', ''), (['3', '4'], '(', ')'), ([], '', ''))
    >>> parts_of("(1, 2), (3, 4)"), parts_of("{1,2,3}")
    ((['(1, 2)', '(3, 4)'], '', ''), (['1', '2', '3'], '\\{', '\\}'))
    """
    text = gold.strip()
    brackets = (
        ("\\left(", "\\right)", "(", ")"),
        ("(", ")", "(", ")"),
        ("\\{", "\\}", "\\{", "\\}"),
        ("{", "}", "\\{", "\\}"),
    )
    for opening, closing, written_open, written_close in brackets:
        if text.startswith(opening) and text.endswith(closing) and len(list_parts(text)) < 2:
            return list_parts(text[len(opening) : len(text) - len(closing)]), written_open, written_close
    return list_parts(text), "", ""


def chain_values(answer: str) -> list[str]:
    r"""The values a chain of equalities states when its sides are different numbers (``x = 18 = 20``), else the answer.

    >>> chain_values("x = 18 = 20"), chain_values("18=20"), chain_values(r"\frac{6}{2} = 3"), chain_values("x = 5")
    (['18', '20'], ['18', '20'], ['\\frac{6}{2} = 3'], ['x = 5'])
    """
    if "=" not in answer or len(answer) > MAX_ANSWER_CHARS or any(r in answer for r in _RELATIONS):
        return [answer]
    sides = [side.strip() for side in answer.split("=")]
    values = [(side, rational(side)) for side in sides]
    if len({v for _, v in values if v is not None}) > 1:
        return [side for side, v in values if v is not None]
    return [answer]


def hedge_reason(answers: list[str], allow_sympy: bool, timeout: int | None) -> str | None:
    """Why the answers are a hedge (``""``: they agree; ``None``: telling takes sympy, which is not allowed)."""
    last = answers[-1]
    for other in answers[:-1]:
        exact = decide_exactly(last, other)
        if exact is None and not allow_sympy:
            return None
        same = exact[0] if exact else equivalent(last, parse_latex(last, timeout) or [last], other, timeout)[0]
        if not same:
            return f"hedged between {short(other)!r} and {short(last)!r}"
    return ""


def compare(
    gold: str, gold_value: Any, predicted: str, ordered: bool, allow_sympy: bool, timeout: int | None
) -> tuple[bool, str] | None:
    """Whether ``predicted`` states ``gold``, and how that was decided (``None``: needs sympy, not allowed)."""
    predicted = renamed_variable(gold, predicted)
    g_choice = choice_letters(gold)
    p_choice = choice_letters(predicted, together=bool(g_choice and len(g_choice) > 1))
    if g_choice and p_choice:  # letters are a set: "D, A" and "AD" name choices A and D
        return g_choice == p_choice, "choice letters"
    g_parts, p_parts = list_parts(gold), list_parts(predicted)
    flat = flattened(g_parts, p_parts)
    if flat is not None:  # two sequences as sets against the reference's flat list of their values
        predicted, p_parts = ", ".join(flat), flat
    named = named_parts(g_parts, p_parts)
    if named is not None:  # parts named in both (a_3 = 2, a_{37} = 19): compared name by name
        verdicts = [compare(g, None, p, True, allow_sympy, timeout) for g, p in zip(*named)]
        if any(v is None for v in verdicts):
            return None
        return all(v[0] for v in verdicts if v), "compared by name, part by part"
    if not (ordered and len(g_parts) >= 2 and len(p_parts) == len(g_parts)):
        gold, predicted = multiplied(gold), multiplied(predicted)
        g_unit, p_unit = unit_of(gold), unit_of(predicted)
        if g_unit and p_unit and g_unit[1] != p_unit[1]:
            return False, f"different units ({p_unit[1]}, the reference's {g_unit[1]})"
        if p_unit:
            predicted = p_unit[0]
        if g_unit and (p_unit or rational(predicted) is not None):  # 45 against 45^\circ; a formula keeps it
            gold, gold_value = g_unit[0], None
    if g_parts and all(part[:1] == "(" and part[-1:] == ")" for part in g_parts):
        ordered = False  # a list of tuples is a set of solutions: (2,1), (1,2) in any order
    if ordered and len(g_parts) >= 2 and len(p_parts) == len(g_parts):
        verdicts = [compare(g, None, p, True, allow_sympy, timeout) for g, p in zip(g_parts, p_parts)]
        if any(v is None for v in verdicts):
            return None
        return all(v[0] for v in verdicts if v), "compared in order, part by part"
    as_interval = interval_form(predicted)
    if as_interval and ("\\infty" in gold or gold[:1] in "([") and interval_form(gold) is None:
        predicted = as_interval
    elif interval_form(gold) and ("\\infty" in predicted or predicted[:1] in "(["):
        gold, gold_value = interval_form(gold) or gold, None
    exact = decide_exactly(gold, predicted)
    if exact is None and not allow_sympy:
        return None
    if exact is None:  # a rational reference is parsed only now that math-verify is needed
        exact = equivalent(gold, gold_value or LazyParse(gold, timeout), predicted, timeout)
    return exact


def short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else f"{text[: limit - 20]}... ({len(text)} characters)"
