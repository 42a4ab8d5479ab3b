"""Inputs by name: what each parameter of a per-sample reward is filled with, and the columns a reward reads.

A per-sample reward says what it needs in its signature::

    def score(completion: str, answer: str, tolerance: float = 0.0) -> float: ...

``completion`` is a built-in input (:data:`BUILTIN_INPUTS`); ``answer`` is a
dataset column, required since it has no default; ``tolerance`` is a column
if the data has one, else its default. A ``**kwargs`` parameter receives every
other column of the row.

A reward declares anything else in its :meth:`~rewardsmith.Reward.inputs`, one
:class:`Input` per parameter:

* :class:`Column`: a column under another name than the parameter's, with
  fallbacks (``Column("answer", "solution")`` reads ``answer``, or
  ``solution`` when the data has no ``answer``);
* :class:`Value`: a fixed value (a setting bound with ``configure``);
* :class:`Computed`: a value computed from the batch (what the built-in inputs are).

The same :class:`Input` objects that fill the parameters also say which columns
the reward reads (:attr:`Injection.required_columns`,
:attr:`Injection.optional_columns`), so what a reward declares and what it
reads cannot drift apart.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.inputs import Batch

__all__ = [
    "BUILTIN_INPUTS",
    "COMPLETION_INPUTS",
    "ON_CHOICES",
    "TRAJECTORY_INPUTS",
    "Column",
    "Computed",
    "Injection",
    "Input",
    "Value",
]


class Input:
    """What one parameter of a reward is filled with, computed from a batch (one value per completion)."""

    def values(self, batch: Batch, reward_name: str) -> list[Any] | None:
        """The value for each row, or ``None`` when this input is absent (an optional column the data lacks)."""
        raise NotImplementedError

    def column_names(self) -> tuple[str, ...]:
        """The dataset columns this input may read, in the order it tries them."""
        return ()


@dataclass(frozen=True)
class Column(Input):
    """A dataset column: the first of ``name`` and ``fallbacks`` that the batch has.

    ``required`` says whether a batch without any of them is an error
    (:class:`~rewardsmith.MissingColumnError`); ``None`` means "as the
    parameter says": required when it has no default. An absent optional
    column leaves the parameter to its default.

    >>> batch = Batch.from_call(None, ["a"], None, {"solution": ["#### 4"]})
    >>> Column("answer", "solution").values(batch, "demo")
    ['#### 4']
    >>> Column("answer", "solution").describe()
    'answer (or solution)'
    """

    name: str
    fallbacks: tuple[str, ...] = ()
    required: bool | None = None

    def __init__(self, name: str, *fallbacks: str, required: bool | None = None) -> None:
        if not isinstance(name, str) or not name:
            raise RewardConfigError(f"a column name must be a non-empty string, got {name!r}")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "fallbacks", tuple(fallbacks))
        object.__setattr__(self, "required", required)

    def column_names(self) -> tuple[str, ...]:
        return (self.name, *self.fallbacks)

    def found(self, columns: Iterable[str]) -> str | None:
        """The column this input reads among ``columns`` (``None``: none of them is there)."""
        have = set(columns)
        return next((c for c in self.column_names() if c in have), None)

    def describe(self) -> str:
        """The column for messages: ``answer``, or ``answer (or solution)`` with fallbacks."""
        return self.name + (f" (or {', '.join(self.fallbacks)})" if self.fallbacks else "")

    def values(self, batch: Batch, reward_name: str) -> list[Any] | None:
        for name in self.column_names():
            if batch.has_column(name):
                return batch.column(name, reward_name)
        if self.required:
            raise batch.missing_column_error(self.name, reward_name, self.fallbacks)
        return None


@dataclass(frozen=True)
class Value(Input):
    """The same value for every row: a setting.

    >>> Value(0.5).values(Batch.from_call(None, ["a", "b"], None, {}), "demo")
    [0.5, 0.5]
    """

    value: Any

    def values(self, batch: Batch, reward_name: str) -> list[Any]:
        return [self.value] * len(batch)


@dataclass(frozen=True)
class Computed(Input):
    """A value computed from the batch by ``compute(batch) -> list`` (one per row), reading ``columns``.

    >>> lengths = Computed(lambda batch: [len(t) for t in batch.texts])
    >>> lengths.values(Batch.from_call(None, ["ab", "abc"], None, {}), "demo")
    [2, 3]
    """

    compute: Callable[[Batch], list[Any]]
    columns: tuple[str, ...] = field(default=())

    def column_names(self) -> tuple[str, ...]:
        return self.columns

    def values(self, batch: Batch, reward_name: str) -> list[Any]:
        return self.compute(batch)


def _completion_ids(batch: Batch) -> list[Any]:
    return batch.completion_ids if batch.completion_ids is not None else [None] * batch.n


#: Inputs that read a completion as a rollout (see :mod:`rewardsmith.core.trajectory`), and the environment.
TRAJECTORY_INPUTS: dict[str, Input] = {
    "trajectory": Computed(lambda batch: batch.trajectories),
    "tool_calls": Computed(lambda batch: [list(t.calls) for t in batch.trajectories]),
    "final_message": Computed(lambda batch: [t.final_message for t in batch.trajectories]),
    "turns": Computed(lambda batch: [t.turns for t in batch.trajectories]),
    "environment": Computed(lambda batch: batch.environments),
}

#: What ``completion`` holds for a trajectory: its final message, or the text of all its assistant messages.
ON_CHOICES: dict[str, Input] = {
    "final": Computed(lambda batch: batch.texts),
    "all": Computed(lambda batch: batch.all_texts),
}

#: Inputs every per-sample reward can ask for by name, and how each is computed from a batch.
BUILTIN_INPUTS: dict[str, Input] = {
    **TRAJECTORY_INPUTS,
    "completion": Computed(lambda batch: batch.texts),
    "solution_str": Computed(lambda batch: batch.texts),  # verl's, TinyZero's and DeepScaleR's name for it
    "prompt": Computed(lambda batch: batch.prompt_texts),
    "messages": Computed(lambda batch: [batch.messages(i) for i in range(batch.n)]),
    "prompt_messages": Computed(lambda batch: [batch.prompt_messages(i) for i in range(batch.n)]),
    "completion_messages": Computed(lambda batch: [batch.completion_messages(i) for i in range(batch.n)]),
    "completion_ids": Computed(_completion_ids),
    "trainer_state": Computed(lambda batch: [batch.trainer_state] * batch.n),
}


#: The inputs that hold the completion (or the rollout): a per-sample function names one of them.
COMPLETION_INPUTS = frozenset(
    {"completion", "solution_str", "messages", "completion_messages", "completion_ids", *TRAJECTORY_INPUTS}
) - {"environment"}


class Injection:
    """How to fill the keyword arguments of ``fn`` for each row of a batch, and the columns that reads.

    ``declared`` maps parameter names to :class:`Input` objects (a reward's
    :meth:`~rewardsmith.Reward.inputs`); the other parameters are built-in
    inputs or columns of their own name. With ``fn=None`` (a batch reward)
    only the declared inputs exist.

    >>> def score(completion, answer, bonus=0.0): ...
    >>> inj = Injection(score, reward_name="demo")
    >>> inj.required_columns, inj.optional_columns
    (['answer'], ['bonus'])
    >>> batch = Batch.from_call(None, ["a", "b"], None, {"answer": ["1", "2"]})
    >>> inj.rows(batch)
    [{'completion': 'a', 'answer': '1'}, {'completion': 'b', 'answer': '2'}]
    """

    def __init__(
        self,
        fn: Callable[..., Any] | None,
        *,
        reward_name: str,
        declared: dict[str, Input] | None = None,
        on: str = "final",
    ) -> None:
        self.reward_name = reward_name
        declared = dict(declared or {})
        if on not in ON_CHOICES:
            raise RewardConfigError(
                f"reward {reward_name!r}: on must be one of {', '.join(map(repr, ON_CHOICES))}, got {on!r}"
            )
        if on != "final" and fn is not None and "completion" in inspect.signature(fn).parameters:
            declared.setdefault("completion", ON_CHOICES[on])
        self.inputs: dict[str, Input] = {}
        self.settings_like: set[str] = set()  # parameters whose default is a value, not None: settings
        self.takes_kwargs = False
        self.positional: list[str] = []  # leading parameters that can be passed by position
        if fn is None:
            self.inputs = {name: _required_by_default(value) for name, value in declared.items()}
            self._index()
            return
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError) as exc:  # builtins without signatures
            raise RewardConfigError(f"cannot read the parameters of reward {reward_name!r}: {exc}") from exc
        names = self._read_parameters(signature, declared)
        if declared:
            if not self.takes_kwargs:
                raise RewardConfigError(
                    f"reward {reward_name!r} has no setting {sorted(declared)[0]!r}; "
                    f"its parameters are: {', '.join(names) or 'none'}"
                )
            # Declared inputs the signature does not name reach the function through **kwargs, when present.
            self.inputs.update((name, _required_by_default(value, False)) for name, value in declared.items())
        self._index()

    def _read_parameters(self, signature: inspect.Signature, declared: dict[str, Input]) -> list[str]:
        """The input of each parameter (what ``declared`` says, a built-in input, or a column of its name).

        Fills ``inputs``, ``positional``, ``takes_kwargs`` and ``settings_like``; takes from ``declared`` what
        the signature names, and returns the parameters' names.
        """
        names: list[str] = []
        for param in signature.parameters.values():
            if param.kind is param.POSITIONAL_OR_KEYWORD and len(self.positional) == len(names):
                self.positional.append(param.name)
            if param.kind is param.VAR_KEYWORD:
                self.takes_kwargs = True
            elif param.kind is param.VAR_POSITIONAL:
                continue
            elif param.kind is param.POSITIONAL_ONLY:
                raise RewardConfigError(
                    f"reward {self.reward_name!r} has the positional-only parameter {param.name!r}; "
                    "per-sample rewards receive their inputs by name, so drop the '/' from the signature"
                )
            else:
                names.append(param.name)
                has_default = param.default is not param.empty
                given = declared.pop(param.name, None)
                if given is None:
                    given = BUILTIN_INPUTS.get(param.name) or Column(param.name, required=not has_default)
                    if has_default and param.default is not None:
                        self.settings_like.add(param.name)
                elif isinstance(given, Column) and given.required is None:
                    given = Column(given.name, *given.fallbacks, required=not has_default)
                self.inputs[param.name] = given
        return names

    def _index(self) -> None:
        """Work out once what every batch would otherwise recompute (the inputs do not change)."""
        #: The parameters fixed to a value (settings bound with ``configure``), and their values.
        self.settings: dict[str, Any] = {n: i.value for n, i in self.inputs.items() if isinstance(i, Value)}
        self._required = [i for i in self.inputs.values() if isinstance(i, Column) and i.required]
        self._filled = [(n, i) for n, i in self.inputs.items() if not isinstance(i, Value)]
        self._taken = {n for i in self.inputs.values() for n in i.column_names()} | set(self.inputs)

    # -- what it reads ------------------------------------------------------------------------------

    def _columns(self, required: bool) -> list[Column]:
        return [i for i in self.inputs.values() if isinstance(i, Column) and bool(i.required) is required]

    @property
    def required_columns(self) -> list[str]:
        """Dataset columns the reward cannot score without (the first choice of each; see :meth:`missing`)."""
        return list(dict.fromkeys(c.name for c in self._columns(True)))

    @property
    def optional_columns(self) -> list[str]:
        """Dataset columns the reward reads when present: optional columns, and the fallbacks of required ones."""
        names = [n for c in self._columns(False) for n in c.column_names()]
        names += [n for c in self._columns(True) for n in c.fallbacks]
        names += [n for i in self.inputs.values() if not isinstance(i, Column) for n in i.column_names()]
        required = set(self.required_columns)
        return [n for n in dict.fromkeys(names) if n not in required]

    @property
    def trajectory_inputs(self) -> list[str]:
        """The rollout inputs the reward reads (``trajectory``, ``tool_calls``, ``environment``, ...).

        >>> def score(final_message, tool_calls, answer): ...
        >>> Injection(score, reward_name="demo").trajectory_inputs
        ['tool_calls', 'final_message']
        """
        used = {id(i) for i in self.inputs.values()}
        return [name for name, given in TRAJECTORY_INPUTS.items() if id(given) in used]

    def missing(self, columns: Iterable[str]) -> list[str]:
        """The required columns (with their fallbacks) of which ``columns`` holds none.

        >>> inj = Injection(None, reward_name="demo", declared={"reference": Column("answer", "solution")})
        >>> inj.missing(["prompt", "solution"]), inj.missing(["prompt"])
        ([], ['answer (or solution)'])
        """
        have = set(columns)
        return [c.describe() for c in self._columns(True) if c.found(have) is None]

    def missing_optional(self, columns: Iterable[str]) -> list[str]:
        """The optional columns that data with ``columns`` lacks, so the reward scores without them.

        Parameters whose default is a value (``max_chars: int = 200``) are
        settings that a column may override, not columns the reward expects:
        they are left out. Fallbacks of required columns are left out too.

        >>> def score(completion, ground_truth=None, max_chars=200): ...
        >>> Injection(score, reward_name="demo").missing_optional(["prompt"])
        ['ground_truth']
        """
        have = set(columns)
        return [
            c.describe()
            for name, c in self.inputs.items()
            if isinstance(c, Column) and not c.required and name not in self.settings_like and c.found(have) is None
        ]

    def check(self, batch: Batch) -> None:
        """Raise the clear error for the first required column the batch lacks."""
        have = batch.raw_columns
        for column in self._required:
            if column.name not in have and column.found(have) is None:
                raise batch.missing_column_error(column.name, self.reward_name, column.fallbacks)

    # -- filling parameters ---------------------------------------------------------------------------

    def values(self, batch: Batch, name: str) -> list[Any] | None:
        """The values of input ``name`` over the batch (``None``: an optional column the batch lacks)."""
        return self.inputs[name].values(batch, self.reward_name)

    def columns(self, batch: Batch) -> tuple[list[str], list[list[Any]]]:
        """The parameters filled from the batch (fixed values aside) and, for each, its values over the batch."""
        self.check(batch)
        names: list[str] = []
        lists: list[list[Any]] = []
        for name, given in self._filled:
            values = given.values(batch, self.reward_name)
            if values is not None:
                names.append(name)
                lists.append(values)
        if self.takes_kwargs:
            taken = self._taken
            for name in batch.column_names:
                if name not in taken and len(batch.raw_columns[name]) == batch.n:
                    names.append(name)
                    lists.append(batch.column(name, self.reward_name))
        return names, lists

    def rows(self, batch: Batch) -> list[dict[str, Any]]:
        """The keyword arguments for each row, in order."""
        names, lists = self.columns(batch)
        bound = self.settings
        if not names:
            return [dict(bound) for _ in range(batch.n)]
        if bound:
            return [{**bound, **dict(zip(names, values))} for values in zip(*lists)]
        return [dict(zip(names, values)) for values in zip(*lists)]

    def positional_columns(self, batch: Batch) -> list[list[Any]] | None:
        """The filled values as positional columns, when the function can take them that way.

        That is when the filled parameters are exactly its leading parameters,
        in order (``score(completion, answer)``), which lets the engine call
        ``map(fn, *columns)`` instead of building a dict per row. Fixed values
        (:attr:`settings`) are then passed by keyword.
        """
        names, lists = self.columns(batch)
        leading = self.positional[: len(names)]
        if not names or names != leading or any(name in leading for name in self.settings):
            return None
        return lists


def _required_by_default(given: Input, required: bool = True) -> Input:
    if isinstance(given, Column) and given.required is None:
        return Column(given.name, *given.fallbacks, required=required)
    return given
