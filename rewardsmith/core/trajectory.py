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

import operator
from collections.abc import Sequence
from typing import Any

from rewardsmith.core.tool_calls import MAX_CALLS_PER_MESSAGE, ToolCall, read_call, strict_json
from rewardsmith.core.trajectory_read import Message, count_rollout, read_rollout, rollout_items, rollout_messages

__all__ = [
    "MAX_CALLS_PER_MESSAGE",
    "Message",
    "ToolCall",
    "Trajectory",
    "batch_trajectories",
    "call_counts",
    "is_trajectory",
    "read_call",
    "strict_json",
    "tool_use_counts",
    "trajectory",
]

_blank = object.__new__


class Trajectory:
    """A rollout in one form: its messages, its calls in order (with results), its final message and turns.

    Immutable. One read by :func:`trajectory` reads what a reward asks for:
    the number of calls, of failed calls, the final message and the turns
    come from one pass; the calls and messages are built when first asked for.

    >>> t = trajectory([
    ...     {"role": "assistant", "content": "", "tool_calls": [
    ...         {"type": "function", "function": {"name": "add", "arguments": {"a": 2, "b": 2}}}]},
    ...     {"role": "tool", "name": "add", "content": "4"},
    ...     {"role": "assistant", "content": "<answer>4</answer>"},
    ... ])
    >>> t.call_count, t.failed_calls, t.final_message, t.turns
    (1, 0, '<answer>4</answer>', 2)
    >>> [(c.name, c.arguments, c.result) for c in t.calls]
    [('add', {'a': 2, 'b': 2}, '4')]
    >>> t == Trajectory(t.messages, t.calls, t.final_message, t.turns)
    True
    """

    #: ``_counts``: (calls, failed calls, final message, turns); ``_calls`` is ``None`` until the calls are asked for.
    __slots__ = ("_calls", "_counts", "_messages", "_source")

    def __init__(self, messages: Sequence[Message], calls: Sequence[ToolCall], final_message: str, turns: int) -> None:
        self._source, self._messages, self._calls = None, tuple(messages), tuple(calls)
        self._counts = _counts(self._calls, final_message, turns)

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        """Every call, in the order made, each with its result or error (or neither, if it never ran)."""
        if self._calls is None:
            self._calls = read_rollout(self._source)[0]
        return self._calls

    @property
    def messages(self) -> tuple[Message, ...]:
        """Every message: role, text (``<tool_call>`` blocks taken out), the calls it made with what came back."""
        if self._messages is None:
            self._messages = rollout_messages(self._source, self.calls)  # type: ignore[arg-type]
            self._source = None
        return self._messages

    @property
    def call_count(self) -> int:
        """How many calls the rollout made (``len(calls)``, without building them)."""
        return self._counts[0]

    @property
    def failed_calls(self) -> int:
        """Calls that are malformed, got an error back, or never ran."""
        return self._counts[1]

    @property
    def final_message(self) -> str:
        """The last assistant message after the last tool result (stripped); ``""`` if the rollout ends on one."""
        return self._counts[2]

    @property
    def turns(self) -> int:
        """Assistant messages."""
        return self._counts[3]

    def _fields(self) -> tuple[Any, ...]:
        return (self.messages, self.calls, self._counts[2], self._counts[3])

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


def trajectory(completion: Any) -> Trajectory:
    """A completion (text, one message, or a list of messages) as a :class:`Trajectory`.

    Results attach to calls by ``tool_call_id`` or, as TRL sends them, in
    order. A tool result whose text is ``{'error': ...}`` (what TRL writes
    when a tool raises) or a message marked ``is_error`` is an error. Reading
    is linear in the rollout; in TRL's shape the calls are built only when
    asked for.

    >>> t = trajectory('<think><tool_call>{"name": "rm", "arguments": {}}</tool_call></think>'
    ...                '<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>')
    >>> [c.name for c in t.calls], t.calls[0].executed
    (['add'], False)
    """
    items = list(completion) if type(completion) is list else rollout_items(completion)
    out = _blank(Trajectory)
    out._source, out._messages, out._calls = items, None, None
    counted = count_rollout(items)
    if counted is None:
        calls, final, turns = read_rollout(items)
        out._calls, counted = calls, _counts(calls, final, turns)
    out._counts = counted
    return out


def _counts(calls: tuple[ToolCall, ...], final: str, turns: int) -> tuple[int, int, str, int]:
    return len(calls), sum(1 for c in calls if not c.ok), final, turns


_counts_of, _count_of, _failed_of = operator.attrgetter("_counts"), operator.itemgetter(0), operator.itemgetter(1)


def call_counts(trajectories: Sequence[Trajectory]) -> tuple[list[int], list[int]]:
    """The calls and the failed calls of each trajectory (read in one go, without building a call).

    >>> call_counts([trajectory('<tool_call>{"name": "f"}</tool_call>'), trajectory("no calls")])
    ([1, 0], [1, 0])
    """
    counts = list(map(_counts_of, trajectories))
    return list(map(_count_of, counts)), list(map(_failed_of, counts))


def tool_use_counts(trajectories: Sequence[Trajectory]) -> tuple[int, int, int]:
    """Calls, failed calls, and rollouts without calls, over a batch of trajectories.

    >>> tool_use_counts([trajectory('<tool_call>{"name": "f"}</tool_call>'), trajectory("no calls")])
    (1, 1, 1)
    """
    made, failed = call_counts(trajectories)
    return sum(made), sum(failed), made.count(0)


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
