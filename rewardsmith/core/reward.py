"""The :class:`Reward` base class: TRL's reward-function signature, settings as dataclass fields, the engine.

Every reward is a picklable callable with TRL's reward-function signature::

    reward(prompts, completions, completion_ids=None, **columns) -> list[float | None]

There are four ways to get one (see :mod:`rewardsmith.core.functions` and
:mod:`rewardsmith.core.async_reward` for the function and async forms):

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

import dataclasses
import functools
import inspect
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from rewardsmith.core.engine import OnError, Runtime, map_inline, run_inline, validate_engine_settings
from rewardsmith.core.errors import RewardConfigError, RewardExecutionError, RewardReturnError
from rewardsmith.core.injection import Injection
from rewardsmith.core.inputs import Batch
from rewardsmith.core.pickling import dumps_for_worker, file_modules
from rewardsmith.core.result import Failure, NonFiniteScore, RewardResult, to_result, to_score, to_scores

__all__ = ["ENGINE_SETTINGS", "Reward", "snake_case"]

R = TypeVar("R", bound="Reward")

#: Settings every reward has, handled by the execution engine.
ENGINE_SETTINGS = ("timeout", "workers", "on_error")
_ENGINE_FIELDS = (*ENGINE_SETTINGS, "max_concurrency")  # async rewards add max_concurrency

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
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in _ENGINE_FIELDS}

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
