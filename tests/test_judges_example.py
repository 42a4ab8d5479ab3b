"""The shipped principles example: a config of the documented shape whose rewards build and score."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from rewardsmith import get_reward
from rewardsmith.compose import rewards_from_config
from rewardsmith.http.testing import LocalChatServer, RecordedRequest
from rewardsmith.judges import Principles

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "principles_grpo.yaml"


def load():
    return yaml.safe_load(EXAMPLE.read_text())


def test_example_has_the_config_shape_and_valid_trainer_fields():
    from trl import GRPOConfig

    config = load()
    assert set(config) == {"model", "dataset", "rewards", "trainer"}
    assert all(set(entry) <= {"name", "weight", "kwargs"} for entry in config["rewards"])
    fields = {f.name for f in dataclasses.fields(GRPOConfig)}
    assert set(config["trainer"]) <= fields
    rows = [json.loads(line) for line in (EXAMPLE.parent / config["dataset"]["source"]).read_text().splitlines()]
    assert len(rows) >= 10 and all(row["prompt"][-1]["role"] == "user" for row in rows)
    assert any(row["prompt"][0]["role"] == "system" for row in rows)


def test_example_principles_are_ahimsa_and_dharma_at_half_weight_each():
    funcs, weights = rewards_from_config(load()["rewards"])  # what a training run builds from the config
    assert weights == [1.0] and len(funcs) == 1
    reward = funcs[0]
    assert isinstance(reward, Principles)
    assert [(p.name, p.weight) for p in reward.parsed_principles] == [("ahimsa", 0.5), ("dharma", 0.5)]
    assert "harm" in reward.parsed_principles[0].rubric.lower()
    assert "role" in reward.parsed_principles[1].rubric.lower()


def test_example_reward_scores_dataset_prompts_through_a_judge(tmp_path):
    config = load()
    rows = [json.loads(line) for line in (EXAMPLE.parent / config["dataset"]["source"]).read_text().splitlines()][:2]
    seen: list[RecordedRequest] = []

    def verdict(request: RecordedRequest) -> str:
        seen.append(request)
        return '{"reason": "fine", "score": 8}' if "ahimsa" in request.text else '{"reason": "off", "score": 2}'

    entry = config["rewards"][0]
    with LocalChatServer(verdict) as server:
        reward = get_reward(entry["name"], **{**entry["kwargs"], "base_url": server.base_url, "cache": None})
        results = reward.explain(
            prompts=[row["prompt"] for row in rows],
            completions=[[{"role": "assistant", "content": "Here is how."}]] * 2,
        )
    assert [r.score for r in results] == [pytest.approx(0.5 * 7 / 9 + 0.5 * 1 / 9)] * 2
    assert results[0].metrics["ahimsa"] == pytest.approx(7 / 9) and results[0].metrics["dharma"] == pytest.approx(1 / 9)
    assert len(seen) == 4 and all(r.body["model"] == entry["kwargs"]["model"] for r in seen)
    assert "[system]\nYou are the support assistant of Ledgerly" in seen[0].text  # the judge sees the role
