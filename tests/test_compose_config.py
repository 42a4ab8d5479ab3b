"""rewards_from_config(): the YAML ``rewards:`` list and the seed-style shorthand, with clear errors."""

from __future__ import annotations

import pytest
import yaml

from rewardsmith import RewardConfigError, UnknownRewardError, reward
from rewardsmith.compose import Combined, ForTask, Gated, Routed, rewards_from_config

MIXED = {
    "prompts": ["q"] * 4,
    "completions": [
        "<think>9*2</think><answer>18</answer>",
        "#### 18",
        "<think>x</think>Sure. <answer>4</answer>",  # text between: lenient only
        "x",
    ],
    "task": ["math", "math", "chat", "poem"],
    "answer": ["18", "18", None, None],
}


@reward
def politeness(completion: str, strict: bool = False) -> float:
    words = ("please", "thanks") if strict else ("please", "thanks", "sure")
    return float(any(w in completion.lower() for w in words))


def test_the_issue_example_from_yaml():
    spec = yaml.safe_load(
        """
        rewards:
          - name: think_format
            weight: 0.2
          - gate: {condition: think_format, reward: gsm8k_accuracy}
            weight: 1.0
          - route:
              by: task
              math: gsm8k_accuracy
              chat: {name: think_format, kwargs: {strict: false}}
        """
    )
    funcs, weights = rewards_from_config(spec["rewards"])
    assert [f.name for f in funcs] == ["think_format", "gsm8k_accuracy_if_think_format", "gsm8k_accuracy|think_format"]
    assert weights == [0.2, 1.0, 1.0]
    assert isinstance(funcs[1], Gated) and isinstance(funcs[2], Routed)
    assert funcs[2].rewards["chat"].strict is False
    assert [f(**MIXED) for f in funcs] == [[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, None, None], [1.0, 1.0, 1.0, None]]


def test_seed_style_shorthand():
    funcs, weights = rewards_from_config("gsm8k_accuracy,format", "1.0,0.5")
    assert [f.name for f in funcs] == ["gsm8k_accuracy", "think_format"] and weights == [1.0, 0.5]
    funcs, weights = rewards_from_config("think_format, tag_count", [2, 0.5])
    assert weights == [2.0, 0.5]
    assert rewards_from_config(["think_format", "tag_count"])[1] == [1.0, 1.0]


def test_nested_forms_and_options():
    funcs, weights = rewards_from_config(
        [
            {
                "combine": [
                    {"name": "think_format", "weight": 0.5},
                    {"gate": {"condition": "think_format", "reward": "gsm8k_accuracy", "otherwise": -1.0}},
                ],
                "normalize": "rank",
                "missing": "zero",
                "as": "total",
                "weight": 2.0,
            },
            {"format_and_content": {"format": "tag_count", "content": "gsm8k_accuracy", "gated": True}},
            {"route": {"math": {"gate": {"condition": "think_format", "reward": "gsm8k_accuracy"}}}, "split": True},
        ]
    )
    total, fc, math_only = funcs
    assert weights == [2.0, 1.0, 1.0]
    assert isinstance(total, Combined) and total.name == "total" and total.weights == [0.5, 1.0]
    assert total.normalize == "rank" and total.missing == "zero" and total.rewards[1].otherwise == -1.0
    assert fc.name == "tag_count+gsm8k_accuracy" and fc.rewards[1].threshold == 1.0
    assert isinstance(math_only, ForTask) and math_only.name == "gsm8k_accuracy_if_think_format"
    assert math_only(**MIXED) == [1.0, 0.0, None, None]


def test_kwargs_reach_the_reward_including_engine_settings():
    funcs, _ = rewards_from_config(
        [{"name": "test_compose_config:politeness", "kwargs": {"strict": True, "on_error": "zero"}, "as": "polite"}]
    )
    assert funcs[0].name == "polite" and funcs[0].on_error == "zero"
    assert funcs[0](completions=["Sure!", "thanks"]) == [0.0, 1.0]


@pytest.mark.parametrize(
    ("spec", "weights", "error", "message"),
    [
        (
            ["think_fromat"],
            None,
            UnknownRewardError,
            r"rewards\[0\]: unknown reward 'think_fromat'. Did you mean: think_format",
        ),
        (
            [{"gate": {"condition": "think_format", "reward": "gsm8k_acuracy"}}],
            None,
            UnknownRewardError,
            r"rewards\[0\].gate.reward: unknown reward 'gsm8k_acuracy'. Did you mean: gsm8k_accuracy",
        ),
        (
            "think_format,tag_count",
            "1.0",
            RewardConfigError,
            r"1 reward weights for 2 rewards \(think_format, tag_count\)",
        ),
        ("think_format", "one", RewardConfigError, r"reward_weights\[0\]: 'one' is not a number"),
        (
            [{"name": "think_format", "wieght": 2}],
            None,
            RewardConfigError,
            r"rewards\[0\]: unknown key 'wieght' in a 'name' entry. Did you mean: weight\? "
            r"Allowed: name, kwargs, weight, as",
        ),
        (
            [{"gate": {"condition": "think_format", "reward": "tag_count", "treshold": 0.5}}],
            None,
            RewardConfigError,
            r"rewards\[0\].gate: unknown key 'treshold' in gate. Did you mean: threshold\? "
            r"Allowed: condition, reward, threshold, otherwise, lazy",
        ),
        ([{"gate": {"condition": "think_format"}}], None, RewardConfigError, r"gate needs 'reward'"),
        (
            [{"nmae": "think_format"}],
            None,
            RewardConfigError,
            r"needs one of the keys name, gate, route.*Did you mean: name",
        ),
        ([{"name": "think_format", "gate": {}}], None, RewardConfigError, r"it has 'name' and 'gate'"),
        (
            [{"gate": {"condition": {"name": "think_format", "weight": 2}, "reward": "tag_count"}}],
            None,
            RewardConfigError,
            r"rewards\[0\].gate.condition: unknown key 'weight'.*weight goes in a list",
        ),
        (
            [{"name": "think_format", "weight": "high"}],
            None,
            RewardConfigError,
            r"rewards\[0\]: weight must be a finite number",
        ),
        ([{"name": "think_format", "weight": 1}], [1.0], RewardConfigError, r"either on the entries .* not both"),
        (
            ["think_format", "format"],
            None,
            RewardConfigError,
            r"two rewards would be logged as 'think_format'.*as: NAME",
        ),
        ([{"route": {"by": "task"}}], None, RewardConfigError, r"route needs at least one task"),
        (
            [{"route": {"x": "think_format"}, "split": True, "as": "r"}],
            None,
            RewardConfigError,
            r"remove `as` or `split`",
        ),
        (
            [{"combine": ["think_format", {"route": {"x": "tag_count"}, "split": True}]}],
            None,
            RewardConfigError,
            r"rewards\[0\].combine\[1\]: unknown key 'split'.*top-level list only",
        ),
        ([{"combine": ["think_format"], "normalize": "l2"}], None, RewardConfigError, r"normalize must be one of"),
        (
            [{"name": "think_format", "kwargs": {"stritc": True}}],
            None,
            RewardConfigError,
            r"has no setting 'stritc'. Did you mean: strict\? It accepts: strict",
        ),
        ([], None, RewardConfigError, r"no rewards given"),
        (42, None, RewardConfigError, r"list of entries or a comma-separated string"),
    ],
)
def test_config_errors_say_what_and_where(spec, weights, error, message):
    with pytest.raises(error, match=message):
        rewards_from_config(spec, weights)
