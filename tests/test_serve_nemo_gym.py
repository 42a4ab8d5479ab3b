"""``POST /verify``: NeMo-Gym's resources-server verify request, scored on a real server, answered in its shape.

The request and response shapes follow NeMo-Gym's ``BaseVerifyRequest`` / ``BaseVerifyResponse``: the request
(``responses_create_params``, ``response`` with Responses API ``output`` items, the task's fields) echoed back
with ``reward``, ``mask_sample``, ``failure_kind`` and ``failure_reason``.
"""

from __future__ import annotations

import httpx
import pytest
from serve_helpers import running_server

pytestmark = pytest.mark.slow


def _request(final_text: str, answer: str = "18") -> dict:
    return {
        "responses_create_params": {"input": [{"role": "user", "content": "9 * 2?"}], "tools": []},
        "response": {
            "id": "resp_1",
            "object": "response",
            "output": [
                {
                    "type": "function_call",
                    "name": "calculator",
                    "arguments": '{"expression": "9 * 2"}',
                    "call_id": "c1",
                },
                {"type": "function_call_output", "call_id": "c1", "output": "#### 18"},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": final_text}]},
            ],
        },
        "answer": answer,
    }


def test_verify_scores_the_final_message_and_echoes_the_request(tmp_path):
    config = tmp_path / "serve.yaml"
    config.write_text("rewards: [gsm8k_accuracy, tool_success]\n")
    with running_server(config) as (url, _):
        good = httpx.post(url + "/verify", json=_request("9 * 2 = 18\n#### 18"), timeout=60).json()
        copied = httpx.post(url + "/verify", json=_request("The tool knows."), timeout=60).json()
        bad = httpx.post(url + "/verify", json={"responses_create_params": {}}, timeout=60)
    assert good["reward"] == 2.0 and good["mask_sample"] is False and good["answer"] == "18"
    assert good["reward_components"] == {"gsm8k_accuracy": 1.0, "tool_success": 1.0}  # each reward, for GDPO
    assert copied["reward_components"] == {"gsm8k_accuracy": 0.0, "tool_success": 1.0}
    assert good["response"]["id"] == "resp_1"  # the request is echoed, as NeMo-Gym's response model extends it
    # the answer only in the tool's result is not the model's answer
    assert copied["reward"] == 1.0
    assert bad.status_code == 400 and "response" in bad.json()["error"]["message"]


def test_verify_with_output_as_a_string_is_a_400_saying_why(tmp_path):
    config = tmp_path / "serve.yaml"
    config.write_text("rewards: [gsm8k_accuracy]\n")
    body = {"responses_create_params": {"input": "9 * 2?"}, "response": {"output": "#### 18"}, "answer": "18"}
    with running_server(config) as (url, _):
        response = httpx.post(url + "/verify", json=body, timeout=60)
    assert response.status_code == 400
    assert "'response.output' must be a list" in response.json()["error"]["message"]
