"""Multi-task routing: each row is scored by the reward for its task."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rewardsmith.compose.common import as_reward, floored, log_component
from rewardsmith.core.composite import AsyncComposite, Composite, Steps, any_async
from rewardsmith.core.engine import Scored
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.inputs import Batch
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward

__all__ = ["AsyncForTask", "AsyncRouted", "ForTask", "Routed", "for_task", "is_member", "route"]


def _check_by(by: Any, what: str) -> None:
    if not isinstance(by, str) or not by:
        raise RewardConfigError(f"{what}: `by` must name the dataset column that holds each row's task, got {by!r}")


def _rows_by_reward(
    tasks: list[Any], rewards: Mapping[Any, Reward]
) -> tuple[dict[int, tuple[Reward, list[int]]], list[int]]:
    """Rows grouped by the reward that scores them (one group per distinct reward), and the unrouted rows."""
    groups: dict[int, tuple[Reward, list[int]]] = {}
    unrouted: list[int] = []
    for i, task in enumerate(tasks):
        try:
            target = rewards.get(task)
        except TypeError:  # an unhashable task value
            target = None
        if target is None:
            unrouted.append(i)
        else:
            groups.setdefault(id(target), (target, []))[1].append(i)
    return groups, unrouted


def _scatter(n: int, parts: list[tuple[list[int], Scored]]) -> Scored:
    out = Scored([None] * n)
    for rows, scored in parts:
        for j, i in enumerate(rows):
            out.values[i] = scored.values[j]
        out.failed.update(rows[j] for j in scored.failed)
    return out


@dataclass(eq=False, repr=False)
class Routed(Composite):
    """Each row scored by the reward for its task; what :func:`route` returns (see there)."""

    rewards: dict[Any, Any]
    by: str = "task"

    def __post_init__(self) -> None:
        if not isinstance(self.rewards, Mapping) or not self.rewards:
            raise RewardConfigError(
                f"route takes a mapping from task to reward, like {{'math': 'math_accuracy', 'code': "
                f"'code_syntax'}}; got {self.rewards!r}"
            )
        _check_by(self.by, "route")
        self.rewards = {task: as_reward(r, f"route: task {task!r}") for task, r in self.rewards.items()}
        super().__post_init__()

    def components(self) -> list[Reward]:
        return list({id(r): r for r in self.rewards.values()}.values())

    @property
    def required_columns(self) -> list[str]:
        return [self.by, *(c for c in super().required_columns if c != self.by)]

    @property
    def default_name(self) -> str:  # type: ignore[override]
        return "|".join(r.name for r in self.components())

    def __repr__(self) -> str:
        routes = ", ".join(f"{task!r}: {r.name}" for task, r in self.rewards.items())
        named = f".named({self.name!r})" if "_name" in self.__dict__ else ""
        return f"route({{{routes}}}, by={self.by!r}){named}"

    def split(self) -> list[Reward]:
        """The route as a list of rewards, one per distinct reward, each ``None`` off its tasks.

        Give the list to TRL (``reward_funcs=[*routed.split(), ...]``) to have each
        task's reward logged as a reward of its own.

        >>> from rewardsmith.compose import route
        >>> [r.name for r in route({"a": "think_format", "b": "gsm8k_accuracy"}).split()]
        ['think_format', 'gsm8k_accuracy']
        """
        tasks_of: dict[int, list[Any]] = {}
        for task, r in self.rewards.items():
            tasks_of.setdefault(id(r), []).append(task)
        return [for_task(r, tasks_of[id(r)], by=self.by) for r in self.components()]

    def steps(self, batch: Batch, explain: bool) -> Steps:
        n = len(batch)
        tasks = batch.column(self.by, self.name)
        groups, unrouted = _rows_by_reward(tasks, self.rewards)
        parts = list(groups.values())
        results: list[Scored] = yield [(r, batch.subset(rows)) for r, rows in parts]
        merged = _scatter(n, [(rows, floored(scored, r)) for (r, rows), scored in zip(parts, results)])
        log = batch.log_metric
        if log is not None:
            scores = merged.scores
            for task in self.rewards:
                log_component(log, f"{self.name}/{task}", [s if t == task else None for s, t in zip(scores, tasks)], n)
            log(f"{self.name}/unrouted", len(unrouted) / n)
        if explain:
            skipped = set(unrouted)
            for i in range(n):
                task = tasks[i]
                if i in skipped:
                    merged.values[i] = RewardResult(None, f"no reward for {self.by}={task!r}")
                else:
                    inner = merged.values[i]
                    label = self.rewards[task].name
                    reason = f"{self.by}={task!r} -> {label}" + (f": {inner.reason}" if inner.reason else "")
                    merged.values[i] = RewardResult(inner.score, reason, {str(task): inner})
        return merged


@dataclass(eq=False, repr=False)
class AsyncRouted(Routed, AsyncComposite):
    """A :class:`Routed` with at least one async reward."""


def route(rewards_by_task: Mapping[Any, Any], by: str = "task") -> Routed:
    """One reward for a multi-task dataset: each row is scored by the reward for its task.

    ``by`` names the dataset column that holds each row's task;
    ``rewards_by_task`` maps its values to rewards (anything
    :func:`~rewardsmith.get_reward` accepts). Each reward scores only the rows
    of its task (one call per reward per batch) and the others get ``None``
    from it; a row whose task has no reward is ``None`` (check a dataset with
    :func:`~rewardsmith.compose.coverage` before training). A row whose
    reward failed (an error or timeout) is counted at that reward's lowest
    score, where it declares a ``score_range``.

    Use it as one reward, or as a list of rewards with :meth:`Routed.split`
    (each ``None`` off its task) so that TRL logs each one separately. As one
    reward it logs ``<name>/<task>`` (the mean over that task's scored rows),
    ``<name>/<task>/applicable`` (the share of the batch that task's reward
    scored) and ``<name>/unrouted``.

    >>> from rewardsmith.compose import route
    >>> r = route({"math": "gsm8k_accuracy", "chat": "think_format"})
    >>> r.name
    'gsm8k_accuracy|think_format'
    >>> r(completions=["#### 4", "<think>hi</think><answer>hello</answer>", "#### 5"],
    ...   task=["math", "chat", "poetry"], answer=["4", None, None])
    [1.0, 1.0, None]
    """
    if not isinstance(rewards_by_task, Mapping):
        raise RewardConfigError(f"route takes a mapping from task to reward, got {type(rewards_by_task).__name__}")
    made = {task: as_reward(r, f"route: task {task!r}") for task, r in rewards_by_task.items()}
    cls = AsyncRouted if any_async(made.values()) else Routed
    return cls(made, by)


@dataclass(eq=False, repr=False)
class ForTask(Composite):
    """A reward applied only to rows of some tasks (``None`` elsewhere); what :func:`for_task` returns."""

    reward: Any
    tasks: list[Any]
    by: str = "task"

    def __post_init__(self) -> None:
        self.reward = as_reward(self.reward, "for_task")
        if isinstance(self.tasks, (str, bytes)) or not isinstance(self.tasks, Sequence):
            self.tasks = [self.tasks]
        self.tasks = list(self.tasks)
        if not self.tasks:
            raise RewardConfigError("for_task needs at least one task")
        _check_by(self.by, "for_task")
        super().__post_init__()

    def components(self) -> list[Reward]:
        return [self.reward]

    @property
    def required_columns(self) -> list[str]:
        return [self.by, *(c for c in super().required_columns if c != self.by)]

    @property
    def default_name(self) -> str:  # type: ignore[override]
        return self.reward.name

    def __repr__(self) -> str:
        named = f".named({self.name!r})" if "_name" in self.__dict__ else ""
        return f"for_task({self.reward.name}, {self.tasks!r}, by={self.by!r}){named}"

    def steps(self, batch: Batch, explain: bool) -> Steps:
        tasks = batch.column(self.by, self.name)
        wanted = set(self.tasks)
        rows = [i for i, task in enumerate(tasks) if is_member(task, wanted)]
        (scored,) = yield [(self.reward, batch.subset(rows))]
        merged = _scatter(len(batch), [(rows, floored(scored, self.reward))])
        if explain:
            for i, value in enumerate(merged.values):
                if value is None:
                    merged.values[i] = RewardResult(None, f"{self.by}={tasks[i]!r} is not one of {self.tasks!r}")
        return merged


def is_member(value: Any, wanted: set[Any]) -> bool:
    """``value in wanted``, and ``False`` for an unhashable value (a task column holding lists, say).

    >>> is_member("math", {"math"}), is_member(["math"], {"math"})
    (True, False)
    """
    try:
        return value in wanted
    except TypeError:
        return False


@dataclass(eq=False, repr=False)
class AsyncForTask(ForTask, AsyncComposite):
    """A :class:`ForTask` around an async reward."""


def for_task(reward: Any, tasks: Any, by: str = "task") -> ForTask:
    """``reward`` on the rows whose ``by`` column is one of ``tasks`` (one value or a list), ``None`` elsewhere.

    It keeps the reward's name, so TRL logs it as that reward.

    >>> from rewardsmith.compose import for_task
    >>> math_only = for_task("gsm8k_accuracy", "math")
    >>> math_only.name, math_only(completions=["#### 4", "#### 4"], task=["math", "chat"], answer=["4", "4"])
    ('gsm8k_accuracy', [1.0, None])
    """
    made = as_reward(reward, "for_task")
    cls = AsyncForTask if any_async([made]) else ForTask
    return cls(made, tasks, by)
