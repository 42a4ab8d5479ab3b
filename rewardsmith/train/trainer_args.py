"""The ``trainer:`` section as TRL's own ``GRPOConfig``: every field accepted, checked by TRL's class.

Before TRL sees them, values are coerced to the field types (YAML reads
``3e-3`` as a string), unknown field names get close-match suggestions, every
numeric field is checked to hold a number of its kind (``num_generations:
four`` is an error naming the field, not TRL's ``unsupported operand``),
counts and rates are checked to be in range (``num_generations: 0`` is an error
before TRL divides by it), and a few defaults are adjusted to the machine (no
bf16 where there is no GPU).
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from pathlib import Path
from typing import Any

from rewardsmith.config.open_r1 import OPEN_R1_SETTINGS
from rewardsmith.core.names import suggest_field
from rewardsmith.core.problems import ConfigError, ConfigProblems
from rewardsmith.train.removed import translate_removed

__all__ = ["build_trainer_args", "check_number", "coerce", "trainer_fields"]


def trainer_fields(algorithm: str = "grpo") -> dict[str, dataclasses.Field]:
    """The dataclass fields of TRL's config class for ``algorithm``."""
    from trl import GRPOConfig, RLOOConfig

    cls = {"grpo": GRPOConfig, "rloo": RLOOConfig}[algorithm]
    return {f.name: f for f in dataclasses.fields(cls)}


def _base_types(annotation: Any) -> tuple[type, ...]:
    if isinstance(annotation, str):
        names = {part.strip() for part in annotation.split("|")}
        known = {"int": int, "float": float, "bool": bool, "str": str}
        return tuple(known[n] for n in names if n in known)
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        return tuple(t for t in typing.get_args(annotation) if isinstance(t, type))
    return (annotation,) if isinstance(annotation, type) else ()


def coerce(name: str, value: Any, annotation: Any) -> Any:
    """``value`` converted to the field's type when it is a string that spells one.

    >>> coerce("learning_rate", "3e-3", float), coerce("max_steps", "10", int), coerce("bf16", "false", bool | None)
    (0.003, 10, False)
    """
    if not isinstance(value, str):
        if isinstance(value, int) and not isinstance(value, bool) and float in _base_types(annotation):
            return float(value) if int not in _base_types(annotation) else value
        return value
    kinds = _base_types(annotation)
    text = value.strip()
    if bool in kinds and text.lower() in ("true", "false", "yes", "no"):
        return text.lower() in ("true", "yes")
    if int in kinds:
        try:
            return int(text)
        except ValueError:
            pass
    if float in kinds:
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"trainer.{name} must be a number, got {value!r}") from None
    return value


#: Trainer fields that count something and must be at least this (``None`` stays allowed where the field takes it).
_AT_LEAST: dict[str, float] = {
    "num_generations": 2,
    "per_device_train_batch_size": 1,
    "per_device_eval_batch_size": 1,
    "gradient_accumulation_steps": 1,
    "num_iterations": 1,
    "steps_per_generation": 1,
    "generation_batch_size": 1,
    "max_completion_length": 1,
    "vllm_tensor_parallel_size": 1,
    "learning_rate": 0,
    "beta": 0,
    "top_k": 0,
    "warmup_steps": 0,
    "max_grad_norm": 0,
    "dataloader_num_workers": 0,
    "epsilon": 0,
}
#: Trainer fields that must be above zero.
_ABOVE_ZERO = ("num_train_epochs", "logging_steps", "save_steps", "eval_steps", "temperature", "top_p")
_WHY = {"num_generations": " (group-relative methods compare several completions per prompt; 8 is common)"}


def check_number(name: str, value: Any, annotation: Any) -> None:
    """A :class:`ConfigError` when a numeric field holds something else, or a count or rate out of its range.

    >>> check_number("learning_rate", 3e-3, float)
    >>> check_number("num_generations", "four", int | None)
    Traceback (most recent call last):
    ...
    rewardsmith.core.problems.ConfigError: trainer.num_generations must be a whole number, got 'four'
    """
    kinds = _base_types(annotation)
    numeric = {int, float} & set(kinds)
    if not numeric or value is None or str in kinds:
        return
    whole = float not in kinds
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (whole and not isinstance(value, int)):
        raise ConfigError(f"trainer.{name} must be {'a whole number' if whole else 'a number'}, got {value!r}")
    if isinstance(value, float) and math.isnan(value):
        raise ConfigError(f"trainer.{name} must be a number, got NaN")
    low = _AT_LEAST.get(name)
    if low is not None and value < low:
        raise ConfigError(f"trainer.{name} must be at least {low:g}, got {value!r}{_WHY.get(name, '')}")
    if name in _ABOVE_ZERO and value <= 0:
        raise ConfigError(f"trainer.{name} must be above 0, got {value!r}")


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def build_trainer_args(
    trainer: dict[str, Any],
    *,
    reward_weights: list[float] | None,
    default_output_dir: str | Path,
    algorithm: str = "grpo",
    notes: list[str] | None = None,
) -> Any:
    """TRL's config object for the run (``GRPOConfig`` by default), or a :class:`ConfigError` saying what to change.

    Every problem is reported at once: each unknown field, each value of the
    wrong type, then what TRL's own class rejects, batch sizes and loggers.
    Fields TRL 1.16 removed are translated where the meaning is clear
    (:mod:`rewardsmith.train.removed`), with a note appended to ``notes``.

    >>> args = build_trainer_args({"learning_rate": "3e-3", "max_steps": 2}, reward_weights=None,
    ...                           default_output_dir="outputs/doctest")
    >>> args.learning_rate, args.max_steps
    (0.003, 2)
    """
    from trl import GRPOConfig, RLOOConfig

    fields = trainer_fields(algorithm)
    problems = ConfigProblems()
    trainer = dict(trainer)
    translated = translate_removed(trainer, problems)
    if notes is not None:
        notes.extend(translated)
    settings: dict[str, Any] = _known_fields(trainer, fields, algorithm, problems)
    if "reward_weights" in settings and reward_weights is not None:
        problems.add("give reward weights on the rewards (weight: ...) or as reward_weights, not in trainer:")
    if reward_weights is not None and any(w != 1.0 for w in reward_weights):
        settings["reward_weights"] = list(reward_weights)
    settings.setdefault("output_dir", str(default_output_dir))
    if not _cuda():
        _cpu_defaults(settings, problems)
    problems.raise_if_any()  # TRL's own check needs settings that are right one by one
    with problems.check():
        _check_batch(_Settings(settings, fields))
    problems.raise_if_any()  # before TRL, whose message names neither field to change
    cls = {"grpo": GRPOConfig, "rloo": RLOOConfig}[algorithm]
    try:
        args = cls(**settings)
    except Exception as exc:  # TRL's checks raise ValueError, TypeError, even ZeroDivisionError: all are config errors
        raise ConfigError(f"TRL rejects the trainer settings: {type(exc).__name__}: {exc}") from None
    with problems.check():
        _check_batch(args)
    with problems.check():
        _check_loggers(args)
    problems.raise_if_any()
    return args


def _known_fields(
    trainer: dict[str, Any], fields: dict[str, Any], algorithm: str, problems: ConfigProblems
) -> dict[str, Any]:
    """The trainer settings that are fields of TRL's config, each coerced to its type; the rest are problems."""
    settings: dict[str, Any] = {}
    for name, value in trainer.items():
        if name in OPEN_R1_SETTINGS:
            reward, setting = OPEN_R1_SETTINGS[name]
            problems.add(
                f"trainer.{name} is an open-r1 reward setting, not a training argument: it sets the {reward} "
                f"reward's {setting}. Write it on that reward's entry (kwargs: {{{setting}: ...}}), or at the top "
                "level of a recipe-style config"
            )
            continue
        if name not in fields:
            problems.add(
                f"trainer.{name} is not a {algorithm.upper()} training argument.{suggest_field(name, fields)} "
                "Every field of TRL's GRPOConfig is accepted under trainer:"
            )
            continue
        with problems.check():
            settings[name] = coerce(name, value, fields[name].type)
            check_number(name, settings[name], fields[name].type)
    return settings


def _cpu_defaults(settings: dict[str, Any], problems: ConfigProblems) -> None:
    """Without a GPU: float32 and no pinned memory, unless the config asks for half precision (a problem)."""
    settings.setdefault("bf16", False)
    settings.setdefault("fp16", False)
    settings.setdefault("dataloader_pin_memory", False)
    if settings.get("bf16") or settings.get("fp16"):
        problems.add(
            "trainer.bf16/fp16 need a GPU and none is available; remove them (training runs in float32 on the CPU)"
        )


#: The package each ``report_to`` backend needs (transformers imports it when the trainer starts).
_LOGGER_PACKAGES = {
    "wandb": ("wandb",),
    "trackio": ("trackio",),
    "tensorboard": ("tensorboard", "tensorboardX"),
    "mlflow": ("mlflow",),
    "comet_ml": ("comet_ml",),
    "clearml": ("clearml",),
    "swanlab": ("swanlab",),
}


def _check_loggers(args: Any) -> None:
    import importlib.util

    for backend in getattr(args, "report_to", None) or []:
        packages = _LOGGER_PACKAGES.get(backend)
        if packages and not any(importlib.util.find_spec(p) for p in packages):
            raise ConfigError(
                f"trainer.report_to includes {backend!r} but {packages[0]} is not installed; "
                f"pip install {packages[0]}, or set report_to: none"
            )


class _Settings:
    """Trainer settings as given, with TRL's defaults for the rest (what ``args.<field>`` would be)."""

    def __init__(self, settings: dict[str, Any], fields: dict[str, dataclasses.Field]) -> None:
        self.settings = settings
        self.fields = fields

    def __getattr__(self, name: str) -> Any:
        if name in self.settings:
            return self.settings[name]
        field = self.fields.get(name)
        return None if field is None or field.default is dataclasses.MISSING else field.default


def _check_batch(args: Any) -> None:
    generations = getattr(args, "num_generations", None)
    if generations is None:
        return
    if generations < 2:
        raise ConfigError(
            f"trainer.num_generations is {generations}; group-relative methods compare several completions per prompt, "
            "so use at least 2 (8 is common)"
        )
    if getattr(args, "generation_batch_size", None):
        batch, made_of = args.generation_batch_size, "trainer.generation_batch_size"
    else:
        steps = getattr(args, "steps_per_generation", None) or args.gradient_accumulation_steps
        batch = args.per_device_train_batch_size * steps
        steps_field = (
            "steps_per_generation" if getattr(args, "steps_per_generation", None) else "gradient_accumulation_steps"
        )
        made_of = f"trainer.per_device_train_batch_size ({args.per_device_train_batch_size}) × {steps_field} ({steps})"
    if batch % generations:
        multiple = generations * max(1, round(batch / generations))
        divisor = f", or trainer.num_generations to a divisor of {batch} (at least 2)" if batch >= 2 else ""
        raise ConfigError(
            f"a generation batch holds {batch} completions ({made_of}), which is not divisible by "
            f"trainer.num_generations ({generations}): every prompt's {generations} completions must fit in one batch. "
            f"Set trainer.per_device_train_batch_size to {multiple} (a multiple of num_generations){divisor}"
        )
