"""Dataset converters: one source row in, the columns TRL and the rewards read out.

A converter is a small dataclass whose fields are its settings (which source
column holds what). Its :meth:`~Converter.convert` takes one row (a dict) and
returns the columns it writes: always ``prompt`` (the user's text, or a list of
chat messages), plus what the rewards for that kind of data read (``answer``,
``nums``, ``target``, ...). Every other source column passes through unchanged,
except the ones a converter declares in ``removed_columns`` (renamed away).

Turning the ``prompt`` into what TRL takes (system message, template,
conversational or plain text) is not the converter's job: that is done once,
for every converter, in :mod:`rewardsmith.data.prompts`.

This module holds the base class and the general converters (``generic``,
``chat``, functions); :mod:`rewardsmith.data.tasks` holds the converters for
particular datasets (``gsm8k``, ``math``, ``countdown``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from rewardsmith.core.errors import DatasetError
from rewardsmith.core.inputs import content_text

__all__ = [
    "Chat",
    "Converter",
    "FireworksEval",
    "FunctionConverter",
    "Generic",
    "cell_text",
    "short_repr",
    "verl_reference",
]


@dataclass
class Converter:
    """Base class of dataset converters: subclass it as a dataclass whose fields are its settings.

    Override :meth:`convert`, and declare the columns: ``INPUT_SETTINGS`` (the
    settings naming the source columns it cannot work without), ``OUTPUT_COLUMNS``
    (what it writes; always includes ``prompt``) and, when it renames columns,
    ``removed_columns``; override the ``input_columns`` / ``output_columns``
    properties instead where they depend on settings in another way.
    Raise :class:`~rewardsmith.DatasetError` for a row it cannot convert; the
    row's number is added to the message.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Reverse(Converter):
    ...     '''The prompt asks to reverse `word`; `answer` is the word reversed.'''
    ...     INPUT_SETTINGS = ("word_key",)
    ...     OUTPUT_COLUMNS = ("prompt", "answer")
    ...     word_key: str = "word"
    ...     def convert(self, row):
    ...         return {"prompt": f"Reverse {row[self.word_key]!r}.", "answer": row[self.word_key][::-1]}
    >>> Reverse().convert({"word": "abc"})
    {'prompt': "Reverse 'abc'.", 'answer': 'cba'}
    """

    #: The settings (field names) that hold the source columns every row must have; see :attr:`input_columns`.
    INPUT_SETTINGS: ClassVar[tuple[str, ...]] = ()
    #: The columns :meth:`convert` writes, when they do not depend on settings; see :attr:`output_columns`.
    OUTPUT_COLUMNS: ClassVar[tuple[str, ...]] = ("prompt",)

    @property
    def input_columns(self) -> tuple[str, ...]:
        """Source columns every row must have (by default the values of the settings in ``INPUT_SETTINGS``)."""
        return tuple(getattr(self, setting) for setting in self.INPUT_SETTINGS)

    @property
    def output_columns(self) -> tuple[str, ...]:
        """Columns :meth:`convert` writes (``prompt`` always among them; by default ``OUTPUT_COLUMNS``)."""
        return self.OUTPUT_COLUMNS

    @property
    def removed_columns(self) -> tuple[str, ...]:
        """Source columns that do not pass through (they were renamed to an output column)."""
        return ()

    @property
    def message_columns(self) -> tuple[str, ...]:
        """Output columns (besides ``prompt``) holding chat messages; plain-text output makes them text."""
        return ()

    def missing_inputs(self, columns: Iterable[str]) -> list[str]:
        """The needed source columns that ``columns`` lacks, as words for an error message."""
        have = set(columns)
        return [repr(c) for c in self.input_columns if c not in have]

    def convert(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """The output columns for one source row."""
        raise NotImplementedError(f"{type(self).__name__} must implement convert(self, row) -> dict")

    @property
    def settings(self) -> dict[str, Any]:
        """The converter's settings and their values."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def cell_text(row: Mapping[str, Any], key: str, what: str) -> str:
    """The non-empty text in ``row[key]``, else a :class:`~rewardsmith.DatasetError` (``what`` names the column's role).

    >>> cell_text({"question": "2+2?"}, "question", "question")
    '2+2?'
    >>> cell_text({"question": ""}, "question", "question")
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.DatasetError: the question column 'question' holds '', not a non-empty text
    """
    value = row.get(key)
    if not isinstance(value, str) or not value.strip():
        raise DatasetError(f"the {what} column {key!r} holds {short_repr(value)}, not a non-empty text")
    return value


def verl_reference(row: Mapping[str, Any]) -> dict[str, Any]:
    """The reference columns a row in verl's layout (``reward_model: {style, ground_truth}``) gives.

    verl's preprocess scripts put the reference answer in
    ``reward_model["ground_truth"]``: it becomes the ``ground_truth`` column
    (what verl, TinyZero and DeepScaleR functions read) and, when it is a plain
    answer and the row has no ``answer``, the ``answer`` column (what the
    built-in accuracy rewards read). Columns the row already has win.

    >>> verl_reference({"reward_model": {"style": "rule", "ground_truth": "72"}})
    {'ground_truth': '72', 'answer': '72'}
    >>> verl_reference({"reward_model": {"ground_truth": {"target": 8, "numbers": [3, 5]}}})
    {'ground_truth': {'target': 8, 'numbers': [3, 5]}}
    >>> verl_reference({"answer": "4"})
    {}
    """
    model = row.get("reward_model")
    if not isinstance(model, Mapping) or model.get("ground_truth") is None:
        return {}
    truth = model["ground_truth"]
    out: dict[str, Any] = {}
    if row.get("ground_truth") is None:
        out["ground_truth"] = truth
    if row.get("answer") is None and isinstance(truth, (str, int, float)) and not isinstance(truth, bool):
        out["answer"] = str(truth)
    return out


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters, for error messages.

    >>> short_repr("x" * 100, limit=10)
    "'xxxxxx..."
    """
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_messages(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(m, dict) and "role" in m for m in value)


@dataclass
class Generic(Converter):
    """Any rows: `prompt_key` to the prompt (with `query_key` appended), reference columns renamed for the rewards.

    ``answer_key`` becomes ``answer``, ``ground_truth_key`` becomes
    ``ground_truth`` (what reward-kit style rewards read), ``response_key``
    becomes ``solution`` (a reference response). A prompt column that already
    holds chat messages is taken as the conversation.

    >>> Generic(prompt_key="instruction", query_key="input", answer_key="output").convert(
    ...     {"instruction": "Add the numbers.", "input": "2 3", "output": "5"})
    {'prompt': 'Add the numbers.\\n\\n2 3', 'answer': '5'}
    """

    prompt_key: str = "prompt"
    query_key: str | None = None
    answer_key: str | None = None
    ground_truth_key: str | None = None
    response_key: str | None = None
    separator: str = "\n\n"

    def _renames(self) -> dict[str, str]:
        pairs = ((self.answer_key, "answer"), (self.ground_truth_key, "ground_truth"), (self.response_key, "solution"))
        return {source: out for source, out in pairs if source is not None}

    @property
    def input_columns(self) -> tuple[str, ...]:
        keys = [self.prompt_key, *([self.query_key] if self.query_key else []), *self._renames()]
        return tuple(dict.fromkeys(keys))

    @property
    def output_columns(self) -> tuple[str, ...]:
        return ("prompt", *self._renames().values())

    @property
    def removed_columns(self) -> tuple[str, ...]:
        return tuple(source for source in self._renames() if source not in self.output_columns)

    def convert(self, row: Mapping[str, Any]) -> dict[str, Any]:
        prompt = row.get(self.prompt_key)
        if not _is_messages(prompt):
            prompt = cell_text(row, self.prompt_key, "prompt")
        if self.query_key:
            query = row.get(self.query_key)
            if query not in (None, ""):
                if not isinstance(prompt, str):
                    raise DatasetError(f"query_key={self.query_key!r} needs a text prompt, not chat messages")
                prompt = f"{prompt}{self.separator}{content_text(query)}"
        out: dict[str, Any] = {"prompt": prompt}
        for source, name in self._renames().items():
            out[name] = row.get(source)
        return out


@dataclass
class Chat(Converter):
    """Rows with a `messages` conversation: up to the final assistant turn is the prompt, that turn the `completion`.

    A conversation that does not end with an assistant turn is all prompt, and
    its ``completion`` is ``None``. (TRL does not pass a ``completion`` column
    to rewards while training; set ``completion_column`` to keep the reference
    answer under another name.)

    >>> Chat().convert({"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]})
    {'prompt': [{'role': 'user', 'content': 'Hi'}], 'completion': [{'role': 'assistant', 'content': 'Hello!'}]}
    """

    INPUT_SETTINGS = ("messages_key",)

    messages_key: str = "messages"
    completion_column: str = "completion"

    @property
    def output_columns(self) -> tuple[str, ...]:
        return ("prompt", self.completion_column)

    @property
    def removed_columns(self) -> tuple[str, ...]:
        return (self.messages_key,) if self.messages_key not in self.output_columns else ()

    @property
    def message_columns(self) -> tuple[str, ...]:
        return (self.completion_column,)

    def convert(self, row: Mapping[str, Any]) -> dict[str, Any]:
        messages = row.get(self.messages_key)
        if not _is_messages(messages):
            raise DatasetError(
                f"the {self.messages_key!r} column holds {short_repr(messages)}, not a list of chat messages "
                "({'role': ..., 'content': ...})"
            )
        messages = [{"role": m["role"], "content": m.get("content")} for m in messages]
        if messages[-1]["role"] == "assistant":
            if len(messages) == 1:
                raise DatasetError("the conversation is a single assistant turn: there is no prompt")
            return {"prompt": messages[:-1], self.completion_column: [messages[-1]]}
        return {"prompt": messages, self.completion_column: None}


@dataclass
class FireworksEval(Chat):
    """Fireworks evaluation rows (`messages`, `ground_truth`): the `chat` columns, and the ground truth as `answer` too.

    This is the JSON Lines format Fireworks (and reward-kit) evaluation
    datasets use, one ``{"messages": [...], "ground_truth": ...}`` per line.
    ``ground_truth`` passes through; it is also written to ``answer_column``
    (``answer``), the column the accuracy rewards read.

    >>> FireworksEval().convert({"messages": [{"role": "user", "content": "2+2?"}], "ground_truth": "4"})
    {'prompt': [{'role': 'user', 'content': '2+2?'}], 'completion': None, 'answer': '4'}
    """

    INPUT_SETTINGS = ("messages_key", "ground_truth_key")

    ground_truth_key: str = "ground_truth"
    answer_column: str = "answer"

    @property
    def output_columns(self) -> tuple[str, ...]:
        return ("prompt", self.completion_column, self.answer_column)

    def convert(self, row: Mapping[str, Any]) -> dict[str, Any]:
        out = super().convert(row)
        out[self.answer_column] = row.get(self.ground_truth_key)
        return out


@dataclass
class FunctionConverter(Converter):
    """A plain function ``f(row) -> dict`` as a converter (what registering a function gives).

    >>> FunctionConverter(lambda row: {"prompt": row["q"].upper()}, inputs=("q",)).convert({"q": "hi"})
    {'prompt': 'HI'}
    """

    fn: Callable[[Mapping[str, Any]], dict[str, Any]]
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ("prompt",)

    @property
    def input_columns(self) -> tuple[str, ...]:
        return tuple(self.inputs)

    @property
    def output_columns(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(("prompt", *self.outputs)))

    def convert(self, row: Mapping[str, Any]) -> dict[str, Any]:
        out = self.fn(row)
        if not isinstance(out, dict):
            name = getattr(self.fn, "__name__", repr(self.fn))
            raise DatasetError(
                f"converter function {name!r} returned {short_repr(out)}; it must return a dict of columns"
            )
        return out
