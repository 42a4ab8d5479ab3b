"""The reward server against slow, numerous and oversized clients, and the ``remote`` client against a server
sending non-finite scores. Real servers on 127.0.0.1; the time limits tested are ones that must fire."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from serve_helpers import running_server, write_config

from rewardsmith.integrations.remote import remote

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

pytest.importorskip("uvicorn")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    config = write_config(tmp_path_factory.mktemp("serve"), "[vowel_share, slow_length]")
    flags = ["--max-samples", "1000", "--header-timeout", "2", "--body-timeout", "2", "--max-connections", "8"]
    with running_server(config, *flags) as (url, _proc):
        yield url


def _address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def _closed_by_server(sock: socket.socket, limit: float = 60.0) -> bytes:
    """Everything the server sends until it closes the connection (``limit`` only guards the test)."""
    sock.settimeout(limit)
    received = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            received += chunk
    return received


def test_a_batch_over_max_samples_is_413_with_a_json_message(server):
    """A few bytes per empty completion used to cost the server ~110x their size: the batch is bounded."""
    body = json.dumps({"completions": [""] * 1001})
    response = httpx.post(server + "/score", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 413 and "1,001 samples" in response.json()["error"]["message"]
    labels = httpx.post(server + "/get_reward", json={"query": ["q"] * 1001}, timeout=30)
    assert labels.status_code == 413
    assert httpx.post(server + "/score", json={"completions": ["a"] * 1000}, timeout=60).status_code == 200


def test_request_headers_sent_a_byte_at_a_time_are_cut_off(server):
    sock = socket.create_connection(_address(server))
    sock.sendall(b"POST /score HTTP/1.1\r\nHost: x\r\n")
    closed = threading.Event()

    def trickle() -> None:
        for k in range(200):  # 100 s of headers if nobody stops it
            if closed.is_set():
                return
            with contextlib.suppress(OSError):
                sock.sendall(f"X-Slow-{k}: 1\r\n".encode())
            time.sleep(0.5)

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    _closed_by_server(sock)
    closed.set()
    sock.close()
    thread.join(5)
    assert not thread.is_alive()  # the server hung up long before the headers would have finished


def test_a_body_that_never_finishes_is_408_with_a_json_message(server):
    sock = socket.create_connection(_address(server))
    head = b"POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    sock.sendall(head + b'{"completions": ')
    answer = _closed_by_server(sock).decode()
    sock.close()
    assert answer.startswith("HTTP/1.1 408") and '"status": 408' in answer.replace('"status":408', '"status": 408')


def test_connections_over_the_cap_get_503_and_the_server_stays_up(tmp_path):
    config = write_config(tmp_path, "[vowel_share]")
    with running_server(config, "--max-connections", "4", "--header-timeout", "60") as (url, _):
        idle = [socket.create_connection(_address(url)) for _ in range(4)]
        try:
            extra = socket.create_connection(_address(url))
            answer = _closed_by_server(extra).decode()
            extra.close()
            assert answer.startswith("HTTP/1.1 503") and "too many open connections" in answer
        finally:
            for sock in idle:
                sock.close()
        deadline = time.monotonic() + 30
        while True:  # the idle connections are closed: the server answers again
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url + "/health", timeout=5).status_code == 200:
                    break
            assert time.monotonic() < deadline
            time.sleep(0.2)


@pytest.mark.parametrize(
    "body",
    ['{"completions": ' + "[" * 100_000 + "]" * 100_000 + "}",
     '{"completions": ["a"], "columns": {"x": [' + "[" * 80 + "]" * 80 + "]}}",
     '{"completions": ["a"], "prompts": [' + '{"a": ' * 500 + "1" + "}" * 500 + "]}"],
    ids=["over-the-parser", "over-the-depth-limit", "objects"],
)  # fmt: skip
def test_deeply_nested_json_is_a_400_with_a_json_message(server, body):
    response = httpx.post(server + "/score", content=body, headers={"content-type": "application/json"}, timeout=60)
    assert response.status_code == 400 and "nested" in response.json()["error"]["message"]


@pytest.mark.parametrize("name", ["log_metric", "log_extra", "trainer_state", "completions", "environments"])
def test_reserved_column_names_are_a_400_with_a_json_message(server, name):
    response = httpx.post(server + "/score", json={"completions": ["a"], "columns": {name: [1]}}, timeout=60)
    assert response.status_code == 400 and name in response.json()["error"]["message"]
    labels = httpx.post(server + "/get_reward", json={"query": ["q a"], "labels": [{name: 1}]}, timeout=60)
    assert labels.status_code == 400 and "reserved" in labels.json()["error"]["message"]


def test_bodies_held_at_once_are_bounded_in_bytes(tmp_path):
    config = write_config(tmp_path, "[vowel_share]")
    with running_server(config, "--max-pending-mb", "0.01") as (url, _):
        small = httpx.post(url + "/score", json={"completions": ["a" * 100]}, timeout=60)
        big = httpx.post(url + "/score", json={"completions": ["a" * 20_000]}, timeout=60)
    assert small.status_code == 200
    assert big.status_code == 503 and big.headers["retry-after"] == "1" and "bytes" in big.json()["error"]["message"]


class _Sends(BaseHTTPRequestHandler):
    answer = b""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(self.answer)))
        self.end_headers()
        self.wfile.write(self.answer)

    def log_message(self, *args: object) -> None:
        pass


def test_remote_treats_non_finite_scores_as_failures_counted():
    handler = type("Handler", (_Sends,), {"answer": b'{"scores": [Infinity, 1e400, -Infinity, NaN, 0.5, null, "1"]}'})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        client = remote(f"http://127.0.0.1:{httpd.server_address[1]}", max_retries=0)
        scores = client.scores(completions=list("abcdefg"))
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert scores == [None, None, None, None, 0.5, None, None]
    assert client.stats["errors"] == 5  # four non-finite numbers and one text; null is "does not apply"
