"""rewardsmith rewards as verifiers rubric functions and as a TRL environment's get_reward()."""

from __future__ import annotations

import importlib.util

import pytest

from rewardsmith.integrations.agents import as_rubric, reward_method, rubric_functions

ROLLOUT = [
    {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "calc", "arguments": {"e": "9*2"}}}]},
    {"role": "tool", "content": "#### 18"},
    {"role": "assistant", "content": "I asked the tool."},
]


def test_rubric_functions_take_verifiers_arguments_by_name():
    accuracy, success = rubric_functions(["gsm8k_accuracy", "tool_success"])
    # the answer only in the tool's result is not the model's answer; the call itself succeeded
    assert accuracy(prompt=[{"role": "user", "content": "9*2?"}], completion=ROLLOUT, answer="18", state={}) == 0.0
    assert success(completion=ROLLOUT, answer="18", info={}, state={}) == 1.0
    assert success(completion="no calls") == 0.0  # unscored is 0.0 for a rubric
    assert accuracy(completion="#### 18", info={"answer": "18"}) == 1.0


@pytest.mark.skipif(importlib.util.find_spec("verifiers") is None, reason="verifiers is not installed (an extra)")
def test_as_rubric_builds_a_verifiers_rubric():
    rubric = as_rubric(["gsm8k_accuracy"], weights=[2.0])
    assert [f.__name__ for f in rubric.funcs] == ["gsm8k_accuracy"] and rubric.weights == [2.0]


def test_reward_method_scores_what_the_environment_recorded():
    class Store:
        def reset(self, **row):
            self.row, self.transcript = row, []

        def submit(self, answer: str) -> str:
            self.transcript.append({"role": "assistant", "content": f"#### {answer}"})
            return "ok"

        get_reward = reward_method(["gsm8k_accuracy"], weights=[0.5])

    right, wrong = Store(), Store()
    for env, said in ((right, "18"), (wrong, "17")):
        env.reset(answer="18")
        env.submit(said)
    assert (right.get_reward(), wrong.get_reward()) == (0.5, 0.0)
