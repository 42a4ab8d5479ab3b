"""The ``ray`` engine of rewards on a real local Ray (2 CPUs) started by the test: the per-sample guarantees, with
samples sent one at a time (the first call) and in batches (once the cost is measured; counted, never timed).

Every test here runs on one xdist worker (group ``ray``) so that one Ray
instance serves them all.
"""

from __future__ import annotations

import time

import pytest

ray = pytest.importorskip("ray")

from engine_rewards import hostile, warmed, worker_pid  # noqa: E402

from rewardsmith import get_reward, reward  # noqa: E402
from rewardsmith.core.errors import RewardConfigError  # noqa: E402
from rewardsmith.core.pool import engine_workers  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray"), pytest.mark.timeout(300)]


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    # left running for the other Ray test modules on this worker; Ray stops at exit


def _both_actors_ready(r) -> None:
    """Score until both actors have started (however loaded the machine): a limit that only fails if they never do."""
    deadline = time.monotonic() + 240
    while len(r._pool().pids) < 2:
        assert time.monotonic() < deadline, "the second Ray actor never started"
        r(completions=["slow0.05"] * 2)


def test_scores_come_back_in_input_order_from_ray_actors():
    r = worker_pid.configure(engine="ray", workers=2)
    try:
        _both_actors_ready(r)
        texts = ["slow0.3", "a", "slow0.1", "b", "c", "slow0.2", "d"]
        pids = r(completions=texts)
        assert len(pids) == len(texts) and all(isinstance(p, float) for p in pids)
        assert len(set(pids)) == 2  # two actors took samples
    finally:
        r.close()  # each actor holds one of the 2 CPUs
    length = hostile.configure(engine="ray", workers=2, timeout=30.0)
    try:
        words = [f"w{'x' * i}" for i in range(40)]
        assert length(completions=words) == [float(len(w)) for w in words]
        assert length(completions=words[::-1]) == [float(len(w)) for w in words[::-1]]  # actors reused
    finally:
        length.close()


@pytest.mark.parametrize("stuck", ["sleep", "loop"])
def test_per_sample_timeout_holds_and_the_stuck_actor_is_replaced(stuck):
    r = hostile.configure(engine="ray", workers=1, timeout=2.0)
    try:
        results = r.explain(completions=["ok", stuck, "fine"])
        assert [x.score for x in results] == [2.0, None, 4.0]
        assert results[1].error is not None and "timed out" in results[1].error
        assert r.stats["timeouts"] == 1
        assert r(completions=["again"]) == [5.0]  # a fresh actor took over
    finally:
        r.close()


@pytest.mark.parametrize("crash", ["exit", "oom"])
def test_a_dead_actor_is_replaced_and_its_sample_counted_as_none(crash):
    r = hostile.configure(engine="ray", workers=2, timeout=30.0)
    try:
        assert r(completions=["ab", crash, "abcd", "x"]) == [2.0, None, 4.0, 1.0]
        assert r.stats["errors"] >= 1
        assert r(completions=["abc"]) == [3.0]
    finally:
        r.close()


def test_errors_score_none_and_on_error_zero_applies():
    r = hostile.configure(engine="ray", timeout=30.0)
    z = hostile.configure(engine="ray", timeout=30.0, on_error="zero")
    try:
        assert r(completions=["raise", "ok"]) == [None, 2.0]
        assert z(completions=["raise", "ok"]) == [0.0, 2.0]
    finally:
        r.close()
        z.close()


def test_builtin_reward_by_name_and_settings_from_a_config():
    from rewardsmith.compose import rewards_from_config

    (r,), _ = rewards_from_config([{"name": "gsm8k_accuracy", "kwargs": {"engine": "ray", "workers": 2}}])
    try:
        assert r(completions=["#### 42", "#### 41"], answer=["#### 42", "#### 42"]) == [1.0, 0.0]
        assert r(completions=["The answer is 7.\n#### 7"], answer=["7"]) == [
            get_reward("gsm8k_accuracy")(completions=["The answer is 7.\n#### 7"], answer=["7"])[0]
        ]
    finally:
        r.close()


def test_unknown_engine_and_async_or_batch_rewards_are_config_errors():
    with pytest.raises(RewardConfigError, match="unknown engine 'rya'"):
        get_reward("think_format", engine="rya")

    def batch(completions, **kwargs):
        return [1.0] * len(completions)

    with pytest.raises(RewardConfigError, match="batch function"):
        get_reward(batch, engine="ray")


def test_many_cheap_samples_travel_in_few_batches_and_come_back_in_order():
    with warmed(hostile.configure(engine="ray", workers=2, timeout=30.0)) as r:
        pool = r._pool()
        sent = pool.batches_sent
        words = [f"w{'x' * (i % 37)}" for i in range(600)]
        assert r(completions=words) == [float(len(w)) for w in words]
        assert pool.batches_sent - sent <= 60  # not one Ray call per sample
        assert r(completions=words[::-1]) == [float(len(w)) for w in words[::-1]]


@pytest.mark.parametrize("stuck", ["sleep", "loop"])
def test_a_sample_that_hangs_mid_batch_times_out_alone_and_the_rest_of_its_batch_is_scored(stuck):
    with warmed(hostile.configure(engine="ray", workers=1, timeout=2.0)) as r:
        # one batch: the hang comes after samples whose results were not reported yet
        results = r.explain(completions=["ab"] * 20 + [stuck] + ["abc"] * 20)
        assert [x.score for x in results] == [2.0] * 20 + [None] + [3.0] * 20
        assert "timed out" in results[20].error
        assert r.stats["timeouts"] == 1 and r.stats["errors"] == 1  # the timeout, counted once
        assert r(completions=["again"]) == [5.0]  # a fresh actor took over


@pytest.mark.parametrize("crash", ["exit", "oom"])
def test_an_actor_that_dies_mid_batch_costs_that_sample_only_and_is_replaced(crash):
    with warmed(hostile.configure(engine="ray", workers=2, timeout=60.0)) as r:
        before = set(r._pool().pids)
        texts = ["ab"] * 30 + [crash] + ["abcd"] * 30 + [crash] + ["x"] * 5
        expected = [2.0] * 30 + [None] + [4.0] * 30 + [None] + [1.0] * 5
        assert r(completions=texts) == expected
        assert r.stats["errors"] == 2 and r.stats["timeouts"] == 0
        assert r(completions=["abc"] * 4) == [3.0] * 4
        assert set(r._pool().pids) != before  # dead actors were replaced


def test_a_batch_longer_than_the_timeout_is_not_cut_short():
    # once cheap samples are measured, the four slow ones below go out as one batch of 4 s
    with warmed(worker_pid.configure(engine="ray", workers=1, timeout=3.0)) as r:
        pool = r._pool()
        sent = pool.batches_sent
        pids = r(completions=["slow1.0"] * 4)
        assert pool.batches_sent - sent == 1
        assert None not in pids and len(set(pids)) == 1  # each sample had its own 3 s: none timed out


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


@reward
def bad_return(completion: str) -> float:
    """A number, except for ``"bad"``: a return value that is not a score (a bug of the reward, not of a sample)."""
    return "not a score" if completion == "bad" else float(len(completion))  # type: ignore[return-value]


def test_a_bad_return_value_mid_batch_fails_the_call_and_the_next_call_works():
    from rewardsmith.core.errors import RewardReturnError

    with warmed(bad_return.configure(engine="ray", workers=2)) as r:
        with pytest.raises(RewardReturnError):
            r(completions=["ab"] * 20 + ["bad"] + ["abc"] * 20)
        assert r(completions=["ab", "abc"] * 10) == [2.0, 3.0] * 10
