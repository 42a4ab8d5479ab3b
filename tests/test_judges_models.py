"""Reward models and perplexity on tiny models built offline, checked against direct forward passes."""

from __future__ import annotations

import json
import math
import pickle

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer

from rewardsmith import RewardConfigError, get_reward, to_trl
from rewardsmith.judges import Perplexity, RewardModel
from rewardsmith.rewards import ThinkFormat

PROMPTS = ["What is 2+2?", "Name a colour.", "Say hi", "Count to five, slowly please."]
COMPLETIONS = ["4", "Blue, like the sky on a clear day.", "hi!", "one, two, three, four, five"]


def direct_rm_score(path, text: str) -> float:
    """The reward model's logit for one text, no batching, no padding."""
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    with torch.inference_mode():
        return model(**tokenizer(text, return_tensors="pt", add_special_tokens=False)).logits[0, 0].item()


def test_reward_model_scores_equal_direct_forward_passes(tiny_reward_model):
    rm = RewardModel(model=str(tiny_reward_model), device="cpu", batch_size=3)
    scores = rm(prompts=PROMPTS, completions=COMPLETIONS)
    expected = [direct_rm_score(tiny_reward_model, p + c) for p, c in zip(PROMPTS, COMPLETIONS)]
    assert scores == pytest.approx(expected, abs=1e-5)
    assert len(set(scores)) == len(scores)  # the tiny model's scores do depend on the text
    assert rm.name == "tiny-reward-model"


def test_batching_and_padding_do_not_change_scores(tiny_reward_model):
    one = RewardModel(model=str(tiny_reward_model), device="cpu", batch_size=1)
    many = RewardModel(model=str(tiny_reward_model), device="cpu", batch_size=16)
    prompts, completions = PROMPTS * 3, [c * (i + 1) for i, c in enumerate(COMPLETIONS * 3)]
    assert many(prompts=prompts, completions=completions) == pytest.approx(
        one(prompts=prompts, completions=completions), abs=1e-5
    )


def test_conversational_data_goes_through_the_chat_template(tiny_reward_model):
    rm = RewardModel(model=str(tiny_reward_model), device="cpu")
    tokenizer = AutoTokenizer.from_pretrained(tiny_reward_model)
    prompts = [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": p}] for p in PROMPTS]
    completions = [[{"role": "assistant", "content": c}] for c in COMPLETIONS]
    templated = [tokenizer.apply_chat_template(p + c, tokenize=False) for p, c in zip(prompts, completions)]
    assert rm(prompts=prompts, completions=completions) == pytest.approx(
        [direct_rm_score(tiny_reward_model, t) for t in templated], abs=1e-5
    )
    always = rm.configure(chat_template="always")  # plain prompts wrapped as user/assistant messages
    wrapped = [
        tokenizer.apply_chat_template(
            [{"role": "user", "content": p}, {"role": "assistant", "content": c}], tokenize=False
        )
        for p, c in zip(PROMPTS, COMPLETIONS)
    ]
    assert always(prompts=PROMPTS, completions=COMPLETIONS) == pytest.approx(
        [direct_rm_score(tiny_reward_model, t) for t in wrapped], abs=1e-5
    )


def test_truncation_keeps_the_end_of_the_completion(tiny_reward_model):
    rm = RewardModel(model=str(tiny_reward_model), device="cpu", max_length=8)
    long = "x" * 50 + "the end."
    assert rm(completions=[long]) == pytest.approx([direct_rm_score(tiny_reward_model, "the end.")], abs=1e-5)


def test_normalisation_sigmoid_and_standardize(tiny_reward_model, tmp_path):
    raw = RewardModel(model=str(tiny_reward_model), device="cpu")
    raw_scores = raw(prompts=PROMPTS, completions=COMPLETIONS)
    sigmoid = raw.configure(normalize="sigmoid")(prompts=PROMPTS, completions=COMPLETIONS)
    assert sigmoid == pytest.approx([1 / (1 + math.exp(-x)) for x in raw_scores])
    calibrated = raw.calibrate(PROMPTS, COMPLETIONS)
    z = calibrated(prompts=PROMPTS, completions=COMPLETIONS)
    mean = sum(z) / len(z)
    std = math.sqrt(sum((v - mean) ** 2 for v in z) / (len(z) - 1))
    assert mean == pytest.approx(0.0, abs=1e-6) and std == pytest.approx(1.0)
    assert calibrated.settings["normalize"] == "standardize" and calibrated.std > 0
    assert calibrated.explain(prompts=PROMPTS[:1], completions=COMPLETIONS[:1])[0].metrics[
        "raw_score"
    ] == pytest.approx(raw_scores[0], abs=1e-6)
    data = tmp_path / "calibration.jsonl"
    data.write_text("\n".join(json.dumps({"prompt": p, "completion": c}) for p, c in zip(PROMPTS, COMPLETIONS)))
    from_file = RewardModel(
        model=str(tiny_reward_model), device="cpu", normalize="standardize", calibration_data=str(data)
    )
    assert from_file(prompts=PROMPTS, completions=COMPLETIONS) == pytest.approx(z, abs=1e-5)
    with pytest.raises(RewardConfigError, match="needs mean and std"):
        RewardModel(model=str(tiny_reward_model), normalize="standardize")


def test_reward_model_pickles_as_settings_and_reloads(tiny_reward_model):
    rm = RewardModel(model=str(tiny_reward_model), device="cpu", normalize="sigmoid")
    before = rm(completions=["hello"])
    payload = pickle.dumps(rm)
    assert len(payload) < 5_000  # the weights are not in it
    assert pickle.loads(payload)(completions=["hello"]) == pytest.approx(before)


def test_a_base_language_model_is_not_a_reward_model(tiny_model):
    with pytest.raises(RewardConfigError, match="not a reward model: its score head"):
        RewardModel(model=str(tiny_model), device="cpu")(completions=["hi"])


def test_model_paths_and_ids_resolve_to_reward_models(tiny_reward_model):
    funcs = to_trl(["think_format", str(tiny_reward_model)])
    assert isinstance(funcs[0], ThinkFormat) and isinstance(funcs[1], RewardModel)
    assert [f.__name__ for f in funcs] == ["think_format", "tiny-reward-model"]
    hub = get_reward("my-org/helpful-rm", normalize="sigmoid")
    assert isinstance(hub, RewardModel) and hub.model == "my-org/helpful-rm" and hub.name == "helpful-rm"
    assert isinstance(get_reward("reward_model", model=str(tiny_reward_model)), RewardModel)


def direct_completion_nll(path, prompt: str, completion: str) -> float:
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    prefix = tokenizer(prompt)["input_ids"]
    ids = prefix + tokenizer(completion, add_special_tokens=False)["input_ids"]
    with torch.inference_mode():
        logprobs = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), dim=-1)
    return -sum(logprobs[t - 1, ids[t]].item() for t in range(len(prefix), len(ids))) / (len(ids) - len(prefix))


def test_perplexity_equals_a_direct_computation_and_is_batch_invariant(tiny_model):
    one = Perplexity(model=str(tiny_model), device="cpu", batch_size=1)
    results = one.explain(prompts=PROMPTS, completions=COMPLETIONS)
    for result, p, c in zip(results, PROMPTS, COMPLETIONS):
        assert result.metrics["perplexity"] == pytest.approx(
            math.exp(direct_completion_nll(tiny_model, p, c)), rel=1e-4
        )
        assert result.metrics["tokens"] == len(c)  # one token per character in the tiny tokenizer
    batched = Perplexity(model=str(tiny_model), device="cpu", batch_size=8)
    assert batched(prompts=PROMPTS, completions=COMPLETIONS) == pytest.approx(
        one(prompts=PROMPTS, completions=COMPLETIONS), abs=1e-5
    )


def test_perplexity_mapping_and_repetition_guard(tiny_model):
    fluency = Perplexity(model=str(tiny_model), device="cpu", good=10, bad=1000)
    assert fluency._map(10) == 1.0 and fluency._map(1000) == 0.0 and fluency._map(100) == pytest.approx(0.5)
    assert fluency._map(2) == 1.0 and fluency._map(5000) == 0.0
    unguarded = fluency.configure(distinct_ngrams=None, good=1.5, bad=10_000)
    guarded = unguarded.configure(distinct_ngrams=3)
    loop = "ab" * 20
    plain, guard = unguarded.explain(completions=[loop])[0], guarded.explain(completions=[loop])[0]
    assert guard.metrics["distinct_ratio"] == pytest.approx(2 / 38)
    assert guard.score == pytest.approx(plain.score * 2 / 38)
    assert fluency(prompts=["p", "p"], completions=["", "ok"])[0] is None
    assert fluency.name == "perplexity" and get_reward("perplexity", model="m").name == "perplexity"


def test_odd_and_huge_completions_are_scored_within_range(tiny_model, tiny_reward_model):
    odd = ["", "\u202e\u0000\ufeff𝟘𝟙 \u200b<think>é</think>", "lone \udcff surrogate", "ab " * 300_000]
    rm = RewardModel(model=str(tiny_reward_model), device="cpu", normalize="sigmoid", max_length=256)
    fluency = Perplexity(model=str(tiny_model), device="cpu", max_length=256)
    for reward in (rm, fluency):
        scores = reward(prompts=["p"] * len(odd), completions=odd)
        low, high = reward.score_range
        assert all(s is None or low <= s <= high for s in scores), (reward.name, scores)
    assert fluency(prompts=["p"], completions=[""]) == [None]
