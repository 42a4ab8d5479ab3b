"""OpenEnv rubrics both ways, with the real openenv package.

openenv 0.10 cannot share an environment with verifiers 0.4 (mcp 1.x against mcp 2.0), so it lives in a folder
of its own (``make openenv``: ``.cache/openenv``, or ``REWARDSMITH_OPENENV_SITE``) and the checks run in a
subprocess whose path starts with it (tests/openenv_probe.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rewardsmith.integrations.openenv import action_text, rubric_reward

ROOT = Path(__file__).resolve().parents[1]
SITE = Path(os.environ.get("REWARDSMITH_OPENENV_SITE", ROOT / ".cache" / "openenv"))


@pytest.fixture(scope="module")
def measured() -> dict:
    if not (SITE / "openenv").is_dir():
        pytest.skip(f"openenv is not installed in {SITE}: run `make openenv`")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SITE), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "openenv_probe.py")], capture_output=True, text=True, env=env,
        timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_rewardsmith_reward_is_an_openenv_rubric_that_openenvs_containers_compose(measured):
    assert measured["is_rubric"] is True
    assert measured["accuracy"] == [1.0, 0.0, 0.0]  # no number: not scored, 0.0 for OpenEnv
    assert measured["reason"]
    assert measured["weighted"] == pytest.approx(0.5 * (2.0 * 1.0 + 1.0) + 0.5 * 0.0)  # Exact wants "18" alone
    assert measured["gated"] == 0.0  # think_format fails the gate
    assert measured["children"] == ["rubric_0", "rubric_1"]


def test_an_openenv_rubric_is_a_rewardsmith_reward_sync_or_async(measured):
    assert measured["exact_name"] == "exact"
    assert measured["exact"] == [1.0, 1.0, 0.0]
    assert measured["async"] == [0.5, 0.0]
    assert measured["explain"] == [1.0]


def test_an_episode_is_scored_as_a_rollout_with_step_rewards_discounted_or_per_turn(measured):
    assert measured["steps"] == [0.0, 0.0, 1.0]  # OpenEnv's intermediate reward until done, then the score
    assert measured["discounted"] == [0.25, 0.5, 1.0]  # gamma ** (T - 1 - t) * score, as OpenEnv discounts
    assert measured["per_turn_steps"] == [0.0, 0.0, 2.0]  # the per-turn reward's sum at the end
    assert measured["per_turn"] == [1.0, 0.0, 1.0]  # and its own turn rewards as the steps' rewards


def test_without_openenv_a_rubric_is_still_anything_called_with_action_and_observation():
    def rubric(action, observation):
        return len(action) / 10

    assert rubric_reward(rubric, name="brevity")(completions=["12345"]) == [0.5]
    assert action_text({"content": "x", "message": "y"}) == "x"
    with pytest.raises(Exception, match="takes an OpenEnv rubric"):
        rubric_reward(42)
