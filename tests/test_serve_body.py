"""The server's JSON reader and writer (``rewardsmith.serve.body``) against ``json``, at tiny windows.

The reader decodes the body a window at a time and walks what does not fit; with a window of a few bytes,
every value, string, escape and multi-byte character falls across a window's edge somewhere, and the
result must still be what ``json.loads`` gives (or an error where it raises).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardsmith.serve import body
from rewardsmith.serve.answer import echo_object, encode_chunks
from rewardsmith.serve.body import BodyError, read_document

VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(codec="utf-8"), max_size=40),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=6), inner, max_size=5),
    max_leaves=25,
)


@pytest.fixture(params=[8, 17, 64])
def window(request, monkeypatch):
    monkeypatch.setattr(body, "WINDOW", request.param)
    return request.param


@settings(max_examples=200, deadline=None)
@given(value=VALUES, ascii_only=st.booleans(), indent=st.sampled_from([None, 0, 3]))
def test_what_the_reader_gives_is_what_json_loads_gives(value, ascii_only, indent):
    for size in (8, 23):
        body.WINDOW, saved = size, body.WINDOW
        try:
            raw = json.dumps(value, ensure_ascii=ascii_only, indent=indent).encode("utf-8")
            assert read_document(raw).value == json.loads(raw)
        finally:
            body.WINDOW = saved


@pytest.mark.parametrize(
    "text",
    [
        '"' + "a" * 300 + '\\"' + "b" * 300 + '"',  # an escaped quote in a string longer than the window
        '"' + "a" * 300 + "\\\\" + '"',  # an escaped backslash just before the closing quote
        '["' + "é" * 200 + "😀" * 50 + '", 1]',  # multi-byte characters across every edge
        "\ufeff" + '{"a": [1, 2]}',  # a byte-order mark
        "[" + " " * 500 + "1" + "\n" * 500 + "]",  # white space longer than the window
        '{"k' + "x" * 200 + '": "\\ud83d\\ude00"}',  # a long key; an escaped surrogate pair
        "[" + "1" * 40 + ", 2.5e-3, true, false, null]",
    ],
)
def test_long_strings_escapes_and_odd_spacing_across_windows(window, text):
    assert read_document(text.encode("utf-8")).value == json.loads(text.lstrip("\ufeff"))


#: The characters that make a string's contents hard to cut: escapes of every length, surrogate pairs (as two
#: escapes, or four UTF-8 bytes), runs of backslashes, quotes, lone halves of pairs, multi-byte characters.
PIECES = ["a", "é", "€", "😀", "\\", "\\" * 7, '"', "\n", "\u2028", "\ud83d", "\ude00", "x" * 20]


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.sampled_from(PIECES), max_size=60), size=st.sampled_from([8, 12, 13, 17, 64]))
def test_a_long_string_is_read_a_piece_at_a_time_as_json_loads_reads_it_whole(parts, size):
    text = "".join(parts)
    body.WINDOW, saved = size, body.WINDOW
    try:
        for raw in (
            json.dumps([text]).encode(),
            json.dumps([text], ensure_ascii=False).encode("utf-8", "surrogatepass"),
        ):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:  # a lone half of a pair written as UTF-8 bytes: not UTF-8 (json.loads takes it)
                with pytest.raises(BodyError, match="not UTF-8"):
                    read_document(raw)
                continue
            assert read_document(raw).value == json.loads(raw)
    finally:
        body.WINDOW = saved


@pytest.mark.parametrize(
    "raw, words",
    [
        (b'{"a": 1', "expected ',' or '}'"),
        (b'{"a": 1} x', "extra data"),
        (b'["abc', "Unterminated string"),
        (b'["' + b"a" * 300, "Unterminated string"),
        (b'["\xff"]', "not UTF-8"),
        (b'["' + b"a" * 300 + b'\xc3"]', "not UTF-8"),
        (b'["' + b"a" * 300 + b'\\u12"]', "escape"),  # a short \\u escape in a long string
        (b'["' + b"a" * 300 + b'\n"]', "control character"),  # a raw new line inside a long string
        (b"[1" + b"1" * 5000 + b"]", "digits"),  # past Python's digit limit: a ValueError, not a crash
    ],
)
def test_invalid_bodies_raise_body_error_saying_why(window, raw, words):
    with pytest.raises(BodyError, match=words):
        read_document(raw)


class Count:
    def __init__(self) -> None:
        self.items: list = []

    def add(self, item) -> None:
        self.items.append(("seen", item))


def test_a_sink_takes_each_entry_and_the_list_is_never_built(window):
    raw = json.dumps({"a": {"b": [{"x": i} for i in range(50)], "c": [1]}, "d": "e"}).encode()
    doc = read_document(raw, sinks={("a", "b"): Count})
    assert isinstance(doc.value["a"]["b"], Count)
    assert doc.value["a"]["b"].items == [("seen", {"x": i}) for i in range(50)]
    assert doc.value["a"]["c"] == [1] and doc.value["d"] == "e"


def test_a_sink_entry_nested_too_deeply_is_refused():
    raw = json.dumps({"a": [[[[[1]]]]]}).encode()
    with pytest.raises(RecursionError):
        read_document(raw, max_depth=4, sinks={("a",): Count})
    assert read_document(raw, max_depth=6, sinks={("a",): Count}).value["a"].items == [("seen", [[[[1]]]])]


def test_the_echo_is_the_request_as_sent_with_the_fields_set(window):
    request = {"a": [1, "é" * 100], "reward": 7, "response": {"output": list(range(100))}, "z": None}
    raw = json.dumps(request, ensure_ascii=False, indent=1).encode()
    doc = read_document(raw, sinks={("response", "output"): Count})
    echoed = json.loads(b"".join(echo_object(doc, {"reward": 1.5, "mask_sample": False})))
    assert echoed == {**request, "reward": 1.5, "mask_sample": False}
    assert list(echoed)[-2:] == ["reward", "mask_sample"]
    assert json.loads(b"".join(echo_object(read_document(b"{}"), {"reward": 0.0}))) == {"reward": 0.0}


@settings(max_examples=100, deadline=None)
@given(value=VALUES)
def test_written_chunks_join_to_what_json_dumps_writes(value):
    chunks = encode_chunks(value)
    assert b"".join(chunks) == json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def test_a_big_answer_is_written_in_chunks_of_about_a_window():
    value = {"scores": [0.5] * 50_000, "reasons": {"r": ["why " * 20] * 20_000}}
    chunks = encode_chunks(value)
    assert len(chunks) > 10 and max(map(len, chunks)) <= 2 * body.WINDOW
    assert json.loads(b"".join(chunks)) == value
    lone = encode_chunks(["x\ud800"] * 20_000)  # a lone surrogate: written escaped, as ASCII
    assert json.loads(b"".join(lone)) == ["x\ud800"] * 20_000


def _peak_memory(raw: bytes) -> tuple[object, int]:
    """What reading ``raw`` gives (or raises), and the peak memory of the reading (tracemalloc's count)."""
    import tracemalloc

    tracemalloc.start()
    try:
        got: object = read_document(raw).value
    except body.TooManyValues as exc:
        got = exc
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return got, peak


@pytest.mark.parametrize("entry", ["{}", "[]", '"ab"', '{"a": {}}'])
def test_millions_of_small_values_are_refused_at_a_small_multiple_of_the_body(entry):
    raw = ('{"x": [' + ",".join([entry] * 1_000_000) + "]}").encode()
    got, peak = _peak_memory(raw)
    assert isinstance(got, body.TooManyValues) and "too many small values" in str(got)
    budget = max(body.MEMORY_FACTOR * len(raw), body.MEMORY_FLOOR)
    assert peak < 1.2 * budget, f"{peak / len(raw):.1f}x the body"  # was 21-24x


@pytest.mark.parametrize(
    "entry",
    ["12345", "-0.6931471805599453", '"The answer is 4."', '{"role": "assistant", "content": "The answer is 4."}'],
)
def test_values_of_the_usual_sizes_are_read_in_full(entry):
    # token ids (6 times their bytes), log-probabilities, texts, chat messages: under the budget at any length
    raw = ('{"x": [' + ",".join([entry] * 800_000) + "]}").encode()
    assert len(raw) * body.MEMORY_FACTOR > body.MEMORY_FLOOR  # past the floor: the multiple is what holds
    assert read_document(raw).value == json.loads(raw)


def test_a_batch_of_short_chat_messages_is_read_in_full():
    # one word each takes 11 times its bytes, but a batch of them is small: under the floor
    raw = json.dumps({"completions": [[{"role": "assistant", "content": "4"}]] * 8192}).encode()
    assert read_document(raw).value == json.loads(raw)


def test_entries_given_to_a_sink_are_not_counted_since_they_are_freed():
    class Count:
        n = 0

        def add(self, item):
            self.n += 1

    raw = ('{"x": [' + ",".join(["{}"] * 1_000_000) + "]}").encode()
    assert read_document(raw, sinks={("x",): Count}).value["x"].n == 1_000_000


@pytest.mark.parametrize("size", [8, 64, 1 << 17])
def test_a_string_at_max_text_is_read_and_one_byte_more_is_refused(size):
    body.WINDOW, saved = size, body.WINDOW
    try:
        for text in ("a" * 200, "é" * 100, "😀" * 50, "\\" * 200):  # 200 bytes of UTF-8 each
            for ensure_ascii in (True, False):  # escapes take more bytes in the body, never in the text
                at = json.dumps({"k": [text]}, ensure_ascii=ensure_ascii).encode()
                assert read_document(at, max_text=200).value == {"k": [text]}
                over = json.dumps({"k": [text + "a"]}, ensure_ascii=ensure_ascii).encode()
                with pytest.raises(body.TooLongText, match="more than 200 bytes"):
                    read_document(over, max_text=200)
    finally:
        body.WINDOW = saved


@pytest.mark.parametrize(
    "raw, where",
    [
        ('{"k' + "x" * 300 + '": 1}', "the top level"),  # a key
        ('{"a": {"b": ["' + "x" * 300 + '"]}}', "a"),  # inside a value parsed whole (it fits in the window)
        ('{"a": [{"t": "' + "x" * 300 + '"}]}', "a"),
        ('"' + "x" * 300 + '"', "the top level"),
    ],
)
def test_a_long_key_or_a_string_inside_a_small_value_is_refused_as_well(raw, where):
    with pytest.raises(body.TooLongText, match=f"a string at '{where}'"):
        read_document(raw.encode(), max_text=256)
    assert read_document(raw.encode(), max_text=301).value == json.loads(raw)


def test_a_string_over_max_text_is_refused_before_it_is_built():
    import tracemalloc

    raw = json.dumps({"completions": ["<think>" + "z" * 40_000_000 + "</think>"]}).encode()
    tracemalloc.start()
    try:
        with pytest.raises(body.TooLongText, match="'completions\\[\\]' takes more than 1,048,576 bytes"):
            read_document(raw, max_text=1 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The pieces read up to the limit, not the string (40 MB) nor the pieces of all of it: about 1 MB.
    assert peak < 3 << 20, f"{peak / 1e6:.1f} MB"
