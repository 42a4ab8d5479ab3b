"""The reward audit: holes are flagged, sound rewards with their own gold data are not, every check reports."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import rewardsmith
from rewardsmith.check import Thresholds
from rewardsmith.http.testing import LocalChatServer
from tests.process_helpers import default_sigint

ROOT = Path(__file__).resolve().parents[1]
NAIVE = ROOT / "examples" / "naive_rewards.py"
REWARDS = ROOT / "tests" / "check_rewards.py"


def _rows(count: int = 24) -> list[dict]:
    """Arithmetic rows with a reference answer and a reference solution in the <think>/<answer> format."""
    rows = []
    for i in range(count):
        a, b = 7 + 3 * i, 11 + 5 * i
        rows.append(
            {
                "prompt": f"Add {a} and {b}. Think inside <think></think>, answer inside <answer></answer>.",
                "answer": str(a + b),
                "solution": f"<think>\n{a} plus {b} makes {a + b}.\n</think>\n<answer>\n{a + b}\n</answer>",
            }
        )
    return rows


def _check(reward, data, **options):
    options.setdefault("progress", False)
    return rewardsmith.check(reward, data, **options)


def _names(report) -> set[str]:
    return {f.name for f in report.findings}


def _families(report) -> set[str]:
    return {f.name.split("/")[0] for f in report.findings if f.check == "probes"}


# -- holes are found ----------------------------------------------------------------------------------------


def test_the_naive_last_number_reward_is_flagged_for_hedging_and_lists(shared_data):
    report = _check(f"{NAIVE}:last_number_gsm8k", shared_data / "gsm8k_test.jsonl", converter="gsm8k", max_samples=15)
    assert {"hedging/answer_last", "hedging/in_block_right_last", "lists/right_last"} <= _names(report)
    assert report.summary["gold"]["share_at_maximum"] == 1.0  # its right answers still score right
    worst = report.summary["probes"]["hedging"]["worst"]
    assert worst["score"] == 1.0 and worst["reference_score"] == 1.0 and worst["completion"]


def test_the_naive_regex_format_reward_is_flagged_for_empty_blocks_tag_spam_and_invisible_content(shared_data):
    report = _check(f"{NAIVE}:regex_format", shared_data / "gsm8k_test.jsonl", converter="gsm8k", gold_column="",
                    max_samples=15)  # fmt: skip
    assert report.summary["reference"]["format"] and not report.summary["reference"]["content"]
    names = _names(report)
    assert {"format_only/empty_blocks", "tag_spam/repeated_blocks", "tag_spam/nested_blocks"} <= names
    assert {"tag_spam/text_after_answer", "invisible/invisible_blocks"} <= names  # re.MULTILINE's `$`, invisible text


def test_the_naive_substring_math_reward_is_flagged_for_hedging_and_lists(shared_data):
    report = _check(f"{NAIVE}:substring_math", shared_data / "math500_test.jsonl", converter="math", max_samples=15)
    assert {"hedging", "lists", "tag_spam"} <= _families(report)
    assert "hedging/answer_first" in _names(report) and "hedging/answer_last" in _names(report)


@pytest.mark.parametrize(
    ("reward", "expected"),
    [
        ("any_number_matches", {"hedging", "lists", "tag_spam"}),
        ("rewards_length", {"padding", "huge"}),
        ("answer_tag_present", {"format_only", "hedging", "lists"}),
    ],
)
def test_broken_rewards_on_their_own_gold_data_are_flagged(reward, expected):
    report = _check(f"{REWARDS}:{reward}", _rows())
    assert expected <= _families(report), report.findings


def test_a_reward_that_hangs_on_long_text_times_out_and_the_audit_goes_on():
    start = time.monotonic()
    report = _check(f"{REWARDS}:quadratic_on_long_text", _rows(2), families=["empty", "huge"], timeout=2)
    assert time.monotonic() - start < 300  # six 2 s timeouts, not six hour-long hangs
    cost = report.summary["cost"]
    assert cost["timeouts"] == 6 and cost["first_timeout"]["family"] == "huge"  # three 1 MB probes a row
    assert report.summary["probes"]["empty"]["variants"]["empty"]["failures"] == 0  # the worker was replaced
    assert "timeouts" in _names(report)


def test_a_reward_that_crashes_is_reported_with_its_error():
    report = _check(f"{REWARDS}:crashes_on_empty", _rows(6), families=["empty", "format_only"])
    cost = report.summary["cost"]
    assert cost["errors"] >= 6 and "IndexError" in cost["first_error"]["reason"]
    assert "errors" in _names(report)


# -- sound rewards raise nothing ----------------------------------------------------------------------------


def test_sound_rewards_with_their_own_gold_data_raise_nothing():
    for name in ("strict_answer", "strict_format"):
        report = _check(f"{REWARDS}:{name}", _rows())
        assert report.passed, (name, [f.message for f in report.findings])
        assert report.summary["gold"]["share_at_maximum"] == 1.0
        judged = [v for f in report.summary["probes"].values() for v in f["variants"].values() if v["applies"]]
        assert judged and all(v["judged_rows"] == 24 or v["judged_rows"] > 0 for v in judged)
    assert report.summary["reference"]["format"] and not report.summary["reference"]["content"]


#: Holes of today's built-in rewards that the probes find (true findings: hedged answers they accept).
KNOWN_TODAY = {
    "gsm8k_accuracy": {"hedging/answer_first", "hedging/answer_lines", "lists/right_last"},
    "math_accuracy": {"hedging/answer_lines"},
}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("reward", "data", "converter"),
    [("gsm8k_accuracy", "gsm8k_test.jsonl", "gsm8k"), ("math_accuracy", "math500_test.jsonl", "math")],
)
def test_built_in_accuracy_rewards_on_the_shared_data_have_no_false_finding(shared_data, reward, data, converter):
    report = _check(reward, shared_data / data, converter=converter, max_samples=60, workers=2)
    assert report.summary["gold"]["share_at_maximum"] == 1.0
    assert report.summary["cost"]["errors"] == 0 and report.summary["cost"]["timeouts"] == 0
    assert _names(report) <= KNOWN_TODAY[reward], [f.message for f in report.findings]
    assert not report.summary["reference"]["format"] and report.summary["reference"]["content"]


# -- labels, a second opinion, signal ------------------------------------------------------------------------


def test_label_agreement_counts_false_positives_and_negatives_exactly():
    rows = _rows(8)
    for i, row in enumerate(rows):
        right = f"<think>sum</think><answer>{row['answer']}</answer>"
        wrong = f"<think>sum</think><answer>{int(row['answer']) + 1}</answer>"
        # rows 0-3: labels true; 4-5: a wrong completion labelled right (false negative); 6-7: a hedge labelled
        # wrong that `any_number_matches` passes (false positive)
        row["completion"] = right if i < 4 else wrong if i < 6 else f"{int(row['answer']) + 1} or {row['answer']}"
        row["label"] = i < 6
    report = _check(f"{REWARDS}:any_number_matches", rows, families=[], completions_column="completion",
                    labels_column="label")  # fmt: skip
    labels = report.summary["labels"]
    assert (labels["samples"], labels["false_positives"], labels["false_negatives"]) == (8, 2, 2)
    assert labels["false_positive_rate"] == 1.0 and labels["false_negative_rate"] == pytest.approx(2 / 6)
    assert {"false_positive", "false_negative"} <= _names(report)
    assert labels["false_positive_examples"][0]["row"] == 6


def test_against_lists_where_two_rewards_disagree():
    report = _check(f"{REWARDS}:strict_answer", _rows(6), families=["hedging"], against=f"{REWARDS}:any_number_matches",
                    thresholds={"max_disagreement": 0.05})  # fmt: skip
    other = report.summary["against"]
    assert other["other"] == "any_number_matches" and other["disagreements"] > 0
    assert all(ex["score"] == 0.0 and ex["other_score"] == 1.0 for ex in other["examples"])
    assert "disagreement" in _names(report)


def test_signal_from_a_column_of_completion_lists():
    rows = _rows(10)
    for i, row in enumerate(rows):
        good, bad = f"<answer>{row['answer']}</answer>", "<answer>0</answer>"
        row["samples"] = [good, bad, good] if i < 3 else [bad, bad, bad]
    report = _check(f"{REWARDS}:strict_answer", rows, families=[], completions_column="samples")
    signal = report.summary["signal"]
    assert signal["groups"] == 10 and signal["tied_share"] == pytest.approx(0.7)
    assert not any(f.check == "signal" for f in report.findings)
    strict = _check(f"{REWARDS}:strict_answer", rows, families=[], completions_column="samples",
                    thresholds=Thresholds(max_tied=0.5))  # fmt: skip
    assert "tied" in _names(strict)


def test_signal_from_a_model_sampled_through_an_openai_compatible_server(tmp_path):
    """The CLI wires an evaluation backend as the sampler: a real local server answers."""
    calls: dict[str, int] = {}
    lock = threading.Lock()

    def respond(request):  # each prompt's replies alternate right, wrong, however its requests interleave
        with lock:
            calls[request.text] = calls.get(request.text, 0) + 1
            return "<answer>17</answer>" if calls[request.text] % 2 else "<answer>0</answer>"

    rows = [{"prompt": f"What is 8 + 9? (variant {i})", "answer": "17"} for i in range(3)]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with LocalChatServer(respond) as server:
        done = _cli("check", f"{REWARDS}:strict_answer", "--dataset", str(data), "--families", "empty", "--model", "m",
                    "--base-url", server.base_url, "--n", "4", "--output-dir", str(tmp_path / "out"))  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((tmp_path / "out" / "check.json").read_text())
    assert summary["signal"]["groups"] == 3 and summary["signal"]["source"] == ["sampled"]
    assert summary["signal"]["tied_share"] == 0.0 and sorted(calls.values()) == [4, 4, 4]


# -- the command, the files, the page -----------------------------------------------------------------------


def _cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}
    command = [sys.executable, "-m", "rewardsmith.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300, **kwargs)


def test_cli_exit_status_files_and_summary(tmp_path, shared_data):
    data = shared_data / "gsm8k_test.jsonl"
    flagged = _cli("check", f"{NAIVE}:last_number_gsm8k", "--dataset", str(data), "--converter", "gsm8k",
                   "--max-samples", "6", "--output-dir", str(tmp_path / "a"), "--no-progress")  # fmt: skip
    assert flagged.returncode == 1, flagged.stderr
    assert "findings" in flagged.stdout and "hedging" in flagged.stdout
    summary = json.loads((tmp_path / "a" / "check.json").read_text())
    assert not summary["passed"] and summary["complete"] and summary["setup"]["rows_checked"] == 6
    assert (tmp_path / "a" / "check.html").read_text().startswith("<!DOCTYPE html>")
    relaxed = _cli("check", f"{NAIVE}:last_number_gsm8k", "--dataset", str(data), "--converter", "gsm8k",
                   "--max-samples", "6", "--families", "empty,padding", "--no-progress")  # fmt: skip
    assert relaxed.returncode == 0, relaxed.stdout + relaxed.stderr
    allowed = _cli("check", f"{NAIVE}:last_number_gsm8k", "--dataset", str(data), "--converter", "gsm8k",
                   "--max-samples", "6", "--max-share", "1", "--max-closeness", "1", "--no-progress")  # fmt: skip
    assert allowed.returncode == 0, allowed.stdout
    wrong = _cli("check", "gsm8k_acuracy", "--dataset", str(data))
    assert wrong.returncode == 2 and "Did you mean" in wrong.stderr


def test_ctrl_c_keeps_what_was_done(tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows(200)))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "rewardsmith.cli", "check", f"{REWARDS}:slow_exact", "--dataset", str(data),
               "--families", "empty", "--timeout", "0", "--output-dir", str(out)]  # fmt: skip
    proc = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint
    )
    # Wait for rows to be done, however long start-up takes on a busy machine: the first progress line comes
    # after 10 s of checking at 0.1 s per sample, so it reports some of the 200 rows and never all of them.
    for line in proc.stderr:
        if re.match(r"check: [1-9][\d,]*/200 rows", line):
            break
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stdout + stderr
    summary = json.loads((out / "check.json").read_text())
    assert summary["complete"] is False and 0 < summary["setup"]["rows_checked"] < 200
    assert summary["probes"]["empty"]["probes"] == 3 * summary["setup"]["rows_checked"]


@pytest.mark.slow
def test_check_page_renders_offline_in_chromium_with_hostile_text_escaped(tmp_path):
    from test_eval_report import HOSTILE, _Elements, _render

    rows = _rows(6)
    rows[0]["prompt"] = HOSTILE
    rows[1]["solution"] = HOSTILE
    report = _check(f"{NAIVE}:regex_format", rows, output_dir=tmp_path / "out")
    page = report.html_path.read_text()
    assert "<script>document.title" not in page and 'onerror="alert' not in page
    done = _render(report.html_path.as_uri(), tmp_path, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    parser = _Elements()
    parser.feed(done.stdout)
    tags = [t for t, _ in parser.tags]
    body = next(attrs for t, attrs in parser.tags if t == "body")
    families = report.summary["probes"]  # one bar per family that had probes on these rows
    assert len(families) >= 10, sorted(families)
    assert body.get("data-ready") == "true" and tags.count("svg") == 1 and tags.count("rect") == len(families)
    assert "img" not in tags and "<b>bold</b>" not in done.stdout  # nothing hostile became markup...
    assert "&lt;b&gt;bold&lt;/b&gt;" in done.stdout  # ...it is shown as text
    assert "pwned" not in done.stdout.split("<title>")[1].split("</title>")[0]
    assert "&lt;/script&gt;" in done.stdout
    shot = tmp_path / "check.png"
    done = _render(report.html_path.as_uri(), tmp_path, f"--screenshot={shot}", "--window-size=1200,1600")
    assert done.returncode == 0 and shot.stat().st_size > 10_000


def test_rewardsmith_check_is_the_package_and_runs_an_audit():
    import rewardsmith.check as package
    from rewardsmith.check import audit, probes

    assert rewardsmith.check is package and callable(package)
    assert package.probes is probes and package.audit is audit
    report = rewardsmith.check("think_format", _rows(3), families=["empty"], timeout=None, progress=False)
    assert report.passed and report.summary["probes"]["empty"]["probes"] == 9
