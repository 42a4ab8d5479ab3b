"""The Ray engines across a local multi-node cluster (Ray's ``cluster_utils``: three raylets on this machine, one
CPU each), in a process of its own (``tests/ray_cluster_job.py``): reward actors and evaluation tasks placed on
every node, scores in input order; a node killed while a call is in flight loses nothing (its sample counted as
a failure, ``None``, the others scored, order kept; an actor found dead only in the next call counts its sample
``None`` the same way, and the call after that is served whole by the nodes left); the reward engine's scores on
the cluster equal the local engine's; a node added and then killed while an evaluation job's tasks run on it loses
no row (its tasks retried by Ray elsewhere, or their rows written ``None`` with the error), rows in order, every
scored row as a local job writes it; an evaluation job scored as Ray tasks on the cluster gives the same rows as a
local one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray.cluster_utils")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

JOB = Path(__file__).resolve().parent / "ray_cluster_job.py"


def test_reward_and_evaluation_engines_across_a_multi_node_cluster(tmp_path):
    done = subprocess.run([sys.executable, str(JOB), str(tmp_path)], capture_output=True, text=True, timeout=840)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["nodes"] == 3
    assert report["placed_on_nodes"] == 3 and report["order_kept"]
    assert report["eval_placed_on_nodes"] == 3 and report["eval_order_kept"]
    assert report["after_kill_returned"] and report["after_kill_order_kept"]
    assert report["after_kill_none"] == report["after_kill_errors"] <= 3  # the killed actor's samples, counted
    assert report["after_kill_next_call"] and report["after_kill_later_call"]
    assert report["reward_engine_same_as_local"]
    for kind in ("eval_kill", "eval_kill_no_retries"):
        got = report[kind]
        # the node was killed with a sample of the job started on it and the job still running
        assert got["on_doomed_node"] >= 1 and got["while_running"], (kind, got)
        assert got["rows"] == 36 and got["order_kept"], (kind, got)  # nothing lost, (index, sample) order
        assert got["local_scores"] and got["same_as_local"], (kind, got)  # each row scored as locally, or None
        assert got["none"] < 36 // 2, (kind, got)  # at most the killed node's share
    # with retries, the killed node's samples are started again elsewhere (each start leaves a file) or None
    retried = report["eval_kill"]
    assert retried["none"] > 0 or retried["starts"] > 36, retried
    # without, the shard whose task died is written None with the reason, the others scored
    dropped = report["eval_kill_no_retries"]
    assert dropped["none"] >= 1 and dropped["none_errors"] == ["the Ray task scoring this shard died after 0 retries"]
    assert report["eval_same_as_local"]
