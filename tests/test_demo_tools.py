"""``rewardsmith demo tools`` at a reduced budget: TRL's tool loop makes, runs and scores real tool calls."""

from __future__ import annotations

import io
import math

import pytest

pytestmark = pytest.mark.slow


def test_the_tool_demo_makes_runs_and_scores_tool_calls(tmp_path, monkeypatch):
    from rich.console import Console

    from rewardsmith.demo_tools import build_tool_model, code_answer, train_tools_demo

    monkeypatch.setenv("REWARDSMITH_CACHE", str(tmp_path / "cache"))
    result = train_tools_demo(tmp_path / "run", max_steps=2, console=Console(file=io.StringIO()))
    logged = [entry for entry in result.trainer.state.log_history if "tools/call_frequency" in entry]
    assert logged, "the trainer logged no step"
    # calls were made and TRL's loop ran them (its own counters) ...
    assert max(entry["tools/call_frequency"] for entry in logged) > 0
    # ... and our trajectory rewards scored them: tool_success scores only rollouts that made calls
    assert any(math.isfinite(entry.get("rewards/tool_success/mean", math.nan)) for entry in logged)
    assert all("rewards/environment_reward/mean" in entry for entry in logged)
    assert code_answer.name == "code_answer"
    # the model was taught the call format before training (its folder is reused)
    assert build_tool_model(tmp_path / "cache" / "tools-demo-150") == tmp_path / "cache" / "tools-demo-150"


def test_the_demo_rows_and_environment_agree():
    import json

    from rewardsmith.demo_tools import KeyValueStore, found_key, tool_rows

    row = tool_rows(3, seed=1)[2]
    env = KeyValueStore()
    env.reset(**row)
    assert env.lookup(row["key"]) == row["code"] == json.loads(row["codes"])[row["key"]]
    assert found_key(env) == 1.0
    with pytest.raises(KeyError):
        env.lookup("nope")
