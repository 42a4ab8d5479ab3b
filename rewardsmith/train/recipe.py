"""``rewardsmith train``: a GRPO run from one config, top to bottom.

1. read and validate the config (no model loaded), importing its ``imports:``;
2. resolve it into a plan and check everything that can be checked: rewards,
   weights, dataset columns and coverage, TRL's own validation of the trainer
   settings, batch sizes, LoRA targets, QLoRA hardware, vLLM, the attention
   implementation's package, and (when asked) the judge endpoints; every
   problem is reported at once;
3. load the model and tokenizer (special tokens, pad token, dtype);
4. build TRL's ``GRPOTrainer`` with our rewards and the reward-health monitor
   (:mod:`rewardsmith.health.callback`: health metrics, warnings, and a stop
   after the first step when a reward scores nothing), train (resuming if asked);
5. save the model (or adapter), the reward curve and a summary.
"""

from __future__ import annotations

import contextlib
import logging
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rewardsmith.health.callback import RewardHealth
from rewardsmith.train.callbacks import RewardConsole, RewardHistory, RunSummary
from rewardsmith.train.config import ConfigError, TrainConfig
from rewardsmith.train.model import load_model_and_tokenizer, lora_config
from rewardsmith.train.plan import TrainingPlan, plan_training
from rewardsmith.train.tools import trainer_kwargs

__all__ = ["TrainResult", "run"]

logger = logging.getLogger("rewardsmith")


@dataclass
class TrainResult:
    """A finished run: its summary, where it saved things, and the TRL trainer."""

    summary: RunSummary
    output_dir: Path
    trainer: Any


def _show_plan(plan: TrainingPlan, console: Any, title: str) -> None:
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=title, show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    for label, value in plan.describe():
        table.add_row(escape(label), escape(value))
    console.print(table)
    for warning in plan.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False, soft_wrap=True)


def _is_main_process() -> bool:
    """Rank 0 under ``accelerate launch`` / ``torchrun`` (set in the environment before any model loads)."""
    return int(os.environ.get("RANK", "0")) == 0


def _resume_point(resume: bool | str | None, output_dir: Path) -> str | None:
    if not resume:
        return None
    if isinstance(resume, str):
        if not Path(resume).is_dir():
            raise ConfigError(f"resume_from_checkpoint {resume!r} is not a checkpoint folder")
        return resume
    from transformers.trainer_utils import get_last_checkpoint

    last = get_last_checkpoint(str(output_dir)) if output_dir.is_dir() else None
    if last is None:
        logger.warning(
            "resume_from_checkpoint is on but %s holds no checkpoint yet; starting from the beginning", output_dir
        )
    return last


def _build_trainer(plan: TrainingPlan, model: Any, tokenizer: Any) -> Any:
    from trl import GRPOTrainer

    return GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        reward_funcs=plan.rewards,
        args=plan.args,
        train_dataset=plan.train_dataset,
        eval_dataset=plan.eval_dataset,
        peft_config=lora_config(plan.config.model),
        **trainer_kwargs(plan.tool_setup),
    )


def _use_our_console(trainer: Any, console: Any) -> RewardConsole:
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    for callback in (ProgressCallback, PrinterCallback):
        trainer.remove_callback(callback)
    ours = RewardConsole(console)
    trainer.add_callback(ours)
    return ours


def run(
    config: TrainConfig | str | Path | dict[str, Any],
    overrides: list[str] | None = None,
    *,
    dry_run: bool = False,
    console: Any = None,
    check_endpoints: bool = False,
) -> TrainResult | TrainingPlan:
    """Train with GRPO as the config says; with ``dry_run``, only resolve, check and return the plan.

    ``config`` is a YAML path, a dict, or a :class:`TrainConfig`; ``overrides``
    are ``key=value`` strings (``trainer.learning_rate=3e-3``, or flat
    ``max_steps=2``). Raises :class:`ConfigError` (before any model loads) for a
    config that cannot work, listing every problem. ``check_endpoints`` sends
    one real request to each judge endpoint the rewards use first.

    >>> import io, tempfile
    >>> from rich.console import Console
    >>> from rewardsmith.demo import DEMO_CONFIG
    >>> plan = run(DEMO_CONFIG, ["max_steps=2", f"trainer.output_dir={tempfile.mkdtemp()}"], dry_run=True,
    ...            console=Console(file=io.StringIO()))
    >>> plan.args.max_steps, [reward.name for reward in plan.rewards]
    (2, ['tag_count', 'think_format', 'gsm8k_accuracy'])
    """
    from rich.console import Console

    console = console or Console()
    main_process = _is_main_process()
    plan = plan_training(config, overrides, check_endpoints=check_endpoints)
    config = plan.config
    if main_process:
        _show_plan(plan, console, "rewardsmith train: dry run (nothing loaded)" if dry_run else "rewardsmith train")
    if dry_run:
        return plan
    with _renamed_checkpointing_quiet():
        return _load_and_train(plan, console, main_process)


def _load_and_train(plan: TrainingPlan, console: Any, main_process: bool) -> TrainResult:
    config = plan.config
    output_dir = Path(plan.args.output_dir)
    if main_process:
        output_dir.mkdir(parents=True, exist_ok=True)
        (output_dir / "rewardsmith_config.yaml").write_text(yaml.safe_dump(config.to_dict(), sort_keys=False))

    model, tokenizer, new_tokens = load_model_and_tokenizer(
        config.model, plan.model_path, config.dataset.conversational
    )
    if new_tokens and main_process:
        console.print(
            f"added tokens {', '.join(new_tokens)} (embeddings from their descriptions)",
            highlight=False,
            soft_wrap=True,
        )

    return _train(plan, model, tokenizer, console, output_dir)


@contextlib.contextmanager
def _renamed_checkpointing_quiet() -> Iterator[None]:
    """Silence transformers 5's "gradient_checkpointing* is deprecated" for the calls TRL makes itself.

    The config's own ``gradient_checkpointing`` is already passed under the new
    name (:mod:`rewardsmith.train.removed`); what is left are TRL's internal
    calls of the old model methods, which a config cannot change.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", r"`(is_)?gradient_checkpointing\w*` is deprecated", FutureWarning)
        yield


def _train(plan: TrainingPlan, model: Any, tokenizer: Any, console: Any, output_dir: Path) -> TrainResult:
    config = plan.config
    trainer = _build_trainer(plan, model, tokenizer)
    shown = _use_our_console(trainer, console)
    health = None
    if plan.health is not None:
        health = RewardHealth.attach(trainer, thresholds=plan.health["thresholds"], fail_fast=plan.health["fail_fast"])
    history = RewardHistory(output_dir, health=health)
    trainer.add_callback(history)

    try:
        trainer.train(resume_from_checkpoint=_resume_point(config.resume_from_checkpoint, output_dir))
    finally:
        shown.close()
    trainer.save_model(str(output_dir))

    summary = history.write(trainer.is_world_process_zero())
    if trainer.is_world_process_zero():
        _show_summary(summary, console)
    return TrainResult(summary, output_dir, trainer)


def _show_summary(summary: RunSummary, console: Any) -> None:
    def fmt(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    console.print(
        f"[bold]done[/] after {summary.steps} steps in {summary.seconds:.0f}s", highlight=False, soft_wrap=True
    )
    console.print(
        f"mean total reward: {fmt(summary.reward_start)} at the start -> {fmt(summary.reward_end)} at the end "
        "(first and last 10% of logged steps)",
        highlight=False,
        soft_wrap=True,
    )
    for name, start in summary.rewards_start.items():
        console.print(
            f"  {name}: {fmt(start)} -> {fmt(summary.rewards_end.get(name))}", highlight=False, soft_wrap=True
        )
    if summary.tokens_per_second:
        console.print(f"throughput: {summary.tokens_per_second:,.0f} tokens/s", highlight=False, soft_wrap=True)
    console.print(
        f"model saved to {summary.output_dir}; reward curve: {summary.curve}", highlight=False, soft_wrap=True
    )
