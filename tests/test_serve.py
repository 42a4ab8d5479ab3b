"""``rewardsmith serve`` as a real subprocess on 127.0.0.1, and the ``remote`` client reward against it."""

from __future__ import annotations

import json
import signal
import threading
import time

import httpx
import pytest
from serve_helpers import running_server, write_config
from serve_rewards import vowel_share

from rewardsmith import get_reward
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.integrations.remote import remote

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

pytest.importorskip("uvicorn")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    config = write_config(
        tmp_path_factory.mktemp("serve"), "[vowel_share, gsm8k_accuracy, async_echo]", "[0.5, 1.0, 2.0]"
    )
    with running_server(config, "--max-body-mb", "1") as (url, _proc):
        yield url


def test_health_lists_rewards_and_columns(server):
    health = httpx.get(server + "/health").json()
    assert health["status"] == "ok"
    assert health["rewards"] == ["vowel_share", "gsm8k_accuracy", "async_echo"]
    assert health["columns"]["required"] == ["answer"]


def test_score_gives_weighted_scores_reasons_and_metrics(server):
    body = {"completions": ["aaab #### 4", "", "7"], "columns": {"answer": ["4", "5", "7"]}}
    answer = httpx.post(server + "/score", json=body).json()
    vowels = get_reward("vowel_share")  # registered in this process too by serve_rewards' import
    assert answer["rewards"]["gsm8k_accuracy"] == [1.0, 0.0, 1.0]
    assert answer["rewards"]["vowel_share"] == vowels(completions=body["completions"])
    assert answer["rewards"]["async_echo"] == [0.0, 0.0, 1.0]
    assert answer["scores"][0] == pytest.approx(0.5 * 0.75 + 1.0)
    assert answer["scores"][1] == 0.0  # vowel_share does not apply (None); the others score 0
    assert answer["reasons"]["vowel_share"][:2] == ["3/4 vowels", "no letters"]
    assert answer["metrics"]["vowel_share"][0] == {"letters": 4}
    assert answer["errors"] == {"vowel_share": 0, "gsm8k_accuracy": 0, "async_echo": 0}


def test_openrlhf_remote_protocol(server):
    """The request OpenRLHF's SingleTurnAgentExecutor sends (one sample per request): query = prompt + response
    decoded with its special tokens, prompts, labels; it reads rewards, scores and extra_logs."""
    prompt = "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n"
    body = {"query": [prompt + "so #### 4<|im_end|>"], "prompts": [prompt], "labels": ["4"]}
    answer = httpx.post(server + "/get_reward", json=body).json()
    assert set(answer) == {"rewards", "scores", "extra_logs"}
    assert answer["extra_logs"]["gsm8k_accuracy"] == [1.0]
    assert answer["extra_logs"]["rewardsmith/prompt_not_found"] == [0.0]
    # a batch (several samples per request, as older OpenRLHF sent): the end marker is gone before scoring
    prompts = ["<|user|>2+2?<|assistant|>", "<|user|>3+4?<|assistant|>", "P"]
    responses = ["#### 4", "It is 8", "7</s>"]
    body = {"query": [p + r for p, r in zip(prompts, responses)], "prompts": prompts, "labels": ["4", "7", "7"]}
    answer = httpx.post(server + "/get_reward", json=body).json()
    assert answer["extra_logs"]["gsm8k_accuracy"] == [1.0, 0.0, 1.0]
    assert answer["extra_logs"]["async_echo"] == [0.0, 0.0, 1.0]
    assert len(answer["rewards"]) == 3 and answer["rewards"] == answer["scores"]
    assert all(isinstance(x, float) for x in answer["rewards"])
    # JSON-object labels become columns; a query without its prompt is scored whole and counted
    body = {"query": ["7"], "prompts": ["not in the query"], "labels": [json.dumps({"answer": "7"})]}
    answer = httpx.post(server + "/get_reward", json=body).json()
    assert answer["extra_logs"]["async_echo"] == [1.0]
    assert answer["extra_logs"]["rewardsmith/prompt_not_found"] == [1.0]
    # labels that do not match the queries: a clear 400
    bad = httpx.post(server + "/get_reward", json={"query": ["a", "b"], "labels": ["1"]})
    assert bad.status_code == 400 and "one label per query" in bad.json()["error"]["message"]


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        (b"{not json", 400, "not valid JSON"),
        (b"[1, 2]", 400, "JSON object"),
        (json.dumps({"completions": "one string"}).encode(), 400, "must be a list"),
        (json.dumps({"completions": ["a"]}).encode(), 400, "needs the column"),
        (json.dumps({"completions": ["a"], "columns": {"answer": ["1", "2"]}}).encode(), 400, "list of 1 values"),
        (json.dumps({"completions": ["a"], "columns": {"answer": ["1"]}, "extra": 1}).encode(), 400, "unknown key"),
        (
            json.dumps({"completions": ["a"], "prompts": ["p", "q"], "columns": {"answer": ["1"]}}).encode(),
            400,
            "prompts",
        ),
        (json.dumps({"completions": ["a" * 2_000_000], "columns": {"answer": ["1"]}}).encode(), 413, "limit"),
        (json.dumps({"query": "x"}).encode(), 400, "must be a list"),
    ],
)
def test_bad_requests_get_clear_json_errors(server, body, status, words):
    path = "/get_reward" if b'"query"' in body else "/score"
    response = httpx.post(server + path, content=body, headers={"content-type": "application/json"})
    assert response.status_code == status
    message = response.json()["error"]["message"]
    assert words in message and "Traceback" not in message


def test_hostile_completions_score_none_or_a_number_never_a_500(server):
    body = {
        "completions": [None, 5, {"role": "x"}, [{"content": None}], "\x00" * 10],
        "columns": {"answer": [None] * 5},
    }
    response = httpx.post(server + "/score", json=body)
    assert response.status_code in (200, 400), response.text
    if response.status_code == 200:
        assert len(response.json()["scores"]) == 5


def test_bearer_token_is_required_when_set(tmp_path):
    config = write_config(tmp_path, "[vowel_share]")
    with running_server(config, "--token-env", "SERVE_TOKEN", env={"SERVE_TOKEN": "s3cret-token"}) as (url, _):
        body = {"completions": ["abc"]}
        assert httpx.post(url + "/score", json=body).status_code == 401
        assert httpx.post(url + "/score", json=body, headers={"Authorization": "Bearer nope"}).status_code == 401
        ok = httpx.post(url + "/score", json=body, headers={"Authorization": "Bearer s3cret-token"})
        assert ok.json()["scores"] == [pytest.approx(1 / 3)]
        assert httpx.get(url + "/health").status_code == 200  # health stays open for load balancers
        client = remote(url, token_env="SERVE_TOKEN")
        import os

        os.environ["SERVE_TOKEN"] = "s3cret-token"
        try:
            assert client.scores(completions=["abc", "aaa"]) == [pytest.approx(1 / 3), 1.0]
        finally:
            del os.environ["SERVE_TOKEN"]


def test_graceful_shutdown_finishes_the_batch_in_flight(tmp_path):
    config = write_config(tmp_path, "[slow_length]")
    box: dict = {}
    with running_server(config) as (url, proc):

        def send():
            body = {"completions": ["abcd", "xy"], "columns": {"delay": [1.5, 0.0]}}
            box["response"] = httpx.post(url + "/score", json=body, timeout=60)

        thread = threading.Thread(target=send)
        thread.start()
        deadline = time.monotonic() + 30
        while httpx.get(url + "/health").json()["in_flight"] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        thread.join(60)
        assert proc.wait(60) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once it has shut down
    assert box["response"].status_code == 200
    assert box["response"].json()["scores"] == [4.0, 2.0]


def test_remote_reward_keeps_order_across_chunks_and_concurrency(server):
    texts = [f"{'a' * (i % 7)}{'b' * (i % 5)}" for i in range(203)]
    client = remote(server, reward="vowel_share", batch_size=16, max_concurrency=8)
    assert client.scores(completions=texts) == vowel_share(completions=texts)
    why = client.explain(completions=["aab"])[0]
    assert why.score == pytest.approx(2 / 3) and why.reason == "2/3 vowels"
    weighted = remote(server, batch_size=2)
    assert weighted.scores(completions=["#### 4", "x"], answer=["4", "4"]) == [1.0, 0.0]


def test_remote_naming_a_reward_the_server_does_not_serve_fails_on_the_first_call_naming_those_it_serves(server):
    client = remote(server, reward="vowel_shares")
    with pytest.raises(RewardConfigError, match="does not serve 'vowel_shares'; it serves vowel_share"):
        client.scores(completions=["aab"])


def test_remote_reward_fails_to_none_counted_when_the_server_is_gone():
    from serve_helpers import free_port

    client = remote(f"http://127.0.0.1:{free_port()}", max_retries=1, request_timeout=2.0)
    assert client.scores(completions=["a", "b", "c"]) == [None, None, None]
    assert client.stats["errors"] == 3


def test_remote_reward_retries_a_busy_server(tmp_path):
    """With one batch at a time and no queue, concurrent batches get 503 + Retry-After and are retried."""
    config = write_config(tmp_path, "[slow_length]")
    with running_server(config, "--max-concurrency", "1", "--max-queue", "0") as (url, _):
        client = remote(url, batch_size=1, max_concurrency=4, max_retries=8)
        texts = ["a" * i for i in range(1, 7)]
        assert client.scores(completions=texts, delay=[0.2] * 6) == [float(i) for i in range(1, 7)]
        assert client.stats["errors"] == 0


def test_remote_reward_in_a_real_grpo_trainer(server, tiny_model, tmp_path):
    from datasets import Dataset
    from trl import GRPOTrainer
    from trl_helpers import tiny_grpo_config

    client = remote(server, reward="vowel_share", batch_size=4)
    dataset = Dataset.from_list([{"prompt": p} for p in ["Say a word.", "Name a fruit."] * 4])
    trainer = GRPOTrainer(
        model=str(tiny_model), reward_funcs=client, args=tiny_grpo_config(tmp_path), train_dataset=dataset
    )
    trainer.train()
    logged = [e for e in trainer.state.log_history if "rewards/vowel_share/mean" in e]
    assert [e["step"] for e in logged] == [1, 2]
    assert all(e["vowel_share/errors"] == 0.0 for e in logged if "vowel_share/errors" in e)
