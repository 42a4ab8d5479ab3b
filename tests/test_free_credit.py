"""No free credit: each way a rollout got paid for nothing, and the audit catching the rewards that pay it.

Each test here failed before its fix: an answer smuggled in a tool-call argument of plain text or one message,
a failed rollout padded with junk calls that succeed, a reward paying per different call, reasoning content
parts read as the answer, calls hidden in ``<THINK>``, ``"error": None`` read as a failure, and a greedy
matching of unordered calls.
"""

from __future__ import annotations

import json

import pytest

import rewardsmith
from rewardsmith import get_reward, reward
from rewardsmith.check.rows import Format, RowContext
from rewardsmith.check.trajectory_probes import trajectory_probes
from rewardsmith.core.inputs import Batch, completion_text
from rewardsmith.core.trajectory import trajectory

SUBMIT = '<tool_call>{"name":"submit","arguments":{"answer":"#### 18"}}</tool_call>'
OPENAI_SUBMIT = {
    "role": "assistant",
    "content": "",
    "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "submit", "arguments": '{"answer": "#### 18"}'}}
    ],
}


def _shapes(text: str) -> list:
    """One completion in every shape TRL and the others send it."""
    return [text, [{"role": "assistant", "content": text}], {"role": "assistant", "content": text}]


# -- the answer in a tool-call argument ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["gsm8k_accuracy", "math_accuracy"])
@pytest.mark.parametrize("text", [SUBMIT, f"I used the tool.\n{SUBMIT}", SUBMIT.removesuffix("</tool_call>")])
def test_an_answer_in_a_call_argument_of_text_or_one_message_scores_nothing(name, text):
    accuracy = get_reward(name)
    completions = [*_shapes(text)[:2], [OPENAI_SUBMIT]]
    assert accuracy(completions=completions, answer=["18"] * 3) == [0.0, 0.0, 0.0]
    assert trajectory(text).final_message == completion_text(text).strip()
    # the same answer said in the message still pays, in each shape
    said = f"{SUBMIT}\n#### 18"
    assert accuracy(completions=_shapes(said)[:2], answer=["18"] * 2) == [1.0, 1.0]


def test_the_batch_texts_of_every_shape_agree_with_completion_text():
    completions = [SUBMIT, "#### 18", f"<think>{SUBMIT}</think>#### 18"]
    batch = Batch.from_call(None, completions, None, {})
    assert batch.texts == ["", "#### 18", f"<think>{SUBMIT}</think>#### 18"]
    messages = Batch.from_call(None, [[{"role": "assistant", "content": c}] for c in completions], None, {})
    assert messages.texts == batch.texts


def test_the_answer_in_argument_probe_builds_every_shape():
    ctx = RowContext(0, "What is 9 * 2?", {}, answer="18")
    probes = {p.variant: p.completion for p in trajectory_probes(ctx, Format("hashes"))}
    shapes = [v for v in probes if v.startswith("answer_in_argument")]
    assert shapes == [
        "answer_in_argument",
        "answer_in_argument_text",
        "answer_in_argument_message",
        "answer_in_argument_openai",
    ]
    assert isinstance(probes["answer_in_argument_text"], str)
    assert len(probes["answer_in_argument_message"]) == 1 and len(probes["answer_in_argument_openai"]) == 1
    for variant in shapes:
        rollout = trajectory(probes[variant])
        assert rollout.calls[0].arguments == {"answer": "#### 18"} and "18" not in rollout.final_message


def test_the_audit_flags_a_reward_that_reads_answers_in_call_arguments():
    def naive(completions, answer, **kwargs):  # a TRL batch function reading the raw completion
        texts = [c if isinstance(c, str) else json.dumps(c) for c in completions]
        return [float(f"#### {a}" in t) for t, a in zip(texts, answer)]

    rows = _tool_rows()
    report = rewardsmith.check(naive, rows, families=["trajectory"], timeout=None, progress=False)
    shapes = {
        "answer_in_argument",
        "answer_in_argument_text",
        "answer_in_argument_message",
        "answer_in_argument_openai",
    }
    assert {f"trajectory/{v}" for v in shapes} <= {f.name for f in report.findings}
    passing = rewardsmith.check("gsm8k_accuracy", rows, families=["trajectory"], timeout=None, progress=False)
    assert passing.passed, [f.message for f in passing.findings]


# -- junk calls ---------------------------------------------------------------------------------------------------


def _call(name: str, **arguments) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def _padded(failed: int, junk: int) -> list[dict]:
    out: list[dict] = []
    for i in range(failed):
        out += [{"role": "assistant", "content": "", "tool_calls": [_call("add", a=i, b=0)]}]
        out += [{"role": "tool", "name": "add", "content": "{'error': 'bad input'}"}]
    for i in range(junk):
        out += [{"role": "assistant", "content": "", "tool_calls": [_call("add", a=i, b=1)]}]
        out += [{"role": "tool", "name": "add", "content": str(i + 1)}]
    return [*out, {"role": "assistant", "content": "#### 18"}]


ADD = {
    "name": "add",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}


def test_padding_a_failed_rollout_with_junk_calls_that_succeed_earns_nothing():
    success = get_reward("tool_success")
    assert success(completions=[_padded(1, 0), _padded(1, 99), _padded(0, 1)]) == [0.0, 0.0, 1.0]
    schema = get_reward("tool_schema", tools=[ADD])
    bad = [{"role": "assistant", "content": "", "tool_calls": [_call("add", a="x", b=1)]}, *_padded(0, 99)]
    assert schema(completions=[bad, _padded(0, 3)]) == [0.0, 1.0]


def _tool_rows() -> list[dict]:
    return [
        {
            "prompt": f"What is {a} + {b}? Use the add tool.",
            "answer": str(a + b),
            "tools": [ADD],
            "tool_calls": [{"name": "add", "arguments": {"a": a, "b": b}}],
        }
        for a, b in [(3, 4), (10, 5), (2, 9), (6, 6)]
    ]


@reward
def success_share(trajectory) -> float | None:
    """The share of calls that succeeded: what tool_success was, and what padding games."""
    calls = trajectory.calls
    return sum(c.ok for c in calls) / len(calls) if calls else None


@reward
def pays_per_different_call(trajectory) -> float:
    """A quarter per different successful call: four junk calls and no answer earn 1."""
    different = {(c.name, json.dumps(c.arguments, sort_keys=True)) for c in trajectory.calls if c.ok}
    return min(1.0, 0.25 * len(different))


def _findings(spec) -> set[str]:
    report = rewardsmith.check(spec, _tool_rows(), families=["trajectory"], timeout=None, progress=False)
    return {f.name for f in report.findings}


def test_the_audit_flags_a_share_of_successful_calls_padded_with_junk():
    assert "trajectory/padded_calls" in _findings(success_share)


def test_the_audit_flags_a_reward_paying_per_different_call():
    found = _findings(pays_per_different_call)
    assert "trajectory/junk_calls" in found
    assert pays_per_different_call(completions=[[*_padded(0, 4)[:-1], {"role": "assistant", "content": ""}]]) == [1.0]


# -- reasoning content, <THINK>, error: None ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["reasoning", "thinking"])
def test_a_reasoning_part_is_not_the_answer(kind):
    final = {"role": "assistant", "content": [{"type": kind, "text": "#### 18"}, {"type": "text", "text": "no idea"}]}
    rollout = [OPENAI_SUBMIT, {"role": "tool", "tool_call_id": "c1", "content": "ok"}, final]
    accuracy = get_reward("gsm8k_accuracy")
    assert accuracy(completions=[[final], rollout], answer=["18", "18"]) == [0.0, 0.0]
    assert trajectory(rollout).final_message == "no idea"
    anthropic = {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": "#### 18"}, {"type": "text", "text": "#### 18"}],
    }
    assert accuracy(completions=[[anthropic]], answer=["18"]) == [1.0]  # the text part still counts


@pytest.mark.parametrize("opening", ["<THINK>", "<Think>", '<think id="r1">', "<think\n mode='plan'>"])
def test_calls_inside_the_reasoning_are_hidden_in_any_case_and_with_attributes(opening):
    call = '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>'
    closing = "</THINK>" if opening.isupper() else "</think>"
    assert trajectory(f"{opening}{call}{closing}done").calls == ()
    assert trajectory(f"{opening}{call}").calls == ()  # an unclosed reasoning hides what follows it
    assert get_reward("tool_call_match")(
        completions=[f"{opening}{call}{closing}"], tool_calls=[[{"name": "add", "arguments": {"a": 1, "b": 2}}]]
    ) == [0.0]


@pytest.mark.parametrize(
    "content",
    ['{"error": null, "result": 4}', "{'error': None, 'result': 4}", '{"result": 4, "error": ""}', {"error": None}],
)
def test_a_result_whose_error_is_none_is_no_failure(content):
    rollout = [
        {"role": "assistant", "content": "", "tool_calls": [_call("add", a=1, b=3)]},
        {"role": "tool", "name": "add", "content": content},
        {"role": "assistant", "content": "#### 4"},
    ]
    assert trajectory(rollout).failed_calls == 0 and trajectory(rollout).calls[0].ok
    assert get_reward("tool_success")(completions=[rollout]) == [1.0]
    openai = [
        dict(rollout[0], tool_calls=[dict(rollout[0]["tool_calls"][0], id="c1")]),
        dict(rollout[1], tool_call_id="c1"),
        rollout[2],
    ]
    assert trajectory(openai).failed_calls == 0


def test_an_error_anywhere_in_the_result_object_is_a_failure():
    rollout = [
        {"role": "assistant", "content": "", "tool_calls": [_call("add", a=1, b=3)]},
        {"role": "tool", "name": "add", "content": '{"result": null, "error": "timed out"}'},
        {"role": "assistant", "content": "#### 4"},
    ]
    assert trajectory(rollout).failed_calls == 1 and trajectory(rollout).calls[0].error is not None


# -- unordered tool_call_match ----------------------------------------------------------------------------------


def test_unordered_calls_are_matched_optimally_not_greedily():
    expected = [{"name": "search", "arguments": {"q": "a"}}, {"name": "search", "arguments": {"q": "a", "page": 2}}]
    made = [
        {"role": "assistant", "content": "", "tool_calls": [_call("search", q="a", page=2), _call("search", q="a")]},
        {"role": "tool", "content": "x"},
        {"role": "tool", "content": "y"},
    ]
    match = get_reward("tool_call_match", arguments="expected_only")
    assert match(completions=[made], tool_calls=[expected]) == [1.0]
    within = get_reward("tool_call_match", tolerance=0.1)
    near = [{"name": "f", "arguments": {"x": 100}}, {"name": "f", "arguments": {"x": 115}}]
    calls = [{"role": "assistant", "content": "", "tool_calls": [_call("f", x=104), _call("f", x=99)]}]
    assert within(completions=[calls], tool_calls=[near]) == [1.0]
