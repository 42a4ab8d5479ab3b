"""Trajectories as inputs: one form for every source shape, and the final message as what the model answers."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardsmith import get_reward, reward
from rewardsmith.core.describe import describe_reward
from rewardsmith.core.inputs import Batch
from rewardsmith.core.trajectory import trajectory


def trl_rollout(answer_text: str = "<answer>4</answer>", result: str = "4") -> list[dict]:
    """A completion as TRL 1.16's tool loop leaves it (parsed calls with dict arguments, unnamed-id tool messages)."""
    call = {"type": "function", "function": {"name": "add", "arguments": {"a": 2, "b": 2}}}
    return [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "name": "add", "content": result},
        {"role": "assistant", "content": answer_text},
    ]


def openai_rollout() -> list[dict]:
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 2}'}},
        {"id": "c2", "type": "function", "function": {"name": "mul", "arguments": '{"a": 3, "b": 3}'}},
    ]
    return [
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c2", "content": "9"},  # out of order: matched by id
        {"role": "tool", "tool_call_id": "c1", "content": "4"},
        {"role": "assistant", "content": "4 and 9"},
    ]


def text_rollout() -> list[dict]:
    return [
        {
            "role": "assistant",
            "content": 'Let me add. <tool_call>{"name": "add", "arguments": {"a": 2, "b": 2}}</tool_call>',
        },
        {"role": "tool", "content": "4"},
        {"role": "assistant", "content": "<answer>4</answer>"},
    ]


@pytest.mark.parametrize("rollout", [trl_rollout(), text_rollout()], ids=["trl", "text"])
def test_every_source_shape_reads_the_same(rollout):
    t = trajectory(rollout)
    assert [(c.name, c.arguments, c.result, c.ok) for c in t.calls] == [("add", {"a": 2, "b": 2}, "4", True)]
    assert t.final_message == "<answer>4</answer>"
    assert t.turns == 2


def test_openai_results_attach_by_id():
    t = trajectory(openai_rollout())
    assert [(c.name, c.result) for c in t.calls] == [("add", "4"), ("mul", "9")]
    assert t.final_message == "4 and 9"


def test_a_call_inside_the_reasoning_is_not_a_call():
    text = '<think>maybe <tool_call>{"name": "rm", "arguments": {}}</tool_call></think>The answer is 4.'
    assert trajectory(text).calls == ()
    unclosed = 'Sure. <think>I could <tool_call>{"name": "rm", "arguments": {}}</tool_call>'
    assert trajectory(unclosed).calls == ()


def test_two_different_names_are_malformed():
    call = {"type": "function", "function": {"name": "get_weather", "arguments": {}}, "name": "delete_all_files"}
    t = trajectory([{"role": "assistant", "content": "", "tool_calls": [call]}])
    (only,) = t.calls
    assert only.name is None and "two different names" in only.malformed
    same = {"function": {"name": "f", "arguments": {}}, "name": "f"}
    assert trajectory([{"role": "assistant", "tool_calls": [same]}]).calls[0].malformed is None


@pytest.mark.parametrize(
    "raw, why",
    [
        ('{"name": "f", "arguments": "{not json"}', "not JSON"),
        ('{"name": "f", "arguments": [1, 2]}', "not an object"),
        ('{"arguments": {}}', "no tool name"),
        ('{"name": "f", "arguments": {"x": NaN}}', "not JSON"),
        ("[[[[" * 2000, "not JSON"),
    ],
)
def test_malformed_text_calls_are_kept_and_named(raw, why):
    (call,) = trajectory(f"<tool_call>{raw}</tool_call>").calls
    assert call.malformed and why in call.malformed
    assert not call.ok


def test_tool_errors_and_missing_results():
    rollout = [
        {"role": "assistant", "tool_calls": [{"function": {"name": "div", "arguments": {"a": 1, "b": 0}}}]},
        {"role": "tool", "name": "div", "content": str({"error": "division by zero"})},  # what TRL writes
        {"role": "assistant", "content": "<answer>?</answer>", "tool_calls": [{"name": "div", "arguments": {}}]},
    ]
    t = trajectory(rollout)
    assert t.calls[0].error and "division by zero" in t.calls[0].error and t.calls[0].result is None
    assert not t.calls[1].executed  # made with the final answer: never ran
    assert t.final_message == "<answer>?</answer>"
    assert t.failed_calls == 2


def test_a_rollout_that_ends_on_a_tool_result_has_no_final_message():
    assert trajectory(trl_rollout()[:2]).final_message == ""


def test_the_answer_is_the_final_message_not_a_tool_argument_or_result():
    acc = get_reward("gsm8k_accuracy")
    # The answer 72 appears only as a tool argument and a tool result; the final message says nothing.
    call = {"type": "function", "function": {"name": "check", "arguments": {"answer": "#### 72"}}}
    gamed = [
        {"role": "assistant", "content": "#### 72", "tool_calls": [call]},
        {"role": "tool", "name": "check", "content": "#### 72"},
        {"role": "assistant", "content": "I am done."},
    ]
    honest = trl_rollout(answer_text="The answer is 72.\n#### 72")
    assert acc(completions=[gamed, honest], answer=["72", "72"]) == [0.0, 1.0]
    # on="all" reads every assistant message (still never the tool results)
    assert acc.configure(on="all")(completions=[gamed], answer=["72"]) == [1.0]


def test_trajectory_inputs_by_name_and_what_they_declare():
    seen = {}

    @reward
    def inspect_rollout(trajectory, tool_calls, final_message, turns, environment, answer) -> float:
        seen.update(trajectory=trajectory, calls=tool_calls, final=final_message, turns=turns, env=environment)
        return 1.0

    env = object()
    assert inspect_rollout(completions=[trl_rollout()], answer=["4"], environments=[env]) == [1.0]
    assert seen["calls"][0].name == "add" and seen["final"] == "<answer>4</answer>" and seen["turns"] == 2
    assert seen["env"] is env and seen["trajectory"].calls == tuple(seen["calls"])
    assert inspect_rollout.required_columns == ["answer"]
    info = describe_reward(inspect_rollout)
    assert info.trajectory_inputs == ["trajectory", "tool_calls", "final_message", "turns", "environment"]


def test_environments_follow_subsets():
    batch = Batch.from_call(None, ["a", "b", "c"], None, {"environments": ["e0", "e1", "e2"]})
    assert batch.subset([2, 0]).environments == ["e2", "e0"]
    assert Batch.from_call(None, ["a"], None, {}).environments == [None]


def test_on_is_checked():
    from rewardsmith import RewardConfigError

    with pytest.raises(RewardConfigError, match="on must be one of"):
        get_reward("think_format", on="everything")(completions=["x"])


def test_a_thousand_turns_read_in_one_pass():
    rollout = []
    for i in range(1000):
        rollout.append({"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {"i": i}}}]})
        rollout.append({"role": "tool", "content": json.dumps(i)})
    rollout.append({"role": "assistant", "content": "done"})
    t = trajectory(rollout)
    assert len(t.calls) == 1000 and all(c.result == str(c.arguments["i"]) for c in t.calls)
    assert t.turns == 1001 and t.final_message == "done"


def test_tool_use_health_is_logged_under_trl():
    logged = {}
    rollouts = [
        [{"role": "assistant", "tool_calls": [{"name": "f", "arguments": {}}]}, {"role": "tool", "content": "1"}],
        [
            {"role": "assistant", "tool_calls": [{"name": "f", "arguments": {}}]},
            {"role": "tool", "content": "{'error': 'x'}"},
        ],
        "no calls",
        "no calls either",
    ]
    get_reward("tool_success")(completions=rollouts, log_metric=lambda name, value: logged.__setitem__(name, value))
    assert {k: v for k, v in logged.items() if k.startswith("trajectory/")} == {
        "trajectory/calls_per_rollout": 0.5,
        "trajectory/no_call_share": 0.5,
        "trajectory/failed_call_share": 0.5,
    }


def test_eval_scores_a_column_of_stored_trajectories(tmp_path):
    import subprocess
    import sys

    call = {"type": "function", "function": {"name": "calc", "arguments": {"e": "9*2"}}}
    honest = [{"role": "assistant", "content": "", "tool_calls": [call]}, {"role": "tool", "content": "18"}]
    honest.append({"role": "assistant", "content": "#### 18"})
    gamed = [{"role": "assistant", "content": "#### 18", "tool_calls": [call]}, {"role": "tool", "content": "#### 18"}]
    gamed.append({"role": "assistant", "content": "done"})
    data = tmp_path / "rollouts.jsonl"
    data.write_text(
        "\n".join(json.dumps({"prompt": "9*2?", "answer": "18", "messages": m}) for m in (honest, gamed)) + "\n"
    )
    out = tmp_path / "out"
    command = [sys.executable, "-m", "rewardsmith.cli", "eval", "--dataset", str(data), "--rewards"]
    command += ["gsm8k_accuracy,tool_success", "--completions-column", "messages", "--output-dir", str(out)]
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    scores = [{name: r["rewards"][name]["score"] for name in ("gsm8k_accuracy", "tool_success")} for r in rows]
    assert scores == [{"gsm8k_accuracy": 1.0, "tool_success": 1.0}, {"gsm8k_accuracy": 0.0, "tool_success": 1.0}]


def test_the_rewards_of_one_training_step_read_each_rollout_once():
    from rewardsmith.core import trajectory as module

    calls = []
    real = module.trajectory

    def counted(completion):
        calls.append(completion)
        return real(completion)

    rollouts = [
        [{"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": {}}}]},
         {"role": "tool", "content": "1"}, {"role": "assistant", "content": f"{i}"}]
        for i in range(4)
    ]  # fmt: skip

    class State:
        global_step = 1

    state = State()
    module.trajectory = counted
    try:
        from rewardsmith import get_reward

        first, second = get_reward("tool_success"), get_reward("tool_efficiency", correct_column="correct")
        first(completions=rollouts, trainer_state=state)
        second(prompts=["p"] * 4, completions=rollouts, correct=[True] * 4, trainer_state=state)
        assert len(calls) == 4  # the second reward of the step reused the first one's reading
        state.global_step = 2
        first(completions=rollouts, trainer_state=state)
        assert len(calls) == 8  # a new step reads again
        first(completions=[list(r) for r in rollouts], trainer_state=state)
        assert len(calls) == 12  # other completion objects are read again
    finally:
        module.trajectory = real


# -- the count of TRL's shape and the full reading agree ------------------------------------------------------

_names = st.sampled_from(["add", "lookup", " ", ""])
_arguments = st.sampled_from([{}, {"a": 1}, '{"a": 1}', "", "{bad", "[1]", '{"a": NaN}', None])
_trl_call = st.builds(lambda n, a: {"type": "function", "function": {"name": n, "arguments": a}}, _names, _arguments)
_odd_call = st.sampled_from([{"name": "f", "arguments": {}}, {"function": {"name": "f"}, "name": "g"}, "f()", None])
_assistant = st.fixed_dictionaries(
    {
        "role": st.just("assistant"),
        "content": st.sampled_from(["", None, " 42 ", '<tool_call>{"name": "f"}</tool_call>']),
    },
    optional={"tool_calls": st.lists(st.one_of(_trl_call, _trl_call, _odd_call), max_size=3)},
)
_result_text = st.sampled_from(["4", "", "{'error': 'boom'}", ' {"error": 1}', "error"])
_tool = st.fixed_dictionaries(
    {"role": st.just("tool"), "content": st.one_of(_result_text, st.just(None))},
    optional={"tool_call_id": st.just("c1"), "is_error": st.booleans(), "name": st.just("add")},
)
_other = st.sampled_from([{"role": "user", "content": "hi"}, "plain text"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_assistant, _assistant, _tool, _tool, _other), max_size=8))
def test_the_count_of_trls_shape_is_what_the_full_reading_gives(rollout):
    from rewardsmith.core.trajectory_read import count_rollout, read_rollout

    counted = count_rollout(list(rollout))
    calls, final, turns = read_rollout(list(rollout))
    if counted is not None:
        assert counted == (len(calls), sum(1 for c in calls if not c.ok), final, turns)
    lazy = trajectory(rollout)
    summary = (lazy.call_count, lazy.failed_calls, lazy.final_message, lazy.turns)
    assert summary == (len(calls), sum(1 for c in calls if not c.ok), final, turns)
    assert lazy.calls == calls and [m.role for m in lazy.messages] == [
        m.get("role", "assistant") if isinstance(m, dict) else "assistant" for m in rollout
    ]


def test_a_trl_rollout_is_counted_without_building_its_calls_and_reads_the_same_when_asked():
    import pickle

    t = trajectory(trl_rollout())
    assert t._calls is None and (t.call_count, t.failed_calls, t.turns) == (1, 0, 2)  # counted, nothing built
    assert t.calls[0].result == "4" and t.messages[0].calls == t.calls
    assert pickle.loads(pickle.dumps(t)) == t
    same = type(t)(t.messages, t.calls, t.final_message, t.turns)
    assert same == t and same.failed_calls == 0


def test_tool_success_plain_scores_are_the_explained_ones():
    rollouts = [trl_rollout(), trl_rollout(result="{'error': 'x'}"), openai_rollout(), text_rollout(), "no calls"]
    rollouts.append(trl_rollout()[:1])  # a call that never got a result
    success = get_reward("tool_success")
    plain = success(completions=rollouts)
    assert plain == [1.0, 0.0, 1.0, 1.0, None, 0.0]
    assert [r.score for r in success.explain(completions=rollouts)] == plain


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30))
def test_trl_error_text_is_read_as_parsing_it_would(message):
    """TRL's ``str({"error": message})`` is an error exactly when the parsed object's error is set, whichever way
    the text is read (its plain form skips the parse)."""
    import ast

    from rewardsmith.core.trajectory_read import is_error_text

    text = str({"error": message})
    assert is_error_text(text) == bool(ast.literal_eval(text)["error"])
    assert is_error_text(" " + text) == is_error_text(text)  # the slow path agrees on the same object
