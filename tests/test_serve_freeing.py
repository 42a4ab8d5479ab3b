"""A refused body leaves nothing big behind for whoever drops the error.

Dropping the last reference to millions of values frees them in one C call with the GIL held; when that
reference is an error's traceback, it is dropped on the event loop's thread, and every health check waits.
The reader empties what it had built, a part at a time, before its error leaves it; the server's answer
to a refused body carries no reference to the reader's frames. Counted here, not timed: the values the
frames of a refused body's error still hold.
"""

from __future__ import annotations

import json

import pytest

from rewardsmith.serve.app import ServerSettings, _HTTPError, _parse_json
from rewardsmith.serve.body import BodyError, TooManyValues, read_document
from rewardsmith.serve.freeing import count_values, dismantle
from rewardsmith.serve.nemo_gym import VERIFY_SINKS

#: A body of this many ``{}`` takes more than the reader's 16 MB floor (about 64 bytes each).
MANY = 400_000


def _held_by(error: BaseException) -> int:
    """The most values any local of the error's frames (and of the errors it was raised from) holds; the reader's
    own window of text counts 2,048 (one per 64 characters)."""
    most, seen = 0, set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        tb = error.__traceback__
        while tb is not None:
            here = tb.tb_frame.f_code.co_filename == __file__  # (the test's own locals are not the server's)
            for value in () if here else tb.tb_frame.f_locals.values():
                if not isinstance(value, (bytes, bytearray, str)):
                    most = max(most, count_values(value, 10 * MANY))
            tb = tb.tb_next
        error = error.__context__ or error.__cause__
    return most


def _many_dicts(extra: str = "") -> bytes:
    return ('{"completions": [""], "extra": [' + ",".join(["{}"] * MANY) + "]" + extra + "}").encode()


def test_a_body_over_the_memory_account_leaves_its_values_emptied():
    with pytest.raises(TooManyValues) as caught:
        read_document(_many_dicts())
    assert _held_by(caught.value) < 5_000


def test_a_body_invalid_at_its_end_leaves_what_was_read_emptied():
    raw = b'{"a": [' + b",".join([b'{"b": [1, 2]}'] * 50_000) + b"], "
    with pytest.raises(BodyError) as caught:
        read_document(raw)
    assert _held_by(caught.value) < 5_000


def test_a_sink_of_messages_is_emptied_when_the_body_fails_after_it():
    item = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "4"}]}
    output = json.dumps([item] * 20_000)
    raw = ('{"response": {"output": ' + output + '}, "answer": "4", "oops"}').encode()
    with pytest.raises(BodyError) as caught:
        read_document(raw, sinks={path: sink for path, sink in VERIFY_SINKS.items()})
    assert _held_by(caught.value) < 5_000


def test_the_servers_refusal_holds_no_reference_to_the_reader():
    with pytest.raises(_HTTPError) as caught:
        _parse_json([bytearray(_many_dicts())], ServerSettings(), "/score")
    assert caught.value.status == 413
    assert caught.value.__context__ is None
    assert _held_by(caught.value) < 5_000


def test_a_document_refused_after_it_is_read_is_emptied():
    """/score's chat messages are bounded once read (their parts joined): the read document is freed here."""
    message = {"role": "assistant", "content": [{"type": "text", "text": "x" * 600}] * 2}
    body = {"completions": [[message]], "columns": {"answer": ["4"]}, "extra": [str(i) for i in range(50_000)]}
    settings = ServerSettings(max_text_bytes=1_000)
    with pytest.raises(_HTTPError) as caught:
        _parse_json([bytearray(json.dumps(body).encode())], settings, "/score")
    assert caught.value.status == 413
    assert _held_by(caught.value) < 5_000


def test_dismantle_empties_what_nothing_else_holds_and_leaves_the_rest():
    shared = list(range(10_000))
    values = {"a": [[i] for i in range(20_000)], "b": shared}
    dismantle(values)
    assert values == {} and len(shared) == 10_000


def test_a_big_bodys_values_are_emptied_when_its_request_fails_on_the_loop(monkeypatch):
    """A request refused after its body was parsed (here 'completions' is not a list) leaves its values emptied,
    off the loop, instead of to whoever drops the handler's frame."""
    from starlette.testclient import TestClient

    from rewardsmith.serve import RewardService, create_app
    from rewardsmith.serve import app as server

    parsed = []

    def parse_and_keep(*args):
        document = _parse_json(*args)
        parsed.append(document)
        return document

    monkeypatch.setattr(server, "_parse_json", parse_and_keep)
    body = {"completions": "not a list", "extra": [f"{i:020d}" for i in range(60_000)]}  # 1.4 MB
    app = create_app(RewardService.from_spec("think_format"), ServerSettings())
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.post(
            "/score", content=json.dumps(body).encode(), headers={"content-type": "application/json"}
        )
        small = client.post("/score", json={"completions": "not a list", "extra": [[1]]})
    assert response.status_code == small.status_code == 400, response.text
    big, little = parsed
    assert count_values(big.value, 10_000) < 10  # emptied (it held 60,000 values)
    assert little.value == {"completions": "not a list", "extra": [[1]]}  # a small body is left to the collector
