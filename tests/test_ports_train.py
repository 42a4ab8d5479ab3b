"""The five ports in examples/ports/ train on the tiny model, evaluate and check; a resumed run keeps its history."""

from __future__ import annotations

import importlib.util
import json
import logging
import warnings
from pathlib import Path

import pytest
from trl_helpers import tiny_train_config

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("training")]

ROOT = Path(__file__).resolve().parents[1]
PORTS = ROOT / "examples" / "ports"


@pytest.fixture(autouse=True)
def _cache(monkeypatch):
    monkeypatch.setenv("REWARDSMITH_CACHE", str(ROOT / ".cache"))


def _main(path: Path):
    spec = importlib.util.spec_from_file_location(f"port_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def _scored_everything(summary: dict) -> bool:
    return all(stats["error_rate"] == 0 for stats in summary.values())


def test_the_five_ports_train_evaluate_and_check_unchanged(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = {p.stem if p.stem != "main" else "open_r1": _main(p)(tmp_path / p.parent.name / p.stem, steps=1)
                   for p in [PORTS / "gsm8k_demo.py", PORTS / "unsloth_gemma3.py", PORTS / "trl_docs.py",
                             PORTS / "open_r1" / "main.py", PORTS / "reward_kit_example.py"]}  # fmt: skip
    assert {name: r["steps"] for name, r in results.items()} == dict.fromkeys(results, 1)
    assert all(_scored_everything(r["eval"]) for r in results.values())
    gsm8k = results["gsm8k_demo"]
    assert gsm8k["check"] == {"xmlcount_reward_func": 0.5, "soft_format_reward_func": 0.5,
                              "strict_format_reward_func": 0.5, "int_reward_func": 0.5,
                              "correctness_reward_func": 2.0}  # fmt: skip
    assert gsm8k["eval"]["xmlcount_reward_func"]["mean"] == 0.25  # the same text scores the same in eval
    unsloth = results["unsloth_gemma3"]
    assert unsloth["check"] == {"match_format_exactly": 3.0, "match_format_approximately": 2.0,
                                "check_answer": 3.0, "check_numbers": 1.5}  # fmt: skip
    assert unsloth["eval"]["match_format_exactly"]["max"] == 3.0
    trl_docs = results["trl_docs"]
    assert trl_docs["check"]["exact_ground_truth"] == 1.0 and trl_docs["check"]["copy_task_reward"] == 1.0
    assert trl_docs["eval"]["copy_task_reward"]["none_rate"] == 0.5  # off its task: None, not 0
    open_r1 = results["open_r1"]
    assert open_r1["eval"]["math_accuracy"]["mean"] == open_r1["eval_ports"]["accuracy_reward"]["mean"] == 0.5
    assert open_r1["check"] == {"accuracy_reward": 1.0, "format_reward": 1.0, "tag_count_reward": 1.0}
    kit = results["reward_kit_example"]
    assert {"digit_with_format/format", "digit_with_format/answer"} <= set(kit["logged"])
    assert kit["check"] == {"digit_with_format": 1.0} and kit["metrics"]["answer"]["success"] is True
    assert not [w for w in caught if "gradient_checkpointing" in str(w.message)]


def test_a_resumed_run_keeps_the_whole_history_and_warns_once(tmp_path, caplog):
    from rich.console import Console

    from rewardsmith.train import run

    out = tmp_path / "resume"
    rewards = [str(ROOT / "tests" / "constant_reward.py") + ":always_half"]
    quiet = Console(file=open(tmp_path / "console.txt", "w"))  # noqa: SIM115
    with caplog.at_level(logging.WARNING, logger="rewardsmith"):
        run(tiny_train_config(out, rewards, max_steps=1, save_strategy="steps", save_steps=1), console=quiet)
    assert any("every advantage is zero" in r.getMessage() for r in caplog.records)
    caplog.clear()
    config = {**tiny_train_config(out, rewards, max_steps=2), "resume_from_checkpoint": True}
    with caplog.at_level(logging.WARNING, logger="rewardsmith"):
        run(config, console=quiet)
    assert not [r for r in caplog.records if "every advantage is zero" in r.getMessage()]
    assert [row["step"] for row in json.loads((out / "reward_history.json").read_text())] == [1, 2]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 2 and summary["reward_start"] == summary["reward_end"] == 0.5
    assert (out / "reward_curve.png").stat().st_size > 0
