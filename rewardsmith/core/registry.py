"""The reward registry, and :func:`get_reward`: the one way to turn anything into a reward.

:func:`get_reward` accepts every form a reward can be given in:

* a :class:`~rewardsmith.Reward` (reconfigured with the settings, if any);
* a ``Reward`` subclass, a TRL batch function, a per-sample function, or a
  factory (called with the settings);
* a name: registered (built-ins, ``@register_reward``, aliases), declared by a
  plug-in, an import path ``pkg.module:attr`` or a file path
  ``./my_rewards.py:attr`` (see :mod:`rewardsmith.core.lookup`); failing
  those, a model folder (with a ``config.json``) or a Hub id ``org/name``
  gives the registered ``reward_model`` for that model, as TRL loads strings
  in ``reward_funcs`` as reward models;
* a config entry, as in a training config's ``rewards:`` list:
  ``{name: ..., kwargs: {...}, as: ...}``, or a composite entry (``gate``,
  ``route``, ``combine``, ... registered by plug-ins with
  :func:`register_entry_kind`).

Whatever is found is made into a reward with the settings: a ``Reward`` is
reconfigured, a ``Reward`` subclass or any other class is instantiated, a
per-sample or TRL batch function is wrapped with its settings bound, and any
other function is taken to be a factory and called with the settings.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from rewardsmith.core.errors import RewardConfigError, UnknownRewardError
from rewardsmith.core.functions import reward
from rewardsmith.core.lookup import Registry
from rewardsmith.core.names import did_you_mean
from rewardsmith.core.plugins import load_plugins
from rewardsmith.core.reward import ENGINE_SETTINGS, Reward, snake_case

__all__ = [
    "BUILTIN_REWARDS",
    "ENTRY_KINDS",
    "REWARDS",
    "get_reward",
    "get_rewards",
    "list_rewards",
    "register_entry_kind",
    "register_reward",
    "unregister_reward",
]

T = TypeVar("T")

_BUILTIN_MODULES = {
    "rewardsmith.rewards.code": ("code_syntax",),
    "rewardsmith.rewards.code_tests": ("code_tests",),
    "rewardsmith.rewards.countdown": ("countdown",),
    "rewardsmith.rewards.format": ("format", "tag_count", "think_format"),
    "rewardsmith.rewards.group_length": ("group_length", "kimi_length", "len_reward"),
    "rewardsmith.rewards.gsm8k": ("gsm8k_accuracy",),
    "rewardsmith.rewards.ifeval.reward": ("ifeval", "instruction_following"),
    "rewardsmith.rewards.language": ("language_consistency",),
    "rewardsmith.rewards.length": ("cosine", "cosine_length", "length", "soft_overlong", "soft_overlong_punishment"),
    "rewardsmith.rewards.math": ("accuracy", "math_accuracy"),
    "rewardsmith.rewards.repetition": ("reasoning_steps", "repetition", "repetition_penalty"),
    "rewardsmith.rewards.structured": ("json_schema",),
    "rewardsmith.rewards.tool_match": ("tool_call_match",),
    "rewardsmith.rewards.tool_turns": ("tool_schema_turns", "tool_success_turns"),
    "rewardsmith.rewards.tools": ("environment_reward", "tool_efficiency", "tool_schema", "tool_success"),
    "rewardsmith.judges.llm_judge": ("llm_judge", "reference_fidelity"),
    "rewardsmith.judges.perplexity": ("perplexity",),
    "rewardsmith.judges.principles": ("principles",),
    "rewardsmith.judges.reward_model": ("reward_model",),
    "rewardsmith.integrations.remote": ("remote",),
}
#: Every built-in reward name and alias, and the module that registers it: imported the first time the name is
#: asked for, so ``get_reward("think_format")`` loads the format rewards only (TRL's lazy module table is the
#: model). tests/test_lazy_names.py checks it against what loading every module registers.
BUILTIN_REWARDS: dict[str, str] = {name: module for module, names in _BUILTIN_MODULES.items() for name in names}

#: The registry of reward names (its entry-point group declares single rewards of installed packages).
REWARDS = Registry(
    "reward",
    "rewardsmith.rewards",
    unknown=UnknownRewardError,
    error=RewardConfigError,
    advice=" (see `rewardsmith rewards list`)",
    lazy=BUILTIN_REWARDS,
)

#: Builders of config entry kinds other than ``name``: key -> ``build(entry, path) -> Reward``; the built-in
#: kinds are in a static table too, so a ``gate:`` entry imports the composition module only.
ENTRY_KINDS = Registry(
    "config entry kind",
    "rewardsmith.entry_kinds",
    lazy=dict.fromkeys(("gate", "route", "combine", "format_and_content"), "rewardsmith.compose.config"),
)


def register_reward(
    name: Any = None,
    target: Any = None,
    *,
    replace: bool = False,
    description: str | None = None,
    aliases: Iterable[str] = (),
) -> Any:
    """Register a reward (or a class or factory that makes one) under a name.

    Use it as a decorator, with or without a name, or call it directly. It
    returns what it was given, so it stacks with ``@reward``. Registering a
    name twice is an error unless ``replace=True``.

    >>> from rewardsmith import reward, register_reward, get_reward, unregister_reward
    >>> @register_reward("shouting")
    ... @reward
    ... def shouting(completion: str) -> float:
    ...     '''Fraction of letters in upper case.'''
    ...     letters = [c for c in completion if c.isalpha()]
    ...     return sum(c.isupper() for c in letters) / len(letters) if letters else 0.0
    >>> get_reward("shouting")(completions=["HEY there"])
    [0.375]
    >>> unregister_reward("shouting")
    """
    if name is not None and not isinstance(name, str):  # bare @register_reward
        return register_reward(None, name, replace=replace, description=description, aliases=aliases)
    if target is None:
        return functools.partial(_register, name, replace=replace, description=description, aliases=aliases)
    return _register(name, target, replace=replace, description=description, aliases=aliases)


def _register(name: str | None, target: T, *, replace: bool, description: str | None, aliases: Iterable[str]) -> T:
    if name is None:
        if isinstance(target, type) and issubclass(target, Reward):
            name = target.default_name if isinstance(target.default_name, str) else snake_case(target.__name__)
        else:
            name = target.name if isinstance(target, Reward) else getattr(target, "__name__", None)
    REWARDS.register(name, target, replace=replace, description=description, aliases=aliases)  # type: ignore[arg-type]
    return target


def unregister_reward(name: str) -> None:
    """Remove a registered name (and the aliases that point to it).

    >>> from rewardsmith import register_reward, unregister_reward
    >>> _ = register_reward("always_one", lambda completion: 1.0)
    >>> unregister_reward("always_one")
    """
    REWARDS.unregister(name)


def list_rewards() -> dict[str, str]:
    """Every registered reward name (aliases included) with a one-line description.

    >>> "think_format" in list_rewards()
    True
    """
    return REWARDS.describe()


def register_entry_kind(key: str, build: Callable[[Mapping[str, Any], str], Reward]) -> None:
    """Teach :func:`get_reward` a config entry kind: a mapping with ``key`` is built by ``build(entry, path)``.

    ``path`` says where the entry is (``rewards[1].gate``), for error messages.
    :mod:`rewardsmith.compose` registers ``gate``, ``route``, ``combine`` and
    ``format_and_content`` this way.

    >>> from rewardsmith import get_reward
    >>> register_entry_kind("twice", lambda entry, path: get_reward(entry["twice"]).named("twice"))
    >>> get_reward({"twice": "think_format"}).name
    'twice'
    >>> ENTRY_KINDS.unregister("twice")
    """
    ENTRY_KINDS.register(key, build, replace=True)


# -- making rewards --------------------------------------------------------------------------------


def _instantiate(target: Any, settings: dict[str, Any], label: str) -> Reward:
    if isinstance(target, Reward):
        return target.configure(**settings) if settings else target
    if isinstance(target, type) and issubclass(target, Reward):
        return _construct(target, settings, label)
    from rewardsmith.core.callables import callable_kind, reward_from_callable  # only for what is not a name

    engine = {k: settings.pop(k) for k in ENGINE_SETTINGS if k in settings}
    if isinstance(target, type) and not settings and not issubclass(target, Reward):
        made = reward_from_callable(target)  # a class with its defaults, or a verifiers task class
    elif isinstance(target, type):
        made = reward_from_callable(_construct(target, settings, label))
    elif callable(target):
        kind = callable_kind(target)
        if kind == "sample":
            made = reward(target).configure(**settings)
        elif kind == "verl_batch":
            made = reward_from_callable(functools.partial(target, **settings) if settings else target)
        elif kind == "batch":
            shape = settings.pop("completion_shape", None)  # how rewardsmith calls it, not one of its arguments
            made = reward_from_callable(functools.partial(target, **settings) if settings else target)
            if shape is not None:
                made = made.replace(completion_shape=shape)
        else:
            if kind == "ambiguous" and not _binds(target, settings):
                raise RewardConfigError(_ambiguous_message(target, settings, label))
            made = reward_from_callable(_construct(target, settings, label))
    else:
        raise RewardConfigError(f"{label!r} names {target!r}, which is not a reward, a class or a function")
    return made.configure(**engine) if engine else made


def _construct(factory: Any, settings: dict[str, Any], label: str) -> Any:
    try:
        inspect.signature(factory).bind(**settings)
    except TypeError as exc:
        accepted = _accepted_settings(factory)
        unknown = [k for k in settings if k not in accepted]
        if unknown and not _takes_kwargs(factory):
            hint = did_you_mean(unknown[0], accepted)
            raise RewardConfigError(
                f"reward {label!r} has no setting {unknown[0]!r}.{hint} It accepts: {', '.join(accepted) or 'none'}"
            ) from exc
        raise RewardConfigError(
            f"reward {label!r} does not take these settings ({exc}). It accepts: {', '.join(accepted) or 'none'}"
        ) from exc
    except ValueError:
        pass
    return factory(**settings)


def _binds(factory: Any, settings: dict[str, Any]) -> bool:
    try:
        inspect.signature(factory).bind(**settings)
    except TypeError:
        return False
    return True


def _ambiguous_message(target: Any, settings: dict[str, Any], label: str) -> str:
    """Why a function with required parameters that name no completion is neither a reward nor a factory here."""
    params = inspect.signature(target).parameters.values()
    required = [p.name for p in params if p.default is p.empty and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    missing = [name for name in required if name not in settings]
    given = f" with the settings {', '.join(settings)}" if settings else ""
    return (
        f"reward {label!r}: cannot tell whether {getattr(target, '__name__', label)}({', '.join(required)}) is a "
        f"per-sample reward or a factory of settings: no parameter holds the completion (completion, solution_str, "
        f"messages, final_message, tool_calls, turns, ...), and called as a factory{given} it lacks "
        f"{', '.join(missing)}. Mark it: if it scores one sample, name the parameter that receives the completion "
        f"`completion` (or `solution_str`); if it is a TRL batch function, take `completions` and **kwargs; if it "
        f"makes a reward, give {', '.join(missing)} under kwargs: in the config entry"
    )


def _takes_kwargs(factory: Any) -> bool:
    try:
        return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):
        return True


def _accepted_settings(factory: Any) -> list[str]:
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]


def find_target(spec: str) -> Any:
    """The object a reward name or path refers to, before it is made into a reward (settings not applied).

    >>> find_target("think_format").__name__
    'ThinkFormat'
    """
    return REWARDS.find(spec)


def _from_name(spec: str, settings: dict[str, Any]) -> Reward:
    try:
        target = REWARDS.find(spec)
    except UnknownRewardError as exc:
        model = model_reference(spec.strip())
        if model is None or REWARDS.get(REWARD_MODEL) is None:
            if "/" in spec and ":" not in spec:
                raise UnknownRewardError(
                    f"{exc} (A reward model is named by a folder that holds its config.json, or a Hub id 'org/name'.)"
                ) from None
            raise
        return _instantiate(REWARDS.get(REWARD_MODEL), {"model": model, **settings}, spec)
    return _instantiate(target, dict(settings), spec)


def _from_entry(entry: Mapping[str, Any], settings: dict[str, Any], path: str = "") -> Reward:
    where = f"{path}: " if path else ""
    if "name" in entry:
        unknown = [k for k in entry if k not in ("name", "kwargs", "as")]
        if unknown:
            hint = did_you_mean(str(unknown[0]), ["name", "kwargs", "as"])
            extra = " (weights belong to a list of rewards: see rewards_from_config)" if "weight" in unknown else ""
            raise RewardConfigError(f"{where}unknown key {unknown[0]!r} in a reward entry.{hint}{extra}")
        name, kwargs = entry["name"], entry.get("kwargs") or {}
        if not isinstance(name, str):
            raise RewardConfigError(f"{where}name takes a reward name or path, got {name!r}")
        if not isinstance(kwargs, Mapping):
            raise RewardConfigError(f"{where}kwargs takes a mapping of settings, got {kwargs!r}")
        try:
            made = _from_name(name, {**kwargs, **settings})
        except RewardConfigError as exc:
            if not path:
                raise
            raise type(exc)(f"{path}: {exc}") from exc
        return made.named(entry["as"]) if "as" in entry else made
    kinds = [key for key in entry if isinstance(key, str) and key in ENTRY_KINDS.lazy]
    if not kinds:  # a kind a plug-in registers
        load_plugins()
        kinds = [key for key in entry if isinstance(key, str) and ENTRY_KINDS.get(key) is not None]
    if len(kinds) != 1:
        known = ["name", *ENTRY_KINDS.names()]
        if kinds:
            raise RewardConfigError(f"{where}an entry is one reward; it has {' and '.join(map(repr, kinds))}")
        hint = did_you_mean(str(next(iter(entry), "")), known) if entry else ""
        got = ", ".join(map(repr, entry)) or "none"
        raise RewardConfigError(f"{where}a reward entry needs one of the keys {', '.join(known)}; got {got}.{hint}")
    if settings:
        raise RewardConfigError(f"{where}settings go inside the entry (a {kinds[0]!r} entry takes none here)")
    return ENTRY_KINDS.get(kinds[0])(entry, path or kinds[0])


def get_reward(spec: Any, /, **settings: Any) -> Reward:
    """Anything accepted as a reward, as a :class:`~rewardsmith.Reward`, with settings (see the module docs).

    >>> from rewardsmith import get_reward
    >>> fmt = get_reward("think_format", strict=True)
    >>> fmt.name, fmt(completions=["<think>add</think><answer>4</answer>", "4"])
    ('think_format', [1.0, 0.0])
    >>> get_reward({"name": "gsm8k_accuracy", "as": "accuracy"}).name
    'accuracy'
    >>> get_reward(lambda completion: len(completion) > 3)(completions=["long"])
    [1.0]
    >>> get_reward("thinkformat")
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.UnknownRewardError: unknown reward 'thinkformat'. Did you mean: think_format? ...
    """
    if isinstance(spec, Reward):
        return spec.configure(**settings) if settings else spec
    if isinstance(spec, str):
        return _from_name(spec, settings)
    if isinstance(spec, Mapping):
        return _from_entry(spec, settings)
    from rewardsmith.core.callables import reward_from_callable  # only for what is not a name

    made = reward_from_callable(spec)
    return made.configure(**settings) if settings else made


def get_rewards(specs: Any) -> list[Reward]:
    """Several rewards: a comma-separated string, or a list of anything :func:`get_reward` accepts.

    >>> [r.name for r in get_rewards("think_format, gsm8k_accuracy")]
    ['think_format', 'gsm8k_accuracy']
    >>> [r.name for r in get_rewards(["think_format", {"name": "gsm8k_accuracy", "kwargs": {"answer_column": "y"}}])]
    ['think_format', 'gsm8k_accuracy']
    """
    return [
        _from_entry(item, {}, f"rewards[{i}]") if isinstance(item, Mapping) else get_reward(item)
        for i, item in enumerate(reward_entries(specs))
    ]


def reward_entries(specs: Any, example: str = "'think_format,gsm8k_accuracy'") -> list[Any]:
    """The entries of a rewards list: a comma-separated string's names, one reward or entry, or a list's items.

    The one reading of "several rewards" (:func:`get_rewards`, a config's ``rewards:``); an empty
    list is an error whose message shows ``example``.

    >>> reward_entries("think_format, gsm8k_accuracy"), reward_entries({"name": "x"})
    (['think_format', 'gsm8k_accuracy'], [{'name': 'x'}])
    """
    if isinstance(specs, str):
        items: list[Any] = [s.strip() for s in specs.split(",") if s.strip()]
    elif isinstance(specs, (Reward, Mapping)) or callable(specs):
        items = [specs]
    elif isinstance(specs, Iterable):
        items = list(specs)
    else:
        raise RewardConfigError(
            f"rewards takes a list of entries or a comma-separated string of names, got {type(specs).__name__}"
        )
    if not items:
        raise RewardConfigError(f"no rewards given; name at least one, e.g. {example}")
    return items


#: The registered name that model ids and model folders resolve to (as TRL loads strings as reward models).
REWARD_MODEL = "reward_model"
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def model_reference(spec: str) -> str | None:
    """``spec`` if it names a model rather than a reward: a folder with a ``config.json``, or a Hub id ``org/name``.

    Only names that are not rewards get here, so ``get_reward("org/my-rm")`` and
    ``to_trl([..., "./runs/rm"])`` give a ``reward_model`` reward for that model.

    >>> model_reference("OpenAssistant/reward-model-deberta-v3-large-v2")
    'OpenAssistant/reward-model-deberta-v3-large-v2'
    >>> model_reference("./my_rewards.py:fn") is None, model_reference("think_fromat") is None
    (True, True)
    """
    path = Path(spec).expanduser()
    if (path / "config.json").is_file():
        return spec
    if _HUB_ID.match(spec) and not spec.endswith(".py") and not path.exists():
        return spec
    return None


def registered_target(name: str) -> Any:
    """The object registered under ``name`` (``None`` if nothing is).

    >>> registered_target("format") is registered_target("think_format")
    True
    """
    return REWARDS.get(name)
