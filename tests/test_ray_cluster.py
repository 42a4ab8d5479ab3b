"""The Ray engines across a local multi-node cluster (Ray's ``cluster_utils``: three raylets on this machine, one
CPU each), in a process of its own (``tests/ray_cluster_job.py``): reward actors and evaluation tasks placed on
every node, scores in input order; a node killed while a call is in flight loses nothing (its sample counted as
a failure, ``None``, the others scored, order kept; an actor found dead only in the next call counts its sample
``None`` the same way, and the call after that is served whole by the nodes left); an evaluation job scored as
Ray tasks on the cluster gives the same rows as a local one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray.cluster_utils")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

JOB = Path(__file__).resolve().parent / "ray_cluster_job.py"


def test_reward_and_evaluation_engines_across_a_three_node_cluster(tmp_path):
    done = subprocess.run([sys.executable, str(JOB), str(tmp_path)], capture_output=True, text=True, timeout=840)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["nodes"] == 3
    assert report["placed_on_nodes"] == 3 and report["order_kept"]
    assert report["eval_placed_on_nodes"] == 3 and report["eval_order_kept"]
    assert report["after_kill_returned"] and report["after_kill_order_kept"]
    assert report["after_kill_none"] == report["after_kill_errors"] <= 3  # the killed actor's samples, counted
    assert report["after_kill_next_call"] and report["after_kill_later_call"]
    assert report["eval_same_as_local"]
