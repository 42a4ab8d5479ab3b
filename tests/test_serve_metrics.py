"""``GET /metrics`` of a real reward server, read with Prometheus' own parser (``prometheus_client``)."""

from __future__ import annotations

import threading
import time

import httpx
import pytest
from serve_helpers import running_server, write_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

pytest.importorskip("uvicorn")
parser = pytest.importorskip("prometheus_client.parser")


def _samples(text: str) -> dict[tuple[str, tuple], float]:
    out = {}
    for family in parser.text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def test_metrics_count_requests_samples_failures_and_latency_per_reward(tmp_path):
    config = write_config(tmp_path, "[vowel_share, slow_length]")
    with running_server(config, "--max-samples", "100") as (url, _):
        for _ in range(3):
            assert httpx.post(url + "/score", json={"completions": ["aab", "xyz"]}, timeout=60).status_code == 200
        assert httpx.post(url + "/score", json={"completions": "aab"}, timeout=60).status_code == 400
        assert httpx.post(url + "/score", json={"completions": ["a"] * 101}, timeout=60).status_code == 413
        response = httpx.get(url + "/metrics", timeout=60)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    got = _samples(response.text)
    p = "rewardsmith_serve_"
    assert got[(f"{p}requests_total", (("endpoint", "/score"), ("status", "200")))] == 3
    assert got[(f"{p}requests_total", (("endpoint", "/score"), ("status", "400")))] == 1
    assert got[(f"{p}failures_total", (("kind", "bad_request"),))] == 1
    assert got[(f"{p}failures_total", (("kind", "too_large"),))] == 1
    assert got[(f"{p}samples_total", (("endpoint", "/score"),))] == 6
    for name in ("vowel_share", "slow_length"):
        assert got[(f"{p}reward_samples_total", (("reward", name),))] == 6
        assert got[(f"{p}reward_errors_total", (("reward", name),))] == 0
        assert got[(f"{p}reward_seconds_count", (("reward", name),))] == 3
    assert got[(f"{p}request_seconds_count", (("endpoint", "/score"),))] == 5
    assert got[(f"{p}request_seconds_bucket", (("endpoint", "/score"), ("le", "+Inf")))] == 5
    assert got[(f"{p}in_flight", ())] == 0 and got[(f"{p}queue_depth", ())] == 0


def test_metrics_count_each_rewards_errors(tmp_path):
    config = write_config(tmp_path, "[vowel_share, fails_on_boom]")
    with running_server(config) as (url, _):
        batches = [["aab", "boom", "xyz"], ["kaboom!", "boom", "e"], ["fine"]]
        for completions in batches:
            answer = httpx.post(url + "/score", json={"completions": completions}, timeout=60)
            assert answer.status_code == 200
            failed = [i for i, c in enumerate(completions) if "boom" in c]
            assert [i for i, s in enumerate(answer.json()["rewards"]["fails_on_boom"]) if s is None] == failed
        got = _samples(httpx.get(url + "/metrics", timeout=60).text)
    p = "rewardsmith_serve_"
    assert got[(f"{p}reward_errors_total", (("reward", "fails_on_boom"),))] == 3
    assert got[(f"{p}reward_errors_total", (("reward", "vowel_share"),))] == 0
    assert got[(f"{p}reward_samples_total", (("reward", "fails_on_boom"),))] == 7
    assert got[(f"{p}requests_total", (("endpoint", "/score"), ("status", "200")))] == 3


def _wait_for(url: str, wanted, what: str) -> dict:
    """Read /metrics until ``wanted(samples)`` holds (the server's own counts, not a time); fail after 120 s."""
    deadline = time.monotonic() + 120
    while True:
        got = _samples(httpx.get(url + "/metrics", timeout=60).text)
        if wanted(got):
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"never saw {what}: {got}")
        time.sleep(0.05)


def test_metrics_show_batches_waiting_while_the_server_is_at_max_concurrency(tmp_path):
    config = write_config(tmp_path, "[gated_length]")
    gate = tmp_path / "gate"
    p = "rewardsmith_serve_"
    answers: dict[int, httpx.Response] = {}

    def send(i: int, completions: list[str]) -> None:
        body = {"completions": completions, "columns": {"gate": [str(gate)] * len(completions)}}
        answers[i] = httpx.post(url + "/score", json=body, timeout=180)

    with running_server(config, "--max-concurrency", "1") as (url, _):
        threads = [threading.Thread(target=send, args=(0, ["held"]))]
        try:
            threads[0].start()
            _wait_for(url, lambda g: g[(f"{p}in_flight", ())] == 1, "the first batch in flight")
            for i, completions in enumerate([["ab", "abc"], ["abcd"]], 1):
                threads.append(threading.Thread(target=send, args=(i, completions)))
                threads[-1].start()
            waiting = _wait_for(url, lambda g: g[(f"{p}queue_depth", ())] == 2, "two batches waiting")
            assert waiting[(f"{p}in_flight", ())] == 1  # max concurrency 1: the others wait their turn
            assert waiting.get((f"{p}reward_samples_total", (("reward", "gated_length"),)), 0) == 0  # none scored
        finally:
            gate.write_text("open")
            for thread in threads:
                thread.join(timeout=180)
        after = _samples(httpx.get(url + "/metrics", timeout=60).text)
    assert {i: a.json()["scores"] for i, a in answers.items()} == {0: [4.0], 1: [2.0, 3.0], 2: [4.0]}
    assert after[(f"{p}queue_depth", ())] == 0 and after[(f"{p}in_flight", ())] == 0
    assert after[(f"{p}reward_samples_total", (("reward", "gated_length"),))] == 4
