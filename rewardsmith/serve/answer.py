"""The reward server's answers, written and freed in bounded steps, so that the event loop keeps answering.

Answers are written as a list of chunks of about :data:`~rewardsmith.serve.body.WINDOW` bytes
(:func:`encode_chunks`), sent one after another: no step joins or copies the whole answer. An answer
that echoes the request (:func:`echo_object`) is cut from the request's bytes instead of being written
again from parsed values. One string longer than the window is still written in one C call: that is a
few milliseconds per megabyte of that one string. A request's values are freed a part at a time
(:func:`~rewardsmith.serve.freeing.dismantle`), since dropping the last reference to a big structure frees all
of it in one step.
"""

from __future__ import annotations

import json
from typing import Any

from rewardsmith.serve import body as _body
from rewardsmith.serve.body import Document
from rewardsmith.serve.freeing import count_values

__all__ = ["echo_object", "encode_chunks", "encode_json"]

_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_ASCII = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))


class _Chunks:
    """Text written in small pieces, kept as encoded chunks of about ``size`` characters."""

    def __init__(self, encoding: str, size: int | None = None) -> None:
        self.encoding, self.size = encoding, size or _body.WINDOW
        self.chunks: list[bytes] = []
        self.group: list[str] = []
        self.length = 0

    def write(self, piece: str) -> None:
        if self.length + len(piece) > self.size:
            self.flush()
        if len(piece) > self.size:
            self.chunks.extend(piece[i : i + self.size].encode(self.encoding) for i in range(0, len(piece), self.size))
            return
        self.group.append(piece)
        self.length += len(piece)

    def flush(self) -> None:
        if self.group:
            self.chunks.append("".join(self.group).encode(self.encoding))
            self.group, self.length = [], 0

    def done(self) -> list[bytes]:
        self.flush()
        return self.chunks


def encode_chunks(value: Any) -> list[bytes]:
    """``value`` as compact JSON (what Starlette's ``JSONResponse`` writes), in chunks of about
    :data:`~rewardsmith.serve.body.WINDOW` bytes, written in bounded steps (no step joins the whole answer).

    >>> encode_chunks({"a": [1, "é", None], "b": {}})
    [b'{"a":[1,"\\xc3\\xa9",null],"b":{}}']
    >>> big = encode_chunks({"a": ["x" * 100] * 10_000})
    >>> len(big) > 1, json.loads(b"".join(big)) == {"a": ["x" * 100] * 10_000}
    (True, True)
    """
    cap = _body.WINDOW // 16
    out = _Chunks("utf-8")
    try:
        _encode(value, out, cap, _ENCODER)
        return out.done()
    except UnicodeEncodeError:  # a lone surrogate (JSON may carry "\\ud800"): written as an escape
        out = _Chunks("ascii")
        _encode(value, out, cap, _ASCII)
        return out.done()


def encode_json(value: Any) -> bytes:
    """``value`` as compact JSON in one piece (:func:`encode_chunks` joined; for small answers).

    >>> encode_json({"a": [1, "é", None], "b": {}})
    b'{"a":[1,"\\xc3\\xa9",null],"b":{}}'
    """
    return b"".join(encode_chunks(value))


def _encode(value: Any, out: _Chunks, cap: int, encoder: json.JSONEncoder) -> None:
    if not isinstance(value, (dict, list)) or count_values(value, cap) < cap:
        out.write(encoder.encode(value))
        return
    if isinstance(value, dict):
        sep = "{"
        for key, item in value.items():
            out.write(sep + encoder.encode(str(key)) + ":")
            _encode(item, out, cap, encoder)
            sep = ","
        out.write("}" if sep == "," else "{}")
        return
    sep = "["
    group: list[Any] = []
    weight = 0
    for item in value:
        w = count_values(item, cap)
        if w < cap:
            group.append(item)
            weight += w
            if weight < cap:
                continue
        if group:
            out.write(sep + encoder.encode(group)[1:-1])
            group, weight, sep = [], 0, ","
        if w >= cap:
            out.write(sep)
            _encode(item, out, cap, encoder)
            sep = ","
    if group:
        out.write(sep + encoder.encode(group)[1:-1])
        sep = ","
    out.write("]" if sep == "," else "[]")


def echo_object(document: Document, fields: dict[str, Any]) -> list[bytes | memoryview]:
    """The top-level object of ``document`` with ``fields`` set, as chunks of UTF-8 (:func:`encode_chunks`' form).

    The members are cut from the body's bytes (as sent: their spacing, their order; a long member as views of
    the bytes, nothing copied); a member that ``fields`` sets is left out, and the fields come after the others.

    >>> from rewardsmith.serve.body import read_document
    >>> doc = read_document('{"a": [1, 2], "reward": 5, "b": "é"}')
    >>> b"".join(echo_object(doc, {"reward": 1.0})).decode()
    '{"a": [1, 2],"b": "é","reward":1.0}'
    """
    view, window = memoryview(document.raw), _body.WINDOW
    out: list[bytes | memoryview] = []
    pending = bytearray(b"{")
    for key, start, end in document.members:
        if key in fields:
            continue
        if len(pending) > 1:
            pending += b","
        for i in range(start, end, window):
            piece = view[i : min(i + window, end)]
            if len(piece) == window:  # a whole window: sent as it is
                if pending:
                    out.append(bytes(pending))
                    pending.clear()
                out.append(piece)
            else:
                pending += piece
        if len(pending) >= window:
            out.append(bytes(pending))
            pending.clear()
    extra = encode_json(fields)[1:-1]
    pending += (b"," if extra and (out or len(pending) > 1) else b"") + extra + b"}"
    out.append(bytes(pending))
    return out
