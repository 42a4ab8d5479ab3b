"""Checking, before training, that every row of a dataset is scored by some reward.

TRL sums ``None`` as 0 and drops a row from the group statistics only when
every reward gives ``None``, so a multi-task dataset with a task that no reward
handles trains silently on nothing for those rows. :func:`coverage` finds that
(and columns a reward needs but the dataset lacks) from the data alone: it
scores nothing, so it is instant and runs before a model loads.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.compose.combine import Combined
from rewardsmith.compose.common import as_reward
from rewardsmith.compose.gate import Gated
from rewardsmith.compose.route import ForTask, Routed, is_member
from rewardsmith.core.composite import Composite
from rewardsmith.core.errors import MissingColumnError, RewardConfigError
from rewardsmith.core.injection import Column
from rewardsmith.core.registry import get_rewards
from rewardsmith.core.reward import Reward

__all__ = ["CoverageError", "CoverageReport", "coverage"]


class CoverageError(RewardConfigError):
    """Some rows of a dataset would not be scored by any reward."""


class _Table:
    """Columns of a dataset, read only when asked for."""

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset
        self._cache: dict[str, list[Any]] = {}
        if hasattr(dataset, "column_names") and hasattr(dataset, "__getitem__"):  # datasets.Dataset
            if isinstance(dataset.column_names, Mapping):
                raise RewardConfigError(
                    f"coverage takes one split of a dataset; this one has several ({', '.join(dataset.column_names)})"
                )
            if not hasattr(dataset, "__len__"):
                raise RewardConfigError(
                    "coverage needs a dataset it can read in full; for a streaming dataset pass a sample of it, "
                    "e.g. Dataset.from_list(list(stream.take(10_000)))"
                )
            self.names = list(dataset.column_names)
            self.n = len(dataset)
            self._get = lambda name: list(dataset[name])
        elif isinstance(dataset, Mapping):
            self.names = list(dataset)
            lengths = {len(v) for v in dataset.values()}
            if len(lengths) > 1:
                raise RewardConfigError(f"coverage: the dataset's columns have different lengths ({sorted(lengths)})")
            self.n = lengths.pop() if lengths else 0
            self._get = lambda name: list(dataset[name])
        elif hasattr(dataset, "columns") and hasattr(dataset, "to_dict"):  # a pandas DataFrame
            self.names = [str(c) for c in dataset.columns]
            self.n = len(dataset)
            # pandas holds missing values as NaN or NA; read them as None, like the other containers
            self._get = lambda name: dataset[name].astype(object).where(dataset[name].notna(), None).tolist()
        elif isinstance(dataset, Sequence) and not isinstance(dataset, (str, bytes)):
            rows = list(dataset)
            if not all(isinstance(row, Mapping) for row in rows):
                raise RewardConfigError("coverage: a list dataset must hold one dict per row")
            self.names = list(dict.fromkeys(key for row in rows for key in row))
            self.n = len(rows)
            self._get = lambda name: [row.get(name) for row in rows]
        else:
            raise RewardConfigError(
                f"coverage takes a datasets.Dataset, a pandas DataFrame, a dict of columns or a list of rows; "
                f"got {type(dataset).__name__}"
            )

    def has(self, name: str) -> bool:
        return name in self.names

    def column(self, name: str) -> list[Any]:
        if name not in self._cache:
            self._cache[name] = self._get(name)
        return self._cache[name]


@dataclass
class CoverageReport:
    """What :func:`coverage` found: how many rows each reward may score, and which rows none does."""

    rows: int
    scored_by: dict[str, int] = field(default_factory=dict)
    uncovered: dict[str, list[int]] = field(default_factory=dict)

    @property
    def uncovered_rows(self) -> list[int]:
        """Every row no reward scores, in order."""
        return sorted(i for rows in self.uncovered.values() for i in rows)

    def __str__(self) -> str:
        lines = [_count(self.rows)]
        lines += [f"  {name}: scores {_count(n)} ({_pct(n, self.rows)})" for name, n in self.scored_by.items()]
        missing = self.uncovered_rows
        if missing:
            lines.append(f"  not scored by any reward: {_count(len(missing))} ({_pct(len(missing), self.rows)})")
            for reason, rows in self.uncovered.items():
                lines.append(f"    {_list_rows(rows)}: {reason}")
        return "\n".join(lines)


def _count(rows: int) -> str:
    return f"{rows} row{'' if rows == 1 else 's'}"


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _list_rows(rows: list[int], most: int = 8) -> str:
    """``1 row (3)``, ``12 rows (0, 1, 2, ... and 9 more)``."""
    shown = ", ".join(map(str, rows[:most])) + (f", ... and {len(rows) - most} more" if len(rows) > most else "")
    return f"{_count(len(rows))} ({shown})"


def _walk(reward: Reward, path: str) -> Iterator[tuple[Reward, str]]:
    yield reward, path
    if isinstance(reward, Composite):
        for child in reward.components():
            yield from _walk(child, f"{path} > {child.name}")


def _missing_columns(rewards: list[Reward], table: _Table) -> list[str]:
    problems = []
    for top in rewards:
        for node, path in _walk(top, top.name):
            where = f"reward {path!r}" if node is top else f"reward {top.name!r} (component {path!r})"
            if isinstance(node, (Routed, ForTask)):
                if not table.has(node.by):
                    problems.append(f"{where} routes by the column {node.by!r}")
            else:
                own = node.injection.missing(table.names) if isinstance(node, Composite) else None
                missing = own if own is not None else node.missing_columns(table.names)
                problems += [f"{where} needs the column {c!r}" for c in missing]
    return problems


def _check_data(rewards: list[Reward], table: _Table) -> None:
    """Each reward's own check of the values it reads (``Reward.check_data``), components included."""
    for top in rewards:
        for node, _ in _walk(top, top.name):
            if type(node).check_data is Reward.check_data:
                continue
            columns = {}
            for name, given in node.injection.inputs.items():
                found = given.found(table.names) if isinstance(given, Column) else None
                if found is not None:
                    columns[name] = table.column(found)
            node.check_data(columns)


def _reasons(reward: Reward, table: _Table) -> list[str | None]:
    """For each row, ``None`` when ``reward`` may score it, else why it cannot."""
    n = table.n
    if isinstance(reward, Combined):
        parts = [_reasons(r, table) for r, w in zip(reward.rewards, reward.effective_weights) if w]
        if not parts:
            return [f"every component of {reward.name!r} has weight 0"] * n
        return [None if any(p[i] is None for p in parts) else _join(p[i] for p in parts) for i in range(n)]
    if isinstance(reward, Gated):
        cond = _reasons(reward.condition, table)
        if reward.lazy:
            return cond
        inner = _reasons(reward.reward, table)
        return [c if c is not None else r for c, r in zip(cond, inner)]
    if isinstance(reward, Routed):
        tasks = table.column(reward.by)
        inner = {id(r): _reasons(r, table) for r in reward.components()}
        out: list[str | None] = []
        for i, task in enumerate(tasks):
            target = _route_target(reward, task)
            if target is None:
                routes = ", ".join(map(repr, reward.rewards))
                out.append(f"{reward.by}={task!r} has no reward in {reward.name!r} (it routes {routes})")
            else:
                out.append(inner[id(target)][i])
        return out
    if isinstance(reward, ForTask):
        tasks = table.column(reward.by)
        inner_reasons = _reasons(reward.reward, table)
        wanted = set(reward.tasks)
        return [
            r if is_member(t, wanted) else f"{reward.name!r} scores only {reward.by} in {reward.tasks!r}, not {t!r}"
            for t, r in zip(tasks, inner_reasons)
        ]
    # A leaf, or a composite of a kind this check does not know (assumed to score every row its own
    # required columns allow): rows where a required column is empty cannot be scored.
    out: list[str | None] = [None] * n
    for given in reward.injection.inputs.values():
        found = given.found(table.names) if isinstance(given, Column) and given.required else None
        if found is None:
            continue
        for i, value in enumerate(table.column(found)):
            if value is None and out[i] is None:
                out[i] = f"{reward.name!r} needs {found!r}, which is empty (None) in these rows"
    return out


def _route_target(reward: Routed, task: Any) -> Reward | None:
    try:
        return reward.rewards.get(task)
    except TypeError:
        return None


def _join(reasons: Any) -> str:
    return "; ".join(dict.fromkeys(r for r in reasons if r))


def coverage(dataset: Any, rewards: Any) -> CoverageReport:
    """Check that every row of ``dataset`` is scored by at least one of ``rewards``, before training.

    Raises :class:`~rewardsmith.MissingColumnError` when a reward needs a
    column the dataset lacks (or a route's task column is missing), the
    error of a reward's own check of its values (``Reward.check_data``: an
    unknown IFEval constraint id, say), and
    :class:`CoverageError` listing the rows no reward scores, grouped by
    reason (a task no route handles, a needed column that is empty in those
    rows). It reads only the columns the rewards need and scores nothing.

    ``dataset`` is a ``datasets.Dataset``, a pandas ``DataFrame``, a dict of
    columns or a list of rows; ``rewards`` is what TRL's ``reward_funcs`` takes
    (a list, one reward, or a comma-separated string of names). A reward
    without declared columns (a plain TRL function) is taken to score every row.

    >>> from rewardsmith.compose import coverage, route
    >>> rows = [{"prompt": "2+2?", "task": "math", "answer": "4"},
    ...         {"prompt": "Hi!", "task": "chat", "answer": None}]
    >>> print(coverage(rows, [route({"math": "gsm8k_accuracy", "chat": "think_format"})]))
    2 rows
      gsm8k_accuracy|think_format: scores 2 rows (100.0%)
    >>> coverage(rows, [route({"math": "gsm8k_accuracy"})])
    Traceback (most recent call last):
    ...
    rewardsmith.compose.coverage.CoverageError: 1 of 2 rows would not be scored by any reward:
      1 row (1): task='chat' has no reward in 'gsm8k_accuracy' (it routes 'math')
    """
    table = _Table(dataset)
    items = get_rewards(rewards) if isinstance(rewards, str) else _listify(rewards)
    made = [as_reward(r, f"coverage: reward {i}") for i, r in enumerate(items)]
    problems = _missing_columns(made, table)
    if problems:
        raise MissingColumnError(
            "the dataset lacks columns the rewards need:\n  "
            + "\n  ".join(problems)
            + f"\nColumns present: {', '.join(table.names) or 'none'}. "
            + "Add or rename the columns, or change the rewards."
        )
    _check_data(made, table)
    report = CoverageReport(table.n)
    per_reward = [(r.name, _reasons(r, table)) for r in made]
    for name, reasons in per_reward:
        report.scored_by[name] = sum(1 for r in reasons if r is None)
    for i in range(table.n):
        if all(reasons[i] is not None for _, reasons in per_reward):
            report.uncovered.setdefault(_join(reasons[i] for _, reasons in per_reward), []).append(i)
    if report.uncovered:
        missing = report.uncovered_rows
        lines = [f"  {_list_rows(rows)}: {reason}" for reason, rows in report.uncovered.items()]
        raise CoverageError(f"{len(missing)} of {table.n} rows would not be scored by any reward:\n" + "\n".join(lines))
    return report


def _listify(rewards: Any) -> list[Any]:
    if isinstance(rewards, Reward) or callable(rewards) or not isinstance(rewards, Sequence):
        return [rewards]
    return list(rewards)
