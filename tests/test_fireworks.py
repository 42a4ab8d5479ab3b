"""Fireworks datasets against a local server on 127.0.0.1 that records what it receives: push, errors, read back."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fireworks_server import LocalFireworksServer
from typer.testing import CliRunner

from rewardsmith import evaluate
from rewardsmith.cli import app
from rewardsmith.data.tasks import gsm8k_final_answer
from rewardsmith.http.retry import RetryPolicy
from rewardsmith.http.testing import LocalChatServer
from rewardsmith.integrations.fireworks import FireworksClient, FireworksError, fetch_dataset, push_dataset

ROOT = Path(__file__).resolve().parents[1]
KEY = "fw-secret-key-0123456789"
SYSTEM = "Think, then answer with a number."
FAST = RetryPolicy(max_retries=3, backoff=0.01, max_backoff=0.05)


@pytest.fixture
def server():
    with LocalFireworksServer(api_key=KEY) as running:
        yield running


def _client(server: LocalFireworksServer, key: str = KEY) -> FireworksClient:
    return FireworksClient(api_key=key, base_url=server.root, policy=FAST)


def _gsm8k_rows(shared_data: Path, count: int) -> list[dict]:
    with open(shared_data / "gsm8k_test.jsonl", encoding="utf-8") as handle:
        return [json.loads(next(handle)) for _ in range(count)]


def test_push_command_creates_and_uploads_evaluation_jsonl_line_by_line(server, shared_data, tmp_path):
    env = {**os.environ, "FIREWORKS_API_KEY": KEY, "FIREWORKS_API_BASE": server.root, "HF_DATASETS_OFFLINE": "1"}
    # A real process: the command as users run it, talking to the server over the loopback.
    args = [
        "datasets",
        "push",
        str(shared_data / "gsm8k_test.jsonl"),
        "--to",
        "fireworks",
        "--dataset-id",
        "gsm8k-test",
    ]
    args += ["--account", "acme", "--converter", "gsm8k", "--system-prompt", SYSTEM, "--max-samples", "50"]
    cli = [sys.executable, "-c", "from rewardsmith.cli import main; main()"]
    done = subprocess.run([*cli, *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "pushed 50 examples to accounts/acme/datasets/gsm8k-test (state READY)" in done.stdout
    create, upload, describe = server.requests
    assert (create.method, create.path) == ("POST", "/v1/accounts/acme/datasets")
    assert create.json == {
        "datasetId": "gsm8k-test",
        "dataset": {"displayName": "gsm8k-test", "format": "CHAT", "exampleCount": "50"},
    }
    assert (upload.method, upload.path) == ("POST", "/v1/accounts/acme/datasets/gsm8k-test:upload")
    assert upload.headers["Content-Type"].startswith("multipart/form-data")
    assert {r.headers["Authorization"] for r in server.requests} == {f"Bearer {KEY}"}
    assert (describe.method, describe.path) == ("GET", "/v1/accounts/acme/datasets/gsm8k-test")
    filename, content = upload.files["file"]
    assert filename == "gsm8k-test.jsonl"
    lines = content.decode().splitlines()
    source = _gsm8k_rows(shared_data, 50)
    assert len(lines) == 50
    for line, row in zip(lines, source):
        assert json.loads(line) == {
            "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": row["question"]}],
            "ground_truth": gsm8k_final_answer(row["answer"]),
        }
    assert KEY not in done.stdout + done.stderr


def test_large_files_go_through_a_signed_url_without_the_key(server, tmp_path):
    data = tmp_path / "big.jsonl"
    data.write_text(
        "".join(
            json.dumps({"messages": [{"role": "user", "content": f"q{i}"}], "ground_truth": i}) + "\n"
            for i in range(200)
        )
    )
    client = _client(server)
    client.create_dataset("acme", "big", display_name="big", example_count=200)
    client.upload("acme", "big", data, single_limit=1000)
    calls = [(r.method, r.path.split("?")[0]) for r in server.requests]
    assert calls == [
        ("POST", "/v1/accounts/acme/datasets"),
        ("POST", "/v1/accounts/acme/datasets/big:getUploadEndpoint"),
        ("PUT", "/signed/put-0"),
        ("POST", "/v1/accounts/acme/datasets/big:validateUpload"),
    ]
    endpoint, put = server.requests[1], server.requests[2]
    assert endpoint.json == {"filenameToSize": {"big.jsonl": str(data.stat().st_size)}}
    assert "Authorization" not in put.headers and put.headers["Content-Type"] == "application/octet-stream"
    assert put.body == data.read_bytes() and server.datasets["acme/big"]["state"] == "READY"


def test_a_rejected_key_is_said_plainly_and_never_repeated(server, shared_data, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    wrong = "fw-wrong-key-9876543210"
    with pytest.raises(FireworksError) as caught:
        push_dataset(_gsm8k_rows(shared_data, 3), "d", account="acme", converter="gsm8k", client=_client(server, wrong))
    message = str(caught.value)
    assert "refused the API key in FIREWORKS_API_KEY (HTTP 401)" in message
    assert wrong not in message and wrong not in caplog.text and wrong not in repr(_client(server, wrong))
    assert "invalid API key: ***" in message  # the server echoed the key; it was taken out
    env = {"FIREWORKS_API_KEY": wrong, "FIREWORKS_API_BASE": server.root, "FIREWORKS_ACCOUNT_ID": "acme"}
    args = ["datasets", "push", str(shared_data / "gsm8k_test.jsonl"), "--dataset-id", "d", "--converter", "gsm8k"]
    done = CliRunner(env=env).invoke(app, [*args, "--max-samples", "2"])
    assert done.exit_code == 2 and "FIREWORKS_API_KEY" in done.output
    assert wrong not in done.output and "Traceback" not in done.output


def test_existing_dataset_quota_and_retries(server, tmp_path):
    rows = [{"question": "2+3?", "answer": "#### 5"}]
    client = _client(server)
    push_dataset(rows, "taken", account="acme", converter="gsm8k", client=client)
    with pytest.raises(FireworksError, match=r"already exists.*another --dataset-id"):
        push_dataset(rows, "taken", account="acme", converter="gsm8k", client=client)

    server.requests.clear()
    server.fail("/datasets", 429, "Quota exceeded: 100 datasets per account")
    with pytest.raises(FireworksError, match="quota is used up"):
        push_dataset(rows, "over", account="acme", converter="gsm8k", client=client)
    assert len(server.requests) == 1  # a used-up quota is not retried

    server.requests.clear()
    server.fail(":upload", 503, "try again")
    server.fail(":upload", 429, "slow down", headers={"Retry-After": "0.1"})
    result = push_dataset(rows, "flaky", account="acme", converter="gsm8k", client=client)
    assert result.state == "READY" and [r.path.endswith(":upload") for r in server.requests].count(True) == 3

    # A push that stopped after creating the dataset (state UPLOADING) is finished by the next one.
    client.create_dataset("acme", "half", display_name="half", example_count=1)
    assert push_dataset(rows, "half", account="acme", converter="gsm8k", client=client).state == "READY"


def test_account_and_id_are_checked_before_any_request(server, monkeypatch):
    monkeypatch.delenv("FIREWORKS_ACCOUNT_ID", raising=False)
    with pytest.raises(FireworksError, match="FIREWORKS_ACCOUNT_ID"):
        push_dataset([{"prompt": "hi", "answer": "1"}], "d", client=_client(server))
    with pytest.raises(FireworksError, match="not a Fireworks id"):
        push_dataset([{"prompt": "hi", "answer": "1"}], "a/b", account="acme", client=_client(server))
    monkeypatch.delenv("FIREWORKS_API_KEY", raising=False)
    with pytest.raises(FireworksError, match="export FIREWORKS_API_KEY"):
        FireworksClient()
    assert server.requests == []


def test_eval_reads_a_pushed_dataset_back_by_name(server, shared_data, tmp_path, monkeypatch):
    monkeypatch.setenv("FIREWORKS_API_KEY", KEY)
    monkeypatch.setenv("FIREWORKS_API_BASE", server.root)
    monkeypatch.setenv("REWARDSMITH_CACHE_DIR", str(tmp_path / "cache"))
    rows = _gsm8k_rows(shared_data, 20)
    push_dataset(rows, "gsm8k-20", account="acme", converter="gsm8k", system_prompt=SYSTEM)
    answers = {row["question"]: gsm8k_final_answer(row["answer"]) for row in rows}

    def solve(request):
        return f"<think>...</think><answer>{answers[request.messages[-1]['content']]}</answer>"

    with LocalChatServer(solve) as chat:
        generation = {"model": "m", "base_url": chat.base_url, "api_key_env": None}
        report = evaluate(
            "fireworks:acme/gsm8k-20", "gsm8k_accuracy", tmp_path / "out", converter="fireworks", generation=generation
        )
        assert chat.requests[0].messages[0] == {"role": "system", "content": SYSTEM}
    assert report.summary["rows"] == 20 and report.mean("gsm8k_accuracy") == 1.0
    assert (tmp_path / "cache" / "fireworks" / "acme" / "gsm8k-20" / "gsm8k-20.jsonl").is_file()
    assert fetch_dataset("acme/gsm8k-20", client=_client(server)).read_bytes() == server.content("acme", "gsm8k-20")
