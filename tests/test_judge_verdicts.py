"""Reading verdicts, Retry-After, templates and the cache: the pure parts of the judges."""

from __future__ import annotations

import pickle

import pytest

from rewardsmith import RewardConfigError
from rewardsmith.http.retry import RetryPolicy, parse_retry_after
from rewardsmith.judges.cache import CachedAnswer, JudgeCache, request_key
from rewardsmith.judges.templates import defuse
from rewardsmith.judges.verdict import parse_verdict


@pytest.mark.parametrize(
    ("answer", "raw"),
    [
        ('{"score": 7}', 7.0),
        ('{"reason": "fine", "Score": "7"}', 7.0),
        ('```json\n{"score": 7, "reason": "ok"}\n```', 7.0),
        ('Reasoning first. Then: {"reason": "ok", "rating": 7.5} as asked.', 7.5),
        ('{"draft": {"score": 2}, "score": 7}', 7.0),  # the outer object's score
        ("Score: 7", 7.0),
        ("**Score:** 7", 7.0),
        ("## Final score: 7/10", 7.0),
        ("score = 7 (solid)", 7.0),
        ("First impression, Score: 3.\nOn reflection the proof holds.\nScore: 7", 7.0),  # the last line wins
    ],
)
def test_verdict_forms(answer, raw):
    verdict = parse_verdict(answer, (1, 10))
    assert verdict.raw == raw and verdict.score == pytest.approx((raw - 1) / 9)


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("", "empty answer"),
        ("This is a 10/10 response.", "no verdict found"),  # a number without the verdict marker is not a verdict
        ("The score is high", "no verdict found"),
        ('{"score": "high"}', "not a number"),
        ('{"score": null}', "not a number"),
        ('{"score": true}', "not a number"),
        ('{"score": NaN}', "outside the scale"),
        ("Score: 11", "outside the scale"),
        ("Score: 0", "outside the scale"),
        ("Score: -3", "outside the scale"),
        ("Score: 4/5", "not on the scale"),
    ],
)
def test_garbage_is_no_verdict_never_zero(answer, problem):
    verdict = parse_verdict(answer, (1, 10))
    assert verdict.score is None and problem in verdict.problem


def test_scale_ends_and_fractions():
    assert parse_verdict("Score: 0", (0, 1)).score == 0.0
    assert parse_verdict('{"score": 0.25}', (0, 1)).score == 0.25
    assert parse_verdict("Score: 5", (1, 5)).score == 1.0


def test_retry_after_forms():
    assert parse_retry_after({"retry-after": "0"}) == 0.0
    assert parse_retry_after({"Retry-After": "1.5"}) == 1.5
    assert parse_retry_after({"Retry-After": "-2"}) is None
    assert parse_retry_after({"retry-after-ms": "junk", "Retry-After": "3"}) == 3.0
    assert parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412490.0) == 0.0  # past


def test_backoff_grows_with_jitter_and_respects_the_cap():
    policy = RetryPolicy(backoff=0.5, max_backoff=4.0)
    waits = [[policy.wait(n, None) for _ in range(200)] for n in range(1, 6)]
    for n, samples in enumerate(waits, start=1):
        cap = min(4.0, 0.5 * 2 ** (n - 1))
        assert cap / 2 <= min(samples) and max(samples) <= cap
        assert len(set(samples)) > 150  # jittered, not in step
    assert all(5.0 <= policy.wait(1, 5.0) <= 5.5 for _ in range(50))  # Retry-After beats the cap


def test_defuse_covers_every_delimiter_and_case():
    text = "</response><PROMPT></ Reference ><principle>"
    assert "</response>" not in defuse(text) and "<prompt>" not in defuse(text).lower()
    assert "</ reference >" not in defuse(text).lower() and "<principle>" not in defuse(text)
    assert defuse("a < b and <b>bold</b>") == "a < b and <b>bold</b>"


def test_cache_key_and_store(tmp_path):
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": 0.0}
    assert request_key("http://a/v1", body) != request_key("http://b/v1", body)
    assert request_key("http://a/v1", body) != request_key("http://a/v1", {**body, "model": "n"})
    cache = JudgeCache(tmp_path / "sub" / "c.sqlite")
    cache.put("k", "m", CachedAnswer("Score: 3", None, None))
    clone = pickle.loads(pickle.dumps(cache))
    assert clone.get("k") == CachedAnswer("Score: 3", None, None)
    (tmp_path / "a-file").write_text("")
    with pytest.raises(RewardConfigError, match="cache=None"):
        JudgeCache(tmp_path / "a-file" / "x.sqlite").open()
