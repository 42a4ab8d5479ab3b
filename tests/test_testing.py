"""rewardsmith.testing: the helpers fail on holey rewards, pass on sound ones, and run as a real pytest file."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from check_rewards import any_number_matches, strict_answer, strict_format

from rewardsmith.testing import (
    assert_check_passes,
    assert_gold_is_max,
    assert_not_gamed,
    assert_scores,
    probe_cases,
)

ROOT = Path(__file__).resolve().parents[1]
ROWS = [
    {
        "prompt": f"Add {a} and {b}.",
        "answer": str(a + b),
        "solution": f"<think>{a}+{b}</think>\n<answer>{a + b}</answer>",
    }
    for a, b in [(2, 3), (10, 32), (7, 7)]
]


def test_assert_scores_lists_every_case_that_scores_otherwise():
    assert_scores(strict_answer, [("<answer>5</answer>", {"answer": "5"}, 1.0), {"completion": "5", "answer": "5",
                                                                                "expected": 0.0}])  # fmt: skip
    with pytest.raises(AssertionError) as caught:
        assert_scores(strict_answer, [("<answer>5</answer>", {"answer": "6"}, 1.0), ("x", {"answer": "6"}, None),
                                      ("<answer>6</answer>", {"answer": "6"}, 1.0)])  # fmt: skip
    message = str(caught.value)
    assert message.startswith("2 of 3 cases") and "case 0: expected 1.0, got 0.0" in message and "case 1" in message


def test_probe_cases_fail_a_holey_reward_and_skip_what_does_not_apply():
    cases = probe_cases(any_number_matches, ROWS)
    failed, skipped, passed = [], [], []
    for case in cases:
        try:
            assert_not_gamed(case)
        except AssertionError as exc:
            failed.append((str(case), str(exc)))
        except pytest.skip.Exception:
            skipped.append(str(case))
        else:
            passed.append(str(case))
    families = {name.split("-")[0] for name, _ in failed}
    assert {"hedging", "lists"} <= families and "empty" not in families
    assert any("as high as the reference" in message for _, message in failed)
    assert any(name.startswith("bare_answer") for name in skipped)  # no credit for the format itself
    assert len(set(map(str, cases))) == len(cases)  # ids are unique


def test_probe_cases_pass_sound_rewards():
    for sound in (strict_answer, strict_format):
        for case in probe_cases(sound, ROWS, families=["empty", "hedging", "tag_spam", "invisible", "truncated"]):
            with contextlib.suppress(pytest.skip.Exception):
                assert_not_gamed(case)
    assert_gold_is_max(strict_answer, ROWS, maximum=1.0)
    with pytest.raises(AssertionError, match="3 of 3 reference solutions score below 1"):
        assert_gold_is_max(strict_answer, [{**row, "answer": "0"} for row in ROWS], maximum=1.0)
    with pytest.raises(AssertionError, match=r"row 0: 0\.0"):
        assert_gold_is_max("gsm8k_accuracy", [{**ROWS[0], "answer": "0", "solution": "#### 5"}])


def test_assert_check_passes_lists_the_findings():
    assert_check_passes(strict_answer, ROWS, families=["empty", "hedging"], timeout=None)
    with pytest.raises(AssertionError, match="hedging/"):
        assert_check_passes(any_number_matches, ROWS, families=["empty", "hedging"], timeout=None)


def test_a_test_file_written_with_the_helpers_runs_under_pytest(tmp_path):
    test = tmp_path / "test_user_reward.py"
    test.write_text(
        textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT / "tests")!r})
        import pytest
        from check_rewards import any_number_matches, strict_answer
        from rewardsmith.testing import assert_not_gamed, probe_cases

        ROWS = {ROWS!r}

        @pytest.mark.parametrize("case", probe_cases(strict_answer, ROWS, families=["hedging"]), ids=str)
        def test_sound(case):
            assert_not_gamed(case)

        @pytest.mark.parametrize("case", probe_cases(any_number_matches, ROWS, families=["hedging"]), ids=str)
        def test_holey(case):
            assert_not_gamed(case)
    """)
    )
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                           str(test)], capture_output=True, text=True, cwd=tmp_path, timeout=300)  # fmt: skip
    tail = done.stdout.strip().splitlines()[-1]
    assert done.returncode == 1, done.stdout[-3000:]
    assert "failed" in tail and "passed" in tail
    assert "FAILED" in done.stdout and "test_holey[hedging-answer_last-row0]" in done.stdout
    assert "test_sound[" not in done.stdout.split("short test summary")[-1]
