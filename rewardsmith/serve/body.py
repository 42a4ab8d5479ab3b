"""JSON in and out of the reward server in bounded steps, so that the event loop keeps answering.

``json.loads`` of a 56 MB body is one C call that holds the GIL for its whole
length: on a thread it still stops the event loop (``/health`` waited seconds).
:func:`parse_body` reads the body as ``json.loads`` would, but one value of at
most :data:`WINDOW` characters at a time: a container that does not fit is
walked in Python, element by element, and every step is short, so the loop's
thread gets the GIL back within a few milliseconds. The walk also counts the
entries of the lists ``limit_for`` names (a batch's per-sample lists) and
refuses one over its limit before the rest is read: a body of 700,000 empty
completions is refused after 8,193 of them, not after all are built.
:func:`encode_json` writes an answer in the same bounded pieces.
"""

from __future__ import annotations

import codecs
import json
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

from rewardsmith.core.errors import RewardsmithError

__all__ = ["WINDOW", "BodyError", "TooManyEntries", "depth_over", "dismantle", "encode_json", "parse_body"]

#: The most characters one C call parses (or writes) at once.
WINDOW = 1 << 17

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_ASCII = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))


class BodyError(RewardsmithError, ValueError):
    """The body is not valid JSON (the message says where)."""


class TooManyEntries(RewardsmithError, ValueError):
    """A list has more entries than its limit (found before the rest of the body was read)."""

    def __init__(self, path: tuple[str, ...], limit: int) -> None:
        self.path, self.limit = path, limit
        super().__init__(f"{'.'.join(path)!r} has more than {limit:,} entries")


class _Reader:
    def __init__(self, text: str, limit_for: Callable[[tuple[str, ...]], int | None], max_depth: int) -> None:
        self.text, self.n = text, len(text)
        self.limit_for, self.max_depth = limit_for, max_depth
        self.window, self.start = "", 0  # a copy of text[start:start + WINDOW]

    def space(self, pos: int) -> int:
        match = _SPACE.match(self.text, pos)
        return match.end() if match else pos

    def fail(self, message: str, pos: int) -> BodyError:
        return BodyError(f"{message} (character {pos})")

    def value(self, pos: int, path: tuple[str, ...], depth: int) -> tuple[Any, int]:
        """The value starting at ``pos`` (no white space before it) and where it ends."""
        if depth > self.max_depth:
            raise RecursionError
        if pos >= self.n:
            raise self.fail("expected a value", pos)
        if self.text[pos] not in "[{":  # a string or a number: parsed in place, at the C parser's speed
            try:
                return _DECODER.raw_decode(self.text, pos)
            except json.JSONDecodeError as exc:
                raise self.fail(exc.msg, exc.pos) from None
        covered = self.start + len(self.window)
        if not (self.start <= pos < covered and (pos + WINDOW // 2 <= covered or covered == self.n)):
            self.start, self.window = pos, self.text[pos : pos + WINDOW]
        try:
            value, end = _DECODER.raw_decode(self.window, pos - self.start)
        except (json.JSONDecodeError, RecursionError):
            pass  # longer than the window, or invalid, or deep: walked element by element
        else:
            limit = self.limit_for(path)
            if limit is not None and isinstance(value, list) and len(value) > limit:
                raise TooManyEntries(path, limit)
            return value, self.start + end
        return (self.array if self.text[pos] == "[" else self.object)(pos, path, depth)

    def array(self, pos: int, path: tuple[str, ...], depth: int) -> tuple[list[Any], int]:
        out: list[Any] = []
        limit = self.limit_for(path)
        pos = self.space(pos + 1)
        if self.text.startswith("]", pos):
            return out, pos + 1
        while True:
            item, pos = self.value(pos, (*path, "[]"), depth + 1)
            out.append(item)
            if limit is not None and len(out) > limit:
                raise TooManyEntries(path, limit)
            pos = self.space(pos)
            if self.text.startswith(",", pos):
                pos = self.space(pos + 1)
            elif self.text.startswith("]", pos):
                return out, pos + 1
            else:
                raise self.fail("expected ',' or ']'", pos)

    def object(self, pos: int, path: tuple[str, ...], depth: int) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        pos = self.space(pos + 1)
        if self.text.startswith("}", pos):
            return out, pos + 1
        while True:
            if not self.text.startswith('"', pos):
                raise self.fail("expected a property name in double quotes", pos)
            try:
                key, pos = _DECODER.raw_decode(self.text, pos)
            except json.JSONDecodeError as exc:
                raise self.fail(exc.msg, exc.pos) from None
            pos = self.space(pos)
            if not self.text.startswith(":", pos):
                raise self.fail("expected ':'", pos)
            out[key], pos = self.value(self.space(pos + 1), (*path, key), depth + 1)
            pos = self.space(pos)
            if self.text.startswith(",", pos):
                pos = self.space(pos + 1)
            elif self.text.startswith("}", pos):
                return out, pos + 1
            else:
                raise self.fail("expected ',' or '}'", pos)


def _text(raw: bytes | bytearray) -> str:
    """``raw`` decoded as UTF-8 (a BOM dropped): at once up to 8 MB (a few milliseconds), else a window at a
    time (the pieces and their join cost twice the text for a while, but no step holds the GIL for long)."""
    if len(raw) <= 8 << 20:
        return raw.decode("utf-8-sig")
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    pieces = [decoder.decode(raw[i : i + WINDOW * 8]) for i in range(0, len(raw), WINDOW * 8)]
    pieces.append(decoder.decode(b"", final=True))
    return "".join(pieces)


def _no_limit(path: tuple[str, ...]) -> int | None:
    return None


def parse_body(
    raw: bytes | bytearray | str,
    limit_for: Callable[[tuple[str, ...]], int | None] = _no_limit,
    max_depth: int = 10_000,
) -> Any:
    """``json.loads(raw)``, in steps of at most :data:`WINDOW` characters (see the module docs).

    ``limit_for(path)`` gives the most entries the list at ``path`` (keys from the top, ``"[]"`` for a list's
    entries) may have, or ``None``; a list over it raises :class:`TooManyEntries`. Invalid JSON raises
    :class:`BodyError`; nesting deeper than ``max_depth`` where the body is walked, :class:`RecursionError`.

    >>> parse_body(b'{"a": [1, {"b": "c"}], "d": null}')
    {'a': [1, {'b': 'c'}], 'd': None}
    >>> big = '{"completions": [' + ",".join(['""'] * 100_000) + "]}"
    >>> parse_body(big, lambda path: 8192 if path == ("completions",) else None)
    Traceback (most recent call last):
    ...
    rewardsmith.serve.body.TooManyEntries: 'completions' has more than 8,192 entries
    >>> parse_body(big)["completions"][-1], len(parse_body(big)["completions"])
    ('', 100000)
    """
    try:
        text = raw if isinstance(raw, str) else _text(raw)
    except UnicodeDecodeError as exc:
        raise BodyError(f"the body is not UTF-8 ({exc})") from None
    reader = _Reader(text, limit_for, max_depth)
    pos = reader.space(0)
    value, end = reader.value(pos, (), 1)
    end = reader.space(end)
    if end != len(text):
        raise reader.fail("extra data after the JSON value", end)
    return value


def depth_over(value: Any, limit: int) -> bool:
    """Whether ``value`` nests deeper than ``limit`` lists or objects (one iterator per level, nothing per item).

    >>> depth_over([[1], [[2]]], 2), depth_over([[1], [[2]]], 3)
    (True, False)
    """
    stack: list[Iterator[Any]] = [iter((value,))]
    while stack:
        for item in stack[-1]:
            if isinstance(item, (dict, list)):
                if len(stack) > limit:
                    return True
                stack.append(iter(item.values() if isinstance(item, dict) else item))
                break
        else:
            stack.pop()
    return False


def _weight(value: Any, cap: int) -> int:
    """The number of values in ``value``, counted up to ``cap`` (strings by length)."""
    count, stack = 0, [value]
    while stack and count < cap:
        item = stack.pop()
        count += 1 + (len(item) // 64 if isinstance(item, str) else 0)
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


def dismantle(values: list[Any], cap: int = WINDOW // 16) -> None:
    """Free a request's values a part at a time, emptying ``values`` (run it off the event loop).

    The last reference to a big structure dropped frees all of it in one C call, the GIL held throughout (a
    second for a 56 MB body). Here each list and object is emptied an entry at a time, and an entry is freed
    at once only when it holds fewer than ``cap`` values; one still referenced elsewhere is left whole.

    >>> values = [{"a": [[1, 2]] * 10_000, "b": "c"}]
    >>> dismantle(values); values
    []
    """
    stack: list[Any] = [values]
    while stack:
        item = stack.pop()
        while item:
            child = item.popitem()[1] if isinstance(item, dict) else item.pop()
            if isinstance(child, (dict, list)) and sys.getrefcount(child) <= 2 and _weight(child, cap) >= cap:
                stack.append(child)
            del child


def encode_json(value: Any) -> bytes:
    """``value`` as compact JSON (what Starlette's ``JSONResponse`` writes), in bounded pieces.

    >>> encode_json({"a": [1, "é", None], "b": {}})
    b'{"a":[1,"\\xc3\\xa9",null],"b":{}}'
    """
    pieces: list[str] = []
    _encode(value, pieces, WINDOW // 16, _ENCODER)
    try:
        return "".join(pieces).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (JSON may carry "\\ud800"): written as an escape
        pieces = []
        _encode(value, pieces, WINDOW // 16, _ASCII)
        return "".join(pieces).encode("ascii")


def _encode(value: Any, out: list[str], cap: int, encoder: json.JSONEncoder) -> None:
    if not isinstance(value, (dict, list)) or _weight(value, cap) < cap:
        out.append(encoder.encode(value))
        return
    parts: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            inner: list[str] = []
            _encode(item, inner, cap, encoder)
            parts.append(encoder.encode(str(key)) + ":" + "".join(inner))
        out.append("{" + ",".join(parts) + "}")
        return
    group: list[Any] = []
    weight = 0
    for item in value:
        w = _weight(item, cap)
        if w < cap:
            group.append(item)
            weight += w
            if weight < cap:
                continue
        if group:
            parts.append(encoder.encode(group)[1:-1])
            group, weight = [], 0
        if w >= cap:
            inner = []
            _encode(item, inner, cap, encoder)
            parts.append("".join(inner))
    if group:
        parts.append(encoder.encode(group)[1:-1])
    out.append("[" + ",".join(parts) + "]")
