"""One string of a request is bounded (``--max-text-mb``, 1 MiB by default): a real server on 127.0.0.1.

A string at the limit is read whole and scored; one byte over it, on ``/score``, ``/get_reward`` or
``/verify``, as a value, a key or a message's text parts joined, is refused with 413 and a message naming the
limit and the flag that raises it. (That the reader refuses before the string is built is checked with
tracemalloc in ``tests/test_serve_body.py``.)
"""

from __future__ import annotations

import json

import httpx
import pytest
from serve_helpers import running_server, write_config

from rewardsmith import get_reward
from rewardsmith.serve import ServerSettings

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

pytest.importorskip("uvicorn")

MIB = 1 << 20


def _post(url: str, path: str, body: object) -> httpx.Response:
    raw = json.dumps(body, ensure_ascii=False).encode()
    return httpx.post(url + path, content=raw, headers={"content-type": "application/json"}, timeout=120)


def _refused(response: httpx.Response, limit: str) -> str:
    assert response.status_code == 413, response.text
    message = response.json()["error"]["message"]
    assert "max_text_bytes" in message and limit in message and "--max-text-mb" in message, message
    return message


def _think(size: int) -> str:
    """A think_format completion whose text takes ``size`` bytes."""
    return "<think>" + "z" * (size - 33) + "</think><answer>1</answer>"


def test_the_default_limit_admits_a_completion_at_it_and_refuses_one_byte_more(tmp_path):
    config = tmp_path / "serve.yaml"
    config.write_text("rewards: [think_format]\n")
    at, over = _think(MIB), _think(MIB + 1)
    assert len(at.encode()) == MIB == ServerSettings().max_text_bytes
    with running_server(config) as (url, _):
        admitted = _post(url, "/score", {"completions": [at]})
        refused = _post(url, "/score", {"completions": ["<think>a</think><answer>1</answer>", over]})
        assert httpx.get(url + "/health", timeout=30).status_code == 200
    assert admitted.status_code == 200, admitted.text
    assert admitted.json()["scores"] == get_reward("think_format").scores(completions=[at]) == [1.0]
    message = _refused(refused, "1 MiB")
    assert "'completions[]'" in message and f"{MIB:,} bytes" in message


@pytest.fixture(scope="module")
def small_limit(tmp_path_factory):
    """A server whose limit on one text is 0.25 MiB, scoring each completion by its length in characters."""
    config = write_config(tmp_path_factory.mktemp("serve"), "[slow_length]")
    with running_server(config, "--max-text-mb", "0.25") as (url, _):
        yield url


def test_the_limit_is_configurable_and_counts_the_texts_utf8_bytes(small_limit):
    limit = MIB // 4
    accented = "é" * (limit // 2)  # 2 bytes each in UTF-8: exactly the limit, half as many characters
    admitted = _post(small_limit, "/score", {"completions": [accented, "a" * limit]})
    assert admitted.status_code == 200, admitted.text
    assert admitted.json()["scores"] == [float(limit // 2), float(limit)]  # read whole
    # Escapes take more bytes in the body than in the text: \u00e9 is 6 bytes for 2 of text, still at the limit.
    escaped = json.dumps({"completions": [accented]}, ensure_ascii=True).encode()
    assert len(escaped) > 3 * limit
    response = httpx.post(small_limit + "/score", content=escaped, headers={"content-type": "application/json"})
    assert response.status_code == 200 and response.json()["scores"] == [float(limit // 2)]
    _refused(_post(small_limit, "/score", {"completions": [accented + "a"]}), "0.25 MiB")
    _refused(_post(small_limit, "/score", {"completions": ["a"], "columns": {"delay": ["1" * (limit + 1)]}}), "0.25")


def test_a_long_key_is_refused_too(small_limit):
    body = {"completions": ["a"], "columns": {"k" * (MIB // 4 + 1): ["x"]}}
    message = _refused(_post(small_limit, "/score", body), "0.25 MiB")
    assert "'columns'" in message


def test_openrlhf_queries_are_bounded_too(small_limit):
    _refused(_post(small_limit, "/get_reward", {"query": ["q " * (MIB // 8 + 1)]}), "0.25 MiB")
    assert _post(small_limit, "/get_reward", {"query": ["q " * (MIB // 16)]}).status_code == 200


def _verify(parts: list[str]) -> dict:
    content = [{"type": "output_text", "text": text} for text in parts]
    message = {"type": "message", "role": "assistant", "content": content}
    return {"responses_create_params": {"input": "2 + 2?"}, "response": {"output": [message]}, "answer": "4"}


def test_verify_bounds_each_text_and_a_messages_parts_joined(small_limit):
    limit = MIB // 4
    admitted = _post(small_limit, "/verify", _verify(["a" * (limit // 2), "b" * (limit // 2)]))
    assert admitted.status_code == 200, admitted.text
    assert admitted.json()["reward"] == float(limit)  # the parts joined: the message's text, read whole
    message = _refused(_post(small_limit, "/verify", _verify(["a" * (limit + 1)])), "0.25 MiB")
    assert "'response.output[].content[].text'" in message
    joined = _refused(_post(small_limit, "/verify", _verify(["a" * (limit // 2), "b" * (limit // 2 + 1)])), "0.25")
    assert "its parts joined" in joined and "'response.output[]'" in joined
    assert httpx.get(small_limit + "/health", timeout=30).status_code == 200


def test_score_bounds_a_chat_messages_parts_joined(small_limit):
    limit = MIB // 4

    def body(*parts: str) -> dict:
        content = [{"type": "text", "text": text} for text in parts]
        return {"completions": [[{"role": "assistant", "content": content}]]}

    admitted = _post(small_limit, "/score", body("a" * (limit // 2), "b" * (limit // 2)))
    assert admitted.status_code == 200 and admitted.json()["scores"] == [float(limit)], admitted.text
    joined = _refused(_post(small_limit, "/score", body("a" * (limit // 2), "b" * (limit // 2 + 1))), "0.25 MiB")
    assert "its parts joined" in joined and "'completions[][]'" in joined
