"""Training arguments TRL 1.16 (with transformers 5) no longer has, translated where the meaning is clear.

Older GRPO configs still carry them; each is either rewritten onto the field
that replaced it (with a note in the plan) or an error saying exactly what
replaced it:

* ``warmup_ratio: R`` -> ``warmup_steps: R`` (a float below 1 there is a ratio of the total steps);
* ``vllm_sampling_params: {...}`` -> the sampling fields GRPOConfig has (``temperature``, ``top_p``,
  ``top_k``, ``min_p``, ``repetition_penalty``), the rest into ``generation_kwargs``;
* ``overwrite_output_dir`` -> dropped (transformers 5 removed it: a run writes into ``output_dir``
  whatever is there, and resuming is ``resume_from_checkpoint``);
* ``max_prompt_length`` -> dropped with a note: GRPOTrainer no longer truncates prompts;
* ``gradient_checkpointing`` (deprecated, defaulting to ``True`` in GRPOConfig) -> ``activation_checkpointing``,
  so no run warns about a field its config never set.
"""

from __future__ import annotations

from typing import Any

from rewardsmith.config.seed import REMOVED_FIELDS
from rewardsmith.core.problems import ConfigProblems

__all__ = ["REMOVED_FIELDS", "translate_removed"]

_SAMPLING_FIELDS = ("temperature", "top_p", "top_k", "min_p", "repetition_penalty")


def _sampling(value: Any, settings: dict[str, Any], problems: ConfigProblems, notes: list[str]) -> None:
    if not isinstance(value, dict):
        replaced = REMOVED_FIELDS["vllm_sampling_params"]
        problems.add(f"trainer.vllm_sampling_params was removed in TRL 1.16; use {replaced}")
        return
    moved = []
    for key, item in value.items():
        if key in _SAMPLING_FIELDS:
            if key in settings and settings[key] != item:
                problems.add(f"trainer.vllm_sampling_params.{key} and trainer.{key} disagree; keep trainer.{key} only")
                continue
            settings[key] = item
            moved.append(f"{key}")
        else:
            kwargs = settings.get("generation_kwargs") or {}
            settings["generation_kwargs"] = {**kwargs, key: item} if isinstance(kwargs, dict) else kwargs
            moved.append(f"generation_kwargs.{key}")
    notes.append(f"trainer.vllm_sampling_params (removed in TRL 1.16) was read as: {', '.join(moved) or 'nothing'}")


def translate_removed(settings: dict[str, Any], problems: ConfigProblems) -> list[str]:
    """Rewrite removed fields in ``settings`` in place; returns a note for each rewrite (errors go to ``problems``).

    >>> settings = {"warmup_ratio": 0.1, "overwrite_output_dir": True}
    >>> notes = translate_removed(settings, ConfigProblems())
    >>> settings
    {'warmup_steps': 0.1, 'activation_checkpointing': True}
    >>> notes[0]
    'trainer.warmup_ratio: 0.1 (removed in transformers 5) was read as warmup_steps: 0.1'
    """
    notes: list[str] = []
    if "warmup_ratio" in settings:
        ratio = settings.pop("warmup_ratio")
        if "warmup_steps" in settings:
            problems.add("trainer.warmup_ratio and trainer.warmup_steps are both set; keep warmup_steps only")
        elif isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0 <= ratio < 1:
            problems.add(f"trainer.warmup_ratio must be a number in [0, 1), got {ratio!r}; use warmup_steps")
        else:
            settings["warmup_steps"] = float(ratio)
            notes.append(
                f"trainer.warmup_ratio: {ratio} (removed in transformers 5) was read as warmup_steps: {float(ratio)}"
            )
    if "vllm_sampling_params" in settings:
        _sampling(settings.pop("vllm_sampling_params"), settings, problems, notes)
    if "overwrite_output_dir" in settings:
        settings.pop("overwrite_output_dir")
        notes.append(f"trainer.overwrite_output_dir was dropped: {REMOVED_FIELDS['overwrite_output_dir']}")
    if "max_prompt_length" in settings:
        value = settings.pop("max_prompt_length")
        notes.append(
            f"trainer.max_prompt_length: {value} was dropped (removed in TRL 1.16); prompts are not truncated. "
            f"Replaced by {REMOVED_FIELDS['max_prompt_length']}"
        )
    _checkpointing(settings)
    return notes


def _checkpointing(settings: dict[str, Any]) -> None:
    """``gradient_checkpointing*`` as transformers 5's ``activation_checkpointing*`` (same meaning, new name).

    GRPOConfig defaults ``gradient_checkpointing`` to ``True``, so without this
    every run warns that the field is deprecated even when the config never
    names it; the default is passed under the new name instead.
    """
    for old, new, default in (
        ("gradient_checkpointing", "activation_checkpointing", True),
        ("gradient_checkpointing_kwargs", "activation_checkpointing_kwargs", None),
    ):
        value = settings.pop(old, default)
        if settings.get(new) is None and value is not None:
            settings[new] = value
