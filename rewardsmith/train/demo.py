"""``make demo``: the embedded default config (``rewardsmith/configs/tiny_cpu.yaml``), trained end to end offline."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from rewardsmith.train.recipe import TrainResult, run

__all__ = ["DEMO_CONFIG", "run_demo"]


def _config_path() -> Path:
    return Path(str(resources.files("rewardsmith.configs").joinpath("tiny_cpu.yaml")))


DEMO_CONFIG = _config_path()


def run_demo(output_dir: str | Path = "runs/demo", max_steps: int | None = None, console: Any = None) -> TrainResult:
    """Train the tiny model on the bundled task with built-in rewards; returns the run's result.

    The summary it prints gives the mean total reward over the first and the
    last 10% of logged steps, each reward's start and end, and the path of
    ``reward_curve.png``.
    """
    overrides = [f"trainer.output_dir={Path(output_dir)}"]
    if max_steps is not None:
        overrides.append(f"trainer.max_steps={max_steps}")
    result = run(DEMO_CONFIG, overrides, console=console)
    assert isinstance(result, TrainResult)
    return result
