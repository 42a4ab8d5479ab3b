"""``rewardsmith check`` on rewards that read rollouts: naive tool rewards are flagged, the built-ins pass."""

from __future__ import annotations

import pytest

import rewardsmith
from rewardsmith import reward
from rewardsmith.check.probes import FAMILIES
from rewardsmith.check.rows import Format, RowContext
from rewardsmith.check.trajectory_probes import trajectory_probes
from rewardsmith.core.trajectory import trajectory

ADD = {
    "name": "add",
    "description": "Add two numbers.",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}


def _rows() -> list[dict]:
    return [
        {
            "prompt": f"What is {a} + {b}? Use the add tool.",
            "answer": str(a + b),
            "tools": [ADD],
            "tool_calls": [{"name": "add", "arguments": {"a": a, "b": b}}],
            "correct": True,
        }
        for a, b in [(3, 4), (10, 5), (2, 9), (6, 6)]
    ]


def _check(reward_spec):
    return rewardsmith.check(reward_spec, _rows(), families=["trajectory"], timeout=None, progress=False)


@reward
def pays_for_any_call(completion: str, trajectory) -> float:
    """Pays for any call, even one in the reasoning or to a tool that does not exist."""
    return float(bool(trajectory.calls) or "<tool_call>" in completion)


@reward
def answer_anywhere(trajectory, answer: str) -> float:
    """Finds the answer anywhere in the rollout: messages, tool results, tool arguments."""
    text = " ".join([m.content for m in trajectory.messages] + [str(c.arguments) for c in trajectory.calls])
    return float(answer in text)


@reward
def pays_per_call(tool_calls: list) -> float:
    """A quarter per successful call, so the same call made again pays more."""
    return min(1.0, 0.25 * sum(1 for c in tool_calls if c.ok))


def _flagged(report) -> set[str]:
    return {f.name for f in report.findings}


def test_a_reward_paying_for_any_call_is_flagged():
    found = _flagged(_check(pays_for_any_call))
    assert {"trajectory/unknown_tool", "trajectory/reasoning_only"} <= found


def test_a_reward_reading_the_answer_anywhere_is_flagged():
    found = _flagged(_check(answer_anywhere))
    assert {"trajectory/answer_in_argument", "trajectory/answer_from_result"} <= found


def test_a_reward_paying_per_call_is_flagged_for_repeated_calls():
    assert "trajectory/repeated_calls" in _flagged(_check(pays_per_call))


@pytest.mark.parametrize(
    "spec",
    [
        "tool_success",
        "tool_schema",
        "tool_call_match",
        "tool_efficiency",
        "gsm8k_accuracy",
        {"name": "tool_schema", "kwargs": {"tools": [ADD]}},
    ],
)
def test_the_built_ins_pass(spec):
    report = _check(spec)
    assert report.passed, [f.message for f in report.findings]
    assert report.summary["probes"]["trajectory"]["probes"] > 0


def test_the_answer_judgement_applies_to_an_accuracy_reward_and_it_holds():
    report = _check("gsm8k_accuracy")
    variants = report.summary["probes"]["trajectory"]["variants"]
    assert variants["answer_in_argument"]["applies"] and variants["answer_from_result"]["applies"]
    assert not variants["unknown_tool"]["applies"]  # gsm8k_accuracy does not read the calls


def test_each_probe_is_the_rollout_it_says():
    ctx = RowContext(0, "What is 3 + 4?", {"tools": [ADD]}, answer="7")
    probes = {p.variant: trajectory(p.completion) for p in trajectory_probes(ctx, Format("tags", "think", "answer"))}
    assert [c.name for c in probes["unknown_tool"].calls] == ["no_such_tool"]
    assert probes["reasoning_only"].calls == () and "7" in probes["reasoning_only"].final_message
    assert not probes["call_with_answer"].calls[0].executed and "7" in probes["call_with_answer"].final_message
    assert not probes["call_after_answer"].calls[0].executed
    assert len(probes["repeated_calls"].calls) == 20
    assert probes["answer_in_argument"].calls[0].arguments == {"answer": "<answer>7</answer>"}
    assert "7" not in probes["answer_in_argument"].final_message
    assert probes["answer_from_result"].calls[0].result == "The answer is 7."
    assert probes["empty_final"].final_message == "" and probes["ends_on_result"].final_message == ""
    assert probes["unknown_tool"].calls[0].error is not None
    assert "trajectory" in FAMILIES
