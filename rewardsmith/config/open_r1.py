"""open-r1 recipe names: which rewardsmith reward runs for each, how it differs, and the recipe keys.

open-r1's GRPO recipes name rewards (``reward_funcs: [accuracy, format,
tag_count]``) and set them with top-level keys (``cosine_max_len``,
``repetition_max_penalty``, ...). rewardsmith runs its own built-in reward
for each name, never silently: the plan lists, for every name a recipe
uses, the reward that runs and how it scores differently
(:func:`peer_notes`). The peer's exact semantics are not offered under a
separate namespace on purpose: the differences are the known ways those
rewards are gamed (repeated or nested tags, hedged answers, text outside the
blocks), and training on them teaches the model the gap.

:func:`open_r1_keys` moves the recipe keys into the config: a reward
setting onto the entry of the reward it sets (an error naming the reward
when the recipe does not use it, where open-r1 would silently ignore it),
``dataset_prompt_column`` into the converter settings, ``chat_template`` into
``model``; keys with no counterpart are errors that say what to use.
"""

from __future__ import annotations

from typing import Any

from rewardsmith.core.problems import ConfigProblems

__all__ = ["OPEN_R1_REWARDS", "OPEN_R1_SETTINGS", "open_r1_keys", "open_r1_reward_names", "peer_notes"]

#: open-r1 reward name -> (the rewardsmith reward that runs for it, or None; how it differs / what to use).
OPEN_R1_REWARDS: dict[str, tuple[str | None, str]] = {
    "accuracy": (
        "math_accuracy",
        "open-r1 verifies the last LaTeX answer anywhere in the completion; math_accuracy reads only the final "
        "answer (<answer> block, \\boxed{} or 'the answer is', after </think>) and scores 0 when several different "
        "final answers are given",
    ),
    "format": (
        "think_format",
        "open-r1's regex needs newlines around the tags and lets repeated or nested blocks and text after "
        "</answer> pass; think_format wants each block exactly once, non-empty, and only white space outside "
        "(strict=false allows text between and after the blocks)",
    ),
    "tag_count": (
        "tag_count",
        "open-r1 counts '<think>\\n'-style tags with their newlines; tag_count counts each tag appearing exactly "
        "once, newlines or not",
    ),
    "reasoning_steps": (
        "reasoning_steps",
        "open-r1 counts step markers with a regex; reasoning_steps counts a marker only when real text follows it",
    ),
    "cosine": (
        "cosine_length",
        "same formula (min/max values for right and wrong answers); correctness comes from math_accuracy and the "
        "cosine is clamped at max_length, so very long outputs do not score high again",
    ),
    "repetition_penalty": (
        "repetition",
        "same n-gram penalty (ngram_size, max_penalty); n-grams are counted over words after white space is normalised",
    ),
    "length": (
        "group_length",
        "open-r1's 'length' is Kimi 1.5's group length reward, which is group_length here (rewardsmith's own "
        "'length' reward is a length target)",
    ),
    "soft_overlong_punishment": ("soft_overlong", "same formula (max_length, cache_length), counted in tokens"),
    "code": (
        "code_tests",
        "test cases run in a local sandbox (bubblewrap and resource limits) instead of E2B/Morph; the score is "
        "the share of tests passed",
    ),
    "binary_code": ("code_tests", "write it as {name: code_tests, kwargs: {scoring: all}} (all tests pass, or 0)"),
    "code_format": (None, "use think_format for the tags and code_syntax for the code block"),
    "ioi_code": (None, "no IOI judge is built in; score the tests with code_tests, or wrap your judge as a reward"),
    "cf_code": (None, "no Codeforces judge is built in; score the tests with code_tests, or wrap your judge"),
}

#: open-r1 names that are not rewardsmith names (nor aliases), rewritten to the reward that runs, with its settings.
_RENAMED: dict[str, dict[str, Any]] = {
    "length": {},
    "code": {},
    "binary_code": {"scoring": "all"},
    "cosine": {"correctness": "math_accuracy"},  # open-r1 scores correctness with its accuracy reward
}

#: open-r1 recipe key -> (the rewardsmith reward it sets, the setting).
OPEN_R1_SETTINGS: dict[str, tuple[str, str]] = {
    "cosine_min_value_wrong": ("cosine_length", "min_value_wrong"),
    "cosine_max_value_wrong": ("cosine_length", "max_value_wrong"),
    "cosine_min_value_correct": ("cosine_length", "min_value_correct"),
    "cosine_max_value_correct": ("cosine_length", "max_value_correct"),
    "cosine_max_len": ("cosine_length", "max_length"),
    "repetition_n_grams": ("repetition", "ngram_size"),
    "repetition_max_penalty": ("repetition", "max_penalty"),
    "max_completion_len": ("soft_overlong", "max_length"),
    "soft_punish_cache": ("soft_overlong", "cache_length"),
    "code_language": ("code_tests", "language"),
}

#: open-r1 recipe keys with no counterpart, and what to do instead.
_REJECTED = {
    "code_eval_test_batch_size": "code_tests runs a completion's tests together; remove it",
    "code_eval_scoring_mode": "set the code_tests reward's scoring (fraction or all) on its entry",
    "parallel_code_exec_per_proc": "set the code_tests reward's workers on its entry",
    "code_provider": "code_tests runs tests in a local sandbox; set its backend on its entry (local or sandboxfusion)",
    "e2b_router_url": "code_tests runs tests in a local sandbox; remove it",
    "morph_router_url": "code_tests runs tests in a local sandbox; remove it",
    "ioi_provider": "no IOI judge is built in; remove it",
    "dataset_mixture": "use dataset.mix (a list of datasets, each with a task) in a sectioned config",
    "benchmarks": "run `rewardsmith eval` on the trained model instead; remove it",
    "callbacks": "rewardsmith adds its own callbacks; remove it",
    "hub_model_revision": "set trainer.hub_revision (TRL's field) instead",
    "overwrite_hub_revision": "remove it; the Hub revision is written by TRL's push_to_hub",
    "push_to_hub_revision": "set trainer.hub_revision instead",
    "wandb_entity": "set the WANDB_ENTITY environment variable (and report_to: wandb)",
    "wandb_project": "set the WANDB_PROJECT environment variable (and report_to: wandb)",
    "wandb_run_group": "set the WANDB_RUN_GROUP environment variable (and report_to: wandb)",
}

#: Keys this module handles (the config's unknown-key check skips them).
OPEN_R1_KEYS = (*OPEN_R1_SETTINGS, *_REJECTED, "dataset_prompt_column", "dataset_test_split", "use_peft")


def _entry_name(entry: Any) -> str | None:
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict) and isinstance(entry.get("name"), str):
        return entry["name"]
    return None


def open_r1_reward_names(rewards: list[Any], problems: ConfigProblems) -> list[Any]:
    """``reward_funcs`` with open-r1 names whose rewardsmith reward has another name rewritten to it.

    ``length`` (Kimi's group length reward in open-r1), ``code``,
    ``binary_code`` and ``cosine`` (its correctness from ``math_accuracy``,
    as open-r1's comes from its accuracy reward) are rewritten to the reward
    that runs, keeping the name they are logged under; names with no
    counterpart are problems saying what to use.

    >>> open_r1_reward_names(["accuracy", "length", "cosine"], ConfigProblems())  # doctest: +NORMALIZE_WHITESPACE
    ['accuracy', {'name': 'group_length', 'as': 'length'},
     {'name': 'cosine_length', 'as': 'cosine', 'kwargs': {'correctness': 'math_accuracy'}}]
    """
    out = []
    for entry in rewards:
        name = _entry_name(entry)
        ours, how = OPEN_R1_REWARDS.get(name or "", ("", ""))
        if name in OPEN_R1_REWARDS and ours is None:
            problems.add(f"reward_funcs: {name!r} (open-r1) has no built-in counterpart: {how}")
            continue
        if name in _RENAMED:
            renamed = {"name": ours, "as": name, **({"kwargs": _RENAMED[name]} if _RENAMED[name] else {})}
            entry = renamed if isinstance(entry, str) else {**renamed, **entry, "name": ours}
        out.append(entry)
    return out


def _reward_targets(name: str) -> set[str]:
    """The names a config may give the reward ``name`` by (its own, and open-r1's)."""
    return {name} | {peer for peer, (ours, _) in OPEN_R1_REWARDS.items() if ours == name}


def open_r1_keys(flat: dict[str, Any], out: dict[str, Any], problems: ConfigProblems) -> None:
    """Move open-r1 recipe keys from ``flat`` into the sectioned config ``out`` (problems recorded)."""
    for key in [k for k in flat if k in _REJECTED]:
        flat.pop(key)
        problems.add(f"{key} (an open-r1 recipe key) has no counterpart here: {_REJECTED[key]}")
    if "dataset_prompt_column" in flat:
        dataset = out.setdefault("dataset", {})
        if isinstance(dataset, dict):
            settings = dataset.setdefault("converter_settings", {})
            settings["prompt_key"] = flat.pop("dataset_prompt_column")
    if "dataset_test_split" in flat and isinstance(dataset := out.setdefault("dataset", {}), dict):
        dataset["eval_split"] = flat.pop("dataset_test_split")
    if "chat_template" in flat and isinstance(model := out.setdefault("model", {}), dict):
        model["chat_template"] = flat.pop("chat_template")
    use_peft = flat.pop("use_peft", None)
    if use_peft and isinstance(model := out.setdefault("model", {}), dict):
        model.setdefault("lora", {})
    rewards = out.get("rewards")
    for key in [k for k in flat if k in OPEN_R1_SETTINGS]:
        reward, setting = OPEN_R1_SETTINGS[key]
        value = flat.pop(key)
        targets = _reward_targets(reward)
        entries = rewards if isinstance(rewards, list) else []
        hits = [i for i, e in enumerate(entries) if _entry_name(e) in targets]
        if not hits:
            problems.add(
                f"{key} sets the {reward} reward's {setting}, but the rewards do not include it (open-r1 would "
                f"ignore it silently). Add {sorted(targets - {reward})[0] if targets - {reward} else reward} to "
                f"the rewards, or remove {key}"
            )
            continue
        for i in hits:
            entry = rewards[i]  # type: ignore[index]
            entry = {"name": entry} if isinstance(entry, str) else dict(entry)
            entry["kwargs"] = {**(entry.get("kwargs") or {}), setting: value}
            rewards[i] = entry  # type: ignore[index]


def peer_notes(rewards: list[Any], from_recipe: bool) -> list[str]:
    """One note per reward named by an open-r1 name: the reward that runs, and how it differs.

    Names that are open-r1's only (aliases such as ``accuracy``) always get a
    note; names both projects use (``tag_count``) only in a recipe-style
    config (``from_recipe``: it had ``reward_funcs``).

    >>> peer_notes(["accuracy", "think_format"], from_recipe=False)[0][:60]
    "reward 'accuracy' (open-r1's name) runs rewardsmith's math_a"
    """
    notes = []
    for entry in rewards:
        name = _entry_name(entry)
        label = entry.get("as") if isinstance(entry, dict) else None
        if label in OPEN_R1_REWARDS and OPEN_R1_REWARDS[label][0] == name:
            name = label  # rewritten from a recipe's reward_funcs
        elif name in _RENAMED:
            continue  # only reward_funcs are open-r1's names: elsewhere the name is rewardsmith's own reward
        if name not in OPEN_R1_REWARDS:
            continue
        ours, how = OPEN_R1_REWARDS[name]
        if ours is None or (ours == name and not from_recipe):
            continue
        notes.append(f"reward {name!r} (open-r1's name) runs rewardsmith's {ours}, which differs: {how}")
    return notes
