"""Per-turn rewards: a score per turn (or call), None for turns not judged, reasons, aggregation, the vector,
the evaluation report, the health monitor and the audit's per-turn return."""

from __future__ import annotations

import html
import pickle
import sys
from pathlib import Path

import pytest

import rewardsmith
from rewardsmith import RewardConfigError, evaluate, get_reward
from rewardsmith.core.turns import Turn, TurnReward, aggregate_turns, at_turn_ends, turn_reward
from rewardsmith.health.monitor import HealthMonitor

sys.path.insert(0, str(Path(__file__).parent))
from test_trajectory_probes import _rows

LOOKUP = {"name": "lookup", "parameters": {"type": "object", "properties": {"key": {"type": "string"}}}}


def _call(key: str = "k1", name: str = "lookup") -> dict:
    return {"type": "function", "function": {"name": name, "arguments": {"key": key}}}


def _rollout(*results: str, final: str = "<answer>7</answer>") -> list[dict]:
    """One turn per result (a lookup call answered by it), then the final answer."""
    out: list[dict] = []
    for i, result in enumerate(results):
        out += [
            {"role": "assistant", "content": f"step {i}", "tool_calls": [_call(f"k{i}")]},
            {"role": "tool", "name": "lookup", "content": result},
        ]
    return [*out, {"role": "assistant", "content": final}]


FAILED = "{'error': 'no such key'}"


def test_each_turn_is_scored_with_none_for_turns_not_judged_and_a_reason_each():
    r = get_reward("tool_success_turns")
    rollout = _rollout("7", FAILED, "8")
    assert r.turn_scores(completions=[rollout]) == [[0.0, -1.0, 0.0, None]]
    result = r.check(rollout)
    assert result.score == -1.0
    assert result.metrics["turn_reasons"][1] == "lookup failed: {'error': 'no such key'}"
    assert result.reason.split("; ")[1:] == ["turn 2: -1 (lookup failed: {'error': 'no such key'})",
                                             "turn 3: 0 (1 of 1 call(s) succeeded)", "turn 4: not judged"]  # fmt: skip
    assert r(completions=["plain text, no calls"]) == [None]


def test_a_long_rollouts_reason_spells_out_the_first_turns_and_keeps_every_one_in_the_metrics():
    result = get_reward("tool_success_turns").check(_rollout(*["7"] * 60))
    assert result.reason.endswith("; +11 more turns (each in metrics['turn_reasons'])")  # 61 turns, 50 spelled out
    assert len(result.metrics["turn_reasons"]) == 61


def test_each_call_is_a_step_with_unit_call():
    r = get_reward("tool_schema_turns", tools=[LOOKUP], unit="call")
    turn = {"role": "assistant", "tool_calls": [_call("a"), _call("b", name="rm")]}
    assert r.turn_scores(completions=[[turn]]) == [[0.0, -1.0]]
    assert r.check([turn]).reason.startswith("call 1: 0 (1 call(s) valid); call 2: -1 (unknown tool 'rm')")


@turn_reward(aggregate="mean")
def found(turn: Turn, answer: str) -> float | None:
    """Progress of a search: 1 once the answer has come back from a call, else 0 (the final turn not judged)."""
    if turn.final:
        return None
    return float(any(c.result == answer for c in turn.calls))


@pytest.mark.parametrize(
    ("how", "gamma", "expected"),
    [("sum", 1.0, 3.0), ("mean", 1.0, 0.75), ("last", 1.0, 1.0), ("min", 1.0, 0.0),
     ("discounted", 0.5, 1 + 0.25 + 0.125), ("progress", 1.0, 1.0), ("progress", 0.5, 1 - 0.5 + 0.25)],
)  # fmt: skip
def test_every_aggregate_is_a_setting(how, gamma, expected):
    rollout = _rollout("7", "x", "7", "7")  # turn scores 1, 0, 1, 1 and the final turn not judged
    r = found.configure(aggregate=how, gamma=gamma)
    assert r.turn_scores(completions=[rollout], answer=["7"]) == [[1.0, 0.0, 1.0, 1.0, None]]
    assert r(completions=[rollout], answer=["7"]) == [pytest.approx(expected)]


def test_the_discounted_return_and_the_progress_deltas_by_hand():
    scores = [None, 1.0, 0.5]  # the discount counts every turn, judged or not
    assert aggregate_turns(scores, "discounted", 0.5) == pytest.approx(0.5 + 0.125)
    assert aggregate_turns(scores, "progress", 0.5) == pytest.approx(0.5 * 1.0 + 0.25 * -0.5)
    r = found.configure(aggregate="progress")
    assert r.turn_rewards(completions=[_rollout("7", "x", "7", "7")], answer=["7"]) == [[1.0, -1.0, 1.0, 0.0, None]]
    assert found.turn_rewards(completions=[_rollout("x")], answer=["7"]) == [[0.0, None]]


def test_settings_are_checked_before_anything_runs():
    with pytest.raises(RewardConfigError, match="aggregate must be one of sum, mean, last, min, discounted"):
        get_reward("tool_success_turns", aggregate="max")
    with pytest.raises(RewardConfigError, match="gamma must be a number in"):
        get_reward("tool_success_turns", aggregate="discounted", gamma=1.5)
    with pytest.raises(RewardConfigError, match="unit must be 'turn' or 'call'"):
        get_reward("tool_success_turns", unit="token")
    entry, _weights = rewardsmith.rewards_from_config([{"name": "tool_success_turns", "kwargs": {"aggregate": "mean"}}])
    assert entry[0].aggregate == "mean"


def test_per_turn_rewards_pickle_and_score_in_worker_processes():
    r = get_reward("tool_success_turns", timeout=30)
    assert pickle.loads(pickle.dumps(found)).turn_scores(completions=[_rollout("7")], answer=["7"]) == [[1.0, None]]
    try:
        results = r.explain(completions=[_rollout("7", FAILED), _rollout("7")])
    finally:
        r.close()
    assert [x.score for x in results] == [-1.0, 0.0]
    assert results[0].metrics["turn_scores"] == [0.0, -1.0, None]


def test_trl_logs_the_per_turn_figures_and_the_monitor_warns_on_unjudged_turns():
    logged: dict[str, float] = {}
    r = get_reward("tool_success_turns")
    r(completions=[_rollout("7", FAILED), "no calls"], log_metric=logged.__setitem__)
    assert logged["turns/tool_success_turns/turns_per_rollout"] == 2.0  # 3 turns and 1 turn
    assert logged["turns/tool_success_turns/judged_share"] == pytest.approx(2 / 4)
    assert logged["turns/tool_success_turns/turn_mean"] == -0.5
    monitor = HealthMonitor(thresholds={"window": 2})
    kinds = []
    for step in range(1, 4):
        logs = {"reward": 0.0, "turns/tool_success_turns/judged_share": 0.0}
        metrics, warnings = monitor.observe(logs, step)
        kinds += [w.kind for w in warnings]
    assert metrics["health/turn_unjudged_share/tool_success_turns"] == 1.0
    assert kinds == ["unjudged_turns"] and "tool_success_turns" in monitor.warnings[0].message
    healthy = HealthMonitor(thresholds={"window": 2})
    warned = [w.kind for step in range(1, 4) for w in healthy.observe({"reward": 0.0, **logged}, step)[1]]
    assert "unjudged_turns" not in warned  # half the turns judged


def test_the_evaluation_report_shows_every_turns_score_and_reason(tmp_path):
    rows = [{"prompt": f"code for k{i}?", "messages": _rollout("7", FAILED if i else "8")} for i in range(2)]
    report = evaluate(rows, ["tool_success_turns"], tmp_path, completions_column="messages", progress=False)
    page = html.unescape(report.report_path.read_text())
    assert "tool_success_turns: -1 (per turn: 0, -1, None)" in page
    assert "turn 2: -1 (lookup failed: {'error': 'no such key'})" in page and "turn 3: not judged" in page


def test_verl_token_level_rewards_sit_at_each_turns_end():
    (scores,) = get_reward("tool_success_turns").turn_rewards(completions=[_rollout(FAILED, "7")])
    assert at_turn_ends(scores, [3, 9, 12], 14) == [0.0] * 3 + [-1.0] + [0.0] * 10
    with pytest.raises(ValueError, match="one turn end per score"):
        at_turn_ends(scores, [3], 14)


def _check(spec):
    return rewardsmith.check(spec, _rows(), families=["trajectory"], timeout=None, progress=False)


def test_the_built_in_per_turn_forms_pass_the_audit_with_their_per_turn_return():
    report = _check("tool_success_turns")
    assert report.passed
    assert any(n.startswith("the per-turn return of tool_success_turns") and n.endswith("holds") for n in report.notes)
    assert _check({"name": "tool_schema_turns", "kwargs": {"tools": _rows()[0]["tools"]}}).passed


class PaysPerGoodTurn(TurnReward):
    """1 per turn whose calls succeed: its ``min`` resists padding, its per-turn return does not."""

    def score_turn(self, turn: Turn) -> float | None:
        return float(all(c.ok for c in turn.calls)) if turn.calls else None


def test_the_audit_flags_a_per_turn_return_that_pays_for_padding_when_the_one_number_does_not():
    report = _check(PaysPerGoodTurn(aggregate="min"))
    names = sorted(f.name for f in report.findings)
    assert names and all(n.startswith("turn_return/trajectory/") for n in names), names
    assert {"turn_return/trajectory/junk_calls", "turn_return/trajectory/padded_calls"} <= set(names)
    assert any("per-turn return of pays_per_good_turn" in note for note in report.notes)


@pytest.mark.slow
@pytest.mark.xdist_group("training")
def test_a_real_trl_run_logs_the_per_turn_figures_and_warns_when_no_turn_is_judged(tmp_path, monkeypatch):
    from trl_helpers import tiny_train_config

    from rewardsmith.train import run

    monkeypatch.setenv("REWARDSMITH_CACHE", str(Path(__file__).resolve().parents[1] / ".cache"))
    config = tiny_train_config(tmp_path / "run", ["tool_success_turns", "think_format"], max_steps=2)
    config["health"] = {"window": 2}
    result = run(config)  # the tiny model writes no tool calls: no turn is judged
    logged = [e for e in result.trainer.state.log_history if "turns/tool_success_turns/judged_share" in e]
    assert logged and all(e["turns/tool_success_turns/judged_share"] == 0.0 for e in logged)
    assert all(e["turns/tool_success_turns/turns_per_rollout"] == 1.0 for e in logged)  # one assistant turn each
    warnings = {w["kind"]: w for w in result.summary.health["warnings"]}
    assert "tool_success_turns" in warnings["unjudged_turns"]["message"]
