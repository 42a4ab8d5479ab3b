"""Judges and reward models inside TRL's real GRPOTrainer, on the offline tiny models.

* an ``llm_judge`` pointed at the local OpenAI-compatible server: what TRL
  stores per completion is the server's verdict on that completion;
* a rule-based reward mixed with a reward model named by its folder, with
  ``reward_weights``, beside the same model given to TRL directly: our
  reward-model scores equal TRL's own reward-model path, and the weighted
  total is what TRL logs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from trl_helpers import tiny_grpo_config

from rewardsmith import to_trl
from rewardsmith.compose import rewards_from_config
from rewardsmith.core.inputs import completion_text
from rewardsmith.http.testing import LocalChatServer, RecordedRequest
from rewardsmith.judges import LLMJudge, RewardModel

pytestmark = pytest.mark.slow

PROMPTS = ["Write a word.", "Say something.", "Name a fruit.", "Count to three."]


def dataset(conversational: bool):
    from datasets import Dataset

    rows = [{"prompt": [{"role": "user", "content": p}] if conversational else p} for p in PROMPTS * 2]
    return Dataset.from_list(rows)


def grpo_args(output_dir, **extra):
    return tiny_grpo_config(output_dir, log_completions=True, **extra)


def logged_rows(trainer, output_dir, name):
    entries = [e for e in trainer.state.log_history if f"rewards/{name}/mean" in e]
    assert [e["step"] for e in entries] == [1, 2]
    return [(e, pd.read_parquet(output_dir / "completions" / f"completions_{e['step']:05d}.parquet")) for e in entries]


def as_text(value) -> str:
    if isinstance(value, np.ndarray):
        value = [dict(m) for m in value]
    return completion_text(value)


def vowel_verdict(request: RecordedRequest) -> str:
    """The scripted judge: 1 + the number of vowels in the response, at most 10."""
    response = request.block("response") or ""
    return f'{{"reason": "vowels", "score": {min(10, 1 + sum(ch in "aeiou" for ch in response.lower()))}}}'


def test_grpo_with_an_llm_judge_on_a_local_server(tiny_model, tmp_path):
    from trl import GRPOTrainer

    with LocalChatServer(vowel_verdict, delay=0.01) as server:
        judge = LLMJudge(
            base_url=server.base_url, model="local-judge", api_key_env=None, cache=str(tmp_path / "judge.sqlite")
        )
        trainer = GRPOTrainer(
            model=str(tiny_model), reward_funcs=to_trl(judge), args=grpo_args(tmp_path), train_dataset=dataset(False)
        )
        trainer.train()
    completions = 0
    for entry, frame in logged_rows(trainer, tmp_path, "llm_judge"):
        texts = [as_text(c) for c in frame["completion"]]
        expected = [(min(10, 1 + sum(ch in "aeiou" for ch in t.lower())) - 1) / 9 for t in texts]
        np.testing.assert_allclose(frame["llm_judge"].to_numpy(dtype=float), expected, rtol=1e-6)
        assert entry["rewards/llm_judge/mean"] == pytest.approx(float(np.mean(expected)), rel=1e-5)
        assert entry["llm_judge/errors"] == 0.0 and "llm_judge/requests" in entry
        assert set(frame["llm_judge_reason"]) == {"vowels"}  # the judge's reasons, beside each completion
        completions += len(texts)
    assert 0 < len(server.requests) <= completions  # repeated completions were asked once
    assert judge.usage.requests + judge.usage.cache_hits == completions


def test_grpo_mixing_a_rule_reward_and_a_reward_model_with_weights(tiny_model, tiny_reward_model, tmp_path):
    from transformers import AutoModelForSequenceClassification
    from trl import GRPOTrainer

    funcs = to_trl(["think_format", str(tiny_reward_model)])  # a model folder where a reward name goes
    assert isinstance(funcs[1], RewardModel) and funcs[1].name == "tiny-reward-model"
    # the config form: weights on the entries, the reward model named by its folder
    funcs, weights = rewards_from_config(
        [
            {"name": "think_format", "weight": 0.3},
            {"name": str(tiny_reward_model), "kwargs": {"device": "cpu"}, "weight": 1.0, "as": "rm_rewardsmith"},
        ]
    )
    assert weights == [0.3, 1.0] and isinstance(funcs[1], RewardModel)
    # TRL's own reward-model path rides along with weight 0, for comparison
    trl_native = AutoModelForSequenceClassification.from_pretrained(tiny_reward_model, num_labels=1)
    trainer = GRPOTrainer(
        model=str(tiny_model),
        reward_funcs=[*funcs, trl_native],
        args=grpo_args(tmp_path, reward_weights=[*weights, 0.0]),
        train_dataset=dataset(conversational=True),  # TRL's path applies the chat template: ours must match
    )
    assert trainer.reward_func_names == ["think_format", "rm_rewardsmith", "tiny-reward-model"]
    trainer.train()
    for entry, frame in logged_rows(trainer, tmp_path, "rm_rewardsmith"):
        ours_scores = frame["rm_rewardsmith"].to_numpy(dtype=float)
        np.testing.assert_allclose(ours_scores, frame["tiny-reward-model"].to_numpy(dtype=float), atol=1e-5)
        assert len(set(np.round(ours_scores, 6))) > 1  # scores vary with the completion
        total = 0.3 * frame["think_format"].to_numpy(dtype=float) + 1.0 * ours_scores
        assert entry["reward"] == pytest.approx(float(total.mean()), rel=1e-5, abs=1e-6)
