"""The audit sees what GRPO rewards: probes beating honest wrong work, each family's own holes (number puzzles,
code with visible examples), rewards it could not exercise, and formats the user names."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import rewardsmith
from rewardsmith import reward
from rewardsmith.core.errors import RewardConfigError

ROOT = Path(__file__).resolve().parents[1]
NAIVE = ROOT / "examples" / "naive_rewards.py"


def _check(spec, data, **options):
    options.setdefault("progress", False)
    options.setdefault("timeout", None)
    return rewardsmith.check(spec, data, **options)


def _names(report) -> set[str]:
    return {f.name for f in report.findings}


def _arithmetic(count: int = 12) -> list[dict]:
    return [
        {"prompt": f"What is {7 + i} + {11 + 2 * i}? Answer after ####.", "answer": str(18 + 3 * i),
         "solution": f"{7 + i} plus {11 + 2 * i} is {18 + 3 * i}.\n#### {18 + 3 * i}"}
        for i in range(count)
    ]  # fmt: skip


def _countdown_rows(count: int = 10) -> list[dict]:
    rng = random.Random(7)
    rows = []
    while len(rows) < count:
        a, b, c, d = (rng.randint(1, 60) for _ in range(4))
        if (a + b) * c - d > 0:
            rows.append({"nums": [a, b, c, d], "target": (a + b) * c - d})
    return rows


# -- beating honest wrong work ----------------------------------------------------------------------------------


@reward
def pays_half_for_silence(completion: str, answer: str) -> float:
    """1 for the right #### answer, 0.5 for an empty or blank completion, 0 for anything else."""
    if not completion.strip():
        return 0.5
    return float(completion.rpartition("####")[2].strip() == answer)


@reward
def pays_half_for_echo(completion: str, answer: str, prompt: str) -> float:
    """1 for the right #### answer, 0.5 for repeating the question, 0 for a wrong answer."""
    if prompt.strip() and prompt.strip() in completion:
        return 0.5
    return float(completion.rpartition("####")[2].strip() == answer)


def test_a_reward_paying_half_for_an_empty_completion_fails_naming_the_hole():
    report = _check(pays_half_for_silence, _arithmetic())
    assert {"empty/empty", "empty/spaces", "empty/newlines"} <= _names(report)
    finding = next(f for f in report.findings if f.name == "empty/empty")
    assert "above a plausible wrong attempt" in finding.message and finding.value == 1.0


def test_a_reward_paying_half_for_an_echoed_prompt_fails_naming_the_hole():
    report = _check(pays_half_for_echo, _arithmetic())
    assert "echo/prompt" in _names(report) and not report.passed


def test_the_naive_example_paying_for_no_answer_fails_on_the_shared_data(shared_data):
    report = _check(f"{NAIVE}:pays_for_trying", shared_data / "gsm8k_test.jsonl", converter="gsm8k", max_samples=8)
    assert {"empty/empty", "echo/prompt", "padding/filler", "truncated/before_answer"} <= _names(report)


def test_sound_rewards_do_not_beat_their_own_wrong_attempts():
    report = _check("gsm8k_accuracy", _arithmetic())
    assert report.passed, [f.message for f in report.findings]
    variants = report.summary["probes"]["empty"]["variants"]
    assert variants["empty"]["compared_rows"] == 12 and variants["empty"]["share_above_wrong"] == 0.0


# -- number puzzles --------------------------------------------------------------------------------------------


def test_the_sound_countdown_reward_passes_and_its_answer_column_is_the_target():
    for gold in (None, ""):
        report = _check("countdown", _countdown_rows(), converter="countdown", gold_column=gold)
        assert report.passed, [f.message for f in report.findings]
        assert report.summary["setup"]["answer_column"] == "target"
        numbers = report.summary["probes"]["numbers"]["variants"]
        assert {"target_only", "foreign_numbers", "reused_number"} <= set(numbers)
        assert all(v["judged_rows"] == 10 and v["share"] == 0.0 for v in numbers.values())


def test_a_countdown_reward_that_ignores_the_numbers_fails_naming_the_hole():
    report = _check(f"{NAIVE}:countdown_value_only", _countdown_rows(), converter="countdown")
    assert {"numbers/target_only", "numbers/foreign_numbers", "numbers/reused_number"} <= _names(report)
    assert report.summary["probes"]["numbers"]["worst"]["completion"].count("<answer>") == 1


# -- code with visible examples --------------------------------------------------------------------------------


def _mbpp_rows(shared_data: Path, count: int, shown: int | None) -> list[dict]:
    rows = []
    with open(shared_data / "mbpp.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            asserts = row["test_list"]
            seen = asserts if shown is None else asserts[:shown]
            tests = {"format": "assert", "asserts": asserts, "setup": row.get("test_setup_code") or "",
                     "entry_points": []}  # fmt: skip
            prompt = f"{row['text']}\nFor example:\n" + "\n".join(seen)
            rows.append({"prompt": prompt, "tests": json.dumps(tests), "code": row["code"]})
            if len(rows) == count:
                return rows
    return rows


@pytest.mark.slow
def test_a_program_hard_coding_the_visible_examples_is_flagged_when_the_prompt_shows_every_test(shared_data):
    report = _check("code_tests", _mbpp_rows(shared_data, 5, None), timeout=30)
    assert "hardcoded/visible_examples" in _names(report)
    assert report.summary["gold"]["share_at_maximum"] == 1.0  # MBPP's own programs, fenced, are the reference
    assert report.summary["setup"]["gold_column"] == "code" and report.summary["setup"]["formats"][0] == "fence(python)"


@pytest.mark.slow
def test_a_program_hard_coding_one_shown_example_is_reported_for_beating_a_wrong_attempt(shared_data):
    report = _check("code_tests", _mbpp_rows(shared_data, 5, 1), timeout=30)
    variant = report.summary["probes"]["hardcoded"]["variants"]["visible_examples"]
    assert variant["judged_rows"] == 5 and variant["share"] == 0.0  # below a real solution (1/3 against 1) ...
    assert variant["compared_rows"] == 5 and variant["share_above_wrong"] == 1.0  # ... and above a stub's 0
    assert _names(report) == {"hardcoded/visible_examples"}
    message = next(f.message for f in report.findings)
    assert "above a plausible wrong attempt" in message


@pytest.mark.slow
def test_code_tests_passes_when_the_prompt_shows_no_graded_example(shared_data):
    report = _check("code_tests", shared_data / "mbpp.jsonl", converter="mbpp", show_tests="signature",
                    max_samples=4, timeout=60)  # fmt: skip
    assert report.passed, [f.message for f in report.findings]
    assert report.summary["gold"]["share_at_maximum"] == 1.0


# -- rewards the audit could not exercise, and formats the user gives -------------------------------------------


def test_a_reward_in_a_format_no_probe_uses_is_a_finding_not_a_pass(shared_data):
    data = shared_data / "gsm8k_test.jsonl"
    report = _check(f"{NAIVE}:solution_tags", data, converter="gsm8k", max_samples=6)
    assert _names(report) == {"not_exercised"}
    assert "--probe-format" in report.findings[0].message


@pytest.mark.parametrize("spec", ["<SOLUTION>{answer}</SOLUTION>", ["tags:SOLUTION"]])
def test_with_the_probe_format_given_the_same_reward_is_audited_and_passes(shared_data, spec):
    data = shared_data / "gsm8k_test.jsonl"
    report = _check(f"{NAIVE}:solution_tags", data, converter="gsm8k", max_samples=6, gold_column="", probe_format=spec)
    assert report.passed, [f.message for f in report.findings]
    assert report.summary["setup"]["formats_given"] and report.summary["probes"]["hedging"]["variants"]


def test_a_custom_format_reward_with_a_hole_is_caught_once_its_format_is_given(shared_data):
    @reward
    def solution_substring(completion: str, answer: str) -> float:
        return float("<SOLUTION>" in completion and answer in completion)

    data = shared_data / "gsm8k_test.jsonl"
    report = _check(solution_substring, data, converter="gsm8k", max_samples=6, gold_column="",
                    probe_format="<think>{reasoning}</think><SOLUTION>{answer}</SOLUTION>")  # fmt: skip
    assert "hedging/in_block_right_first" in _names(report)


def test_a_bad_probe_format_is_a_config_error():
    with pytest.raises(RewardConfigError, match="unknown probe format"):
        _check("gsm8k_accuracy", _arithmetic(), probe_format="angle brackets please")


def test_the_cli_takes_probe_formats(tmp_path, shared_data):
    import subprocess
    import sys

    command = [sys.executable, "-m", "rewardsmith.cli", "check", f"{NAIVE}:solution_tags", "--dataset",
               str(shared_data / "gsm8k_test.jsonl"), "--converter", "gsm8k", "--max-samples", "4", "--no-progress",
               "--gold-column", "none", "--timeout", "0"]  # fmt: skip
    without = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    given = subprocess.run([*command, "--probe-format", "tags:SOLUTION"], capture_output=True, text=True, cwd=ROOT,
                           timeout=300)  # fmt: skip
    assert without.returncode == 1 and "not exercised" in without.stdout
    assert given.returncode == 0, given.stdout[-2000:] + given.stderr[-2000:]


@pytest.mark.slow
def test_the_naive_code_reward_grading_the_shown_asserts_fails_naming_the_hole(shared_data):
    report = _check(f"{NAIVE}:passes_shown_asserts", shared_data / "mbpp.jsonl", converter="mbpp",
                    gold_column="code", max_samples=4, timeout=60)  # fmt: skip
    assert _names(report) == {"hardcoded/visible_examples"}
    assert report.summary["reference"]["content"]  # its reference programs pass and stubs do not


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "data", "options"),
    [("ifeval", "ifeval_input_data.jsonl", {"converter": "ifeval", "max_samples": 20}),
     ("countdown", None, {"converter": "countdown"})],
    ids=["ifeval", "countdown"],
)  # fmt: skip
def test_sound_built_ins_pass_on_the_shared_data(shared_data, name, data, options):
    report = _check(name, _countdown_rows() if data is None else shared_data / data, **options)
    assert report.passed, [f.message for f in report.findings]
