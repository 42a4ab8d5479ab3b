"""The execution engine: how samples run, and what a batch of raw values becomes.

A reward's engine settings are ``timeout``, ``workers``, ``on_error`` and
``engine`` (plus ``max_concurrency`` for async rewards). This module holds the parts of
running a reward that do not depend on how it was written:

* :func:`run_inline` / :func:`map_inline` score samples in this process (no
  timeout, one worker); :class:`~rewardsmith.core.pool.WorkerPool` scores them
  in worker processes (a timeout, or several workers), or the pool of another
  engine (:mod:`rewardsmith.core.engines`, e.g. Ray actors);
* :func:`score_safely` calls a reward's batch scorer, so that an exception is
  a failure of every sample rather than a crash;
* :func:`finish` turns raw values into scores (or :class:`RewardResult`
  objects), applies ``on_error`` to failures, and counts them
  (:class:`~rewardsmith.core.stats.RewardStats`); the outcome is a
  :class:`Scored`;
* :class:`Runtime` keeps per-reward state that must not be pickled: the
  worker pool, the injection, the counters.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from rewardsmith.core.errors import RewardConfigError, RewardExecutionError, RewardReturnError, RewardsmithError
from rewardsmith.core.result import Failure, NonFiniteScore, RewardResult, dict_metrics, to_result, to_score, to_scores
from rewardsmith.core.sample import failure_from_exception
from rewardsmith.core.stats import RewardStats

__all__ = [
    "MAX_WORKERS",
    "ON_ERROR_CHOICES",
    "ON_ERROR_DEFAULT",
    "DefaultSetting",
    "OnError",
    "Runtime",
    "Scored",
    "finish",
    "is_default_setting",
    "map_inline",
    "run_inline",
    "score_safely",
    "validate_engine_settings",
]

OnError = Literal["none", "zero", "raise"]
ON_ERROR_CHOICES: tuple[str, ...] = ("none", "zero", "raise")
#: More workers than this is a mistake whatever the engine (a local pool also stops at the machine's CPUs).
MAX_WORKERS = 1024


class DefaultSetting(str):
    """A setting's value when nobody set it: equal to the plain value, but recognisably the default.

    ``on_error`` defaults to ``DefaultSetting("none")``, so that "left at the
    default" and "set to ``"none"`` on purpose" can be told apart (a training
    run stops on a reward that fails on every sample unless ``on_error`` was
    set on purpose).

    >>> ON_ERROR_DEFAULT == "none", is_default_setting(ON_ERROR_DEFAULT), is_default_setting("none")
    (True, True, False)
    """

    __slots__ = ()


#: ``on_error``'s default: ``"none"``, marked as not chosen by the user.
ON_ERROR_DEFAULT: OnError = DefaultSetting("none")  # type: ignore[assignment]


def is_default_setting(value: Any) -> bool:
    """Whether ``value`` is a setting left at its default (a :class:`DefaultSetting`)."""
    return type(value) is DefaultSetting


_INF, _NEG_INF = math.inf, -math.inf
_FLOAT_OR_NONE = frozenset({float, type(None)})


def validate_engine_settings(name: str, timeout: Any, workers: Any, on_error: Any, engine: Any = "local") -> None:
    """Raise a clear :class:`RewardConfigError` for impossible engine settings.

    ``engine`` must name a registered engine (:mod:`rewardsmith.core.engines`)
    that can run here.
    """
    if on_error not in ON_ERROR_CHOICES:
        raise RewardConfigError(
            f"reward {name!r}: on_error must be one of {', '.join(map(repr, ON_ERROR_CHOICES))}, got {on_error!r}"
        )
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        raise RewardConfigError(
            f"reward {name!r}: timeout must be a positive number of seconds or None, got {timeout!r}"
        )
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise RewardConfigError(f"reward {name!r}: workers must be a whole number >= 1, got {workers!r}")
    if workers > MAX_WORKERS:
        raise RewardConfigError(
            f"reward {name!r}: workers={workers} is more than {MAX_WORKERS}; a local pool runs at most one worker per "
            "usable CPU (and per sample of a batch), so set workers to the number of CPUs the reward may use"
        )
    if timeout is not None and not math.isfinite(timeout):
        raise RewardConfigError(f"reward {name!r}: timeout must be a finite number of seconds or None, got {timeout!r}")
    if engine != "local":
        from rewardsmith.core.engines import pool_engine

        try:
            pool_engine(engine).check()
        except RewardsmithError as exc:  # an unknown engine, or its extra is not installed
            raise RewardConfigError(f"reward {name!r}: {exc}") from None


@dataclass
class Scored:
    """What scoring one batch gives: a value per row, and which rows failed.

    ``values`` are floats or ``None`` (plain calls) or :class:`RewardResult`
    objects (``explain``). ``failed`` holds the rows whose ``None`` comes from
    a failure of scoring (an exception, a timeout, a crash, under
    ``on_error="none"``) rather than from the reward not applying: a composite
    must not treat those as "not applicable".
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


def _call_with_row(fn: Callable[..., Any], row: dict[str, Any]) -> Any:
    return fn(**row)


def run_inline(fn: Callable[..., Any], rows: list[dict[str, Any]], *, raise_errors: bool, name: str) -> list[Any]:
    """Call ``fn(**row)`` for each row in this process; exceptions become :class:`Failure` objects.

    With ``raise_errors`` the first exception propagates at once, with a note
    naming the reward and the sample.
    """
    return map_inline(functools.partial(_call_with_row, fn), [rows], raise_errors=raise_errors, name=name)


def map_inline(fn: Callable[..., Any], columns: list[list[Any]], *, raise_errors: bool, name: str) -> list[Any]:
    """Call ``fn`` on each row of the columns (positional arguments) in this process.

    ``map`` runs the loop in C; when one call raises, its arguments have
    already been consumed, so the loop resumes at the next sample and the
    failure is recorded at the right index.
    """
    out: list[Any] = []
    calls = map(fn, *columns)
    while True:
        try:
            out.extend(calls)
            return out
        except (KeyboardInterrupt, RewardConfigError, RewardReturnError):
            raise  # Ctrl-C, a misconfigured reward and a bad return value are never per-sample failures
        except BaseException as exc:  # math-verify's timeout is a BaseException
            if raise_errors:
                note = getattr(exc, "add_note", None)
                if note is not None:
                    note(f"while reward {name!r} scored sample {len(out)}")
                raise
            out.append(failure_from_exception(exc, with_traceback=False))


#: Errors that are never a failure of the samples: a misconfigured reward, a bad return value, Ctrl-C.
_NOT_PER_SAMPLE = (RewardConfigError, RewardReturnError, RewardExecutionError, KeyboardInterrupt)


def _every_row_failed(exc: BaseException, n: int, on_error: str) -> list[Any]:
    if isinstance(exc, _NOT_PER_SAMPLE) or on_error == "raise":
        raise exc
    return [failure_from_exception(exc, with_traceback=False)] * n


def score_safely(score_batch: Callable[[Any], Any], batch: Any, *, on_error: str, name: str) -> list[Any]:
    """``score_batch(batch)`` checked to be one value per row; an exception fails every row (unless ``raise``).

    Configuration errors, bad return values and Ctrl-C always propagate: they
    are not properties of a sample.
    """
    try:
        values = score_batch(batch)
    except BaseException as exc:
        return _every_row_failed(exc, len(batch), on_error)
    return to_scores(values, len(batch), name)


async def ascore_safely(score_batch: Callable[[Any], Any], batch: Any, *, on_error: str, name: str) -> list[Any]:
    """The async form of :func:`score_safely` (``score_batch`` is a coroutine function)."""
    try:
        values = await score_batch(batch)
    except BaseException as exc:
        return _every_row_failed(exc, len(batch), on_error)
    return to_scores(values, len(batch), name)


def finish(
    values: list[Any],
    *,
    explain: bool,
    to_result: Callable[[Any], RewardResult] | None,
    on_error: str,
    name: str,
    stats: RewardStats,
    log_metric: Callable[[str, float], None] | None,
    log_timeouts: bool,
) -> Scored:
    """Raw values as scores (or results, with ``explain``), failures scored by ``on_error`` and counted.

    ``to_result`` converts a raw value to a :class:`RewardResult` (``None``:
    the standard normalisation of :func:`~rewardsmith.core.result.to_score`).
    """
    if not explain and to_result is None:
        scores = _all_scored(values)
        if scores is not None:
            stats.account(name, on_error, [], len(values), log_metric, log_timeouts, scores)
            return Scored(scores)
    if explain:
        convert = to_result or functools.partial(_default_result, name=name)
    elif to_result is None:
        convert = functools.partial(to_score, reward_name=name)
    else:

        def convert(raw: Any) -> float | None:
            return to_result(raw).score

    if log_metric is not None and dict in set(map(type, values)):
        _log_dict_metrics(values, name, log_metric)
    failures: list[tuple[int, Failure]] = []
    out: list[Any] = []
    append = out.append
    for index, value in enumerate(values):
        if not explain and type(value) is float and value == value and _NEG_INF < value < _INF:
            append(value)
            continue
        if not isinstance(value, Failure):
            try:
                append(convert(value))
                continue
            except NonFiniteScore as exc:
                value = Failure("error", str(exc), "NonFiniteScore")
        failures.append((index, value))
        score = 0.0 if on_error == "zero" else None
        append(RewardResult(score, f"{value.kind}: {value.message}", {}, value.message) if explain else score)
    scored = Scored(out, {index for index, _ in failures} if on_error != "zero" else set())
    stats.account(name, on_error, failures, len(values), log_metric, log_timeouts, scored.scores)
    return scored


def _default_result(raw: Any, name: str) -> RewardResult:
    if isinstance(raw, RewardResult):
        return raw
    return to_result(raw, name)


def _log_dict_metrics(values: list[Any], name: str, log_metric: Callable[[str, float], None]) -> None:
    """Log the mean of each numeric key besides ``score`` of returned dicts (verl's form) as ``<reward>/<key>``."""
    sums: dict[str, list[float]] = {}
    for value in values:
        if type(value) is dict and "score" in value:
            for key, metric in dict_metrics(value).items():
                if isinstance(metric, (bool, int, float)) and math.isfinite(metric):
                    total = sums.setdefault(key, [0.0, 0.0])
                    total[0] += float(metric)
                    total[1] += 1
    for key, (total, count) in sums.items():
        log_metric(f"{name}/{key}", total / count)


def _all_scored(values: list[Any]) -> list[float | None] | None:
    """The scores, when every value is already a finite float or ``None``, or a ``RewardResult`` (the common cases).

    Checked for the whole batch at once (C-level ``map``/``set``/``filter``/``sum``):
    an inf or NaN float makes the sum non-finite and sends the batch down the
    per-value path. ``RewardResult`` scores are normalised when made.
    """
    kinds = set(map(type, values))
    if kinds <= _FLOAT_OR_NONE:
        return list(values) if math.isfinite(sum(filter(None, values))) else None
    if kinds == {RewardResult}:
        return [v.score for v in values]
    return None


class Runtime:
    """Per-reward state that lives in this process only (never pickled or copied)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pool: Any = None
        self.injection: Any = None
        self.stats = RewardStats()
