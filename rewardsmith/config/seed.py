"""The seed-style config dialect: flat keys from existing GRPO scripts, mapped onto rewardsmith's config.

Many GRPO setups describe a run with one flat mapping of keys
(``model_name_or_path``, ``dataset``, ``reward_funcs: "accuracy,format"``,
``finetuning_type: lora``, ``lora_rank``, training arguments at the top
level, ...). Everything that understands that dialect lives here, so the rest
of rewardsmith sees one shape only (``model:``, ``dataset:``, ``rewards:``,
``trainer:``):

* :func:`normalize_flat` rewrites a flat config into the sectioned shape
  (:data:`SEED_KEYS` is the mapping; docs/training.md has it as a table);
* :func:`comma_list` reads the comma-separated strings the dialect uses for
  lists (``reward_funcs: "accuracy,format"``, ``reward_weights: "1.0,0.5"``,
  ``lora_target: q_proj,v_proj``);
* :func:`split_overrides` lets command-line overrides use the flat form
  (``max_steps=2`` as well as ``trainer.max_steps=2``);
* open-r1 recipe keys (``cosine_*``, ``repetition_*``, ``dataset_prompt_column``,
  ``chat_template``, ...) are moved where they belong by
  :func:`rewardsmith.config.open_r1.open_r1_keys`, and fields TRL 1.16 removed
  (:data:`REMOVED_FIELDS`) go to ``trainer`` to be translated
  (:mod:`rewardsmith.train.removed`).

A sectioned config passes through unchanged, so both kinds of file (and a mix)
work.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from rewardsmith.config.files import load_yaml, read_text
from rewardsmith.config.open_r1 import open_r1_keys, open_r1_reward_names
from rewardsmith.core.names import suggest_field
from rewardsmith.core.problems import ConfigError, ConfigProblems

__all__ = ["REMOVED_FIELDS", "SECTIONS", "SEED_KEYS", "comma_list", "normalize_flat", "split_overrides"]

#: Removed field -> what replaced it (for messages and the docs).
REMOVED_FIELDS: dict[str, str] = {
    "warmup_ratio": "warmup_steps (a float in [0, 1) there is a ratio of the total steps)",
    "vllm_sampling_params": "the GRPOConfig fields temperature, top_p, top_k, min_p, repetition_penalty, and "
    "generation_kwargs (passed to vLLM's SamplingParams) for anything else",
    "overwrite_output_dir": "nothing: transformers 5 always writes into output_dir; resume with resume_from_checkpoint",
    "max_prompt_length": "nothing in GRPOTrainer, which no longer truncates prompts: keep prompts short in the data "
    "(filter long rows), and with vLLM bound prompt + completion with vllm_max_model_length",
}
#: The sections of a rewardsmith config (``lora`` and ``peft`` are seed-style LoRA sections, moved into ``model``).
SECTIONS = (
    "model",
    "dataset",
    "rewards",
    "reward_weights",
    "trainer",
    "resume_from_checkpoint",
    "imports",
    "health",
    "tools",
    "environment",
)
_LORA_SECTIONS = ("lora", "peft")

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
    "eval_dataset": "eval_source",
    "system_prompt": "system_prompt",
    "max_samples": "max_samples",
    "converter": "converter",
}
#: Seed-style keys with their own handling (see :func:`normalize_flat`).
_SPECIAL = {
    "reward_funcs": "rewards",
    "finetuning_type": "model.lora (lora), model.lora + model.load_in_4bit (qlora), nothing (full)",
    "new_special_tokens_config": "model.special_tokens",
    "init_special_tokens": "(desc_init is what rewardsmith does)",
    "stage": "(grpo only)",
}

#: Every seed-style key and where it goes in the sectioned config (any GRPOConfig field also goes to ``trainer``).
SEED_KEYS: dict[str, str] = {
    **{k: f"model.{v}" for k, v in _FLAT_MODEL.items()},
    **{k: f"model.lora.{v}" for k, v in _FLAT_LORA.items()},
    **{k: f"dataset.{v}" for k, v in _FLAT_DATASET.items()},
    **_SPECIAL,
}


def comma_list(value: Any) -> Any:
    """A comma-separated string as a list of its stripped, non-empty items; anything else unchanged.

    >>> comma_list("accuracy, format"), comma_list("1.0,0.5"), comma_list(["a"])
    (['accuracy', 'format'], ['1.0', '0.5'], ['a'])
    """
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


def _weights(value: Any) -> Any:
    """``reward_weights`` as a list; items that spell numbers become numbers (others are left for validation)."""
    items = comma_list(value)
    if isinstance(items, (int, float)) and not isinstance(items, bool):
        return [items]
    if not isinstance(items, list):
        return items
    out = []
    for item in items:
        try:
            out.append(float(item) if isinstance(item, str) else item)
        except ValueError:
            out.append(item)
    return out


def _grpo_fields() -> list[str] | None:
    """GRPOConfig's fields; ``None`` where TRL is not installed (a server reading a training config for its rewards)."""
    import dataclasses

    try:
        from trl import GRPOConfig
    except ImportError:
        return None

    return [f.name for f in dataclasses.fields(GRPOConfig)]


def split_overrides(overrides: list[str]) -> tuple[list[str], list[str]]:
    """Command-line overrides split into flat ones (``max_steps=2``) and dotted ones (``trainer.max_steps=2``).

    Flat overrides are applied to the config as written, before the seed-style
    keys are mapped, so a flat key works as it would in the file: a training
    argument goes to ``trainer``, ``model_name_or_path`` to ``model``, a section
    name replaces the section. Dotted ones address the sectioned config.

    >>> split_overrides(["max_steps=2", "trainer.learning_rate=3e-3", "rewards=think_format"])
    (['max_steps=2', 'rewards=think_format'], ['trainer.learning_rate=3e-3'])
    """
    flat = [o for o in overrides if "." not in o.partition("=")[0]]
    return flat, [o for o in overrides if o not in flat]


def _section(out: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The section ``name`` to write flat keys into (created if missing or empty); ``None`` if it is not a mapping."""
    if out.get(name) is None:
        out[name] = {}
    section = out[name]
    return section if isinstance(section, dict) else None


def _special_tokens(value: Any, base: Path | None) -> dict[str, str]:
    """``new_special_tokens_config``: a mapping of token to description, or a YAML/JSON file holding one."""
    source = "new_special_tokens_config"
    if isinstance(value, str):
        path = Path(value).expanduser()
        if not path.is_absolute() and base is not None and (base / path).is_file():
            path = base / path
        if not path.is_file():
            raise ConfigError(
                f"new_special_tokens_config: the file {value!r} does not exist (relative paths start from the "
                "config's folder). Give a YAML file mapping each token to its description, or the mapping itself"
            )
        value = load_yaml(read_text(path, ConfigError), f"new_special_tokens_config: {str(path)!r}", ConfigError)
        source = f"new_special_tokens_config ({path})"
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ConfigError(
            f"{source} must map each new token to a short description ('<calc>': 'a calculator call'); each token's "
            f"embedding starts as the mean embedding of its description. Got {value!r}"
        )
    return value


def normalize_flat(
    raw: dict[str, Any], base: Path | None = None, problems: ConfigProblems | None = None
) -> dict[str, Any]:
    """Rewrite seed-style flat keys into the sectioned shape (a new dict; the input is left alone).

    ``base`` is the folder relative paths start from (``new_special_tokens_config``
    files). Every problem (unknown keys, a stage other than GRPO, ...) is
    recorded in ``problems``; without it the first one raises.

    >>> shaped = normalize_flat({"model_name_or_path": "m", "dataset": "d.jsonl", "reward_funcs": "accuracy,format",
    ...                          "reward_weights": "1.0,0.5", "finetuning_type": "lora", "lora_rank": 8,
    ...                          "learning_rate": 1e-5, "eval_dataset": "test.jsonl", "stage": "grpo"})
    >>> shaped["model"], shaped["trainer"]
    ({'name_or_path': 'm', 'lora': {'r': 8}}, {'learning_rate': 1e-05})
    >>> shaped["dataset"]
    {'source': 'd.jsonl', 'eval_source': 'test.jsonl'}
    >>> shaped["rewards"], shaped["reward_weights"]
    (['accuracy', 'format'], [1.0, 0.5])
    """
    collector = problems if problems is not None else ConfigProblems()
    out: dict[str, Any] = {}
    flat = dict(raw)
    for key in (*SECTIONS, *_LORA_SECTIONS):
        if key in flat:
            out[key] = copy.deepcopy(flat.pop(key))
    if isinstance(out.get("dataset"), (str, list)):
        out["dataset"] = {"source": out["dataset"]}
    stage = flat.pop("stage", None)
    if stage is not None and str(stage).strip().lower() != "grpo":
        collector.add(
            f"stage: {stage!r}: rewardsmith trains with GRPO only (stage: grpo). For SFT, DPO or reward-model "
            "training use TRL's trainers for them; remove stage, or set it to grpo"
        )
    _model_keys(flat, out, base, collector)
    for flat_key, key in _FLAT_DATASET.items():
        if flat_key in flat and (dataset := _section(out, "dataset")) is not None:
            dataset[key] = flat.pop(flat_key)
    if "reward_funcs" in flat:
        if "rewards" in out:
            collector.add("give rewards either as rewards: [...] or as reward_funcs, not both")
        out["rewards"] = comma_list(flat.pop("reward_funcs"))
        if isinstance(out["rewards"], list):
            out["rewards"] = open_r1_reward_names(out["rewards"], collector)
    if "rewards" in out:
        out["rewards"] = comma_list(out["rewards"])
    open_r1_keys(flat, out, collector)
    if out.get("reward_weights") is not None:
        out["reward_weights"] = _weights(out["reward_weights"])
    if flat:
        grpo = _grpo_fields()
        trainer = _section(out, "trainer")
        for key in [k for k in flat if grpo is None or k in grpo or k in REMOVED_FIELDS]:
            if trainer is not None:
                trainer[key] = flat.pop(key)
        if out.get("trainer") == {}:
            out.pop("trainer")
        known = list(dict.fromkeys([*SECTIONS, *SEED_KEYS, *(grpo or [])]))
        for key in flat:
            collector.add(
                f"unknown config key {key!r}.{suggest_field(str(key), known)} A config has the sections "
                f"{', '.join(SECTIONS)}; training arguments go under trainer: (or at the top level); the seed-style "
                "keys are listed in docs/training.md"
            )
    if problems is None:
        collector.raise_if_any()
    return out


def _model_keys(flat: dict[str, Any], out: dict[str, Any], base: Path | None, problems: ConfigProblems) -> None:
    """Move the flat model, LoRA and special-token keys (and ``lora:``/``peft:`` sections) into ``model``."""
    keys = [*_FLAT_MODEL, *_FLAT_LORA, "finetuning_type", "new_special_tokens_config", "init_special_tokens"]
    if not any(k in flat for k in keys) and not any(out.get(s) for s in _LORA_SECTIONS):
        for section in _LORA_SECTIONS:
            out.pop(section, None)
        return
    model = _section(out, "model")
    if model is None:
        return
    for flat_key, key in _FLAT_MODEL.items():
        if flat_key in flat:
            model[key] = flat.pop(flat_key)
    lora = {key: flat.pop(flat_key) for flat_key, key in _FLAT_LORA.items() if flat_key in flat}
    finetuning = flat.pop("finetuning_type", None)
    if finetuning not in (None, "lora", "full", "qlora"):
        problems.add(f"finetuning_type must be 'lora', 'qlora' or 'full', got {finetuning!r}")
    if finetuning == "qlora":
        model["load_in_4bit"] = True
    if lora or finetuning in ("lora", "qlora"):
        target = lora.get("target_modules")
        if isinstance(target, str) and "," in target:
            lora["target_modules"] = comma_list(target)
        if lora.get("target_modules") == "all":
            lora["target_modules"] = "all-linear"
        model["lora"] = {**(model.get("lora") or {}), **lora}
    for section in _LORA_SECTIONS:  # top-level LoRA section
        value = out.pop(section, None)
        if value:
            model["lora"] = {**(model.get("lora") or {}), **value}
    init = flat.pop("init_special_tokens", None)
    if init not in (None, True, "desc_init"):
        problems.add(
            f"init_special_tokens: {init!r}: rewardsmith starts each new token's embedding from its description "
            "(desc_init); remove init_special_tokens, or set it to desc_init"
        )
    if "new_special_tokens_config" in flat:
        with problems.check():
            tokens = _special_tokens(flat.pop("new_special_tokens_config"), base)
            model["special_tokens"] = {**tokens, **(model.get("special_tokens") or {})}
    if not model:
        out.pop("model")
