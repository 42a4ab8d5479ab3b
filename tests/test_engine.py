"""The execution engine: hard timeouts, worker pools, crashes, clean exits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from engine_rewards import BusyWork, hostile, worker_pid
from process_helpers import alive, wait_gone

from rewardsmith import RewardConfigError, RewardExecutionError, get_reward, reward

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("engine")]

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("stuck", ["sleep", "loop"])
def test_timeout_holds_for_sleeping_and_looping_samples(stuck):
    r = hostile.configure()  # a fresh pool
    r(completions=["warm"])  # start the worker before timing
    started = time.monotonic()
    scores = r(completions=["ab", stuck, "abc"])
    elapsed = time.monotonic() - started
    assert scores == [2.0, None, 3.0]
    assert elapsed < 1.0 + 20.0  # the timeout fired (the stuck sample never ends), with slack for a busy machine
    assert r.stats["timeouts"] == 1
    assert r(completions=["next", "call"]) == [4.0, 4.0]  # the replacement worker serves the next call
    r.close()


@pytest.mark.parametrize("crash", ["exit", "segfault", "oom"])
def test_crashed_worker_is_replaced(crash):
    r = hostile.configure(timeout=5.0)
    assert r(completions=[crash, "after"]) == [None, 5.0]
    assert r.stats["crashes"] == 1
    assert r(completions=["again"]) == [5.0]
    r.close()


def test_results_in_order_and_workers_reused_between_calls():
    r = worker_pid.configure(workers=2)
    first = r(completions=["slow0.5"] * 4)
    pids = set(first)
    assert len(pids) == 2 and os.getpid() not in pids
    second = r(completions=["slow0.1"] * 6)
    assert set(second) == pids  # the same two processes serve the next call
    r.close()


def test_results_follow_input_order_with_uneven_durations():
    r = BusyWork(workers=2, millis=1)
    completions = ["x" * n for n in range(40)]
    assert r(completions=completions) == [float(n) for n in range(40)]
    r.close()


def test_one_crash_does_not_disturb_the_other_worker():
    r = hostile.configure(workers=2, timeout=5.0)
    scores = r(completions=["a", "bb", "exit", "cccc", "ddddd", "segfault", "ee"])
    assert scores == [1.0, 2.0, None, 4.0, 5.0, None, 2.0]
    r.close()


def test_on_error_raise_in_a_worker_raises_with_the_worker_traceback():
    r = hostile.configure(on_error="raise")
    with pytest.raises(RewardExecutionError, match="asked to raise"):
        r(completions=["ok", "raise"])
    with pytest.raises(RewardExecutionError, match="timed out"):
        r(completions=["sleep"])
    r.close()


def test_errors_in_workers_score_none_and_are_counted():
    r = hostile.configure()
    assert r(completions=["raise", "x"]) == [None, 1.0]
    assert r.stats["errors"] == 1
    assert "asked to raise" in r.explain(completions=["raise"])[0].error
    r.close()


def test_unpicklable_reward_with_workers_is_a_clear_error():
    lock = threading.Lock()

    @reward(workers=2)
    def holds_a_lock(completion: str) -> float:
        with lock:
            return 1.0

    with pytest.raises(RewardConfigError, match="picklable"):
        holds_a_lock(completions=["x"])


def test_closures_and_builtins_travel_to_workers():
    limit = 3

    @reward(workers=2)
    def closure(completion: str) -> float:
        return float(len(completion) <= limit)

    assert closure(completions=["ab", "abcd"]) == [1.0, 0.0]
    closure.close()
    fmt = get_reward("think_format", workers=2)
    assert fmt(completions=["<think>a</think><answer>b</answer>", "no"]) == [1.0, 0.0]
    fmt.close()


def _run_script(tmp_path: Path, body: str, timeout: float = 60) -> subprocess.CompletedProcess:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(body))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=timeout, env=env, cwd=tmp_path
    )


def test_rewards_defined_in_a_script_run_in_workers(tmp_path):
    # No `if __name__ == "__main__"` guard, on purpose: workers must not re-run the script.
    result = _run_script(
        tmp_path,
        """
        from rewardsmith import reward
        print("script body ran", flush=True)

        @reward(workers=2, timeout=5)
        def shout(completion: str) -> float:
            return float(completion.isupper())

        print(shout(completions=["HEY", "hey", "YO"]))
        """,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("script body ran") == 1
    assert "[1.0, 0.0, 1.0]" in result.stdout


def test_file_path_rewards_run_in_workers(tmp_path):
    rewards_file = tmp_path / "my_rewards.py"
    rewards_file.write_text("def loud(completion):\n    return float(completion.endswith('!'))\n")
    r = get_reward(f"{rewards_file}:loud", workers=2)
    assert r(completions=["hi!", "hi"]) == [1.0, 0.0]
    r.close()


def test_no_orphan_workers_after_a_normal_exit(tmp_path):
    result = _run_script(
        tmp_path,
        """
        from engine_rewards import worker_pid
        r = worker_pid.configure(workers=2)
        print(sorted(set(r(completions=["slow0.3"] * 4))))
        """,
    )
    assert result.returncode == 0, result.stderr
    pids = [int(float(p)) for p in result.stdout.strip().strip("[]").split(",")]
    assert len(pids) == 2
    assert wait_gone(pids) == []


def test_no_orphan_workers_after_the_parent_is_killed(tmp_path):
    script = tmp_path / "victim.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys, time
            from engine_rewards import worker_pid
            r = worker_pid.configure(workers=2, timeout=600)
            print(sorted(set(r(completions=["slow0.3"] * 4))), flush=True)
            r(completions=["slow600", "slow600"])  # both workers busy when the parent dies
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env)
    line = proc.stdout.readline()
    pids = [int(float(p)) for p in line.strip().strip("[]").split(",")]
    time.sleep(0.5)
    assert all(alive(p) for p in pids)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert wait_gone(pids) == []


def test_ctrl_c_mid_batch_leaves_no_stale_results(tmp_path):
    result = _run_script(
        tmp_path,
        """
        import os, signal, threading
        signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C even in a job started in the background
        from engine_rewards import worker_pid
        r = worker_pid.configure(workers=2)
        r(completions=["warm"] * 2)
        threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            r(completions=["slow60"] * 4)  # far longer than any delay of the timer on a busy machine
            print("not interrupted")
        except KeyboardInterrupt:
            print("interrupted")
        again = r(completions=["x", "y", "z"])
        print("fresh", len(set(again)) >= 1 and all(v > 0 for v in again), len(again))
        """,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:2] == ["interrupted", "fresh True 3"], result.stdout


def test_rows_with_the_same_affinity_key_share_a_worker():
    from engine_rewards import PidByGroup

    r = PidByGroup(workers=2)
    r(completions=["warm"] * 4, group=["w", "x", "y", "z"])  # both workers up before the real call
    groups = ["a"] * 4 + ["b"] * 4 + ["c"] * 4 + ["d"] * 4
    pids = r(completions=["x"] * 16, group=groups)
    by_group = {g: {p for p, gg in zip(pids, groups) if gg == g} for g in "abcd"}
    assert all(len(p) == 1 for p in by_group.values()), by_group
    assert len(set(pids)) == 2  # and the load is still spread over both workers
    r.close()
