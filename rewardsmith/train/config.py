"""The training config: one YAML file, validated before anything loads.

Sections: ``model``, ``dataset``, ``rewards`` (plus ``reward_weights``),
``trainer`` (any ``GRPOConfig`` field, checked by TRL's own class),
``resume_from_checkpoint`` and ``imports``. Seed-style flat configs
(``model_name_or_path``, ``reward_funcs: "accuracy,format"``, training
arguments at the top level, ...) are rewritten into that shape first by
:mod:`rewardsmith.config.seed` (the config layer reads every dialect), so both kinds of file work.

Command-line overrides are ``key=value``: dotted keys address the sectioned
config (``trainer.learning_rate=3e-3``), flat keys work as they would in the
file (``max_steps=2`` is a training argument).

Every section is validated on its own and every problem is reported at once
(:class:`~rewardsmith.core.problems.ConfigProblems`); the sections that are
valid are still checked further by :func:`rewardsmith.train.plan.plan_training`.

Relative paths in a config (local datasets, ``./my_rewards.py:fn``, imports)
are resolved from the config file's folder, so a config runs from anywhere.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from rewardsmith.config.imports import resolve_import_path
from rewardsmith.config.overrides import apply_overrides
from rewardsmith.config.read import read_config as read_file
from rewardsmith.config.read import resolve_reward_paths, training_shape
from rewardsmith.config.seed import SECTIONS
from rewardsmith.core.names import did_you_mean
from rewardsmith.core.problems import ConfigError, ConfigProblems

__all__ = [
    "ConfigError",
    "ConfigSections",
    "DatasetSettings",
    "LoraSettings",
    "ModelSettings",
    "TrainConfig",
    "apply_overrides",
    "load_config",
    "parse_config",
    "read_config",
    "read_sections",
]

TINY_MODEL = "builtin:tiny"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class LoraSettings(_Strict):
    """LoRA adapters (peft). ``target_modules`` is a list of module names or ``"all-linear"``."""

    r: int = Field(16, gt=0)
    alpha: int = Field(32, gt=0)
    dropout: float = Field(0.05, ge=0, lt=1)
    target_modules: str | list[str] = "all-linear"
    bias: Literal["none", "all", "lora_only"] = "none"
    modules_to_save: list[str] | None = None
    use_rslora: bool = False


class ModelSettings(_Strict):
    """Which model to train and how to load it.

    ``name_or_path`` is a Hub id, a local folder, or a built-in model
    (``builtin:tiny``, the offline tiny model, built on first use, ``tiny``
    holding its build settings; ``builtin:smollm2-135m-instruct``, a real small
    chat model; see :mod:`rewardsmith.train.builtin_models`). ``gguf_file`` is
    a GGUF file in that folder (or a path of its own), converted once into a
    folder transformers loads. ``model: NAME`` is short for ``model:
    {name_or_path: NAME}``. ``special_tokens`` maps new tokens to short descriptions: each
    is added to the tokenizer and its embedding starts as the mean embedding
    of its description's tokens. ``load_in_4bit`` is QLoRA (CUDA only).
    """

    name_or_path: str
    revision: str | None = None
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    attn_implementation: str | None = None
    trust_remote_code: bool = False
    chat_template: str | None = None
    special_tokens: dict[str, str] = Field(default_factory=dict)
    lora: LoraSettings | None = None
    load_in_4bit: bool = False
    load_in_8bit: bool = False
    tiny: dict[str, Any] = Field(default_factory=dict)
    gguf_file: str | None = None


class DatasetSettings(_Strict):
    """Where the prompts come from (see :func:`rewardsmith.data.prepare_dataset`).

    ``mix`` trains on several prepared datasets at once (each with its own
    converter and a ``task`` value), concatenated and shuffled, for routing
    rewards by task. ``eval_split`` (or ``eval_source``) adds an evaluation
    dataset prepared the same way.
    """

    source: str | list[dict[str, Any]] | None = None
    config: str | None = None
    split: str = "train"
    converter: str = "generic"
    converter_settings: dict[str, Any] = Field(default_factory=dict)
    system_prompt: str | None = None
    format_template: str | None = None
    conversational: bool = True
    max_samples: int | None = Field(None, gt=0)
    shuffle: bool = False
    seed: int = 0
    task: str | None = None
    eval_source: str | list[dict[str, Any]] | None = None
    eval_config: str | None = None
    eval_split: str | None = None
    eval_max_samples: int | None = Field(None, gt=0)
    mix: list[DatasetSettings] | None = None

    @field_validator("mix")
    @classmethod
    def _mix_has_tasks(cls, mix: list[DatasetSettings] | None) -> list[DatasetSettings] | None:
        if mix is not None:
            if not mix:
                raise ValueError("mix needs at least one dataset")
            for i, part in enumerate(mix):
                if part.source is None:
                    raise ValueError(f"mix[{i}] needs a source")
        return mix


class TrainConfig(_Strict):
    """A whole training run.

    ``imports`` are modules (``pkg.mod``) or files (``./my_rewards.py``)
    imported before anything is resolved, so that the rewards and converters
    they register can be named. ``health`` turns the reward-health monitor
    (:mod:`rewardsmith.health.callback`) off (``false``) or sets its thresholds
    and ``fail_fast`` (a mapping); it is on by default.
    """

    model: ModelSettings
    dataset: DatasetSettings
    rewards: list[Any]
    reward_weights: list[float] | None = None
    trainer: dict[str, Any] = Field(default_factory=dict)
    resume_from_checkpoint: bool | str | None = None
    imports: list[str] = Field(default_factory=list)
    health: bool | dict[str, Any] = True
    #: Tool functions and environment factories for TRL's tool loop (see :mod:`rewardsmith.train.tools`).
    tools: list[str] = Field(default_factory=list)
    environment: str | dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The resolved config as plain data (what is saved into ``output_dir``)."""
        return self.model_dump(mode="json", exclude_none=True)


# -- loading -----------------------------------------------------------------------------------------


def _looks_local(source: str, base: Path) -> Path | None:
    path = Path(source).expanduser()
    if not path.is_absolute():
        path = base / path
    return path if path.exists() else None


def _resolve_paths(raw: dict[str, Any], base: Path) -> None:
    """Make relative local paths absolute, from the config file's folder."""
    dataset = raw.get("dataset")
    for node in [dataset, *((dataset or {}).get("mix") or [])] if isinstance(dataset, dict) else []:
        for key in ("source", "eval_source"):
            value = node.get(key) if isinstance(node, dict) else None
            if isinstance(value, str) and (local := _looks_local(value, base)):
                node[key] = str(local)
    model = raw.get("model")
    if isinstance(model, str):  # `model: NAME` is short for `model: {name_or_path: NAME}`
        model = raw["model"] = {"name_or_path": model}
    if isinstance(model, dict) and isinstance(model.get("name_or_path"), str):
        local = _looks_local(model["name_or_path"], base)
        if local and model["name_or_path"].startswith((".", "/", "~")):
            model["name_or_path"] = str(local)

    if isinstance(raw.get("rewards"), list):
        raw["rewards"] = resolve_reward_paths(raw["rewards"], base)
    if isinstance(raw.get("imports"), list):
        raw["imports"] = [resolve_import_path(spec, base) for spec in raw["imports"]]
    from rewardsmith.train.tools import resolve_tool_paths

    resolve_tool_paths(raw, base)


@dataclass
class ConfigSections:
    """The sections of a config that are valid on their own (``None`` for a section with problems).

    What :func:`rewardsmith.train.plan.plan_training` checks further, so that
    a mistake in one section does not hide the mistakes in another.
    ``config`` is the whole :class:`TrainConfig` when every section is valid.

    >>> config = parse_config({"model": {"name_or_path": "m"}, "dataset": {"source": "d.jsonl"}, "rewards": ["a"]})
    >>> sections = ConfigSections.of(config)
    >>> sections.model.name_or_path, sections.rewards, sections.config is config
    ('m', ['a'], True)
    """

    model: ModelSettings | None = None
    dataset: DatasetSettings | None = None
    rewards: list[Any] | None = None
    reward_weights: list[float] | None = None
    trainer: dict[str, Any] | None = None
    imports: list[str] = field(default_factory=list)
    config: TrainConfig | None = None
    health: bool | dict[str, Any] = True

    @classmethod
    def of(cls, config: TrainConfig) -> ConfigSections:
        """The sections of a valid config."""
        return cls(
            config.model,
            config.dataset,
            config.rewards,
            config.reward_weights,
            config.trainer,
            list(config.imports),
            config,
            config.health,
        )


def read_sections(raw: Any, base: Path | None, overrides: list[str] | None, problems: ConfigProblems) -> ConfigSections:
    """Shape and validate a raw config (seed-style keys mapped, overrides applied), section by section.

    Every problem is recorded in ``problems``; the sections without problems
    are returned for further checks.

    >>> problems = ConfigProblems()
    >>> sections = read_sections({"model": {"name_or_path": "m", "lorra": {}}, "dataset": {"source": "d.jsonl"},
    ...                           "rewards": ["think_format"]}, None, ["max_steps=2"], problems)
    >>> sections.model is None, sections.dataset.source, sections.trainer
    (True, 'd.jsonl', {'max_steps': 2})
    >>> print(problems.errors[0])
    model.lorra: unknown key. Did you mean: lora?
    """
    if not isinstance(raw, dict):
        problems.add(f"a config is a mapping of sections (model, dataset, rewards, ...), got {type(raw).__name__}")
        return ConfigSections()
    shaped = training_shape(raw, base, overrides, problems)
    _resolve_paths(shaped, base or Path.cwd())
    try:
        config = TrainConfig.model_validate(shaped)
    except ValidationError as exc:
        bad = set()
        for error in exc.errors():
            problems.add(_explain(error))
            bad.add(error["loc"][0] if error["loc"] else "config")
        if "config" in bad:
            return ConfigSections()
        return _valid_sections(shaped, bad)
    return ConfigSections.of(config)


def _valid_sections(shaped: dict[str, Any], bad: set[Any]) -> ConfigSections:
    """The sections of ``shaped`` that have no problem, validated one by one."""
    out = ConfigSections()
    for name, info in TrainConfig.model_fields.items():
        if name in bad or not hasattr(out, name):
            continue
        if name in shaped:
            setattr(out, name, TypeAdapter(info.annotation).validate_python(shaped[name]))
        elif not info.is_required():
            setattr(out, name, info.get_default(call_default_factory=True))
    return out


def _explain(error: Any) -> str:
    """One validation error as ``where: what`` (an unknown key with close matches among the known ones)."""
    loc = error["loc"]
    where = ".".join(str(p) for p in loc) or "config"
    if error["type"] == "extra_forbidden":
        known = _keys_at(loc[:-1])
        hint = did_you_mean(str(loc[-1]), known)
        if not loc[:-1]:
            return f"unknown config key {loc[-1]!r}.{hint} A config has the sections {', '.join(SECTIONS)}"
        return f"{where}: unknown key.{hint or ' The keys there are: ' + ', '.join(known)}"
    if error["type"] == "missing":
        return f"{where}: required, but missing"
    return f"{where}: {error['msg']}"


def _keys_at(loc: tuple[Any, ...]) -> list[str]:
    """The keys the config takes at ``loc`` (a path of section names, list indices skipped)."""
    model: Any = TrainConfig
    for part in loc:
        if isinstance(part, int):
            continue
        info = model.model_fields.get(part) if isinstance(model, type) else None
        model = _settings_class(info.annotation) if info is not None else None
        if model is None:
            return []
    return list(model.model_fields)


def _settings_class(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _settings_class(arg)
        if found is not None:
            return found
    return None


def parse_config(raw: dict[str, Any], base: Path | None = None, overrides: list[str] | None = None) -> TrainConfig:
    """Validate a raw config dict (seed-style keys mapped, overrides applied) into a :class:`TrainConfig`.

    Raises a :class:`ConfigError` listing every problem of the config's shape.

    >>> parse_config({"model_name_or_path": "m", "dataset": "d.jsonl", "reward_funcs": "a,b"}).rewards
    ['a', 'b']
    """
    problems = ConfigProblems()
    sections = read_sections(raw, base, overrides, problems)
    problems.raise_if_any()
    assert sections.config is not None
    return sections.config


def load_config(path: str | Path, overrides: list[str] | None = None) -> TrainConfig:
    """Read, normalise and validate a YAML training config.

    >>> import tempfile, textwrap
    >>> path = Path(tempfile.mkdtemp()) / "run.yaml"
    >>> _ = path.write_text(textwrap.dedent('''
    ...     model: {name_or_path: builtin:tiny}
    ...     dataset: {source: data.jsonl}
    ...     rewards: [think_format]
    ... '''))
    >>> load_config(path, ["trainer.max_steps=5"]).trainer
    {'max_steps': 5}
    """
    raw, base = read_config(path)
    return parse_config(raw, base=base, overrides=overrides)


def read_config(path: str | Path) -> tuple[dict[str, Any], Path]:
    """The mapping a YAML training config holds, and its folder (where its relative paths start).

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "run.yaml"
    >>> _ = path.write_text("rewards: [think_format]")
    >>> read_config(path) == ({"rewards": ["think_format"]}, path.resolve().parent)
    True
    """
    read = read_file(path, what="training config", sections="model, dataset and rewards", error=ConfigError)
    return read.data, read.base  # type: ignore[return-value]
