"""Generating completions for evaluation: an OpenAI-compatible server on 127.0.0.1, the tiny local model, vLLM."""

from __future__ import annotations

import importlib.util
import json
import logging

import pytest

from rewardsmith import evaluate
from rewardsmith.evaluation import GenerationConfig, GenerationError, iter_results
from rewardsmith.evaluation.generation import SampleRequest
from rewardsmith.evaluation.openai_backend import OpenAIGenerator
from rewardsmith.http.testing import LocalChatServer, Reply

ROWS = [
    {"question": f"What is {i} + {i}?", "answer": f"#### {2 * i}", "task": "even" if i % 2 else "odd"}
    for i in range(12)
]


def _answer_by_seed(request):
    """Sample s of prompt i (seed = i * 4 + s) is right when s == 0, or for every sample of prompts 0-2."""
    seed = request.body["seed"]
    index, sample = divmod(seed, 4)
    right = sample == 0 or index < 3
    number = 2 * index if right else 2 * index + 1
    return f"<think>adding</think><answer>{number}</answer>"


def test_generated_completions_n_per_prompt_are_scored_with_unbiased_pass_at_k(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("EVAL_TEST_KEY", "sk-eval-secret-123")
    caplog.set_level(logging.DEBUG)
    with LocalChatServer(_answer_by_seed) as server:
        server.script.extend([Reply.rate_limited(0.2), Reply.error(503)])  # both retried
        generation = {"model": "local-model", "base_url": server.base_url, "api_key_env": "EVAL_TEST_KEY", "n": 4}
        generation.update(seed=0, max_concurrency=3, temperature=0.8, max_tokens=64, backoff=0.05)
        report = evaluate(
            ROWS, "gsm8k_accuracy,think_format", tmp_path, converter="gsm8k", generation=generation, batch_size=5
        )
        requests = list(server.requests)
        assert server.max_in_flight <= 3
    assert len(requests) == 12 * 4 + 2
    body = requests[-1].body
    assert body["model"] == "local-model" and body["temperature"] == 0.8 and body["max_tokens"] == 64
    assert body["messages"][-1]["role"] == "user" and "seed" in body
    assert {r.headers["Authorization"] for r in requests} == {"Bearer sk-eval-secret-123"}
    accuracy = report.summary["rewards"]["gsm8k_accuracy"]
    # prompts 0-2: 4/4 right; prompts 3-11: 1/4 right (sample 0).
    assert accuracy["mean"] == pytest.approx((3 * 4 + 9) / 48)
    expected_pass2 = (3 * 1.0 + 9 * (1 - 3 / 4 * 2 / 3)) / 12
    assert accuracy["pass_at_k"] == {
        "prompts": 12,
        "pass@1": pytest.approx(21 / 48),
        "pass@2": pytest.approx(expected_pass2),
        "pass@4": 1.0,
    }
    assert set(report.summary["tasks"]) == {"odd", "even"}
    assert report.summary["tasks"]["odd"]["rows"] == 24
    assert report.summary["rewards"]["think_format"]["mean"] == 1.0
    rows = list(iter_results(report.results_path))
    assert [(r["index"], r["sample"]) for r in rows] == [(i, s) for i in range(12) for s in range(4)]
    first = rows[0]
    assert first["completion"] == [{"role": "assistant", "content": "<think>adding</think><answer>0</answer>"}]
    assert first["generation"]["finish_reason"] == "stop" and first["generation"]["latency_s"] > 0
    assert first["rewards"]["gsm8k_accuracy"]["reason"]
    generated = report.summary["generation"]
    assert generated["samples"] == 48 and generated["error_rate"] == 0.0 and generated["completion_tokens"] == 48 * 30
    everything = "".join(p.read_text() for p in tmp_path.iterdir() if p.is_file()) + caplog.text
    assert "sk-eval-secret-123" not in everything


def test_a_sample_that_fails_for_good_is_recorded_and_the_job_goes_on(tmp_path):
    with LocalChatServer(lambda request: "<answer>2</answer>") as server:
        server.script.extend([Reply.error(400, "prompt too long"), Reply(content="cut", finish_reason="length")])
        generation = {"model": "m", "base_url": server.base_url, "api_key_env": None, "max_concurrency": 1}
        report = evaluate(ROWS[:3], "gsm8k_accuracy", tmp_path, converter="gsm8k", generation=generation)
    rows = list(iter_results(report.results_path))
    assert rows[0]["completion"] is None and "prompt too long" in rows[0]["generation"]["error"]
    assert rows[0]["rewards"]["gsm8k_accuracy"]["error"].startswith("not scored: ")
    assert rows[1]["generation"]["finish_reason"] == "length"
    accuracy = report.summary["rewards"]["gsm8k_accuracy"]
    assert accuracy["error_rate"] == pytest.approx(1 / 3) and accuracy["scored"] == 2
    assert report.summary["generation"]["truncated_rate"] == pytest.approx(1 / 3)


def test_what_would_fail_every_request_stops_the_job_with_what_to_fix(tmp_path):
    with LocalChatServer(lambda request: Reply.error(401, "bad key")) as server:
        generation = {"model": "m", "base_url": server.base_url, "api_key_env": "NO_SUCH_KEY_VARIABLE"}
        with pytest.raises(GenerationError, match=r"HTTP 401.*NO_SUCH_KEY_VARIABLE.*api_key_env"):
            evaluate(ROWS[:2], "gsm8k_accuracy", tmp_path / "a", converter="gsm8k", generation=generation)
        url = server.base_url
    with pytest.raises(GenerationError, match="is the server running"):
        generation = {"model": "m", "base_url": url, "max_retries": 1, "backoff": 0.01}
        evaluate(ROWS[:2], "gsm8k_accuracy", tmp_path / "b", converter="gsm8k", generation=generation)
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary["rows"] == 0 and summary["complete"] is False


def test_generation_settings_are_checked_before_anything_runs(tmp_path):
    with pytest.raises(ValueError, match="backend must be one of"):
        GenerationConfig(model="m", backend="vlm")
    with pytest.raises(ValueError, match="needs base_url"):
        GenerationConfig(model="m", backend="openai")
    with pytest.raises(ValueError, match=r"no setting 'temprature'.*temperature"):
        GenerationConfig.of({"model": "m", "temprature": 0.5})
    with pytest.raises(ValueError, match="not both"):
        evaluate(ROWS, "gsm8k_accuracy", tmp_path, converter="gsm8k", completions_column="x", generation={"model": "m"})
    with pytest.raises(ValueError, match="'answer'"):  # a reward column the data lacks: before any generation
        evaluate(
            [{"prompt": "hi"}], "gsm8k_accuracy", tmp_path / "c", generation={"model": "m", "base_url": "http://x"}
        )


def test_openai_generator_keeps_the_prompt_shape():
    with LocalChatServer(lambda request: "hello") as server:
        generator = OpenAIGenerator(GenerationConfig(model="m", base_url=server.base_url, api_key_env=None))
        made = generator.generate(
            [SampleRequest(0, 0, "plain"), SampleRequest(1, 0, [{"role": "user", "content": "c"}])]
        )
        sent = [r.body["messages"] for r in server.requests]
    assert made[0].completion == "hello" and made[1].completion == [{"role": "assistant", "content": "hello"}]
    assert sorted(map(str, sent)) == sorted(
        [str([{"role": "user", "content": "plain"}]), str([{"role": "user", "content": "c"}])]
    )


def test_local_transformers_model_generates_in_batches(tiny_model, tmp_path):
    generation = {"model": str(tiny_model), "n": 2, "max_tokens": 8, "batch_size": 4, "device": "cpu", "seed": 1}
    rewards = ["gsm8k_accuracy", {"name": "length", "kwargs": {"max_length": 4, "unit": "chars"}}]
    report = evaluate(ROWS[:5], rewards, tmp_path, converter="gsm8k", generation=generation)
    rows = list(iter_results(report.results_path))
    assert len(rows) == 10 and report.summary["generation"]["samples"] == 10
    for row in rows:
        assert row["completion"][0]["role"] == "assistant" and isinstance(row["completion"][0]["content"], str)
        assert row["generation"]["completion_tokens"] <= 8 and row["generation"]["finish_reason"] in ("stop", "length")
    assert report.summary["rewards"]["length"]["scored"] == 10


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_vllm_backend_without_vllm_says_what_to_do(tmp_path):
    with pytest.raises(GenerationError, match=r"vLLM is not installed.*rewardsmith\[vllm\].*vllm serve"):
        evaluate(ROWS[:1], "gsm8k_accuracy", tmp_path, converter="gsm8k", generation={"model": "m", "backend": "vllm"})
