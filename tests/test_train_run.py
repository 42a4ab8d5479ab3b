"""Real training runs on the offline tiny model: LoRA, resume, evaluation, tokens, processes (demo: test_demo.py)."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from rich.console import Console
from trl_helpers import TASK, tiny_train_config

from rewardsmith.train import run

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("training")]

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _cache(monkeypatch):
    monkeypatch.setenv("REWARDSMITH_CACHE", str(ROOT / ".cache"))


def _quiet() -> Console:
    return Console(file=io.StringIO(), width=200)


def _config(output_dir: Path, **trainer) -> dict:
    rewards = [{"name": "tag_count", "kwargs": {"think_tag": None}}, {"name": "gsm8k_accuracy", "weight": 0.5}]
    return tiny_train_config(output_dir, rewards, **trainer)


def test_lora_run_saves_an_adapter_the_resolved_config_and_the_history(tmp_path):
    config = _config(tmp_path / "lora")
    config["model"]["lora"] = {"r": 4, "alpha": 8, "target_modules": ["q_proj", "v_proj"]}
    result = run(config, console=_quiet())
    out = tmp_path / "lora"
    adapter = json.loads((out / "adapter_config.json").read_text())
    assert adapter["r"] == 4 and set(adapter["target_modules"]) == {"q_proj", "v_proj"}
    assert not (out / "model.safetensors").exists()  # an adapter, not the whole model
    saved = yaml.safe_load((out / "rewardsmith_config.yaml").read_text())
    assert saved["model"]["lora"]["r"] == 4 and saved["trainer"]["max_steps"] == 2
    history = json.loads((out / "reward_history.json").read_text())
    assert [row["step"] for row in history] == [1, 2]
    assert set(history[0]) >= {"reward", "tag_count", "gsm8k_accuracy"}
    assert result.trainer.state.global_step == 2


def test_resume_from_the_last_checkpoint(tmp_path):
    out = tmp_path / "resume"
    first = _config(out, max_steps=2, save_strategy="steps", save_steps=2)
    run(first, console=_quiet())
    assert (out / "checkpoint-2").is_dir()
    second = {**_config(out, max_steps=4, save_strategy="no"), "resume_from_checkpoint": True}
    result = run(second, console=_quiet())
    steps = [entry["step"] for entry in result.trainer.state.log_history if "reward" in entry]
    assert steps[-2:] == [3, 4] and 1 not in steps[-2:]
    assert result.trainer.state.global_step == 4


def test_resume_without_a_checkpoint_starts_fresh(tmp_path, caplog):
    config = {**_config(tmp_path / "fresh"), "resume_from_checkpoint": True}
    with caplog.at_level(logging.WARNING, logger="rewardsmith"):
        result = run(config, console=_quiet())
    assert result.trainer.state.global_step == 2
    assert any("holds no checkpoint yet" in r.getMessage() for r in caplog.records)


def test_evaluation_dataset_is_scored_with_the_same_rewards(tmp_path):
    config = _config(tmp_path / "eval", eval_strategy="steps", eval_steps=2, per_device_eval_batch_size=8)
    config["dataset"].update(eval_source=str(TASK), eval_max_samples=8)
    result = run(config, console=_quiet())
    evals = [entry for entry in result.trainer.state.log_history if "eval_reward" in entry]
    assert evals, result.trainer.state.log_history
    assert {"eval_rewards/tag_count/mean", "eval_rewards/gsm8k_accuracy/mean"} <= set(evals[0])


def test_constant_rewards_on_the_first_batch_warn(tmp_path, caplog):
    config = _config(tmp_path / "flat", max_steps=1)
    config["rewards"] = [str(ROOT / "tests" / "constant_reward.py") + ":always_half"]
    with caplog.at_level(logging.WARNING, logger="rewardsmith"):
        run(config, console=_quiet())
    assert any("every advantage is zero" in r.getMessage() for r in caplog.records)


def test_special_tokens_are_added_with_embeddings_from_their_descriptions(tmp_path):
    from rewardsmith.train.config import ModelSettings
    from rewardsmith.train.model import load_model_and_tokenizer, model_path
    from rewardsmith.train.plan import cache_dir

    settings = ModelSettings(name_or_path="builtin:tiny", special_tokens={"<calc>": "a calculator", "<think>": "x"})
    path = model_path(settings, cache_dir())
    model, tokenizer, new = load_model_and_tokenizer(settings, path, conversational=False)
    assert new == ["<calc>"]  # <think> is already a token of the tiny tokenizer
    ids = tokenizer("2 <calc> 3", add_special_tokens=False)["input_ids"]
    calc = tokenizer.convert_tokens_to_ids("<calc>")
    assert calc in ids and tokenizer.decode(ids, skip_special_tokens=True) == "2 <calc> 3"
    embeddings = model.get_input_embeddings().weight
    assert embeddings.shape[0] == len(tokenizer)
    description = tokenizer("a calculator", add_special_tokens=False)["input_ids"]
    assert embeddings[calc].tolist() == pytest.approx(embeddings[description].mean(dim=0).tolist(), abs=1e-6)


def test_a_missing_pad_token_falls_back_to_eos_with_a_warning(tmp_path, caplog):
    from transformers import AutoTokenizer

    from rewardsmith.train.config import ModelSettings
    from rewardsmith.train.model import _tokenizer, model_path
    from rewardsmith.train.plan import cache_dir

    source = model_path(ModelSettings(name_or_path="builtin:tiny"), cache_dir())
    tokenizer = AutoTokenizer.from_pretrained(source)
    tokenizer.pad_token = None
    tokenizer.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text())
    config.pop("pad_token", None)
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    with caplog.at_level(logging.WARNING, logger="rewardsmith"):
        loaded = _tokenizer(str(tmp_path), ModelSettings(name_or_path=str(tmp_path)), conversational=True)
    assert loaded.pad_token == loaded.eos_token
    assert any("no pad token" in r.getMessage() for r in caplog.records)


def test_two_processes_with_accelerate(tmp_path):
    config = _config(tmp_path / "ddp")
    path = tmp_path / "ddp.yaml"
    path.write_text(yaml.safe_dump(config))
    accelerate = Path(sys.executable).with_name("accelerate")
    command = [str(accelerate), "launch", "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no",
               "--dynamo_backend", "no", "--cpu", "-m", "rewardsmith.cli", "train", str(path)]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, env={**os.environ}, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("rewardsmith train") == 1  # the plan is shown once, by the main process
    history = json.loads((tmp_path / "ddp" / "reward_history.json").read_text())
    assert [row["step"] for row in history] == [1, 2]


def test_example_scripts_run(tmp_path, shared_data):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rloo = subprocess.run(
        [sys.executable, "examples/rloo_basic.py", "--tiny", "--max-steps", "1", "--output-dir", str(tmp_path / "r")],
        capture_output=True, text=True, timeout=600, cwd=ROOT, env=env,
    )  # fmt: skip
    assert rloo.returncode == 0, rloo.stderr[-3000:]
    assert "rewards/says_the_digit/mean:" in rloo.stdout
    by_hand = subprocess.run(
        [sys.executable, "examples/grpo_by_hand.py", "--tiny", "--data", str(shared_data / "gsm8k_train.jsonl"),
         "--max-steps", "1", "--output-dir", str(tmp_path / "g")],
        capture_output=True, text=True, timeout=600, cwd=ROOT, env=env,
    )  # fmt: skip
    assert by_hand.returncode == 0, by_hand.stderr[-3000:]
    assert (tmp_path / "g" / "model.safetensors").exists()
