"""Training configs as a new user ports them: every problem at once, flat overrides, seed-style keys, imports,
optional columns, import checks and judge endpoints in a dry run."""

from __future__ import annotations

import json
import socket
import textwrap
from pathlib import Path

import pytest
import yaml
from problem_helpers import assert_all_reported
from trl_helpers import TINY_RUN
from typer.testing import CliRunner

import rewardsmith.data
from rewardsmith.cli import app
from rewardsmith.config.seed import normalize_flat
from rewardsmith.core.errors import MissingColumnError
from rewardsmith.core.problems import ConfigError
from rewardsmith.http.testing import LocalChatServer, Reply
from rewardsmith.train.compat import prepare_dataset_for_trl
from rewardsmith.train.config import load_config, parse_config
from rewardsmith.train.plan import plan_training

ROOT = Path(__file__).resolve().parents[1]
TASK = ROOT / "rewardsmith" / "data" / "samples" / "copy_digits.jsonl"
TRAINER = dict(TINY_RUN)


def _config(**changes) -> dict:
    config = {
        "model": {"name_or_path": "builtin:tiny"},
        "dataset": {"source": str(TASK), "conversational": False, "max_samples": 16},
        "rewards": ["think_format", "gsm8k_accuracy"],
        "trainer": dict(TRAINER),
    }
    config.update(changes)
    return config


def _write(folder: Path, config: dict | str, name: str = "run.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(config if isinstance(config, str) else yaml.safe_dump(config))
    return path


def _train(*args: str):
    return CliRunner().invoke(app, ["train", *map(str, args)])


# -- 1. every problem at once ---------------------------------------------------------------------------------


def test_every_independent_problem_is_reported_in_one_message(tmp_path, no_model_loading):
    config = _config(
        model={"name_or_path": "builtin:tiny", "lorra": {"r": 8}},
        rewards=["think_fromat", "countdown", "gsm8k_accuracy"],
        trainer={**TRAINER, "learning_rat": 1e-3, "bf16": True, "output_dir": str(tmp_path / "out")},
        optimizer="adam",
    )
    expected = [
        "model.lorra: unknown key. Did you mean: lora?",
        "unknown config key 'optimizer'",
        "rewards[0]: unknown reward 'think_fromat'",
        "trainer.learning_rat is not a GRPO training argument. Did you mean: learning_rate?",
        "trainer.bf16/fp16 need a GPU",
        "countdown needs 'nums', 'target'",  # the rewards that resolved are still checked against the data
    ]
    assert_all_reported(_train(_write(tmp_path, config), "--dry-run"), 6, "nothing was loaded", expected)
    assert not (tmp_path / "out").exists()


def test_a_dataset_that_cannot_load_skips_only_the_checks_that_need_it(tmp_path, no_model_loading):
    config = _config(dataset={"source": str(tmp_path / "missing.jsonl")}, rewards=["countdown", "think_fromat"])
    config["trainer"]["per_device_train_batch_size"] = 6
    result = _train(_write(tmp_path, config), "--dry-run")
    out = result.output
    assert result.exit_code == 2, out
    assert "has 3 problems" in out and "missing.jsonl" in out and "think_fromat" in out and "divisible" in out, out
    assert "nums" not in out  # no column check without data


def test_one_problem_is_raised_as_the_error_it_is():
    with pytest.raises(MissingColumnError, match="countdown needs 'nums', 'target'"):
        plan_training(_config(rewards=["countdown"]))


def test_problems_of_several_sections_in_python(tmp_path):
    with pytest.raises(ConfigError) as caught:
        plan_training(_config(dataset={"source": str(TASK), "max_samples": -1}, trainer={"num_generations": 1}))
    messages = [str(p) for p in caught.value.problems]
    assert len(messages) == 2, messages
    assert messages[0].startswith("dataset.max_samples:") and "at least 2" in messages[1]


def test_an_unreadable_file_is_still_one_plain_error(tmp_path):
    result = _train(_write(tmp_path, "model: [unclosed"), "--dry-run")
    assert result.exit_code == 2 and "not valid YAML" in result.output and "problems" not in result.output


# -- 2. flat overrides and seed-style keys --------------------------------------------------------------------


def test_flat_overrides_of_training_arguments(tmp_path, no_model_loading):
    path = _write(tmp_path, _config(trainer={**TRAINER, "output_dir": str(tmp_path / "o")}))
    result = _train(path, "max_steps=5", "learning_rate=3e-3", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "max_steps=5" in result.output and "learning_rate=0.003" in result.output
    dotted = _train(path, "trainer.max_steps=3", "--dry-run")
    assert dotted.exit_code == 0 and "max_steps=3" in dotted.output
    config = load_config(path, ["max_steps=7", "model_name_or_path=builtin:tiny", "rewards=think_format"])
    assert config.trainer["max_steps"] == 7 and config.rewards == ["think_format"]
    typo = _train(path, "max_stepz=2", "--dry-run")
    assert typo.exit_code == 2 and "unknown config key 'max_stepz'. Did you mean: max_steps" in typo.output


def test_stage_must_be_grpo():
    assert parse_config({**_config(), "stage": "grpo"}).trainer["max_steps"] == 2
    with pytest.raises(ConfigError, match="stage: 'sft': rewardsmith trains with GRPO only"):
        parse_config({**_config(), "stage": "sft"})


def test_eval_dataset_is_the_evaluation_source(tmp_path, no_model_loading):
    seed = {
        "model_name_or_path": "builtin:tiny",
        "dataset": "data/train.jsonl",
        "eval_dataset": "data/test.jsonl",
        "reward_funcs": "think_format,gsm8k_accuracy",
        "eval_strategy": "steps",
        "eval_steps": 1,
        **{k: v for k, v in TRAINER.items()},
        "output_dir": str(tmp_path / "o"),
    }
    (tmp_path / "data").mkdir()
    lines = TASK.read_text().splitlines()
    (tmp_path / "data" / "train.jsonl").write_text("\n".join(lines[:16]) + "\n")
    (tmp_path / "data" / "test.jsonl").write_text("\n".join(lines[16:24]) + "\n")
    config = load_config(_write(tmp_path, seed))
    assert config.dataset.eval_source == str(tmp_path / "data" / "test.jsonl")
    plan = plan_training(_write(tmp_path, seed))
    assert len(plan.eval_dataset) == 8 and len(plan.train_dataset) == 16


def test_new_special_tokens_config_becomes_model_special_tokens(tmp_path, monkeypatch):
    monkeypatch.setenv("REWARDSMITH_CACHE", str(ROOT / ".cache"))
    (tmp_path / "tokens.yaml").write_text('"<calc>": a calculator\n"<memo>": a note to self\n')
    seed = {**_config(), "new_special_tokens_config": "tokens.yaml", "init_special_tokens": "desc_init"}
    config = load_config(_write(tmp_path, seed))
    assert config.model.special_tokens == {"<calc>": "a calculator", "<memo>": "a note to self"}
    inline = parse_config({**_config(), "new_special_tokens_config": {"<calc>": "a calculator"}})
    assert inline.model.special_tokens == {"<calc>": "a calculator"}

    from rewardsmith.train.model import load_model_and_tokenizer, model_path
    from rewardsmith.train.plan import cache_dir

    model, tokenizer, new = load_model_and_tokenizer(config.model, model_path(config.model, cache_dir()), False)
    assert new == ["<calc>", "<memo>"] and model.get_input_embeddings().weight.shape[0] == len(tokenizer)

    with pytest.raises(ConfigError) as caught:
        parse_config({**_config(), "new_special_tokens_config": "absent.yaml", "init_special_tokens": "noise_init"})
    text = str(caught.value)
    assert "absent.yaml" in text and "does not exist" in text and "init_special_tokens: 'noise_init'" in text


# -- 3. the seed-style dialect lives in rewardsmith.config.seed -------------------------------------------------


def test_the_dialect_is_in_one_module():
    assert not hasattr(rewardsmith.data, "prepare_dataset_for_trl")
    assert "prepare_dataset_for_trl" not in rewardsmith.data.__all__
    rows = [{"problem": "1+1?", "solution": "2"}]
    ds = prepare_dataset_for_trl(rows, prompt_key="problem", response_key="solution", system_prompt="Think.")
    assert ds[0]["prompt"][1]["content"] == "1+1?" and ds[0]["solution"] == "2"
    shaped = normalize_flat({"reward_funcs": "accuracy, format", "reward_weights": "1.0,0.5", "lora_target": "all"})
    assert shaped == {
        "rewards": ["accuracy", "format"],
        "reward_weights": [1.0, 0.5],
        "model": {"lora": {"target_modules": "all-linear"}},
    }


def test_bad_comma_weights_are_reported_by_position():
    with pytest.raises(ConfigError, match=r"reward_weights\.1: Input should be a valid number"):
        parse_config({**_config(), "reward_weights": "1.0,heavy"})


# -- 4. imports -------------------------------------------------------------------------------------------------

REWARDS_FILE = """
from rewardsmith import register_reward

@register_reward("{name}")
def {name}(completion: str) -> float:
    '''1 when the completion has an answer tag.'''
    return float("<answer>" in completion)
"""


def test_imports_make_registered_rewards_known_by_name(tmp_path, no_model_loading, forget_rewards):
    forget_rewards += ["says_answer_from_file", "says_answer_from_module"]
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "my_rewards.py").write_text(REWARDS_FILE.format(name="says_answer_from_file"))
    package = tmp_path / "site" / "team_rewards"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(REWARDS_FILE.format(name="says_answer_from_module"))
    config = _config(
        imports=["./my_rewards.py", "team_rewards"],
        rewards=["says_answer_from_file", "says_answer_from_module"],
        trainer={**TRAINER, "output_dir": str(tmp_path / "o")},
    )
    path = _write(folder, config)
    missing = _train(path, "--dry-run")  # team_rewards is not importable yet
    assert missing.exit_code == 2 and "imports[1]: cannot import 'team_rewards': ModuleNotFoundError" in missing.output
    assert "unknown reward" not in missing.output  # rewards are checked once the imports work
    import sys

    sys.path.insert(0, str(tmp_path / "site"))
    try:
        result = CliRunner().invoke(app, ["train", str(path), "--dry-run"])
    finally:
        sys.path.remove(str(tmp_path / "site"))
    assert result.exit_code == 0, result.output
    assert "reward says_answer_from_file" in result.output and "reward says_answer_from_module" in result.output
    assert load_config(path).imports[0] == str(folder / "my_rewards.py")

    from rewardsmith import get_reward

    in_workers = get_reward("says_answer_from_file", workers=2)  # worker processes load the file again
    try:
        assert in_workers(prompts=["a", "b"], completions=["<answer>1</answer>", "no"]) == [1.0, 0.0]
    finally:
        in_workers.close()


def test_a_failing_import_says_which_and_why(tmp_path, no_model_loading):
    (tmp_path / "broken.py").write_text("raise RuntimeError('the rewards module is broken')\n")
    config = _config(imports=["./broken.py", "./nowhere.py"], trainer={**TRAINER, "learning_rat": 1})
    result = _train(_write(tmp_path, config), "--dry-run")
    out = result.output
    assert result.exit_code == 2, out
    assert "imports[0]: importing" in out and "RuntimeError: the rewards module is broken" in out
    assert "imports[1]: the file './nowhere.py' does not exist" in out and "learning_rat" in out


# -- 5. optional columns --------------------------------------------------------------------------------------


def test_optional_columns_are_shown_and_absent_ones_warned_about(tmp_path, no_model_loading):
    (tmp_path / "rows.jsonl").write_text(
        "".join(json.dumps({"prompt": f"Repeat {i}: ", "solution": str(i)}) + "\n" for i in range(8))
    )
    (tmp_path / "kit.py").write_text(
        textwrap.dedent(
            """
            from rewardsmith.integrations.reward_kit import EvaluateResult, reward_function

            @reward_function
            def exact(messages, ground_truth=None, **kwargs):
                said = messages[-1]["content"].strip()
                return EvaluateResult(score=float(said == ground_truth), reason="")
            """
        )
    )
    config = _config(
        dataset={"source": "rows.jsonl", "conversational": False},
        rewards=["./kit.py:exact", "think_format"],
        trainer={**TRAINER, "output_dir": str(tmp_path / "o")},
    )
    result = _train(_write(tmp_path, config), "--dry-run")
    out = " ".join(result.output.split())
    assert result.exit_code == 0, result.output
    assert "reward exact weight 1; needs no columns; optional ground_truth (absent: its default is used)" in out, out
    assert "warning: reward 'exact' reads the optional column 'ground_truth', which the dataset does not have" in out
    assert "it will use its default" in out and "The dataset has: prompt, solution" in out
    plan = plan_training(_write(tmp_path, config))
    assert len(plan.warnings) == 1 and "'exact'" in plan.warnings[0]


# -- 6. import checks and judge endpoints ---------------------------------------------------------------------


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


@pytest.mark.skipif(_has("flash_attn") or _has("kernels"), reason="flash_attn or kernels is installed here")
@pytest.mark.parametrize(
    ("implementation", "expected"),
    [
        ("flash_attention_2", "needs the flash_attn package, which is not installed"),
        ("flash_attention_3", "needs the flash_attn_interface package"),
        ("kernels-community/flash-attn2", "is a Hub kernel, which needs the kernels package"),
    ],
)
def test_attention_packages_are_checked_before_anything_loads(implementation, expected, tmp_path, no_model_loading):
    config = _config(model={"name_or_path": "builtin:tiny", "attn_implementation": implementation})
    result = _train(_write(tmp_path, config), "--dry-run")
    assert result.exit_code == 2 and expected in result.output and "sdpa" in result.output, result.output


@pytest.mark.skipif(_has("flash_attn"), reason="flash_attn is installed here")
def test_an_importable_flash_attn_passes_the_check(tmp_path, monkeypatch):
    import importlib

    from rewardsmith.train.config import ModelSettings
    from rewardsmith.train.model import check_attention

    (tmp_path / "flash_attn").mkdir()
    (tmp_path / "flash_attn" / "__init__.py").write_text("")
    settings = ModelSettings(name_or_path="m", attn_implementation="flash_attention_2")
    if not _has("kernels"):
        with pytest.raises(ConfigError):
            check_attention(settings)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    check_attention(settings)  # no error
    check_attention(ModelSettings(name_or_path="m", attn_implementation="sdpa"))


def _dead_url() -> str:
    with socket.socket() as sock:  # a free port, closed again: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _judge(label: str, base_url: str, model: str, **settings) -> dict:
    kwargs = {"base_url": base_url, "model": model, "api_key_env": None, "cache": None, **settings}
    return {"name": "llm_judge", "kwargs": kwargs, "as": label}


def test_check_endpoints_reports_each_endpoint(tmp_path, no_model_loading, monkeypatch):
    def answer(request):
        if request.body.get("model") != "served-model":
            return Reply.error(404, f"model {request.body.get('model')!r} not found")
        if {k.lower(): v for k, v in request.headers.items()}.get("authorization") == "Bearer wrong-key":
            return Reply.error(401, "invalid api key")
        return "OK"

    monkeypatch.setenv("FRICTION_JUDGE_KEY", "wrong-key")
    with LocalChatServer(answer) as server:
        rewards = [
            "think_format",
            {"gate": {"condition": "think_format", "reward": _judge("good", server.base_url, "served-model")}},
            _judge("unknown_model", server.base_url, "no-such-model"),
            _judge("bad_key", server.base_url, "served-model", api_key_env="FRICTION_JUDGE_KEY"),
            _judge("no_server", _dead_url(), "served-model"),
        ]
        config = _config(rewards=rewards, trainer={**TRAINER, "output_dir": str(tmp_path / "o")})
        path = _write(tmp_path, config)
        plain = _train(path, "--dry-run")
        assert plain.exit_code == 0 and not server.requests  # the check is opt-in
        result = _train(path, "--dry-run", "--check-endpoints")
        with pytest.raises(ConfigError) as caught:
            plan_training(path, check_endpoints=True)
    out = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert "has 3 problems" in out, result.output
    assert "judge 'unknown_model' (model 'no-such-model'" in out and "serves model 'no-such-model'" in out
    assert "judge 'bad_key'" in out and "HTTP 401" in out and "FRICTION_JUDGE_KEY" in out
    assert "judge 'no_server'" in out and "is the server running" in out
    assert "judge 'good'" not in out
    assert len(caught.value.problems) == 3


def test_check_endpoints_lists_the_reachable_ones_in_the_plan(tmp_path, no_model_loading):
    with LocalChatServer(lambda request: "OK") as server:
        rewards = [_judge("judge", server.base_url, "m"), "think_format"]
        config = _config(rewards=rewards, trainer={**TRAINER, "output_dir": str(tmp_path / "o")})
        result = _train(_write(tmp_path, config), "--dry-run", "--check-endpoints")
        assert len(server.requests) == 1 and server.requests[0].body["model"] == "m"
    out = " ".join(result.output.split())
    assert result.exit_code == 0, result.output
    assert f"endpoint judge reachable: model 'm' at {server.base_url} answered" in out
    none = _train(_write(tmp_path, _config(trainer={**TRAINER, "output_dir": str(tmp_path / "o")})),
                  "--dry-run", "--check-endpoints")  # fmt: skip
    assert none.exit_code == 0 and "none to check" in none.output
