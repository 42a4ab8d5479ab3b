"""The ``ray`` engine's batches keep every per-sample guarantee: input order, per-sample timeouts that kill,
dead actors replaced, and the rest of a batch scored when one of its samples hangs or crashes (a real local
Ray of 2 CPUs, as in ``test_ray_engine.py``). Counted, never timed."""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray")

from engine_rewards import hostile, worker_pid  # noqa: E402

from rewardsmith import reward  # noqa: E402
from rewardsmith.core.pool import engine_workers  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray"), pytest.mark.timeout(300)]


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield


def _warm(r) -> None:
    """One cheap call, so that the pool has measured the reward's cost and sends big batches."""
    assert r(completions=["a"] * 8) is not None


def test_many_cheap_samples_travel_in_few_batches_and_come_back_in_order():
    r = hostile.configure(engine="ray", workers=2, timeout=30.0)
    try:
        _warm(r)
        pool = r._pool()
        sent = pool.batches_sent
        words = [f"w{'x' * (i % 37)}" for i in range(600)]
        assert r(completions=words) == [float(len(w)) for w in words]
        assert pool.batches_sent - sent <= 60  # not one Ray call per sample
        assert r(completions=words[::-1]) == [float(len(w)) for w in words[::-1]]
    finally:
        r.close()


@pytest.mark.parametrize("stuck", ["sleep", "loop"])
def test_a_sample_that_hangs_mid_batch_times_out_alone_and_the_rest_of_its_batch_is_scored(stuck):
    r = hostile.configure(engine="ray", workers=1, timeout=2.0)
    try:
        _warm(r)
        texts = ["ab"] * 20 + [stuck] + ["abc"] * 20  # one batch: the hang comes after unreported samples
        results = r.explain(completions=texts)
        assert [x.score for x in results] == [2.0] * 20 + [None] + [3.0] * 20
        assert "timed out" in results[20].error
        assert r.stats["timeouts"] == 1 and r.stats["errors"] == 1  # the timeout, counted once
        assert r(completions=["again"]) == [5.0]  # a fresh actor took over
    finally:
        r.close()


@pytest.mark.parametrize("crash", ["exit", "oom"])
def test_an_actor_that_dies_mid_batch_costs_that_sample_only_and_is_replaced(crash):
    r = hostile.configure(engine="ray", workers=2, timeout=60.0)
    try:
        _warm(r)
        before = set(r._pool().pids)
        texts = ["ab"] * 30 + [crash] + ["abcd"] * 30 + [crash] + ["x"] * 5
        expected = [2.0] * 30 + [None] + [4.0] * 30 + [None] + [1.0] * 5
        assert r(completions=texts) == expected
        assert r.stats["errors"] == 2 and r.stats["timeouts"] == 0
        assert r(completions=["abc"] * 4) == [3.0] * 4
        assert set(r._pool().pids) != before  # dead actors were replaced
    finally:
        r.close()


def test_a_batch_longer_than_the_timeout_is_not_cut_short():
    r = worker_pid.configure(engine="ray", workers=1, timeout=3.0)
    try:
        _warm(r)  # cheap samples measured: the four slow ones below go out as one batch of 4 s
        pool = r._pool()
        sent = pool.batches_sent
        pids = r(completions=["slow1.0"] * 4)
        assert pool.batches_sent - sent == 1
        assert None not in pids and len(set(pids)) == 1  # each sample had its own 3 s: none timed out
    finally:
        r.close()


@reward
def workers_seen(completion: str) -> float:
    """The number of engine workers this process was told about."""
    return float(engine_workers())


def test_each_actor_knows_its_pools_size():
    r = workers_seen.configure(engine="ray", workers=2)
    try:
        assert r(completions=["a", "b", "c"]) == [2.0] * 3
    finally:
        r.close()
