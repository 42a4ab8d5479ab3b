"""Health warnings on tool use: no rollout calls a tool, most calls fail, too many calls per rollout."""

from __future__ import annotations

from pathlib import Path

import pytest

from rewardsmith.core.problems import ConfigError
from rewardsmith.health.monitor import HealthMonitor, health_settings

ROOT = Path(__file__).resolve().parents[1]


def _feed(monitor: HealthMonitor, logs: list[dict]) -> list[str]:
    kinds = []
    for step, log in enumerate(logs, 1):
        metrics, warnings = monitor.observe({"reward": 0.5, **log}, step)
        assert ("health/tool_calls_per_rollout" in metrics) == ("trajectory/calls_per_rollout" in log)
        kinds += [w.kind for w in warnings]
    return kinds


def test_most_calls_failing_warns_once_with_what_to_do():
    monitor = HealthMonitor(thresholds={"window": 2})
    logs = [{"trajectory/calls_per_rollout": 2.0, "trajectory/failed_call_share": 0.8, "trajectory/no_call_share": 0}]
    assert _feed(monitor, logs * 4) == ["failed_tool_calls"]
    warning = monitor.warnings[0]
    assert warning.value == pytest.approx(0.8) and warning.threshold == 0.5 and "tool_success" in warning.message


def test_the_thresholds_are_means_over_the_window_and_settable():
    healthy = {
        "trajectory/calls_per_rollout": 1.5,
        "trajectory/failed_call_share": 0.1,
        "trajectory/no_call_share": 0.2,
    }
    assert _feed(HealthMonitor(thresholds={"window": 2}), [healthy] * 5) == []
    looping = {**healthy, "trajectory/calls_per_rollout": 12.0}
    assert _feed(HealthMonitor(thresholds={"window": 2}), [healthy, looping, looping]) == ["max_tool_calls"]
    assert _feed(HealthMonitor(thresholds={"window": 2, "max_tool_calls": None}), [looping] * 3) == []
    one_bad_log = {**healthy, "trajectory/failed_call_share": 0.9}
    assert _feed(HealthMonitor(thresholds={"window": 3}), [healthy, healthy, one_bad_log]) == []  # mean 0.37
    assert health_settings({"no_tool_calls": 0.5, "failed_tool_calls": 0.3})["thresholds"]["no_tool_calls"] == 0.5
    with pytest.raises(ConfigError, match="failed_tool_calls"):
        health_settings({"failed_tool_call": 0.3})


def test_runs_without_tool_metrics_get_no_tool_warning():
    assert _feed(HealthMonitor(thresholds={"window": 1}), [{"frac_reward_zero_std": 0.0}] * 3) == []


@pytest.mark.slow
@pytest.mark.xdist_group("training")
def test_a_real_run_where_no_rollout_calls_a_tool_is_warned_about(tmp_path, monkeypatch):
    from trl_helpers import tiny_train_config

    from rewardsmith.train import run

    monkeypatch.setenv("REWARDSMITH_CACHE", str(ROOT / ".cache"))
    config = tiny_train_config(tmp_path / "run", ["tool_success"], max_steps=2)
    config["health"] = {"window": 2}
    result = run(config)
    logged = [e for e in result.trainer.state.log_history if "health/tool_no_call_share" in e]
    assert logged and all(e["health/tool_no_call_share"] == 1.0 for e in logged)
    assert all(e["trajectory/no_call_share"] == 1.0 for e in logged)  # what the reward logged through TRL
    warnings = {w["kind"]: w for w in result.summary.health["warnings"]}
    assert "no_tool_calls" in warnings and "no rollouts called a tool" in warnings["no_tool_calls"]["message"]
