"""The Reward contract: authoring forms, injection, normalisation, errors, pickling."""

from __future__ import annotations

import asyncio
import inspect
import logging
import math
import pickle
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from rewardsmith import (
    MissingColumnError,
    Reward,
    RewardConfigError,
    RewardResult,
    RewardReturnError,
    get_reward,
    reward,
)
from rewardsmith.core.inputs import Batch

CONVERSATION = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 2+2?"}]


@reward
def echo_inputs(completion: str, prompt: str, messages: list, completion_ids=None) -> RewardResult:
    """Reports what it was given, so tests can look."""
    return RewardResult(
        1.0, "seen", {"completion": completion, "prompt": prompt, "messages": messages, "ids": completion_ids}
    )


@reward
def matches_answer(completion: str, answer: str, bonus: float = 0.0) -> float:
    return float(completion.strip() == str(answer)) + bonus


@reward
def all_columns(completion: str, **columns) -> RewardResult:
    return RewardResult(0.0, "", dict(columns))


def trl_style(completions, **kwargs):
    return [float(len(c) if isinstance(c, str) else len(c[0]["content"])) for c in completions]


@dataclass
class Threshold(Reward):
    """Scores 1 when the completion is at least ``min_chars`` long."""

    min_chars: int = 3

    def score(self, completion: str) -> float:
        return float(len(completion) >= self.min_chars)


@dataclass
class Flaky(Reward):
    def score(self, completion: str) -> float:
        if completion == "boom":
            raise ValueError("cannot score 'boom'")
        if completion == "inf":
            return math.inf
        return 1.0


@reward(max_concurrency=3)
async def slow_len(completion: str) -> float:
    await asyncio.sleep(0.01)
    return float(len(completion))


# -- injection --------------------------------------------------------------------------------


def test_injects_text_prompt_messages_and_ids_for_plain_strings():
    result = echo_inputs.explain(prompts=["2+2?"], completions=["4"], completion_ids=[[7]])[0]
    assert result.metrics == {
        "completion": "4",
        "prompt": "2+2?",
        "messages": [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}],
        "ids": [7],
    }


def test_injects_the_same_for_conversational_inputs():
    completion = [{"role": "assistant", "content": "4"}]
    result = echo_inputs.explain(prompts=[CONVERSATION], completions=[completion])[0]
    assert result.metrics["completion"] == "4"
    assert result.metrics["prompt"] == "What is 2+2?"
    assert result.metrics["messages"] == [*CONVERSATION, *completion]
    assert result.metrics["ids"] is None


def test_reads_dataset_columns_by_name_with_defaults_for_absent_ones():
    scores = matches_answer(prompts=["q", "q"], completions=["4", " 5 "], answer=["4", "4"])
    assert scores == [1.0, 0.0]
    assert matches_answer(completions=["4"], answer=["4"], bonus=[0.5]) == [1.5]


def test_ignores_unknown_kwargs_and_trl_extras():
    calls = []
    scores = matches_answer(
        prompts=["q"],
        completions=["4"],
        answer=["4"],
        task=["math"],
        trainer_state=object(),
        log_extra=lambda *a: None,
        log_metric=lambda name, value: calls.append((name, value)),
        environments=None,
    )
    assert scores == [1.0]
    assert calls == [("matches_answer/errors", 0.0)]


def test_missing_required_column_is_a_clear_error_on_first_call():
    with pytest.raises(MissingColumnError) as info:
        matches_answer(prompts=["q"], completions=["4"], solution=["4"])
    message = str(info.value)
    assert "matches_answer" in message and "'answer'" in message and "solution" in message


def test_missing_column_error_is_raised_whatever_on_error_says():
    lenient = matches_answer.configure(on_error="zero")
    with pytest.raises(MissingColumnError):
        lenient(completions=["4"])


def test_scalar_passed_as_column_gets_a_hint():
    with pytest.raises(MissingColumnError, match="single value"):
        matches_answer(completions=["4"], answer="4")


def test_kwargs_parameter_receives_every_other_column():
    result = all_columns.explain(completions=["x"], answer=["1"], task=["math"], log_metric=lambda *a: None)[0]
    assert result.metrics == {"answer": "1", "task": "math"}


def test_column_of_wrong_length_is_a_clear_error():
    with pytest.raises(RewardConfigError, match="'answer' has 1 values for 2 completions"):
        matches_answer(completions=["1", "2"], answer=["1"])


def test_prompts_and_completions_must_line_up():
    with pytest.raises(RewardConfigError, match="2 prompts for 1 completions"):
        matches_answer(prompts=["a", "b"], completions=["1"], answer=["1"])
    with pytest.raises(RewardConfigError, match="check"):
        matches_answer(prompts=["a"], answer=["1"])


def test_positional_only_parameters_are_rejected_at_definition():
    def bad(completion, /):
        return 1.0

    with pytest.raises(RewardConfigError, match="positional-only"):
        reward(bad)


# -- names and settings ---------------------------------------------------------------------------


def test_names_are_what_trl_logs():
    assert matches_answer.name == "matches_answer" == matches_answer.__name__
    assert Threshold().name == "threshold" == Threshold().__name__
    assert get_reward(trl_style).__name__ == "trl_style"
    assert matches_answer.named("exact").__name__ == "exact"
    assert Threshold.__name__ == "Threshold"  # the class keeps its own name


def test_settings_bind_parameters_and_unknown_settings_are_errors():
    generous = matches_answer.configure(bonus=1.0)
    assert generous(completions=["4"], answer=["5"]) == [1.0]
    assert matches_answer(completions=["4"], answer=["5"]) == [0.0]  # the original is untouched
    with pytest.raises(RewardConfigError, match="no setting 'bonsu'"):
        matches_answer.configure(bonsu=1.0)
    with pytest.raises(RewardConfigError, match="min_chars"):
        Threshold().configure(minchars=2)


def test_reward_subclasses_are_dataclasses_with_settings_as_fields():
    assert Threshold(min_chars=5)(completions=["four", "fives"]) == [0.0, 1.0]
    assert Threshold().settings == {"min_chars": 3}

    class NotADataclass(Reward):
        limit: int = 3

        def score(self, completion):
            return 1.0

    with pytest.raises(TypeError, match="@dataclass"):
        NotADataclass()


def test_engine_settings_are_validated():
    with pytest.raises(RewardConfigError, match="on_error"):
        Threshold(on_error="ignore")
    with pytest.raises(RewardConfigError, match="timeout"):
        Threshold(timeout=0)
    with pytest.raises(RewardConfigError, match="workers"):
        Threshold(workers=0)


def test_plain_trl_function_is_accepted_and_keeps_its_name():
    wrapped = get_reward(trl_style)
    assert wrapped.name == "trl_style"
    assert wrapped(prompts=["p"], completions=["abc"]) == [3.0]
    assert wrapped(prompts=["p"], completions=[[{"role": "assistant", "content": "ab"}]]) == [2.0]


def test_plain_trl_function_sees_exactly_what_trl_passes():
    seen = {}

    def spy(prompts, completions, completion_ids, **kwargs):
        seen.update(prompts=prompts, completions=completions, ids=completion_ids, kwargs=kwargs)
        return [0.0] * len(completions)

    state = object()
    get_reward(spy)(prompts=["p"], completions=["c"], completion_ids=[[1]], answer=["a"], trainer_state=state)
    assert seen["prompts"] == ["p"] and seen["completions"] == ["c"] and seen["ids"] == [[1]]
    assert seen["kwargs"]["answer"] == ["a"] and seen["kwargs"]["trainer_state"] is state


def test_per_sample_lambda_is_recognised():
    assert get_reward(lambda completion: completion == "x")(completions=["x", "y"]) == [1.0, 0.0]


def test_undecidable_callable_is_a_clear_error():
    with pytest.raises(RewardConfigError, match="cannot tell how to call"):
        get_reward(lambda threshold=0.5: None)


# -- return values ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, 1.0),
        (False, 0.0),
        (3, 3.0),
        (np.float32(0.25), 0.25),
        (np.int64(2), 2.0),
        (np.bool_(True), 1.0),
        (torch.tensor(0.5), 0.5),
        (torch.tensor([0.75]), 0.75),
        (float("nan"), None),
        (None, None),
        (RewardResult(0.5, "half"), 0.5),
    ],
)
def test_per_sample_return_values_are_normalised(value, expected):
    r = reward(lambda completion: value)
    assert r(completions=["x"]) == [expected]


def test_floats_and_nones_are_scored_as_they_are_and_non_finite_floats_still_are_not():
    values = {"half": 0.5, "none": None, "nan": math.nan, "inf": math.inf}
    r = reward(lambda completion: values[completion])
    assert r(completions=["half", "none", "half"]) == [0.5, None, 0.5]
    assert r(completions=["none", "nan"]) == [None, None]  # NaN: not scored
    assert r(completions=["none", "inf", "half"]) == [None, None, 0.5]  # inf: a failed sample
    assert r.stats["errors"] == 1 and r.counters.nones == 5


@pytest.mark.parametrize(
    ("batch_value", "expected"),
    [
        (np.array([1.0, 0.0]), [1.0, 0.0]),
        (torch.tensor([1.0, float("nan")]), [1.0, None]),
        ((True, False), [1.0, 0.0]),
        ([np.float64(0.5), None], [0.5, None]),
    ],
)
def test_batch_return_values_are_normalised(batch_value, expected):
    def batch_fn(completions, **kwargs):
        return batch_value

    assert get_reward(batch_fn)(completions=["a", "b"]) == expected


def test_wrong_length_batch_result_names_the_reward():
    def short(completions, **kwargs):
        return [1.0]

    with pytest.raises(RewardReturnError, match="'short' returned 1 scores for 2 completions"):
        get_reward(short)(completions=["a", "b"])


def test_two_dimensional_batch_result_is_an_error():
    def grid(completions, **kwargs):
        return np.zeros((2, 2))

    with pytest.raises(RewardReturnError, match="grid"):
        get_reward(grid)(completions=["a", "b"])


@pytest.mark.parametrize("bad", ["1.0", [1.0], {"value": 1}, 1 + 2j])
def test_non_numeric_value_is_an_error_naming_the_reward(bad):
    named = reward(lambda completion: bad).named("stringly")
    with pytest.raises(RewardReturnError, match="'stringly' returned"):
        named(completions=["x"])


def test_non_numeric_value_is_an_error_even_with_lenient_on_error():
    with pytest.raises(RewardReturnError):
        reward(lambda completion: "yes", on_error="zero")(completions=["x"])


def test_empty_batch_gives_empty_list():
    assert matches_answer(prompts=[], completions=[], answer=[]) == []
    assert get_reward(trl_style)(prompts=[], completions=[]) == []
    assert asyncio.run(slow_len(prompts=[], completions=[])) == []


# -- errors ----------------------------------------------------------------------------------------


def test_errors_score_none_by_default_are_counted_and_logged_once(caplog):
    flaky = Flaky()
    metrics = []
    with caplog.at_level(logging.WARNING, logger="rewardsmith"):
        scores = flaky(completions=["ok", "boom", "boom", "inf"], log_metric=lambda n, v: metrics.append((n, v)))
        flaky(completions=["boom"])
    assert scores == [1.0, None, None, None]
    assert flaky.stats == {"samples": 5, "errors": 4, "timeouts": 0, "crashes": 0}
    assert metrics == [("flaky/errors", 3.0)]
    tracebacks = [r for r in caplog.records if "raised an error" in r.getMessage()]
    assert len(tracebacks) == 2  # one ValueError, one non-finite score: each kind shown once
    assert "cannot score 'boom'" in tracebacks[0].getMessage() and "Traceback" in tracebacks[0].getMessage()


def test_on_error_zero_and_raise():
    assert Flaky(on_error="zero")(completions=["ok", "boom"]) == [1.0, 0.0]
    with pytest.raises(ValueError, match="cannot score 'boom'") as info:
        Flaky(on_error="raise")(completions=["ok", "boom"])
    assert any("sample 1" in note for note in getattr(info.value, "__notes__", []))


def test_explain_reports_the_error_as_reason():
    result = Flaky().explain(completions=["boom"])[0]
    assert result.score is None and "cannot score 'boom'" in result.error


def test_batch_function_errors_follow_on_error():
    def broken(completions, **kwargs):
        raise RuntimeError("down")

    assert get_reward(broken)(completions=["a", "b"]) == [None, None]
    with pytest.raises(RuntimeError):
        get_reward(broken).configure(on_error="raise")(completions=["a"])


# -- rich results ---------------------------------------------------------------------------------


def test_check_scores_one_completion_with_columns_as_single_values():
    result = matches_answer.check("4", answer="4")
    assert result == RewardResult(1.0, "", {}, None)


# -- async --------------------------------------------------------------------------------------------


def test_async_rewards_look_async_to_trl():
    from trl.trainer.utils import get_callable_name, is_async_callable

    assert is_async_callable(slow_len) and not is_async_callable(matches_answer)
    assert get_callable_name(slow_len) == "slow_len"
    assert inspect.iscoroutinefunction(slow_len.__call__)


def test_async_reward_respects_max_concurrency():
    state = {"now": 0, "peak": 0}

    @reward(max_concurrency=4)
    async def tracked(completion: str) -> float:
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        await asyncio.sleep(0.01)
        state["now"] -= 1
        return 1.0

    scores = asyncio.run(tracked(completions=["x"] * 20))
    assert scores == [1.0] * 20
    assert state["peak"] == 4


def test_async_reward_times_out_per_sample_and_explain_works_in_a_running_loop():
    @reward(timeout=0.2)
    async def sometimes_stuck(completion: str) -> float:
        if completion == "stuck":
            await asyncio.sleep(60)
        return 1.0

    assert asyncio.run(sometimes_stuck(completions=["ok", "stuck"])) == [1.0, None]

    async def inside_a_loop():
        return sometimes_stuck.explain(completions=["ok"])

    assert asyncio.run(inside_a_loop())[0].score == 1.0


def test_async_reward_rejects_workers():
    with pytest.raises(RewardConfigError, match="max_concurrency"):
        slow_len.configure(workers=2)


# -- pickling ------------------------------------------------------------------------------------------


def _round_trip(obj):
    return pickle.loads(pickle.dumps(obj))


@pytest.mark.parametrize(
    "made",
    [
        matches_answer,
        matches_answer.configure(bonus=0.5, on_error="zero").named("generous"),
        Threshold(min_chars=5),
        get_reward(trl_style),
        get_reward("think_format", strict=False),
    ],
    ids=["function", "function-with-settings", "subclass", "trl-function", "built-in"],
)
def test_pickle_round_trip_keeps_behaviour_and_settings(made):
    inputs = {
        "prompts": ["q", "q"],
        "completions": ["4", "<think>a</think><answer>4</answer> ok"],
        "answer": ["4", "4"],
    }
    copy = _round_trip(made)
    assert copy.name == made.name
    assert copy(**inputs) == made(**inputs)
    assert copy.settings == made.settings and copy.on_error == made.on_error


def test_pickle_round_trip_of_async_reward():
    copy = _round_trip(slow_len)
    assert asyncio.run(copy(completions=["abc"])) == [3.0]
    assert copy.max_concurrency == 3


def test_runtime_state_is_not_pickled():
    flaky = Flaky()
    flaky(completions=["boom"])
    copy = _round_trip(flaky)
    assert copy.stats["errors"] == 0 and flaky.stats["errors"] == 1


def test_batch_holds_texts_for_odd_shapes():
    batch = Batch.from_call(
        None,
        [
            None,
            [{"role": "assistant", "content": None, "tool_calls": [{}]}],
            [{"role": "assistant", "content": [{"type": "text", "text": "hi"}]}],
        ],
        None,
        {},
    )
    assert batch.texts == ["", "", "hi"]
