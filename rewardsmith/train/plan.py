"""Resolve a training config into a plan, checking everything that can be checked before a model loads.

The plan holds the rewards and weights, the prepared datasets, TRL's
``GRPOConfig``, the model path and facts about the model; ``--dry-run``
prints it. Every check says what to change: unknown rewards, weights that
do not match, dataset columns a reward needs, settings TRL rejects, batch
sizes that do not divide, LoRA targets the model lacks, QLoRA without CUDA,
vLLM or an attention implementation's package not installed, and (when
asked) judge endpoints that do not answer.

The checks are independent where they can be: each section of the config is
checked even when another has problems, and every problem is reported in one
:class:`~rewardsmith.core.problems.ConfigError`. A check that depends on a
failed one is skipped (no column check when the dataset does not load, no
reward or dataset check when an ``imports:`` entry fails).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewardsmith.compose.config import rewards_with_problems
from rewardsmith.config.imports import import_modules
from rewardsmith.config.open_r1 import peer_notes
from rewardsmith.core.describe import column_roles
from rewardsmith.core.problems import ConfigError, ConfigProblems
from rewardsmith.core.reward import Reward
from rewardsmith.health.monitor import health_settings
from rewardsmith.train.builtin_models import cache_dir
from rewardsmith.train.config import ConfigSections, DatasetSettings, TrainConfig, read_config, read_sections
from rewardsmith.train.endpoints import check_endpoints as check_endpoints_of
from rewardsmith.train.hub import check_push_to_hub
from rewardsmith.train.model import check_attention, check_model, model_path
from rewardsmith.train.tools import ToolSetup, check_tool_setup
from rewardsmith.train.trainer_args import build_trainer_args

__all__ = ["TrainingPlan", "cache_dir", "plan_training", "prepare_datasets"]


@dataclass
class TrainingPlan:
    """Everything a run needs, resolved and checked; no model weights loaded yet."""

    config: TrainConfig
    rewards: list[Reward]
    weights: list[float]
    train_dataset: Any
    eval_dataset: Any
    args: Any
    model_path: str
    model_facts: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    endpoints: list[tuple[str, str]] = field(default_factory=list)
    #: The reward-health monitor's settings (``thresholds``, ``fail_fast``); ``None`` when it is off.
    health: dict[str, Any] | None = field(default_factory=lambda: {"thresholds": {}, "fail_fast": True})
    #: The resolved ``tools:`` and ``environment:`` (:mod:`rewardsmith.train.tools`); ``None`` without them.
    tool_setup: ToolSetup | None = None

    def describe(self) -> list[tuple[str, str]]:
        """The plan as (label, value) rows, for ``--dry-run`` and the start of a run.

        Each reward's row has its weight, the columns it needs and the optional
        columns it reads (marked when the data lacks them); judge endpoints
        checked with ``check_endpoints`` have a row each.
        """
        args = self.args
        rows = [
            ("model", f"{self.model_path} ({self.model_facts.get('architecture', '?')})"),
            ("fine-tuning", f"LoRA {self.model_facts['lora']}" if "lora" in self.model_facts else "full"),
            ("train data", f"{_count(self.train_dataset)} prompts, columns {', '.join(_columns(self.train_dataset))}"),
        ]
        if self.eval_dataset is not None:
            strategy = _plain(args.eval_strategy)
            rows.append(("eval data", f"{_count(self.eval_dataset)} prompts (eval_strategy={strategy})"))
        have = _columns(self.train_dataset)
        for reward, weight in zip(self.rewards, self.weights):
            needs, reads_too = column_roles(reward)
            columns = ", ".join(needs) or "no columns"
            absent = set(reward.missing_optional_columns(have))
            optional = [f"{c} (absent: its default is used)" if c in absent else c for c in reads_too]
            reads = f"; optional {', '.join(optional)}" if optional else ""
            rows.append((f"reward {reward.name}", f"weight {weight:g}; needs {columns}{reads}"))
        rows += self.endpoints
        rows += self.tool_setup.describe() if self.tool_setup is not None else []
        if self.health is None:
            rows.append(("reward health", "off"))
        else:
            fail = "stops on a reward that scores nothing" if self.health["fail_fast"] else "does not stop the run"
            rows.append(("reward health", f"monitor on ({fail})"))
        steps = (
            f"max_steps={args.max_steps}"
            if args.max_steps and args.max_steps > 0
            else f"{args.num_train_epochs:g} epoch(s)"
        )
        rows += [
            ("batch", f"{args.per_device_train_batch_size} completions per device, {args.num_generations} per prompt"),
            (
                "optimisation",
                f"learning_rate={args.learning_rate:g} ({_plain(args.lr_scheduler_type)}), {steps}, beta={args.beta:g}",
            ),
            (
                "generation",
                f"max_completion_length={args.max_completion_length}, temperature={args.temperature:g}, "
                f"vLLM {'on (' + args.vllm_mode + ')' if args.use_vllm else 'off'}",
            ),
            ("output_dir", str(args.output_dir)),
        ]
        return rows


def _plain(value: Any) -> str:
    """An enum setting as the string a config would write."""
    return str(getattr(value, "value", value))


def _count(dataset: Any) -> str:
    try:
        return str(len(dataset))
    except TypeError:
        return "streamed"


def _columns(dataset: Any) -> list[str]:
    return list(getattr(dataset, "column_names", None) or [])


def _prepare_one(
    settings: DatasetSettings, split: str, source: Any, config: str | None, max_samples: int | None
) -> Any:
    from rewardsmith.data import prepare_dataset

    if source is None:
        raise ConfigError("dataset.source is required: a Hub dataset name, a local file or folder, or a list of rows")
    return prepare_dataset(
        source,
        split,
        config=config,
        converter=settings.converter,
        system_prompt=settings.system_prompt,
        format_template=settings.format_template,
        conversational=settings.conversational,
        max_samples=max_samples,
        shuffle=settings.shuffle,
        seed=settings.seed,
        task=settings.task,
        **settings.converter_settings,
    )


def _concatenate(parts: list[Any], seed: int) -> Any:
    """Several prepared datasets as one, missing columns filled with ``None``, shuffled."""
    from datasets import Dataset

    columns: list[str] = []
    for part in parts:
        columns += [c for c in part.column_names if c not in columns]
    rows = [{c: row.get(c) for c in columns} for part in parts for row in part]
    return Dataset.from_list(rows).shuffle(seed=seed)


#: Prompt settings a ``mix`` part takes from the ``dataset:`` section unless it sets its own.
_INHERITED = ("system_prompt", "format_template", "conversational", "seed")


def prepare_datasets(settings: DatasetSettings) -> tuple[Any, Any]:
    """The train and (optional) evaluation datasets a ``dataset:`` section describes."""
    if settings.mix:
        parts = []
        for i, part in enumerate(settings.mix):
            if part.task is None:
                raise ConfigError(f"dataset.mix[{i}] needs a task name (task: math) so rewards can be routed by task")
            inherited = {k: getattr(settings, k) for k in _INHERITED if k not in part.model_fields_set}
            parts.append(part.model_copy(update=inherited))
        train = _concatenate(
            [_prepare_one(p, p.split, p.source, p.config, p.max_samples) for p in parts], settings.seed
        )
        if settings.max_samples:
            train = train.select(range(min(settings.max_samples, len(train))))
    else:
        train = _prepare_one(settings, settings.split, settings.source, settings.config, settings.max_samples)
    evaluation = None
    if settings.eval_split or settings.eval_source is not None:
        if settings.mix:
            raise ConfigError("an evaluation dataset with dataset.mix is not supported; evaluate each part separately")
        source = settings.eval_source if settings.eval_source is not None else settings.source
        evaluation = _prepare_one(
            settings,
            settings.eval_split or settings.split,
            source,
            settings.eval_config or settings.config,
            settings.eval_max_samples,
        )
    return train, evaluation


def _check_coverage(dataset: Any, rewards: list[Reward], rows: bool) -> None:
    """The columns every reward needs; with ``rows`` (all rewards resolved), also that every row is scored."""
    from rewardsmith.compose import coverage
    from rewardsmith.data import check_columns
    from rewardsmith.data.shapes import check_completion_shapes

    check_columns(dataset, rewards)
    check_completion_shapes(dataset, rewards)
    if rows and hasattr(dataset, "__len__"):
        coverage(dataset, rewards)


def _vllm_check(args: Any) -> None:
    if getattr(args, "use_vllm", False) and importlib.util.find_spec("vllm") is None:
        raise ConfigError(
            "trainer.use_vllm is on but vLLM is not installed. Install it (pip install 'rewardsmith[vllm]', on a CUDA "
            "machine), or set trainer.use_vllm: false to generate with transformers. For vllm_mode: server, start the "
            "server with `trl vllm-serve --model <model>` first."
        )


def _eval_strategy_check(settings: DatasetSettings, args: Any) -> None:
    if settings.eval_split or settings.eval_source is not None:
        if args.eval_strategy == "no":
            raise ConfigError(
                "an evaluation dataset is set but trainer.eval_strategy is 'no'; "
                "set eval_strategy: steps and eval_steps"
            )
    elif args.eval_strategy != "no":
        raise ConfigError(
            f"trainer.eval_strategy is {_plain(args.eval_strategy)!r} but there is no evaluation dataset; "
            "set dataset.eval_source (another file or Hub dataset) or dataset.eval_split (a split of the same source)"
        )


def _worker_warnings(rewards: list[Any]) -> list[str]:
    """A note for each reward that asks for more local worker processes than this rank's CPU budget allows.

    The budget is the pool's own (:func:`rewardsmith.core.budget.cpu_budget`: ``REWARDSMITH_NODE_CPUS``, else the
    CPUs this process may use lowered to the cgroup's quota, shared by the node's ``LOCAL_WORLD_SIZE`` ranks).
    """
    from rewardsmith.core.budget import cpu_budget
    from rewardsmith.core.processes import usable_cpus
    from rewardsmith.data.columns import leaf_rewards

    budget = min(cpu_budget(), usable_cpus())
    notes = []
    for top in rewards:
        for leaf, _ in leaf_rewards(top):
            workers = getattr(leaf, "workers", 1)
            if getattr(leaf, "engine", "local") == "local" and isinstance(workers, int) and workers > budget:
                notes.append(
                    f"reward {leaf.name!r} asks for workers={workers}, but this rank's CPU budget is {budget} (the "
                    f"node's CPUs, REWARDSMITH_NODE_CPUS or the cgroup quota, shared by LOCAL_WORLD_SIZE ranks): it "
                    f"will run at most {budget} worker processes (and never more than a batch has samples)"
                )
    return notes


def _learning_warnings(config: TrainConfig, args: Any) -> list[str]:
    warnings = []
    if "learning_rate" not in config.trainer:
        warnings.append(
            f"learning_rate is TRL's default {args.learning_rate:g}. That suits large pretrained models; a small model "
            "(or LoRA) barely moves at it, and start and end of training look the same. Set trainer.learning_rate."
        )
    if config.model.name_or_path.startswith("builtin:tiny") and args.learning_rate < 1e-4:
        warnings.append(
            f"the tiny model needs a learning rate around 1e-3 to learn visibly; {args.learning_rate:g} is low"
        )
    return warnings


def _sections(
    config: TrainConfig | str | Path | dict[str, Any], overrides: list[str] | None, problems: ConfigProblems
) -> tuple[ConfigSections, bool]:
    """The config's sections, and whether it is recipe-style (``reward_funcs``: open-r1's and TRL's key)."""
    if isinstance(config, TrainConfig):
        if not overrides:
            return ConfigSections.of(config), False
        return read_sections(config.to_dict(), None, overrides, problems), False
    if isinstance(config, dict):
        return read_sections(config, Path.cwd(), overrides, problems), "reward_funcs" in config
    raw, base = read_config(config)
    return read_sections(raw, base, overrides, problems), isinstance(raw, dict) and "reward_funcs" in raw


def plan_training(
    config: TrainConfig | str | Path | dict[str, Any],
    overrides: list[str] | None = None,
    *,
    check_endpoints: bool = False,
) -> TrainingPlan:
    """Resolve and check a config: rewards, datasets, trainer settings, model (config only), vLLM.

    ``config`` is a :class:`TrainConfig`, a YAML path or a dict; ``overrides``
    are ``key=value`` strings. Every problem is raised at once, before any
    model weights load. ``check_endpoints`` also sends one real request to
    each judge endpoint the rewards use.

    >>> config = {"model": {"name_or_path": "builtin:tiny", "dtype": "fp8"}, "dataset": {"source": [{"prompt": "hi"}]},
    ...           "rewards": ["think_fromat"], "trainer": {"max_step": 2}}
    >>> try:
    ...     plan_training(config)
    ... except ConfigError as exc:
    ...     print(exc)
    the training config has 3 problems (nothing was loaded). Fix them all, then run again:
      1. model.dtype: Input should be 'auto', 'float32', 'bfloat16' or 'float16'
      2. rewards[0]: unknown reward 'think_fromat'. Did you mean: think_format, format? ...
      3. trainer.max_step is not a GRPO training argument. Did you mean: max_steps? ...
    """
    problems = ConfigProblems("the training config")
    sections, from_recipe = _sections(config, overrides, problems)
    notes = peer_notes(sections.rewards or [], from_recipe)
    plan = _check(sections, problems, check_endpoints, notes)
    problems.raise_if_any()
    assert plan is not None
    return plan


def _check(
    sections: ConfigSections, problems: ConfigProblems, check_endpoints: bool, notes: list[str]
) -> TrainingPlan | None:
    """Every check the valid sections allow, problems recorded; the plan when there are none."""
    imported = import_modules(sections.imports, problems)
    health = None
    with problems.check():
        health = health_settings(sections.health)
    rewards: list[Reward] = []
    weights = None
    if imported and sections.rewards is not None:
        rewards, weights = rewards_with_problems(sections.rewards, sections.reward_weights, problems)
    args = None
    if sections.trainer is not None:
        with problems.check():
            args = build_trainer_args(
                sections.trainer, reward_weights=weights, default_output_dir=Path("outputs/run"), notes=notes
            )
        if args is not None:
            with problems.check():
                _vllm_check(args)
            with problems.check():
                check_push_to_hub(args)
    path, facts = None, None
    if sections.model is not None:
        with problems.check():
            check_attention(sections.model)
        with problems.check():
            path = model_path(sections.model, cache_dir())
            facts = check_model(sections.model, path)
    train = evaluation = None
    if imported and sections.dataset is not None:
        with problems.check():
            train, evaluation = prepare_datasets(sections.dataset)
        if args is not None:
            with problems.check():
                _eval_strategy_check(sections.dataset, args)
    for data in (train, evaluation):
        if data is not None and rewards:
            with problems.check():
                _check_coverage(data, rewards, rows=weights is not None)
    endpoints = check_endpoints_of(rewards, problems) if check_endpoints and rewards else []
    tool_setup = None
    if sections.config is not None and imported:
        tool_setup = check_tool_setup(sections.config, train, path, rewards, problems)
    if problems or sections.config is None or weights is None or path is None or facts is None:
        return None
    from rewardsmith.data.columns import optional_column_warnings

    warnings = notes + _learning_warnings(sections.config, args) + optional_column_warnings(train, rewards)
    warnings += _worker_warnings(rewards) + (tool_setup.warnings if tool_setup is not None else [])
    return TrainingPlan(
        sections.config, rewards, weights, train, evaluation, args, path, facts, warnings, endpoints, health, tool_setup
    )
