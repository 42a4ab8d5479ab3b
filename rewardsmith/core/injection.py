"""Parameter injection by name: which argument of a per-sample reward comes from where.

A per-sample reward declares what it needs in its signature::

    def score(completion: str, answer: str, tolerance: float = 0.0) -> float: ...

``completion`` is one of the built-in inputs below; ``answer`` is a dataset
column (required, since it has no default); ``tolerance`` is a column if the
data has one, else its default. Settings bound with ``reward.configure(...)``
take precedence over columns. A ``**kwargs`` parameter receives every other
column of the row. ``renames`` maps a parameter to the column it reads when
the two names differ (a reward's ``answer_column`` setting, say).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.inputs import Batch

__all__ = ["BUILTIN_INPUTS", "Injection"]


def _messages(batch: Batch) -> list[Any]:
    return [batch.messages(i) for i in range(batch.n)]


def _prompt_messages(batch: Batch) -> list[Any]:
    return [batch.prompt_messages(i) for i in range(batch.n)]


def _completion_messages(batch: Batch) -> list[Any]:
    return [batch.completion_messages(i) for i in range(batch.n)]


def _completion_ids(batch: Batch) -> list[Any]:
    return batch.completion_ids if batch.completion_ids is not None else [None] * batch.n


def _trainer_state(batch: Batch) -> list[Any]:
    return [batch.trainer_state] * batch.n


#: Inputs every per-sample reward can ask for by name, and how each is computed from a batch.
BUILTIN_INPUTS: dict[str, Callable[[Batch], list[Any]]] = {
    "completion": lambda batch: batch.texts,
    "prompt": lambda batch: batch.prompt_texts,
    "messages": _messages,
    "prompt_messages": _prompt_messages,
    "completion_messages": _completion_messages,
    "completion_ids": _completion_ids,
    "trainer_state": _trainer_state,
}


class Injection:
    """How to build the keyword arguments of ``fn`` for each row of a batch.

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
        fn: Callable[..., Any],
        *,
        reward_name: str,
        bound: dict[str, Any] | None = None,
        extra_inputs: dict[str, Callable[[Batch], list[Any]]] | None = None,
        renames: dict[str, str] | None = None,
    ) -> None:
        self.reward_name = reward_name
        self.bound = dict(bound or {})
        self.inputs = {**BUILTIN_INPUTS, **(extra_inputs or {})}
        self.renames = dict(renames or {})
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError) as exc:  # builtins without signatures
            raise RewardConfigError(f"cannot read the parameters of reward {reward_name!r}: {exc}") from exc
        self.names: list[str] = []
        self.required: set[str] = set()
        self.takes_kwargs = False
        self.positional: list[str] = []  # leading parameters that can be passed by position
        for param in signature.parameters.values():
            if param.kind is param.POSITIONAL_OR_KEYWORD and len(self.positional) == len(self.names):
                self.positional.append(param.name)
            if param.kind is param.VAR_KEYWORD:
                self.takes_kwargs = True
            elif param.kind is param.VAR_POSITIONAL:
                continue
            elif param.kind is param.POSITIONAL_ONLY:
                raise RewardConfigError(
                    f"reward {reward_name!r} has the positional-only parameter {param.name!r}; "
                    "per-sample rewards receive their inputs by name, so drop the '/' from the signature"
                )
            else:
                self.names.append(param.name)
                if param.default is param.empty:
                    self.required.add(param.name)
        unknown = set(self.bound) - set(self.names)
        if unknown and not self.takes_kwargs:
            raise RewardConfigError(
                f"reward {reward_name!r} has no setting {sorted(unknown)[0]!r}; "
                f"its parameters are: {', '.join(self.names) or 'none'}"
            )

    def _column(self, name: str) -> str:
        return self.renames.get(name, name)

    @property
    def required_columns(self) -> list[str]:
        """Dataset columns the reward cannot score without."""
        return [
            self._column(n) for n in self.names if n in self.required and n not in self.inputs and n not in self.bound
        ]

    @property
    def optional_columns(self) -> list[str]:
        """Dataset columns the reward reads when present (it has defaults for them)."""
        return [
            self._column(n)
            for n in self.names
            if n not in self.required and n not in self.inputs and n not in self.bound
        ]

    @property
    def settings(self) -> dict[str, Any]:
        """Parameters with defaults, and their current values (bound settings included)."""
        return {n: self.bound[n] for n in self.names if n in self.bound}

    def check(self, batch: Batch) -> None:
        """Raise the clear error for the first required column the batch lacks."""
        for column in self.required_columns:
            if not batch.has_column(column):
                raise batch.missing_column_error(column, self.reward_name)

    def rows(self, batch: Batch) -> list[dict[str, Any]]:
        """The keyword arguments for each row, in order."""
        names, lists = self.columns(batch)
        if not names:
            return [dict(self.bound) for _ in range(batch.n)]
        if self.bound:
            bound = self.bound
            return [{**bound, **dict(zip(names, values))} for values in zip(*lists)]
        return [dict(zip(names, values)) for values in zip(*lists)]

    def positional_columns(self, batch: Batch) -> list[list[Any]] | None:
        """The injected values as positional columns, when the function can take them that way.

        That is when the injected parameters are exactly its leading
        parameters, in order (``score(completion, answer)``), which lets the
        engine call ``map(fn, *columns)`` instead of building a dict per row.
        Bound settings are then passed by keyword (see :meth:`bound`).
        """
        names, lists = self.columns(batch)
        if not names or names != self.positional[: len(names)]:
            return None
        if any(name in self.positional[: len(names)] for name in self.bound):
            return None
        return lists

    def columns(self, batch: Batch) -> tuple[list[str], list[list[Any]]]:
        """The injected parameter names and, for each, its values over the batch."""
        self.check(batch)
        names: list[str] = []
        lists: list[list[Any]] = []
        for name in self.names:
            if name in self.bound:
                continue
            if name in self.inputs:
                names.append(name)
                lists.append(self.inputs[name](batch))
            elif batch.has_column(self._column(name)):
                names.append(name)
                lists.append(batch.column(self._column(name), self.reward_name))
        if self.takes_kwargs:
            for name in batch.column_names:
                fits = len(batch.raw_columns[name]) == batch.n
                taken = name in self.bound or name in names or name in self.inputs or name in self.renames.values()
                if fits and not taken:
                    names.append(name)
                    lists.append(batch.column(name, self.reward_name))
        return names, lists
