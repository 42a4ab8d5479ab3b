"""``rewardsmith demo tools`` at a reduced budget: TRL's tool loop makes, runs and scores real tool calls."""

from __future__ import annotations

import io
import math

import pytest

pytestmark = pytest.mark.slow


def test_the_tool_demo_makes_runs_and_scores_tool_calls(tmp_path, monkeypatch):
    from rich.console import Console

    from rewardsmith.demo_tools import build_tool_model, code_answer, reward_rise, train_tools_demo

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
    folder = tmp_path / "cache" / "tools-demo-300-0"
    assert build_tool_model(folder) == folder
    # the start and end of every reward are reported
    assert {"tool_success", "environment_reward", "code_answer", "total"} <= set(
        reward_rise(result.trainer.state.log_history)
    )


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


def test_the_warm_start_teaches_only_the_format():
    """Its examples' keys and answers are drawn at random, and the tool's turn is masked from the loss."""
    import random

    from rewardsmith.demo_tools import _format_example, tool_rows

    rows = tool_rows(60, seed=2)
    rng = random.Random(0)
    examples = [_format_example(row, rng) for row in rows]
    right_keys = sum(
        ex[2]["tool_calls"][0]["function"]["arguments"]["key"] == row["key"] for ex, row in zip(examples, rows)
    )
    assert 5 < right_keys < 40  # about a third: chance, not the task
    right_answers = sum(ex[-1]["content"] == f"<answer>{ex[-2]['content']}</answer>" for ex in examples)
    assert right_answers < 20  # the answer does not copy the tool's result either (a tenth, by chance)


def _rollout(env, row, policy: str) -> list[dict]:
    """One rollout of a scripted policy on a row, run against the row's own store (as TRL's loop would)."""
    calls = {"uses the tool": row["key"], "memorises the key": "k1", "calls, answers a memorised code": row["key"]}
    key = calls.get(policy)
    if key is None:  # "memorises the code": no call, the same answer on every row
        return [{"role": "assistant", "content": "<answer>4</answer>"}]
    result = env.lookup(key)
    answer = "4" if policy == "calls, answers a memorised code" else result
    return [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"type": "function", "function": {"name": "lookup", "arguments": {"key": key}}}],
        },
        {"role": "tool", "name": "lookup", "content": result},
        {"role": "assistant", "content": f"<answer>{answer}</answer>"},
    ]


def test_on_the_demo_rows_only_looking_up_the_asked_key_and_copying_its_code_pays_in_full(tmp_path):
    """Scored with the demo's own rewards and weights: a memorised key, a memorised code, or an answer without
    the tool earns less than looking up the key the prompt names and answering with what came back."""
    import json

    from rewardsmith.compose import rewards_from_config
    from rewardsmith.demo_tools import KeyValueStore, demo_config, tool_rows

    rows = tool_rows(90, seed=3)
    assert len({row["key"] for row in rows}) == 3 and len({row["code"] for row in rows}) == 10
    assert all(len(set(json.loads(row["codes"]).values())) == 3 for row in rows)  # a wrong key gives a wrong code
    rewards, weights = rewards_from_config(demo_config("unused", tmp_path)["rewards"])
    totals, parts = {}, {}
    for policy in ("uses the tool", "memorises the key", "memorises the code", "calls, answers a memorised code"):
        envs, rollouts = [], []
        for row in rows:
            env = KeyValueStore()
            env.reset(**row)
            rollouts.append(_rollout(env, row, policy))
            envs.append(env)
        prompts = [row["prompt"] for row in rows]
        codes = [row["code"] for row in rows]
        scores = {r.name: r(prompts=prompts, completions=rollouts, environments=envs, code=codes) for r in rewards}
        parts[policy] = {name: sum(s or 0.0 for s in v) / len(rows) for name, v in scores.items()}
        totals[policy] = sum(w * parts[policy][r.name] for r, w in zip(rewards, weights))
    assert parts["uses the tool"] == {"tool_success": 1.0, "environment_reward": 1.0, "code_answer": 1.0}
    best = totals.pop("uses the tool")
    assert all(total < best - 0.5 for total in totals.values()), totals
    # the memorised key is right a third of the time; the memorised code pays nothing in the code's reward
    assert 0.2 < parts["memorises the key"]["environment_reward"] < 0.5
    assert parts["memorises the code"]["code_answer"] == 0.0
    assert parts["calls, answers a memorised code"]["code_answer"] < 0.2
