"""The :class:`Reward` contract and the ways to write one.

Every reward is a picklable callable with TRL's reward-function signature::

    reward(prompts, completions, completion_ids=None, **columns) -> list[float | None]

There are four ways to get one:

* ``@reward`` on a per-sample function (parameters injected by name);
* a ``Reward`` subclass: a dataclass whose fields are its settings, with a
  per-sample ``score`` method (parameters injected by name, like ``@reward``)
  or a batch ``score_batch(batch)`` method;
* a plain TRL batch function ``f(completions, **kwargs) -> list``, accepted
  as-is by :func:`to_reward` (and so everywhere a reward is accepted);
* ``@reward_function`` for reward-kit style functions
  (:mod:`rewardsmith.integrations.reward_kit`).

``async def`` functions and ``async def score`` methods give async rewards,
which TRL awaits concurrently with its other async rewards.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import math
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from rewardsmith.core.engine import OnError, Runtime, map_inline, run_inline, validate_engine_settings
from rewardsmith.core.errors import RewardConfigError, RewardExecutionError, RewardReturnError
from rewardsmith.core.injection import Injection
from rewardsmith.core.inputs import Batch
from rewardsmith.core.pickling import dumps_for_worker, file_modules, function_ref, resolve_function_ref
from rewardsmith.core.result import Failure, NonFiniteScore, RewardResult, to_result, to_score, to_scores

__all__ = [
    "ENGINE_SETTINGS",
    "AsyncFunctionReward",
    "AsyncReward",
    "BatchFunctionReward",
    "FunctionReward",
    "Reward",
    "reward",
    "run_sync",
    "to_reward",
]

R = TypeVar("R", bound="Reward")

#: Settings every reward has, handled by the execution engine.
ENGINE_SETTINGS = ("timeout", "workers", "on_error")

_INF, _NEG_INF = math.inf, -math.inf
_SNAKE = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z0-9])(?=[A-Z][a-z])")


def snake_case(name: str) -> str:
    """``GSM8KAccuracy`` -> ``gsm8k_accuracy``, the default reward name of a class.

    >>> snake_case("ThinkFormat"), snake_case("JSONSchema"), snake_case("GSM8KAccuracy")
    ('think_format', 'json_schema', 'gsm8k_accuracy')
    """
    return _SNAKE.sub("_", name).lower()


@dataclass(kw_only=True, eq=False)
class Reward:
    """Base class of every reward: TRL's reward-function signature, settings as dataclass fields.

    Subclasses are dataclasses (decorate them with ``@dataclass``) whose
    fields are their settings, and implement either ``score`` (one sample;
    its parameters are injected by name like ``@reward``'s) or
    ``score_batch`` (the whole :class:`~rewardsmith.core.inputs.Batch`).

    Engine settings, shared by every reward:

    * ``timeout``: seconds per sample. The sample runs in a worker process
      that is killed when the time is up, so even an endless loop returns
      (``None``) within the timeout plus about a second.
    * ``workers``: score samples on this many worker processes.
    * ``on_error``: what a sample that raises, times out or crashes scores:
      ``"none"`` (default; not scored, and logged), ``"zero"``, or ``"raise"``.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class MaxLength(Reward):
    ...     max_chars: int = 10
    ...     def score(self, completion: str) -> float:
    ...         return 1.0 if len(completion) <= self.max_chars else 0.0
    >>> r = MaxLength(max_chars=5)
    >>> r.name, r(prompts=["p", "p"], completions=["short", "far too long"])
    ('max_length', [1.0, 0.0])
    """

    timeout: float | None = None
    workers: int = 1
    on_error: OnError = "none"

    #: The name TRL logs (``rewards/<name>/mean``); defaults to the class name in snake_case.
    default_name: ClassVar[str | None] = None
    #: Per-sample parameters whose dataset column is named by a setting, e.g.
    #: ``{"reference": "answer_column"}``: ``score(reference=...)`` reads the column
    #: that the ``answer_column`` setting names.
    column_settings: ClassVar[dict[str, str]] = {}
    #: The scores this reward can give, when known (``None`` for "not applicable" aside).
    score_range: ClassVar[tuple[float, float] | None] = None

    # -- identity ---------------------------------------------------------------------------

    def __post_init__(self) -> None:
        cls = type(self)
        if "__dataclass_fields__" not in cls.__dict__ and _own_settings(cls):
            raise TypeError(
                f"{cls.__name__} declares settings ({', '.join(_own_settings(cls))}) but is not a dataclass; "
                f"decorate it with @dataclass so that its settings are fields"
            )
        validate_engine_settings(self.name, self.timeout, self.workers, self.on_error)

    @property
    def name(self) -> str:
        """The reward's name: what TRL logs and what reports show."""
        return self.__dict__.get("_name") or self.default_name or snake_case(type(self).__name__)

    @property
    def __name__(self) -> str:  # TRL names reward functions by ``__name__``
        return self.name

    def named(self: R, name: str) -> R:
        """A copy of this reward under another name (what TRL logs it as).

        >>> from rewardsmith import reward
        >>> @reward
        ... def brevity(completion: str) -> float:
        ...     return 1.0 if len(completion) < 20 else 0.0
        >>> brevity.named("short_answers").name
        'short_answers'
        """
        if not isinstance(name, str) or not name.strip():
            raise RewardConfigError(f"a reward name must be a non-empty string, got {name!r}")
        clone = self._clone()
        clone.__dict__["_name"] = name
        return clone

    def configure(self: R, **settings: Any) -> R:
        """A copy of this reward with some settings changed.

        >>> from rewardsmith import reward
        >>> @reward
        ... def brevity(completion: str, max_chars: int = 200) -> float:
        ...     return float(len(completion) <= max_chars)
        >>> strict = brevity.configure(max_chars=5, on_error="zero")
        >>> strict.on_error, strict(completions=["hello!"])
        ('zero', [0.0])
        """
        return self._clone(**settings)

    def _clone(self: R, **changes: Any) -> R:
        known = {f.name for f in dataclasses.fields(self) if f.init}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise RewardConfigError(self._unknown_setting_message(unknown[0], sorted(known)))
        clone = dataclasses.replace(self, **changes)
        if "_name" in self.__dict__:
            clone.__dict__["_name"] = self.__dict__["_name"]
        return clone

    def _unknown_setting_message(self, setting: str, known: Sequence[str]) -> str:
        own = [k for k in known if k not in ENGINE_SETTINGS]
        return (
            f"reward {self.name!r} has no setting {setting!r}. Its settings are: {', '.join(own) or 'none'}; "
            f"engine settings: {', '.join(ENGINE_SETTINGS)}"
        )

    @property
    def settings(self) -> dict[str, Any]:
        """The reward's own settings and their values (engine settings excluded)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ENGINE_SETTINGS}

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_rt", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    # -- authoring hooks ----------------------------------------------------------------------

    def score(self, *args: Any, **kwargs: Any) -> Any:
        """Score one sample. Override this, or :meth:`score_batch`."""
        raise NotImplementedError(
            f"{type(self).__name__} must implement score(self, completion, ...) for one sample "
            "or score_batch(self, batch) for a whole batch"
        )

    def score_batch(self, batch: Batch) -> Sequence[Any]:
        """Score a whole batch; by default, each sample with :meth:`score` through the engine."""
        if self.timeout is None and self.workers <= 1:
            columns = self.injection.positional_columns(batch)
            if columns is not None:
                fn = self._sample_callable()
                bound = self._bound_settings()
                if bound:
                    fn = functools.partial(fn, **bound)
                return map_inline(fn, columns, raise_errors=self.on_error == "raise", name=self.name)
        return self.run_samples(self.injection.rows(batch))

    def _sample_callable(self) -> Callable[..., Any]:
        """The per-sample callable whose parameters are injected."""
        return self.score

    def affinity(self, row: dict[str, Any]) -> Any:
        """A key for scoring ``row`` on the same worker as other rows with that key (``None``: no preference).

        Rewards that cache per-reference work (parsing a reference answer)
        return the reference, so a prompt group's completions share a worker.
        """
        return None

    def prepare_worker(self) -> None:
        """Called once in each worker process before it takes samples; import heavy libraries here.

        Work done here does not count against the first sample's ``timeout``.
        """

    def _bound_settings(self) -> dict[str, Any]:
        """Values bound to per-sample parameters regardless of the data."""
        return {}

    def _extra_inputs(self) -> dict[str, Callable[[Batch], list[Any]]]:
        """Injectable inputs beyond the built-in ones (name -> values from a batch)."""
        return {}

    def _to_result(self, raw: Any) -> RewardResult:
        return to_result(raw, self.name)

    def _to_score(self, raw: Any) -> float | None:
        return to_score(raw, self.name)

    # -- introspection -----------------------------------------------------------------------

    def _runtime(self) -> Runtime:
        rt = self.__dict__.get("_rt")
        if rt is None:
            rt = self.__dict__["_rt"] = Runtime()
        return rt

    @property
    def injection(self) -> Injection:
        """How the per-sample parameters are filled (computed once per reward object)."""
        rt = self._runtime()
        if rt.injection is None:
            rt.injection = Injection(
                self._sample_callable(),
                reward_name=self.name,
                bound=self._bound_settings(),
                extra_inputs=self._extra_inputs(),
                renames={param: getattr(self, setting) for param, setting in self.column_settings.items()},
            )
        return rt.injection

    @property
    def required_columns(self) -> list[str]:
        """Dataset columns this reward cannot score without."""
        if self._is_batch_reward():
            return list(getattr(self, "columns", ()))
        return self.injection.required_columns

    @property
    def optional_columns(self) -> list[str]:
        """Dataset columns this reward reads when they are present."""
        if self._is_batch_reward():
            return []
        return self.injection.optional_columns

    def _is_batch_reward(self) -> bool:
        """Whether this reward scores whole batches itself (no per-sample ``score``)."""
        return type(self).score_batch is not Reward.score_batch and type(self).score is Reward.score

    @property
    def stats(self) -> dict[str, int]:
        """Samples scored, errors, timeouts and worker crashes so far (in this process)."""
        return self._runtime().stats()

    # -- running ---------------------------------------------------------------------------

    def run_samples(self, rows: list[dict[str, Any]]) -> list[Any]:
        """Score one sample per row of keyword arguments, through the engine.

        In this process when there is no ``timeout`` and one worker; otherwise
        in worker processes. Failed samples come back as ``Failure`` objects.
        """
        if not rows:
            return []
        if self.timeout is None and self.workers <= 1:
            return run_inline(self._sample_callable(), rows, raise_errors=self.on_error == "raise", name=self.name)
        keys = None
        if self.workers > 1 and type(self).affinity is not Reward.affinity:
            keys = [self.affinity(row) for row in rows]
        return self._pool().map(rows, self.timeout, keys)

    def _pool(self) -> Any:
        rt = self._runtime()
        with rt.lock:
            if rt.pool is None or rt.pool.closed:
                from rewardsmith.core.pool import WorkerPool

                try:
                    payload = dumps_for_worker(self)
                except Exception as exc:
                    raise RewardConfigError(
                        f"reward {self.name!r} uses timeout/workers, so it runs in worker processes and must be "
                        f"picklable, but pickling failed: {exc}"
                    ) from exc
                rt.pool = WorkerPool(payload, self.workers, self.name, file_modules())
            return rt.pool

    def close(self) -> None:
        """Stop this reward's worker processes, if it has any (they also stop at exit)."""
        rt = self.__dict__.get("_rt")
        if rt is not None and rt.pool is not None:
            rt.pool.close()
            rt.pool = None

    def _safe_score_batch(self, batch: Batch) -> list[Any]:
        try:
            values = self.score_batch(batch)
        except (RewardConfigError, RewardReturnError, RewardExecutionError, KeyboardInterrupt):
            raise
        except BaseException as exc:
            if self.on_error == "raise":
                raise
            from rewardsmith.core.sample import failure_from_exception

            failure = failure_from_exception(exc, with_traceback=False)
            return [failure] * len(batch)
        return to_scores(values, len(batch), self.name)

    def _finish(self, batch: Batch, values: list[Any], rich: bool) -> list[Any]:
        """Normalise values, apply ``on_error`` to failures, count and log them."""
        if not rich:
            scores = _all_scored(values)
            if scores is not None:
                self._runtime().account(
                    self.name, self.on_error, [], len(values), batch.log_metric, self.timeout is not None
                )
                return scores
        if rich:
            convert = self._to_result
        elif type(self)._to_score is Reward._to_score:
            convert = functools.partial(to_score, reward_name=self.name)
        else:
            convert = self._to_score
        failures: list[tuple[int, Failure]] = []
        out: list[Any] = []
        append = out.append
        for index, value in enumerate(values):
            if not rich and type(value) is float and value == value and _NEG_INF < value < _INF:
                append(value)
                continue
            if not isinstance(value, Failure):
                try:
                    append(convert(value))
                    continue
                except NonFiniteScore as exc:
                    value = Failure("error", str(exc), "NonFiniteScore")
            failures.append((index, value))
            append(self._failed_value(value, rich))
        self._runtime().account(
            self.name, self.on_error, failures, len(values), batch.log_metric, self.timeout is not None
        )
        return out

    def _failed_value(self, failure: Failure, rich: bool) -> Any:
        score = 0.0 if self.on_error == "zero" else None
        if rich:
            return RewardResult(score, f"{failure.kind}: {failure.message}", {}, failure.message)
        return score

    def __call__(
        self, prompts: Any = None, completions: Any = None, completion_ids: Any = None, **kwargs: Any
    ) -> list[float | None]:
        """Score a batch the way TRL calls reward functions: one float (or ``None``) per completion."""
        batch = Batch.from_call(prompts, completions, completion_ids, kwargs, self.name)
        if not len(batch):
            return []
        return self._finish(batch, self._safe_score_batch(batch), rich=False)

    def explain(
        self, prompts: Any = None, completions: Any = None, completion_ids: Any = None, **kwargs: Any
    ) -> list[RewardResult]:
        """Like calling the reward, but one :class:`RewardResult` (score, reason, metrics) per completion.

        >>> from rewardsmith import reward, RewardResult
        >>> @reward
        ... def exact(completion: str, answer: str) -> RewardResult:
        ...     ok = completion.strip() == answer
        ...     return RewardResult(float(ok), "matches" if ok else f"expected {answer!r}")
        >>> [r.reason for r in exact.explain(completions=["4", "5"], answer=["4", "4"])]
        ['matches', "expected '4'"]
        """
        batch = Batch.from_call(prompts, completions, completion_ids, kwargs, self.name)
        if not len(batch):
            return []
        return self._finish(batch, self._safe_score_batch(batch), rich=True)

    def check(self, completion: Any, prompt: Any = None, **columns: Any) -> RewardResult:
        """Score a single completion (each column given as one value) and say why.

        >>> from rewardsmith import reward
        >>> @reward
        ... def ends_with_answer(completion: str, answer: str) -> bool:
        ...     return completion.rstrip(". ").endswith(answer)
        >>> ends_with_answer.check("... so the answer is 18.", answer="18")
        RewardResult(score=1.0, reason='', metrics={}, error=None)
        """
        results = self.explain(
            None if prompt is None else [prompt],
            [completion],
            None,
            **{k: [v] for k, v in columns.items()},
        )
        return results[0]


def _all_scored(values: list[Any]) -> list[float | None] | None:
    """The scores, when every value is already a finite float or a ``RewardResult`` (the common cases).

    Checked for the whole batch at once (C-level ``map``/``set``/``sum``): an
    inf or NaN float makes the sum non-finite and sends the batch down the
    per-value path. ``RewardResult`` scores are normalised when made.
    """
    kinds = set(map(type, values))
    if kinds == {float}:
        return list(values) if math.isfinite(sum(values)) else None
    if kinds == {RewardResult}:
        return [v.score for v in values]
    return None


def _own_settings(cls: type) -> list[str]:
    annotations = inspect.get_annotations(cls)
    return [k for k, v in annotations.items() if "ClassVar" not in str(v)]


@dataclass(kw_only=True, eq=False)
class AsyncReward(Reward):
    """A reward whose per-sample ``score`` is ``async def`` (LLM judges, remote services).

    TRL awaits async reward functions concurrently with each other; within a
    batch, samples run concurrently up to ``max_concurrency``. ``timeout``
    applies per sample (cooperatively: code that blocks the event loop cannot
    be interrupted). Use ``await reward(...)`` inside an event loop, or
    ``reward.explain(...)`` from synchronous code.
    """

    max_concurrency: int = 32

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.workers != 1:
            raise RewardConfigError(
                f"reward {self.name!r} is async: its samples run concurrently in one process, so workers does "
                "not apply; use max_concurrency to bound how many run at once"
            )
        if (
            isinstance(self.max_concurrency, bool)
            or not isinstance(self.max_concurrency, int)
            or self.max_concurrency < 1
        ):
            raise RewardConfigError(f"reward {self.name!r}: max_concurrency must be >= 1, got {self.max_concurrency!r}")

    async def score(self, *args: Any, **kwargs: Any) -> Any:
        """Score one sample. Override this, or :meth:`ascore_batch`."""
        raise NotImplementedError(f"{type(self).__name__} must implement async def score(self, completion, ...)")

    def _is_batch_reward(self) -> bool:
        return type(self).ascore_batch is not AsyncReward.ascore_batch and type(self).score is AsyncReward.score

    async def ascore_batch(self, batch: Batch) -> Sequence[Any]:
        """Score a whole batch; by default each sample with :meth:`score`, concurrently."""
        return await self.arun_samples(self.injection.rows(batch))

    def score_batch(self, batch: Batch) -> Sequence[Any]:
        return run_sync(self.ascore_batch(batch))

    async def arun_samples(self, rows: list[dict[str, Any]]) -> list[Any]:
        """Run the per-sample coroutine for every row, at most ``max_concurrency`` at a time."""
        from rewardsmith.core.sample import failure_from_exception

        fn = self._sample_callable()
        semaphore = asyncio.Semaphore(self.max_concurrency)
        raise_errors = self.on_error == "raise"
        timeout = self.timeout

        async def one(index: int, row: dict[str, Any]) -> Any:
            async with semaphore:
                task = asyncio.ensure_future(fn(**row))
                done, _ = await asyncio.wait({task}, timeout=timeout)
                if not done:
                    task.cancel()
                    return Failure("timeout", f"timed out after {timeout:g}s", "Timeout")
                try:
                    return task.result()
                except (RewardReturnError, RewardConfigError, KeyboardInterrupt):
                    raise
                except BaseException as exc:
                    if raise_errors:
                        raise
                    return failure_from_exception(exc, with_traceback=False)

        return list(await asyncio.gather(*(one(i, row) for i, row in enumerate(rows))))

    async def _asafe_score_batch(self, batch: Batch) -> list[Any]:
        try:
            values = await self.ascore_batch(batch)
        except (RewardConfigError, RewardReturnError, RewardExecutionError, KeyboardInterrupt):
            raise
        except BaseException as exc:
            if self.on_error == "raise":
                raise
            from rewardsmith.core.sample import failure_from_exception

            return [failure_from_exception(exc, with_traceback=False)] * len(batch)
        return to_scores(values, len(batch), self.name)

    async def __call__(  # type: ignore[override]
        self, prompts: Any = None, completions: Any = None, completion_ids: Any = None, **kwargs: Any
    ) -> list[float | None]:
        batch = Batch.from_call(prompts, completions, completion_ids, kwargs, self.name)
        if not len(batch):
            return []
        return self._finish(batch, await self._asafe_score_batch(batch), rich=False)

    async def aexplain(
        self, prompts: Any = None, completions: Any = None, completion_ids: Any = None, **kwargs: Any
    ) -> list[RewardResult]:
        """The async form of :meth:`Reward.explain`."""
        batch = Batch.from_call(prompts, completions, completion_ids, kwargs, self.name)
        if not len(batch):
            return []
        return self._finish(batch, await self._asafe_score_batch(batch), rich=True)

    def explain(
        self, prompts: Any = None, completions: Any = None, completion_ids: Any = None, **kwargs: Any
    ) -> list[RewardResult]:
        return run_sync(self.aexplain(prompts, completions, completion_ids, **kwargs))


def run_sync(coro: Any) -> Any:
    """Run a coroutine to completion from synchronous code, even inside a running event loop.

    Outside an event loop this is ``asyncio.run``; inside one (a notebook, TRL's
    async reward thread) the coroutine runs on a fresh loop in a helper thread.

    >>> import asyncio
    >>> async def two():
    ...     await asyncio.sleep(0)
    ...     return 2
    >>> run_sync(two())
    2
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, name="rewardsmith-async")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


# -- function rewards -----------------------------------------------------------------------------


def _rebuild_function_reward(cls: type, ref: Any, state: dict[str, Any]) -> Any:
    fn = resolve_function_ref(ref[1], ref[2]) if isinstance(ref, tuple) and ref[:1] == ("ref",) else ref
    name = state.pop("_name", None)
    obj = cls(fn, **state)
    if name:
        obj.__dict__["_name"] = name
    return obj


class _FunctionMixin:
    """What per-sample function rewards share, sync or async."""

    fn: Callable[..., Any]
    bound: dict[str, Any]

    def _init_function(self) -> None:
        self.__doc__ = getattr(self.fn, "__doc__", None)
        self.__module__ = getattr(self.fn, "__module__", None)  # type: ignore[assignment]
        self.__wrapped__ = self.fn
        self.injection  # noqa: B018 - validate bound settings against the signature now

    @property
    def name(self) -> str:
        return self.__dict__.get("_name") or getattr(self.fn, "__name__", None) or type(self.fn).__name__

    def _sample_callable(self) -> Callable[..., Any]:
        return self.fn

    def _bound_settings(self) -> dict[str, Any]:
        return self.bound

    @property
    def settings(self) -> dict[str, Any]:
        defaults = {
            p.name: p.default
            for p in inspect.signature(self.fn).parameters.values()
            if p.default is not p.empty and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
        }
        return {**defaults, **self.bound}

    def configure(self, **settings: Any) -> Any:
        engine = {k: v for k, v in settings.items() if k in self._engine_fields()}
        bound = {k: v for k, v in settings.items() if k not in engine}
        return self._clone(bound={**self.bound, **bound}, **engine)

    def _engine_fields(self) -> set[str]:
        return {f.name for f in dataclasses.fields(self) if f.name not in ("fn", "bound")}  # type: ignore[arg-type]

    def __getstate__(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "fn"}  # type: ignore[arg-type]

    def __reduce__(self) -> Any:
        state = self.__getstate__()
        if "_name" in self.__dict__:
            state["_name"] = self.__dict__["_name"]
        return (_rebuild_function_reward, (type(self), function_ref(self.fn), state))

    def __repr__(self) -> str:
        parts = [getattr(self.fn, "__qualname__", repr(self.fn))]
        parts += [f"{k}={v!r}" for k, v in self.bound.items()]
        parts += [
            f"{k}={getattr(self, k)!r}" for k in sorted(self._engine_fields()) if getattr(self, k) != _DEFAULTS.get(k)
        ]
        return f"{type(self).__name__}({', '.join(parts)})"


_DEFAULTS: dict[str, Any] = {"timeout": None, "workers": 1, "on_error": "none", "max_concurrency": 32}


@dataclass(eq=False, repr=False)
class FunctionReward(_FunctionMixin, Reward):
    """A per-sample function as a reward; what ``@reward`` returns."""

    fn: Callable[..., Any]
    bound: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        self._init_function()


@dataclass(eq=False, repr=False)
class AsyncFunctionReward(_FunctionMixin, AsyncReward):
    """An ``async def`` per-sample function as a reward; what ``@reward`` returns for coroutines."""

    fn: Callable[..., Any]
    bound: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        self._init_function()


def _callable_name(fn: Any) -> str:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return getattr(fn, "__name__", None) or type(fn).__name__


@dataclass(eq=False)
class BatchFunctionReward(Reward):
    """A plain TRL reward function ``f(completions, **kwargs) -> list`` as a reward.

    The function is called exactly as TRL would call it (same arguments,
    untouched); rewardsmith adds return-value normalisation, ``on_error``,
    error counting and a name.

    >>> def short(completions, **kwargs):
    ...     return [1.0 if len(c) < 5 else 0.0 for c in completions]
    >>> r = to_reward(short)
    >>> r.name, r(prompts=["p", "p"], completions=["ok", "too long"])
    ('short', [1.0, 0.0])
    """

    fn: Callable[..., Any]

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.timeout is not None or self.workers != 1:
            raise RewardConfigError(
                f"reward {self.name!r} is a batch function: it scores a whole batch in one call, so the per-sample "
                "settings timeout and workers do not apply. Write it per sample with @reward to use them."
            )

    @property
    def name(self) -> str:
        return self.__dict__.get("_name") or _callable_name(self.fn)

    def score_batch(self, batch: Batch) -> Sequence[Any]:
        prompts = batch.prompts if batch.prompts is not None else [""] * len(batch)
        return self.fn(
            prompts=prompts, completions=batch.completions, completion_ids=batch.completion_ids, **batch.kwargs()
        )


@dataclass(eq=False)
class AsyncBatchFunctionReward(AsyncReward):
    """An ``async def f(completions, **kwargs)`` TRL reward function as a reward."""

    fn: Callable[..., Any]

    @property
    def name(self) -> str:
        return self.__dict__.get("_name") or _callable_name(self.fn)

    async def ascore_batch(self, batch: Batch) -> Sequence[Any]:
        prompts = batch.prompts if batch.prompts is not None else [""] * len(batch)
        coro = self.fn(
            prompts=prompts, completions=batch.completions, completion_ids=batch.completion_ids, **batch.kwargs()
        )
        if self.timeout is None:
            return await coro
        return await asyncio.wait_for(coro, self.timeout)


# -- the decorator and the converter --------------------------------------------------------------


def reward(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    timeout: float | None = None,
    workers: int = 1,
    on_error: OnError = "none",
    max_concurrency: int | None = None,
) -> Any:
    """Make a reward from a per-sample function; its parameters are filled by name.

    Parameters the function can ask for: ``completion`` (the text),
    ``prompt`` (the prompt's text; the last user message of a conversation),
    ``messages`` (prompt and completion as chat messages), ``prompt_messages``,
    ``completion_messages``, ``completion_ids``, ``trainer_state``, and any
    dataset column by its name. A column parameter without a default is
    required: calling the reward on data without it is a clear error. A
    ``**kwargs`` parameter receives all other columns. The function returns a
    float, a bool, ``None`` (not applicable) or a :class:`RewardResult`.

    Settings: any parameter with a default can be fixed with
    ``.configure(param=value)``; engine settings (``timeout``, ``workers``,
    ``on_error``, and ``max_concurrency`` for ``async def`` functions) can be
    given here or there.

    >>> @reward
    ... def brevity(completion: str, max_chars: int = 200) -> float:
    ...     return 1.0 if len(completion) <= max_chars else max_chars / len(completion)
    >>> brevity(prompts=["Say hi", "Say hi"], completions=["hi", "h" * 400])
    [1.0, 0.5]
    >>> brevity.configure(max_chars=100)(prompts=["Say hi"], completions=["h" * 400])
    [0.25]
    """

    def wrap(f: Callable[..., Any]) -> Reward:
        if isinstance(f, Reward):
            raise RewardConfigError(f"{f.name!r} is already a reward")
        engine: dict[str, Any] = {"timeout": timeout, "workers": workers, "on_error": on_error}
        if inspect.iscoroutinefunction(f):
            if max_concurrency is not None:
                engine["max_concurrency"] = max_concurrency
            made: Reward = AsyncFunctionReward(f, **engine)
        else:
            if max_concurrency is not None:
                raise RewardConfigError(
                    f"max_concurrency applies to async def rewards only; {f.__name__!r} is not async"
                )
            made = FunctionReward(f, **engine)
        return made.named(name) if name else made

    return wrap(fn) if fn is not None else wrap


def is_async_callable(obj: Any) -> bool:
    """Whether calling ``obj`` gives a coroutine: an ``async def`` function, or an object with an async ``__call__``."""
    while isinstance(obj, functools.partial):
        obj = obj.func
    return inspect.iscoroutinefunction(obj) or (callable(obj) and inspect.iscoroutinefunction(obj.__call__))


_BATCH_PARAMS = {"completions", "prompts"}
_SAMPLE_PARAMS = {"completion", "messages", "completion_messages"}


def callable_kind(obj: Any) -> str:
    """How a plain callable wants to be called: ``"batch"``, ``"sample"`` or ``"factory"``.

    A TRL reward function takes ``completions`` (or only ``**kwargs``); a
    per-sample function takes ``completion`` or ``messages``; anything else
    is taken to be a factory that returns a reward when called with settings.

    >>> callable_kind(lambda completions, **kw: [])
    'batch'
    >>> callable_kind(lambda completion: 1.0)
    'sample'
    >>> callable_kind(lambda threshold=0.5: None)
    'factory'
    """
    try:
        params = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return "batch"
    names = set(params)
    if names & _BATCH_PARAMS:
        return "batch"
    if names & _SAMPLE_PARAMS:
        return "sample"
    kinds = {p.kind for p in params.values()}
    required = [p for p in params.values() if p.default is p.empty and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    if inspect.Parameter.VAR_KEYWORD in kinds and not required:
        return "batch"
    return "factory"


def to_reward(obj: Any) -> Reward:
    """Anything accepted as a reward, as a :class:`Reward`.

    Accepts a ``Reward``, a ``Reward`` subclass (instantiated with its
    defaults), a registered name or import path (see
    :func:`~rewardsmith.get_reward`), a TRL batch function, or a per-sample
    function.

    >>> to_reward(lambda completion: len(completion) > 3)(prompts=["p"], completions=["long"])
    [1.0]
    """
    if isinstance(obj, Reward):
        return obj
    if isinstance(obj, str):
        from rewardsmith.core.registry import get_reward

        return get_reward(obj)
    if isinstance(obj, type) and issubclass(obj, Reward):
        return obj()
    if not callable(obj):
        raise RewardConfigError(
            f"{obj!r} is not a reward: pass a Reward, a registered name, a TRL reward function "
            "f(completions, **kwargs) or a per-sample function f(completion, ...)"
        )
    kind = callable_kind(obj)
    is_async = is_async_callable(obj)
    if kind == "batch":
        return AsyncBatchFunctionReward(obj) if is_async else BatchFunctionReward(obj)
    if kind == "sample":
        return reward(obj)
    raise RewardConfigError(
        f"cannot tell how to call {_callable_name(obj)!r} as a reward: a TRL reward function takes "
        "`completions` and **kwargs, a per-sample function takes `completion` or `messages`. "
        "If it is a factory, call it (or name it in the registry, which calls it with the settings)."
    )
