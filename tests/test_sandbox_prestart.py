"""How many sandboxes a worker starts ahead where each program gets a sandbox started for it (``reuse`` off):
``prestart="auto"`` (the default) follows the engine's workers and the CPUs; an explicit setting wins. Counted
(spare sandboxes alive after a call), never timed."""

from __future__ import annotations

import pytest
from sandbox_helpers import requires_namespaces, sandbox_count, sandboxes_below_me, settle, stdio

from rewardsmith import get_reward, reward
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.pool import engine_workers
from rewardsmith.core.processes import usable_cpus
from rewardsmith.sandbox.launch import close_sandboxes
from rewardsmith.sandbox.local import choose_prestart

pytestmark = [pytest.mark.xdist_group("sandbox")]

CODE = "```python\nprint(1)\n```"
PER_JOB = {"reuse": False}  # a sandbox started for each program: where spares are used


@pytest.mark.parametrize(
    ("setting", "workers", "cpus", "expected"),
    [
        ("auto", 1, 2, 2),  # one worker leaves a core idle: a sandbox starts there while a program runs
        ("auto", 2, 2, 0),  # the workers fill the cores
        ("auto", 3, 2, 0),
        ("auto", 1, 1, 0),
        ("auto", 7, 8, 2),
        (True, 2, 2, 1),  # an explicit setting wins, whatever the machine
        (False, 1, 8, 0),
        (0, 1, 2, 0),
        (3, 16, 2, 3),
    ],
)
def test_the_prestart_rule(setting, workers, cpus, expected):
    assert choose_prestart(setting, workers, cpus) == expected


@pytest.mark.parametrize("bad", ["yes", -1, 1.5, None])
def test_a_bad_prestart_is_a_config_error(bad):
    with pytest.raises(RewardConfigError, match="prestart must be 'auto'"):
        get_reward("code_tests", backend_settings={"prestart": bad})


@reward
def pool_size_seen(completion: str) -> float:
    """The number of engine workers this worker process was told about."""
    return float(engine_workers())


def test_each_worker_knows_its_pools_size():
    assert engine_workers() == 1  # scoring in this process
    r = pool_size_seen.configure(workers=2, timeout=30.0)
    try:
        assert r(completions=["a", "b", "c", "d"]) == [float(min(2, usable_cpus()))] * 4
    finally:
        r.close()


def _spares_after(r) -> int:
    """Score a batch, then count the spare sandboxes left waiting (started or still starting)."""
    try:
        assert not settle(sandboxes_below_me)  # none left over from earlier tests
        n = 2 * usable_cpus()
        assert r(completions=[CODE] * n, tests=[stdio("1")] * n) == [1.0] * n
        return sandbox_count(sandboxes_below_me(spares=True))
    finally:
        r.close()
        close_sandboxes()
        assert not settle(sandboxes_below_me)


@requires_namespaces
def test_one_worker_with_an_idle_cpu_keeps_spares_and_workers_filling_the_cpus_keep_none():
    one = _spares_after(get_reward("code_tests", workers=1, backend_settings=PER_JOB))  # scored in this process
    assert one == (2 if usable_cpus() > 1 else 0)
    full = _spares_after(get_reward("code_tests", workers=usable_cpus(), timeout=60.0, backend_settings=PER_JOB))
    assert full == 0


@requires_namespaces
def test_an_explicit_prestart_wins_over_the_rule():
    off = _spares_after(get_reward("code_tests", workers=1, backend_settings={**PER_JOB, "prestart": False}))
    assert off == 0
    cpus = usable_cpus()
    on = _spares_after(
        get_reward("code_tests", workers=cpus, timeout=60.0, backend_settings={**PER_JOB, "prestart": 1})
    )
    assert 1 <= on <= cpus  # one spare per worker that scored
