"""Tool calls: one call in any common shape, read into a :class:`ToolCall`.

A call may be OpenAI's nested ``{"function": {"name", "arguments"}}`` (with
JSON-string or parsed arguments), a flat ``{"name", "arguments"}`` object, a
JSON string, or a ``<tool_call>{json}</tool_call>`` block in a message's text
outside the reasoning (``<think>...</think>``). A call with two different
names, no name, or arguments that are not a JSON object is kept, marked
malformed. :mod:`rewardsmith.core.trajectory` pairs calls with their results.
"""

from __future__ import annotations

import json
import math
from typing import Any, NamedTuple

__all__ = [
    "MAX_CALLS_PER_MESSAGE",
    "ToolCall",
    "capped_calls",
    "message_text",
    "read_call",
    "strict_json",
    "structured_calls",
    "text_calls",
]

#: The markers of a tool call written as text (Hermes and Qwen chat templates).
TOOL_CALL_OPEN, TOOL_CALL_CLOSE = "<tool_call>", "</tool_call>"
_NOT_JSON = object()
#: Calls read from one message; more are one malformed call (no runtime runs thousands from one message).
MAX_CALLS_PER_MESSAGE = 100


class ToolCall(NamedTuple):
    """One tool call: its name, parsed arguments, and what came back.

    ``malformed`` says why the call could not run (``None``: well formed);
    ``result`` is the tool message's text (``None``: no result came back);
    ``error`` is the error a tool reported instead of a result. Immutable
    (a named tuple: one is read by every reward of a batch, and built fast).
    """

    name: str | None
    arguments: Any
    result: str | None = None
    error: str | None = None
    malformed: str | None = None
    turn: int = 0
    id: str | None = None

    @property
    def executed(self) -> bool:
        """Whether a result (or an error) came back for this call."""
        return self.result is not None or self.error is not None

    @property
    def ok(self) -> bool:
        """Well formed, executed, and no error came back."""
        return self.malformed is None and self.result is not None and self.error is None

    def describe(self) -> str:
        """``name(args)`` for reports."""
        if self.malformed:
            return f"<malformed call: {self.malformed}>"
        args = json.dumps(self.arguments, sort_keys=True, default=str)
        return f"{self.name}({args[:80]}{'...' if len(args) > 80 else ''})"


def message_text(content: Any) -> str:
    """The text of a message's ``content``: a string, a list of parts (their text joined), ``None`` (empty).

    >>> message_text([{"type": "text", "text": "a"}, {"type": "image"}, "b"]), message_text(None)
    ('ab', '')
    """
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, (list, tuple)):
        return "".join(
            p if isinstance(p, str) else p["text"]
            for p in content
            if isinstance(p, str) or (isinstance(p, dict) and isinstance(p.get("text"), str))
        )
    return str(content)


def _not_a_number(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of the range of a JSON number")
    return value


#: One decoder for every call: ``json.loads`` with options builds a new one (and a reference cycle) per call.
_DECODER = json.JSONDecoder(parse_constant=_not_a_number, parse_float=_finite)


def strict_json(text: str) -> Any:
    """``text`` parsed as standard JSON: ``NaN``, ``Infinity`` and numbers that overflow to infinity are errors.

    Python's ``json`` accepts ``NaN`` (which passes every ``minimum``/``maximum``
    check of a schema, since no comparison with it is true); the standard does not.

    >>> strict_json('{"p": 0.5}')
    {'p': 0.5}
    >>> strict_json('{"p": NaN}')
    Traceback (most recent call last):
    ...
    ValueError: NaN is not JSON
    """
    return _DECODER.decode(text)


def _json(text: str) -> Any:
    try:
        return strict_json(text)
    except (ValueError, RecursionError):
        return _NOT_JSON


def read_call(raw: Any, turn: int = 0) -> ToolCall:
    """One call in any common shape (OpenAI nested ``function``, flat ``name``/``arguments``, a JSON string).

    >>> read_call({"type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}).arguments
    {'x': 1}
    >>> read_call({"function": {"name": "get_weather", "arguments": {}}, "name": "delete_all_files"}).malformed
    "two different names: 'get_weather' and 'delete_all_files'"
    """
    if isinstance(raw, str):
        parsed = _json(raw.strip())
        if parsed is _NOT_JSON:
            return ToolCall(None, raw, malformed="not JSON", turn=turn)
        raw = parsed
    if not isinstance(raw, dict):
        return ToolCall(None, raw, malformed=f"a call is an object, got {type(raw).__name__}", turn=turn)
    call_id = raw.get("id") if isinstance(raw.get("id"), str) else None
    inner = raw.get("function")
    body = inner if isinstance(inner, dict) else raw
    name = body.get("name")
    outer = raw.get("name") if body is not raw else None
    if outer is not None and outer != name:
        return ToolCall(None, None, malformed=f"two different names: {name!r} and {outer!r}", turn=turn, id=call_id)
    if not isinstance(name, str) or not name.strip():
        return ToolCall(None, None, malformed="no tool name", turn=turn, id=call_id)
    arguments = body.get("arguments", body.get("parameters"))
    if arguments is None:
        arguments = {}
    if isinstance(arguments, str):
        parsed = _json(arguments) if arguments.strip() else {}
        if parsed is _NOT_JSON:
            return ToolCall(name, arguments, malformed="arguments are not JSON", turn=turn, id=call_id)
        arguments = parsed
    if not isinstance(arguments, dict):
        kind = type(arguments).__name__
        return ToolCall(name, arguments, malformed=f"arguments are a {kind}, not an object", turn=turn, id=call_id)
    return ToolCall(name, arguments, turn=turn, id=call_id)


def _outside_reasoning(text: str) -> str:
    """The text a runtime reads calls from: after the last ``</think>``; before an unclosed ``<think>``."""
    end = text.rfind("</think>")
    if end != -1:
        return text[end + len("</think>") :]
    start = text.find("<think>")
    return text if start == -1 else text[:start]


def text_calls(text: str, turn: int) -> tuple[list[ToolCall], str]:
    """The ``<tool_call>`` blocks of ``text`` (outside the reasoning) and the text without them."""
    visible = _outside_reasoning(text)
    if TOOL_CALL_OPEN not in visible:
        return [], text
    calls: list[ToolCall] = []
    kept: list[str] = [text[: len(text) - len(visible)]]
    position = 0
    while True:
        start = visible.find(TOOL_CALL_OPEN, position)
        end = visible.find(TOOL_CALL_CLOSE, start + len(TOOL_CALL_OPEN)) if start != -1 else -1
        if end == -1 or len(calls) >= MAX_CALLS_PER_MESSAGE:  # past the cap, the rest is counted, not read
            extra = visible.count(TOOL_CALL_OPEN, position) if end != -1 else 0
            kept.append(visible[position:])
            break
        kept.append(visible[position:start])
        position = end + len(TOOL_CALL_CLOSE)
        block = visible[start + len(TOOL_CALL_OPEN) : end].strip()
        parsed = _json(block)
        items = parsed if isinstance(parsed, list) else [block if parsed is _NOT_JSON else parsed]
        calls += [read_call(item, turn) for item in items]
    return capped_calls(calls, turn, extra), "".join(kept)


def capped_calls(calls: list[ToolCall], turn: int, extra: int = 0) -> list[ToolCall]:
    """At most :data:`MAX_CALLS_PER_MESSAGE` calls, and one malformed call standing for the rest."""
    extra += max(0, len(calls) - MAX_CALLS_PER_MESSAGE)
    if not extra:
        return calls
    too_many = ToolCall(
        None, None, malformed=f"{extra} more calls in one message than the {MAX_CALLS_PER_MESSAGE} read", turn=turn
    )
    return [*calls[:MAX_CALLS_PER_MESSAGE], too_many]


def structured_calls(structured: Any, turn: int) -> list[list[Any]]:
    """A message's ``tool_calls`` (a list, or one call), capped, each as the list of a :class:`ToolCall`'s fields.

    TRL's parsed shape (``{"type": "function", "function": {"name": str,
    "arguments": dict}}``) is read here directly; any other goes to
    :func:`read_call`. Lists, so that a result can be attached in place.

    >>> structured_calls([{"type": "function", "function": {"name": "f", "arguments": {"x": 1}}}], turn=2)
    [['f', {'x': 1}, None, None, None, 2, None]]
    """
    if type(structured) is dict:
        structured = [structured]
    out = []
    for raw in structured[: MAX_CALLS_PER_MESSAGE + 1]:
        inner = raw.get("function") if type(raw) is dict else None
        if type(inner) is dict and "name" not in raw:
            name, arguments = inner.get("name"), inner.get("arguments")
            if type(name) is str and type(arguments) is dict and name.strip():
                call_id = raw.get("id")
                out.append([name, arguments, None, None, None, turn, call_id if type(call_id) is str else None])
                continue
        out.append(list(read_call(raw, turn)))
    if len(structured) > MAX_CALLS_PER_MESSAGE:
        out = [list(c) for c in capped_calls(out, turn, len(structured) - MAX_CALLS_PER_MESSAGE - 1)]  # type: ignore[arg-type]
    return out
