"""What ``rewardsmith rewards show`` prints: a reward's description, settings and the columns it reads."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.injection import BUILTIN_INPUTS
from rewardsmith.core.registry import find_target, get_reward
from rewardsmith.core.reward import ENGINE_SETTINGS, Reward, snake_case

__all__ = ["RewardInfo", "column_roles", "describe_reward"]


def column_roles(reward: Reward) -> tuple[list[str], list[str]]:
    """The columns a reward needs (each with its fallbacks) and the other columns it reads when present.

    A fallback of a needed column appears with it, not again among the optional ones.

    >>> column_roles(get_reward("math_accuracy"))
    (['answer (or solution)'], [])
    >>> column_roles(get_reward("llm_judge", model="m"))
    ([], ['reference'])
    """
    needs = reward.missing_columns([])
    fallbacks = {name for need in needs for name in need.partition(" (or ")[2].rstrip(")").split(", ") if name}
    return needs, [c for c in reward.optional_columns if c not in fallbacks]


@dataclass
class RewardInfo:
    """What ``rewardsmith rewards show`` prints about a reward."""

    name: str
    description: str
    settings: dict[str, Any] = field(default_factory=dict)
    engine: dict[str, Any] = field(default_factory=dict)
    required_columns: list[str] = field(default_factory=list)
    optional_columns: list[str] = field(default_factory=list)
    kind: str = ""
    #: The rollout inputs it reads (``trajectory``, ``tool_calls``, ``final_message``, ``turns``, ``environment``).
    trajectory_inputs: list[str] = field(default_factory=list)


def describe_reward(spec: Any, /, **settings: Any) -> RewardInfo:
    """Description, settings with their current values, and the columns a reward reads.

    >>> info = describe_reward("gsm8k_accuracy")
    >>> info.required_columns
    ['answer']
    """
    try:
        made = get_reward(spec, **settings)
    except RewardConfigError as exc:
        target = find_target(spec) if isinstance(spec, str) else spec
        if settings or not (isinstance(target, type) and issubclass(target, Reward)):
            raise
        return _describe_unbuilt(target, str(exc))
    doc = inspect.getdoc(made) if not hasattr(made, "fn") else inspect.getdoc(made.fn)
    description = (doc or "").split("\n\n")[0].replace("\n", " ").strip()
    if dataclasses.is_dataclass(made) and not hasattr(made, "fn"):
        own = made.settings
    else:
        own = {k: v for k, v in made.settings.items() if k not in BUILTIN_INPUTS}
    needs, optional = column_roles(made)
    engine = {k: getattr(made, k) for k in (*ENGINE_SETTINGS, "max_concurrency") if hasattr(made, k)}
    kind = type(made).__name__
    return RewardInfo(
        made.name,
        description,
        own,
        engine,
        needs,
        optional,
        kind,
        made.injection.trajectory_inputs,
    )


def _describe_unbuilt(cls: type[Reward], needs: str) -> RewardInfo:
    """Describe a reward class that cannot be built without settings (its fields and defaults)."""
    doc = inspect.getdoc(cls) or ""
    description = doc.split("\n\n")[0].replace("\n", " ").strip()
    fields = {f.name: f for f in dataclasses.fields(cls)}
    own = {name: f.default for name, f in fields.items() if name not in ENGINE_SETTINGS}
    engine = {name: fields[name].default for name in ENGINE_SETTINGS if name in fields}
    name = cls.default_name or snake_case(cls.__name__)
    return RewardInfo(name, f"{description} ({needs})", own, engine, [], [], cls.__name__)
