"""Input normalisation: one batch of TRL reward arguments, in every shape TRL sends.

TRL calls a reward function with ``prompts``, ``completions``,
``completion_ids`` and every dataset column as keyword arguments (one value per
completion), plus ``trainer_state``, ``log_metric`` and ``log_extra``.
Prompts and completions are plain strings for standard datasets and lists of
chat messages for conversational ones. :class:`Batch` holds one such call and
answers the questions every reward asks (the completion's text, the prompt as
messages, a column's values), so no reward repeats this logic.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from functools import cached_property
from itertools import repeat
from typing import Any

from rewardsmith.core.errors import MissingColumnError, RewardConfigError
from rewardsmith.core.tool_calls import TOOL_CALL_OPEN, message_text, text_calls
from rewardsmith.core.trajectory import Trajectory, batch_trajectories, tool_use_counts, trajectory

__all__ = [
    "RESERVED_KWARGS",
    "Batch",
    "as_messages",
    "completion_text",
    "content_text",
    "prompt_text",
    "said_text",
]

#: Keyword arguments TRL passes that are not dataset columns.
RESERVED_KWARGS = frozenset({"trainer_state", "log_metric", "log_extra", "environments"})


def content_text(content: Any) -> str:
    """The text of a message's ``content``: a string, a list of parts, or ``None``.

    Only text parts count: a ``reasoning`` or ``thinking`` part is not what the message says.

    >>> content_text([{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}])
    'ab'
    >>> content_text([{"type": "reasoning", "text": "#### 18"}, {"type": "text", "text": "no idea"}])
    'no idea'
    >>> content_text(None)
    ''
    """
    return message_text(content)


def said_text(text: str) -> str:
    """What a message's text says, its ``<tool_call>`` blocks (outside the reasoning) taken out.

    A call's arguments are not an answer, whether the completion is one
    message, plain text or a whole rollout.

    >>> said_text('<tool_call>{"name": "submit", "arguments": {"answer": "#### 18"}}</tool_call>')
    ''
    >>> said_text("<think>draft</think>#### 18")
    '<think>draft</think>#### 18'
    """
    return text_calls(text, 0)[1] if TOOL_CALL_OPEN in text else text


def _is_message(obj: Any) -> bool:
    return isinstance(obj, dict) and ("content" in obj or "role" in obj or "tool_calls" in obj)


def completion_text(completion: Any, on: str = "final") -> str:
    """The text of one completion, plain or conversational.

    A conversational completion is a list of messages. One message: its
    content. A trajectory (tool calls and results, several turns): its final
    message (see :mod:`rewardsmith.core.trajectory`), or with ``on="all"``
    the text of every assistant message, joined by newlines. Tool-call
    arguments and tool results are never part of it, in any shape: the
    ``<tool_call>`` blocks of plain text or of one message are taken out too
    (:func:`said_text`).

    >>> completion_text("<answer>4</answer>")
    '<answer>4</answer>'
    >>> completion_text('<tool_call>{"name": "submit", "arguments": {"answer": "#### 18"}}</tool_call>')
    ''
    >>> rollout = [{"role": "assistant", 'content': '<tool_call>{"name": "add"}</tool_call>'},
    ...            {"role": "tool", "content": "4"}, {"role": "assistant", "content": "<answer>4</answer>"}]
    >>> completion_text(rollout), completion_text(rollout, on="all")
    ('<answer>4</answer>', '\\n<answer>4</answer>')
    >>> completion_text(None)
    ''
    """
    if isinstance(completion, str):
        return said_text(completion)
    if completion is None:
        return ""
    if _is_message(completion):
        return said_text(content_text(completion.get("content")))
    if isinstance(completion, (list, tuple)):
        messages = [m for m in completion if _is_message(m)]
        if len(messages) == 1:
            return said_text(content_text(messages[0].get("content")))
        if not messages:
            return ""
        rollout = trajectory(messages)
        if on == "final":
            return rollout.final_message
        return "\n".join(m.content for m in rollout.messages if m.role == "assistant")
    return str(completion)


def prompt_text(prompt: Any) -> str:
    """The text of a prompt: the string itself, or the last user message of a conversation.

    >>> prompt_text([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}])
    '2+2?'
    """
    if not isinstance(prompt, (list, tuple)):
        return message_text(prompt)  # a string, None or anything else reads as a message's content does
    messages = [m for m in prompt if _is_message(m)]
    for message in reversed(messages):
        if message.get("role") == "user":
            return content_text(message.get("content"))
    return content_text(messages[-1].get("content")) if messages else ""


def as_messages(value: Any, role: str) -> list[dict[str, Any]]:
    """A prompt or completion as a list of chat messages (a string becomes one message of ``role``).

    >>> as_messages("hi", "user")
    [{'role': 'user', 'content': 'hi'}]
    >>> as_messages(None, "user")
    []
    """
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [{"role": role, "content": value}]
    if _is_message(value):
        return [dict(value)]
    if isinstance(value, (list, tuple)):
        return [dict(m) for m in value if _is_message(m)]
    return [{"role": role, "content": str(value)}]


def _is_column(value: Any) -> bool:
    return (isinstance(value, Sequence) and not isinstance(value, (str, bytes))) or (
        hasattr(value, "__len__") and hasattr(value, "__getitem__") and not isinstance(value, (str, bytes, dict))
    )


class Batch:
    """One call's worth of reward inputs.

    >>> batch = Batch.from_call(["2+2?"], ["<answer>4</answer>"], None, {"answer": ["4"], "log_metric": print})
    >>> len(batch), batch.texts, batch.column("answer")
    (1, ['<answer>4</answer>'], ['4'])
    >>> batch.messages(0)
    [{'role': 'user', 'content': '2+2?'}, {'role': 'assistant', 'content': '<answer>4</answer>'}]
    """

    def __init__(
        self,
        prompts: list[Any] | None,
        completions: list[Any],
        completion_ids: list[Any] | None,
        raw_columns: dict[str, Any],
        extras: dict[str, Any],
    ) -> None:
        self.prompts = prompts
        self.completions = completions
        self.completion_ids = completion_ids
        self.raw_columns = raw_columns
        self.extras = extras
        self.n = len(completions)
        #: Names of the columns read with :meth:`column` (shared with subsets), to check what a reward reads.
        self.columns_read: set[str] = set()

    @classmethod
    def from_call(
        cls,
        prompts: Any,
        completions: Any,
        completion_ids: Any,
        kwargs: dict[str, Any],
        reward_name: str = "reward",
    ) -> Batch:
        """Build a batch from a TRL-style call, checking what can be checked cheaply."""
        if completions is None:
            raise RewardConfigError(
                f"reward {reward_name!r} was called without completions; call it like TRL does, "
                "reward(prompts=[...], completions=[...], **columns), or use reward.check(completion, **columns) "
                "to score a single completion"
            )
        if isinstance(completions, str) or not _is_column(completions):
            raise RewardConfigError(
                f"reward {reward_name!r} expects a list of completions, got {type(completions).__name__}; "
                "use reward.check(completion, **columns) to score a single completion"
            )
        completions = list(completions)
        n = len(completions)
        if prompts is not None:
            if isinstance(prompts, str) or not _is_column(prompts):
                raise RewardConfigError(
                    f"reward {reward_name!r} expects a list of prompts (one per completion), "
                    f"got {type(prompts).__name__}"
                )
            prompts = list(prompts)
            if len(prompts) != n:
                raise RewardConfigError(
                    f"reward {reward_name!r} got {len(prompts)} prompts for {n} completions; "
                    "pass one prompt per completion (repeat a prompt for each of its completions)"
                )
        if completion_ids is not None:
            completion_ids = list(completion_ids)
            if len(completion_ids) != n:
                raise RewardConfigError(
                    f"reward {reward_name!r} got {len(completion_ids)} completion_ids for {n} completions"
                )
        columns: dict[str, Any] = {}
        extras: dict[str, Any] = {}
        for key, value in kwargs.items():
            if key in RESERVED_KWARGS or not _is_column(value):
                extras[key] = value
            else:
                columns[key] = value
        return cls(prompts, completions, completion_ids, columns, extras)

    def __len__(self) -> int:
        return self.n

    @cached_property
    def texts(self) -> list[str]:
        """The text of each completion."""
        completions = self.completions
        if not completions:
            return []
        # The two shapes TRL sends are checked once for the whole batch (C-level
        # map/set), so the common case costs no Python call per completion.
        kinds = set(map(type, completions))
        texts = None
        if kinds == {str}:
            texts = list(completions)
        elif kinds == {list} and set(map(len, completions)) == {1}:
            try:
                texts = [c[0]["content"] for c in completions]
            except (KeyError, TypeError, IndexError):
                texts = None
            if texts is not None and set(map(type, texts)) != {str}:
                texts = None
        if texts is not None and not any(map(operator.contains, texts, repeat(TOOL_CALL_OPEN))):
            return texts
        return [completion_text(c) for c in completions]

    @cached_property
    def all_texts(self) -> list[str]:
        """The text of every assistant message of each completion (``on="all"``), not only the final one."""
        return [completion_text(c, on="all") for c in self.completions]

    @cached_property
    def trajectories(self) -> list[Trajectory]:
        """Each completion as a :class:`~rewardsmith.core.trajectory.Trajectory` (calls, results, final message).

        Under TRL, the batch's tool-use health is logged with them: ``trajectory/calls_per_rollout``,
        ``trajectory/failed_call_share`` (of all calls) and ``trajectory/no_call_share`` (of rollouts).
        """
        state = self.trainer_state  # under TRL, the rewards of one step read each rollout once
        step = None if state is None else (id(state), getattr(state, "global_step", None))
        out = batch_trajectories(self.completions, step)
        log = self.log_metric
        if callable(log) and out:
            calls, failed, without = tool_use_counts(out)
            log("trajectory/calls_per_rollout", calls / len(out))
            log("trajectory/no_call_share", without / len(out))
            if calls:
                log("trajectory/failed_call_share", failed / calls)
        return out

    @property
    def environments(self) -> list[Any]:
        """The rollouts' environment instances TRL passes as ``environments`` (``None`` for each row without)."""
        given = self.extras.get("environments")
        if given is None or isinstance(given, (str, bytes)) or not _is_column(given) or len(given) != self.n:
            return [None] * self.n
        return list(given)

    @cached_property
    def prompt_texts(self) -> list[str]:
        """The text of each prompt (the last user message for conversations)."""
        if self.prompts is None:
            return [""] * self.n
        return [p if type(p) is str else prompt_text(p) for p in self.prompts]

    def prompt_messages(self, i: int) -> list[dict[str, Any]]:
        """Prompt ``i`` as chat messages."""
        return as_messages(None if self.prompts is None else self.prompts[i], "user")

    def completion_messages(self, i: int) -> list[dict[str, Any]]:
        """Completion ``i`` as chat messages."""
        return as_messages(self.completions[i], "assistant")

    def messages(self, i: int) -> list[dict[str, Any]]:
        """Prompt and completion ``i`` as one conversation."""
        return self.prompt_messages(i) + self.completion_messages(i)

    @property
    def conversational(self) -> bool:
        """Whether the completions are chat messages rather than strings."""
        return bool(self.completions) and not isinstance(self.completions[0], str)

    @property
    def column_names(self) -> list[str]:
        """Names of the dataset columns in this batch."""
        return list(self.raw_columns)

    def has_column(self, name: str) -> bool:
        """Whether column ``name`` was passed (as a list)."""
        return name in self.raw_columns

    def column(self, name: str, reward_name: str = "reward") -> list[Any]:
        """The values of column ``name``, one per completion.

        Raises :class:`MissingColumnError` naming the reward and listing the
        columns that are there when the column is absent, and a config error
        when its length does not match the batch.
        """
        if name not in self.raw_columns:
            raise self.missing_column_error(name, reward_name)
        self.columns_read.add(name)
        values = self.raw_columns[name]
        if len(values) != self.n:
            raise RewardConfigError(
                f"reward {reward_name!r}: column {name!r} has {len(values)} values for {self.n} completions; "
                "pass one value per completion"
            )
        if not isinstance(values, list):
            values = values.tolist() if hasattr(values, "tolist") else list(values)
            self.raw_columns[name] = values
        return values

    def missing_column_error(self, name: str, reward_name: str, fallbacks: Sequence[str] = ()) -> MissingColumnError:
        """The error for a needed column (which ``fallbacks`` could stand in for) that is not in the batch."""
        have = ", ".join(sorted(self.raw_columns)) or "none"
        hint = ""
        if name in self.extras and name not in RESERVED_KWARGS:
            hint = f" ({name!r} was passed as a single value; columns are lists with one value per completion)"
        alternatives = f" (or {', '.join(map(repr, fallbacks))})" if fallbacks else ""
        return MissingColumnError(
            f"reward {reward_name!r} needs the dataset column {name!r}{alternatives}, which this batch does not "
            f"have{hint}. Columns present: {have}. Add the column to the dataset, rename an existing one to "
            f"{name!r}, or give the reward a default for it."
        )

    @property
    def log_metric(self) -> Any:
        """TRL's ``log_metric(name, value)`` callback, or ``None`` outside TRL."""
        return self.extras.get("log_metric")

    @property
    def trainer_state(self) -> Any:
        """TRL's ``TrainerState`` (``None`` outside TRL)."""
        return self.extras.get("trainer_state")

    def subset(self, indices: Sequence[int]) -> Batch:
        """A batch of the given rows only (same extras)."""
        take = list(indices)
        extras = self.extras
        environments = extras.get("environments")
        if environments is not None and _is_column(environments) and len(environments) == self.n:
            extras = {**extras, "environments": [environments[i] for i in take]}
        part = Batch(
            None if self.prompts is None else [self.prompts[i] for i in take],
            [self.completions[i] for i in take],
            None if self.completion_ids is None else [self.completion_ids[i] for i in take],
            {k: [v[i] for i in take] for k, v in self.raw_columns.items() if len(v) == self.n},
            extras,
        )
        part.columns_read = self.columns_read
        return part

    def kwargs(self) -> dict[str, Any]:
        """The batch as TRL keyword arguments again (columns and extras)."""
        return {**self.raw_columns, **self.extras}
