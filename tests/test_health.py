"""Reward health during training, with TRL's real GRPOTrainer on the offline tiny model: the monitor in
`rewardsmith train` and by hand, its metrics and warnings, the summary and curve, and fail-fast on silent rewards."""

from __future__ import annotations

import io
import json
import logging
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from trl_helpers import tiny_grpo_config, tiny_train_config

from rewardsmith import get_reward, reward, to_trl
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.health.monitor import HealthMonitor, SilentRewardError
from rewardsmith.http.testing import LocalChatServer
from rewardsmith.train import RewardHealth, run

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("training")]

ROOT = Path(__file__).resolve().parents[1]
HEALTH_REWARDS = ROOT / "tests" / "health_rewards.py"


@pytest.fixture(autouse=True)
def _cache(monkeypatch):
    monkeypatch.setenv("REWARDSMITH_CACHE", str(ROOT / ".cache"))


def _config(output_dir: Path, rewards: list, **trainer) -> dict:
    return tiny_train_config(output_dir, rewards, **{"max_steps": 3, **trainer})


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=200), out


def _dataset():
    from datasets import Dataset

    return Dataset.from_list([{"prompt": f"Repeat {d}: ", "answer": str(d)} for d in range(8)])


def _png_height(path: Path) -> int:
    return struct.unpack(">II", path.read_bytes()[16:24])[1]


# -- the monitor in `rewardsmith train` ----------------------------------------------------------------------


def test_rewardsmith_train_logs_health_and_writes_the_summary_and_curve(tmp_path, caplog):
    config = _config(tmp_path / "run", [str(ROOT / "tests" / "constant_reward.py") + ":always_half"])
    config["health"] = {"window": 2}
    with caplog.at_level(logging.WARNING, logger="rewardsmith"):
        result = run(config, console=_console()[0])
    logged = [e for e in result.trainer.state.log_history if "reward" in e]
    assert all(e["health/zero_spread"] == 1.0 for e in logged)
    assert all(
        e["health/always_half/unscored_rate"] == 0.0 and e["health/always_half/error_rate"] == 0.0 for e in logged
    )
    warnings = [r.getMessage() for r in caplog.records if r.getMessage().startswith("health")]
    assert len(warnings) == 1 and "every advantage is zero" in warnings[0] and "Try:" in warnings[0]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["health"]["warnings"][0]["kind"] == "zero_spread" and summary["health"]["warnings"][0]["step"] == 1
    assert summary["health"]["metrics"]["zero_spread"]["mean"] == 1.0
    history = json.loads((tmp_path / "run" / "health_history.json").read_text())
    assert [row["step"] for row in history] == [1, 2, 3]
    assert _png_height(tmp_path / "run" / "reward_curve.png") > 700  # a health panel under the rewards


def test_health_can_be_turned_off_and_is_shown_in_the_plan(tmp_path):
    config = {**_config(tmp_path / "off", ["tag_count"], max_steps=1), "health": False}
    console, out = _console()
    result = run(config, console=console)
    assert not any(k.startswith("health/") for e in result.trainer.state.log_history for k in e)
    assert "reward health" in out.getvalue() and "off" in out.getvalue()
    from rewardsmith.train import ConfigError

    with pytest.raises(ConfigError, match="zero_sprad"):
        run({**config, "health": {"zero_sprad": 1}}, dry_run=True, console=console)


def test_one_reward_drowning_another_is_warned_about(tmp_path, caplog):
    rewards = [f"{HEALTH_REWARDS}:long_is_good", f"{HEALTH_REWARDS}:has_a_digit"]
    config = {**_config(tmp_path / "dominant", rewards, max_steps=3, temperature=1.5), "health": {"window": 2}}
    with caplog.at_level(logging.WARNING, logger="rewardsmith"):
        result = run(config, console=_console()[0])
    last = [e for e in result.trainer.state.log_history if "reward" in e][-1]
    assert last["health/variance_share/long_is_good"] > 0.95
    assert last["health/variance_share/long_is_good"] + last["health/variance_share/has_a_digit"] == pytest.approx(1)
    messages = [r.getMessage() for r in caplog.records if "carries" in r.getMessage()]
    assert messages and "long_is_good carries" in messages[0] and "has_a_digit" in messages[0]


def test_a_combined_reward_is_split_into_its_parts(tmp_path):
    combined = {"combine": [{"name": f"{HEALTH_REWARDS}:long_is_good", "weight": 0.01},
                            {"name": f"{HEALTH_REWARDS}:has_a_digit", "weight": 1.0}], "as": "total"}  # fmt: skip
    result = run(_config(tmp_path / "parts", [combined], max_steps=2, temperature=1.5), console=_console()[0])
    last = [e for e in result.trainer.state.log_history if "reward" in e][-1]
    shares = {k: v for k, v in last.items() if k.startswith("health/variance_share/total/")}
    assert set(shares) == {"health/variance_share/total/long_is_good", "health/variance_share/total/has_a_digit"}
    assert sum(shares.values()) == pytest.approx(1.0)


def test_when_no_reward_scores_a_step_the_console_prints_n_a(tmp_path):
    config = _config(tmp_path / "none", [f"{HEALTH_REWARDS}:never_applies"], max_steps=2)
    config["health"] = {"window": 2}
    console, out = _console()
    result = run(config, console=console)  # used to crash formatting None
    text = out.getvalue()
    assert "reward n/a" in text and "never_applies n/a" in text
    last = [e for e in result.trainer.state.log_history if "health/never_applies/unscored_rate" in e][-1]
    assert last["health/never_applies/unscored_rate"] == 1.0
    kinds = [w["kind"] for w in result.summary.health["warnings"]]
    assert "unscored" in kinds


# -- fail fast --------------------------------------------------------------------------------------------


def test_a_seed_style_reward_is_refused_before_loading_with_the_fix(tmp_path):
    config = _config(tmp_path / "seed", [f"{HEALTH_REWARDS}:seed_style", "tag_count"], max_steps=5)
    with pytest.raises(RewardConfigError) as caught:
        run(config, console=_console()[0])
    message = str(caught.value)
    assert "reward 'seed_style' never sees the completions: seed_style(prompts, responses)" in message
    assert "Fix: rename `responses` to `completions`" in message
    assert not (tmp_path / "seed").exists()  # nothing loaded, nothing written


def test_the_command_exits_2_naming_the_reward_and_on_error_set_on_purpose_trains_on(tmp_path):
    path = tmp_path / "config.yaml"
    import yaml

    config = _config(tmp_path / "cli", [{"name": f"{HEALTH_REWARDS}:always_fails"}, "tag_count"], max_steps=3)
    path.write_text(yaml.safe_dump(config))
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "rewardsmith.cli", "train", str(path)], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=600)  # fmt: skip
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert "reward 'always_fails' failed on all" in done.stderr and "not configured" in done.stderr
    assert "on_error" in done.stderr
    config["rewards"][0]["kwargs"] = {"on_error": "none"}
    result = run(config, console=_console()[0])
    assert result.trainer.state.global_step == 3


# -- by hand, in any GRPOTrainer -----------------------------------------------------------------------------


def test_attached_by_hand_to_a_grpo_trainer(tmp_path, caplog):
    from trl import GRPOTrainer

    @reward
    def constant(completion: str) -> float:
        return 1.0

    trainer = GRPOTrainer(model=str(tiny_model_path()), reward_funcs=to_trl([constant, get_reward("tag_count")]),
                          args=tiny_grpo_config(tmp_path, max_steps=2), train_dataset=_dataset())  # fmt: skip
    health = RewardHealth.attach(trainer)
    names = [type(c).__name__ for c in trainer.callback_handler.callbacks]
    assert names[:2] == ["DefaultFlowCallback", "RewardHealth"]
    with caplog.at_level(logging.WARNING, logger="rewardsmith"):
        trainer.train()
    logged = [e for e in trainer.state.log_history if "reward" in e]
    assert all("health/zero_spread" in e and "health/constant/unscored_rate" in e for e in logged)
    assert health.summary()["logs"] == 2


def test_added_with_add_callback_and_stops_a_silent_reward(tmp_path):
    from trl import GRPOTrainer

    rewards = to_trl([get_reward(f"{HEALTH_REWARDS}:always_fails"), get_reward("tag_count")])
    trainer = GRPOTrainer(model=str(tiny_model_path()), reward_funcs=rewards,
                          args=tiny_grpo_config(tmp_path, max_steps=4), train_dataset=_dataset())  # fmt: skip
    trainer.add_callback(RewardHealth(rewards))
    with pytest.raises(SilentRewardError, match="always_fails"):
        trainer.train()
    assert trainer.state.global_step == 1


def tiny_model_path() -> Path:
    from conftest import CACHE

    from rewardsmith.train.tiny_model import build_tiny_model

    return build_tiny_model(CACHE / "tiny-model")


# -- the monitor's logic on real rewards (judges against a local server) ----------------------------------


def test_judge_and_rule_disagreement_and_length_drift():
    with LocalChatServer(lambda request: "Score: 10") as server:
        judge = get_reward("llm_judge", model="m", base_url=server.base_url, api_key_env=None, cache=None)
        rule = get_reward("gsm8k_accuracy")
        monitor = HealthMonitor([judge, rule], thresholds={"window": 2, "disagreement": 0.3})
        completions = ["#### 4", "#### 5", "#### 6", "#### 4"]
        for step in range(1, 5):
            judge.scores(prompts=["2+2?"] * 4, completions=completions, answer=["4"] * 4)
            rule(prompts=["2+2?"] * 4, completions=completions, answer=["4"] * 4)
            monitor.after_step()
            logs = {"reward": 0.5, "rewards/gsm8k_accuracy/mean": 0.5, "completions/mean_length": 10.0 * step**2}
            metrics, _ = monitor.observe(logs, step)
    key = f"health/disagreement/{judge.name}~gsm8k_accuracy"
    assert metrics[key] == pytest.approx(0.5)  # the judge passes all four, the rule two
    kinds = {w.kind for w in monitor.warnings}
    assert {"disagreement", "length_drift"} <= kinds
    drift = next(w for w in monitor.warnings if w.kind == "length_drift")
    assert drift.step == 4 and "correctness stayed flat" in drift.message


def _logs(accuracy_std: float, format_std: float) -> dict[str, float]:
    return {"reward": 1.0, "rewards/accuracy/mean": 0.5, "rewards/accuracy/std": accuracy_std,
            "rewards/format/mean": 0.99, "rewards/format/std": format_std}  # fmt: skip


def test_a_learned_reward_is_not_called_drowned_but_a_small_one_that_still_moves_is():
    """The variance share alone cannot tell a format reward that was learned from one drowned by scale."""
    learned = HealthMonitor(thresholds={"window": 2})
    for step, format_std in enumerate([0.45, 0.40, 0.30, 0.02, 0.01, 0.01], start=1):
        _, warnings = learned.observe(_logs(0.45, format_std), step)
        assert not [w for w in warnings if w.kind == "dominant"], (step, warnings)
    assert learned.history["variance_share/accuracy"][-1] > 0.99  # the share alone would have warned

    drowned = HealthMonitor(thresholds={"window": 2})  # the same share, but the small reward never settles
    found = [w for step in range(1, 7) for w in drowned.observe(_logs(0.45, 0.02), step)[1]]
    assert [w.kind for w in found] == ["dominant"] and "format" in found[0].message
