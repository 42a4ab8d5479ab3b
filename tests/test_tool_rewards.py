"""The tool-use rewards on rollouts in TRL's shape, and on the ways a policy games them."""

from __future__ import annotations

import time

import pytest

from rewardsmith import get_reward
from rewardsmith.core.trajectory import MAX_CALLS_PER_MESSAGE, trajectory


def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression.

    Args:
        expression: digits and + - * / only
    """
    return str(eval(expression, {"__builtins__": {}}))


def call(name: str, **arguments) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def rollout(*steps, final: str = "<answer>18</answer>") -> list[dict]:
    """TRL's completion after its tool loop: each step is (calls, results)."""
    out: list[dict] = []
    for calls, results in steps:
        out.append({"role": "assistant", "content": "", "tool_calls": calls})
        out += [{"role": "tool", "name": c["function"]["name"], "content": r} for c, r in zip(calls, results)]
    out.append({"role": "assistant", "content": final})
    return out


GOOD = rollout(([call("calculator", expression="9 * 2")], ["18"]))
EXPECTED = [{"name": "calculator", "arguments": {"expression": "9 * 2"}}]


# -- tool_call_match -----------------------------------------------------------------------------------------


def test_match_reads_trl_rollouts_and_not_the_reasoning():
    r = get_reward("tool_call_match")
    in_thought = '<think><tool_call>{"name": "calculator", "arguments": {"expression": "9 * 2"}}</tool_call></think>'
    assert r(completions=[GOOD, in_thought], tool_calls=[EXPECTED, EXPECTED]) == [1.0, 0.0]


def test_a_call_with_two_names_matches_nothing():
    r = get_reward("tool_call_match")
    two = {"type": "function", "function": {"name": "calculator", "arguments": {"expression": "9 * 2"}}, "name": "rm"}
    result = r.explain(completions=[[{"role": "assistant", "tool_calls": [two]}]], tool_calls=[EXPECTED])[0]
    assert result.score == 0.0 and "two different names" in result.reason


def test_match_f1_tolerance_and_argument_modes():
    expected = [{"name": "convert", "arguments": {"amount": 100.0, "to": "EUR"}}]
    close = rollout(([call("convert", amount=100.4, to="EUR", note="x")], ["92"]))
    assert get_reward("tool_call_match")(completions=[close], tool_calls=[expected]) == [0.0]
    loose = get_reward("tool_call_match", tolerance=0.01, arguments="expected_only")
    assert loose(completions=[close], tool_calls=[expected]) == [1.0]
    assert get_reward("tool_call_match", arguments="name_only")(completions=[close], tool_calls=[expected]) == [1.0]
    spam = rollout(([call("convert", amount=100.0, to="EUR")] * 4, ["92"] * 4))
    assert get_reward("tool_call_match")(completions=[spam], tool_calls=[expected]) == [pytest.approx(2 / 5)]


# -- tool_schema -----------------------------------------------------------------------------------------------


def test_schema_from_python_tools_as_trl_builds_it():
    r = get_reward("tool_schema", tools=[calculator])
    bad = rollout(
        (
            [call("calculator", expression="1+1"), call("calculator", expr="1+1"), call("shell", cmd="ls")],
            ["2", "{'error': 'x'}", "{'error': 'Tool shell not found.'}"],
        )
    )
    result = r.explain(completions=[GOOD, bad, "<answer>18</answer>"])
    assert [x.score for x in result] == [1.0, 0.0, None]  # one bad call is enough
    assert result[1].reason.startswith("1 of 3 call(s) valid")
    assert "expr" in result[1].reason or "expression" in result[1].reason
    assert "(+1 more)" in result[1].reason


def test_schema_from_a_tools_column_and_unusable_tools():
    r = get_reward("tool_schema")
    schema = '[{"type": "function", "function": {"name": "calculator", "parameters": {"type": "object"}}}]'
    assert r(completions=[GOOD, GOOD], tools=[schema, "not json ["]) == [1.0, None]


def test_a_tool_without_a_docstring_is_a_config_error():
    from rewardsmith import RewardConfigError

    def bare(x: int) -> int:
        return x

    with pytest.raises(RewardConfigError, match="docstring"):
        get_reward("tool_schema", tools=[bare])


# -- tool_success -----------------------------------------------------------------------------------------------


def test_success_counts_errors_malformed_and_calls_after_the_answer():
    r = get_reward("tool_success")
    failed = rollout(([call("calculator", expression="1/0")], [str({"error": "division by zero"})]))
    after_answer = [*GOOD[:-1], {"role": "assistant", "content": "<answer>18</answer>", "tool_calls": [call("x")]}]
    malformed = '<tool_call>{"name": "calculator", "arguments": "{oops"}</tool_call>'
    assert r(completions=[GOOD, failed, after_answer, malformed, "no calls"]) == [1.0, 0.0, 0.0, 0.0, None]


def test_too_many_calls_in_one_message_count_as_one_malformed():
    text = '<tool_call>{"name": "f", "arguments": {}}</tool_call>' * (MAX_CALLS_PER_MESSAGE + 50)
    calls = trajectory(text).calls
    assert len(calls) == MAX_CALLS_PER_MESSAGE + 1 and "50 more calls" in calls[-1].malformed


# -- tool_efficiency ---------------------------------------------------------------------------------------------


def test_efficiency_is_never_a_bonus_for_not_trying():
    r = get_reward("tool_efficiency")
    one = GOOD
    three = rollout(*[([call("calculator", expression="9 * 2")], ["18"])] * 3)
    lazy_wrong = [{"role": "assistant", "content": "<answer>7</answer>"}]
    scores = r(prompts=["p"] * 3, completions=[one, three, lazy_wrong], correct=[True, True, False])
    assert scores[0] > scores[1] and scores[2] <= 0.0
    assert scores[0] > scores[2]


def test_efficiency_with_a_correctness_reward():
    r = get_reward("tool_efficiency", correctness="gsm8k_accuracy")
    three = rollout(*[([call("calculator", expression="9 * 2")], ["18"])] * 3, final="#### 18")
    one = rollout(([call("calculator", expression="9 * 2")], ["18"]), final="#### 18")
    gamed = rollout(([call("calculator", expression="9 * 2")], ["#### 18"]), final="I used the tool.")
    scores = r(prompts=["p"] * 3, completions=[one, three, gamed], answer=["18"] * 3)
    assert scores[0] == 0.5 and scores[1] == -0.5 and scores[2] <= 0.0


# -- environment_reward ------------------------------------------------------------------------------------------


class Store:
    def __init__(self):
        self.data = {}

    def reset(self, **kwargs):
        self.data = {}

    def put(self, key: str, value: str) -> str:
        """Store a value.

        Args:
            key: the key
            value: the value
        """
        self.data[key] = value
        return "ok"

    def get_reward(self) -> float:
        return float(self.data.get("answer") == "18")


class AsyncStore(Store):
    async def get_reward(self) -> float:
        return 0.25


def stored_keys(env) -> float:
    return float(len(env.data))


def test_environment_reward_reads_each_rollouts_environment():
    envs = [Store(), Store(), AsyncStore()]
    envs[0].put("answer", "18")
    envs[1].put("answer", "17")
    r = get_reward("environment_reward")
    assert r(completions=["a", "b", "c", "d"], environments=[*envs, None]) == [1.0, 0.0, 0.25, None]
    by_state = get_reward("environment_reward", state=f"{__name__}:stored_keys")
    assert by_state(completions=["a", "b"], environments=envs[:2]) == [1.0, 1.0]
    assert get_reward("environment_reward").injection.trajectory_inputs == ["environment"]


# -- linear time on long rollouts ----------------------------------------------------------------------------------


def _long_rollout(turns: int) -> list[dict]:
    out = []
    for i in range(turns):
        out.append({"role": "assistant", "content": "", "tool_calls": [call("calculator", expression=f"{i} + 1")]})
        out.append({"role": "tool", "name": "calculator", "content": str(i + 1)})
    out.append({"role": "assistant", "content": "<answer>18</answer>"})
    return out


def _cpu_best(fn, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.parametrize(
    "name, settings, columns",
    [
        ("tool_call_match", {}, {"tool_calls": [EXPECTED]}),
        ("tool_call_match", {"ordered": True, "tolerance": 0.1}, {"tool_calls": [EXPECTED]}),
        ("tool_schema", {"tools": [calculator]}, {}),
        ("tool_success", {}, {}),
        ("tool_efficiency", {}, {"correct": [True]}),
    ],
)
def test_a_thousand_turns_score_in_linear_time(name, settings, columns):
    r = get_reward(name, **settings)
    small, large = _long_rollout(1000), _long_rollout(10_000)
    assert r(completions=[small], **columns)[0] is not None
    t_small = _cpu_best(lambda: r(completions=[small], **columns))
    t_large = _cpu_best(lambda: r(completions=[large], **columns))
    # The fuzz test's rule, in CPU time (best of repeats): at most 15x for 10x the turns, judged once the large
    # rollout takes a tenth of its budget (below that, growth is the memory hierarchy's), and 3 s for 10,000 turns.
    assert t_large < 3.0 and (t_large < 0.3 or t_large < 15 * t_small), (t_small, t_large)
