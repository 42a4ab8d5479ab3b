"""The training config: one YAML file, validated before anything loads.

Sections: ``model``, ``dataset``, ``rewards`` (plus ``reward_weights``),
``trainer`` (any ``GRPOConfig`` field, checked by TRL's own class),
``resume_from_checkpoint``. Seed-style flat configs (``model_name_or_path``,
``reward_funcs: "accuracy,format"``, ``finetuning_type: lora``, ``lora_rank``,
training arguments at the top level...) are rewritten into that shape first,
so both kinds of file work. Command-line overrides are dotted keys:
``trainer.learning_rate=3e-3``.

Relative paths in a config (local datasets, ``./my_rewards.py:fn``) are
resolved from the config file's folder, so a config runs from anywhere.
"""

from __future__ import annotations

import copy
import itertools
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rewardsmith.core.configfile import read_config_file
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.names import did_you_mean

__all__ = [
    "ConfigError",
    "DatasetSettings",
    "LoraSettings",
    "ModelSettings",
    "TrainConfig",
    "apply_overrides",
    "load_config",
    "parse_config",
]

TINY_MODEL = "builtin:tiny"


class ConfigError(RewardConfigError):
    """A training config that cannot work; raised before any model loads."""


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

    ``name_or_path`` is a Hub id, a local folder, or ``builtin:tiny`` (the
    offline tiny model, built on first use; ``tiny`` holds its build
    settings). ``special_tokens`` maps new tokens to short descriptions: each
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
    """A whole training run."""

    model: ModelSettings
    dataset: DatasetSettings
    rewards: list[Any] | str
    reward_weights: list[float] | str | None = None
    trainer: dict[str, Any] = Field(default_factory=dict)
    resume_from_checkpoint: bool | str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The resolved config as plain data (what is saved into ``output_dir``)."""
        return self.model_dump(mode="json", exclude_none=True)


# -- seed-style flat configs --------------------------------------------------------------------------

_FLAT_MODEL = {
    "model_name_or_path": "name_or_path",
    "torch_dtype": "dtype",
    "dtype": "dtype",
    "attn_implementation": "attn_implementation",
    "trust_remote_code": "trust_remote_code",
    "load_in_4bit": "load_in_4bit",
    "load_in_8bit": "load_in_8bit",
    "model_revision": "revision",
}
_FLAT_LORA = {
    "lora_rank": "r",
    "lora_r": "r",
    "lora_alpha": "alpha",
    "lora_dropout": "dropout",
    "lora_target": "target_modules",
}
_FLAT_DATASET = {
    "dataset": "source",
    "dataset_name": "source",
    "dataset_config": "config",
    "dataset_split": "split",
    "dataset_train_split": "split",
    "system_prompt": "system_prompt",
    "max_samples": "max_samples",
    "converter": "converter",
}
_SECTIONS = ("model", "dataset", "rewards", "reward_weights", "trainer", "resume_from_checkpoint", "lora", "peft")


def _grpo_fields() -> set[str]:
    import dataclasses

    from trl import GRPOConfig

    return {f.name for f in dataclasses.fields(GRPOConfig)}


def normalize_flat(raw: dict[str, Any]) -> dict[str, Any]:
    """Rewrite seed-style flat keys into the sectioned shape (a new dict; the input is left alone).

    >>> shaped = normalize_flat({"model_name_or_path": "m", "dataset": "d.jsonl", "reward_funcs": "accuracy,format",
    ...                          "reward_weights": "1.0,0.5", "finetuning_type": "lora", "lora_rank": 8,
    ...                          "learning_rate": 1e-5})
    >>> shaped["model"], shaped["dataset"], shaped["trainer"]
    ({'name_or_path': 'm', 'lora': {'r': 8}}, {'source': 'd.jsonl'}, {'learning_rate': 1e-05})
    >>> shaped["rewards"], shaped["reward_weights"]
    ('accuracy,format', '1.0,0.5')
    """
    out: dict[str, Any] = {}
    flat = dict(raw)
    for key in _SECTIONS:
        if key in flat:
            out[key] = copy.deepcopy(flat.pop(key))
    model = out.setdefault("model", {}) if isinstance(out.get("model", {}), dict) else out["model"]
    dataset = out.get("dataset")
    if isinstance(dataset, (str, list)):
        out["dataset"] = dataset = {"source": dataset}
    for flat_key, key in _FLAT_MODEL.items():
        if flat_key in flat:
            model[key] = flat.pop(flat_key)
    lora = {key: flat.pop(flat_key) for flat_key, key in _FLAT_LORA.items() if flat_key in flat}
    finetuning = flat.pop("finetuning_type", None)
    if finetuning not in (None, "lora", "full", "qlora"):
        raise ConfigError(f"finetuning_type must be 'lora', 'qlora' or 'full', got {finetuning!r}")
    if finetuning == "qlora":
        model["load_in_4bit"] = True
    if lora or finetuning in ("lora", "qlora"):
        if isinstance(lora.get("target_modules"), str) and "," in lora["target_modules"]:
            lora["target_modules"] = [m.strip() for m in lora["target_modules"].split(",") if m.strip()]
        if lora.get("target_modules") == "all":
            lora["target_modules"] = "all-linear"
        model["lora"] = {**(model.get("lora") or {}), **lora}
    for flat_key, key in _FLAT_DATASET.items():
        if flat_key in flat:
            out.setdefault("dataset", {})[key] = flat.pop(flat_key)
    if "reward_funcs" in flat:
        if "rewards" in out:
            raise ConfigError("give rewards either as rewards: [...] or as reward_funcs, not both")
        out["rewards"] = flat.pop("reward_funcs")
    for section in ("lora", "peft"):  # top-level LoRA section
        if section in out:
            section_value = out.pop(section)
            if section_value:
                model["lora"] = {**(model.get("lora") or {}), **section_value}
    if flat:
        grpo = _grpo_fields()
        trainer = out.setdefault("trainer", {})
        for key in list(flat):
            if key in grpo:
                trainer[key] = flat.pop(key)
    if flat:
        key = next(iter(flat))
        raise ConfigError(
            f"unknown config key {key!r}.{did_you_mean(key, [*_SECTIONS, *_FLAT_MODEL, *_FLAT_DATASET])} "
            f"A config has the sections {', '.join(_SECTIONS[:6])}; training arguments go under trainer:"
        )
    if not model:
        out.pop("model", None)
    return out


# -- overrides ---------------------------------------------------------------------------------------


def _parse_value(text: str) -> Any:
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value


def apply_overrides(raw: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``dotted.key=value`` overrides (values read as YAML) to a raw config dict.

    >>> apply_overrides({"trainer": {"learning_rate": 1e-6}}, ["trainer.learning_rate=3e-3", "model.name_or_path=x"])
    {'trainer': {'learning_rate': '3e-3'}, 'model': {'name_or_path': 'x'}}
    >>> apply_overrides({"dataset": {"mix": [{"source": "a"}, {"source": "b"}]}}, ["dataset.mix.1.source=c"])
    {'dataset': {'mix': [{'source': 'a'}, {'source': 'c'}]}}
    """
    out = copy.deepcopy(raw)
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"overrides are written dotted.key=value (e.g. trainer.learning_rate=3e-3), got {item!r}")
        parts = key.strip().split(".")
        node: Any = out
        for part, following in itertools.pairwise(parts):
            node = _child(node, part, following, item)
        _set(node, parts[-1], _parse_value(text), item)
    return out


def _child(node: Any, part: str, following: str, item: str) -> Any:
    if isinstance(node, list):
        index = _index(node, part, item)
        return node[index]
    child = node.get(part)
    if child is None:
        child = node[part] = [] if following.isdigit() else {}
    if not isinstance(child, (dict, list)):
        raise ConfigError(f"override {item!r}: {part!r} is a value, not a section")
    return child


def _index(node: list, part: str, item: str) -> int:
    if not part.isdigit() or int(part) >= len(node):
        raise ConfigError(f"override {item!r}: {part!r} is not an index of a list of {len(node)}")
    return int(part)


def _set(node: Any, key: str, value: Any, item: str) -> None:
    if isinstance(node, list):
        node[_index(node, key, item)] = value
    else:
        node[key] = value


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
    if isinstance(model, dict) and isinstance(model.get("name_or_path"), str):
        local = _looks_local(model["name_or_path"], base)
        if local and model["name_or_path"].startswith((".", "/", "~")):
            model["name_or_path"] = str(local)

    def fix_reward(spec: Any) -> Any:
        if isinstance(spec, str) and ".py:" in spec:
            file_part, _, attr = spec.rpartition(":")
            local = _looks_local(file_part, base)
            return f"{local}:{attr}" if local else spec
        if isinstance(spec, dict):
            return {k: fix_reward(v) for k, v in spec.items()}
        if isinstance(spec, list):
            return [fix_reward(v) for v in spec]
        return spec

    if "rewards" in raw and not isinstance(raw["rewards"], str):
        raw["rewards"] = fix_reward(raw["rewards"])
    elif isinstance(raw.get("rewards"), str):
        raw["rewards"] = ",".join(fix_reward(part.strip()) for part in raw["rewards"].split(","))


def parse_config(raw: dict[str, Any], base: Path | None = None, overrides: list[str] | None = None) -> TrainConfig:
    """Validate a raw config dict (flat keys and overrides applied) into a :class:`TrainConfig`."""
    if not isinstance(raw, dict):
        raise ConfigError(f"a config is a mapping of sections, got {type(raw).__name__}")
    shaped = normalize_flat(raw)
    shaped = apply_overrides(shaped, list(overrides or []))
    _resolve_paths(shaped, base or Path.cwd())
    try:
        return TrainConfig.model_validate(shaped)
    except ValidationError as exc:
        raise ConfigError(_explain(exc)) from None


def _explain(exc: ValidationError) -> str:
    lines = []
    for error in exc.errors()[:6]:
        where = ".".join(str(p) for p in error["loc"]) or "config"
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            message = "unknown key"
        elif error["type"] == "missing":
            message = "required, but missing"
        lines.append(f"{where}: {message}")
    more = f" (and {len(exc.errors()) - 6} more)" if len(exc.errors()) > 6 else ""
    return "the config is not valid: " + "; ".join(lines) + more


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
    path = Path(path).expanduser()
    raw = read_config_file(path, what="training config", sections="model, dataset and rewards", error=ConfigError)
    return parse_config(raw, base=path.resolve().parent, overrides=overrides)
