"""Rewards made of other rewards: how a composite scores its parts, sync or async.

A composite (a weighted combination, a gate, a route, a length-scaled
correctness) is a :class:`~rewardsmith.Reward` whose scores come from other
rewards, its *components*. A subclass implements two things:

* :meth:`Composite.components`: the rewards it is made of;
* :meth:`Composite.steps`: its logic, written once as a generator that yields
  lists of ``(component, batch)`` pairs it needs scored and receives their
  :class:`~rewardsmith.core.engine.Scored` results, then returns its own
  ``Scored``.

Two drivers run those steps. :func:`drive` scores the requests of a step one
after another; :func:`adrive` scores them concurrently with
``asyncio.gather`` (an :class:`AsyncComposite`, which has an async component;
TRL awaits it), running sync components in threads so they overlap with the
async ones. Within one call a component is scored once per batch even when it
appears in several places (``combine([fmt, gate(fmt, acc)])`` scores ``fmt``
once), so every place sees the same score.

Components are scored through their own :meth:`~rewardsmith.Reward.run_batch`,
so their engine settings, ``on_error``, error counting and ``<name>/errors``
logging apply unchanged. A component that *fails* on a row gives ``None``
there like a component that does not apply, but the composite is told which
rows failed (``Scored.failed``), so that a failure never passes for "not
applicable". The built-in composites count a failed component at its lowest
score (:func:`failure_floor`) where it declares a ``score_range``, so that
breaking a component (a timeout, a crash) never pays better than its worst
honest outcome; where it declares none, the row stays unscored and failed.

>>> from dataclasses import dataclass
>>> from rewardsmith import get_reward
>>> @dataclass(eq=False)
... class Halved(Composite):
...     inner: Reward
...     def components(self):
...         return [self.inner]
...     def steps(self, batch, explain):
...         (scored,) = yield [(self.inner, batch)]  # the component's scores on the batch
...         halves = [None if s is None else s / 2 for s in scored.scores]
...         if explain:  # explain() asks for results with reasons
...             halves = [RewardResult(h, f"half of {r.score}") for h, r in zip(halves, scored.values)]
...         return Scored(halves, scored.failed)
>>> halved = Halved(get_reward("think_format"))
>>> halved(completions=["<think>2+2</think><answer>4</answer>", "4"])
[0.5, 0.0]
>>> halved.check("4").reason
'half of 0.0'
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rewardsmith.core.async_reward import AsyncReward
from rewardsmith.core.engine import Scored
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.inputs import Batch
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward

__all__ = ["AsyncComposite", "Composite", "Request", "Steps", "adrive", "any_async", "drive", "failure_floor"]

Request = tuple[Reward, Batch]
Steps = Generator[list[Request], list[Scored], Scored]

# The memo of one call maps (id(component), id(batch)) to (batch, result). It holds the batch
# itself so that a sub-batch cannot be freed during the call and its id reused by another one.
Memo = dict[tuple[int, int], tuple[Batch, Any]]


def _evaluate(reward: Reward, batch: Batch, explain: bool, memo: Memo) -> Scored:
    """Score one component on one batch in a sync driver (once per call: see the module docs)."""
    key = (id(reward), id(batch))
    found = memo.get(key)
    if found is not None:
        return found[1]
    if not len(batch):
        result = Scored([])
    elif isinstance(reward, Composite) and not isinstance(reward, AsyncReward):
        result = drive(reward.steps(batch, explain), explain, memo)
    else:
        result = reward.run_batch(batch, explain=explain)
    memo[key] = (batch, result)
    return result


async def _aevaluate_uncached(reward: Reward, batch: Batch, explain: bool, memo: Memo) -> Scored:
    if not len(batch):
        return Scored([])
    if isinstance(reward, AsyncComposite):
        return await adrive(reward.steps(batch, explain), explain, memo)
    if isinstance(reward, AsyncReward):
        return await reward.arun_batch(batch, explain=explain)
    # A sync component (or sync composite) runs in a thread with its own memo, so that it
    # overlaps with the async components instead of blocking the event loop.
    return await asyncio.to_thread(_evaluate, reward, batch, explain, {})


async def _aevaluate(reward: Reward, batch: Batch, explain: bool, memo: Memo) -> Scored:
    """Score one component on one batch in an async driver (once per call; the memo holds tasks)."""
    key = (id(reward), id(batch))
    found = memo.get(key)
    if found is None:
        found = memo[key] = (batch, asyncio.ensure_future(_aevaluate_uncached(reward, batch, explain, memo)))
    return await found[1]


def drive(steps: Steps, explain: bool, memo: Memo | None = None) -> Scored:
    """Run a composite's steps, scoring each request in turn."""
    memo = {} if memo is None else memo
    try:
        requests = next(steps)
        while True:
            requests = steps.send([_evaluate(r, b, explain, memo) for r, b in requests])
    except StopIteration as stop:
        return stop.value


async def adrive(steps: Steps, explain: bool, memo: Memo | None = None) -> Scored:
    """Run a composite's steps, scoring the requests of each step concurrently."""
    memo = {} if memo is None else memo
    try:
        requests = next(steps)
        while True:
            tasks = [asyncio.ensure_future(_aevaluate(r, b, explain, memo)) for r, b in requests]
            try:
                results = await asyncio.gather(*tasks)
            except BaseException:
                for task in tasks:  # one component raised (a config error): stop the others
                    task.cancel()
                raise
            requests = steps.send(list(results))
    except StopIteration as stop:
        return stop.value


def failure_floor(reward: Reward) -> float | None:
    """The score a composite counts a failed sample of ``reward`` as: the lowest of its ``score_range``.

    ``None`` when the reward declares no range (the composite then leaves the row unscored).

    >>> from rewardsmith import get_reward
    >>> failure_floor(get_reward("math_accuracy")), failure_floor(get_reward("repetition", max_penalty=-2.0))
    (0.0, -2.0)
    """
    bounds = reward.score_range
    if not bounds:
        return None
    try:
        low = float(bounds[0])
    except (TypeError, ValueError):
        return None
    return low if math.isfinite(low) else None


def any_async(rewards: Iterable[Reward]) -> bool:
    """Whether any of the rewards is async (so a composite of them must be).

    >>> from rewardsmith import get_reward
    >>> any_async([get_reward("think_format")])
    False
    """
    return any(isinstance(r, AsyncReward) for r in rewards)


@dataclass(kw_only=True, eq=False, repr=False)
class Composite(Reward):
    """Base class of rewards made of other rewards (sync). Subclasses implement :meth:`components` and :meth:`steps`.

    A composite runs no samples itself, so it takes no engine settings: set
    ``timeout``, ``workers`` and ``on_error`` on its components. The columns it
    reads are those of its components plus its own :meth:`~rewardsmith.Reward.inputs`.
    A sync composite may have async components (they run on a helper thread);
    an :class:`AsyncComposite` runs them concurrently instead.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        engine = (self.timeout, self.workers, self.on_error, self.engine, getattr(self, "max_concurrency", 32))
        if engine != (None, 1, "none", "local", 32):
            raise RewardConfigError(
                f"reward {self.name!r} is composed of other rewards and runs no samples itself, so the engine "
                "settings timeout, workers, on_error, engine and max_concurrency do not apply to it; set them on "
                "its components"
            )

    # -- what subclasses provide ----------------------------------------------------------------

    def components(self) -> list[Reward]:
        """The rewards this one is composed of."""
        raise NotImplementedError(f"{type(self).__name__} must implement components()")

    def steps(self, batch: Batch, explain: bool) -> Steps:
        """Yield lists of ``(component, batch)`` to score, receive their results, return this reward's ``Scored``.

        With ``explain`` the components' values are :class:`RewardResult`
        objects and so must this reward's be.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement steps(batch, explain)")

    def is_batch_reward(self) -> bool:
        return True

    # -- columns --------------------------------------------------------------------------------

    @property
    def required_columns(self) -> list[str]:
        """Dataset columns this reward or one of its components cannot score without."""
        return _union([self.injection.required_columns, *(r.required_columns for r in self.components())])

    @property
    def optional_columns(self) -> list[str]:
        """Dataset columns this reward or one of its components reads when they are present."""
        required = set(self.required_columns)
        lists = [self.injection.optional_columns, *(r.optional_columns for r in self.components())]
        return [c for c in _union(lists) if c not in required]

    def missing_columns(self, columns: Iterable[str]) -> list[str]:
        have = list(columns)
        return _union([self.injection.missing(have), *(r.missing_columns(have) for r in self.components())])

    def missing_optional_columns(self, columns: Iterable[str]) -> list[str]:
        have = list(columns)
        lists = [self.injection.missing_optional(have), *(r.missing_optional_columns(have) for r in self.components())]
        return _union(lists)

    def close(self) -> None:
        """Stop the worker processes of every component."""
        for component in self.components():
            component.close()

    # -- running --------------------------------------------------------------------------------

    def score_batch(self, batch: Batch) -> Sequence[Any]:
        return drive(self.steps(batch, False), False).values

    def run_batch(self, batch: Batch, *, explain: bool = False) -> Scored:
        # Components apply their own on_error and count their own failures; an error raised here is a
        # configuration error or a bug, and propagates.
        if not len(batch):
            return Scored([])
        return drive(self.steps(batch, explain), explain)


@dataclass(kw_only=True, eq=False, repr=False)
class AsyncComposite(Composite, AsyncReward):
    """A composite with at least one async component: TRL awaits it, and its components run concurrently."""

    async def ascore_batch(self, batch: Batch) -> Sequence[Any]:
        return (await adrive(self.steps(batch, False), False)).values

    async def arun_batch(self, batch: Batch, *, explain: bool = False) -> Scored:
        if not len(batch):
            return Scored([])
        return await adrive(self.steps(batch, explain), explain)

    run_batch = AsyncReward.run_batch
    score_batch = AsyncReward.score_batch


def _union(lists: Iterable[Iterable[str]]) -> list[str]:
    out: list[str] = []
    for names in lists:
        out.extend(n for n in names if n not in out)
    return out


def results_of(scored: Scored) -> list[RewardResult]:
    """The values of an ``explain`` result as :class:`RewardResult` objects (``None`` values as empty results)."""
    return [v if isinstance(v, RewardResult) else RewardResult(v) for v in scored.values]
