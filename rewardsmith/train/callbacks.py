"""Trainer callbacks: a readable console, early warnings, and what a run leaves behind.

:class:`RewardConsole` shows a progress bar and, at each logging step, one
line with the total reward and each reward's mean. :class:`RewardHistory`
keeps those numbers, warns when the first batch cannot teach anything (every
reward constant, so every advantage is zero), and at the end writes
``reward_curve.png`` and a summary (reward at the start and the end, time,
tokens per second).
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

    def __init__(self, output_dir: str | Path) -> None:
        self.output_dir = Path(output_dir)
        self.rows: list[dict[str, Any]] = []
        self.started = time.monotonic()
        self._warned = False

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if not logs or "reward" not in logs:
            return
        row = {"step": state.global_step, "reward": logs["reward"], "num_tokens": logs.get("num_tokens")}
        row.update({name: logs.get(f"rewards/{name}/mean") for name in _reward_names(logs)})
        self.rows.append(row)
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
        names = [k for k in (self.rows[0] if self.rows else {}) if k not in ("step", "reward", "num_tokens")]
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
        )

    def write(self, is_main_process: bool = True) -> RunSummary:
        """Write ``reward_history.json``, ``reward_curve.png`` and ``summary.json``; return the summary."""
        summary = self.summary()
        if not is_main_process or not self.rows:
            return summary
        self.output_dir.mkdir(parents=True, exist_ok=True)
        (self.output_dir / "reward_history.json").write_text(json.dumps(self.rows, indent=1))
        summary.curve = str(self._plot())
        (self.output_dir / "summary.json").write_text(json.dumps(asdict(summary), indent=1))
        return summary

    def _plot(self) -> Path:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        steps = [r["step"] for r in self.rows]
        fig, ax = plt.subplots(figsize=(8, 4.5), dpi=110)
        ax.plot(steps, [r["reward"] for r in self.rows], color="black", linewidth=2.2, label="total (weighted)")
        names = [k for k in self.rows[0] if k not in ("step", "reward", "num_tokens")]
        for name in names:
            values = [math.nan if r.get(name) is None else r[name] for r in self.rows]
            ax.plot(steps, values, linewidth=1.2, label=name)
        ax.set_xlabel("step")
        ax.set_ylabel("mean reward")
        ax.set_title("rewards over training")
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize=8)
        fig.tight_layout()
        path = self.output_dir / "reward_curve.png"
        fig.savefig(path)
        plt.close(fig)
        return path


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
        parts = [f"step {state.global_step:>5}", f"{prefix or ''}reward {logs[f'{prefix}reward']:.3f}"]
        for key, value in logs.items():
            if key.startswith(f"{prefix}rewards/") and key.endswith("/mean") and value is not None:
                parts.append(f"{key[len(prefix) + 8 : -5]} {value:.3f}")
        if "kl" in logs and logs["kl"] is not None:
            parts.append(f"kl {logs['kl']:.4f}")
        self.console.print("  ".join(parts), highlight=False, soft_wrap=True)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
