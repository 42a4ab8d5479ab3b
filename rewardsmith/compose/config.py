"""Rewards and their weights from a training config's ``rewards:`` list (or the seed-style shorthand).

Each entry of the list is one of::

    think_format                                  # a name (or path) alone, weight 1
    {name: NAME, kwargs: {...}, weight: W, as: LABEL}
    {gate: {condition: ENTRY, reward: ENTRY, threshold: 1.0, otherwise: 0.0, lazy: false}, weight: W, as: LABEL}
    {route: {by: task, TASK: ENTRY, ...}, weight: W, as: LABEL, split: false}
    {combine: [ENTRY with its own weight, ...], normalize: zscore, missing: renormalize, group_size: 8,
     weight: W, as: LABEL}
    {format_and_content: {format: ENTRY, content: ENTRY, format_weight: 0.2, content_weight: 1.0,
                          gated: false, threshold: 1.0}, weight: W, as: LABEL}

where ``ENTRY`` is again any of these (so they nest), ``weight`` is the
entry's weight in the list it is in (1.0 when left out), ``as`` renames the
reward (what TRL logs it as), and ``split: true`` turns a route into one
reward per task reward, each ``None`` off its task, so that TRL logs them
separately. ``kwargs`` are the reward's settings, engine settings included
(``timeout``, ``workers``, ``on_error``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rewardsmith.compose.combine import MISSING_CHOICES, combine, format_and_content
from rewardsmith.compose.common import as_weight
from rewardsmith.compose.gate import gate
from rewardsmith.compose.route import route
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.names import did_you_mean
from rewardsmith.core.problems import ConfigProblems
from rewardsmith.core.registry import get_reward, register_entry_kind, reward_entries
from rewardsmith.core.reward import Reward

__all__ = ["rewards_from_config", "rewards_with_problems"]

_COMMON = ("weight", "as")
_KINDS: dict[str, tuple[str, ...]] = {
    "name": ("kwargs",),
    "gate": (),
    "route": ("split",),
    "combine": ("normalize", "missing", "group_size"),
    "format_and_content": (),
}
_GATE_KEYS = ("condition", "reward", "threshold", "otherwise", "lazy")
_FORMAT_KEYS = ("format", "content", "format_weight", "content_weight", "gated", "threshold")


def _fail(path: str, message: str, exc_type: type[RewardConfigError] = RewardConfigError) -> RewardConfigError:
    return exc_type(f"{path}: {message}")


def _check_keys(path: str, given: Mapping[str, Any], allowed: Sequence[str], what: str) -> None:
    for key in given:
        if key not in allowed:
            hint = did_you_mean(str(key), allowed)
            raise _fail(path, f"unknown key {key!r} in {what}.{hint} Allowed: {', '.join(allowed)}")


def _kind(path: str, entry: Mapping[str, Any]) -> str:
    kinds = [k for k in _KINDS if k in entry]
    if len(kinds) == 1:
        return kinds[0]
    if kinds:
        raise _fail(path, f"an entry is one reward; it has {' and '.join(map(repr, kinds))}. Use one per entry")
    hint = did_you_mean(str(next(iter(entry), "")), _KINDS) if entry else ""
    raise _fail(
        path,
        f"an entry needs one of the keys {', '.join(_KINDS)} (or is a reward name); got keys "
        f"{', '.join(map(repr, entry)) or 'none'}.{hint}",
    )


def _mapping(path: str, value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(path, f"{what} takes a mapping, got {type(value).__name__} {value!r}")
    return value


def _guard(path: str, build: Callable[[], Any]) -> Any:
    """Run ``build``, adding ``path`` to the message of a configuration error (its type is kept)."""
    try:
        return build()
    except RewardConfigError as exc:
        if str(exc).startswith("rewards"):
            raise
        raise _fail(path, str(exc), type(exc)) from exc


def _entry(path: str, entry: Any, *, in_list: bool, top: bool = False) -> tuple[list[Reward], float]:
    """One entry as rewards (several only for a split route, at the top level) and its weight.

    One pass: the entry's kind is read, its keys checked, the kind's builder makes the reward (building
    nested entries the same way), and ``as`` renames the result.
    """
    if isinstance(entry, str):
        return [_guard(path, lambda: get_reward(entry))], 1.0
    if isinstance(entry, Reward):  # already built in Python: accepted as it is
        return [entry], 1.0
    entry = _mapping(path, entry, "an entry")
    kind = _kind(path, entry)
    _check_entry_keys(path, entry, kind, in_list=in_list, top=top)
    weight = _guard(path, lambda: as_weight(entry.get("weight", 1.0), "weight"))
    made = _BUILDERS[kind](path, entry)
    if isinstance(made, list):  # a split route: each task reward keeps its own name
        return made, weight
    if "as" in entry:
        label = entry["as"]
        made = _guard(path, lambda: made.named(label))
    return [made], weight


def _check_entry_keys(path: str, entry: Mapping[str, Any], kind: str, *, in_list: bool, top: bool) -> None:
    options = [k for k in _KINDS[kind] if top or k != "split"]
    allowed = (kind, *options, *(_COMMON if in_list else ("as",)))
    where = "" if in_list else " here (weight goes in a list)"
    if kind == "route" and not top and "split" in entry:
        where = " here (split: true makes several rewards, so it goes in the top-level list only)"
    _check_keys(path, entry, allowed, f"a {kind!r} entry{where}")


def _named_entry(path: str, entry: Mapping[str, Any]) -> Reward:
    """A ``{name, kwargs}`` entry: the registry reads it (the one reader of named entries), ``as`` is applied later."""
    return _guard(path, lambda: get_reward({key: entry[key] for key in ("name", "kwargs") if key in entry}))


def _gate_entry(path: str, entry: Mapping[str, Any]) -> Reward:
    sub = f"{path}.gate"
    condition, reward, options = _pair(sub, entry["gate"], "gate", _GATE_KEYS)
    return _guard(sub, lambda: gate(condition, reward, **options))


def _route_entry(path: str, entry: Mapping[str, Any]) -> Reward | list[Reward]:
    sub = f"{path}.route"
    body = _mapping(sub, entry["route"], "route")
    by = body.get("by", "task")
    tasks = {task: _one(f"{sub}.{task}", value) for task, value in body.items() if task != "by"}
    if not tasks:
        raise _fail(sub, "route needs at least one task, like {by: task, math: math_accuracy, code: code_syntax}")
    made = _guard(sub, lambda: route(tasks, by=by))
    split = entry.get("split", False)
    if not isinstance(split, bool):
        raise _fail(path, f"split must be true or false, got {split!r}")
    if not split:
        return made
    if "as" in entry:
        raise _fail(path, "a split route keeps each task reward's own name; remove `as` or `split`")
    return made.split()


def _combine_entry(path: str, entry: Mapping[str, Any]) -> Reward:
    sub = f"{path}.combine"
    body = entry["combine"]
    if isinstance(body, (str, Mapping)) or not isinstance(body, Sequence):
        raise _fail(sub, f"combine takes a list of entries, got {body!r}")
    parts = [_entry(f"{sub}[{i}]", item, in_list=True) for i, item in enumerate(body)]
    members = [p[0][0] for p in parts]
    weights = [p[1] for p in parts]
    missing = entry.get("missing", "renormalize")
    if missing not in MISSING_CHOICES:
        raise _fail(path, f"missing must be one of {', '.join(MISSING_CHOICES)}, got {missing!r}")
    normalize, group_size = entry.get("normalize"), entry.get("group_size")
    return _guard(path, lambda: combine(members, weights, normalize, missing=missing, group_size=group_size))


def _format_and_content_entry(path: str, entry: Mapping[str, Any]) -> Reward:
    sub = f"{path}.format_and_content"
    fmt, content, options = _pair(sub, entry["format_and_content"], "format_and_content", _FORMAT_KEYS)
    return _guard(sub, lambda: format_and_content(fmt, content, **options))


_BUILDERS: dict[str, Callable[[str, Mapping[str, Any]], Reward | list[Reward]]] = {
    "name": _named_entry,
    "gate": _gate_entry,
    "route": _route_entry,
    "combine": _combine_entry,
    "format_and_content": _format_and_content_entry,
}


def _pair(path: str, body: Any, kind: str, keys: tuple[str, ...]) -> tuple[Reward, Reward, dict[str, Any]]:
    """The two rewards (the first two ``keys``, both required) and the options of a gate or format_and_content."""
    body = _mapping(path, body, kind)
    _check_keys(path, body, keys, kind)
    for key in keys[:2]:
        if key not in body:
            raise _fail(path, f"{kind} needs {key!r} (and takes {', '.join(keys)})")
    first, second = (_one(f"{path}.{key}", body[key]) for key in keys[:2])
    return first, second, {k: body[k] for k in keys[2:] if k in body}


def _one(path: str, entry: Any) -> Reward:
    made, _ = _entry(path, entry, in_list=False)
    return made[0]


def _parse_weights(weights: Any) -> list[float]:
    if isinstance(weights, str):
        items: list[Any] = [w.strip() for w in weights.split(",") if w.strip()]
        out = []
        for i, item in enumerate(items):
            try:
                out.append(float(item))
            except ValueError:
                raise RewardConfigError(f"reward_weights[{i}]: {item!r} is not a number") from None
        return [as_weight(w, f"reward_weights[{i}]") for i, w in enumerate(out)]
    if isinstance(weights, (int, float)) and not isinstance(weights, bool):
        weights = [weights]
    if not isinstance(weights, Sequence):
        raise RewardConfigError(f"reward_weights takes a list of numbers or a string like '1.0,0.5', got {weights!r}")
    return [as_weight(w, f"reward_weights[{i}]") for i, w in enumerate(weights)]


def rewards_from_config(rewards: Any, weights: Any = None) -> tuple[list[Reward], list[float]]:
    """The rewards and weights (TRL's ``reward_funcs`` and ``reward_weights``) a config describes.

    ``rewards`` is the config's ``rewards:`` list (see the module docs for the
    entry forms, which nest), or the seed-style shorthand: a comma-separated
    string of names such as ``"accuracy,format"``. ``weights`` is the optional
    ``reward_weights`` (a list, or a string like ``"1.0,0.5"``); give weights
    either there or on the entries, not both. Everything is checked before
    anything runs: unknown reward names (with close matches), unknown keys
    (with the allowed ones), a weight count that does not match, two rewards
    that TRL would log under the same name. Error messages say where in the
    list the problem is (``rewards[1].gate.reward``).

    >>> from rewardsmith.compose import rewards_from_config
    >>> funcs, weights = rewards_from_config([
    ...     {"name": "think_format", "weight": 0.2},
    ...     {"gate": {"condition": "think_format", "reward": "gsm8k_accuracy"}, "weight": 1.0},
    ... ])
    >>> [f.name for f in funcs], weights
    (['think_format', 'gsm8k_accuracy_if_think_format'], [0.2, 1.0])
    >>> funcs, weights = rewards_from_config("gsm8k_accuracy,format", "1.0,0.5")
    >>> [f.name for f in funcs], weights
    (['gsm8k_accuracy', 'think_format'], [1.0, 0.5])
    >>> rewards_from_config([{"gate": {"condition": "think_format", "reward": "gsm8k_acuracy"}}])
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.UnknownRewardError: rewards[0].gate.reward: unknown reward 'gsm8k_acuracy'. ...
    """
    entries = reward_entries(rewards, "rewards: [think_format, gsm8k_accuracy]")
    made: list[Reward] = []
    out_weights: list[float] = []
    for i, entry in enumerate(entries):
        if weights is not None and isinstance(entry, Mapping) and "weight" in entry:
            raise RewardConfigError(
                f"rewards[{i}]: give weights either on the entries (weight: ...) or as reward_weights, not both"
            )
        parts, weight = _entry(f"rewards[{i}]", entry, in_list=True, top=True)
        made += parts
        out_weights += [weight] * len(parts)
    if weights is not None:
        out_weights = _parse_weights(weights)
    _check_list(made, out_weights)
    return made, out_weights


def _check_list(made: list[Reward], weights: list[float]) -> None:
    """One weight per reward, and no two rewards TRL would log under one name."""
    if len(weights) != len(made):
        names = ", ".join(r.name for r in made)
        raise RewardConfigError(
            f"{len(weights)} reward weights for {len(made)} rewards ({names}); give one weight per reward"
        )
    names = [r.name for r in made]
    for name in dict.fromkeys(names):
        if names.count(name) > 1:
            raise RewardConfigError(
                f"two rewards would be logged as {name!r}; TRL names its metrics by reward name, so give one of "
                "them another name with `as: NAME`"
            )


def rewards_with_problems(rewards: Any, weights: Any, problems: ConfigProblems) -> tuple[list[Any], list[float] | None]:
    """The rewards and weights a config's ``rewards:`` list describes, every problem recorded in ``problems``.

    :func:`rewardsmith.compose.rewards_from_config` stops at the first bad
    entry; here each entry of a list that fails is built on its own, so that
    every unknown reward and bad setting is reported (each under its own
    index), and the entries that are right are returned for further checks
    (their columns). Problems of the list as a whole (weights that do not
    match, two rewards logged under one name) are reported once the entries
    are right. The weights are ``None`` unless the whole list resolved.

    >>> from rewardsmith.core.problems import ConfigProblems
    >>> problems = ConfigProblems()
    >>> made, weights = rewards_with_problems(["think_fromat", "gsm8k_accuracy", "countdwn"], None, problems)
    >>> [r.name for r in made], weights
    (['gsm8k_accuracy'], None)
    >>> [str(e)[:48] for e in problems.errors]
    ["rewards[0]: unknown reward 'think_fromat'. Did y", "rewards[2]: unknown reward 'countdwn'. Did you m"]
    """
    try:
        return rewards_from_config(rewards, weights)
    except RewardConfigError as exc:
        first = exc
    entries = rewards
    if isinstance(entries, str):
        entries = [name.strip() for name in entries.split(",") if name.strip()]
    made: list[Any] = []
    found = []
    if isinstance(entries, list) and len(entries) > 1:
        for i, entry in enumerate(entries):
            try:
                made += rewards_from_config([entry])[0]
            except RewardConfigError as exc:
                found.append(_at_index(exc, i))
    for error in found or [first]:
        problems.add(error)
    return made, None


def _at_index(exc: RewardConfigError, index: int) -> RewardConfigError:
    """``exc`` (raised for a one-entry list) as the error of entry ``index`` of the whole list."""
    message = str(exc)
    if not message.startswith("rewards[0]"):
        return exc
    try:
        return type(exc)(f"rewards[{index}]" + message[len("rewards[0]") :])
    except Exception:
        return RewardConfigError(f"rewards[{index}]" + message[len("rewards[0]") :])


def _build_entry(entry: Mapping[str, Any], path: str) -> Reward:
    return _one(path, entry)


for _entry_kind in ("gate", "route", "combine", "format_and_content"):
    register_entry_kind(_entry_kind, _build_entry)
