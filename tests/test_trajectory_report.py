"""The evaluation report shows a stored trajectory turn by turn: its calls, their results, every reward's reason."""

from __future__ import annotations

import html

from rewardsmith import evaluate

LOOKUP = {"name": "lookup", "parameters": {"type": "object", "properties": {"key": {"type": "string"}}}}


def _rollout(i: int, fails: bool) -> list[dict]:
    call = {"type": "function", "function": {"name": "lookup", "arguments": {"key": f"k{i}"}}}
    result = "{'error': 'no such key'}" if fails else f"code-{i}"
    return [
        {"role": "assistant", "content": f"I will look up k{i}.", "tool_calls": [call]},
        {"role": "tool", "name": "lookup", "content": result},
        {"role": "assistant", "content": f"<answer>code-{i}</answer>"},
    ]


def test_report_shows_each_turn_its_calls_results_and_every_rewards_reason(tmp_path):
    rows = [
        {
            "prompt": f"What is the code for k{i}?",
            "answer": f"code-{i}",
            "messages": _rollout(i, fails=i == 1),
            "tools": [LOOKUP],
        }
        for i in range(3)
    ]
    report = evaluate(rows, ["tool_success", "tool_schema"], tmp_path, completions_column="messages", progress=False)
    page = html.unescape(report.report_path.read_text())
    assert "[assistant 1] I will look up k0." in page
    assert '-> call lookup({"key": "k0"})' in page and "<- result: code-0" in page
    assert "<- error: {'error': 'no such key'}" in page  # a failed call shows the tool's error
    assert "[assistant 2] <answer>code-0</answer>" in page
    assert "tool_success: 0 (0 of 1 call(s) succeeded; lookup failed" in page  # the failing rollout's reason
    assert "tool_schema: 1 (1 of 1 call(s) valid)" in page  # every reward's reason under each sample


def test_plain_completions_are_shown_as_before(tmp_path):
    rows = [{"prompt": "2 + 2?", "answer": "4", "completion": "<answer>4</answer>"}]
    report = evaluate(
        rows,
        [{"name": "length", "kwargs": {"max_length": 12, "unit": "chars"}}],
        tmp_path,
        completions_column="completion",
        progress=False,
    )
    page = html.unescape(report.report_path.read_text())
    assert "<answer>4</answer>" in page and "[assistant 1]" not in page
