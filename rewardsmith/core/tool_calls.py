"""Tool calls: one call in any common shape, read into a :class:`ToolCall`.

A call may be OpenAI's nested ``{"function": {"name", "arguments"}}`` (with
JSON-string or parsed arguments), a flat ``{"name", "arguments"}`` object, a
JSON string, or a ``<tool_call>{json}</tool_call>`` block in a message's text
outside the reasoning (``<think>...</think>``, in any case, with or without
attributes). A call with two different names, no name, or arguments that are
not a JSON object is kept, marked malformed; so is a ``<tool_call>`` left open
(a runtime reads it to the end of the text, so it is no answer either).
:mod:`rewardsmith.core.trajectory` pairs calls with their results.

A message's text is its string content, or the text parts of a list of parts;
reasoning parts (``{"type": "reasoning"}``, ``{"type": "thinking"}``, and any
part whose type is not a text type) are not part of it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, NamedTuple

__all__ = [
    "MAX_CALLS_PER_MESSAGE",
    "TEXT_PART_TYPES",
    "ToolCall",
    "capped_calls",
    "message_text",
    "read_call",
    "strict_json",
    "structured_calls",
    "text_calls",
    "text_parts",
]

#: The markers of a tool call written as text (Hermes and Qwen chat templates).
TOOL_CALL_OPEN, TOOL_CALL_CLOSE = "<tool_call>", "</tool_call>"
_NOT_JSON = object()
#: Calls read from one message; more are one malformed call (no runtime runs thousands from one message).
MAX_CALLS_PER_MESSAGE = 100
#: Content parts that are what the message says (OpenAI chat, Responses ``output_text``/``input_text``); a part of
#: any other type (``reasoning``, ``thinking``, ``refusal``, an image) is not its text.
TEXT_PART_TYPES = frozenset({"text", "output_text", "input_text"})
#: The reasoning's markers as runtimes and chat templates write them: ``<think>``, in any case, with attributes.
_THINK_OPEN = re.compile(r"<think(?:\s[^<>]*)?>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think\s*>", re.IGNORECASE)


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

    Only text parts count (a part with a ``text`` and no type, or a type in
    :data:`TEXT_PART_TYPES`): a reasoning or thinking part is not what the
    message says.

    >>> message_text([{"type": "text", "text": "a"}, {"type": "image"}, "b"]), message_text(None)
    ('ab', '')
    >>> message_text([{"type": "reasoning", "text": "#### 18"}, {"type": "thinking", "thinking": "18"},
    ...               {"type": "output_text", "text": "I do not know."}])
    'I do not know.'
    """
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, (list, tuple)):
        return "".join(text_parts(content))
    return str(content)


def text_parts(parts: list[Any] | tuple[Any, ...]) -> list[str]:
    """The texts of a message's content parts that :func:`message_text` joins (its text parts, in order).

    >>> text_parts(["a", {"type": "output_text", "text": "b"}, {"type": "image"}, {"type": "reasoning", "text": "c"}])
    ['a', 'b']
    """
    return [p if isinstance(p, str) else p["text"] for p in parts if _is_text_part(p)]


def _is_text_part(part: Any) -> bool:
    if isinstance(part, str):
        return True
    if not isinstance(part, dict) or not isinstance(part.get("text"), str):
        return False
    kind = part.get("type")
    return kind is None or kind in TEXT_PART_TYPES


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


def outside_reasoning(text: str) -> str:
    """The text a runtime reads calls from: after the last ``</think>``; before an unclosed ``<think>``.

    The markers are matched in any case and with attributes (``<THINK>``, ``<think mode="x">``).

    >>> outside_reasoning("<THINK>call here</Think >after"), outside_reasoning('before<think id="1">draft')
    ('after', 'before')
    """
    last = None
    for last in _THINK_CLOSE.finditer(text):  # noqa: B007 - the last closing marker is the one wanted
        pass
    if last is not None:
        return text[last.end() :]
    start = _THINK_OPEN.search(text)
    return text if start is None else text[: start.start()]


def text_calls(text: str, turn: int) -> tuple[list[ToolCall], str]:
    """The ``<tool_call>`` blocks of ``text`` (outside the reasoning) and the text without them.

    A block left open runs to the end of the text (as runtimes read it): it is
    one call, read from what follows the marker, and not part of the text.

    >>> calls, text = text_calls('So: <tool_call>{"name": "submit", "arguments": {"answer": "#### 18"}}', 0)
    >>> [c.name for c in calls], text
    (['submit'], 'So: ')
    """
    visible = outside_reasoning(text)
    if TOOL_CALL_OPEN not in visible:
        return [], text
    calls: list[ToolCall] = []
    kept: list[str] = [text[: len(text) - len(visible)]]
    position, extra = 0, 0
    while True:
        start = visible.find(TOOL_CALL_OPEN, position)
        if start == -1:
            kept.append(visible[position:])
            break
        if len(calls) >= MAX_CALLS_PER_MESSAGE:  # past the cap, the rest is counted, not read
            extra = visible.count(TOOL_CALL_OPEN, position)
            kept.append(visible[position:start])
            break
        kept.append(visible[position:start])
        end = visible.find(TOOL_CALL_CLOSE, start + len(TOOL_CALL_OPEN))
        block = visible[start + len(TOOL_CALL_OPEN) : len(visible) if end == -1 else end].strip()
        parsed = _json(block)
        items = parsed if isinstance(parsed, list) else [block if parsed is _NOT_JSON else parsed]
        calls += [read_call(item, turn) for item in items]
        if end == -1:
            break
        position = end + len(TOOL_CALL_CLOSE)
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
