"""The Open Reward Standard server, served by ors-sdk's own Server on 127.0.0.1 and driven by its own client."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest

pytest.importorskip("ors")

import uvicorn
from ors.client import ORS

from rewardsmith import RewardConfigError
from rewardsmith.integrations.ors import ors_environment, ors_server

TASKS = [
    {"prompt": "What is the code stored under k1? Answer with '#### CODE'.", "answer": "417", "key": "k1"},
    {"prompt": "What is 9 * 2? Answer with '#### N'.", "answer": "18", "key": "k2"},
]


class Store:
    """A key-value store the agent reads with its ``lookup`` tool (a TRL-style environment)."""

    def reset(self, **row) -> str:
        self.codes = {"k1": "417", "k2": "18"}
        self.looked_up = []
        return "Use the lookup tool."

    def lookup(self, key: str) -> str:
        """Look up the code stored under a key.

        Args:
            key: the key
        """
        self.looked_up.append(key)
        return self.codes[key]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _serving(server) -> Iterator[str]:
    """``ors.Server``'s app under uvicorn on a free port of 127.0.0.1, for the length of the block."""
    port = _free_port()
    running = uvicorn.Server(uvicorn.Config(server.app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    try:
        while not running.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the ORS server did not start"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        running.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def url():
    config = [{"name": "gsm8k_accuracy", "weight": 1.0}, {"name": "tool_success", "weight": 0.5}]
    with _serving(ors_server(config, TASKS, environment=Store, name="store")) as where:
        yield where


def test_the_client_sees_the_tasks_the_prompt_and_the_tools(url):
    with ORS(base_url=url) as client:
        env = client.environment("store")
        assert env.list_splits() == ["train"]
        assert [t.task_spec["answer"] for t in env.list_tasks("train")] == ["417", "18"]
        tools = {t.name: t for t in env.list_tools()}
        assert sorted(tools) == ["lookup", "submit"]
        assert tools["lookup"].input_schema["properties"]["key"]["type"] == "string"
        with env.session(split="train", index=0) as session:
            (block,) = session.get_prompt()
            assert block.text.startswith("What is the code stored under k1?") and "Use the lookup tool." in block.text


def test_a_rollout_through_the_tools_is_scored_by_the_rewards_with_their_weights(url):
    with ORS(base_url=url) as client:
        env = client.environment("store")
        with env.session(split="train", index=0) as session:
            looked = session.call_tool("lookup", {"key": "k1"})
            assert looked.blocks[0].text == "417" and looked.reward is None and not looked.finished
            out = session.call_tool("submit", {"answer": "The code is 417.\n#### 417"})
        assert out.finished and out.reward == pytest.approx(1.5)  # 1 * accuracy + 0.5 * every call succeeded
        assert out.metadata["components"] == {"gsm8k_accuracy": 1.0, "tool_success": 1.0}
        with env.session(split="train", index=0) as session:
            failed = session.call_tool("lookup", {"key": "k9"})  # the tool raises: a failed call, as TRL records it
            assert "KeyError" in failed.blocks[0].text
            out = session.call_tool("submit", {"answer": "#### 400"})
        assert out.reward == 0.0 and out.metadata["components"] == {"gsm8k_accuracy": 0.0, "tool_success": 0.0}
        with env.session(split="train", index=1) as session:
            out = session.call_tool("submit", {"answer": "#### 18"})  # no calls: tool_success does not apply
        assert out.reward == 1.0 and out.metadata["components"]["tool_success"] is None


def test_a_per_turn_reward_scores_each_tool_output():
    server = ors_server("gsm8k_accuracy", TASKS, environment=Store, name="turns", turn_reward="tool_success_turns")
    with (
        _serving(server) as where,
        ORS(base_url=where) as client,
        client.environment("turns").session(split="train", index=0) as session,
    ):
        good = session.call_tool("lookup", {"key": "k1"})
        bad = session.call_tool("lookup", {"key": "k9"})
        out = session.call_tool("submit", {"answer": "#### 417"})
    assert (good.reward, bad.reward) == (0.0, -1.0)  # each turn's own score: 0 good, -1 failed
    assert out.reward == 1.0 and out.finished
    assert out.metadata["components"] == {"gsm8k_accuracy": 1.0}  # one reward: itself


def test_mistakes_are_config_errors_before_anything_serves():
    with pytest.raises(RewardConfigError, match="at least one task"):
        ors_environment("gsm8k_accuracy", [])
    with pytest.raises(RewardConfigError, match="no 'prompt' column"):
        ors_environment("gsm8k_accuracy", [{"question": "?"}])
    with pytest.raises(RewardConfigError, match="must be an identifier"):
        ors_environment("gsm8k_accuracy", TASKS, name="my env")
    with pytest.raises(RewardConfigError, match="turn_reward must be a per-turn reward"):
        ors_environment("gsm8k_accuracy", TASKS, turn_reward="tool_success")
