"""The reward registry: names to rewards, import paths, file paths and plug-ins.

A name given to :func:`get_reward` resolves, in order, to:

1. a registered reward (built-ins, ``@register_reward``, aliases);
2. a plug-in reward from an installed package's ``rewardsmith.rewards`` entry
   points;
3. an import path, ``pkg.module:attr`` or ``pkg.module.attr``;
4. a file path, ``./my_rewards.py:attr``;
5. failing those, a model folder (with a ``config.json``) or a Hub id
   ``org/name``: the registered ``reward_model`` for that model, as TRL
   loads strings in ``reward_funcs`` as reward models.

Whatever is found is made into a reward with the settings: a ``Reward`` is
reconfigured, a ``Reward`` subclass or any other class is instantiated, a
per-sample or TRL batch function is wrapped with its settings bound, and any
other function is taken to be a factory and called with the settings.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from rewardsmith.core.errors import RewardConfigError, UnknownRewardError
from rewardsmith.core.functions import callable_kind, reward, to_reward
from rewardsmith.core.names import check_name, did_you_mean, first_line
from rewardsmith.core.pickling import load_module_from_file
from rewardsmith.core.reward import ENGINE_SETTINGS, Reward, snake_case

__all__ = [
    "get_reward",
    "get_rewards",
    "list_rewards",
    "register_reward",
    "unregister_reward",
]

logger = logging.getLogger("rewardsmith")

ENTRY_POINT_GROUP = "rewardsmith.rewards"
T = TypeVar("T")


@dataclass
class _Entry:
    target: Any
    description: str
    alias_of: str | None = None
    entry_point: Any = None


_REGISTRY: dict[str, _Entry] = {}
_LOCK = threading.RLock()
_plugins_loaded = False


def _describe_target(target: Any) -> str:
    doc = getattr(target, "__doc__", None)
    cls = target if isinstance(target, type) else type(target)
    if doc and doc.startswith(f"{cls.__name__}("):  # the signature dataclasses write when there is no docstring
        return ""
    return first_line(doc)


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
        return functools.partial(_register_decorator, name, replace=replace, description=description, aliases=aliases)
    return _register_decorator(name, target, replace=replace, description=description, aliases=aliases)


def _register_decorator(
    name: str | None, target: T, *, replace: bool, description: str | None, aliases: Iterable[str]
) -> T:
    if name is None:
        if isinstance(target, type) and issubclass(target, Reward):
            name = target.default_name or snake_case(target.__name__)
        else:
            name = target.name if isinstance(target, Reward) else getattr(target, "__name__", None)
    name = check_name(name, "reward")
    entry = _Entry(target, description or _describe_target(target))
    with _LOCK:
        for key in (name, *aliases):
            existing = _REGISTRY.get(key)
            if existing is not None and not replace and existing.target is not target:
                raise RewardConfigError(
                    f"a reward named {key!r} is already registered ({_label(existing.target)}); "
                    "pick another name, or pass replace=True to register_reward to replace it"
                )
        _REGISTRY[name] = entry
        for alias in aliases:
            _REGISTRY[alias] = _Entry(target, entry.description, alias_of=name)
    return target


def unregister_reward(name: str) -> None:
    """Remove a registered name (and the aliases that point to it)."""
    with _LOCK:
        if name not in _REGISTRY:
            raise UnknownRewardError(f"no reward named {name!r} is registered")
        del _REGISTRY[name]
        for key in [k for k, e in _REGISTRY.items() if e.alias_of == name]:
            del _REGISTRY[key]


def _label(target: Any) -> str:
    module = getattr(target, "__module__", None) or type(target).__module__
    return f"from {module}"


#: Packages whose modules register the built-in rewards when imported (imported on first lookup, so that
#: the core does not depend on the layers below it).
BUILTIN_PACKAGES = ("rewardsmith.rewards", "rewardsmith.judges")


def _load_builtins() -> None:
    for package in BUILTIN_PACKAGES:
        importlib.import_module(package)


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        with _LOCK:
            if ep.name in _REGISTRY:
                logger.warning("plug-in reward %r (%s) is ignored: the name is already registered", ep.name, ep.value)
                continue
            _REGISTRY[ep.name] = _Entry(None, f"plug-in from {ep.value}", entry_point=ep)


def _lookup(name: str) -> Any:
    _load_builtins()
    _load_plugins()
    entry = _REGISTRY.get(name)
    if entry is None:
        return None
    if entry.entry_point is not None and entry.target is None:
        try:
            entry.target = entry.entry_point.load()
        except Exception as exc:
            raise RewardConfigError(
                f"plug-in reward {name!r} ({entry.entry_point.value}) failed to load: {exc}"
            ) from exc
        entry.description = _describe_target(entry.target) or entry.description
    return entry.target


def _looks_like_path(spec: str) -> bool:
    return ":" in spec or "/" in spec or "\\" in spec or spec.endswith(".py") or "." in spec


def _resolve_path(spec: str) -> Any:
    """Import what ``spec`` names: ``file.py:attr``, ``pkg.module:attr`` or ``pkg.module.attr``."""
    module_part, sep, attr = spec.rpartition(":")
    if not sep:
        module_part, _, attr = spec.rpartition(".")
    if not module_part or not attr:
        raise UnknownRewardError(f"{spec!r} is not a valid reward path; write 'pkg.module:attr' or './file.py:attr'")
    if module_part.endswith(".py") or "/" in module_part or "\\" in module_part:
        path = Path(module_part).expanduser()
        if not path.is_file():
            raise UnknownRewardError(
                f"reward {spec!r}: the file {str(path)!r} does not exist (relative paths are resolved from "
                f"{Path.cwd()})"
            )
        module = load_module_from_file(path)
    else:
        try:
            module = importlib.import_module(module_part)
        except ModuleNotFoundError as exc:
            raise UnknownRewardError(
                f"reward {spec!r}: cannot import module {module_part!r} ({exc}). Install the package, add it "
                "to PYTHONPATH, or give a file path like './my_rewards.py:fn'"
            ) from exc
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            public = sorted(n for n in dir(module) if not n.startswith("_"))
            hint = did_you_mean(part, public)
            raise UnknownRewardError(f"reward {spec!r}: {module.__name__!r} has no attribute {part!r}.{hint}")
        obj = getattr(obj, part)
    return obj


def find_target(spec: str) -> Any:
    """The object a reward name or path refers to, before it is made into a reward (settings not applied)."""
    target = _lookup(spec)
    if target is not None:
        return target
    if _looks_like_path(spec):
        try:
            return _resolve_path(spec)
        except UnknownRewardError:
            if ":" in spec or "/" in spec or spec.endswith(".py"):
                raise
    names = sorted(_REGISTRY)
    hint = did_you_mean(spec, names, cutoff=0.5)
    raise UnknownRewardError(
        f"unknown reward {spec!r}.{hint} Registered rewards: {', '.join(names) or 'none'} "
        "(see `rewardsmith rewards list`). A reward can also be named by import path ('pkg.module:fn') "
        "or file path ('./my_rewards.py:fn')."
    )


def _instantiate(target: Any, settings: dict[str, Any], label: str) -> Reward:
    if isinstance(target, Reward):
        return target.configure(**settings)
    if isinstance(target, type) and issubclass(target, Reward):
        return _construct(target, settings, label)
    engine = {k: settings.pop(k) for k in ENGINE_SETTINGS if k in settings}
    if isinstance(target, type):
        made = to_reward(_construct(target, settings, label))
    elif callable(target):
        kind = callable_kind(target)
        if kind == "sample":
            made = reward(target).configure(**settings)
        elif kind == "batch":
            made = to_reward(functools.partial(target, **settings) if settings else target)
        else:
            made = to_reward(_construct(target, settings, label))
    else:
        raise RewardConfigError(f"{label!r} names {target!r}, which is not a reward, a class or a function")
    return made.configure(**engine) if engine else made


def _construct(factory: Any, settings: dict[str, Any], label: str) -> Any:
    try:
        inspect.signature(factory).bind(**settings)
    except TypeError as exc:
        accepted = _accepted_settings(factory)
        raise RewardConfigError(
            f"reward {label!r} does not take these settings ({exc}). It accepts: {', '.join(accepted) or 'none'}"
        ) from exc
    except ValueError:
        pass
    return factory(**settings)


def _accepted_settings(factory: Any) -> list[str]:
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]


def get_reward(spec: Any, /, **settings: Any) -> Reward:
    """A reward by name or path, with settings.

    >>> from rewardsmith import get_reward
    >>> fmt = get_reward("think_format", strict=True)
    >>> fmt.name, fmt(completions=["<think>add</think><answer>4</answer>", "4"])
    ('think_format', [1.0, 0.0])
    >>> get_reward("thinkformat")
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.UnknownRewardError: unknown reward 'thinkformat'. Did you mean: think_format? ...
    """
    if isinstance(spec, Reward):
        return spec.configure(**settings)
    if not isinstance(spec, str):
        made = to_reward(spec)
        return made.configure(**settings) if settings else made
    spec = spec.strip()
    if not spec:
        raise UnknownRewardError("an empty string is not a reward name")
    try:
        target = find_target(spec)
    except UnknownRewardError as exc:
        model = model_reference(spec)
        if model is None or _lookup(REWARD_MODEL) is None:
            if "/" in spec and ":" not in spec:
                raise UnknownRewardError(
                    f"{exc} (A reward model is named by a folder that holds its config.json, or a Hub id 'org/name'.)"
                ) from None
            raise
        return _instantiate(_lookup(REWARD_MODEL), {"model": model, **settings}, spec)
    return _instantiate(target, dict(settings), spec)


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


def get_rewards(specs: Any) -> list[Reward]:
    """Several rewards: a comma-separated string, or a list of names, paths, rewards or functions.

    >>> [r.name for r in get_rewards("think_format, gsm8k_accuracy")]
    ['think_format', 'gsm8k_accuracy']
    """
    if isinstance(specs, str):
        items: list[Any] = [s.strip() for s in specs.split(",") if s.strip()]
    elif isinstance(specs, (Reward, dict)) or callable(specs):
        items = [specs]
    else:
        items = list(specs)
    if not items:
        raise RewardConfigError("no rewards given; name at least one, e.g. 'think_format,gsm8k_accuracy'")
    return [get_reward(item) for item in items]


def list_rewards() -> dict[str, str]:
    """Every registered reward name (aliases included) with a one-line description.

    >>> "think_format" in list_rewards()
    True
    """
    _load_builtins()
    _load_plugins()
    with _LOCK:
        out = {}
        for name, entry in sorted(_REGISTRY.items()):
            out[name] = f"alias of {entry.alias_of}" if entry.alias_of else entry.description
        return out


def registered_target(name: str) -> Any:
    """The object registered under ``name`` (``None`` if nothing is)."""
    return _lookup(name)
