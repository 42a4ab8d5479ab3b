"""Code written for TRL, open-r1, Unsloth and reward-kit runs unchanged and means the same here.

Each test reproduces what a user of such code hit: chat-shaped TRL functions
failing on plain text outside training, TRL's signatures refused, columns a
signature names unchecked, open-r1 names remapped silently, removed TRL fields,
Hub settings found only after the model loads, training configs not usable for
evaluation, thresholds and labels in the evaluation summary and report.
"""

from __future__ import annotations

import itertools
import json
import pickle
import socket
import textwrap
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rewardsmith import get_reward
from rewardsmith.cli import app
from rewardsmith.core.callables import reward_from_callable
from rewardsmith.core.errors import RewardConfigError, RewardsmithError
from rewardsmith.core.problems import ConfigError
from rewardsmith.evaluation import evaluate_config
from rewardsmith.evaluation.summary import SummaryBuilder
from rewardsmith.train.plan import plan_training

ROOT = Path(__file__).resolve().parents[1]

CHAT_REWARDS = """
def chat_exact(completions, answer, **kwargs):
    return [1.0 if c[0]["content"].strip() == a else 0.0 for c, a in zip(completions, answer)]


def needs_ground_truth(completions, ground_truth, **kwargs):
    return [float(c == g) for c, g in zip(completions, ground_truth)]


def broken(completions, **kwargs):
    return [1 / 0 for c in completions]


def half(completions, **kwargs):
    return [0.5 for c in completions]
"""


@pytest.fixture(autouse=True)
def _cache(monkeypatch):
    monkeypatch.setenv("REWARDSMITH_CACHE", str(ROOT / ".cache"))


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_rewards.py").write_text(CHAT_REWARDS)
    rows = [{"prompt": "2+2?", "answer": "4", "completion": "4"}, {"prompt": "2+3?", "answer": "5", "completion": "6"}]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def _chat_exact(completions, answer, **kwargs):
    return [1.0 if c[0]["content"].strip() == a else 0.0 for c, a in zip(completions, answer)]


# -- 1. Written once, used unchanged ---------------------------------------------------------------


def test_a_chat_shaped_function_scores_plain_text_as_it_scores_chat():
    r = reward_from_callable(_chat_exact)
    chat = r(prompts=["2+2?"], completions=[[{"role": "assistant", "content": "4"}]], answer=["4"])
    assert r.check("4", answer="4").score == chat[0] == 1.0
    assert r.check("5", answer="4").score == 0.0 and r.check("5", answer="4").error is None
    assert r.__dict__["_chat"] is True  # learned once, kept (and pickled)
    assert pickle.loads(pickle.dumps(r)).__dict__["_chat"] is True


def test_an_async_chat_shaped_function_learns_the_shape_too():
    async def chat_first(completions, **kwargs):
        return [float(c[0]["content"] == "a") for c in completions]

    r = reward_from_callable(chat_first)
    assert r.scores(completions=["a", "b"]) == [1.0, 0.0] and r.check("a").score == 1.0


def test_the_completion_shape_can_be_set_and_text_means_no_retry():
    assert get_reward(_chat_exact, completion_shape="chat")(completions=["4"], answer=["4"]) == [1.0]
    assert get_reward(_chat_exact, completion_shape="text")(completions=["4"], answer=["4"]) == [None]
    with pytest.raises(RewardConfigError, match="completion_shape must be"):
        get_reward(_chat_exact, completion_shape="messages")


def test_eval_over_a_text_column_and_check_cli_score_chat_functions(files):
    runner = CliRunner()
    result = runner.invoke(
        app,
        ["eval", "--dataset", "rows.jsonl", "--completions-column", "completion", "--rewards",
         "./my_rewards.py:chat_exact", "--output-dir", "out", "--no-progress"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads((files / "out" / "summary.json").read_text())
    assert summary["rewards"]["chat_exact"]["mean"] == 0.5 and summary["rewards"]["chat_exact"]["error_rate"] == 0
    checked = runner.invoke(
        app,
        ["check", "./my_rewards.py:chat_exact", "--dataset", "rows.jsonl", "--split", "train",
         "--completions-column", "completion", "--gold-column", "none", "--families", "empty", "--timeout", "0",
         "--no-progress", "--output-dir", "chk"],
    )  # fmt: skip
    cost = json.loads((files / "chk" / "check.json").read_text())["cost"]
    assert cost["samples"] > 0 and cost["errors"] == 0 and cost["first_error"] is None, checked.output


def test_eval_whose_reward_failed_on_every_row_exits_1_with_the_first_traceback(files):
    result = CliRunner().invoke(
        app,
        ["eval", "--dataset", "rows.jsonl", "--completions-column", "completion", "--rewards",
         "./my_rewards.py:half,./my_rewards.py:broken", "--output-dir", "out", "--no-progress"],
    )  # fmt: skip
    assert result.exit_code == 1
    assert "reward 'broken' failed on every row" in result.output
    assert "ZeroDivisionError" in result.output and "Traceback" in result.output
    assert "half" not in json.loads((files / "out" / "summary.json").read_text())["failed"]


def test_max_error_rate_fails_a_job_above_it(files):
    code = "def flaky(completions, **kwargs):\n    return [1 / int(c) - 0.25 for c in completions]\n"
    (files / "flaky.py").write_text(code)
    rows = [{"prompt": "p", "completion": str(n)} for n in (0, 1, 2, 4)]
    (files / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    base = ["eval", "--dataset", "rows.jsonl", "--completions-column", "completion", "--rewards", "./flaky.py:flaky",
            "--no-progress", "--batch-size", "1"]  # fmt: skip
    assert CliRunner().invoke(app, [*base, "--output-dir", "a"]).exit_code == 0  # 25% failed, no limit
    limited = CliRunner().invoke(app, [*base, "--output-dir", "b", "--max-error-rate", "0.1"])
    assert limited.exit_code == 1 and "25.0% of rows (limit 10.0%)" in limited.output


def test_every_signature_trl_accepts_is_a_reward():
    def reward_func(completion_ids, **kwargs):
        return [float(len(ids)) for ids in completion_ids]

    def no_kwargs(completions):
        return [float(len(c)) for c in completions]

    def only_kwargs(**kwargs):
        return [1.0] * len(kwargs["completions"])

    assert reward_from_callable(reward_func)(completions=["ab"], completion_ids=[[1, 2, 3]]) == [3.0]
    assert reward_from_callable(no_kwargs)(prompts=["p"], completions=["ab"], trainer_state=None, x=[1]) == [2.0]
    assert reward_from_callable(only_kwargs)(completions=["a"]) == [1.0]
    with pytest.raises(RewardConfigError, match="reads completion_ids"):
        reward_from_callable(reward_func).check("text only")


def test_a_signature_that_cannot_work_names_the_rename():
    def responses_reward(responses, **kwargs):
        return [1.0 for _ in responses]

    with pytest.raises(RewardConfigError, match="rename its parameter `responses` to `completions`"):
        reward_from_callable(responses_reward)


def test_the_dry_run_reads_required_columns_from_a_plain_functions_signature(files):
    config = {
        "model": {"name_or_path": "builtin:tiny"},
        "dataset": {"source": str(files / "rows.jsonl")},
        "rewards": ["./my_rewards.py:needs_ground_truth"],
        "trainer": {"learning_rate": 1e-3, "max_steps": 1, "per_device_train_batch_size": 4, "num_generations": 4},
    }
    with pytest.raises(RewardsmithError, match="needs_ground_truth needs 'ground_truth'"):
        plan_training(config)  # before any model loads
    config["rewards"] = ["./my_rewards.py:chat_exact"]
    rows = dict(plan_training(config).describe())
    assert rows["reward chat_exact"].startswith("weight 1; needs answer")


# -- 2. Configs from other GRPO projects ---------------------------------------------------------------

RECIPE = {
    "model_name_or_path": "builtin:tiny",
    "dataset_name": None,
    "dataset_prompt_column": "problem",
    "reward_funcs": ["accuracy", "format", "tag_count", "repetition_penalty"],
    "repetition_n_grams": 2,
    "repetition_max_penalty": -0.5,
    "learning_rate": 1e-3,
    "per_device_train_batch_size": 4,
    "num_generations": 4,
    "max_steps": 1,
}


@pytest.fixture
def recipe(tmp_path):
    rows = [{"problem": "1+1?", "solution": "$2$"}, {"problem": "2+2?", "solution": "$4$"}]
    (tmp_path / "math.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return {**RECIPE, "dataset_name": str(tmp_path / "math.jsonl"), "output_dir": str(tmp_path / "run")}


def test_open_r1_names_say_which_reward_runs_and_how_it_differs(recipe):
    plan = plan_training(recipe)
    notes = [w for w in plan.warnings if "(open-r1's name)" in w]
    assert [n.split("runs rewardsmith's ")[1].split(",")[0] for n in notes] == [
        "math_accuracy", "think_format", "tag_count", "repetition"
    ]  # fmt: skip
    assert all("differs:" in n for n in notes)
    assert plan.train_dataset[0]["prompt"][-1]["content"] == "1+1?"  # dataset_prompt_column
    repetition = next(r for r in plan.rewards if r.name == "repetition")
    assert (repetition.ngram_size, repetition.max_penalty) == (2, -0.5)


def test_open_r1_keys_without_their_reward_or_counterpart_are_errors_with_the_fix(recipe):
    with pytest.raises(ConfigError) as caught:
        plan_training({**recipe, "cosine_max_len": 100, "code_provider": "e2b", "reward_funcs": ["ioi_code"]})
    text = str(caught.value)
    assert "cosine_max_len sets the cosine_length reward's max_length" in text
    assert "code_provider (an open-r1 recipe key)" in text and "local sandbox" in text
    assert "'ioi_code' (open-r1) has no built-in counterpart" in text


def test_open_r1_length_is_the_group_length_reward(recipe):
    with pytest.raises(ConfigError, match="correct"):  # group_length needs correctness, as open-r1's length does
        plan_training({**recipe, "reward_funcs": ["length"]})


def test_a_sectioned_configs_length_is_rewardsmiths_own_with_no_open_r1_note(tmp_path):
    (tmp_path / "sums.jsonl").write_text(json.dumps({"prompt": "1+1?", "answer": "2"}) + "\n")
    sectioned = {"model": "builtin:tiny", "dataset": {"source": str(tmp_path / "sums.jsonl")},
                 "rewards": ["think_format", {"name": "length", "kwargs": {"max_length": 6, "unit": "words"}}],
                 "trainer": {"max_steps": 1, "output_dir": str(tmp_path / "run")}}  # fmt: skip
    plan = plan_training(sectioned)
    assert type(plan.rewards[1]).__name__ == "Length" and plan.rewards[1].max_length == 6
    assert not [w for w in plan.warnings if "(open-r1's name)" in w]


def test_did_you_mean_never_points_to_a_field_with_another_meaning(recipe):
    with pytest.raises(ConfigError) as caught:
        plan_training({**recipe, "trainer": {"repetition_max_penalty": -1.0, "max_new_tokens": 8, "max_step": 2}})
    text = str(caught.value)
    assert "Did you mean: repetition_penalty" not in text and "open-r1 reward setting" in text
    assert "max_new_tokens is not a GRPO training argument. Every" in text  # no near-miss offered
    assert "Did you mean: max_steps?" in text  # a real typo still is


def test_fields_trl_removed_are_translated_or_explained(recipe):
    plan = plan_training({**recipe, "warmup_ratio": 0.1, "max_prompt_length": 256, "overwrite_output_dir": True,
                          "vllm_sampling_params": {"top_p": 0.9, "stop": ["</answer>"]}})  # fmt: skip
    assert plan.args.warmup_steps == 0.1 and plan.args.top_p == 0.9
    assert plan.args.generation_kwargs == {"stop": ["</answer>"]}
    text = "\n".join(plan.warnings)
    assert "warmup_ratio: 0.1 (removed in transformers 5) was read as warmup_steps: 0.1" in text
    assert "max_prompt_length: 256 was dropped" in text and "vllm_max_model_length" in text
    assert "overwrite_output_dir was dropped" in text


def test_a_batch_that_does_not_divide_names_the_fields_before_trl(recipe):
    with pytest.raises(ConfigError) as caught:
        plan_training({**recipe, "per_device_train_batch_size": 1})
    text = str(caught.value)
    assert "Set trainer.per_device_train_batch_size to 4" in text and "trainer.num_generations (4)" in text
    assert "TRL rejects" not in text


def test_push_to_hub_is_checked_in_the_dry_run(recipe, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ConfigError, match="push_to_hub is on but offline mode is set"):
        plan_training({**recipe, "push_to_hub": True})
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # no stored token
    with pytest.raises(ConfigError, match="there is no Hub token"):
        plan_training({**recipe, "push_to_hub": True})


def test_a_hub_model_out_of_reach_fails_offline_first_with_a_bounded_probe(recipe, monkeypatch, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: connections are refused
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(ConfigError) as caught:
        plan_training({**recipe, "model_name_or_path": "someone/some-model"})
    assert "not in the local Hub cache and the Hub cannot be reached" in str(caught.value)
    assert f"127.0.0.1:{port} refused the connection" in str(caught.value)


# -- 3. Train, then evaluate with the same rewards ----------------------------------------------------


def test_eval_takes_a_sectioned_training_config(files):
    train = {
        "model": {"name_or_path": "builtin:tiny"},
        "dataset": {"source": "rows.jsonl", "converter": "generic", "converter_settings": {"prompt_key": "prompt"}},
        "rewards": [{"name": "./my_rewards.py:chat_exact", "as": "exact", "weight": 2.0},
                    {"name": "think_format", "kwargs": {"strict": False}}],
        "trainer": {"output_dir": str(files / "run")},
    }  # fmt: skip
    (files / "train.yaml").write_text(yaml.safe_dump(train))
    report = evaluate_config(files / "train.yaml", {"completions_column": "completion", "progress": False})
    assert report.output_dir == files / "run" / "eval"
    assert report.mean("exact") == 0.5 and "think_format" in report.summary["rewards"]
    assert report.summary["job"]["weights"] == {"exact": 2.0, "think_format": 1.0}


def test_converter_settings_use_the_training_configs_key_in_an_eval_config(files):
    rows = [{"question": "2+2?", "answer": "4", "reply": "4"}]
    (files / "q.jsonl").write_text(json.dumps(rows[0]) + "\n")
    report = evaluate_config(
        {"dataset": {"source": "q.jsonl", "converter": "generic", "converter_settings": {"prompt_key": "question"}},
         "rewards": ["./my_rewards.py:chat_exact"], "completions_column": "reply", "output_dir": "cs",
         "progress": False}
    )  # fmt: skip
    assert report.mean("chat_exact") == 1.0
    first = json.loads(report.results_path.read_text().splitlines()[0])
    assert first["prompt"][-1]["content"] == "2+2?"


def test_eval_takes_a_seed_style_training_config_and_rewards_with_settings(files):
    (files / "seed.yaml").write_text(
        textwrap.dedent("""
        model_name_or_path: builtin:tiny
        dataset: rows.jsonl
        reward_funcs: ./my_rewards.py:chat_exact,think_format
        learning_rate: 1.0e-3
        output_dir: runs/seed
    """)
    )
    result = CliRunner().invoke(app, ["eval", "seed.yaml", "--completions-column", "completion", "--no-progress"])
    assert result.exit_code == 0, result.output
    summary = json.loads((files / "runs" / "seed" / "eval" / "summary.json").read_text())
    assert set(summary["rewards"]) == {"chat_exact", "think_format"}
    rewards = "[{name: think_format, kwargs: {strict: false}, as: loose}]"
    result = CliRunner().invoke(app, ["eval", "seed.yaml", "--completions-column", "completion", "--no-progress",
                                      "--rewards", rewards, "--output-dir", "other"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert set(json.loads((files / "other" / "summary.json").read_text())["rewards"]) == {"loose"}


def test_pass_threshold_per_reward_is_used_and_stated(files):
    builder = SummaryBuilder({"half": None, "exact": (0.0, 1.0)}, n=2, pass_threshold={"half": 0.5})
    for index, sample, score in [(0, 0, 0.5), (0, 1, 0.0)]:
        builder.add({"index": index, "sample": sample, "prompt": "p", "completion": "c", "columns": {},
                     "rewards": {n: {"score": score, "error": None} for n in ("half", "exact")}})  # fmt: skip
    summary = builder.summary()["rewards"]
    assert summary["half"]["pass_at_k"]["pass@2"] == 1.0 and summary["half"]["pass_threshold"] == 0.5
    assert summary["exact"]["pass_at_k"]["pass@2"] == 0.0 and summary["exact"]["pass_threshold"] == 1.0
    result = CliRunner().invoke(app, ["eval", "--dataset", "rows.jsonl", "--completions-column", "completion",
                                      "--rewards", "./my_rewards.py:half", "--output-dir", "out", "--no-progress",
                                      "--pass-threshold", "half=0.5"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads((files / "out" / "summary.json").read_text())["rewards"]["half"]["pass_threshold"] == 0.5
    bad = CliRunner().invoke(app, ["eval", "--dataset", "rows.jsonl", "--completions-column", "completion",
                                   "--rewards", "./my_rewards.py:half", "--output-dir", "o2", "--no-progress",
                                   "--pass-threshold", "hlf=0.5"])  # fmt: skip
    assert bad.exit_code == 2 and "not a reward of this evaluation" in bad.output


def test_the_first_batch_zero_spread_warning_reads_right():
    from rewardsmith.health.monitor import HealthMonitor

    _, warnings = HealthMonitor([]).observe({"reward": 0.0, "frac_reward_zero_std": 1.0}, step=1)
    assert warnings[0].message.startswith("every prompt group of the first logged batch gave all its completions")


def test_histogram_labels_of_a_continuous_reward_do_not_overlap():
    from rewardsmith.evaluation.report import CHAR_WIDTH, PLOT_WIDTH, histogram_ticks
    from rewardsmith.evaluation.stats import Histogram

    histogram = Histogram(None)
    for i in range(500):
        histogram.add(-3.14159 + i * 0.0137)
    ticks = histogram_ticks(histogram.as_dict())
    assert len(ticks) >= 3
    for (a, la), (b, lb) in itertools.pairwise(ticks):
        assert (b - a) * PLOT_WIDTH >= (len(la) + len(lb)) / 2 * CHAR_WIDTH
