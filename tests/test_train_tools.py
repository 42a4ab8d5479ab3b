"""``tools:`` and ``environment:`` in ``rewardsmith train``: every mistake found by the dry run, before loading."""

from __future__ import annotations

import pytest

from rewardsmith.core.problems import ConfigError
from rewardsmith.train.plan import plan_training
from rewardsmith.train.tools import trainer_kwargs


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first
        b: the second
    """
    return a + b


def undocumented(a: int) -> int:
    return a


class Store:
    def reset(self, **row) -> None:
        self.data = {}

    def get(self, key: str) -> str:
        """Read a value.

        Args:
            key: the key
        """
        return self.data.get(key, "")


class NoReset:
    def get(self, key: str) -> str:
        """Read a value.

        Args:
            key: the key
        """
        return key


ROWS = [{"prompt": [{"role": "user", "content": "2+2?"}], "answer": "4", "environment": "store"}] * 4


def config(**extra):
    from trl.chat_template_utils import qwen2_5_chat_template

    base = {
        "model": {"name_or_path": "builtin:tiny", "chat_template": qwen2_5_chat_template},
        "dataset": {"source": ROWS},
        "rewards": ["tool_success"],
        "trainer": {"max_steps": 1, "learning_rate": 1e-3, "per_device_train_batch_size": 2, "num_generations": 2},
    }
    base.update(extra)
    return base


def problems(cfg) -> str:
    with pytest.raises(ConfigError) as info:
        plan_training(cfg)
    return str(info.value)


def test_a_good_setup_is_planned_and_passed_to_the_trainer(tmp_path):
    plan = plan_training(config(tools=[f"{__name__}:add"], environment={"store": f"{__name__}:Store"}))
    kwargs = trainer_kwargs(plan.tool_setup)
    assert kwargs["tools"] == [add] and kwargs["environment_factory"] == {"store": Store}
    rows = dict(plan.describe())
    assert rows["tools"] == "add" and rows["environment store"] == "tools get"


def test_every_tool_mistake_is_reported_at_once():
    text = problems(
        config(
            tools=[f"{__name__}:undocumented", f"{__name__}:missing"],
            environment={"store": f"{__name__}:NoReset", "other": f"{__name__}:Store"},
        )
    )
    assert "undocumented" in text and "docstring" in text
    assert "missing" in text
    assert "no reset()" in text


def test_named_environments_need_the_column_and_known_names():
    rows = [{"prompt": [{"role": "user", "content": "q"}], "environment": "elsewhere"}]
    text = problems(config(dataset={"source": rows}, environment={"store": f"{__name__}:Store"}))
    assert "'elsewhere'" in text
    no_column = [{"prompt": [{"role": "user", "content": "q"}]}]
    assert "'environment' column" in problems(
        config(dataset={"source": no_column}, environment={"store": f"{__name__}:Store"})
    )


def test_a_template_that_cannot_call_tools_is_caught():
    cfg = config(tools=[f"{__name__}:add"])
    cfg["model"] = {"name_or_path": "builtin:tiny"}  # the tiny model's plain ChatML template
    assert "cannot render a tool-calling conversation" in problems(cfg)


def test_a_reward_that_reads_the_environment_needs_one():
    assert "has no environment" in problems(config(rewards=["environment_reward"]))


def test_plain_text_prompts_are_refused_with_tools():
    cfg = config(tools=[f"{__name__}:add"])
    cfg["dataset"] = {"source": [{"prompt": "2+2?"}] * 2, "conversational": False}
    assert "conversational" in problems(cfg)
