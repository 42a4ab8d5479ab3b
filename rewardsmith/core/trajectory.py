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

import functools
import operator
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from rewardsmith.core.tool_calls import (
    _OPEN,
    MAX_CALLS_PER_MESSAGE,
    ToolCall,
    message_text,
    read_call,
    strict_json,
    structured_calls,
    text_calls,
)

__all__ = [
    "MAX_CALLS_PER_MESSAGE",
    "Message",
    "ToolCall",
    "Trajectory",
    "batch_trajectories",
    "is_trajectory",
    "read_call",
    "strict_json",
    "tool_use_counts",
    "trajectory",
]

_ERROR_TEXT = re.compile(r"""\A\s*\{\s*['"]error['"]\s*:""")
_is_error_text = _ERROR_TEXT.match
#: Builds a named tuple from an iterable of all its fields, without the generated ``__new__``'s keyword handling.
_new = tuple.__new__
_blank = object.__new__


class Message(NamedTuple):
    """One message of a trajectory: ``role``, text ``content``, the ``calls`` it makes (with what came back), a
    tool's ``name``."""

    role: str
    content: str
    calls: tuple[ToolCall, ...] = ()
    name: str | None = None


class Trajectory:
    """A rollout in one form: its messages, its calls in order (with results), its final message and turns.

    Immutable. A trajectory read by :func:`trajectory` reads its calls, final
    message and turns in one pass over the rollout, and builds its
    :attr:`messages` only when they are asked for.

    >>> t = trajectory([
    ...     {"role": "assistant", "content": "", "tool_calls": [
    ...         {"type": "function", "function": {"name": "add", "arguments": {"a": 2, "b": 2}}}]},
    ...     {"role": "tool", "name": "add", "content": "4"},
    ...     {"role": "assistant", "content": "<answer>4</answer>"},
    ... ])
    >>> [(c.name, c.arguments, c.result) for c in t.calls], t.final_message, t.turns
    ([('add', {'a': 2, 'b': 2}, '4')], '<answer>4</answer>', 2)
    >>> t == Trajectory(t.messages, t.calls, t.final_message, t.turns)
    True
    """

    __slots__ = ("_calls", "_failed", "_final", "_made", "_messages", "_source", "_turns")

    def __init__(self, messages: Sequence[Message], calls: Sequence[ToolCall], final_message: str, turns: int) -> None:
        self._messages = tuple(messages)
        self._calls = tuple(calls)
        self._final = final_message
        self._turns = turns
        self._failed = sum(1 for c in self._calls if not c.ok)
        self._source = self._made = None

    @property
    def messages(self) -> tuple[Message, ...]:
        """Every message: role, text (``<tool_call>`` blocks taken out), the calls it made with what came back."""
        if self._messages is None:
            self._messages = _messages(self._source, self._calls, self._made)
            self._source = self._made = None
        return self._messages

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        """Every call, in the order made, each with its result or error (or neither, if it never ran)."""
        return self._calls

    @property
    def final_message(self) -> str:
        """The last assistant message after the last tool result (stripped); ``""`` if the rollout ends on one."""
        return self._final

    @property
    def turns(self) -> int:
        """Assistant messages."""
        return self._turns

    @property
    def failed_calls(self) -> int:
        """Calls that are malformed, got an error back, or never ran."""
        return self._failed

    def _fields(self) -> tuple[Any, ...]:
        return (self.messages, self._calls, self._final, self._turns)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Trajectory:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return "Trajectory(messages={!r}, calls={!r}, final_message={!r}, turns={!r})".format(*self._fields())

    def __reduce__(self) -> tuple[Any, ...]:
        return (Trajectory, self._fields())


def is_trajectory(completion: Any) -> bool:
    """Whether a conversational completion spans more than one message (tool results, several turns).

    >>> is_trajectory([{"role": "assistant", "content": "4"}]), is_trajectory("4")
    (False, False)
    """
    return isinstance(completion, (list, tuple)) and sum(1 for m in completion if isinstance(m, dict)) > 1


def _rollout(completion: Any) -> list[Any]:
    """A completion as a list of raw messages (a new list: the reader replaces non-dict items in it)."""
    if isinstance(completion, str) or completion is None:
        return [{"role": "assistant", "content": completion or ""}]
    if isinstance(completion, dict):
        return [completion]
    return list(completion) if isinstance(completion, (list, tuple)) else [str(completion)]


def _error_of(message: dict[str, Any], content: Any, text: str) -> str | None:
    if message.get("is_error") is True or message.get("status") == "error":
        return text or "error"
    if isinstance(content, dict) and "error" in content:
        return str(content["error"])
    if _ERROR_TEXT.match(text):
        return text
    return None


def _is_ok(fields: list[Any]) -> bool:
    return fields[4] is None and fields[2] is not None and fields[3] is None


def _ids(calls: list[list[Any]], start: int) -> dict[str, int]:
    """The calls of the last turn (from ``start``) by id (the last of two with one id wins), built when a result
    names an id."""
    return {calls[i][6]: i for i in range(start, len(calls)) if calls[i][6] is not None}


def _attach(message: dict[str, Any], calls: list[list[Any]], pending: list[int], by_id: dict[str, int] | None) -> int:
    """Attach a tool message to its call (by ``tool_call_id``, else the oldest call still waiting).

    Returns the change in the number of calls that succeeded (a call answered twice by id counts once).
    """
    call_id = message.get("tool_call_id")
    index = by_id.pop(call_id, None) if by_id is not None and isinstance(call_id, str) else None
    before = 0
    if index is not None:
        try:
            pending.remove(index)
        except ValueError:  # already answered in order: this result replaces that one
            before = _is_ok(calls[index])
    elif pending:
        index = pending.pop(0)
    else:
        return 0
    content = message.get("content")
    text = content if type(content) is str else message_text(content)
    error = _error_of(message, content, text)
    fields = calls[index]
    fields[2], fields[3] = None if error else text, error
    return _is_ok(fields) - before


def _calls_made(structured: Any, text: str, turn: int) -> tuple[list[list[Any]], str]:
    """The calls of an assistant message (its ``tool_calls``, else its ``<tool_call>`` blocks) and its text."""
    if isinstance(structured, dict):
        structured = [structured]
    if isinstance(structured, (list, tuple)) and structured:
        return structured_calls(structured, turn), text
    calls, text = text_calls(text, turn)
    return [list(c) for c in calls], text


#: A :class:`ToolCall` from the list of its fields.
_as_call = functools.partial(_new, ToolCall)


def trajectory(completion: Any) -> Trajectory:
    """A completion (text, one message, or a list of messages) as a :class:`Trajectory`.

    Results attach to calls by ``tool_call_id`` or, as TRL sends them, in
    order. A tool result whose text is ``{'error': ...}`` (what TRL writes
    when a tool raises) or a message marked ``is_error`` is an error. One
    pass reads the calls, final message and turns (linear in the rollout);
    the messages are built when first asked for.

    >>> t = trajectory('<think><tool_call>{"name": "rm", "arguments": {}}</tool_call></think>'
    ...                '<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>')
    >>> [c.name for c in t.calls], t.calls[0].executed
    (['add'], False)
    """
    items = list(completion) if type(completion) is list else _rollout(completion)
    calls: list[list[Any]] = []  # the fields of each call, filled in place as results come back
    pending: list[int] = []  # calls of the last assistant turn still waiting for a result, oldest first
    by_id: dict[str, int] | None = None  # those calls by id, once a result names one
    made: list[tuple[int, int, int, str]] = []  # (message, first call, end, text) of messages with calls
    start = turns = ok = 0
    final: str | None = None
    for position, raw in enumerate(items):
        if type(raw) is not dict and not isinstance(raw, dict):
            raw = items[position] = {"role": "assistant", "content": message_text(raw)}
        role = raw.get("role", "assistant")
        if role == "tool":
            final = None
            content = raw.get("content")
            plain = type(content) is str and "is_error" not in raw and "status" not in raw
            if pending and plain and raw.get("tool_call_id") is None:  # TRL's shape: text results, in order
                fields = calls[pending.pop(0)]
                if _is_error_text(content):
                    fields[3] = content
                else:
                    fields[2] = content
                    ok += fields[4] is None
                continue
            if by_id is None and isinstance(raw.get("tool_call_id"), str):
                by_id = _ids(calls, start)
            ok += _attach(raw, calls, pending, by_id)
        elif role == "assistant":
            content = raw.get("content")
            final = content if type(content) is str else message_text(content)
            structured = raw.get("tool_calls")
            pending, by_id, start = [], None, len(calls)  # calls a later turn did not wait for never get a result
            if structured or _OPEN in final:
                if type(structured) is list and structured:
                    new = structured_calls(structured, turns)
                else:
                    new, final = _calls_made(structured, final, turns)
                made.append((position, start, start + len(new), final))
                calls += new
                pending = list(range(start, len(calls)))
            turns += 1
    out = _blank(Trajectory)
    out._calls = done = tuple(map(_as_call, calls)) if calls else ()
    out._failed, out._final, out._turns = len(done) - ok, "" if final is None else final.strip(), turns
    out._messages, out._source, out._made = None, items, made
    return out


def _messages(items: list[dict[str, Any]], calls: tuple[ToolCall, ...], made: list[Any]) -> tuple[Message, ...]:
    """The messages of a rollout read by :func:`trajectory`, each assistant message with the calls it made."""
    out: list[Message] = []
    for raw in items:
        role = raw.get("role", "assistant")
        content = raw.get("content")
        text = content if type(content) is str else message_text(content)
        if role == "tool":
            name = raw.get("name")
            out.append(_new(Message, ("tool", text, (), name if isinstance(name, str) else None)))
        elif role == "assistant":
            out.append(_new(Message, ("assistant", text, (), None)))
        else:
            out.append(Message(str(role), text))
    for position, start, end, text in made:
        out[position] = _new(Message, ("assistant", text, calls[start:end], None))
    return tuple(out)


_calls_of, _failed_of = operator.attrgetter("_calls"), operator.attrgetter("_failed")


def tool_use_counts(trajectories: Sequence[Trajectory]) -> tuple[int, int, int]:
    """Calls, failed calls, and rollouts without calls, over a batch of trajectories.

    >>> tool_use_counts([trajectory('<tool_call>{"name": "f"}</tool_call>'), trajectory("no calls")])
    (1, 1, 1)
    """
    made = list(map(len, map(_calls_of, trajectories)))
    return sum(made), sum(map(_failed_of, trajectories)), made.count(0)


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
