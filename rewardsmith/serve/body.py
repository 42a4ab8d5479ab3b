"""The reward server's request bodies, read in bounded steps and bounded memory, so that the event loop keeps answering.

``json.loads`` of a 56 MB body is one C call that holds the GIL for its whole
length: on a thread it still stops the event loop (``/health`` waited seconds).
:func:`read_document` reads the body as ``json.loads`` would, but one value of
at most :data:`WINDOW` bytes at a time: a container that does not fit is
walked in Python, element by element, and every step is short, so the loop's
thread gets the GIL back within a few milliseconds. The UTF-8 is decoded a
window at a time too: the body never becomes one string (making a 56 MB
string is itself one step of about 100 ms on a busy machine, and costs up to
four times the bytes when one character is outside the BMP). The walk also counts the
entries of the lists ``limit_for`` names (a batch's per-sample lists) and
refuses one over its limit before the rest is read: a body of 700,000 empty
completions is refused after 8,193 of them, not after all are built.

The walk keeps an account of the memory its values take (:data:`MEMORY_FACTOR`):
a body whose values would take more than that many times its own size (millions
of ``{}`` take 24 times their bytes) is refused with :class:`TooManyValues` as
soon as the account passes it, before the rest is built.

A list named in ``sinks`` is never built: each entry, once read, goes to a
:class:`Sink` that keeps what it needs of it (NeMo-Gym's ``response.output``
items become chat messages as they are read; the items themselves are freed
at once). The document keeps the body's bytes and where each top-level member
lies in them, so that an answer echoing the request
(:func:`rewardsmith.serve.answer.echo_object`) is cut from the bytes instead of
being written again from parsed values. A string longer than the window is read
a window at a time too: its closing quote found a window at a time, its contents
cut between two characters of the JSON text (never inside an escape, a surrogate
pair or a UTF-8 character), each piece parsed, the pieces joined. With ``max_text``,
a string (value or key) whose text takes more UTF-8 bytes than that raises
:class:`TooLongText` as soon as its pieces pass it, before they are joined: one
string of 50 MB is one step to join and one step for a reward's regular
expression to scan, each holding the GIL for as long as it takes.
"""

from __future__ import annotations

import codecs
import json
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from rewardsmith.core.errors import RewardsmithError
from rewardsmith.serve.freeing import dismantle

__all__ = [
    "WINDOW",
    "BodyError",
    "Document",
    "Sink",
    "TooLongText",
    "TooManyEntries",
    "TooManyValues",
    "depth_over",
    "parse_body",
    "read_document",
    "texts_over",
    "utf8_size",
]

#: The most characters one C call parses (or writes) at once.
WINDOW = 1 << 17
#: The most memory a body's values may take, as a multiple of the body's size (token ids written as
#: ``12345,`` take 6 times their bytes, chat messages of a sentence 8, of one word 11, ``{}`` 24, long texts 1) ...
MEMORY_FACTOR = 10
#: ... or this many bytes, whichever is more (small bodies of small values).
MEMORY_FLOOR = 16 << 20

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")
_UTF8 = codecs.getincrementaldecoder("utf-8")
_TOKEN = frozenset("-+.0123456789eEabcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_TOKEN_END = re.compile(rb"[^-+.0-9a-zA-Z]")
#: A JSON string's contents up to its closing quote (or the end of the window it is matched in).
_STRING_PART = re.compile(rb'(?:[^"\\]++|\\u[0-9a-fA-F]{4}|\\.)*+', re.DOTALL)
#: The characters of a JSON string's contents, as many as fit: an escape whole, a surrogate pair's two escapes
#: together (a lone first half stops the match), other bytes (a UTF-8 character is kept whole by the caller).
#: Needed only where an escape may reach a cut (an escape is at most 12 bytes: no backslash in the 12 before it).
_PIECE = re.compile(
    rb"(?:[^\\]++|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u(?![dD][89abAB])[0-9a-fA-F]{4}|\\[^u])*"
)
#: Values Python keeps one copy of (they cost their slot only).
_SHARED = (type(None), bool)


class BodyError(RewardsmithError, ValueError):
    """The body is not valid JSON (the message says where)."""


class TooManyEntries(RewardsmithError, ValueError):
    """A list has more entries than its limit (found before the rest of the body was read)."""

    def __init__(self, path: tuple[str, ...], limit: int, count: int | None = None) -> None:
        self.path, self.limit, self.count = path, limit, count  # count: None when the rest was not read
        has = f"more than {limit:,}" if count is None else f"{count:,}"
        super().__init__(f"{'.'.join(path)!r} has {has} entries")


class TooManyValues(RewardsmithError, ValueError):
    """The body's values would take more memory than its limit (found before the rest of the body was read)."""

    def __init__(self, size: int, limit: int) -> None:
        self.size, self.limit = size, limit
        super().__init__(
            f"the body's values take more than {limit / 1e6:,.0f} MB of memory ({limit / max(size, 1):.0f} times "
            f"its {size / 1e6:,.1f} MB): it holds too many small values"
        )


class TooLongText(RewardsmithError, ValueError):
    """A string of the body is longer than its limit (found before the string was built)."""

    def __init__(self, path: tuple[str, ...], limit: int, joined: bool = False) -> None:
        self.path, self.limit = path, limit
        where = ".".join(path).replace(".[]", "[]") if path else "the top level"
        what = f"the text of a message at {where!r} (its parts joined)" if joined else f"a string at {where!r}"
        super().__init__(f"{what} takes more than {limit:,} bytes of UTF-8")


def utf8_size(text: str) -> int:
    """The bytes ``text`` takes in UTF-8 (a lone surrogate, which only an escape can make, as 3).

    >>> utf8_size("ab"), utf8_size("é€😀"), utf8_size("\\ud800")
    (2, 9, 3)
    """
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def texts_over(texts: list[str], limit: int) -> bool:
    """Whether ``texts``, joined, would take more than ``limit`` bytes of UTF-8 (told before they are joined).

    >>> texts_over(["ab", "é"], 4), texts_over(["ab", "é"], 3)
    (False, True)
    """
    return sum(map(len, texts)) > limit // 4 and sum(map(utf8_size, texts)) > limit


def _longest_over(value: Any, limit: int) -> bool:
    """Whether a string in ``value`` (a value or a key, at any depth) takes more than ``limit`` bytes of UTF-8.

    >>> _longest_over({"a": ["xyz"]}, 2), _longest_over({"abc": [1]}, 2), _longest_over(["ab", {"c": "d"}], 2)
    (True, True, False)
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is str:
            if len(item) > limit // 4 and utf8_size(item) > limit:
                return True
        elif type(item) is dict:
            stack.extend(item)
            stack.extend(item.values())
        elif type(item) is list:
            stack.extend(item)
    return False


def _cost(value: Any) -> int:
    """About the bytes of memory ``value`` takes beyond the slot that holds it (values Python shares cost 0).

    >>> _cost(None), _cost(7), _cost("a"), _cost(12345) > 0, _cost([{}, {}]) > 2 * _cost({})
    (0, 0, 0, True, True)
    """
    total, stack = 0, [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            total += sys.getsizeof(item) if len(item) > 1 or (item and ord(item) > 255) else 0
        elif kind is int:
            total += 0 if -5 <= item <= 256 else sys.getsizeof(item)
        elif kind is dict:
            total += sys.getsizeof(item)
            stack.extend(item.values())  # (its keys are shared: the parser keeps one copy of each)
        elif kind is list:
            total += sys.getsizeof(item)
            stack.extend(item)
        elif not isinstance(item, _SHARED):
            total += sys.getsizeof(item)
    return total


class Sink(Protocol):
    """Takes a list's entries one at a time as they are read (the list itself is never built)."""

    def add(self, item: Any) -> None: ...


@dataclass
class Document:
    """A parsed body: its value, its bytes, and each top-level member's key and ``(start, end)`` in the bytes."""

    value: Any
    raw: bytes | bytearray
    members: list[tuple[str, int, int]] = field(default_factory=list)


class _Reader:
    """A cursor over the body's UTF-8 bytes, read through a window of at most :data:`WINDOW` decoded bytes.

    The cursor is kept both as a character of the window (``c``) and as a byte of the body (``b``); it only moves
    forward, so keeping the two in step costs one pass over the body.
    """

    def __init__(
        self,
        raw: bytes | bytearray,
        limit_for: Callable[[tuple[str, ...]], int | None],
        max_depth: int,
        sinks: Mapping[tuple[str, ...], Callable[[], Sink]],
        max_text: int | None = None,
    ) -> None:
        self.raw, self.n = raw, len(raw)
        self.limit_for, self.max_depth = limit_for, max_depth
        self.max_text = self.n if max_text is None else max_text  # (no string of the body is longer than the body)
        self.sinks = sinks
        # The containers on the way to a sink, and the top level (its members are recorded), are walked.
        self.walked = {path[:i] for path in sinks for i in range(len(path))} | {()}
        self.members: list[tuple[str, int, int]] = []
        # The memory the values built so far take (entries handed to a sink are freed, and not counted).
        self.budget, self.spent, self.in_sink = max(MEMORY_FLOOR, MEMORY_FACTOR * self.n), 0, 0
        self.b = len(codecs.BOM_UTF8) if raw[:3] == codecs.BOM_UTF8 else 0
        self.load()

    def load(self) -> None:
        """Decode the window that starts at the cursor."""
        chunk = self.raw[self.b : self.b + WINDOW]
        if chunk.isascii():
            self.window, self.ascii, self.end = chunk.decode("ascii"), True, self.b + len(chunk)
        else:
            decoder = _UTF8()
            try:
                self.window = decoder.decode(chunk, self.b + len(chunk) >= self.n)
            except UnicodeDecodeError as exc:
                raise BodyError(f"the body is not UTF-8 ({exc})") from None
            self.ascii, self.end = False, self.b + len(chunk) - len(decoder.getstate()[0])
        self.c = 0

    def room(self) -> None:
        """Make sure the window holds half a window from the cursor on, or reaches the end of the body."""
        if len(self.window) - self.c < WINDOW // 2 and self.end < self.n:
            self.load()

    def to(self, c: int) -> None:
        """Move the cursor forward to character ``c`` of the window."""
        self.b += c - self.c if self.ascii else len(self.window[self.c : c].encode("utf-8"))
        self.c = c

    def spend(self, value: Any) -> Any:
        """Count ``value``'s memory (outside a sink's entries), refusing the body once over its budget."""
        if not self.in_sink:
            self.spent += _cost(value)
            if self.spent > self.budget:
                raise TooManyValues(self.n, self.budget)
        return value

    def fail(self, message: str) -> BodyError:
        return BodyError(f"{message} (byte {self.b})")

    def space(self) -> None:
        while True:
            self.to(_SPACE.match(self.window, self.c).end())  # type: ignore[union-attr]  (it matches "" at least)
            if self.c < len(self.window) or self.end >= self.n:
                return
            self.load()

    def take(self, mark: str) -> bool:
        """Step over ``mark`` if it is at the cursor."""
        if self.window.startswith(mark, self.c):
            self.to(self.c + 1)
            return True
        return False

    def scalar(self, path: tuple[str, ...]) -> Any:
        """The string, number or literal at the cursor (at ``path``), parsed in place at the C parser's speed."""
        try:
            value, end = _DECODER.raw_decode(self.window, self.c)
        except ValueError as exc:  # invalid, a number past Python's digit limit, or a string longer than the window
            if self.end < self.n:  # it may go on past the window's edge
                return self.long_string(path) if self.window.startswith('"', self.c) else self.long_token()
            raise self.fail(getattr(exc, "msg", str(exc))) from None
        edge = end == len(self.window) or self.window[end] in _TOKEN
        if edge and self.end < self.n and not self.window.startswith('"', self.c):
            return self.long_token()  # a number that reaches the window's edge may go on past it
        start = self.b
        self.to(end)
        # (a string's text takes at most the bytes it takes in the body: escapes only shorten it)
        if self.b - start > self.max_text and type(value) is str and utf8_size(value) > self.max_text:
            raise TooLongText(path, self.max_text)
        return value

    def long_token(self) -> Any:
        """A number (or literal) that reaches the window's edge: read up to the first byte that ends it."""
        stop = _TOKEN_END.search(self.raw, self.b)
        end = stop.start() if stop else self.n
        token = bytes(self.raw[self.b : end]).decode("ascii", "replace")
        try:
            value, length = _DECODER.raw_decode(token)
        except ValueError as exc:
            raise self.fail(getattr(exc, "msg", str(exc))) from None
        if length != len(token):
            raise self.fail("expected ',' or a closing bracket")
        self.b = end
        self.load()
        return value

    def long_string(self, path: tuple[str, ...]) -> str:
        """A string that does not end in the window: its closing quote found in the bytes, then its contents parsed
        a window at a time (each piece cut between two characters of the JSON text, :data:`_PIECE`) and joined;
        one whose text passes ``max_text`` bytes is refused before the pieces are joined (or the rest parsed)."""
        raw, quote = self.raw, self.closing_quote()
        pieces, start = [], self.b + 1
        size = None if quote - start <= self.max_text else 0  # (None: it fits, whatever its escapes)
        while start < quote:
            end = min(start + max(WINDOW, 12), quote)
            if end < quote and raw.find(b"\\", end - 12, end) >= 0:  # an escape may reach the cut
                end = self.cut(start, end)
            while start < end < quote and 0x80 <= raw[end] < 0xC0:  # not inside a UTF-8 character
                end -= 1
            try:
                piece, _ = _DECODER.raw_decode('"' + bytes(raw[start:end]).decode("utf-8") + '"')
            except UnicodeDecodeError as exc:
                raise BodyError(f"the body is not UTF-8 ({exc})") from None
            except ValueError as exc:
                self.b = start
                raise self.fail(getattr(exc, "msg", str(exc))) from None
            if size is not None:
                size += utf8_size(piece)
                if size > self.max_text:
                    raise TooLongText(path, self.max_text)
            pieces.append(piece)
            start = end
        self.b = quote + 1
        self.load()
        return "".join(pieces)

    def closing_quote(self) -> int:
        """The byte of the closing quote of the string that opens at the cursor, found a window at a time."""
        raw, at = self.raw, self.b + 1
        while True:
            limit = min(at + WINDOW, self.n)
            end = _STRING_PART.match(raw, at, limit).end()  # type: ignore[union-attr]  (it matches "" at least)
            if end < limit and raw[end] == 0x22:
                return end
            if limit >= self.n:
                raise self.fail("Unterminated string")
            at = end  # the window's edge, or an escape it cuts: read on from there

    def cut(self, start: int, end: int) -> int:
        """Where to end a piece of a string's contents that begins at ``start`` (a character's first byte), at or
        before ``end``, so that no escape is cut and no surrogate pair parted (``end - start`` is 12 or more).

        The piece is read from the last place before ``end - 12`` known to begin a character: the first of a run
        of backslashes begins one, and without a backslash every byte is a character.
        """
        raw = self.raw
        known = raw.rfind(b"\\", start, end - 12)
        if known < 0:
            known = end - 12
        else:  # back to the first backslash of its run
            before = bytes(raw[start:known])
            known -= len(before) - len(before.rstrip(b"\\"))
        stop = _PIECE.match(raw, known, end).end()  # type: ignore[union-attr]  (it matches "" at least)
        return stop if stop > known else known + 6  # (a lone first half of a pair stops the match: taken alone)

    def value(self, path: tuple[str, ...], depth: int) -> Any:
        """The value at the cursor (no white space before it); the cursor ends after it."""
        if depth > self.max_depth:
            raise RecursionError
        self.room()
        if self.c >= len(self.window):
            raise self.fail("expected a value")
        opening = self.window[self.c]
        if opening not in "[{":
            return self.spend(self.scalar(path))
        if opening == "[" and path in self.sinks:
            return self.array(path, depth, self.sinks[path]())
        if path not in self.walked:
            try:
                value, end = _DECODER.raw_decode(self.window, self.c)
            except (ValueError, RecursionError):
                pass  # longer than the window, or invalid, or deep: walked element by element
            else:
                limit = self.limit_for(path)
                if limit is not None and isinstance(value, list) and len(value) > limit:
                    raise TooManyEntries(path, limit, len(value))
                start = self.b
                self.to(end)
                if self.b - start > self.max_text and _longest_over(value, self.max_text):  # (a limit under a window)
                    raise TooLongText(path, self.max_text)
                return self.spend(value)
        return self.array(path, depth, None) if opening == "[" else self.object(path, depth)

    def array(self, path: tuple[str, ...], depth: int, sink: Sink | None) -> Any:
        out: list[Any] = []
        limit = self.limit_for(path)
        count = 0
        self.to(self.c + 1)
        self.space()
        if self.take("]"):
            return self.spend(out) if sink is None else sink
        item: Any = None
        try:
            while True:
                start = self.b
                self.in_sink += sink is not None
                try:
                    item = self.value((*path, "[]"), depth + 1)
                finally:
                    self.in_sink -= sink is not None
                count += 1
                if limit is not None and count > limit:
                    raise TooManyEntries(path, limit)
                if sink is None:
                    out.append(item)
                else:
                    if isinstance(item, (dict, list)) and self.deep(item, start, depth):
                        raise RecursionError
                    sink.add(item)
                item = None
                self.space()
                if self.take(","):
                    self.space()
                elif self.take("]"):
                    if sink is None and not self.in_sink:
                        self.spent += sys.getsizeof(out)  # the list itself (its entries are counted)
                    return out if sink is None else sink
                else:
                    raise self.fail("expected ',' or ']'")
        except BaseException:  # what was built is freed a part at a time, not with the error (see freeing)
            for value in (out, item, sink):
                dismantle(value)
            raise

    def deep(self, item: Any, start: int, depth: int) -> bool:
        """Whether ``item`` (read from ``start`` on, in a list at ``depth``) nests deeper than the limit allows;
        an item with fewer brackets than the levels left is not walked to know."""
        room = self.max_depth - depth
        if self.raw.count(b"[", start, self.b) + self.raw.count(b"{", start, self.b) <= room:
            return False
        return depth_over(item, room)

    def object(self, path: tuple[str, ...], depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        self.to(self.c + 1)
        self.space()
        if self.take("}"):
            return self.spend(out)
        try:
            while True:
                if not self.window.startswith('"', self.c):
                    raise self.fail("expected a property name in double quotes")
                start = self.b
                key = self.spend(self.scalar(path))
                self.space()
                if not self.take(":"):
                    raise self.fail("expected ':'")
                self.space()
                out[key] = self.value((*path, key), depth + 1)
                if not path:
                    self.members.append((key, start, self.b))
                self.space()
                if self.take(","):
                    self.space()
                elif self.take("}"):
                    if not self.in_sink:
                        self.spent += sys.getsizeof(out)  # the object itself (its keys and values are counted)
                    return out
                else:
                    raise self.fail("expected ',' or '}'")
        except BaseException:
            dismantle(out)
            raise


def _no_limit(path: tuple[str, ...]) -> int | None:
    return None


def read_document(
    raw: bytes | bytearray | str,
    limit_for: Callable[[tuple[str, ...]], int | None] = _no_limit,
    max_depth: int = 10_000,
    sinks: Mapping[tuple[str, ...], Callable[[], Sink]] | None = None,
    max_text: int | None = None,
) -> Document:
    """``json.loads(raw)`` in steps of at most :data:`WINDOW` bytes, with where its top-level members lie.

    ``limit_for(path)`` gives the most entries the list at ``path`` (keys from the top, ``"[]"`` for a list's
    entries) may have, or ``None``; a list over it raises :class:`TooManyEntries`; values that would take more than
    :data:`MEMORY_FACTOR` times the body's size (or :data:`MEMORY_FLOOR`), :class:`TooManyValues`. The list at a path in
    ``sinks`` is replaced by ``sinks[path]()``, given each entry (see the module docs). A string (value or key)
    whose text takes more than ``max_text`` bytes of UTF-8 raises :class:`TooLongText` before it is joined. Invalid
    JSON or UTF-8 raises :class:`BodyError`; nesting deeper than ``max_depth`` where the body is walked,
    :class:`RecursionError`.

    >>> class Count:
    ...     n = 0
    ...     def add(self, item): self.n += 1
    >>> doc = read_document('{"a": {"b": [1, 2, 3]}, "é": null}', sinks={("a", "b"): Count})
    >>> doc.value["a"]["b"].n, doc.value["é"], [(key, doc.raw[s:e].decode()) for key, s, e in doc.members]
    (3, None, [('a', '"a": {"b": [1, 2, 3]}'), ('é', '"é": null')])
    >>> read_document('{"completions": ["' + "x" * 300 + '"]}', max_text=256)
    Traceback (most recent call last):
    ...
    rewardsmith.serve.body.TooLongText: a string at 'completions' takes more than 256 bytes of UTF-8
    """
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    reader = _Reader(raw, limit_for, max_depth, sinks or {}, max_text)
    reader.space()
    value = reader.value((), 1)
    reader.space()
    if reader.b != reader.n:
        raise reader.fail("extra data after the JSON value")
    return Document(value, raw, reader.members)


def parse_body(
    raw: bytes | bytearray | str,
    limit_for: Callable[[tuple[str, ...]], int | None] = _no_limit,
    max_depth: int = 10_000,
) -> Any:
    """``json.loads(raw)``, in steps of at most :data:`WINDOW` characters (:func:`read_document`'s value).

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
    return read_document(raw, limit_for, max_depth).value


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
