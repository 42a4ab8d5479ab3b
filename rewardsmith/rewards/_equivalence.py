r"""Answer forms compared before math-verify: choice letters, inequalities as intervals, ordered lists, units.

* :func:`choice_letters`: ``\text{(B)}``, ``(B)``, ``B``, ``\text{A,D}`` are
  multiple-choice letters, compared as sets of letters;
* :func:`interval_form`: ``k < -5`` is the interval ``(-\infty, -5)``, so an
  inequality and the same interval agree;
* :func:`list_parts`: a bare list ``2, 3, 4`` keeps its order (a sequence or
  tuple), unless the prompt asks for all solutions or values (then it is a
  set, as ``\{...\}`` always is);
* :func:`renamed_variable`: ``f(y) = 1`` is ``f(x) = 1`` when the reference
  names the variable ``x`` (a function's argument is a dummy);
* :func:`without_unit`: ``12cm``, ``5 \text{ inches}``, ``45 degrees``: the
  number, when a common unit follows it;
* :func:`form_mismatch`: an answer equal in value but not in the form the problem
  asks for (``-\frac{58}{87}`` for "a simplified common fraction", ``10.5\pi`` for
  "a common fraction") is not the answer asked for.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

__all__ = [
    "choice_letters",
    "flattened",
    "form_mismatch",
    "interval_form",
    "list_parts",
    "multiplied",
    "named_parts",
    "ordered_prompt",
    "renamed_variable",
    "unit_of",
    "without_thousands",
    "without_unit",
]

_CHOICE_WRAP = re.compile(r"\\(?:text\w{0,6}|mathrm|mbox)\s{0,5}\{([^{}]{0,40})\}")
_CHOICES = re.compile(r"\(?([A-H])\)?(?:\s{0,3},\s{0,3}\(?([A-H])\)?){0,7}")


_TOGETHER = re.compile(r"[A-H]{2,8}")


def choice_letters(text: str, together: bool = False) -> frozenset[str] | None:
    r"""The multiple-choice letters an answer names (``\text{(B)}``, ``(B)``, ``A,D``), or ``None``.

    With ``together``, letters written as one word (``AD``) are letters too
    (only where the reference names several choices: ``AD`` is also a segment).

    >>> choice_letters(r"\text{A,D}") == choice_letters("D, A"), choice_letters(r"\text{(B)}"), choice_letters("x")
    (True, frozenset({'B'}), None)
    >>> choice_letters("AD"), choice_letters("AD", together=True) == choice_letters("A, D")
    (None, True)
    """
    bare = _CHOICE_WRAP.sub(r"\1", text).replace("$", "").replace("\\", "").strip().rstrip(".")
    if len(bare) > 60 or (_CHOICES.fullmatch(bare) is None and not (together and _TOGETHER.fullmatch(bare))):
        return None
    return frozenset(re.findall(r"[A-H]", bare))


_INEQUALITY = re.compile(r"^\s*([a-zA-Z])\s*(<|>|\\le(?:q|qslant)?|\\ge(?:q|qslant)?)\s*([^<>=]{1,100})$")
_BETWEEN = re.compile(
    r"^\s*([^<>=]{1,100}?)\s*(<|\\le(?:q|qslant)?)\s*([a-zA-Z])\s*(<|\\le(?:q|qslant)?)\s*([^<>=]{1,100})$"
)


_REVERSED = re.compile(r"^\s*([^<>=a-zA-Z]{1,100}?)\s*(<|>|\\le(?:q|qslant)?|\\ge(?:q|qslant)?)\s*([a-zA-Z])\s*$")
_FLIPPED = {"<": ">", ">": "<"}


def _flipped(relation: str) -> str:
    if relation in _FLIPPED:
        return _FLIPPED[relation]
    return relation.replace("\\le", "\\ge", 1) if relation.startswith("\\le") else relation.replace("\\ge", "\\le", 1)


def interval_form(text: str) -> str | None:
    r"""The interval an inequality in one variable describes (``k < -5`` is ``(-\infty, -5)``), or ``None``.

    >>> interval_form("k < -5"), interval_form(r"x \ge 2"), interval_form(r"-1 < x \le 3"), interval_form("x+1")
    ('(-\\infty, -5)', '[2, \\infty)', '(-1, 3]', None)
    >>> interval_form("3 < x"), interval_form(r"-5 \ge k")
    ('(3, \\infty)', '(-\\infty, -5]')
    """
    reversed_ = _REVERSED.match(text)
    if reversed_:  # 3 < x is x > 3
        bound, relation, variable = reversed_.groups()
        text = f"{variable} {_flipped(relation)} {bound.strip()}"
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


_THOUSANDS = re.compile(r"(?<![\d,.])(?!0)\d{1,3}(?:(?:\{,\}|,\\!|,)\d{3})+(?![\d.]|,\d|\{,\}|,\\!)")
_SEPARATORS = re.compile(r"\{,\}|,\\!|,")


def without_thousands(text: str) -> str:
    r"""``text`` with the separators of numbers written in thousands (``10{,}000``, ``1,000,000``) taken out.

    Only a number whose groups are all three digits is one: ``1,7,103`` is a
    list, and so is ``32, 349`` (a space after the comma).

    >>> without_thousands("10{,}000"), without_thousands("1,000,000 and 2,5"), without_thousands("(1,7,103)")
    ('10000', '1000000 and 2,5', '(1,7,103)')
    >>> without_thousands("32, 349"), without_thousands("3.141,592"), without_thousands("0,111")
    ('32, 349', '3.141,592', '0,111')
    """
    return _THOUSANDS.sub(lambda m: _SEPARATORS.sub("", m.group(0)), text)


def list_parts(text: str) -> list[str]:
    r"""The parts of a bare comma-separated list (``2, 3, 4``), or ``[]`` for anything else.

    Bracketed tuples, intervals and sets are not bare lists (math-verify
    compares them itself), but a list of them is; thousands separators do not separate.

    >>> list_parts("2, 4, 3"), list_parts("10,000"), list_parts("(1, 2)"), list_parts(r"\{1, 2\}")
    (['2', '4', '3'], [], [], [])
    >>> list_parts("(1, 2), (3, 4)"), list_parts(r"\left( 1, 2 \right)")
    (['(1, 2)', '(3, 4)'], [])
    """
    text = without_thousands(text.strip())
    if not text or text.startswith("\\begin") or "\\cup" in text:
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
    r"\b(?:all|possible)\b[^.?]{0,80}\b(?:solutions|values|roots|zeros|numbers|possibilities|answers|integers|points"
    r"|functions|pairs|triples|tuples|lists|sequences)\b"
    r"|\bthe\s{1,3}(?:real\s{1,3})?(?:solutions|values|roots|zeros)\s{1,3}of\s{1,3}\$?[a-z]\$?"
    r"\s{1,3}(?:for\s{1,3}which|such\s{1,3}that|that|satisfying)"
    r"|\bthe\s{1,3}(?:real\s{1,3}|integer\s{1,3})?(?:solutions|roots|zeros)\s{1,3}are\b"
    r"|separated by commas",
    re.IGNORECASE,
)


def ordered_prompt(prompt: str | None) -> bool:
    """Whether a list answer to ``prompt`` keeps its order (yes, unless the prompt asks for all solutions or values).

    >>> ordered_prompt("Find all real solutions, separated by commas.")
    False
    >>> ordered_prompt("Determine the values of $x$ for which $f(x)=g(x)$."), ordered_prompt("the possible values of x")
    (False, False)
    >>> ordered_prompt(r"so the solutions are $n = \boxed{1,-2}$."), ordered_prompt("the roots of $p$ and $q$")
    (False, True)
    >>> ordered_prompt("Find p and q."), ordered_prompt(None)
    (True, True)
    """
    return not (prompt and _UNORDERED.search(prompt))


#: The forms a problem may ask its answer in: what the form is called, how the problem asks for it, and what
#: breaks it (a number with a decimal point, a fraction of integers not in lowest terms, any fraction of integers).
_ASKED_FORMS = (
    (
        "a fraction in lowest terms",
        re.compile(
            r"\bcommon\s{1,3}fractions?\b|\b(?:simplified|simplest|reduced)\s{1,3}fractions?\b|\blowest\s{1,3}terms\b"
            r"|\bsimplest\s{1,3}form\b",
            re.IGNORECASE,
        ),
        ("decimal", "unreduced"),
    ),
    (
        "simplest radical form",
        re.compile(r"\bsimplest\s{1,3}radical\s{1,3}form\b", re.IGNORECASE),
        ("decimal", "unreduced"),
    ),
    ("a decimal", re.compile(r"\b(?:as|in)\s{1,3}(?:a\s{1,3})?decimals?\b", re.IGNORECASE), ("fraction",)),
)
_DECIMAL = re.compile(r"(?<![\w.])\d*\.\d")
_EQUALS = re.compile(r"=|\\approx|\\equiv")
_INTEGER_FRACTION = re.compile(
    r"\\[dt]?frac\s{0,3}\{\s{0,3}(\d{1,12})\s{0,3}\}\s{0,3}\{\s{0,3}(\d{1,12})\s{0,3}\}"
    r"|\\[dt]?frac(\d)(\d)|(?<![\w.^/])(\d{1,12})\s{0,3}/\s{0,3}(\d{1,12})(?![\w.])"
)


def _breaks(text: str, breaks: tuple[str, ...]) -> str | None:
    """What in ``text`` breaks a form (``decimal``, ``unreduced``, ``fraction``), or ``None``."""
    if "decimal" in breaks and _DECIMAL.search(text):
        return "a decimal"
    for match in _INTEGER_FRACTION.finditer(text):
        numerator, denominator = (int(g) for g in match.groups() if g is not None)
        if "fraction" in breaks:
            return "a fraction"
        if "unreduced" in breaks and denominator and (math.gcd(numerator, denominator) > 1 or denominator == 1):
            return "a fraction not in lowest terms"
    return None


def form_mismatch(answer: str, prompt: str | None, reference: str) -> str | None:
    r"""Why ``answer`` is not in the form ``prompt`` asks for, or ``None`` (also when the reference is not in it).

    An answer equal to the reference in value is still wrong when the problem asks for a form it is not in:
    a common fraction (lowest terms, no decimal point), simplest radical form (no decimal), a decimal (no
    fraction of integers).

    >>> asked = "What is $x$? Express your answer as a simplified common fraction."
    >>> print(form_mismatch(r"-\frac{58}{87}", asked, r"-\dfrac{2}{3}"))
    the problem asks for a fraction in lowest terms; -\frac{58}{87} is a fraction not in lowest terms
    >>> print(form_mismatch(r"10.5\pi", r"Express it as a common fraction in terms of $\pi$.", r"\frac{21}{2}\pi"))
    the problem asks for a fraction in lowest terms; 10.5\pi is a decimal
    >>> form_mismatch(r"\frac{2}{3}", asked, r"\frac{2}{3}"), form_mismatch("0.5", "Find $x$.", "1/2")
    (None, None)
    >>> form_mismatch("1/4", "Express your answer as a decimal.", "0.25")
    'the problem asks for a decimal; 1/4 is a fraction'
    >>> form_mismatch("1/4", "Express your answer as a decimal or a common fraction.", "0.25") is None
    True
    >>> form_mismatch(r"x = 0.75 = \frac{3}{4}", asked, "3/4"), form_mismatch("x = 0.75", asked, "3/4")
    (None, 'the problem asks for a fraction in lowest terms; x = 0.75 is a decimal')
    """
    asked = [(name, breaks) for name, pattern, breaks in _ASKED_FORMS if prompt and pattern.search(prompt)]
    if len({"fraction" in breaks for _, breaks in asked}) != 1:  # none asked, or a decimal or a fraction
        return None
    # an answer stating its value in several forms (``\frac{3}{4} = 0.75``) is in the form if one of them is
    values = [part for part in _EQUALS.split(answer) if any(c.isdigit() for c in part)] or [answer]
    for name, breaks in asked:
        broken = [_breaks(value, breaks) for value in values]
        if all(broken) and not _breaks(reference, breaks):
            return f"the problem asks for {name}; {answer[:60]} is {broken[-1]}"
    return None


_UNITS = {
    "cm": "cm centimeter centimeters centimetre centimetres",
    "mm": "mm millimeter millimeters",
    "km": "km kilometer kilometers kilometre kilometres",
    "m": "m meter meters metre metres",
    "in": "in inch inches",
    "ft": "ft feet foot",
    "yd": "yd yard yards",
    "mi": "mile miles",
    "kg": "kg kilogram kilograms",
    "g": "g gram grams",
    "mg": "mg milligram milligrams",
    "lb": "lb lbs pound pounds",
    "oz": "oz ounce ounces",
    "s": "s sec second seconds",
    "min": "min minute minutes",
    "h": "h hr hrs hour hours",
    "day": "day days",
    "week": "week weeks",
    "year": "year years",
    "unit": "unit units",
    "degree": "degree degrees deg ° ^\\circ ^{\\circ}",
    "radian": "rad radian radians",
    "dollar": "dollar dollars",
    "cent": "cent cents",
    "L": "L liter liters litre litres",
    "mL": "mL ml milliliter milliliters",
    "mph": "mph",
}
_UNIT_OF = {spelling: unit for unit, spellings in _UNITS.items() for spelling in spellings.split()}
_UNIT = re.compile(
    r"^(-?\d+(?:\.\d+)?)\s{0,3}(?:\\(?:text|mbox|mathrm)\s{0,3}\{\s{0,3})?"
    r"(" + "|".join(re.escape(u) for u in sorted(_UNIT_OF, key=len, reverse=True)) + r")"
    r"((?:\^\{?[23]\}?)?)\s{0,3}\}?((?:\^\{?[23]\}?)?)$"
)


def unit_of(answer: str) -> tuple[str, str] | None:
    r"""A number with a common unit after it, as the number and the unit's one name (``None`` for anything else).

    >>> unit_of("12cm"), unit_of(r"5 \text{ inches}"), unit_of(r"45^\circ"), unit_of("3x"), unit_of("7")
    (('12', 'cm'), ('5', 'in'), ('45', 'degree'), None, None)
    """
    match = _UNIT.match(answer.strip()) if len(answer) < 60 else None
    if match is None:
        return None
    number, unit, power, outer_power = match.groups()
    return number, _UNIT_OF[unit] + (power or outer_power).replace("{", "").replace("}", "")


def without_unit(answer: str) -> str:
    r"""A number with a common unit after it (``12cm``, ``5 \text{ inches}``) as the number; anything else as is.

    >>> without_unit("12cm"), without_unit(r"5 \text{ inches}"), without_unit("4mm"), without_unit("3x")
    ('12', '5', '4', '3x')
    """
    found = unit_of(answer)
    return found[0] if found else answer


_MULTIPLIER = re.compile(
    r"^(?:\\?\$)?\s{0,3}(-?\d+(?:\.\d+)?)\s{0,3}(?:\\(?:text|mbox|mathrm)\s{0,3}\{\s{0,3})?"
    r"(k|K|thousand|M|million|billion|bn|dozen)\s{0,3}\}?$"
)
_FACTORS = {"k": 1000, "K": 1000, "thousand": 1000, "M": 10**6, "million": 10**6, "billion": 10**9, "bn": 10**9}


def multiplied(answer: str) -> str:
    r"""A number with a multiplier after it (``20k``, ``\$1.5M``, ``3 \text{ million}``, ``5 dozen``) as its value.

    >>> multiplied("20k"), multiplied(r"\$1.5M"), multiplied(r"3 \text{ thousand}"), multiplied("5 dozen")
    ('20000', '1500000', '3000', '60')
    """
    match = _MULTIPLIER.match(answer.strip()) if len(answer) < 60 else None
    if match is None:
        return answer
    value = Fraction(match.group(1)) * _FACTORS.get(match.group(2), 12)
    return str(value.numerator) if value.denominator == 1 else str(float(value))


_DEFINITION = re.compile(r"^\s*([a-zA-Z])\s*\(\s*([a-zA-Z])\s*\)\s*=(.{1,500})$", re.DOTALL)


def renamed_variable(gold: str, predicted: str) -> str:
    r"""``predicted``, a function defined in another variable than the reference's, in the reference's variable.

    >>> renamed_variable("f(x)=1", "f(y) = 1"), renamed_variable("f(z)=z", "f(n) = n")
    ('f(x)= 1', 'f(z)= z')
    >>> renamed_variable("x", "f(n) = n"), renamed_variable("f(x)=x", "f(t) = x + t")
    ('f(n) = n', 'f(t) = x + t')
    """
    g, p = _DEFINITION.match(gold), _DEFINITION.match(predicted)
    if not g or not p or g.group(1) != p.group(1) or g.group(2) == p.group(2):
        return predicted
    old, new = p.group(2), g.group(2)
    if re.search(rf"(?<![\\a-zA-Z]){new}(?![a-zA-Z])", p.group(3)):
        return predicted  # the reference's variable already means something else there
    body = re.sub(rf"(?<![\\a-zA-Z]){old}(?![a-zA-Z])", new, p.group(3))
    return f"{p.group(1)}({new})={body}"


_NAMED_PART = re.compile(
    r"^(?:\s|\\q?quad\b|\\[,;: ]|~)*([A-Za-z](?:_\{?\w{1,5}\}?)?|[A-Z]{2,3})\s{0,5}=\s{0,5}([^=]{1,300})$", re.DOTALL
)


def named_parts(gold_parts: list[str], predicted_parts: list[str]) -> tuple[list[str], list[str]] | None:
    r"""The values of two lists that name every part (``a_3 = 2, a_{37} = 19``), in the reference's order.

    ``None`` unless both name the same parts, each once (``x = 1, x = 2`` are solutions, not named parts).

    >>> named_parts(["a_3 = 2", "a_{37} = 19"], ["a_{37} = 19", r"\quad a_3 = 2"])
    (['2', '19'], ['2', '19'])
    >>> named_parts(["x = 1", "x = 2"], ["x = 2", "x = 1"]), named_parts(["p = 1", "q = 2"], ["p = 1", "r = 2"])
    (None, None)
    """
    if len(gold_parts) < 2 or len(predicted_parts) != len(gold_parts):
        return None
    gold = [_NAMED_PART.match(part) for part in gold_parts]
    predicted = [_NAMED_PART.match(part) for part in predicted_parts]
    if not all(gold) or not all(predicted):
        return None
    names = [_name(m) for m in gold]  # type: ignore[arg-type]
    values = {_name(m): m.group(2).strip() for m in predicted}  # type: ignore[union-attr]
    if len(set(names)) != len(names) or set(values) != set(names):
        return None
    return [m.group(2).strip() for m in gold], [values[name] for name in names]  # type: ignore[union-attr]


def _name(match: re.Match[str]) -> str:
    return match.group(1).replace("{", "").replace("}", "")


_GROUPS = (("\\{", "\\}"), ("\\left\\{", "\\right\\}"), ("(", ")"), ("[", "]"), ("\\left(", "\\right)"))


def flattened(gold_parts: list[str], predicted_parts: list[str]) -> list[str] | None:
    r"""The items of a list of groups, in order, where the reference lists as many bare values (else ``None``).

    Two sequences given as sets, ``\{10, 11\}, \{-2, -1\}``, state the values ``10, 11, -2, -1``.

    >>> flattened(["10", "11", "-2", "-1"], [r"\{10, 11\}", r"\{-2, -1\}"]), flattened(["1", "2"], ["(1, 2)", "(3)"])
    (['10', '11', '-2', '-1'], None)
    >>> flattened(["(1, 2)", "(3, 4)"], ["(1, 2)", "(3, 4)"]) is None
    True
    """
    if len(gold_parts) < 3 or len(predicted_parts) < 2 or any(_group(part) for part in gold_parts):
        return None
    items: list[str] = []
    for part in predicted_parts:
        inner = _group(part)
        if inner is None:
            return None
        items += list_parts(inner) or [inner.strip()]
    return items if len(items) == len(gold_parts) else None


def _group(part: str) -> str | None:
    r"""The inside of a bracketed group (``\{1, 2\}``, ``(1, 2)``), or ``None``."""
    text = part.strip()
    for opening, closing in _GROUPS:
        if text.startswith(opening) and text.endswith(closing) and len(text) > len(opening) + len(closing):
            return text[len(opening) : len(text) - len(closing)]
    return None
