"""JSON text and Python values on the wire: what the sandbox's runner, test judge and program worker exchange.

This file runs in three places: inside the sandbox (as part of the runner's
code, which imports nothing from rewardsmith), in the Python worker that
holds the untrusted program, and on the host (to read results). It uses only
the standard library's C parts (``_json``), so that importing it costs
nothing at a sandboxed program's start (``json`` itself imports ``re``).

Values cross the wire as JSON with tags, so that what a program returns can
be rebuilt without ever running code: ``None``, bools, ints, floats and
strings as themselves; lists as arrays; and one-key objects for the rest:
``{"$t": [...]}`` tuple, ``{"$s": [...]}`` set, ``{"$F": [...]}`` frozenset,
``{"$d": [[k, v], ...]}`` dict, ``{"$b": "..."}`` bytes (latin-1),
``{"$a": "..."}`` bytearray, ``{"$c": [re, im]}`` complex, ``{"$f": "inf"}``
a float that JSON cannot hold, ``{"$i": "ff"}`` an int beyond 64 bits (hex,
which has no digit limit), ``{"$n": "int"}`` a built-in type or function by
name (the judge accepts only types back), and ``{"$r": [id, type]}`` an object
that stays where it was made (a reference). Subclasses of these types (a namedtuple, a
``Counter``) travel as their base type: what is compared is the value, never
an ``__eq__`` the program defined.

>>> text = dumps(encode_value({"a": (1, 2.5, float("inf"), b"x")}))
>>> text
'{"$d":[["a",{"$t":[1,2.5,{"$f":"inf"},{"$b":"x"}]}]]}'
>>> decode_value(loads(text))
{'a': (1, 2.5, inf, b'x')}
"""

from __future__ import annotations

import _json
import builtins

__all__ = ["WireError", "decode_value", "dumps", "encode_value", "loads"]

_BIG = 1 << 63
_BUILTIN_FUNCTION = type(len)
_MAX_DEPTH = 100


class WireError(ValueError):
    """Text or a value that does not follow the wire format."""


class _Context:
    """What ``_json.make_scanner`` reads from a ``JSONDecoder``."""

    strict = False
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


_SCAN = _json.make_scanner(_Context())


def _unencodable(value: object) -> object:
    raise TypeError(f"{type(value).__name__} is not JSON")


_ENCODE = _json.make_encoder(None, _unencodable, _json.encode_basestring_ascii, None, ":", ",", False, False, True)


def dumps(obj: object) -> str:
    """Compact, ASCII-only JSON of ``None``, bools, numbers, strings, lists, tuples and dicts with string keys.

    >>> dumps({"a": [1, "é", None]})
    '{"a":[1,"\\\\u00e9",null]}'
    """
    return "".join(_ENCODE(obj, 0))


def loads(text: str) -> object:
    """One JSON value, the whole of ``text`` (surrounding whitespace aside); :class:`WireError` otherwise.

    >>> loads(' [1, {"b": 2.5}] ')
    [1, {'b': 2.5}]
    >>> loads('[1] x')
    Traceback (most recent call last):
    ...
    rewardsmith.sandbox.inside.wire.WireError: not one JSON value
    """
    start = len(text) - len(text.lstrip())
    try:
        value, end = _SCAN(text, start)
    except (StopIteration, ValueError, RecursionError, MemoryError, KeyError):
        raise WireError("not JSON") from None
    if text[end:].strip():
        raise WireError("not one JSON value")
    return value


def _plain(value: object) -> object:
    """``value`` as its plain built-in type when it is an instance of a subclass of one, else ``None``."""
    for base, convert in _BASES:
        if isinstance(value, base):
            return convert(value)
    return None


_BASES = (
    (int, int.__index__),
    (float, float.__pos__),
    (complex, complex.__pos__),
    (str, lambda v: str.__getitem__(v, slice(None))),
    (bytes, lambda v: bytes.__getitem__(v, slice(None))),
    (bytearray, bytearray),
    (tuple, lambda v: tuple(tuple.__iter__(v))),
    (list, lambda v: list(list.__iter__(v))),
    (dict, lambda v: dict(zip(dict.keys(v), dict.values(v)))),
    (frozenset, lambda v: frozenset(frozenset.__iter__(v))),
    (set, lambda v: set(set.__iter__(v))),
)


def _number(value: float) -> object:
    if value != value:
        return {"$f": "nan"}
    if value in (float("inf"), float("-inf")):
        return {"$f": "inf" if value > 0 else "-inf"}
    return value


def encode_value(value: object, keep=None, depth: int = 0) -> object:
    """``value`` as wire JSON; objects that are not plain data become references made by ``keep(obj) -> id``.

    Without ``keep`` such an object is a ``TypeError``.

    >>> encode_value([1, (2, {3}), "x"])
    [1, {'$t': [2, {'$s': [3]}]}, 'x']
    >>> encode_value(object(), keep=lambda obj: 7)
    {'$r': [7, 'object']}
    """
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        return value if -_BIG <= value < _BIG else {"$i": format(value, "x")}
    if kind is float:
        return _number(value)
    if depth > _MAX_DEPTH:
        return _reference(value, keep)
    deeper = depth + 1
    if kind is list:
        return [encode_value(item, keep, deeper) for item in value]
    if kind is tuple:
        return {"$t": [encode_value(item, keep, deeper) for item in value]}
    if kind is dict:
        return {"$d": [[encode_value(k, keep, deeper), encode_value(v, keep, deeper)] for k, v in value.items()]}
    if kind is set or kind is frozenset:
        return {"$s" if kind is set else "$F": [encode_value(item, keep, deeper) for item in value]}
    if kind is bytes:
        return {"$b": value.decode("latin-1")}
    if kind is bytearray:
        return {"$a": value.decode("latin-1")}
    if kind is complex:
        return {"$c": [_number(value.real), _number(value.imag)]}
    if (kind is type or kind is _BUILTIN_FUNCTION) and getattr(builtins, value.__name__, None) is value:
        return {"$n": value.__name__}
    plain = _plain(value)
    if plain is not None:
        return encode_value(plain, keep, depth)
    return _reference(value, keep)


def _reference(value: object, keep) -> object:
    if keep is None:
        raise TypeError(f"a {type(value).__name__} object cannot be sent to the program, only plain data")
    return {"$r": [keep(value), type(value).__name__[:60]]}


def _float(tag: object) -> float:
    if tag not in ("inf", "-inf", "nan"):
        raise WireError(f"bad float {tag!r}")
    return float(tag)


def decode_value(data: object, remote=None, functions: bool = False) -> object:
    """The value that :func:`encode_value` encoded; references become ``remote(id, type_name)`` (else an error).

    Built-ins by name are types only, unless ``functions``.

    >>> decode_value({"$d": [[{"$t": [1, 2]}, {"$F": ["a"]}]]}), decode_value([{"$n": "int"}])
    ({(1, 2): frozenset({'a'})}, [<class 'int'>])
    """
    try:
        return _decode(data, remote, functions)
    except (TypeError, ValueError, KeyError, IndexError, RecursionError, MemoryError) as exc:
        if isinstance(exc, WireError):
            raise
        raise WireError(f"malformed value ({type(exc).__name__})") from None


def _decode(data: object, remote, functions: bool) -> object:
    kind = type(data)
    if data is None or kind in (bool, int, float, str):
        return data
    if kind is list:
        return [_decode(item, remote, functions) for item in data]
    if kind is not dict or len(data) != 1:
        raise WireError("malformed value")
    ((tag, body),) = data.items()
    if tag == "$t":
        return tuple(_decode(item, remote, functions) for item in body)
    if tag == "$d":
        return {_decode(k, remote, functions): _decode(v, remote, functions) for k, v in body}
    if tag == "$s":
        return {_decode(item, remote, functions) for item in body}
    if tag == "$F":
        return frozenset(_decode(item, remote, functions) for item in body)
    if tag == "$b":
        return body.encode("latin-1")
    if tag == "$a":
        return bytearray(body.encode("latin-1"))
    if tag == "$c":
        real, imag = (_decode(part, remote, functions) for part in body)
        return complex(real, imag)
    if tag == "$f":
        return _float(body)
    if tag == "$i":
        return int(body, 16)
    if tag == "$n":
        found = getattr(builtins, body, None) if type(body) is str else None
        if isinstance(found, type) or (functions and type(found) is _BUILTIN_FUNCTION):
            return found
        raise WireError(f"not a built-in type: {body!r}")
    if tag == "$r" and remote is not None:
        ident, type_name = body
        if type(ident) is not int or type(type_name) is not str:
            raise WireError("malformed reference")
        return remote(ident, type_name)
    raise WireError(f"unknown tag {tag!r}")
