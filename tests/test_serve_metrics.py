"""``GET /metrics`` of a real reward server, read with Prometheus' own parser (``prometheus_client``)."""

from __future__ import annotations

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
