"""The real built-in model (SmolLM2-135M-Instruct from its GGUF file): converted once, generated from, trained.

The conversion is cached in the tests' cache folder and shared by every test
here (and by later runs); it takes about a minute the first time. The GRPO
test keeps the batch tiny (4 completions of 16 tokens, two steps); the
learning run is ``benchmarks/real_model.py``'s and ``rewardsmith demo real``'s.
"""

from __future__ import annotations

import io
import json
import os
import textwrap
from pathlib import Path

import pytest
from conftest import CACHE
from rich.console import Console

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("training")]

BUILTIN = "builtin:smollm2-135m-instruct"


@pytest.fixture(scope="session")
def smollm2() -> Path:
    """The converted folder (converted on first use, then reused)."""
    from rewardsmith.train.builtin_models import resolve_model

    pytest.importorskip("gguf", reason="reading GGUF files needs the gguf package (make install)")
    return Path(resolve_model(BUILTIN, cache=CACHE))


@pytest.fixture(autouse=True)
def _one_thread(monkeypatch):
    """One torch thread: on a shared 2-core machine two threads are several times slower (benchmarks/real_model.py)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    monkeypatch.setenv("REWARDSMITH_CACHE", str(CACHE))
    yield
    torch.set_num_threads(before)


def test_the_builtin_is_a_plain_folder_that_loads_and_answers_in_words(smollm2, capsys):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rewardsmith.train.builtin_models import resolve_model

    assert resolve_model(BUILTIN, cache=CACHE) == str(smollm2)  # converted once
    assert "converting" not in capsys.readouterr().err
    config = json.loads((smollm2 / "config.json").read_text())
    assert config["model_type"] == "llama" and "quantization_config" not in config
    tokenizer = AutoTokenizer.from_pretrained(smollm2)
    model = AutoModelForCausalLM.from_pretrained(smollm2)
    assert 134e6 < sum(p.numel() for p in model.parameters()) < 136e6
    chat = tokenizer.apply_chat_template(
        [{"role": "user", "content": "What is 12 + 30?"}],
        add_generation_prompt=True,
        return_dict=True,
        return_tensors="pt",
    )
    out = model.generate(**chat, max_new_tokens=8, do_sample=False)
    text = tokenizer.decode(out[0, chat["input_ids"].shape[1] :], skip_special_tokens=True)
    assert "12" in text and "30" in text  # it restates the sum in words and digits, as a chat model does


def test_unknown_builtins_and_missing_gguf_files_are_config_errors(tmp_path):
    from rewardsmith.core.problems import ConfigError
    from rewardsmith.train.builtin_models import resolve_model

    with pytest.raises(ConfigError, match="Did you mean: builtin:smollm2-135m-instruct"):
        resolve_model("builtin:smollm2", cache=tmp_path)
    with pytest.raises(ConfigError, match="does not exist"):
        resolve_model(str(tmp_path), gguf_file="model.gguf", cache=tmp_path)
    (tmp_path / "junk.gguf").write_bytes(b"not a gguf file")
    with pytest.raises(ConfigError, match="cannot read the GGUF file"):
        resolve_model(str(tmp_path / "junk.gguf"), cache=tmp_path / "cache")


SPY = textwrap.dedent(
    """
    import json, os

    def spy(completions, prompts, **kwargs):
        with open(os.environ["SPY_FILE"], "a") as f:  # one line per call
            f.write(json.dumps([{"prompt": p, "completion": c} for p, c in zip(prompts, completions)]) + "\\n")
        return [len(c[0]["content"]) % 7 / 7 for c in completions]  # spread, so every group has an advantage
    """
)


def test_two_grpo_steps_with_lora_on_real_chat_prompts(smollm2, tmp_path, monkeypatch):
    from rewardsmith.train import run

    (tmp_path / "spy.py").write_text(SPY)
    monkeypatch.setenv("SPY_FILE", str(tmp_path / "seen.jsonl"))
    system = "Answer with just the number, then end with #### and the number."
    rows = [{"prompt": f"What is {a} + {b}?", "answer": str(a + b)} for a, b in [(3, 4), (12, 30), (5, 8), (41, 7)]]
    out = tmp_path / "run"
    config = {
        "model": {"name_or_path": BUILTIN, "lora": {"r": 4, "alpha": 8, "target_modules": ["q_proj", "v_proj"]}},
        "dataset": {"source": rows, "system_prompt": system},
        "rewards": ["think_format", "gsm8k_accuracy", f"{tmp_path / 'spy.py'}:spy"],
        "trainer": {
            "learning_rate": 1e-3,
            "max_steps": 2,
            "per_device_train_batch_size": 4,
            "num_generations": 2,
            "max_completion_length": 16,
            "logging_steps": 1,
            "gradient_checkpointing": False,
            "save_strategy": "no",
            "output_dir": str(out),
            "seed": 0,
        },
    }
    result = run(config, console=Console(file=io.StringIO(), width=200))
    lora_b = [p for name, p in result.trainer.model.named_parameters() if "lora_B" in name]
    assert lora_b and any(float(p.detach().abs().sum()) > 0 for p in lora_b)  # LoRA's B starts at zero: it moved
    calls = [json.loads(line) for line in (tmp_path / "seen.jsonl").read_text().splitlines()]
    training = [call for call in calls if len(call) == 4]  # two prompts with two completions each, per step
    assert len(training) == 2 and all(len(call) == 1 for call in calls if len(call) != 4)  # else: the dry run's probe
    seen = [row for call in training for row in call]
    tokenizer = result.trainer.processing_class
    for row in seen:
        rendered = tokenizer.apply_chat_template(row["prompt"], tokenize=False, add_generation_prompt=True)
        assert rendered.count("<|im_start|>system") == 1 and system in rendered  # the dataset's, not the default
        text = row["completion"][0]["content"]
        assert text.strip() and "<|im_end|>" not in text and "<|im_start|>" not in text
    assert any(any(ch.isalpha() or ch.isdigit() for ch in row["completion"][0]["content"]) for row in seen)
    history = json.loads((out / "reward_history.json").read_text())
    assert [row["step"] for row in history] == [1, 2]
    assert {"think_format", "gsm8k_accuracy", "spy"} <= set(history[0])
    assert os.path.exists(out / "adapter_config.json")


def test_a_config_names_the_builtin_in_one_line_and_plans_without_loading_weights(smollm2, monkeypatch):
    import transformers

    from rewardsmith.demo import REAL_DEMO_CONFIG
    from rewardsmith.train.plan import plan_training

    def refuse(*args, **kwargs):
        raise AssertionError("model weights were loaded")

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", refuse)  # converted already: no load
    rows = [{"prompt": "What is 3 + 4?", "answer": "7"}]
    plan = plan_training({"model": BUILTIN, "dataset": {"source": rows}, "rewards": ["gsm8k_accuracy"]})
    assert plan.model_path == str(smollm2)
    assert plan.model_facts["architecture"] == "LlamaForCausalLM"
    demo = plan_training(REAL_DEMO_CONFIG)  # `rewardsmith demo real`'s config
    assert demo.model_path == str(smollm2) and len(demo.train_dataset) == 100


def test_an_evaluation_job_generates_with_the_builtin_and_scores_its_text(smollm2, tmp_path):
    from rewardsmith import evaluate
    from rewardsmith.evaluation import iter_results

    rows = [{"prompt": f"What is {a} + {b}?", "answer": str(a + b)} for a, b in [(2, 3), (4, 4), (10, 20)]]
    generation = {"model": BUILTIN, "max_tokens": 12, "batch_size": 3, "device": "cpu"}
    report = evaluate(
        rows, "gsm8k_accuracy", tmp_path, system_prompt="Answer with just the number.", generation=generation
    )
    results = list(iter_results(report.results_path))
    assert len(results) == 3 and report.summary["rewards"]["gsm8k_accuracy"]["scored"] == 3
    for row in results:
        text = row["completion"][0]["content"]
        assert any(ch.isalnum() for ch in text) and "<|im_end|>" not in text, text  # real text, no end of turn
        assert row["prompt"][0] == {"role": "system", "content": "Answer with just the number."}
    assert (tmp_path / "report.html").is_file()
