"""Rewards made from functions: ``@reward`` (per sample), and plain TRL batch functions.

:func:`~rewardsmith.core.callables.reward_from_callable` is how
:func:`~rewardsmith.get_reward` turns any function (or callable object) into one of these.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.core.async_reward import AsyncReward
from rewardsmith.core.engine import ON_ERROR_DEFAULT, OnError
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.injection import Column, Input, Value
from rewardsmith.core.inputs import RESERVED_KWARGS, Batch, prompt_text
from rewardsmith.core.pickling import function_ref, resolve_function_ref
from rewardsmith.core.reward import Reward

__all__ = [
    "AsyncBatchFunctionReward",
    "AsyncFunctionReward",
    "BatchFunctionReward",
    "FunctionReward",
    "is_async_callable",
    "reward",
]


def _rebuild_function_reward(cls: type, ref: Any, state: dict[str, Any]) -> Any:
    fn = resolve_function_ref(ref[1], ref[2]) if isinstance(ref, tuple) and ref[:1] == ("ref",) else ref
    name = state.pop("_name", None)
    obj = cls(fn, **state)
    if name:
        obj.__dict__["_name"] = name
    return obj


@dataclass(eq=False, repr=False)
class _FunctionMixin:
    """What per-sample function rewards share, sync or async: the function and its bound settings."""

    fn: Callable[..., Any]
    bound: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()  # type: ignore[misc]  # the Reward's
        self._init_function()

    def _init_function(self) -> None:
        self.__dict__["_fn_name"] = callable_name(self.fn)  # asked for on every call: worked out once
        self.__doc__ = getattr(self.fn, "__doc__", None)
        self.__module__ = getattr(self.fn, "__module__", None)  # type: ignore[assignment]
        self.__wrapped__ = self.fn
        self.injection  # type: ignore[attr-defined]  # noqa: B018 - check bound settings against the signature now

    @property
    def default_name(self) -> str:
        return self.__dict__.get("_fn_name") or callable_name(self.fn)

    def sample_function(self) -> Callable[..., Any]:
        return self.fn

    def inputs(self) -> dict[str, Input]:
        return {name: Value(value) for name, value in self.bound.items()}

    @property
    def settings(self) -> dict[str, Any]:
        defaults = {
            p.name: p.default
            for p in inspect.signature(self.fn).parameters.values()
            if p.default is not p.empty and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
        }
        return {**defaults, **self.bound}

    def configure(self, **settings: Any) -> Any:
        """A copy with settings changed: the function's parameters are bound, engine settings set."""
        fields = {k: v for k, v in settings.items() if k in self._field_names()}
        bound = {k: v for k, v in settings.items() if k not in fields}
        return self.replace(bound={**self.bound, **bound}, **fields)  # type: ignore[attr-defined]

    def _field_names(self) -> set[str]:
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
        fields = sorted(self._field_names())
        parts += [f"{k}={getattr(self, k)!r}" for k in fields if getattr(self, k) != _DEFAULTS.get(k)]
        return f"{type(self).__name__}({', '.join(parts)})"


_DEFAULTS: dict[str, Any] = {
    "timeout": None,
    "workers": 1,
    "on_error": "none",
    "engine": "local",
    "max_concurrency": 32,
}


@dataclass(eq=False, repr=False)
class FunctionReward(_FunctionMixin, Reward):
    """A per-sample function as a reward; what ``@reward`` returns."""


@dataclass(eq=False, repr=False)
class AsyncFunctionReward(_FunctionMixin, AsyncReward):
    """An ``async def`` per-sample function as a reward; what ``@reward`` returns for coroutines."""


def callable_name(fn: Any) -> str:
    """The name a function or callable object is logged under: its ``name`` attribute, ``__name__``, or its class.

    Callable reward objects written for other libraries often carry their name
    in a ``name`` attribute, which wins over the class name.

    >>> class Politeness:
    ...     name = "politeness"
    ...     def __call__(self, completions, **kwargs):
    ...         return [0.0] * len(completions)
    >>> callable_name(Politeness()), callable_name(len)
    ('politeness', 'len')
    """
    while isinstance(fn, functools.partial):
        fn = fn.func
    own = getattr(fn, "name", None)
    if isinstance(own, str) and own.strip() and not inspect.isroutine(fn):
        return own.strip()
    return getattr(fn, "__name__", None) or type(fn).__name__


#: The arguments TRL passes that are not dataset columns.
_TRL_ARGS = frozenset({"prompts", "completions", "completion_ids", *RESERVED_KWARGS})
#: The start of the ``TypeError`` that ``completion[0]["content"]`` raises on a plain-text completion.
_CHAT_INDEXING = "string indices must be integers"


def _as_chat(values: list[Any], role: str) -> list[Any]:
    """Plain-text prompts or completions as TRL's conversational shape (one message each); others unchanged."""
    return [[{"role": role, "content": v}] if isinstance(v, str) else v for v in values]


@dataclass(eq=False)
class _TrlCall:
    """Calling a plain TRL reward function exactly as TRL does, in the completion shape it is written for.

    TRL passes plain strings for standard datasets and message lists for
    conversational ones, and functions are written for one of them
    (``completion[0]["content"]`` is the conversational one). With
    ``completion_shape="auto"`` (the default) a function is first called with
    what the batch holds; when plain-text completions make it fail with
    ``TypeError: string indices must be integers``, it is called again with the
    same texts as one assistant message each (prompts as one user message),
    and that shape is kept for every later call of this reward object. So a
    function written for chat data scores the same text in training, in
    ``rewardsmith eval`` over a text column and in ``reward.check(text)``.
    ``"chat"`` always converts plain text; ``"text"`` passes the text of each
    completion (and of each prompt's last user message) even when TRL passes
    chat messages, for a function written for strings on a conversational dataset.

    A function without ``**kwargs`` receives only the arguments it names
    (TRL itself would crash on the others).
    """

    fn: Callable[..., Any]
    #: ``"auto"`` (learn it from the first call), ``"chat"`` or ``"text"``: what the function indexes.
    completion_shape: str = "auto"

    def __post_init__(self) -> None:
        super().__post_init__()  # type: ignore[misc]  # the Reward's
        self._check_shape_setting()
        self._check_sees_completions()

    @property
    def default_name(self) -> str:
        name = self.__dict__.get("_fn_name")
        if name is None:
            name = self.__dict__["_fn_name"] = callable_name(self.fn)
        return name

    def _signature_facts(self) -> tuple[bool, frozenset[str]]:
        facts = self.__dict__.get("_sig")
        if facts is None:
            try:
                params = inspect.signature(self.fn).parameters.values()
            except (TypeError, ValueError):
                facts = (True, frozenset())
            else:
                takes_all = any(p.kind is p.VAR_KEYWORD for p in params)
                facts = (takes_all, frozenset(p.name for p in params if p.kind is not p.VAR_POSITIONAL))
            self.__dict__["_sig"] = facts
        return facts

    def inputs(self) -> dict[str, Input]:
        """The dataset columns the function's own parameters name (required when they have no default)."""
        try:
            params = inspect.signature(self.fn).parameters.values()
        except (TypeError, ValueError):
            return {}
        return {
            p.name: Column(p.name, required=p.default is p.empty)
            for p in params
            if p.name not in _TRL_ARGS and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        }

    def _arguments(self, batch: Batch, chat: bool) -> dict[str, Any]:
        if batch.completion_ids is None and self._needs_token_ids():
            raise RewardConfigError(
                f"reward {self.name!r} reads completion_ids, the completions' token ids, which only a trainer "  # type: ignore[attr-defined]
                "passes; score it during training, or give the parameter a default (completion_ids=None) and "
                "handle None"
            )
        prompts = batch.prompts if batch.prompts is not None else [""] * len(batch)
        completions = batch.completions
        if chat:
            prompts, completions = _as_chat(prompts, "user"), _as_chat(completions, "assistant")
        elif self.completion_shape == "text":
            prompts, completions = [prompt_text(p) for p in prompts], batch.texts
        arguments = {"prompts": prompts, "completions": completions, "completion_ids": batch.completion_ids}
        arguments.update(batch.kwargs())
        takes_all, names = self._signature_facts()
        return arguments if takes_all else {k: v for k, v in arguments.items() if k in names}

    def _needs_token_ids(self) -> bool:
        try:
            param = inspect.signature(self.fn).parameters.get("completion_ids")
        except (TypeError, ValueError):
            return False
        return param is not None and param.default is param.empty

    def _wants_chat(self, batch: Batch) -> bool:
        return self.completion_shape == "chat" or bool(self.__dict__.get("_chat"))

    def _may_retry_as_chat(self, batch: Batch, exc: BaseException) -> bool:
        """Whether ``exc`` is what a function written for chat data raises on plain text (and no shape was set)."""
        return (
            self.completion_shape == "auto"
            and isinstance(exc, TypeError)
            and str(exc).startswith(_CHAT_INDEXING)
            and any(isinstance(c, str) for c in batch.completions)
        )

    def _check_sees_completions(self) -> None:
        """A function that takes neither the completions nor ``**kwargs`` cannot score them: say the rename."""
        takes_all, names = self._signature_facts()
        if takes_all or names & {"completions", "completion_ids"}:
            return
        params = [p.name for p in inspect.signature(self.fn).parameters.values()]
        others = [name for name in params if name not in _TRL_ARGS]
        fix = f"rename `{others[0]}` to `completions`" if others else "add a `completions` parameter"
        raise RewardConfigError(
            f"reward {self.name!r} never sees the completions: {callable_name(self.fn)}({', '.join(params)}) "  # type: ignore[attr-defined]
            f"has no `completions` parameter and no **kwargs, and TRL passes the completions as `completions`. "
            f"Fix: {fix}."
        )

    def _check_shape_setting(self) -> None:
        if self.completion_shape not in ("auto", "chat", "text"):
            raise RewardConfigError(
                f"reward {self.name!r}: completion_shape must be 'auto', 'chat' or 'text', "  # type: ignore[attr-defined]
                f"got {self.completion_shape!r}"
            )


@dataclass(eq=False)
class BatchFunctionReward(_TrlCall, Reward):
    """A plain TRL reward function ``f(completions, **kwargs) -> list`` as a reward.

    The function is called as TRL would call it; rewardsmith adds
    return-value normalisation, ``on_error``, error counting, a name, the
    columns its signature names as required columns, and the completion shape
    it is written for (see ``completion_shape`` below).

    >>> def short(completions, **kwargs):
    ...     return [1.0 if len(c) < 5 else 0.0 for c in completions]
    >>> from rewardsmith.core.callables import reward_from_callable
    >>> r = reward_from_callable(short)
    >>> r.name, r(prompts=["p", "p"], completions=["ok", "too long"])
    ('short', [1.0, 0.0])

    A function written for chat data scores plain text too (learned on the first call):

    >>> def chatty(completions, answer, **kwargs):
    ...     return [float(c[0]["content"] == a) for c, a in zip(completions, answer)]
    >>> r = reward_from_callable(chatty)
    >>> r.required_columns, r.check("4", answer="4").score
    (['answer'], 1.0)
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.timeout is not None or self.workers != 1 or self.engine != "local":
            raise RewardConfigError(
                f"reward {self.name!r} is a batch function: it scores a whole batch in one call, so the per-sample "
                "settings timeout, workers and engine do not apply. Write it per sample with @reward to use them."
            )

    def score_batch(self, batch: Batch) -> Sequence[Any]:
        self.injection.check(batch)
        chat = self._wants_chat(batch)
        try:
            return self.fn(**self._arguments(batch, chat))
        except TypeError as exc:
            if chat or not self._may_retry_as_chat(batch, exc):
                raise
        values = self.fn(**self._arguments(batch, True))
        self.__dict__["_chat"] = True
        return values


@dataclass(eq=False)
class AsyncBatchFunctionReward(_TrlCall, AsyncReward):
    """An ``async def f(completions, **kwargs)`` TRL reward function as a reward (same shapes as the sync form)."""

    async def _acall_fn(self, batch: Batch, chat: bool) -> Sequence[Any]:
        coro = self.fn(**self._arguments(batch, chat))
        return await (coro if self.timeout is None else asyncio.wait_for(coro, self.timeout))

    async def ascore_batch(self, batch: Batch) -> Sequence[Any]:
        self.injection.check(batch)
        chat = self._wants_chat(batch)
        try:
            return await self._acall_fn(batch, chat)
        except TypeError as exc:
            if chat or not self._may_retry_as_chat(batch, exc):
                raise
        values = await self._acall_fn(batch, True)
        self.__dict__["_chat"] = True
        return values


# -- the decorator and the converter --------------------------------------------------------------


def reward(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    timeout: float | None = None,
    workers: int = 1,
    on_error: OnError = ON_ERROR_DEFAULT,
    engine: str = "local",
    max_concurrency: int | None = None,
) -> Any:
    """Make a reward from a per-sample function; its parameters are filled by name.

    Parameters the function can ask for: ``completion`` (the text; verl's
    name for it, ``solution_str``, works too),
    ``prompt`` (the prompt's text; the last user message of a conversation),
    ``messages`` (prompt and completion as chat messages), ``prompt_messages``,
    ``completion_messages``, ``completion_ids``, ``trainer_state``, and any
    dataset column by its name. A column parameter without a default is
    required: calling the reward on data without it is a clear error. A
    ``**kwargs`` parameter receives all other columns. The function returns a
    float, a bool, ``None`` (not applicable) or a :class:`RewardResult`.

    Settings: any parameter with a default can be fixed with
    ``.configure(param=value)``; engine settings (``timeout``, ``workers``,
    ``on_error``, ``engine``, and ``max_concurrency`` for ``async def``
    functions) can be given here or there.

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
        settings: dict[str, Any] = {"timeout": timeout, "workers": workers, "on_error": on_error, "engine": engine}
        if inspect.iscoroutinefunction(f):
            if max_concurrency is not None:
                settings["max_concurrency"] = max_concurrency
            made: Reward = AsyncFunctionReward(f, **settings)
        else:
            if max_concurrency is not None:
                raise RewardConfigError(
                    f"max_concurrency applies to async def rewards only; {f.__name__!r} is not async"
                )
            made = FunctionReward(f, **settings)
        return made.named(name) if name else made

    return wrap(fn) if fn is not None else wrap


def is_async_callable(obj: Any) -> bool:
    """Whether calling ``obj`` gives a coroutine: an ``async def`` function, or an object with an async ``__call__``."""
    while isinstance(obj, functools.partial):
        obj = obj.func
    return inspect.iscoroutinefunction(obj) or (callable(obj) and inspect.iscoroutinefunction(obj.__call__))
