"""One resolver: get_reward / get_rewards take names, paths, callables, rewards and config entries alike;
reward objects written for other libraries keep their names; async rewards have a synchronous call."""

from __future__ import annotations

import asyncio
import pickle
import warnings

import pytest

from rewardsmith import (
    Reward,
    RewardConfigError,
    UnknownRewardError,
    get_reward,
    get_rewards,
    reward,
    to_trl,
)
from rewardsmith.compose import Gated


def test_a_config_entry_is_a_reward():
    made = get_reward({"name": "gsm8k_accuracy", "kwargs": {"answer_column": "gold"}, "as": "accuracy"})
    assert made.name == "accuracy" and made.required_columns == ["gold"]
    assert made(completions=["#### 4", "#### 5"], gold=["4", "4"]) == [1.0, 0.0]


def test_a_composite_config_entry_is_a_reward():
    made = get_reward({"gate": {"condition": "think_format", "reward": "gsm8k_accuracy"}})
    assert isinstance(made, Gated) and made.name == "gsm8k_accuracy_if_think_format"
    assert made(completions=["<think>2+2</think><answer>4</answer>", "#### 4"], answer=["4", "4"]) == [1.0, 0.0]


def test_entries_names_and_callables_mix_in_one_list():
    def short(completions, **kwargs):
        return [float(len(c) < 5) for c in completions]

    made = get_rewards(["think_format", {"name": "tag_count"}, short, get_reward("gsm8k_accuracy")])
    assert [r.name for r in made] == ["think_format", "tag_count", "short", "gsm8k_accuracy"]
    assert [r.name for r in to_trl(["think_format", {"name": "tag_count", "as": "tags"}])] == ["think_format", "tags"]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"name": "think_format", "weight": 0.5}, "weights belong to a list"),
        ({"nmae": "think_format"}, "Did you mean: name"),
        ({"name": "think_fromat"}, "Did you mean: think_format"),
        ({"name": "think_format", "kwargs": {"stritc": True}}, "no setting 'stritc'"),
        ({"gate": {"condition": "think_format"}}, "gate needs 'reward'"),
        ({}, "needs one of the keys"),
    ],
)
def test_bad_config_entries_say_what_is_wrong(entry, message):
    with pytest.raises(RewardConfigError, match=message):
        get_reward(entry)


def test_unknown_names_are_unknown_reward_errors():
    with pytest.raises(UnknownRewardError, match="rewardsmith rewards list"):
        get_reward("no_such_reward")


class PolitenessReward:
    """A reward object in the style of other libraries' base classes: a `name` attribute and a batch call."""

    name = "politeness"

    def __call__(self, prompts, completions, **kwargs):
        return [float("please" in c) for c in completions]


class SeedStyleReward:
    """The base-class pattern of other libraries: the name set in __init__, the call taking completions."""

    def __init__(self, name: str = "seed_style", weight: float = 1.0) -> None:
        self.name = name
        self.weight = weight

    def __call__(self, completions, **kwargs):
        return [float(len(c) > 2) for c in completions]


def test_a_reward_class_of_another_library_is_instantiated_and_keeps_its_name():
    assert get_reward(SeedStyleReward).name == "seed_style"
    assert get_reward(SeedStyleReward(name="longish")).name == "longish"
    assert get_reward(SeedStyleReward)(completions=["abc", "a"]) == [1.0, 0.0]


def test_a_callable_object_is_logged_under_its_name_attribute():
    made = get_reward(PolitenessReward())
    assert made.name == "politeness" and made.__name__ == "politeness"
    assert made(prompts=["p", "p"], completions=["please", "no"]) == [1.0, 0.0]
    assert to_trl([PolitenessReward()])[0].__name__ == "politeness"


@reward
async def slow_echo(completion: str) -> float:
    await asyncio.sleep(0.01)
    return float(len(completion))


def test_async_rewards_have_a_synchronous_call_for_scripts():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "coroutine was never awaited"
        assert slow_echo.scores(completions=["ab", "abc"]) == [2.0, 3.0]
    assert [r.score for r in slow_echo.explain(completions=["ab"])] == [2.0]
    assert asyncio.run(slow_echo(completions=["ab"])) == [2.0]  # TRL's way: awaited


def test_the_synchronous_call_works_inside_a_running_event_loop():
    async def notebook_cell() -> list[float | None]:  # a notebook runs cells inside an event loop
        return slow_echo.scores(completions=["abcd"])

    assert asyncio.run(notebook_cell()) == [4.0]


def test_sync_rewards_have_the_same_synchronous_call():
    fmt = get_reward("think_format")
    completions = ["<think>a</think><answer>b</answer>", "b"]
    assert fmt.scores(completions=completions) == fmt(completions=completions) == [1.0, 0.0]


def test_configured_entries_pickle():
    made = get_reward({"name": "gsm8k_accuracy", "kwargs": {"answer_column": "gold"}, "as": "accuracy"})
    copy = pickle.loads(pickle.dumps(made))
    assert isinstance(copy, Reward) and copy.name == "accuracy" and copy(completions=["#### 2"], gold=["2"]) == [1.0]
