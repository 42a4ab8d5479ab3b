"""reward-kit compatibility: decorated functions work the reward-kit way and the TRL way."""

from __future__ import annotations

import pickle

import pytest

from rewardsmith import EvaluateResult, MetricResult, MissingColumnError, get_reward, reward_function, to_trl


@reward_function
def exact_match(messages, ground_truth=None, **kwargs) -> EvaluateResult:
    said = messages[-1]["content"].strip()
    ok = ground_truth is not None and said == str(ground_truth)
    return EvaluateResult(
        score=float(ok),
        reason=f"said {said!r}",
        metrics={"exact": MetricResult(score=float(ok), reason="compared", success=ok)},
    )


@reward_function(ground_truth_column="answer")
def needs_truth(messages, ground_truth, **kwargs):
    return {"score": float(messages[-1]["content"] == ground_truth), "reason": "dict result"}


@reward_function
def sometimes_invalid(messages, **kwargs):
    content = messages[-1]["content"]
    return EvaluateResult(score=0.0, reason="cannot judge", is_score_valid=content != "?")


def test_called_the_reward_kit_way_returns_evaluate_result():
    result = exact_match(
        messages=[{"role": "user", "content": "2+2"}, {"role": "assistant", "content": "4"}], ground_truth="4"
    )
    assert isinstance(result, EvaluateResult)
    assert result.score == 1.0 and result["reason"] == "said '4'"
    assert result.metrics["exact"].success is True


def test_called_the_trl_way_returns_scores_from_the_ground_truth_column():
    assert exact_match(prompts=["2+2", "2+2"], completions=["4", "5"], ground_truth=["4", "4"]) == [1.0, 0.0]
    conversational = [[{"role": "assistant", "content": "4"}]]
    prompt = [[{"role": "user", "content": "2+2"}]]
    assert exact_match(prompts=prompt, completions=conversational, ground_truth=["4"]) == [1.0]


def test_optional_ground_truth_defaults_when_the_column_is_absent():
    assert exact_match(prompts=["q"], completions=["4"]) == [0.0]


def test_required_ground_truth_column_is_a_clear_error_and_is_configurable():
    assert needs_truth(completions=["4"], answer=["4"]) == [1.0]
    with pytest.raises(MissingColumnError, match="'answer'"):
        needs_truth(completions=["4"])
    assert needs_truth.required_columns == ["answer"]
    moved = needs_truth.configure(ground_truth_column="gold")
    assert moved(completions=["4"], gold=["4"]) == [1.0]


def test_metrics_and_reasons_reach_explain():
    result = exact_match.explain(prompts=["q"], completions=["4"], ground_truth=["4"])[0]
    assert result.score == 1.0 and result.reason == "said '4'"
    assert result.metrics["exact"] == {"score": 1.0, "reason": "compared", "success": True}


def test_invalid_scores_are_not_scored():
    assert sometimes_invalid(completions=["?", "fine"]) == [None, 0.0]


def test_usable_from_the_registry_and_trl_and_picklable():
    by_path = get_reward("test_reward_kit:exact_match", ground_truth_column="answer")
    assert by_path(completions=["4"], answer=["4"]) == [1.0]
    assert to_trl(exact_match).__name__ == "exact_match"
    copy = pickle.loads(pickle.dumps(needs_truth.configure(ground_truth_column="gold")))
    assert copy(completions=["4"], gold=["4"]) == [1.0]
