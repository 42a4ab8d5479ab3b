"""Streaming statistics checked against direct computation, and the HTML report rendered in headless Chromium."""

from __future__ import annotations

import math
import os
import random
import re
import shutil
import statistics
import subprocess
from html.parser import HTMLParser

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rewardsmith import evaluate, reward
from rewardsmith.evaluation.stats import BINS, Histogram, PassAtK, RunningStats, pass_at_k, pass_ks

HOSTILE = '</script><script>document.title="pwned"</script><img src=x onerror="alert(1)"> & <b>bold</b>'


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=300))
@settings(max_examples=60, deadline=None)
def test_running_stats_match_the_direct_computation(values):
    stats = RunningStats()
    for x in values:
        stats.add(x)
    assert stats.count == len(values) and stats.min == min(values) and stats.max == max(values)
    assert stats.mean == pytest.approx(statistics.fmean(values), rel=1e-9, abs=1e-6)
    assert stats.std == pytest.approx(statistics.pstdev(values), rel=1e-6, abs=1e-6)


@given(st.lists(st.floats(-50, 50, allow_nan=False), min_size=1, max_size=400), st.booleans())
@settings(max_examples=60, deadline=None)
@example([0.0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1.5, 0.5, -1.0, 10.0], False)
@example([0.0, 1, 2, 3, 4, 5, 6, 7, 1.5, 2.5, 10.67659916991646, 0.5, 0.25, -11.0], False)
@example([0.0, 1, 2, 3, 4, 5, 6, 7, 1.5, 1.75, 2.5, 0.5, 0.25, 8.0], False)
def test_histograms_count_every_score_once_and_in_the_right_bin(values, known_range):
    h = Histogram((-50.0, 50.0) if known_range else None)
    for x in values:
        h.add(x)
    d = h.as_dict()
    if d["kind"] == "values":
        assert {v: c for v, c in d["values"]} == {v: values.count(v) for v in set(values)}
        return
    assert len(d["counts"]) == BINS and sum(d["counts"]) == len(values)
    edges = d["edges"]
    assert edges[0] <= min(values) and max(values) <= edges[-1]
    expected = [sum(edges[i] <= x < edges[i + 1] for x in values) for i in range(BINS)]
    expected[-1] += sum(x == edges[-1] for x in values)  # the top edge belongs to the last bin
    assert d["counts"] == expected


def test_pass_at_k_is_the_unbiased_estimator():
    for n in range(1, 9):
        for c in range(n + 1):
            for k in range(1, n + 1):
                direct = 1 - math.comb(n - c, k) / math.comb(n, k)
                assert pass_at_k(n, c, k) == pytest.approx(direct, abs=1e-12)
    p = PassAtK(n=3)
    p.add_group(3, 1)
    p.add_group(2, 2)  # a prompt with one sample unscored: k=3 skipped for it
    assert p.as_dict() == {
        "prompts": 2,
        "pass@1": pytest.approx((1 / 3 + 1) / 2),
        "pass@2": pytest.approx((2 / 3 + 1) / 2),
        "pass@3": 1.0,
    }
    assert pass_ks(16) == [1, 2, 4, 8, 16]


def test_summary_of_a_job_matches_the_scores_computed_directly(tmp_path):
    rng = random.Random(7)
    rows = [{"prompt": f"p{i}", "value": rng.random() * 10, "task": rng.choice("ab")} for i in range(300)]

    @reward
    def value_score(completion: str, value: float) -> float | None:
        return None if value < 1 else value

    report = evaluate(rows, value_score, tmp_path, completions_column="prompt", batch_size=7, progress=False)
    got = report.summary["rewards"]["value_score"]
    scored = [r["value"] for r in rows if r["value"] >= 1]
    assert got["scored"] == len(scored) and got["none_rate"] == pytest.approx(1 - len(scored) / 300)
    assert got["mean"] == pytest.approx(statistics.fmean(scored)) and got["std"] == pytest.approx(
        statistics.pstdev(scored)
    )
    assert got["histogram"]["kind"] == "bins" and sum(got["histogram"]["counts"]) == len(scored)
    for task in "ab":
        task_scores = [r["value"] for r in rows if r["task"] == task and r["value"] >= 1]
        assert report.summary["tasks"][task]["rewards"]["value_score"]["mean"] == pytest.approx(
            statistics.fmean(task_scores)
        )


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing in CI: `make test` installs Debian's chromium package first")
        pytest.skip("no chromium on this machine (`make test` installs it where apt-get can, as root)")
    return found


def _render(page: str, tmp_path, *extra: str) -> subprocess.CompletedProcess:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"]
    flags += ["--disable-background-networking", "--disable-component-update", "--disable-sync"]
    flags += [f"--user-data-dir={tmp_path / 'chromium-profile'}", *extra]
    return subprocess.run([_chromium(), *flags, page], capture_output=True, text=True, timeout=120)


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


@pytest.mark.slow
def test_report_renders_offline_in_chromium_with_hostile_completions_escaped(tmp_path):
    rows = [
        {"prompt": f"Q{i}: what is {i}?", "answer": str(i), "completion": f"It is {i}." if i % 4 else HOSTILE}
        for i in range(40)
    ]
    rewards = ["gsm8k_accuracy", {"name": "length", "kwargs": {"max_length": 12, "unit": "chars"}}]
    report = evaluate(rows, rewards, tmp_path / "out", completions_column="completion", progress=False)
    page = report.report_path.read_text()
    assert not re.search(r"<[^>]*\s(src|href)\s*=|<link|@import|url\(", page)  # nothing to fetch: opens offline
    done = _render(report.report_path.as_uri(), tmp_path, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    parser = _Elements()
    parser.feed(dom)
    tags = [t for t, _ in parser.tags]
    body = next(attrs for t, attrs in parser.tags if t == "body")
    assert body.get("data-ready") == "true"  # the page's script ran to the end
    assert tags.count("svg") == 2 and tags.count("rect") >= 3  # one histogram per reward, drawn by the script
    assert tags.count("script") == 2 and "img" not in tags and "b" not in tags  # nothing from the data became markup
    assert "<title>rewardsmith evaluation" in dom and "pwned" not in re.search(r"<title>(.*?)</title>", dom).group(1)
    assert "&lt;/script&gt;&lt;script&gt;" in dom  # the hostile completion is shown, as text
    assert dom.count("<table") >= 3 and "gsm8k_accuracy" in dom and "length" in dom
    shot = tmp_path / "report.png"
    done = _render(report.report_path.as_uri(), tmp_path, f"--screenshot={shot}", "--window-size=1200,900")
    assert done.returncode == 0 and shot.stat().st_size > 10_000
