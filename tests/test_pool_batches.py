"""The local pool sends samples in batches sized by the reward's measured cost, with the guarantees it had one
sample at a time: input order, timeouts that kill (a hang mid-batch costs that sample only), dead workers replaced
(a crash mid-batch costs that sample only). Batches are counted, never timed."""

from __future__ import annotations

import pytest
from engine_rewards import hostile, warmed, worker_pid

pytestmark = pytest.mark.timeout(300)


def test_many_cheap_samples_travel_in_few_batches_and_come_back_in_order():
    with warmed(hostile.configure(workers=2, timeout=30.0)) as r:
        pool = r._pool()
        sent = pool.batches_sent
        words = [f"w{'x' * (i % 37)}" for i in range(600)]
        assert r(completions=words) == [float(len(w)) for w in words]
        assert pool.batches_sent - sent <= 60  # was one message per sample: 600
        assert r(completions=words[::-1]) == [float(len(w)) for w in words[::-1]]


@pytest.mark.parametrize("stuck", ["sleep", "loop"])
def test_a_sample_that_hangs_mid_batch_times_out_alone_and_the_rest_of_its_batch_is_scored(stuck):
    with warmed(hostile.configure(workers=1, timeout=2.0)) as r:
        results = r.explain(completions=["ab"] * 20 + [stuck] + ["abc"] * 20)
        assert [x.score for x in results] == [2.0] * 20 + [None] + [3.0] * 20
        assert "timed out" in results[20].error
        assert r.stats["timeouts"] == 1 and r.stats["errors"] == 1
        assert r(completions=["again"]) == [5.0]  # a fresh worker took over


@pytest.mark.parametrize("crash", ["exit", "oom", "segfault"])
def test_a_worker_that_dies_mid_batch_costs_that_sample_only_and_is_replaced(crash):
    with warmed(hostile.configure(workers=2, timeout=60.0)) as r:
        before = set(r._pool().pids)
        texts = ["ab"] * 30 + [crash] + ["abcd"] * 30 + [crash] + ["x"] * 5
        expected = [2.0] * 30 + [None] + [4.0] * 30 + [None] + [1.0] * 5
        assert r(completions=texts) == expected
        assert r.stats["errors"] == 2 and r.stats["timeouts"] == 0
        assert r(completions=["abc"] * 4) == [3.0] * 4
        assert set(r._pool().pids) != before  # dead workers were replaced


def test_a_batch_longer_than_the_timeout_is_not_cut_short():
    with warmed(worker_pid.configure(workers=1, timeout=3.0)) as r:
        pool = r._pool()
        sent = pool.batches_sent
        pids = r(completions=["slow1.0"] * 4)
        assert pool.batches_sent - sent == 1  # one batch of 4 s of work
        assert None not in pids and len(set(pids)) == 1  # each sample had its own 3 s: none timed out
