"""rewardsmith rewards as verifiers task rewards (scored by verifiers itself) and as a TRL environment's reward."""

from __future__ import annotations

import asyncio
import importlib.util
import json

import pytest

from rewardsmith import reward
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.extras import MissingExtraError
from rewardsmith.integrations.agents import UNSCORED_KEY, reward_method, verifiers_rewards, verifiers_task

needs_verifiers = pytest.mark.skipif(
    importlib.util.find_spec("verifiers") is None, reason="verifiers is not installed (the verifiers extra)"
)
QUESTION = "What is 9*2? Use the calculator."


@pytest.fixture
def vf():
    return pytest.importorskip("verifiers.v1")


def scored(vf, task_cls, data, messages):
    """``messages`` as a verifiers trace (the assistant turns sampled), scored by verifiers' ``Task.score``."""
    nodes = [
        vf.MessageNode(parent=i - 1 if i else None, message=m, sampled=m.role == "assistant")
        for i, m in enumerate(messages)
    ]
    trace = vf.Trace(
        task=vf.TraceTask(type=task_cls.__name__, data=data), agent=vf.AgentInfo(config=vf.AgentConfig()), nodes=nodes
    )
    asyncio.run(task_cls(data).score(trace))
    return trace


def tool_rollout(vf, final: str) -> list:
    call = vf.ToolCall(id="call_1", name="calc", arguments=json.dumps({"expression": "9*2"}))
    return [
        vf.UserMessage(content=QUESTION),
        vf.AssistantMessage(content=None, tool_calls=[call]),
        vf.ToolMessage(tool_call_id="call_1", name="calc", content="#### 18"),
        vf.AssistantMessage(content=final),
    ]


@pytest.fixture
def math_task(vf):
    class MathData(vf.TaskData):
        answer: str

    task_cls = verifiers_task(["gsm8k_accuracy", "tool_success"], weights=[1.0, 0.5], base=vf.Task[MathData])
    return task_cls, MathData(prompt=QUESTION, answer="18")


@needs_verifiers
def test_verifiers_scores_a_tool_rollout_by_what_the_final_message_says(vf, math_task):
    task_cls, data = math_task
    assert task_cls.data_type() is type(data)
    assert [fn.__name__ for fn in task_cls(data).hooks("reward")] == ["gsm8k_accuracy", "tool_success"]

    copied = scored(vf, task_cls, data, tool_rollout(vf, "The calculator answered."))
    stated = scored(vf, task_cls, data, tool_rollout(vf, "The calculator says 18.\n#### 18"))
    # the answer only in the tool's result is not the model's answer; the call itself succeeded either way
    assert copied.rewards == {
        "gsm8k_accuracy": vf.Reward(score=0.0, weight=1.0),
        "tool_success": vf.Reward(score=1.0, weight=0.5),
    }
    assert copied.reward == 0.5
    assert stated.rewards == {
        "gsm8k_accuracy": vf.Reward(score=1.0, weight=1.0),
        "tool_success": vf.Reward(score=1.0, weight=0.5),
    }
    assert stated.reward == 1.5
    assert UNSCORED_KEY not in stated.info


@needs_verifiers
def test_a_stored_trace_rescores_the_same(vf, math_task):
    """As verifiers' replay does: a trace read back from its JSON line, the row rebuilt, the scores cleared."""
    task_cls, data = math_task
    first = scored(vf, task_cls, data, tool_rollout(vf, "#### 18"))
    stored = vf.Trace[vf.WireTaskData].model_validate_json(first.model_dump_json())
    stored.rewards = {}
    asyncio.run(task_cls(type(data).model_validate(stored.task.data.model_dump())).score(stored))
    assert stored.rewards == first.rewards and stored.reward == 1.5


@needs_verifiers
def test_verifiers_scores_a_plain_text_completion(vf, math_task):
    task_cls, data = math_task
    right = scored(vf, task_cls, data, [vf.UserMessage(content=QUESTION), vf.AssistantMessage(content="#### 18")])
    wrong = scored(vf, task_cls, data, [vf.UserMessage(content=QUESTION), vf.AssistantMessage(content="#### 17")])
    assert {k: r.score for k, r in right.rewards.items()} == {"gsm8k_accuracy": 1.0, "tool_success": 0.0}
    assert (right.reward, wrong.reward) == (1.0, 0.0)
    # no tool call: tool_success cannot score it; verifiers needs a number (0.0), the reason is kept
    assert right.info[UNSCORED_KEY] == {"tool_success": "no tool calls"}


@needs_verifiers
def test_a_task_reward_plugged_by_verifiers_config(vf, tmp_path):
    module = tmp_path / "plugged_rewards.py"
    module.write_text(
        "from rewardsmith.integrations.agents import verifiers_rewards\n"
        "(accuracy,) = verifiers_rewards(['gsm8k_accuracy'], weights=[2.0])\n"
    )
    config = vf.TaskConfig(rewards={"accuracy": vf.RewardFunctionConfig(fn=f"{module}:accuracy")})

    class PluggedTask(vf.Task):
        def __init__(self, data):
            super().__init__(data, config)

    data = vf.WireTaskData(prompt=QUESTION, answer="18")  # the base task data keeps extra fields
    trace = scored(vf, PluggedTask, data, [vf.UserMessage(content=QUESTION), vf.AssistantMessage(content="#### 18")])
    assert trace.rewards == {"accuracy": vf.Reward(score=1.0, weight=2.0)} and trace.reward == 2.0


@needs_verifiers
def test_an_async_reward_is_awaited_by_verifiers(vf):
    @reward
    async def says_done(completion: str) -> float:
        await asyncio.sleep(0)
        return float("done" in completion)

    task_cls = verifiers_task([says_done])
    data = vf.TaskData(prompt="Finish.")
    trace = scored(vf, task_cls, data, [vf.UserMessage(content="Finish."), vf.AssistantMessage(content="done")])
    assert trace.rewards == {"says_done": vf.Reward(score=1.0)}


def test_verifiers_reward_settings_are_checked_first():
    with pytest.raises(RewardConfigError, match="2 weights for 1 rewards"):
        verifiers_rewards(["gsm8k_accuracy"], weights=[1.0, 2.0])
    with pytest.raises(RewardConfigError, match="'gsm8k_accuracy' more than once"):
        verifiers_rewards(["gsm8k_accuracy", "gsm8k_accuracy"])


@pytest.mark.skipif(importlib.util.find_spec("verifiers") is not None, reason="verifiers is installed")
def test_without_verifiers_the_error_says_what_to_install():
    with pytest.raises(MissingExtraError, match=r"rewardsmith\[verifiers\]"):
        verifiers_task(["gsm8k_accuracy"])


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
