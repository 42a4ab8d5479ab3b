"""What every composed reward shares: how components are run, sync or async, and what comes back.

A composed reward (a combination, a gate, a route) is a :class:`Reward` whose
scores come from other rewards, its *components*. Each operation writes its
logic once, as a generator (:meth:`Composite._steps`) that yields the
``(component, batch)`` pairs it needs scored and receives their results. Two
drivers run that generator:

* :func:`_drive` scores the requests one after another (a sync composite,
  all of whose components are sync);
* :func:`_adrive` scores them concurrently with ``asyncio.gather`` (an async
  composite, which has at least one async component; TRL awaits it). Its sync
  components run in threads (``asyncio.to_thread``) so they overlap with the
  async ones.

Within one call, a component is scored once per batch even when it appears in
several places (``combine([fmt, gate(fmt, acc)])`` scores ``fmt`` once), so
every place sees the same score.

Components run through the core's own path (``_safe_score_batch`` then
``_finish``), so their engine settings, ``on_error``, error counting and
``<name>/errors`` logging apply unchanged. A component that *fails* on a row
(an exception, a timeout or a crash, under ``on_error="none"``) gives ``None``
there like a component that does not apply, but the composite is told which
rows failed: see :class:`Scored`.
"""

from __future__ import annotations

import asyncio
import math
import numbers
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.core.async_reward import AsyncReward
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.functions import to_reward
from rewardsmith.core.inputs import Batch
from rewardsmith.core.result import Failure, RewardResult, to_scores
from rewardsmith.core.reward import Reward

__all__ = ["AsyncComposite", "Composite", "Scored", "as_reward", "as_weight", "unique_labels"]

Request = tuple[Reward, Batch]
Steps = Generator[list[Request], list["Scored"], "Scored"]


@dataclass
class Scored:
    """One component's results on one batch.

    ``values`` are floats or ``None`` (plain calls) or :class:`RewardResult`
    objects (``explain``); ``failed`` holds the rows whose ``None`` comes from a
    failure of scoring rather than from the reward not applying.
    """

    values: list[Any]
    failed: set[int] = field(default_factory=set)

    @property
    def scores(self) -> list[float | None]:
        """The score of each row (``None``: not scored)."""
        values = self.values
        if RewardResult not in set(map(type, values)):  # plain scores (checked in C, for the whole batch)
            return values
        return [v.score if isinstance(v, RewardResult) else v for v in values]


def _is_failure(raw: Any) -> bool:
    if isinstance(raw, Failure):
        return True
    return isinstance(raw, numbers.Real) and not isinstance(raw, bool) and math.isinf(raw)


def _leaf_result(reward: Reward, batch: Batch, raw: list[Any], rich: bool) -> Scored:
    values = reward._finish(batch, raw, rich)
    scored = Scored(values)
    scores = scored.scores
    if None in scores:  # only a row scored None can have failed
        scored.failed.update(i for i, (a, b) in enumerate(zip(raw, scores)) if b is None and _is_failure(a))
    return scored


# The memo of one call maps (id(component), id(batch)) to (batch, result). It holds the batch
# itself so that a sub-batch cannot be freed during the call and its id reused by another one.
Memo = dict[tuple[int, int], tuple[Batch, Any]]


def _evaluate(reward: Reward, batch: Batch, rich: bool, memo: Memo) -> Scored:
    """Score one sync component on one batch (once per call: see the module docs)."""
    key = (id(reward), id(batch))
    found = memo.get(key)
    if found is not None:
        return found[1]
    if not len(batch):
        result = Scored([])
    elif isinstance(reward, Composite):
        result = _drive(reward._steps(batch, rich), rich, memo)
    else:
        result = _leaf_result(reward, batch, reward._safe_score_batch(batch), rich)
    memo[key] = (batch, result)
    return result


async def _aevaluate_uncached(reward: Reward, batch: Batch, rich: bool, memo: Memo) -> Scored:
    if not len(batch):
        return Scored([])
    if isinstance(reward, AsyncComposite):
        return await _adrive(reward._steps(batch, rich), rich, memo)
    if isinstance(reward, AsyncReward):
        return _leaf_result(reward, batch, await reward._asafe_score_batch(batch), rich)
    # A sync component (or sync composite) runs in a thread with its own memo, so that it
    # overlaps with the async components instead of blocking the event loop.
    return await asyncio.to_thread(_evaluate, reward, batch, rich, {})


async def _aevaluate(reward: Reward, batch: Batch, rich: bool, memo: Memo) -> Scored:
    """Score one component on one batch inside an async composite (once per call; the memo holds tasks)."""
    key = (id(reward), id(batch))
    found = memo.get(key)
    if found is None:
        found = memo[key] = (batch, asyncio.ensure_future(_aevaluate_uncached(reward, batch, rich, memo)))
    return await found[1]


def _drive(steps: Steps, rich: bool, memo: Memo) -> Scored:
    """Run a composite's steps, scoring each request in turn."""
    try:
        requests = next(steps)
        while True:
            requests = steps.send([_evaluate(r, b, rich, memo) for r, b in requests])
    except StopIteration as stop:
        return stop.value


async def _adrive(steps: Steps, rich: bool, memo: Memo) -> Scored:
    """Run a composite's steps, scoring the requests of each step concurrently."""
    try:
        requests = next(steps)
        while True:
            tasks = [asyncio.ensure_future(_aevaluate(r, b, rich, memo)) for r, b in requests]
            try:
                results = await asyncio.gather(*tasks)
            except BaseException:
                for task in tasks:  # one component raised (a config error): stop the others
                    task.cancel()
                raise
            requests = steps.send(list(results))
    except StopIteration as stop:
        return stop.value


def as_reward(obj: Any, what: str) -> Reward:
    """``obj`` as a reward (anything :func:`~rewardsmith.to_reward` accepts), with ``what`` in errors."""
    try:
        return to_reward(obj)
    except RewardConfigError as exc:
        raise type(exc)(f"{what}: {exc}") from exc


def as_weight(value: Any, what: str) -> float:
    """A finite number as a float; a clear error for anything else (bools included)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise RewardConfigError(f"{what} must be a finite number, got {value!r}")
    return float(value)


def unique_labels(names: Iterable[str]) -> list[str]:
    """Names made distinct for logging: the second ``x`` becomes ``x_2``, the third ``x_3``.

    >>> unique_labels(["think_format", "gsm8k_accuracy", "think_format"])
    ['think_format', 'gsm8k_accuracy', 'think_format_2']
    """
    seen: dict[str, int] = {}
    out: list[str] = []
    taken = set()
    for name in names:
        label = name
        while label in taken:
            seen[name] = seen.get(name, 1) + 1
            label = f"{name}_{seen[name]}"
        taken.add(label)
        out.append(label)
    return out


def mean_and_rate(scores: Sequence[float | None], n: int) -> tuple[float | None, float]:
    """The mean over the scored rows (``None`` if none is) and the share of ``n`` rows that are scored."""
    present = [s for s in scores if s is not None]
    if not present:
        return None, 0.0
    return math.fsum(present) / len(present), len(present) / n if n else 0.0


def log_component(
    log: Callable[[str, float], None] | None, prefix: str, scores: Sequence[float | None], n: int
) -> None:
    """Log ``prefix`` (mean over applicable rows, when any) and ``prefix/applicable`` through TRL's ``log_metric``."""
    if log is None:
        return
    mean, rate = mean_and_rate(scores, n)
    if mean is not None:  # TRL averages logged values, so a batch where nothing applies logs no mean
        log(prefix, mean)
    log(f"{prefix}/applicable", rate)


def fmt(value: float | None) -> str:
    """A score for a reason string: ``0.5``, ``1``, ``None``."""
    return "None" if value is None else f"{value:.4g}"


@dataclass(kw_only=True, eq=False, repr=False)
class Composite(Reward):
    """Base class of composed rewards (sync). Subclasses implement :meth:`_steps` and :meth:`components`.

    A composite runs no samples itself, so it takes no engine settings: set
    ``timeout``, ``workers`` and ``on_error`` on its components.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        engine = (self.timeout, self.workers, self.on_error, getattr(self, "max_concurrency", 32))
        if engine != (None, 1, "none", 32):
            raise RewardConfigError(
                f"reward {self.name!r} is composed of other rewards and runs no samples itself, so the engine "
                "settings timeout, workers, on_error and max_concurrency do not apply to it; set them on its "
                "components"
            )
        if not isinstance(self, AsyncReward):
            slow = [r.name for r in self.components() if isinstance(r, AsyncReward)]
            if slow:
                raise RewardConfigError(
                    f"reward {self.name!r} has async components ({', '.join(slow)}) but is sync; build it with "
                    "the rewardsmith.compose functions, which make a composite async when any component is"
                )

    # -- what subclasses provide ----------------------------------------------------------------

    def components(self) -> list[Reward]:
        """The rewards this one is composed of."""
        raise NotImplementedError

    def _default_name(self) -> str:
        raise NotImplementedError

    def _steps(self, batch: Batch, rich: bool) -> Steps:
        """Yield lists of ``(component, batch)`` to score, receive their :class:`Scored` results, return this one's."""
        raise NotImplementedError

    # -- identity -------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.__dict__.get("_name") or self._default_name()

    @property
    def required_columns(self) -> list[str]:
        """Dataset columns some component cannot score without."""
        return _union(r.required_columns for r in self.components())

    @property
    def optional_columns(self) -> list[str]:
        """Dataset columns some component reads when they are present."""
        required = set(self.required_columns)
        return [c for c in _union(r.optional_columns for r in self.components()) if c not in required]

    def close(self) -> None:
        """Stop the worker processes of every component."""
        for component in self.components():
            component.close()

    # -- running --------------------------------------------------------------------------------

    def score_batch(self, batch: Batch) -> Sequence[Any]:
        return _drive(self._steps(batch, False), False, {}).values

    def _safe_score_batch(self, batch: Batch) -> list[Any]:
        # Components apply their own on_error; an error here is a configuration error or a bug, and is raised.
        return to_scores(self.score_batch(batch), len(batch), self.name)

    def _finish(self, batch: Batch, values: list[Any], rich: bool) -> list[Any]:
        # Scores are already floats or None (RewardResults for explain); failures were counted and
        # logged by the components that failed, so nothing is counted again under this name.
        return list(values)

    def explain(
        self, prompts: Any = None, completions: Any = None, completion_ids: Any = None, **kwargs: Any
    ) -> list[RewardResult]:
        """One :class:`RewardResult` per completion; its ``metrics`` hold each component's result."""
        batch = Batch.from_call(prompts, completions, completion_ids, kwargs, self.name)
        if not len(batch):
            return []
        return _drive(self._steps(batch, True), True, {}).values


@dataclass(kw_only=True, eq=False, repr=False)
class AsyncComposite(Composite, AsyncReward):
    """A composite with at least one async component: TRL awaits it, and its components run concurrently."""

    async def ascore_batch(self, batch: Batch) -> Sequence[Any]:
        return (await _adrive(self._steps(batch, False), False, {})).values

    async def _asafe_score_batch(self, batch: Batch) -> list[Any]:
        return to_scores(await self.ascore_batch(batch), len(batch), self.name)

    score_batch = AsyncReward.score_batch
    explain = AsyncReward.explain

    async def aexplain(
        self, prompts: Any = None, completions: Any = None, completion_ids: Any = None, **kwargs: Any
    ) -> list[RewardResult]:
        """The async form of :meth:`Composite.explain`."""
        batch = Batch.from_call(prompts, completions, completion_ids, kwargs, self.name)
        if not len(batch):
            return []
        return (await _adrive(self._steps(batch, True), True, {})).values


def any_async(rewards: Iterable[Reward]) -> bool:
    """Whether any of the rewards is async (so a composite of them must be)."""
    return any(isinstance(r, AsyncReward) for r in rewards)


def _union(lists: Iterable[Iterable[str]]) -> list[str]:
    out: list[str] = []
    for names in lists:
        out.extend(n for n in names if n not in out)
    return out
