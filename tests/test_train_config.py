"""Training configs: shapes, seed-style flat keys, overrides, paths, and bad configs caught before a model loads."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rewardsmith.cli import app
from rewardsmith.train.config import ConfigError, load_config, parse_config
from rewardsmith.train.plan import plan_training

ROOT = Path(__file__).resolve().parents[1]
TASK = ROOT / "rewardsmith" / "data" / "samples" / "copy_digits.jsonl"

BASE = {
    "model": {"name_or_path": "builtin:tiny"},
    "dataset": {"source": str(TASK), "conversational": False, "max_samples": 32},
    "rewards": [{"name": "think_format", "weight": 0.5, "kwargs": {"think_tag": None}}, "gsm8k_accuracy"],
    "trainer": {
        "learning_rate": 1e-3,
        "max_steps": 2,
        "per_device_train_batch_size": 8,
        "num_generations": 4,
        "max_completion_length": 6,
        "gradient_checkpointing": False,
        "save_strategy": "no",
    },
}


def _write(tmp_path: Path, config: dict | str, name: str = "run.yaml") -> Path:
    path = tmp_path / name
    path.write_text(config if isinstance(config, str) else yaml.safe_dump(config))
    return path


def test_sectioned_config_resolves_into_a_plan(tmp_path, monkeypatch):
    monkeypatch.setenv("REWARDSMITH_CACHE", str(ROOT / ".cache"))
    config = parse_config({**BASE, "trainer": {**BASE["trainer"], "output_dir": str(tmp_path)}})
    plan = plan_training(config)
    assert [r.name for r in plan.rewards] == ["think_format", "gsm8k_accuracy"]
    assert plan.weights == [0.5, 1.0]
    assert plan.args.reward_weights == [0.5, 1.0]
    assert plan.args.learning_rate == 1e-3 and plan.args.bf16 is False
    assert len(plan.train_dataset) == 32 and "answer" in plan.train_dataset.column_names
    labels = [label for label, _ in plan.describe()]
    assert "reward think_format" in labels and "optimisation" in labels


def test_seed_style_flat_config(tmp_path):
    config = parse_config(
        {
            "model_name_or_path": "builtin:tiny",
            "dataset": str(TASK),
            "reward_funcs": "accuracy,format",
            "reward_weights": "1.0,0.5",
            "finetuning_type": "lora",
            "lora_rank": 8,
            "lora_alpha": 16,
            "lora_dropout": 0.1,
            "lora_target": "q_proj,v_proj",
            "load_in_4bit": False,
            "learning_rate": "3e-3",
            "num_generations": 4,
        }
    )
    assert config.model.name_or_path == "builtin:tiny"
    assert config.model.lora.r == 8 and config.model.lora.target_modules == ["q_proj", "v_proj"]
    assert config.dataset.source == str(TASK)
    assert config.rewards == ["accuracy", "format"] and config.reward_weights == [1.0, 0.5]
    assert config.trainer == {"learning_rate": "3e-3", "num_generations": 4}


def test_overrides_and_yaml_numbers(tmp_path):
    path = _write(tmp_path, {**BASE, "trainer": {**BASE["trainer"], "learning_rate": "3e-3"}})
    config = load_config(path, ["trainer.max_steps=7", "dataset.max_samples=16", "model.lora.r=4"])
    assert config.trainer["max_steps"] == 7 and config.dataset.max_samples == 16 and config.model.lora.r == 4
    from rewardsmith.train.trainer_args import build_trainer_args

    args = build_trainer_args(config.trainer, reward_weights=None, default_output_dir=tmp_path)
    assert args.learning_rate == 0.003  # a YAML "3e-3" string became a float


def test_relative_paths_are_resolved_from_the_config_folder(tmp_path):
    folder = tmp_path / "project"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "rows.jsonl").write_text('{"prompt": "Repeat 1: ", "answer": "1"}\n')
    (folder / "my_rewards.py").write_text("def short(completion):\n    return float(len(completion) < 5)\n")
    config = {**BASE, "dataset": {"source": "data/rows.jsonl"}, "rewards": ["./my_rewards.py:short"]}
    loaded = load_config(_write(folder, config))
    assert loaded.dataset.source == str(folder / "data" / "rows.jsonl")
    assert loaded.rewards == [f"{folder / 'my_rewards.py'}:short"]


BAD = {
    "unknown reward": ({"rewards": ["think_fromat"]}, "Did you mean: think_format"),
    "weights do not match": ({"rewards": "think_format,gsm8k_accuracy", "reward_weights": "1.0"}, "weight"),
    "unknown trainer field": ({"trainer": {"learning_rat": 1e-3}}, "Did you mean: learning_rate"),
    "wrong type": ({"trainer": {"learning_rate": "fast"}}, "must be a number"),
    "negative sample count": ({"dataset": {"source": str(TASK), "max_samples": -3}}, "dataset.max_samples"),
    "missing dataset": ({"dataset": {"source": "./no/such/file.jsonl"}}, "no/such/file.jsonl"),
    "column missing for a reward": ({"rewards": ["countdown"]}, "nums"),
    "batch not divisible": ({"trainer": {"per_device_train_batch_size": 6, "num_generations": 4}}, "divisible"),
    "too few generations": ({"trainer": {"per_device_train_batch_size": 8, "num_generations": 1}}, "at least 2"),
    "lora targets absent": (
        {"model": {"name_or_path": "builtin:tiny", "lora": {"target_modules": ["c_attn"]}}},
        "q_proj",
    ),
    "qlora without cuda": ({"model": {"name_or_path": "builtin:tiny", "load_in_4bit": True, "lora": {}}}, "CUDA"),
    "vllm not installed": ({"trainer": {"use_vllm": True}}, "vLLM is not installed"),
    "bf16 without a gpu": ({"trainer": {"bf16": True}}, "need a GPU"),
    "unknown top-level key": ({"optimizer": "adam"}, "unknown config key 'optimizer'"),
    "eval strategy without data": ({"trainer": {"eval_strategy": "steps", "eval_steps": 1}}, "no evaluation dataset"),
    "bad finetuning type": ({"finetuning_type": "adapter"}, "finetuning_type"),
    "logger not installed": ({"trainer": {"report_to": "wandb"}}, "wandb is not installed"),
}


def _bad_config(change: dict) -> dict:
    config = {key: value for key, value in BASE.items()}
    for key, value in change.items():
        if key == "trainer":
            config["trainer"] = {**BASE["trainer"], **value}
        else:
            config[key] = value
    return config


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_configs_exit_2_with_one_paragraph_before_any_model_loads(case, tmp_path, no_model_loading):
    change, expected = BAD[case]
    path = _write(tmp_path, _bad_config(change))
    result = CliRunner().invoke(app, ["train", str(path)])
    output = result.output
    assert result.exit_code == 2, output
    assert expected in output, output
    assert "Traceback" not in output and output.count("error:") == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [("model: [unclosed", "not valid YAML"), ("", "is empty"), ("rewards: [think_format]\n", "model: required")],
)
def test_unreadable_configs_exit_2(text, expected, tmp_path, no_model_loading):
    result = CliRunner().invoke(app, ["train", str(_write(tmp_path, text)), "--dry-run"])
    assert result.exit_code == 2 and expected in result.output, result.output


def test_missing_config_file_exits_2(tmp_path):
    result = CliRunner().invoke(app, ["train", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2 and "does not exist" in result.output


def test_dry_run_prints_the_plan_and_loads_no_weights(tmp_path, no_model_loading):
    path = _write(tmp_path, {**BASE, "trainer": {**BASE["trainer"], "output_dir": str(tmp_path / "out")}})
    result = CliRunner().invoke(app, ["train", str(path), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "dry run" in result.output and "reward gsm8k_accuracy" in result.output
    assert not (tmp_path / "out").exists()


def test_learning_rate_warning_in_the_plan(tmp_path, no_model_loading):
    trainer = {k: v for k, v in BASE["trainer"].items() if k != "learning_rate"}
    result = CliRunner().invoke(app, ["train", str(_write(tmp_path, {**BASE, "trainer": trainer})), "--dry-run"])
    assert result.exit_code == 0 and "learning_rate is TRL's default" in result.output


EXAMPLES = ROOT / "examples"
SHARED = ROOT.parent / "shared" / "data"
OFFLINE = ["model.name_or_path=builtin:tiny", "trainer.use_vllm=false", "trainer.bf16=false", "model.dtype=float32"]
EXAMPLE_OVERRIDES = {
    "gsm8k_grpo.yaml": [
        f"dataset.source={SHARED / 'gsm8k_train.jsonl'}",
        f"dataset.eval_source={SHARED / 'gsm8k_test.jsonl'}",
        "dataset.config=null",
    ],
    "countdown_grpo.yaml": [f"dataset.source={EXAMPLES / 'data' / 'countdown_sample.jsonl'}"],
    "multitask_grpo.yaml": [
        f"dataset.mix.0.source={SHARED / 'gsm8k_train.jsonl'}",
        "dataset.mix.0.config=null",
        f"dataset.mix.1.source={EXAMPLES / 'data' / 'countdown_sample.jsonl'}",
    ],
    "principles_grpo.yaml": ["dataset.max_samples=8"],
    "code_grpo.yaml": [f"dataset.source={SHARED / 'mbpp.jsonl'}", "dataset.config=null"],
    "ifeval_grpo.yaml": [
        f"dataset.source={SHARED / 'ifeval_input_data.jsonl'}",
        "dataset.converter_settings.prompt_key=prompt",
        "dataset.converter_settings.ground_truth_key=null",
    ],
}


@pytest.mark.parametrize("name", sorted(EXAMPLE_OVERRIDES))
def test_every_example_config_passes_a_dry_run(name, no_model_loading, shared_data):
    overrides = EXAMPLE_OVERRIDES[name] + OFFLINE
    result = CliRunner().invoke(app, ["train", str(EXAMPLES / name), *overrides, "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "dry run" in result.output


def test_every_example_config_is_covered():
    assert {p.name for p in EXAMPLES.glob("*.yaml")} == set(EXAMPLE_OVERRIDES)


def test_the_embedded_demo_config_passes_a_dry_run(no_model_loading):
    from rewardsmith.demo import DEMO_CONFIG

    result = CliRunner().invoke(app, ["train", str(DEMO_CONFIG), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "dry run" in result.output and "tag_count" in result.output


def test_resolved_config_text_round_trips(tmp_path):
    config = load_config(_write(tmp_path, BASE))
    again = parse_config(yaml.safe_load(yaml.safe_dump(config.to_dict())))
    assert again == config


def test_parse_errors_are_config_errors():
    with pytest.raises(ConfigError, match="model"):
        parse_config({"dataset": {"source": "x"}, "rewards": ["think_format"]})
