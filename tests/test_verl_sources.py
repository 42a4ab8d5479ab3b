"""verl, TinyZero and DeepScaleR reward functions and data, used as their authors write them.

The code in examples/ports/verl and examples/ports/tinyzero is written for rewardsmith in those projects'
style (a verl custom reward file that imports the scorer beside it, TinyZero's countdown scorer);
tests/data/verl/gsm8k_verl.jsonl is 8 GSM8K test rows in verl's dataset layout (``data_source``, chat
``prompt``, ``ability``, ``reward_model: {style, ground_truth}``, ``extra_info``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rewardsmith import get_reward
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.data import prepare_dataset

ROOT = Path(__file__).resolve().parents[1]
VERL = ROOT / "examples" / "ports" / "verl"
TINYZERO = ROOT / "examples" / "ports" / "tinyzero"
VERIFIERS = ROOT / "examples" / "ports" / "verifiers"
FIXTURES = ROOT / "tests" / "data" / "verl"
DATA = FIXTURES / "gsm8k_verl.jsonl"
SHARED = ROOT.parent / "shared" / "data"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real CLI in a subprocess, with only the repository on the path (not the reward file's folder)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "rewardsmith.cli", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


# -- §1: a verl custom reward is a per-sample reward ---------------------------------------------------


def test_verl_custom_reward_scores_with_its_row_and_logs_the_dict_as_metrics():
    seen = []

    def compute_score(data_source, solution_str, ground_truth, extra_info=None):
        seen.append((data_source, solution_str, ground_truth, extra_info))
        right = solution_str.strip().endswith(f"#### {ground_truth}")
        return {"score": float(right), "acc": right}

    made = get_reward(compute_score)
    logged: dict[str, float] = {}
    scores = made(
        prompts=["p", "p"],
        completions=[[{"role": "assistant", "content": "so #### 18"}], [{"role": "assistant", "content": "#### 3"}]],
        data_source=["openai/gsm8k"] * 2,
        ground_truth=["18", "18"],
        extra_info=[{"index": 0}, {"index": 1}],
        log_metric=logged.__setitem__,
    )
    assert scores == [1.0, 0.0]
    assert seen[0] == ("openai/gsm8k", "so #### 18", "18", {"index": 0})
    assert logged["compute_score/acc"] == 0.5
    assert made.required_columns == ["data_source", "ground_truth"]
    assert made.explain(completions=["#### 18"], data_source=["x"], ground_truth=["18"])[0].metrics == {"acc": True}


def test_tinyzero_scorer_from_a_file_takes_its_own_settings():
    entry = {"name": f"{TINYZERO}/countdown.py:compute_score", "kwargs": {"format_score": 0.0, "on": "sequence"}}
    made = get_reward(entry)
    truth, prompt = {"target": 8, "numbers": [3, 5]}, "User: make 8 from 3 and 5.\nAssistant: <think>"
    texts = ["</think>\n<answer>3 + 5</answer>", "</think>\n<answer>5 + 3 + 0</answer>"]
    assert made(prompts=[prompt] * 2, completions=texts, ground_truth=[truth] * 2) == [1.0, 0.0]
    assert get_reward(entry["name"])(prompts=[prompt], completions=texts[:1], ground_truth=[truth]) == [0.0]


def test_an_agent_reward_file_as_docs_show_is_a_per_sample_reward():
    made = get_reward({"name": f"{FIXTURES}/agent_reward.py:used_a_tool"})
    rollout = [
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "add", "arguments": "{}"}}]},
        {"role": "tool", "content": "4"},
        {"role": "assistant", "content": "It is 4."},
    ]
    assert made(completions=[rollout, "It is 4."]) == [1.0, 0.0]


def test_a_function_naming_no_completion_without_its_settings_is_an_error_saying_how_to_mark_it():
    with pytest.raises(RewardConfigError, match=r"cannot tell whether make_threshold\(threshold, bonus\)") as err:
        get_reward(f"{FIXTURES}/ambiguous.py:make_threshold")
    assert "`completion`" in str(err.value) and "kwargs" in str(err.value)
    made = get_reward({"name": f"{FIXTURES}/ambiguous.py:make_threshold", "kwargs": {"threshold": 2, "bonus": 0.5}})
    assert made(completions=["abc", "a"]) == [1.5, 0.5]


# -- §1: a reward file imports the modules beside it; verl's layout loads as it is ----------------------


def test_verl_layout_loads_as_is_from_jsonl_and_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [json.loads(line) for line in DATA.read_text().splitlines()]
    parquet = tmp_path / "gsm8k_verl.parquet"
    pq.write_table(pa.Table.from_pylist(rows), parquet)
    for source in (DATA, parquet):
        ds = prepare_dataset(str(source), "train")
        assert ds[0]["prompt"] == rows[0]["prompt"]
        assert ds[0]["ground_truth"] == ds[0]["answer"] == rows[0]["reward_model"]["ground_truth"] == "18"
        assert ds[0]["extra_info"]["index"] == 0 and ds[0]["data_source"] == "openai/gsm8k"
        builtin = get_reward("gsm8k_accuracy")
        batch = {k: ds[k][:2] for k in ds.column_names}
        assert builtin(completions=["#### 18", "#### 18"], **batch) == [1.0, 0.0]
    from rewardsmith.core.errors import DatasetError

    with pytest.raises(DatasetError, match=r"verl's layout .* loads as it is, without a converter"):
        prepare_dataset(str(DATA), "train", converter="gsm8k")


def test_verl_reward_file_importing_its_neighbour_runs_from_the_cli(tmp_path):
    run = cli(
        "check", f"{VERL}/verl_score.py:compute_score", "--dataset", str(DATA), "--no-progress", "--timeout", "0",
        "--families", "empty", cwd=tmp_path,
    )  # fmt: skip
    assert "No module named" not in run.stdout + run.stderr
    assert "missing a required argument" not in run.stdout + run.stderr
    assert "8 of 8 rows" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]


# -- §2: the audit never audits the wrong thing -------------------------------------------------------


def test_the_audit_reads_the_reference_from_ground_truth_and_finds_the_hedge_verls_scorer_pays(tmp_path):
    """verl's gsm8k scorer pays ``#### 18 or 20``; the audit once took ``data_source`` as the answers and passed."""
    run = cli(
        "check", f"{VERL}/verl_score.py:compute_score", "--dataset", str(DATA), "--no-progress", "--timeout", "0",
        "--families", "empty,hedging,lists,numbers", cwd=tmp_path,
    )  # fmt: skip
    out = run.stdout
    assert "reference answers ground_truth (the reward reads it)" in out, out[-3000:] + run.stderr[-2000:]
    assert "hedging/in_block_right_first" in out and run.returncode == 1
    assert "not run: numbers: no row is a number puzzle" in out


def test_an_ambiguous_reference_column_is_an_error_naming_answer_column(tmp_path):
    data = tmp_path / "two.jsonl"
    data.write_text(json.dumps({"prompt": "2+2?", "answer": "4", "target": "5"}) + "\n")
    run = cli("check", "think_format", "--dataset", str(data), "--no-progress", "--timeout", "0", cwd=tmp_path)
    assert run.returncode != 0 and "--answer-column" in run.stdout + run.stderr
    assert "'answer' or 'target'" in run.stdout + run.stderr
    chosen = cli(
        "check", "think_format", "--dataset", str(data), "--no-progress", "--timeout", "0", "--answer-column",
        "target", "--families", "empty", cwd=tmp_path,
    )  # fmt: skip
    assert "reference answers target (named with --answer-column)" in chosen.stdout, chosen.stdout + chosen.stderr


def test_families_without_reference_answers_say_why_they_did_not_run():
    from rewardsmith import check

    report = check("think_format", [{"prompt": "Say hi."}], families=["empty", "hedging"], timeout=None, progress=False)
    assert report.summary["not_run"]["hedging"].startswith("no reference answers")
    assert "--answer-column" in report.summary["not_run"]["hedging"]


def test_references_that_score_the_lowest_value_are_said_to():
    from rewardsmith import check

    def always_minus_one(data_source, solution_str, ground_truth, extra_info=None):
        return -1.0

    rows = [{"prompt": f"{a}+{a}?", "ground_truth": str(2 * a), "data_source": "x", "solution": f"#### {2 * a}"}
            for a in range(3)]  # fmt: skip
    report = check(always_minus_one, rows, families=["empty"], timeout=None, progress=False)
    assert report.summary["gold"]["same_score"] == -1.0 and report.summary["gold"]["share_at_maximum"] is None
    assert not report.passed and "not_exercised" in {f.name for f in report.findings}
    import io

    from rich.console import Console

    from rewardsmith.check.terminal import print_summary

    printed = io.StringIO()
    print_summary(report.summary, Console(file=printed, width=200))
    assert "the references scored the lowest value seen" in printed.getvalue()
    assert "score the maximum" not in printed.getvalue()


# -- §3: a shape mismatch is found before the model loads ----------------------------------------------


def _shape_config(tmp_path: Path, kwargs: dict | None = None, steps: int = 2) -> Path:
    import yaml

    entry = {"name": str(ROOT / "tests" / "data" / "trl_strings.py") + ":has_answer_tags"}
    if kwargs:
        entry["kwargs"] = kwargs
    config = {
        "model": {"name_or_path": "builtin:tiny"},
        "dataset": {"source": str(DATA), "max_samples": 8},
        "rewards": [entry],
        "trainer": {"max_steps": steps, "per_device_train_batch_size": 4, "num_generations": 4,
                    "max_completion_length": 8, "logging_steps": 1, "learning_rate": 1e-3, "use_cpu": True,
                    "bf16": False, "report_to": "none", "save_strategy": "no", "output_dir": str(tmp_path / "out")},
    }  # fmt: skip
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_a_string_function_on_chat_data_is_refused_in_the_dry_run_naming_completion_shape(tmp_path):
    run = cli("train", str(_shape_config(tmp_path)), "--dry-run", cwd=tmp_path)
    out = run.stdout + run.stderr
    assert run.returncode != 0, out[-3000:]
    assert "has_answer_tags" in out and "completion_shape: text" in out and "expected string" in out
    fixed = cli("train", str(_shape_config(tmp_path, {"completion_shape": "text"})), "--dry-run", cwd=tmp_path)
    assert fixed.returncode == 0, (fixed.stdout + fixed.stderr)[-3000:]


@pytest.mark.slow
def test_completion_shape_text_passes_strings_in_training(tmp_path, monkeypatch):
    import io

    from rich.console import Console

    from rewardsmith.train import run

    monkeypatch.setenv("REWARDSMITH_CACHE", str(ROOT / ".cache"))
    config = _shape_config(tmp_path, {"completion_shape": "text"}, steps=1)
    state = run(str(config), console=Console(file=io.StringIO())).trainer.state
    assert state.global_step == 1  # on chat data the function raised TypeError at step 1 without the setting
    assert any("rewards/has_answer_tags/mean" in h for h in state.log_history)


def test_check_without_a_config_follows_the_datas_prompt_shape():
    from rewardsmith import check

    seen: list[str] = []

    def sees(prompts, completions, **kwargs):
        seen.extend(type(p).__name__ for p in prompts)
        return [0.0] * len(completions)

    text = [{"prompt": "A conversation. User: 2+2? Assistant: <think>", "answer": "4"}]
    check(sees, text, families=["empty"], timeout=None, progress=False)
    assert set(seen) == {"str"}  # TinyZero-style text prompts stay text (they were made chat messages)
    seen.clear()
    check(sees, [{"prompt": [{"role": "user", "content": "2+2?"}], "answer": "4"}], families=["empty"],
          timeout=None, progress=False)  # fmt: skip
    assert set(seen) == {"list"}


_SEES_TRAINING_PROMPTS = """
import json, os

EXPECTED = json.loads(open(os.environ["EXPECTED_PROMPTS"], encoding="utf-8").read())


def templated(prompts, completions, answer, **kwargs):
    with open(os.environ["SEEN_PROMPTS"], "a", encoding="utf-8") as seen:
        seen.writelines(json.dumps(p) + "\\n" for p in prompts)
    for p in prompts:
        if p not in EXPECTED:
            raise ValueError(f"not a prompt training sees: {p!r}")
    return [float(a in str(c)) for c, a in zip(completions, answer)]
"""


@pytest.mark.parametrize(
    "prompt_settings",
    [
        {"conversational": False, "format_template": "Solve step by step: {prompt}\nAnswer:"},
        {"conversational": False},
        {"format_template": "Solve step by step: {prompt}\nAnswer:"},  # training makes it a chat message
    ],
    ids=["text-templated", "text", "chat-templated"],
)
def test_check_with_a_config_audits_with_the_training_prompts(tmp_path, monkeypatch, prompt_settings):
    """A reward that fails on any prompt training would not give it: the audit gives it only those."""
    import yaml

    from rewardsmith.train.config import load_config
    from rewardsmith.train.plan import prepare_datasets

    rows = [{"prompt": f"What is {a} + {b}?", "answer": str(a + b)} for a, b in ((2, 3), (4, 4), (9, 1))]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "sees.py").write_text(_SEES_TRAINING_PROMPTS)
    config = {
        "model": {"name_or_path": "tiny"},
        "dataset": {"source": "rows.jsonl", **prompt_settings},
        "rewards": ["./sees.py:templated"],
        "trainer": {"max_steps": 1},
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config))
    trained, _ = prepare_datasets(load_config(str(path)).dataset)  # the prompts training builds
    expected = [row["prompt"] for row in trained]
    assert len(expected) == 3 and (expected[0] == rows[0]["prompt"]) == (prompt_settings == {"conversational": False})
    (tmp_path / "expected.json").write_text(json.dumps(expected))
    monkeypatch.setenv("EXPECTED_PROMPTS", str(tmp_path / "expected.json"))
    monkeypatch.setenv("SEEN_PROMPTS", str(tmp_path / "seen.jsonl"))
    run = cli("check", "--config", str(path), "--output-dir", "out", "--no-progress", cwd=tmp_path)
    assert run.returncode in (0, 1), (run.stdout + run.stderr)[-3000:]
    cost = json.loads((tmp_path / "out" / "check.json").read_text())["cost"]
    assert cost["errors"] == 0 and cost["samples"] > 50, cost["first_error"]
    seen = [json.loads(line) for line in (tmp_path / "seen.jsonl").read_text().splitlines()]
    assert {json.dumps(p) for p in seen} == {json.dumps(p) for p in expected}  # every row's, and only those


# -- the ports: verl, TinyZero and verifiers code and data, unchanged, train, evaluate and check ------------------


def _port_main(path: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"port_{path.parent.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


@pytest.mark.slow
def test_the_verl_tinyzero_and_verifiers_ports_train_evaluate_and_check(tmp_path, monkeypatch):
    monkeypatch.setenv("REWARDSMITH_CACHE", str(ROOT / ".cache"))
    verl = _port_main(VERL / "main.py")(tmp_path / "verl", steps=2)
    assert verl["steps"] == 2 and verl["eval"]["compute_score"]["mean"] == 0.5
    assert verl["check"] == {"score": 1.0, "metrics": {"acc": True}}
    assert verl["audit"]["answer_column"] == "ground_truth"
    assert "hedging/in_block_right_first" in verl["audit"]["findings"]  # the scorer pays "#### 18 or 20"
    tinyzero = _port_main(TINYZERO / "main.py")(tmp_path / "tinyzero", steps=2)
    assert tinyzero["steps"] == 2 and tinyzero["check"] == {"compute_score": 1.0, "countdown": 1.0}
    assert tinyzero["eval"]["compute_score"]["min"] == 0.1 and tinyzero["eval"]["countdown"]["min"] == 0.0
    assert tinyzero["audit"] == {"answer_column": "target", "findings": []}
    pytest.importorskip("verifiers.v1")
    verifiers = _port_main(VERIFIERS / "main.py")(tmp_path / "verifiers", steps=2)
    assert verifiers["steps"] == 2 and verifiers["eval"]["GSM8KTask"]["max"] == 1.2
    assert verifiers["explain"] == {"score": 1.2, "metrics": {"boxed_format": 1.0, "correct_answer": 1.0,
                                                              "reply_chars": 12.0}}  # fmt: skip
    assert verifiers["audit"] == {"answer_column": "answer", "passed": False}


# -- verifiers: a task class with its weighted rewards and metrics is a reward ---------------------------


def test_a_verifiers_task_class_scores_with_its_own_weighted_rewards_and_metrics():
    pytest.importorskip("verifiers.v1")
    made = get_reward({"name": f"{VERIFIERS}/gsm8k_env.py:GSM8KTask"})
    result = made.explain(prompts=["1 + 1?"], completions=["So \\boxed{2}"], answer=["2"])[0]
    assert result.score == 1.2 and result.metrics == {"correct_answer": 1.0, "boxed_format": 1.0, "reply_chars": 12.0}
    assert made.scores(completions=[[{"role": "assistant", "content": "It is 3."}]], answer=["2"]) == [0.0]


def test_a_verifiers_task_runs_in_the_cli_check(tmp_path):
    pytest.importorskip("verifiers.v1")
    run = cli(
        "check", f"{VERIFIERS}/gsm8k_env.py:GSM8KTask", "--dataset", str(SHARED / "gsm8k_test.jsonl"), "--converter",
        "gsm8k", "--max-samples", "4", "--families", "empty,hedging", "--no-progress", "--timeout", "0", cwd=tmp_path,
    )  # fmt: skip
    assert "4 of 4 rows" in run.stdout and "reference answers answer" in run.stdout, run.stdout[-2000:] + run.stderr
    assert "hedging/" in run.stdout  # the task's last-number reward pays "7 or 18": the audit says so


def test_a_verl_batch_reward_function_is_a_reward_with_its_settings():
    made = get_reward({"name": f"{FIXTURES}/batch_score.py:compute_score", "kwargs": {"bonus": 0.5}})
    logged: dict[str, float] = {}
    scores = made(
        completions=["so #### 18", "#### 3"], data_source=["openai/gsm8k"] * 2, ground_truth=["18", "18"],
        log_metric=logged.__setitem__,
    )  # fmt: skip
    assert scores == [1.5, 0.5] and logged["compute_score/acc"] == 0.5
    assert made.required_columns == ["data_source", "ground_truth"] and made.optional_columns == ["extra_info"]


def test_a_deepscaler_style_reward_returning_a_bool_with_list_ground_truths_runs():
    made = get_reward({"name": f"{FIXTURES}/deepscaler_style.py:deepscaler_reward_fn"})
    texts = ["<think>2+2</think> \\boxed{4}", "\\boxed{4}", "<think>.</think> \\boxed{5}"]
    assert made(completions=texts, ground_truth=[["4", "4.0"]] * 3) == [1.0, 0.0, 0.0]
    assert made.settings == {"enable_llm": False}


def test_check_refuses_the_same_shape_mismatch_as_the_dry_run(tmp_path):
    run = cli(
        "check", f"{ROOT / 'tests' / 'data' / 'trl_strings.py'}:has_answer_tags", "--dataset", str(DATA),
        "--no-progress", "--timeout", "0", "--families", "empty", cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode != 0 and "completion_shape: text" in run.stdout + run.stderr, run.stdout[-2000:]
    fixed = cli(
        "check", f"{ROOT / 'tests' / 'data' / 'trl_strings.py'}:has_answer_tags", "completion_shape=text",
        "--dataset", str(DATA), "--no-progress", "--timeout", "0", "--families", "empty", cwd=tmp_path,
    )  # fmt: skip
    assert "8 of 8 rows" in fixed.stdout, fixed.stdout[-2000:] + fixed.stderr[-2000:]


def test_rllms_reward_fn_signature_is_a_per_sample_reward():
    def reward_fn(data_source, llm_solution, ground_truth, extra_info=None, **kwargs):
        return float(llm_solution.strip().endswith(str(ground_truth)))

    assert get_reward(reward_fn)(completions=["so 4", "so 5"], data_source=["x", "x"], ground_truth=["4", "4"]) == [
        1.0,
        0.0,
    ]


def test_on_sequence_passes_the_prompt_and_the_completion_as_tinyzero_does():
    prompt = "User: 3 and 5 make 8 how? Assistant: Let me solve this step by step.\n<think>"
    plain = get_reward(needs_the_marker)
    sequence = get_reward({"name": f"{__file__}:needs_the_marker", "kwargs": {"on": "sequence"}})
    batch = {"prompts": [prompt], "completions": ["3+5</think>\n<answer>3 + 5</answer>"], "ground_truth": ["</answer>"]}
    assert plain(**batch) == [0.0] and sequence(**batch) == [1.0]


def needs_the_marker(solution_str, ground_truth):
    """As TinyZero's scorers do, cut the text after "Assistant:" (the completion alone has no marker)."""
    return float("Assistant:" in solution_str and solution_str.rstrip().endswith(ground_truth))
