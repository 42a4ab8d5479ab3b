"""Before training or scoring: every reward whose columns the dataset lacks.

``check_columns`` is an error (a reward cannot score without its required
columns); ``optional_column_warnings`` says which optional columns a reward
reads that the data lacks (the reward then uses its default, which may not be
what was meant: a reward reading ``ground_truth`` gets ``None`` when the
answers are in ``solution``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from rewardsmith.core.errors import DatasetError, MissingColumnError
from rewardsmith.core.names import did_you_mean
from rewardsmith.core.registry import get_rewards

__all__ = ["MissingColumns", "check_columns", "dataset_columns", "leaf_rewards", "optional_column_warnings"]


class MissingColumns(NamedTuple):
    """A reward and the columns it needs that the dataset does not have."""

    reward: str
    columns: list[str]


def dataset_columns(dataset: Any) -> list[str]:
    """The column names of a ``Dataset``, an ``IterableDataset``, a list of dicts, or a list of names.

    >>> dataset_columns([{"prompt": "a", "answer": "1"}, {"prompt": "b", "task": "math"}])
    ['prompt', 'answer', 'task']
    """
    names = getattr(dataset, "column_names", None)
    if isinstance(names, Mapping):  # a DatasetDict: {split: [columns]}
        raise DatasetError(
            f"this dataset has several splits ({', '.join(names)}); check one of them, e.g. dataset['train']"
        )
    if names is not None:
        return list(names)
    if hasattr(dataset, "take"):  # an IterableDataset whose columns are not known until read
        first = next(iter(dataset.take(1)), None)
        return list(first) if first is not None else []
    if isinstance(dataset, (list, tuple)):
        if all(isinstance(item, str) for item in dataset):
            return list(dataset)
        if all(isinstance(item, Mapping) for item in dataset):
            return list(dict.fromkeys(key for row in dataset for key in row))
    raise DatasetError(
        f"cannot tell the columns of {type(dataset).__name__}: pass a datasets.Dataset, a list of dicts, "
        "or a list of column names"
    )


def check_columns(dataset: Any, rewards: Any, *, raise_error: bool = True) -> list[MissingColumns]:
    """Every reward that needs a column the dataset does not have.

    ``rewards`` is anything ``get_rewards`` takes: rewards, names, TRL
    functions, a list of them or a comma-separated string. A reward "needs" the
    columns in its ``required_columns`` (parameters without defaults that are
    not built-in inputs); a column with fallbacks is satisfied by any of them
    (``math_accuracy`` reads ``answer``, or ``solution`` when there is none). With ``raise_error`` (the default) a
    :class:`~rewardsmith.MissingColumnError` lists all of them at once, with
    the columns the dataset has; otherwise the list is returned (empty when
    every reward can run).

    >>> from rewardsmith.data import check_columns
    >>> rows = [{"prompt": "Make 24.", "nums": [4, 6], "target": 24}]
    >>> check_columns(rows, "think_format, gsm8k_accuracy", raise_error=False)
    [MissingColumns(reward='gsm8k_accuracy', columns=['answer'])]
    >>> check_columns(rows, ["gsm8k_accuracy"])
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.MissingColumnError: 1 reward needs columns the dataset does not have: ...
    """
    have = dataset_columns(dataset)
    problems = []
    for made in get_rewards(rewards):
        missing = made.missing_columns(have)
        if missing:
            problems.append(MissingColumns(made.name, missing))
    if problems and raise_error:
        lines = []
        for problem in problems:
            hints = "".join(did_you_mean(c, have) for c in problem.columns)
            lines.append(f"  - {problem.reward} needs {', '.join(map(repr, problem.columns))}.{hints}")
        count = f"{len(problems)} reward{'s' if len(problems) > 1 else ''} need{'s' if len(problems) == 1 else ''}"
        raise MissingColumnError(
            f"{count} columns the dataset does not have:\n" + "\n".join(lines) + "\n"
            f"The dataset has: {', '.join(have) or 'no columns'}. Prepare it with a converter that writes these "
            "columns (see rewardsmith.data.list_converters()), rename a column to the name the reward reads, or "
            "configure the reward to read another column."
        )
    return problems


def leaf_rewards(reward: Any, inside: str | None = None) -> list[tuple[Any, str | None]]:
    """The rewards a (possibly composite) reward is made of, each with the name of the composite it is in.

    Composites (combinations, gates, routes) are walked through their
    ``components()``; a reward that is not a composite is its own leaf.

    >>> from rewardsmith.compose import gate
    >>> [(leaf.name, top) for leaf, top in leaf_rewards(gate("think_format", "gsm8k_accuracy"))]
    [('think_format', 'gsm8k_accuracy_if_think_format'), ('gsm8k_accuracy', 'gsm8k_accuracy_if_think_format')]
    """
    components = getattr(reward, "components", None)
    if callable(components):
        top = inside or reward.name
        return [leaf for part in components() for leaf in leaf_rewards(part, top)]
    return [(reward, inside)]


def optional_column_warnings(dataset: Any, rewards: Any) -> list[str]:
    """One warning per reward that reads optional columns the dataset lacks (it will use its defaults).

    Composite rewards (combinations, gates, routes) are looked into, so the
    warning names the reward that reads the column.

    >>> from rewardsmith import reward
    >>> @reward
    ... def matches(completion, ground_truth=None):
    ...     return float(ground_truth is not None and ground_truth in completion)
    >>> print(optional_column_warnings([{"prompt": "2+2?", "solution": "4"}], [matches])[0])
    reward 'matches' reads the optional column 'ground_truth', which the dataset does not have, so it will use its
    default there. The dataset has: prompt, solution. Rename a column to 'ground_truth', ...
    """
    have = dataset_columns(dataset)
    warnings = []
    seen: set[tuple[str, str]] = set()
    for made in get_rewards(rewards):
        for leaf, top in leaf_rewards(made):
            absent = [c for c in leaf.missing_optional_columns(have) if (leaf.name, c) not in seen]
            if not absent:
                continue
            seen.update((leaf.name, c) for c in absent)
            where = f"reward {leaf.name!r}" + (f" (in {top!r})" if top and top != leaf.name else "")
            hints = "".join(did_you_mean(c, have) for c in absent)
            plural = len(absent) > 1
            warnings.append(
                f"{where} reads the optional column{'s' if plural else ''} {', '.join(map(repr, absent))}, which the "
                f"dataset does not have, so it will use its default{'s' if plural else ''} there.{hints} The dataset "
                f"has: {', '.join(have) or 'no columns'}. Rename a column to {absent[0]!r}, or set the reward to read "
                "another column, if that is not what you meant."
            )
    return warnings
