"""verl's batched custom reward as a reward: ``compute_score(data_sources, solution_strs, ground_truths, ...)``.

verl's ``batch`` reward manager calls a custom reward function once per batch
with lists: ``data_sources``, ``solution_strs`` (the responses' text),
``ground_truths`` and ``extra_infos``, and takes back one float or one dict
with ``score`` per sample. Such a function is a reward as it is: the lists
come from the batch (``solution_strs`` the completions' text, the others the
``data_source``, ``ground_truth`` and ``extra_info`` columns, required when
the parameter has no default).

>>> def compute_score(data_sources, solution_strs, ground_truths, extra_infos=None):
...     return [{"score": float(s.endswith(g)), "acc": s.endswith(g)} for s, g in zip(solution_strs, ground_truths)]
>>> from rewardsmith import get_reward
>>> r = get_reward(compute_score)
>>> r(completions=["#### 4", "#### 5"], data_source=["a", "a"], ground_truth=["4", "4"]), r.required_columns
([1.0, 0.0], ['data_source', 'ground_truth'])
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.injection import Column, Input
from rewardsmith.core.inputs import Batch
from rewardsmith.core.reward import Reward

__all__ = ["VERL_BATCH_COLUMNS", "VerlBatchFunctionReward", "is_verl_batch_function"]

#: verl's batch arguments and the column each one lists (``solution_strs`` is the completions' text).
VERL_BATCH_COLUMNS = {"data_sources": "data_source", "ground_truths": "ground_truth", "extra_infos": "extra_info"}


def is_verl_batch_function(names: set[str]) -> bool:
    """Whether parameters named ``names`` are verl's batched signature (it takes ``solution_strs``).

    >>> is_verl_batch_function({"data_sources", "solution_strs", "ground_truths"}), is_verl_batch_function({"x"})
    (True, False)
    """
    return "solution_strs" in names


@dataclass(eq=False)
class VerlBatchFunctionReward(Reward):
    """A verl batch function ``f(data_sources, solution_strs, ground_truths, extra_infos)`` as a reward."""

    fn: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.fn is None or not callable(self.fn):
            raise RewardConfigError("VerlBatchFunctionReward needs the function to call (fn=...)")
        if self.timeout is not None or self.workers != 1 or self.engine != "local":
            raise RewardConfigError(
                f"reward {self.name!r} is a batch function: timeout, workers and engine do not apply to it"
            )

    @property
    def default_name(self) -> str:
        fn = self.fn
        while isinstance(fn, functools.partial):  # settings bound: the function's own name
            fn = fn.func
        return getattr(fn, "__name__", type(fn).__name__)

    def _params(self) -> dict[str, inspect.Parameter]:
        return dict(inspect.signature(self.fn).parameters)

    def inputs(self) -> dict[str, Input]:
        params = self._params()
        return {
            name: Column(column, required=params[name].default is inspect.Parameter.empty)
            for name, column in VERL_BATCH_COLUMNS.items()
            if name in params
        }

    def score_batch(self, batch: Batch) -> Sequence[Any]:
        self.injection.check(batch)
        arguments: dict[str, Any] = {"solution_strs": batch.texts}
        for name in self.inputs():
            values = self.injection.values(batch, name)
            if values is not None:
                arguments[name] = values
        return self.fn(**arguments)  # type: ignore[misc]
