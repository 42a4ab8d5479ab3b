"""JSON Schema as the standard reads it: ``format`` checked, ``pattern`` with ECMA-262 semantics.

``jsonschema`` leaves ``format`` unchecked unless given a format checker, and
its checker skips ``date-time``, ``time``, ``uri`` and ``hostname`` silently
when optional packages are missing (and takes any text with an ``@`` as an
e-mail address). Here each common format has a check of its own, standard
library only. Its ``pattern`` is Python's ``re.search``, where ``$`` also
matches before a final newline (``"ABC\\n"`` matches ``^[A-Z]{3}$``) and
``\\d`` matches any Unicode digit; JSON Schema's patterns are ECMA-262
regular expressions, so :func:`ecma_regex` translates them: ``$`` is the end
of the text, ``\\d``/``\\w``/``\\b`` are ASCII, ``\\s`` is ECMA's white space,
``.`` stops at any line terminator, ``(?<name>`` is a named group.
"""

from __future__ import annotations

import datetime
import functools
import ipaddress
import re
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["FORMATS", "conforms", "ecma_regex", "schema_validator"]

#: ECMA-262 white space and line terminators (``\s``).
_ECMA_SPACE = "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_ESCAPES = {"s": f"[{_ECMA_SPACE}]", "S": f"[^{_ECMA_SPACE}]"}


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            n = pattern[i + 1]
            out.append((_ECMA_SPACE if n == "s" else c + n) if in_class else _ESCAPES.get(n, c + n))
            i += 2
            continue
        if in_class:
            in_class = c != "]"
            out.append(c)
        elif pattern.startswith(("[]", "[^]"), i):  # ECMA: matches nothing / any character
            out.append("(?!)" if pattern[i + 1] == "]" else "[\\s\\S]")
            i += 2 if pattern[i + 1] == "]" else 3
            continue
        elif c == "[":
            in_class = True
            out.append(pattern[i : i + 2] if pattern.startswith("[^", i) else c)
            i += 2 if pattern.startswith("[^", i) else 1
            continue
        elif c == "$":
            out.append("\\Z")
        elif c == ".":
            out.append("[^\\n\\r\\u2028\\u2029]")
        elif pattern.startswith("(?<", i) and not pattern.startswith(("(?<=", "(?<!"), i):
            out.append("(?P<")
            i += 3
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


@functools.lru_cache(maxsize=512)
def ecma_regex(pattern: str) -> re.Pattern[str]:
    """A JSON Schema (ECMA-262) ``pattern`` as a Python regex with the same meaning; use ``.search``.

    >>> bool(ecma_regex("^[A-Z]{3}$").search("ABC\\n")), bool(re.search("^[A-Z]{3}$", "ABC\\n"))
    (False, True)
    >>> bool(ecma_regex("^\\\\d+$").search("\\u0661\\u0662")), bool(ecma_regex("^(?<y>\\\\d{4})$").search("2024"))
    (False, True)
    """
    return re.compile(_translate(pattern), re.ASCII)


# -- formats ---------------------------------------------------------------------------------------------

_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})\Z", re.ASCII)
_TIME = re.compile(r"(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))\Z", re.ASCII)
_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)\Z", re.ASCII)
_ATOM = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*\Z", re.ASCII)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:", re.ASCII)
_URI_CHARS = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#\[\]]|%[0-9A-Fa-f]{2})*\Z", re.ASCII)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z", re.ASCII)


def _date(text: str) -> bool:
    m = _DATE.match(text)
    try:
        return bool(m) and bool(datetime.date(*map(int, m.groups())))  # type: ignore[union-attr]
    except ValueError:
        return False


def _time(text: str) -> bool:
    m = _TIME.match(text)
    if not m:
        return False
    hour, minute, second, off_h, off_m = (int(g) if g else 0 for g in m.groups())
    return hour < 24 and minute < 60 and second <= 60 and off_h < 24 and off_m < 60


def _date_time(text: str) -> bool:
    date, sep, time = text.partition("T") if "T" in text else text.partition("t")
    return bool(sep) and _date(date) and _time(time)


def _hostname(text: str) -> bool:
    name = text[:-1] if text.endswith(".") else text
    return 0 < len(name) <= 253 and all(_LABEL.match(label) for label in name.split("."))


def _ip(kind: type) -> Callable[[str], bool]:
    def check(text: str) -> bool:
        try:
            kind(text)
        except ValueError:
            return False
        return text.isascii() and "%" not in text and "/" not in text  # no zone index, no prefix

    return check


def _email(text: str) -> bool:
    local, at, domain = text.rpartition("@")
    if not at or not local or len(local) > 64 or not _ATOM.match(local):
        return False
    if domain.startswith("[") and domain.endswith("]"):
        literal = domain[1:-1]
        return _ip(ipaddress.IPv4Address)(literal) or (
            literal.startswith("IPv6:") and _ip(ipaddress.IPv6Address)(literal[5:])
        )
    return _hostname(domain) and not domain.endswith(".")


def _uri(text: str) -> bool:
    return bool(_SCHEME.match(text)) and bool(_URI_CHARS.match(text))


def _regex(text: str) -> bool:
    try:
        ecma_regex(text)
    except re.error:
        return False
    return True


#: The formats checked, each a test of a string (other types conform to every format).
FORMATS: dict[str, Callable[[str], bool]] = {
    "date-time": _date_time,
    "date": _date,
    "time": _time,
    "email": _email,
    "hostname": _hostname,
    "ipv4": _ip(ipaddress.IPv4Address),
    "ipv6": _ip(ipaddress.IPv6Address),
    "uri": _uri,
    "uri-reference": lambda text: bool(_URI_CHARS.match(text)),
    "uuid": lambda text: bool(_UUID.match(text)),
    "regex": _regex,
}


def conforms(value: Any, format_name: str) -> bool:
    """Whether ``value`` conforms to a JSON Schema ``format`` (formats not listed in :data:`FORMATS` are annotations).

    >>> conforms("ada@example.org", "email"), conforms("@", "email"), conforms("2024-02-30T10:00:00Z", "date-time")
    (True, False, False)
    >>> conforms("10.0.0.256", "ipv4"), conforms("2024-02-29T23:59:60+01:00", "date-time"), conforms(7, "email")
    (False, True, True)
    """
    check = FORMATS.get(format_name)
    return check is None or not isinstance(value, str) or check(value)


def _format(validator: Any, format_name: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if not conforms(instance, format_name):
        yield ValidationError(f"{instance!r} is not a {format_name!r}")


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if validator.is_type(instance, "string") and not ecma_regex(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: dict, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if ecma_regex(pattern).search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def schema_validator(schema: Any) -> Any:
    """A validator for ``schema`` (its own draft) that checks formats and reads patterns as ECMA-262.

    >>> v = schema_validator({"type": "string", "format": "email", "pattern": "^[a-z@.]+$"})
    >>> v.is_valid("ada@example.org"), v.is_valid("ada@example.org\\n"), v.is_valid("not an address")
    (True, False, False)
    """
    from jsonschema import validators

    cls = validators.validator_for(schema)
    cls.check_schema(schema)
    keywords = {"format": _format, "pattern": _pattern, "patternProperties": _pattern_properties}
    standard = validators.extend(cls, {k: v for k, v in keywords.items() if k in cls.VALIDATORS})
    return standard(schema)
