"""SkyRL-Gym environments from rewardsmith rewards, made and stepped as SkyRL's generator makes and steps them.

SkyRL's ``SkyRLGymGenerator`` sets ``extras["max_turns"]``, calls
``skyrl_gym.make(env_class, env_config=<DictConfig>, extras=extras)``, then ``init(prompt)`` and
``step(response)`` until ``done``, keeping each step's reward; :func:`run_episode` does the same with
scripted responses, with the real skyrl-gym package.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
from pathlib import Path

import pytest

skyrl_gym = pytest.importorskip(
    "skyrl_gym", reason="skyrl-gym is not installed: pip install 'rewardsmith[skyrl]' (make install installs it)"
)

from omegaconf import DictConfig  # noqa: E402  (skyrl-gym's dependency; SkyRL passes env_config as one)
from skyrl_gym.envs.base_text_env import BaseTextEnv  # noqa: E402
from skyrl_gym.metrics import aggregate_for_environment  # noqa: E402

from rewardsmith import MissingColumnError, RewardConfigError, RewardsmithError, Turn, get_reward, reward, turn_reward  # noqa: E402
from rewardsmith.integrations.skyrl import columns_from_extras, env_class, register_env  # noqa: E402

PROMPT = [{"role": "user", "content": "What is the code stored under k1? Answer with '#### CODE'."}]
#: A row as SkyRL's dataset gives it to the generator: every field but prompt and env_class.
ROW = {"data_source": "codes", "reward_spec": {"method": "rule", "ground_truth": "417"}, "extra_info": {"key": "k1"}}
_ids = itertools.count()


class Store:
    """A TRL-style environment: ``reset(**row)``, and its public method ``lookup`` is the tool."""

    def reset(self, **row) -> str:
        self.row = row
        self.codes = {"k0": "12", "k1": "417"}
        return "Use the lookup tool."

    def lookup(self, key: str) -> str:
        """Look up the code stored under a key."""
        return self.codes[key]


def call(key: str) -> str:
    return f'<tool_call>{{"name": "lookup", "arguments": {{"key": "{key}"}}}}</tool_call>'


ACTIONS = [f"Let me look. {call('k0')}", f"Not that one. {call('k1')}", "#### 417"]


@turn_reward(aggregate="progress")
def closer(turn: Turn, answer: str) -> float | None:
    """Progress after each turn: 0.5 once the right code was looked up, 1 once it is answered."""
    if turn.final:
        return 1.0 if answer in turn.content else None
    return 0.5 if any(c.result == answer for c in turn.calls) else 0.0


@pytest.fixture
def env_id():
    made = f"rewardsmith_test_{next(_ids)}"
    yield made
    if made in skyrl_gym.registry:
        skyrl_gym.envs.registration.deregister(made)


def run_episode(env_class_id: str, actions: list[str], *, max_turns: int = 5, row: dict | None = None, config=None):
    """What SkyRL's generator does with one row, the model's responses scripted: the env, the steps, the transcript."""
    extras = copy.deepcopy(row if row is not None else ROW)
    extras["max_turns"] = max_turns
    env = skyrl_gym.make(env_class_id, env_config=DictConfig(config or {}), extras=extras)
    chat, _ = env.init(copy.deepcopy(PROMPT))
    steps, transcript = [], []
    for action in actions:
        out = env.step(action)
        steps.append(out)
        transcript += [{"role": "assistant", "content": action}, *out["observations"]]
        if out["done"]:
            break
    return env, chat, steps, transcript


def test_a_per_turn_reward_gives_each_step_its_turn_reward(env_id):
    register_env(closer, id=env_id, environment=Store)
    env, chat, steps, transcript = run_episode(env_id, ACTIONS)
    assert isinstance(env, BaseTextEnv) and type(env).__name__ == "RewardsmithTextEnv"
    assert chat[-1]["content"].endswith("Use the lookup tool.")  # what reset(**row) said, after the prompt
    assert [s["done"] for s in steps] == [False, False, True]
    assert [o["content"] for o in steps[0]["observations"] + steps[1]["observations"]] == ["12", "417"]
    assert steps[2]["observations"] == []
    # the step rewards are the reward's per-turn vector of the whole rollout: progress 0, 0.5, 1 paid as deltas
    (vector,) = closer.turn_rewards([PROMPT], [transcript], answer=["417"])
    assert vector == [0.0, 0.5, 0.5]
    assert [s["reward"] for s in steps] == vector
    assert env.get_metrics() == {"closer": 1.0, "turns": 3}
    assert steps[1]["metadata"]["rewards"] == {"closer": 0.5}


def test_an_outcome_reward_pays_on_the_final_step_and_weights_apply(env_id):
    rewards = [get_reward("gsm8k_accuracy"), get_reward("tool_success_turns")]
    register_env(rewards, id=env_id, weights=[2.0, 0.5], environment=Store)
    failing = [call("k9"), call("k1"), "#### 417"]  # k9 is no key: the tool raises, the turn is penalised
    env, _, steps, transcript = run_episode(env_id, failing)
    assert "KeyError" in steps[0]["observations"][0]["content"]
    assert "KeyError" in steps[0]["metadata"]["reasons"]["tool_success_turns"]  # the reason of this turn only
    assert (
        steps[2]["metadata"]["reasons"]["gsm8k_accuracy"]
        == get_reward("gsm8k_accuracy").explain(completions=[transcript], answer=["417"])[0].reason
    )
    turns = rewards[1].turn_rewards([PROMPT], [transcript])[0]
    assert turns == [-1.0, 0.0, None]
    outcome = rewards[0](completions=[transcript], answer=["417"])[0]
    assert outcome == 1.0
    assert [s["reward"] for s in steps] == [0.5 * -1.0, 0.0, 2.0 * outcome]
    assert [s["metadata"]["rewards"] for s in steps] == [
        {"tool_success_turns": -1.0},
        {"tool_success_turns": 0.0},
        {"gsm8k_accuracy": 1.0, "tool_success_turns": None},
    ]
    assert env.get_metrics() == {"gsm8k_accuracy": 1.0, "tool_success_turns": -1.0, "turns": 3}
    # SkyRL averages the episodes' metrics with the registered entry point's aggregate_metrics
    other = {"gsm8k_accuracy": 0.0, "tool_success_turns": 0.0, "turns": 1}
    assert aggregate_for_environment(env_id, [env.get_metrics(), other]) == {
        "gsm8k_accuracy": 0.5,
        "tool_success_turns": -0.5,
        "turns": 2.0,
    }
    # a wrong final answer: the outcome pays 0 on the last step, nothing before
    _, _, steps, _ = run_episode(env_id, [call("k1"), "#### 12"])
    assert [s["reward"] for s in steps] == [0.0, 0.0]


def test_max_turns_ends_the_episode_and_its_last_calls_never_run(env_id):
    register_env(["gsm8k_accuracy", "tool_success_turns"], id=env_id, environment=Store)
    env, _, steps, transcript = run_episode(env_id, [call("k0")] * 5, max_turns=2)
    assert [s["done"] for s in steps] == [False, True]
    assert steps[1]["observations"] == []  # the last turn's call is not run
    # rewardsmith reads that call as one that never ran, as on any rollout that ends on a call
    assert get_reward("tool_success_turns").turn_rewards(completions=[transcript])[0] == [0.0, -1.0]
    assert [s["reward"] for s in steps] == [0.0, -1.0 + 0.0]
    assert env.get_metrics()["turns"] == 2
    with pytest.raises(RewardsmithError, match="episode is over"):
        env.step("#### 417")
    # the smaller of the settings' max_turns and SkyRL's wins
    register_env("tool_success_turns", id=env_id + "_short", environment=Store, max_turns=1)
    _, _, steps, _ = run_episode(env_id + "_short", [call("k0")] * 5, max_turns=4)
    assert len(steps) == 1 and steps[0]["done"]
    skyrl_gym.envs.registration.deregister(env_id + "_short")


def test_with_unit_call_a_step_is_paid_the_sum_over_its_calls(env_id):
    per_call = get_reward("tool_success_turns", unit="call", aggregate="sum")
    register_env(per_call, id=env_id, environment=Store)
    _, _, steps, transcript = run_episode(env_id, [call("k0") + call("k9"), call("k1"), "#### 417"])
    assert per_call.turn_rewards(completions=[transcript])[0] == [0.0, -1.0, 0.0]
    assert [s["reward"] for s in steps] == [-1.0, 0.0, 0.0]  # the final answer makes no call: not judged, 0
    assert steps[2]["metadata"]["rewards"] == {"tool_success_turns": None}


def test_calls_in_the_reasoning_or_to_unknown_tools_are_not_run(env_id):
    register_env(["tool_success_turns", "gsm8k_accuracy"], id=env_id, environment=Store)
    thinking = f"<think>maybe {call('k1')}</think>#### 417"
    _, _, steps, _ = run_episode(env_id, [thinking])
    assert len(steps) == 1 and steps[0]["done"] and steps[0]["reward"] == 1.0  # the final answer, not a call
    unknown = '<tool_call>{"name": "reset", "arguments": {}}</tool_call>'
    _, _, steps, _ = run_episode(env_id, [unknown, "#### 417"])
    assert "unknown tool 'reset'" in steps[0]["observations"][0]["content"]
    assert steps[0]["reward"] == -1.0


def test_the_class_by_its_path_with_settings_in_skyrls_env_config(env_id, monkeypatch):
    skyrl_gym.register(id=env_id, entry_point="rewardsmith.integrations.skyrl:RewardsmithTextEnv")
    config = {"rewards": "gsm8k_accuracy", "environment": "tests.test_skyrl:Store", "ground_truth_column": "code"}
    row = {"reward_spec": {"ground_truth": "417"}}
    with pytest.raises(MissingColumnError, match=r"'answer'.*Columns present: code"):
        run_episode(env_id, ["#### 417"], row=row, config=config)  # gsm8k_accuracy reads `answer`, not `code`
    config["ground_truth_column"] = "answer"
    env, _, steps, _ = run_episode(env_id, [call("k1"), "#### 417"], row=row, config=config)
    assert [s["reward"] for s in steps] == [0.0, 1.0]
    assert aggregate_for_environment(env_id, [env.get_metrics()]) == {"gsm8k_accuracy": 1.0, "turns": 2.0}
    # no rewards in the config: REWARDSMITH_REWARDS names them
    monkeypatch.setenv("REWARDSMITH_REWARDS", "gsm8k_accuracy")
    _, _, steps, _ = run_episode(env_id, ["#### 417"])
    assert steps[0]["reward"] == 1.0
    monkeypatch.delenv("REWARDSMITH_REWARDS")
    with pytest.raises(RewardConfigError, match="REWARDSMITH_REWARDS"):
        run_episode(env_id, ["#### 417"])
    with pytest.raises(RewardConfigError, match="unknown SkyRL environment setting"):
        run_episode(env_id, ["#### 417"], config={"rewards": "gsm8k_accuracy", "reward": "x"})


def test_bad_settings_are_config_errors():
    cls = env_class()
    with pytest.raises(RewardConfigError, match="max_turns"):
        cls(env_config={"rewards": "gsm8k_accuracy", "max_turns": 0})
    with pytest.raises(RewardConfigError, match="extras' max_turns"):
        cls(env_config={"rewards": "gsm8k_accuracy"}, extras={"max_turns": "3"})
    with pytest.raises(RewardConfigError, match="weight"):
        cls(env_config={"rewards": "gsm8k_accuracy", "weights": [1.0, 2.0]})
    with pytest.raises(RewardConfigError, match="environment"):
        cls(env_config={"rewards": "gsm8k_accuracy", "environment": 3})
    env = cls(env_config={"rewards": "gsm8k_accuracy"})
    env.init(PROMPT)
    with pytest.raises(RewardConfigError, match="model's text"):
        env.step(["not", "text"])


def test_columns_come_from_the_row_as_skyrl_passes_it():
    extras = {**ROW, "answer": "own", "max_turns": 3, "extra_info": {"key": "k1", "data_source": "shadowed"}}
    assert columns_from_extras(extras) == {"data_source": "codes", "answer": "own", "key": "k1"}
    assert columns_from_extras(DictConfig(ROW), "code")["code"] == "417"
    with pytest.raises(RewardConfigError, match="extras"):
        columns_from_extras(["not", "a", "row"])


def test_settings_in_skyrls_env_config_win_over_register_env(env_id):
    register_env("tool_success_turns", id=env_id, environment=Store, max_turns=3)
    _, _, steps, _ = run_episode(env_id, ["#### 417"], config={"rewards": "gsm8k_accuracy,tool_success"})
    assert steps[0]["reward"] == 1.0 and steps[0]["metadata"]["rewards"] == {
        "gsm8k_accuracy": 1.0,
        "tool_success": None,
    }
    _, _, steps, _ = run_episode(env_id, [call("k0")] * 5)  # the registered settings where the config has none
    assert len(steps) == 3 and steps[0]["metadata"]["rewards"] == {"tool_success_turns": 0.0}


def test_the_docs_example_runs_as_its_comments_say(capsys):
    text = (Path(__file__).resolve().parents[1] / "docs" / "agents.md").read_text(encoding="utf-8")
    start = text.index("```python", text.index("### SkyRL-Gym")) + len("```python\n")
    code = text[start : text.index("```", start)]
    lines = code.splitlines()
    # what the loop prints, as the comment lines after it say; then what the last line prints, after its "# "
    expected = [line[2:] for line in lines[lines.index(next(x for x in lines if x.startswith("for "))) :]
                if line.startswith("# ")] + [lines[-1].rsplit("# ", 1)[1]]  # fmt: skip
    try:
        exec(compile(code, "docs/agents.md", "exec"), {"__name__": "docs_example"})
    finally:
        if "store" in skyrl_gym.registry:
            skyrl_gym.envs.registration.deregister("store")
    assert len(expected) == 4 and capsys.readouterr().out.splitlines() == expected


def test_an_async_reward_scores_when_skyrl_steps_on_its_event_loop(env_id):
    @reward
    async def answered(completion: str, answer: str) -> float:
        await asyncio.sleep(0)  # a judge or a remote service, awaited
        return float(completion.strip().endswith(answer))

    register_env(answered, id=env_id, environment=Store)

    async def agent_loop():  # SkyRL's generator calls env.step on its loop when max_env_workers is 0
        return run_episode(env_id, [call("k1"), "#### 417"])

    _, _, steps, _ = asyncio.run(agent_loop())
    assert [s["reward"] for s in steps] == [0.0, 1.0]
