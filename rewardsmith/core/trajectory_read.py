"""Reading a rollout's raw messages: the full pass (every call, with its result), and the count of TRL's shape.

:func:`read_rollout` is what a rollout means: its calls paired with their
results, its final message and its turns (:mod:`rewardsmith.core.trajectory`
documents the rules). :func:`count_rollout` answers the questions a training
step asks of every rollout (how many calls, how many failed, the final
message, the turns) without building a call, for the shape TRL's tool loop
leaves (parsed calls, text results in order); on any other shape it declines
and the full pass runs. Both passes are linear in the rollout.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from typing import Any, NamedTuple

from rewardsmith.core.tool_calls import (
    MAX_CALLS_PER_MESSAGE,
    TOOL_CALL_OPEN,
    ToolCall,
    message_text,
    strict_json,
    structured_calls,
    text_calls,
)

__all__ = ["Message", "count_rollout", "is_error_text", "read_rollout", "rollout_items", "rollout_messages"]

#: A tool result that may report an error: a JSON or Python object with an ``error`` key (TRL writes
#: ``{'error': '...'}`` when a tool raises). Whether it does is :func:`is_error_text`'s to say.
_MAYBE_ERROR = re.compile(r"""\A\s*\{.*['"]error['"]\s*:""", re.DOTALL)
#: An object opening with an ``error`` key whose value is no error (null, None, false, an empty string).
_NO_ERROR_FIRST = re.compile(r"""\A\s*\{\s*['"]error['"]\s*:\s*(?:null|None|false|False|""|'')\s*[,}]""")
_ERROR_FIRST = re.compile(r"""\A\s*\{\s*['"]error['"]\s*:""")
#: TRL's own text for a tool that raised, ``str({"error": str(exc)})`` with a message free of quotes, backslashes
#: and line breaks: an error without parsing it (the parse costs more than the rest of a rollout's reading).
_TRL_ERROR = re.compile(r"""\{'error': '[^'\\\r\n]+'\}""")
#: Builds a named tuple from an iterable of all its fields, without the generated ``__new__``'s keyword handling.
_new = tuple.__new__
#: A :class:`ToolCall` from the list of its fields.
_as_call = functools.partial(_new, ToolCall)


class Message(NamedTuple):
    """One message of a trajectory: ``role``, text ``content``, the ``calls`` it makes (with what came back), a
    tool's ``name``."""

    role: str
    content: str
    calls: tuple[ToolCall, ...] = ()
    name: str | None = None


def rollout_items(completion: Any) -> list[Any]:
    """A completion as a new list of raw messages (text and ``None`` become one assistant message).

    >>> rollout_items("4"), rollout_items(None)
    ([{'role': 'assistant', 'content': '4'}], [{'role': 'assistant', 'content': ''}])
    """
    if type(completion) is list:
        return list(completion)
    if isinstance(completion, str) or completion is None:
        return [{"role": "assistant", "content": completion or ""}]
    if isinstance(completion, dict):
        return [completion]
    return list(completion) if isinstance(completion, (list, tuple)) else [str(completion)]


def is_error_text(text: str) -> bool:
    """Whether a tool result's text reports an error: an object whose ``error`` is set (not null, false or empty).

    The text is read as JSON, else as a Python literal (what TRL writes); an
    object it cannot read counts when it opens with an ``error`` key that is set.

    >>> is_error_text("{'error': 'KeyError: k9'}"), is_error_text('{"error": null, "result": 4}')
    (True, False)
    >>> is_error_text('{"result": 4, "error": "timed out"}'), is_error_text("The error: none")
    (True, False)
    """
    if "error" not in text or _MAYBE_ERROR.match(text) is None:
        return False
    if _TRL_ERROR.fullmatch(text) is not None:
        return True
    value = _object(text)
    if isinstance(value, dict):
        return "error" in value and _is_set(value["error"])
    return _ERROR_FIRST.match(text) is not None and _NO_ERROR_FIRST.match(text) is None


def _object(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        return ast.literal_eval(text.strip()) if len(text) <= 100_000 else None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _is_set(error: Any) -> bool:
    """Whether an ``error`` value says something went wrong (``None``, ``False``, ``""``, ``{}``, ``[]`` do not)."""
    return error is not None and error is not False and error != "" and error != {} and error != []


def _object_text(arguments: Any) -> bool:
    """Whether call arguments are a JSON object string (or blank, which reads as no arguments)."""
    if type(arguments) is not str:
        return False
    if arguments == "{}":  # a tool without parameters
        return True
    try:
        return not arguments.strip() or type(strict_json(arguments)) is dict
    except (ValueError, RecursionError):
        return False


def count_rollout(items: list[Any]) -> tuple[int, int, str, int] | None:
    """``(calls, failed calls, final message, turns)`` of a rollout in TRL's shape; ``None`` for any other shape.

    TRL's shape: dict messages; assistant messages with text content (no
    ``<tool_call>`` block) and well-formed calls in TRL's shape; tool messages
    with text content and no ``tool_call_id`` or error flags, answering the
    last turn's calls in order. What it returns is what :func:`read_rollout`
    gives for the same rollout.

    >>> call = {"type": "function", "function": {"name": "f", "arguments": {}}}
    >>> count_rollout([{"role": "assistant", "content": "", "tool_calls": [call, call]},
    ...                {"role": "tool", "content": "{'error': 'x'}"}, {"role": "assistant", "content": " 4 "}])
    (2, 2, '4', 2)
    >>> count_rollout([{"role": "tool", "content": "1", "tool_call_id": "c1"}]) is None
    True
    """
    made = ok = turns = waiting = 0
    final: str | None = None
    for raw in items:
        if type(raw) is not dict:
            return None
        role = raw.get("role", "assistant")
        if role == "tool":
            final = None
            content = raw.get("content")
            if type(content) is not str or "tool_call_id" in raw or "is_error" in raw or "status" in raw:
                return None
            if waiting:
                waiting -= 1
                ok += not is_error_text(content)
        elif role == "assistant":
            final = raw.get("content")
            if final is None:
                final = ""
            elif type(final) is not str or TOOL_CALL_OPEN in final:
                return None
            structured = raw.get("tool_calls")
            waiting = 0
            if structured:
                if type(structured) is not list or len(structured) > MAX_CALLS_PER_MESSAGE:
                    return None
                for call in structured:  # well formed in TRL's shape: {"function": {"name", "arguments"}}
                    inner = call.get("function") if type(call) is dict else None
                    if type(inner) is not dict or "name" in call:
                        return None
                    name, arguments = inner.get("name"), inner.get("arguments")
                    if type(name) is not str or not name.strip():
                        return None
                    if type(arguments) is not dict and not _object_text(arguments):
                        return None
                waiting = len(structured)
                made += waiting
            turns += 1
    return made, made - ok, "" if final is None else final.strip(), turns


def _error_of(message: dict[str, Any], content: Any, text: str) -> str | None:
    if message.get("is_error") is True or message.get("status") == "error":
        return text or "error"
    if isinstance(content, dict):
        return str(content["error"]) if "error" in content and _is_set(content["error"]) else None
    if is_error_text(text):
        return text
    return None


def _ids(calls: list[list[Any]], start: int) -> dict[str, int]:
    """The calls of the last turn (from ``start``) by id (the last of two with one id wins)."""
    return {calls[i][6]: i for i in range(start, len(calls)) if calls[i][6] is not None}


def _attach(message: dict[str, Any], calls: list[list[Any]], pending: list[int], by_id: dict[str, int] | None) -> None:
    """Attach a tool message to its call: by ``tool_call_id``, else the oldest call still waiting."""
    call_id = message.get("tool_call_id")
    index = by_id.pop(call_id, None) if by_id is not None and isinstance(call_id, str) else None
    if index is not None:
        if index in pending:  # else it was answered in order already: this result replaces that one
            pending.remove(index)
    elif pending:
        index = pending.pop(0)
    else:
        return
    content = message.get("content")
    text = content if type(content) is str else message_text(content)
    error = _error_of(message, content, text)
    calls[index][2:4] = None if error else text, error


def _calls_made(structured: Any, text: str, turn: int) -> tuple[list[list[Any]], str]:
    """The calls of an assistant message (its ``tool_calls``, else its ``<tool_call>`` blocks) and its text."""
    if isinstance(structured, dict):
        structured = [structured]
    if isinstance(structured, (list, tuple)) and structured:
        return structured_calls(structured, turn), text
    calls, text = text_calls(text, turn)
    return [list(c) for c in calls], text


def read_rollout(items: list[Any]) -> tuple[tuple[ToolCall, ...], str, int]:
    """``(calls with their results, final message, turns)`` of a rollout's raw messages (non-dict items are
    replaced in ``items`` by the assistant message they stand for).

    >>> calls, final, turns = read_rollout([{"role": "assistant", "tool_calls": [{"name": "f", "id": "c1"}]},
    ...                                     {"role": "tool", "tool_call_id": "c1", "content": "1"}])
    >>> [(c.name, c.result) for c in calls], final, turns
    ([('f', '1')], '', 1)
    """
    calls: list[list[Any]] = []  # the fields of each call, filled in place as results come back
    pending: list[int] = []  # calls of the last assistant turn still waiting for a result, oldest first
    by_id: dict[str, int] | None = None  # those calls by id, built once a result names one
    start = turns = 0
    final: str | None = None
    for position, raw in enumerate(items):
        if not isinstance(raw, dict):
            raw = items[position] = {"role": "assistant", "content": message_text(raw)}
        role = raw.get("role", "assistant")
        if role == "tool":
            final = None
            if by_id is None and isinstance(raw.get("tool_call_id"), str):
                by_id = _ids(calls, start)
            _attach(raw, calls, pending, by_id)
        elif role == "assistant":
            final = message_text(raw.get("content"))
            structured = raw.get("tool_calls")
            pending, by_id, start = [], None, len(calls)  # calls a later turn did not wait for never get a result
            if structured or TOOL_CALL_OPEN in final:
                new, final = _calls_made(structured, final, turns)
                calls += new
                pending = list(range(start, len(calls)))
            turns += 1
    return tuple(map(_as_call, calls)), "" if final is None else final.strip(), turns


def rollout_messages(items: list[Any], calls: tuple[ToolCall, ...]) -> tuple[Message, ...]:
    """The messages of a rollout :func:`read_rollout` read, each assistant message with the calls it made."""
    out: list[Message] = []
    made = iter(calls)
    call = next(made, None)
    turn = 0
    for raw in items:
        role = raw.get("role", "assistant")
        text = message_text(raw.get("content"))
        if role == "tool":
            name = raw.get("name")
            out.append(_new(Message, ("tool", text, (), name if isinstance(name, str) else None)))
        elif role == "assistant":
            own: list[ToolCall] = []
            while call is not None and call.turn == turn:  # calls are in order of their turns
                own.append(call)
                call = next(made, None)
            structured = raw.get("tool_calls")
            if (structured or TOOL_CALL_OPEN in text) and not (type(structured) is list and structured):
                text = _calls_made(structured, text, turn)[1]  # the text without its <tool_call> blocks
            out.append(_new(Message, ("assistant", text, tuple(own), None)))
            turn += 1
        else:
            out.append(Message(str(role), text))
    return tuple(out)
