"""One config layer: every front end (train, eval, serve, the adapters) reads a config file the same way.

Each dialect (sectioned, seed-style, open-r1 recipe, evaluation config) is fed
to each front end, and the rewards, weights and dataset they take from it are
compared; the file-level mistakes (not UTF-8, a key written twice) are one
clear error with the path, exit 2, in every command.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rewardsmith.cli import app
from rewardsmith.config.rewards import rewards_from_spec
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.evaluation.config import load_eval_config
from rewardsmith.integrations.named import rewards_for
from rewardsmith.serve.service import RewardService
from rewardsmith.train.config import load_config
from rewardsmith.train.plan import plan_training

ROOT = Path(__file__).resolve().parents[1]

ROWS = [
    {"problem": "1+1?", "solution": "$\\boxed{2}$", "reply": "<think>add</think><answer>\\boxed{2}</answer>"},
    {"problem": "2+2?", "solution": "$\\boxed{4}$", "reply": "<think>add</think><answer>\\boxed{5}</answer>"},
]

SEED = """
model_name_or_path: builtin:tiny
dataset: math.jsonl
converter: math
reward_funcs: think_format,math_accuracy
reward_weights: "0.5,1.0"
learning_rate: 1.0e-3
max_steps: 1
per_device_train_batch_size: 4
num_generations: 4
output_dir: run
"""

RECIPE = """
model_name_or_path: builtin:tiny
dataset_name: math.jsonl
dataset_prompt_column: problem
reward_funcs: [accuracy, format, tag_count, repetition_penalty]
reward_weights: [1.0, 1.0, 1.0, 0.5]
repetition_n_grams: 3
repetition_max_penalty: -1.0
learning_rate: 1.0e-3
max_steps: 1
per_device_train_batch_size: 4
num_generations: 4
output_dir: run
"""

SECTIONED = """
model: {name_or_path: builtin:tiny}
dataset: {source: math.jsonl, converter_settings: {prompt_key: problem}}
rewards:
  - {name: think_format, weight: 0.5}
  - {name: math_accuracy, weight: 1.0}
trainer: {learning_rate: 1.0e-3, max_steps: 1, per_device_train_batch_size: 4, num_generations: 4, output_dir: run}
"""

EVAL = """
dataset: {source: math.jsonl, prompt_key: problem}
rewards:
  - {name: think_format, weight: 0.5}
  - {name: math_accuracy, weight: 1.0}
completions_column: reply
output_dir: run/eval
"""


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REWARDSMITH_CACHE", str(ROOT / ".cache"))
    (tmp_path / "math.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return tmp_path


def _write(folder: Path, text: str, name: str = "run.yaml") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


def _cli(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


# -- 1. serve and the adapters read training configs of every dialect ----------------------------------------


@pytest.mark.parametrize("text", [SEED, RECIPE, SECTIONED], ids=["seed", "open-r1", "sectioned"])
def test_serve_and_the_adapters_read_a_training_config_as_train_does(folder, text):
    path = _write(folder, text)
    plan = plan_training(path)
    expected = [r.name for r in plan.rewards], list(plan.args.reward_weights or [1.0] * len(plan.rewards))
    rewards, weights = rewards_from_spec(path)
    assert ([r.name for r in rewards], weights) == expected
    service = RewardService.from_spec(str(path))
    assert (service.names, service.weights) == expected
    made, adapter_weights = rewards_for(str(path))
    assert ([r.name for r in made], adapter_weights) == expected


def test_serve_reads_the_open_r1_reward_settings(folder):
    rewards, _ = rewards_from_spec(_write(folder, RECIPE))
    repetition = next(r for r in rewards if r.name == "repetition")
    assert (repetition.ngram_size, repetition.max_penalty) == (3, -1.0)


def _dataset_view(source, converter, prompt_key):
    return Path(source).resolve(), converter or "generic", prompt_key


def _train_view(path: Path):
    plan = plan_training(path)
    data = plan.config.dataset
    weights = list(plan.args.reward_weights or [1.0] * len(plan.rewards))
    view = _dataset_view(data.source, data.converter, data.converter_settings.get("prompt_key"))
    return [r.name for r in plan.rewards], weights, view


def _eval_view(path: Path):
    from rewardsmith.compose.config import rewards_from_config

    kwargs = load_eval_config(path, {"completions_column": "reply", "output_dir": "out"})
    made, weights = rewards_from_config(kwargs["rewards"])
    view = _dataset_view(kwargs["dataset"], kwargs.get("converter"), kwargs.get("prompt_key"))
    return [r.name for r in made], weights, view


def _check_view(path: Path):  # what `rewardsmith check --config` audits
    from rewardsmith.config.rewards import config_rewards

    found = config_rewards(path)
    data = found.dataset
    view = _dataset_view(data["source"], data.get("converter"), data.get("prompt_key"))
    return [r.name for r in found.rewards], found.weights, view


def _serve_view(path: Path):
    service = RewardService.from_spec(str(path))
    return service.names, service.weights


def _adapter_view(path: Path):
    made, weights = rewards_for(str(path))
    return [r.name for r in made], weights


@pytest.mark.parametrize("text", [SEED, RECIPE, SECTIONED, EVAL], ids=["seed", "open-r1", "sectioned", "eval"])
def test_each_front_end_reads_each_dialect_the_same_way(folder, text):
    path = _write(folder, text)
    expected = _eval_view(path) if text is EVAL else _train_view(path)
    assert expected[1] != [1.0] * len(expected[0])  # the weights are the config's, not defaults
    assert _eval_view(path) == expected
    assert _check_view(path) == expected
    assert _serve_view(path) == expected[:2]
    assert _adapter_view(path) == expected[:2]


def test_check_audits_a_config_reward_on_the_config_data(folder):
    path = _write(folder, RECIPE)
    out = folder / "check"
    result = _cli("check", "math_accuracy", "--config", path, "--output-dir", out, "--no-progress", "--families", "")
    assert result.exit_code == 0, result.output
    setup = json.loads((out / "check.json").read_text())["setup"]
    assert setup["reward"] == "math_accuracy" and setup["split"] == "train" and setup["rows"] == 2
    assert Path(setup["dataset"]) == folder / "math.jsonl"
    wrong = _cli("check", "cosine", "--config", path)
    assert wrong.exit_code == 2 and "has no reward 'cosine'" in wrong.output and "math_accuracy" in wrong.output


# -- 2. eval refuses weights that do not match the rewards, as train does --------------------------------------


def test_eval_refuses_two_weights_for_four_rewards_like_train(folder):
    path = _write(folder, RECIPE.replace("[1.0, 1.0, 1.0, 0.5]", "[1.0, 0.5]"))
    trained = _cli("train", path, "--dry-run")
    assert trained.exit_code == 2 and "2 reward weights for 4 rewards" in trained.output
    evaluated = _cli("eval", path, "--completions-column", "reply", "--output-dir", folder / "out")
    assert evaluated.exit_code == 2, evaluated.output
    assert "2 reward weights for 4 rewards" in evaluated.output
    assert not (folder / "out").exists()


# -- 3. open-r1's cosine takes its correctness from math_accuracy ---------------------------------------------


def test_open_r1_cosine_is_scored_with_math_accuracy_in_train_and_eval(folder):
    path = _write(folder, RECIPE.replace("repetition_penalty]", "repetition_penalty, cosine]").replace(
        "[1.0, 1.0, 1.0, 0.5]", "[1.0, 1.0, 1.0, 0.5, 1.0]") + "cosine_max_len: 50\n")  # fmt: skip
    plan = plan_training(path)
    cosine = next(r for r in plan.rewards if r.name == "cosine")
    assert cosine.correctness.name == "math_accuracy" and cosine.max_length == 50
    kwargs = load_eval_config(path, {"completions_column": "reply", "output_dir": str(folder / "out")})
    entry = next(e for e in kwargs["rewards"] if isinstance(e, dict) and e.get("as") == "cosine")
    assert entry["kwargs"]["correctness"] == "math_accuracy" and entry["kwargs"]["max_length"] == 50
    result = _cli("eval", path, "--completions-column", "reply", "--output-dir", folder / "out", "--no-progress")
    assert result.exit_code == 0, result.output  # token lengths counted with the training model's tokenizer
    scores = [json.loads(line)["rewards"]["cosine"]["score"] for line in (folder / "out" / "results.jsonl").open()]
    assert scores[0] > 0 > scores[1]  # the right answer scores positive, the wrong one negative


# -- 4. a file that is not UTF-8 is one clear error with its path, exit 2 ------------------------------------


@pytest.mark.parametrize("command", ["train", "eval", "serve"])
def test_a_latin1_config_is_a_clear_error_with_the_path(folder, command):
    path = folder / "latin1.yaml"
    path.write_bytes(SECTIONED.encode() + "# café au lait\n".encode("latin-1"))
    args = [command, path] + (["--dry-run"] if command == "train" else [])
    result = _cli(*args)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "latin1.yaml" in text and "UTF-8" in text and "line 8" in text
    assert "Traceback" not in result.output


# -- 5. a key written twice is an error naming the key and its line -------------------------------------------


def test_a_key_written_twice_is_an_error_naming_key_and_lines(folder):
    twice = SECTIONED.replace("trainer: {learning_rate", "trainer: {learning_rate: 2.0e-3, learning_rate")
    path = _write(folder, twice)
    with pytest.raises(RewardConfigError) as caught:
        load_config(path)
    text = str(caught.value)
    assert "trainer.learning_rate" in text and "line 7" in text
    with pytest.raises(RewardConfigError, match=r"trainer\.learning_rate"):
        rewards_from_spec(path)
    with pytest.raises(RewardConfigError, match=r"trainer\.learning_rate"):
        load_eval_config(path)


def test_every_key_written_twice_is_reported_at_once_by_each_command(folder):
    path = _write(
        folder,
        """
        dataset: {source: math.jsonl}
        rewards: [think_format]
        completions_column: reply
        output_dir: out
        output_dir: out2
        trainer:
          learning_rate: 1.0e-3
          max_steps: 1
          learning_rate: 3.0e-3
        """,
    )
    for args in (["train", path, "--dry-run"], ["eval", path], ["serve", path]):
        result = _cli(*args)
        text = " ".join(result.output.split())
        assert result.exit_code == 2, (args, result.output)
        assert "'output_dir'" in text and "line 6" in text, (args, text)
        assert "trainer.learning_rate" in text and "line 10" in text, (args, text)


def test_merge_keys_and_aliases_are_not_duplicates():
    from rewardsmith.config.files import load_yaml

    text = "a: &a {x: 1, y: 2}\nb: {<<: *a, x: 3}\nc: *a\n"
    assert load_yaml(text, "inline") == {"a": {"x": 1, "y": 2}, "b": {"x": 3, "y": 2}, "c": {"x": 1, "y": 2}}


def test_eval_of_a_training_config_scores_its_evaluation_split_and_check_its_training_split(folder):
    (folder / "held_out.jsonl").write_text((folder / "math.jsonl").read_text())
    path = _write(folder, SECTIONED.replace("dataset: {source: math.jsonl,", "dataset: {source: math.jsonl, "
                                            "eval_source: held_out.jsonl, eval_max_samples: 1,"))  # fmt: skip
    kwargs = load_eval_config(path, {"completions_column": "reply", "output_dir": "out"})
    assert (Path(kwargs["dataset"]), kwargs["max_samples"], kwargs["prompt_key"]) == (
        folder / "held_out.jsonl",
        1,
        "problem",
    )
    from rewardsmith.config.rewards import config_rewards

    trained_on = config_rewards(path).dataset
    assert (Path(trained_on["source"]), trained_on["split"]) == (folder / "math.jsonl", "train")
    assert "max_samples" not in trained_on


def test_serve_reports_every_problem_of_a_training_config_at_once(folder):
    names = RECIPE.replace("accuracy, format, tag_count", "acuracy, format, tag_cuont")
    path = _write(folder, names + "code_provider: e2b\n")
    result = _cli("serve", path)
    text = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert "3 problems" in text and "rewards[0]: unknown reward 'acuracy'" in text
    assert "rewards[2]: unknown reward 'tag_cuont'" in text and "code_provider (an open-r1 recipe key)" in text


def test_a_real_server_scores_with_the_weights_of_a_seed_style_config(folder, monkeypatch):
    import httpx
    from serve_helpers import running_server

    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    path = _write(folder, SEED)
    with running_server(path) as (url, _):
        assert httpx.get(url + "/health", timeout=10).json()["rewards"] == ["think_format", "math_accuracy"]
        reply = httpx.post(url + "/score", json={"completions": [ROWS[0]["reply"], ROWS[1]["reply"]],
                           "columns": {"solution": [r["solution"] for r in ROWS]}}, timeout=60).json()  # fmt: skip
    assert reply["rewards"]["think_format"] == [1.0, 1.0] and reply["rewards"]["math_accuracy"] == [1.0, 0.0]
    assert reply["scores"] == [0.5 * 1.0 + 1.0 * 1.0, 0.5 * 1.0 + 1.0 * 0.0]  # reward_weights: "0.5,1.0"


def test_reading_the_rewards_of_a_training_config_imports_no_training_library(folder):
    path = _write(folder, SEED)
    script = (
        "import sys\nfrom rewardsmith.config.rewards import rewards_from_spec\n"
        f"rewards, weights = rewards_from_spec({str(path)!r})\n"
        "assert [r.name for r in rewards] == ['think_format', 'math_accuracy'] and weights == [0.5, 1.0]\n"
        "print([m for m in ('trl', 'torch', 'transformers', 'pydantic') if m in sys.modules])"
    )
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"  # what a verl worker or the server loads to read its rewards


def test_a_reward_file_beside_the_config_is_found_by_every_front_end_from_any_folder(folder, tmp_path, monkeypatch):
    project = folder / "project"
    project.mkdir()
    source = "def says_two(completion: str) -> float:\n    return float('2' in completion)\n"
    (project / "my_rewards.py").write_text(source)
    text = SECTIONED.replace("math.jsonl", str(folder / "math.jsonl")).replace(
        "- {name: math_accuracy, weight: 1.0}", "- {name: ./my_rewards.py:says_two, weight: 1.0}")  # fmt: skip
    path = _write(project, text)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    expected = _train_view(path)
    assert expected[0] == ["think_format", "says_two"]
    assert _check_view(path) == expected
    assert _serve_view(path) == _adapter_view(path) == expected[:2]


def test_every_front_end_counts_tokens_with_the_training_models_tokenizer(folder):
    """Completions scored from text have no token ids: check, serve and the adapters give open-r1's cosine the
    tokenizer of the model the config trains, as eval does (before, only eval did; the others failed each row)."""
    from rewardsmith.config.rewards import config_rewards
    from rewardsmith.train import training_tokenizer

    path = _write(folder, RECIPE.replace("repetition_penalty]", "repetition_penalty, cosine]").replace(
        "[1.0, 1.0, 1.0, 0.5]", "[1.0, 1.0, 1.0, 0.5, 1.0]") + "cosine_max_len: 50\n")  # fmt: skip
    kwargs = load_eval_config(path, {"completions_column": "reply", "output_dir": str(folder / "out")})
    tokenizer = next(e for e in kwargs["rewards"] if isinstance(e, dict) and e.get("as") == "cosine")["kwargs"]
    assert Path(tokenizer["tokenizer"]).is_dir()  # the built tiny model's folder
    fronts = {
        "check": config_rewards(path, model_tokenizer=training_tokenizer).rewards,
        "serve": RewardService.from_spec(str(path)).rewards,
        "adapters": rewards_for(str(path))[0],
    }
    for front, made in fronts.items():
        cosine = next(r for r in made if r.name == "cosine")
        assert cosine.tokenizer == tokenizer["tokenizer"], front
    out = folder / "check"
    result = _cli("check", "cosine", "--config", path, "--output-dir", out, "--no-progress", "--families", "")
    report = json.loads((out / "check.json").read_text())
    assert report["cost"]["errors"] == 0, result.output
