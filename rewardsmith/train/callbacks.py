"""Trainer callbacks: a readable console, early warnings, and what a run leaves behind.

:class:`RewardConsole` shows a progress bar and, at each logging step, one
line with the total reward and each reward's mean (``n/a`` where no sample was
scored). :class:`RewardHistory` keeps those numbers, warns when the first batch
cannot teach anything (every reward constant, so every advantage is zero; the
reward-health monitor, :mod:`rewardsmith.health.callback`, says so instead when it
runs), and at the end writes ``reward_history.json``, ``reward_curve.png`` (with the health metrics and
warnings under the rewards when the monitor ran) and a summary (reward at the
start and the end, time, tokens per second, the health summary). A resumed
run starts from the checkpoint's log history, so those files cover every
step, and the first-batch warning is not given again.
"""

from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

__all__ = ["RewardConsole", "RewardHistory", "RunSummary"]

logger = logging.getLogger("rewardsmith")


def _reward_names(logs: dict[str, Any]) -> list[str]:
    return [k[len("rewards/") : -len("/mean")] for k in logs if k.startswith("rewards/") and k.endswith("/mean")]


def _fmt(value: Any, digits: int = 3) -> str:
    """A logged number for the console; ``n/a`` when TRL logged none (no sample scored).

    >>> _fmt(0.5), _fmt(None), _fmt(float("nan"))
    ('0.500', 'n/a', 'n/a')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}"


_NOT_A_REWARD = ("step", "reward", "num_tokens")


@dataclass
class RunSummary:
    """What a finished run reports."""

    steps: int
    reward_start: float | None
    reward_end: float | None
    rewards_start: dict[str, float | None] = field(default_factory=dict)
    rewards_end: dict[str, float | None] = field(default_factory=dict)
    seconds: float = 0.0
    tokens_per_second: float | None = None
    output_dir: str = ""
    curve: str | None = None
    health: dict[str, Any] | None = None

    @property
    def rise(self) -> float | None:
        if self.reward_start is None or self.reward_end is None:
            return None
        return self.reward_end - self.reward_start


def _mean(values: list[float]) -> float | None:
    clean = [v for v in values if v is not None and not math.isnan(v)]
    return sum(clean) / len(clean) if clean else None


class RewardHistory(TrainerCallback):
    """Records each logging step's rewards; warns early; writes the curve and summary at the end."""

    def __init__(self, output_dir: str | Path, health: Any = None) -> None:
        self.output_dir = Path(output_dir)
        self.rows: list[dict[str, Any]] = []
        self.health_rows: list[dict[str, Any]] = []
        self.started = time.monotonic()
        self.health = health
        self._warned = health is not None

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """On a resumed run, take the earlier steps from the checkpoint's log history (and warn no more)."""
        if not state.global_step:
            return
        self._warned = True  # the first batch was seen before the checkpoint
        self.rows, self.health_rows = [], []
        for logs in getattr(state, "log_history", None) or []:
            if logs.get("step", 0) <= state.global_step:
                self._keep_log(logs.get("step", 0), logs)

    def _keep_log(self, step: int, logs: dict[str, Any]) -> None:
        if "reward" not in logs:
            return
        row = {"step": step, "reward": logs["reward"], "num_tokens": logs.get("num_tokens")}
        row.update({name: logs.get(f"rewards/{name}/mean") for name in _reward_names(logs)})
        self.rows.append(row)
        health = {k[len("health/") :]: v for k, v in logs.items() if k.startswith("health/")}
        if health:
            self.health_rows.append({"step": step, **health})

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if not logs or "reward" not in logs:
            return
        self._keep_log(state.global_step, logs)
        if not self._warned:
            self._warned = True
            if logs.get("frac_reward_zero_std") == 1.0:
                logger.warning(
                    "every reward was constant within every prompt group of the first batch, so every advantage is "
                    "zero and nothing is learned from it. If this persists, the rewards cannot tell the completions "
                    "apart: check that they read the right columns (rewardsmith rewards show NAME) and score partial "
                    "progress, or raise temperature/num_generations."
                )

    def summary(self) -> RunSummary:
        names = [k for k in (self.rows[0] if self.rows else {}) if k not in _NOT_A_REWARD]
        tenth = max(1, len(self.rows) // 10)
        head, tail = self.rows[:tenth], self.rows[-tenth:]
        seconds = time.monotonic() - self.started
        tokens = self.rows[-1].get("num_tokens") if self.rows else None
        return RunSummary(
            steps=self.rows[-1]["step"] if self.rows else 0,
            reward_start=_mean([r["reward"] for r in head]),
            reward_end=_mean([r["reward"] for r in tail]),
            rewards_start={n: _mean([r.get(n) for r in head]) for n in names},
            rewards_end={n: _mean([r.get(n) for r in tail]) for n in names},
            seconds=seconds,
            tokens_per_second=(tokens / seconds) if tokens and seconds > 0 else None,
            output_dir=str(self.output_dir),
            health=self.health.summary() if self.health is not None else None,
        )

    def write(self, is_main_process: bool = True) -> RunSummary:
        """Write ``reward_history.json``, ``reward_curve.png`` and ``summary.json``; return the summary."""
        summary = self.summary()
        if not is_main_process or not self.rows:
            return summary
        self.output_dir.mkdir(parents=True, exist_ok=True)
        (self.output_dir / "reward_history.json").write_text(json.dumps(self.rows, indent=1))
        if self.health_rows:
            (self.output_dir / "health_history.json").write_text(json.dumps(self.health_rows, indent=1))
        summary.curve = str(self._plot())
        (self.output_dir / "summary.json").write_text(json.dumps(asdict(summary), indent=1))
        return summary

    def _plot(self) -> Path:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        steps = [r["step"] for r in self.rows]
        warnings = (self.health.summary()["warnings"] if self.health is not None else []) or []
        panels = 2 if self.health_rows else 1
        fig, axes = plt.subplots(panels, 1, figsize=(8, 4.5 + 2.3 * (panels - 1)), dpi=110, sharex=True,
                                 gridspec_kw={"height_ratios": [2.2, 1][:panels]}, squeeze=False)  # fmt: skip
        ax = axes[0][0]
        ax.plot(steps, [_nan(r["reward"]) for r in self.rows], color="black", linewidth=2.2, label="total (weighted)")
        for name in [k for k in self.rows[0] if k not in _NOT_A_REWARD]:
            ax.plot(steps, [_nan(r.get(name)) for r in self.rows], linewidth=1.2, label=name)
        ax.set_ylabel("mean reward")
        ax.set_title("rewards over training")
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize=8)
        if panels == 2:
            _plot_health(axes[1][0], self.health_rows, warnings)
        axes[-1][0].set_xlabel("step")
        fig.tight_layout()
        path = self.output_dir / "reward_curve.png"
        fig.savefig(path)
        plt.close(fig)
        return path


def _nan(value: Any) -> float:
    return math.nan if value is None else value


def _plot_health(ax: Any, rows: list[dict[str, Any]], warnings: list[dict[str, Any]]) -> None:
    """The health panel: zero-spread share, the largest variance share, and a line at each warning."""
    steps = [r["step"] for r in rows]
    ax.plot(steps, [_nan(r.get("zero_spread")) for r in rows], color="#d4574a", label="groups with zero spread")
    shares = [max((v for k, v in r.items() if k.startswith("variance_share/")), default=math.nan) for r in rows]
    if any(not math.isnan(v) for v in shares):
        ax.plot(steps, shares, color="#4f7cd6", label="largest variance share")
    for warning in warnings:
        ax.axvline(warning["step"], color="#a1261b", linestyle="--", linewidth=0.9)
        ax.annotate(warning["kind"], (warning["step"], 1.02), fontsize=7, color="#a1261b", rotation=90,
                    va="bottom", ha="right")  # fmt: skip
    ax.set_ylim(-0.02, 1.25)
    ax.set_ylabel("health")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left", fontsize=7)


class RewardConsole(TrainerCallback):
    """A progress bar with an ETA, and one line per logging step with each reward's mean."""

    def __init__(self, console: Any = None) -> None:
        from rich.console import Console

        self.console = console or Console()
        self.progress: Any = None
        self.task: Any = None

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if not state.is_world_process_zero:
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("[bold]training"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=self.console,
            transient=True,
        )
        self.progress.start()
        self.task = self.progress.add_task("train", total=state.max_steps or None)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.progress is not None:
            self.progress.update(self.task, completed=state.global_step)

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if not state.is_world_process_zero or not logs:
            return
        prefix = "eval_" if any(k.startswith("eval_") for k in logs) else ""
        if f"{prefix}reward" not in logs:
            return
        parts = [f"step {state.global_step:>5}", f"{prefix or ''}reward {_fmt(logs[f'{prefix}reward'])}"]
        for key, value in logs.items():
            if key.startswith(f"{prefix}rewards/") and key.endswith("/mean"):
                parts.append(f"{key[len(prefix) + 8 : -5]} {_fmt(value)}")
        if logs.get("kl") is not None:
            parts.append(f"kl {_fmt(logs['kl'], 4)}")
        self.console.print("  ".join(parts), highlight=False, soft_wrap=True)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.close()

    def close(self) -> None:
        """Stop the progress bar (also when training stopped with an error)."""
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
