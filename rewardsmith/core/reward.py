"""The :class:`Reward` base class: TRL's reward-function signature, settings as dataclass fields.

Every reward is a picklable callable with TRL's reward-function signature::

    reward(prompts, completions, completion_ids=None, **columns) -> list[float | None]

There are four ways to get one (see :mod:`rewardsmith.core.functions` and
:mod:`rewardsmith.core.async_reward` for the function and async forms):

* ``@reward`` on a per-sample function (parameters injected by name);
* a ``Reward`` subclass: a dataclass whose fields are its settings, with a
  per-sample ``score`` method (parameters injected by name, like ``@reward``)
  or a batch ``score_batch(batch)`` method;
* a plain TRL batch function ``f(completions, **kwargs) -> list``, accepted
  as-is by :func:`~rewardsmith.get_reward` (and so everywhere a reward is accepted);
* ``@reward_function`` for reward-kit style functions
  (:mod:`rewardsmith.integrations.reward_kit`).

A reward's jobs, and where each is done:

* identity and settings (this class): its ``name``, its dataclass fields,
  ``configure``, ``named``, pickling;
* input injection (:mod:`rewardsmith.core.injection`): what each parameter of
  ``score`` is filled with, and so which columns the reward reads;
* dispatch to the engine (:mod:`rewardsmith.core.engine`,
  :mod:`rewardsmith.core.pool`): in this process, or in worker processes with
  hard timeouts, and what failures score;
* statistics (:mod:`rewardsmith.core.stats`): samples, errors and timeouts,
  logged through TRL.

The methods a subclass may override (the extension points) are ``score`` or
``score_batch``, :meth:`Reward.inputs`, :meth:`Reward.sample_function`,
:meth:`Reward.to_result`, :meth:`Reward.affinity`, :meth:`Reward.prepare_worker`
and the ``default_name`` and ``score_range`` class attributes. Rewards made of
other rewards subclass :class:`~rewardsmith.core.composite.Composite`.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from rewardsmith.core.engine import (
    ON_ERROR_DEFAULT,
    OnError,
    Runtime,
    Scored,
    is_default_setting,
    map_inline,
    run_inline,
    score_safely,
    validate_engine_settings,
)
from rewardsmith.core.engine import finish as finish_values
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.injection import Injection, Input
from rewardsmith.core.inputs import Batch
from rewardsmith.core.pickling import dumps_for_worker, file_modules
from rewardsmith.core.result import RewardResult, to_result
from rewardsmith.core.stats import RewardStats

__all__ = ["ENGINE_SETTINGS", "Reward", "snake_case"]

R = TypeVar("R", bound="Reward")

#: Settings every reward has, handled by the execution engine.
ENGINE_SETTINGS = ("timeout", "workers", "on_error", "engine")
_ENGINE_FIELDS = (*ENGINE_SETTINGS, "max_concurrency", "on")  # async rewards add max_concurrency

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
    * ``engine``: where samples run when they leave this process: ``"local"``
      (default; worker subprocesses when there is a ``timeout`` or
      ``workers > 1``), or an engine a plug-in registers, such as ``"ray"``
      (``workers`` Ray actors; see :mod:`rewardsmith.core.engines`).

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
    on_error: OnError = ON_ERROR_DEFAULT
    engine: str = "local"
    #: What ``completion`` (or ``solution_str``) holds: the ``"final"`` message's text, ``"all"`` the assistant
    #: text of a rollout, or ``"sequence"``: the prompt's text then the completion's (TinyZero's ``prompt + response``).
    on: str = "final"

    #: The name TRL logs (``rewards/<name>/mean``); defaults to the class name in snake_case.
    default_name: ClassVar[str | None] = None
    #: The scores this reward can give, when known (``None`` for "not applicable" aside).
    score_range: ClassVar[tuple[float, float] | None] = None

    # -- identity and settings -----------------------------------------------------------------

    def __post_init__(self) -> None:
        cls = type(self)
        if "__dataclass_fields__" not in cls.__dict__ and _own_settings(cls):
            raise TypeError(
                f"{cls.__name__} declares settings ({', '.join(_own_settings(cls))}) but is not a dataclass; "
                f"decorate it with @dataclass so that its settings are fields"
            )
        validate_engine_settings(self.name, self.timeout, self.workers, self.on_error, self.engine)

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
        clone = self.replace()
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
        return self.replace(**settings)

    def replace(self: R, **fields: Any) -> R:
        """A copy with some dataclass fields changed (the name kept); what :meth:`configure` does by default."""
        known = {f.name for f in dataclasses.fields(self) if f.init}
        unknown = sorted(set(fields) - known)
        if unknown:
            own = [k for k in sorted(known) if k not in ENGINE_SETTINGS]
            raise RewardConfigError(
                f"reward {self.name!r} has no setting {unknown[0]!r}. Its settings are: {', '.join(own) or 'none'}; "
                f"engine settings: {', '.join(ENGINE_SETTINGS)}"
            )
        clone = dataclasses.replace(self, **fields)
        if "_name" in self.__dict__:
            clone.__dict__["_name"] = self.__dict__["_name"]
        return clone

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

    # -- extension points ------------------------------------------------------------------------

    def score(self, *args: Any, **kwargs: Any) -> Any:
        """Score one sample. Override this, or :meth:`score_batch`."""
        raise NotImplementedError(
            f"{type(self).__name__} must implement score(self, completion, ...) for one sample "
            "or score_batch(self, batch) for a whole batch"
        )

    def score_batch(self, batch: Batch) -> Sequence[Any]:
        """Score a whole batch; by default, each sample with :meth:`score` through the engine."""
        if self.runs_inline:
            columns = self.injection.positional_columns(batch)
            if columns is not None:
                fn = self.sample_function()
                bound = self.injection.settings
                if bound:
                    fn = functools.partial(fn, **bound)
                return map_inline(fn, columns, raise_errors=self.on_error == "raise", name=self.name)
        return self.run_samples(self.injection.rows(batch))

    def inputs(self) -> dict[str, Input]:
        """Parameters of :meth:`score` filled from somewhere else than the column of their own name.

        Map a parameter to a :class:`~rewardsmith.core.injection.Column` (another
        column, with fallbacks), a :class:`~rewardsmith.core.injection.Value` or a
        :class:`~rewardsmith.core.injection.Computed` value. What is declared
        here is also what :attr:`required_columns` and :attr:`optional_columns`
        report. A batch reward (``score_batch``) declares the columns it reads
        here too, and reads them with ``self.injection.values(batch, name)``.

        >>> from dataclasses import dataclass
        >>> from rewardsmith.core.injection import Column
        >>> @dataclass
        ... class Exact(Reward):
        ...     answer_column: str = "answer"
        ...     def inputs(self):
        ...         return {"reference": Column(self.answer_column, "solution")}
        ...     def score(self, completion: str, reference: str) -> float:
        ...         return float(completion.strip() == reference)
        >>> exact = Exact()
        >>> exact.required_columns, exact.optional_columns
        (['answer'], ['solution'])
        >>> exact(completions=["4", "5"], solution=["4", "4"])
        [1.0, 0.0]
        """
        return {}

    def sample_function(self) -> Callable[..., Any]:
        """The per-sample callable whose parameters are injected (:meth:`score`, or a wrapped function)."""
        return self.score

    def to_result(self, raw: Any) -> RewardResult:
        """What one return value of :meth:`score` (or element of :meth:`score_batch`) means as a result.

        Override it for rewards that return their own result type (reward-kit's
        ``EvaluateResult``); the default accepts numbers, bools, ``None`` and
        :class:`RewardResult`.
        """
        return to_result(raw, self.name)

    def check_data(self, columns: dict[str, Sequence[Any]]) -> None:
        """Check a dataset's values before training; raise a :class:`~rewardsmith.DatasetError` naming bad rows.

        ``columns`` holds the dataset columns this reward reads (its
        ``inputs()``), by input name, one value per row. Called by
        :func:`~rewardsmith.compose.coverage` (and so by ``rewardsmith train``
        before any model loads). Override it when a value can be wrong in a
        way no sample could fix (an unknown constraint id in the data); the
        default checks nothing.
        """

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

    # -- input injection -------------------------------------------------------------------------

    @property
    def injection(self) -> Injection:
        """How the per-sample parameters are filled (computed once per reward object and process)."""
        rt = self._runtime()
        if rt.injection is None:
            fn = None if self.is_batch_reward() else self.sample_function()
            rt.injection = Injection(fn, reward_name=self.name, declared=self.inputs(), on=self.on)
        return rt.injection

    def is_batch_reward(self) -> bool:
        """Whether this reward scores whole batches itself (it overrides ``score_batch``, not ``score``)."""
        return type(self).score_batch is not Reward.score_batch and type(self).score is Reward.score

    @property
    def required_columns(self) -> list[str]:
        """Dataset columns this reward cannot score without (see :meth:`missing_columns` for fallbacks)."""
        return self.injection.required_columns

    @property
    def optional_columns(self) -> list[str]:
        """Dataset columns this reward reads when they are present."""
        return self.injection.optional_columns

    def missing_columns(self, columns: Iterable[str]) -> list[str]:
        """The required columns (each with its fallbacks) of which ``columns`` holds none.

        >>> from rewardsmith import get_reward
        >>> acc = get_reward("math_accuracy")
        >>> acc.missing_columns(["prompt", "solution"]), acc.missing_columns(["prompt"])
        ([], ['answer (or solution)'])
        """
        return self.injection.missing(columns)

    def missing_optional_columns(self, columns: Iterable[str]) -> list[str]:
        """The optional columns data with ``columns`` lacks (the reward then uses its defaults there).

        >>> from rewardsmith import get_reward
        >>> get_reward("llm_judge", model="m").missing_optional_columns(["prompt"])
        ['reference']
        """
        return self.injection.missing_optional(columns)

    # -- statistics ------------------------------------------------------------------------------

    def _runtime(self) -> Runtime:
        rt = self.__dict__.get("_rt")
        if rt is None:
            rt = self.__dict__["_rt"] = Runtime()
        return rt

    @property
    def stats(self) -> dict[str, int]:
        """Samples scored, errors, timeouts and worker crashes so far (in this process)."""
        return self._runtime().stats.as_dict()

    @property
    def counters(self) -> RewardStats:
        """The live counters behind :attr:`stats` (also unscored samples, the first failure, the last scores).

        >>> from rewardsmith import reward
        >>> @reward
        ... def picky(completion: str) -> float | None:
        ...     return None if completion == "?" else float(int(completion))
        >>> picky(completions=["1", "?", "x"])
        [1.0, None, None]
        >>> c = picky.counters
        >>> c.samples, c.nones, c.errors, c.first_failure.exc_type, c.last_scores
        (3, 2, 1, 'ValueError', [1.0, None, None])
        """
        return self._runtime().stats

    @property
    def on_error_explicit(self) -> bool:
        """Whether ``on_error`` was set on purpose (in code or a config) rather than left at its default.

        >>> from rewardsmith import get_reward
        >>> get_reward("think_format").on_error_explicit, get_reward("think_format", on_error="none").on_error_explicit
        (False, True)
        """
        return not is_default_setting(self.on_error)

    # -- dispatch to the engine ------------------------------------------------------------------

    @property
    def runs_inline(self) -> bool:
        """Whether samples are scored in this process: no ``timeout``, one worker, the local engine."""
        return self.timeout is None and self.workers <= 1 and self.engine == "local"

    def run_samples(self, rows: list[dict[str, Any]]) -> list[Any]:
        """Score one sample per row of keyword arguments, through the engine.

        In this process when :attr:`runs_inline`; otherwise on the pool of the
        reward's ``engine`` (worker processes, or Ray actors). Failed samples
        come back as ``Failure`` objects.
        """
        if not rows:
            return []
        if self.runs_inline:
            return run_inline(self.sample_function(), rows, raise_errors=self.on_error == "raise", name=self.name)
        keys = None
        if self.workers > 1 and type(self).affinity is not Reward.affinity:
            keys = [self.affinity(row) for row in rows]
        return self._pool().map(rows, self.timeout, keys)

    def _pool(self) -> Any:
        rt = self._runtime()
        with rt.lock:
            if rt.pool is None or rt.pool.closed:
                from rewardsmith.core.engines import pool_engine

                try:
                    payload = dumps_for_worker(self)
                except Exception as exc:
                    raise RewardConfigError(
                        f"reward {self.name!r} uses timeout/workers, so it runs in worker processes and must be "
                        f"picklable, but pickling failed: {exc}"
                    ) from exc
                rt.pool = pool_engine(self.engine).make_pool(payload, self.workers, self.name, file_modules())
            return rt.pool

    def close(self) -> None:
        """Stop this reward's worker processes, if it has any (they also stop at exit)."""
        rt = self.__dict__.get("_rt")
        if rt is not None and rt.pool is not None:
            rt.pool.close()
            rt.pool = None

    def finish(self, batch: Batch, values: list[Any], *, explain: bool = False) -> Scored:
        """Raw values of one batch as scores (or results), failures scored by ``on_error``, counted and logged."""
        convert = None if type(self).to_result is Reward.to_result else self.to_result
        return finish_values(
            values,
            explain=explain,
            to_result=convert,
            on_error=self.on_error,
            name=self.name,
            stats=self._runtime().stats,
            log_metric=batch.log_metric,
            log_timeouts=self.timeout is not None,
        )

    def run_batch(self, batch: Batch, *, explain: bool = False) -> Scored:
        """Score a batch: one score (or :class:`RewardResult`, with ``explain``) per row, and the rows that failed.

        What every way of calling a reward goes through; composites call it on
        their components.

        >>> from rewardsmith import get_reward
        >>> batch = Batch.from_call(None, ["<think>2+2</think><answer>4</answer>", "4"], None, {})
        >>> scored = get_reward("think_format").run_batch(batch)
        >>> scored.values, scored.failed
        ([1.0, 0.0], set())
        """
        if not len(batch):
            return Scored([])
        raw = score_safely(self.score_batch, batch, on_error=self.on_error, name=self.name)
        return self.finish(batch, raw, explain=explain)

    # -- calling ---------------------------------------------------------------------------------

    def __call__(
        self, prompts: Any = None, completions: Any = None, completion_ids: Any = None, **kwargs: Any
    ) -> list[float | None]:
        """Score a batch the way TRL calls reward functions: one float (or ``None``) per completion."""
        return self.run_batch(Batch.from_call(prompts, completions, completion_ids, kwargs, self.name)).values

    def scores(
        self, prompts: Any = None, completions: Any = None, completion_ids: Any = None, **kwargs: Any
    ) -> list[float | None]:
        """The scores of a batch, synchronously, whatever the reward (sync or async): for scripts and notebooks.

        TRL calls the reward itself (and awaits async ones concurrently); this
        is the same call for code that is not async. Inside a running event
        loop (a notebook) an async reward runs on a helper thread.

        >>> from rewardsmith import get_reward
        >>> get_reward("think_format").scores(completions=["<think>2+2</think><answer>4</answer>", "4"])
        [1.0, 0.0]
        """
        return self.run_batch(Batch.from_call(prompts, completions, completion_ids, kwargs, self.name)).values

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
        return self.run_batch(batch, explain=True).values

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


def _own_settings(cls: type) -> list[str]:
    annotations = inspect.get_annotations(cls)
    return [k for k, v in annotations.items() if "ClassVar" not in str(v)]
