"""Trajectories: a completion that is a whole rollout (tool calls, tool results, a final answer), in one form.

A completion may come as TRL's conversational completion after its tool loop
(assistant messages with ``tool_calls``, ``{"role": "tool", ...}`` results),
as OpenAI-style messages (``tool_calls`` with JSON-string arguments and
``tool_call_id`` on the results), or as text holding
``<tool_call>{json}</tool_call>`` blocks. :func:`trajectory` reads any of
them into one :class:`Trajectory`, so no reward parses shapes itself.

Calls are read where a runtime reads them: the structured ``tool_calls`` of a
message when it has them, else the ``<tool_call>`` blocks of its text outside
the reasoning (``<think>...</think>``). A call with two different names (a
nested ``function.name`` and a top-level ``name``), no name, or arguments that
are not a JSON object is kept, marked malformed. What the model answers is its
:attr:`Trajectory.final_message`: the last assistant message after the last
tool result; text in tool arguments or copied from tool results is not an answer.
"""

from __future__ import annotations

import contextlib
import json
import math
import operator
import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = [
    "Message",
    "ToolCall",
    "Trajectory",
    "batch_trajectories",
    "is_trajectory",
    "read_call",
    "strict_json",
    "trajectory",
]

_OPEN, _CLOSE = "<tool_call>", "</tool_call>"
_ERROR_TEXT = re.compile(r"""\A\s*\{\s*['"]error['"]\s*:""")
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


class Message(NamedTuple):
    """One message of a trajectory: ``role``, text ``content``, the ``calls`` it makes (with what came back), a
    tool's ``name``."""

    role: str
    content: str
    calls: tuple[ToolCall, ...] = ()
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Trajectory:
    """A rollout in one form: its messages, its calls in order (with results), its final message and turns.

    >>> t = trajectory([
    ...     {"role": "assistant", "content": "", "tool_calls": [
    ...         {"type": "function", "function": {"name": "add", "arguments": {"a": 2, "b": 2}}}]},
    ...     {"role": "tool", "name": "add", "content": "4"},
    ...     {"role": "assistant", "content": "<answer>4</answer>"},
    ... ])
    >>> [(c.name, c.arguments, c.result) for c in t.calls], t.final_message, t.turns
    ([('add', {'a': 2, 'b': 2}, '4')], '<answer>4</answer>', 2)
    """

    messages: tuple[Message, ...]
    calls: tuple[ToolCall, ...]
    final_message: str
    turns: int

    @property
    def failed_calls(self) -> int:
        """Calls that are malformed, got an error back, or never ran."""
        return sum(1 for c in self.calls if not c.ok)


def is_trajectory(completion: Any) -> bool:
    """Whether a conversational completion spans more than one message (tool results, several turns).

    >>> is_trajectory([{"role": "assistant", "content": "4"}]), is_trajectory("4")
    (False, False)
    """
    return isinstance(completion, (list, tuple)) and sum(1 for m in completion if isinstance(m, dict)) > 1


def _text(content: Any) -> str:
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


def _text_calls(text: str, turn: int) -> tuple[list[ToolCall], str]:
    """The ``<tool_call>`` blocks of ``text`` (outside the reasoning) and the text without them."""
    visible = _outside_reasoning(text)
    if _OPEN not in visible:
        return [], text
    calls: list[ToolCall] = []
    kept: list[str] = [text[: len(text) - len(visible)]]
    position = 0
    while True:
        start = visible.find(_OPEN, position)
        end = visible.find(_CLOSE, start + len(_OPEN)) if start != -1 else -1
        if end == -1 or len(calls) >= MAX_CALLS_PER_MESSAGE:  # past the cap, the rest is counted, not read
            extra = visible.count(_OPEN, position) if end != -1 else 0
            kept.append(visible[position:])
            break
        kept.append(visible[position:start])
        position = end + len(_CLOSE)
        block = visible[start + len(_OPEN) : end].strip()
        parsed = _json(block)
        items = parsed if isinstance(parsed, list) else [block if parsed is _NOT_JSON else parsed]
        calls += [read_call(item, turn) for item in items]
    return _capped(calls, turn, extra), "".join(kept)


def _capped(calls: list[ToolCall], turn: int, extra: int = 0) -> list[ToolCall]:
    """At most :data:`MAX_CALLS_PER_MESSAGE` calls, and one malformed call standing for the rest."""
    extra += max(0, len(calls) - MAX_CALLS_PER_MESSAGE)
    if not extra:
        return calls
    too_many = ToolCall(
        None, None, malformed=f"{extra} more calls in one message than the {MAX_CALLS_PER_MESSAGE} read", turn=turn
    )
    return [*calls[:MAX_CALLS_PER_MESSAGE], too_many]


#: Builds a named tuple from a tuple of all its fields, without the generated ``__new__``'s keyword handling.
_new = tuple.__new__


def _error_of(message: dict[str, Any], content: Any, text: str) -> str | None:
    if "is_error" not in message and "status" not in message and type(content) is str:  # the common case
        return text if _ERROR_TEXT.match(text) else None
    if message.get("is_error") is True or message.get("status") == "error":
        return text or "error"
    if isinstance(content, dict) and "error" in content:
        return str(content["error"])
    if _ERROR_TEXT.match(text):
        return text
    return None


def _result_message(message: dict[str, Any], pending: deque, by_id: dict[str, int], calls: list) -> Message:
    """Attach a tool message to its call: by ``tool_call_id``, else the oldest call still waiting."""
    content = message.get("content")
    text = content if type(content) is str else _text(content)
    index = by_id.pop(message["tool_call_id"], None) if isinstance(message.get("tool_call_id"), str) else None
    if index is not None:
        with contextlib.suppress(ValueError):
            pending.remove(index)
    elif pending:
        index = pending.popleft()
    if index is not None:
        error = _error_of(message, content, text)
        call = calls[index]
        calls[index] = _new(ToolCall, (call[0], call[1], None if error else text, error, call[4], call[5], call[6]))
    name = message.get("name")
    return _new(Message, ("tool", text, (), name if isinstance(name, str) else None))


def _fast_call(raw: Any, turn: int) -> ToolCall:
    """A call in TRL's parsed shape (``{"type": "function", "function": {"name": str, "arguments": dict}}``)
    built without the general reader; any other shape goes to :func:`read_call`."""
    inner = raw.get("function") if type(raw) is dict else None
    if type(inner) is dict and "name" not in raw:
        name, arguments = inner.get("name"), inner.get("arguments")
        if type(name) is str and type(arguments) is dict and name.strip():
            call_id = raw.get("id")
            return _new(ToolCall, (name, arguments, None, None, None, turn, call_id if type(call_id) is str else None))
    return read_call(raw, turn)


def _assistant_message(message: dict[str, Any], turn: int) -> tuple[Message, list[ToolCall]]:
    content = message.get("content")
    text = content if type(content) is str else _text(content)
    structured = message.get("tool_calls")
    if not structured and _OPEN not in text:  # no calls: the common final message
        return _new(Message, ("assistant", text, (), None)), []
    if isinstance(structured, dict):
        structured = [structured]
    if isinstance(structured, (list, tuple)) and structured:
        calls = [_fast_call(raw, turn) for raw in structured[: MAX_CALLS_PER_MESSAGE + 1]]
        if len(structured) > MAX_CALLS_PER_MESSAGE:
            calls = _capped(calls, turn, len(structured) - MAX_CALLS_PER_MESSAGE - 1)
    else:
        calls, text = _text_calls(text, turn)
    return Message("assistant", text, tuple(calls)), calls


def trajectory(completion: Any) -> Trajectory:
    """A completion (text, one message, or a list of messages) as a :class:`Trajectory`.

    Results attach to calls by ``tool_call_id`` or, as TRL sends them, in
    order. A tool result whose text is ``{'error': ...}`` (what TRL writes
    when a tool raises) or a message marked ``is_error`` is an error.

    >>> t = trajectory('<think><tool_call>{"name": "rm", "arguments": {}}</tool_call></think>'
    ...                '<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>')
    >>> [c.name for c in t.calls], t.calls[0].executed
    (['add'], False)
    """
    if isinstance(completion, str) or completion is None:
        raw_messages: list[Any] = [{"role": "assistant", "content": completion or ""}]
    elif isinstance(completion, dict):
        raw_messages = [completion]
    else:
        raw_messages = list(completion) if isinstance(completion, (list, tuple)) else [str(completion)]
    messages: list[Message] = []
    calls: list[ToolCall] = []
    pending: deque[int] = deque()
    by_id: dict[str, int] = {}
    made_at: list[tuple[int, int]] = []
    turns = 0
    final_index = -1
    for raw in raw_messages:
        if not isinstance(raw, dict):
            raw = {"role": "assistant", "content": _text(raw)}
        role = raw.get("role", "assistant")
        if role == "tool":
            messages.append(_result_message(raw, pending, by_id, calls))
            final_index = -1
        elif role == "assistant":
            message, made = _assistant_message(raw, turns)
            if made:
                made_at.append((len(messages), len(calls)))
            pending.clear()  # calls a later turn did not wait for never get a result
            by_id.clear()
            for call in made:
                if call.id is not None:
                    by_id[call.id] = len(calls)
                pending.append(len(calls))
                calls.append(call)
            turns += 1
            messages.append(message)
            final_index = len(messages) - 1
        else:
            messages.append(Message(str(role), _text(raw.get("content"))))
    for position, start in made_at:  # the calls of each message, now with what came back
        message = messages[position]
        made = tuple(calls[start : start + len(message[2])])
        messages[position] = _new(Message, (message[0], message[1], made, None))
    final = messages[final_index].content.strip() if final_index >= 0 else ""
    return Trajectory(tuple(messages), tuple(calls), final, turns)


#: The last batch read with a step key: ``(key, its completions, their trajectories)``.
_last_batch: tuple[Any, list[Any], list[Trajectory]] | None = None


def batch_trajectories(completions: Sequence[Any], step: Any = None) -> list[Trajectory]:
    """Each completion as a :class:`Trajectory`; the rewards of one training step share them.

    ``step`` identifies the training step (TRL's trainer state and its
    ``global_step``); a second reward called in the same step with the same
    completion objects gets the trajectories already read, so each rollout is
    read once per step, not once per reward. Without ``step``, nothing is shared.

    >>> rollouts = [[{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}]]
    >>> first = batch_trajectories(rollouts, step=("run", 1))
    >>> batch_trajectories(rollouts, step=("run", 1))[0] is first[0], batch_trajectories(rollouts)[0] is first[0]
    (True, False)
    """
    global _last_batch
    last = _last_batch
    same = step is not None and last is not None and last[0] == step and len(last[1]) == len(completions)
    if same and all(map(operator.is_, last[1], completions)):  # type: ignore[index]
        return list(last[2])  # type: ignore[index]
    out = [trajectory(c) for c in completions]
    if step is not None:
        _last_batch = (step, list(completions), out)
    return list(out)
