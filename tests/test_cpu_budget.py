"""One CPU budget per node: ranks started on this machine (as torchrun starts them, with LOCAL_WORLD_SIZE and
LOCAL_RANK) share its CPUs between their pools instead of each opening one worker per CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rewardsmith.core.budget import cgroup_cpu_limit, cpu_budget
from rewardsmith.core.processes import usable_cpus

ROOT = Path(__file__).resolve().parent

#: One rank: a reward asking for 8 workers scores 32 samples; prints the distinct worker processes that scored.
RANK = """
import json, sys
sys.path.insert(0, sys.argv[1])
from engine_rewards import worker_pid
r = worker_pid.configure(workers=8)
pids = set(r(completions=["slow0.3"] * 32))
r.close()
print(json.dumps(len(pids)))
"""


def _ranks(count: int, extra: dict[str, str]) -> list[int]:
    procs = []
    for rank in range(count):
        env = {**os.environ, "LOCAL_WORLD_SIZE": str(count), "LOCAL_RANK": str(rank), **extra}
        procs.append(subprocess.Popen([sys.executable, "-c", RANK, str(ROOT)], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))  # fmt: skip
    out = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=240)
        assert proc.returncode == 0, stderr
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


@pytest.mark.timeout(300)
def test_ranks_on_one_node_share_its_cpus():
    cpus = min(usable_cpus(), cpu_budget({}))
    workers = _ranks(2, {})
    assert sum(workers) <= max(cpus, 2), workers  # before: each rank min(8, cpus), 2x the node
    assert all(w >= 1 for w in workers)
    explicit = _ranks(3, {"REWARDSMITH_NODE_CPUS": "1"})
    assert explicit == [1, 1, 1]  # at least one each, however small the budget


def test_the_budget_is_the_nodes_cpus_shared_by_rank():
    node = {"REWARDSMITH_NODE_CPUS": "10", "LOCAL_WORLD_SIZE": "4"}
    assert [cpu_budget({**node, "LOCAL_RANK": str(r)}) for r in range(4)] == [3, 3, 2, 2]
    assert cpu_budget({"REWARDSMITH_NODE_CPUS": "6"}) == 6  # one rank: the whole node


def test_the_cgroup_quota_is_read_from_v2_and_v1_files(tmp_path):
    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "cpu.max").write_text("250000 100000\n")
    assert cgroup_cpu_limit(v2) == 3
    (v2 / "cpu.max").write_text("max 100000\n")
    assert cgroup_cpu_limit(v2) is None
    v1 = tmp_path / "v1" / "cpu"
    v1.mkdir(parents=True)
    (v1 / "cpu.cfs_quota_us").write_text("200000\n")
    (v1 / "cpu.cfs_period_us").write_text("100000\n")
    assert cgroup_cpu_limit(tmp_path / "v1") == 2
    (v1 / "cpu.cfs_quota_us").write_text("-1\n")
    assert cgroup_cpu_limit(tmp_path / "v1") is None
    assert cpu_budget({"LOCAL_WORLD_SIZE": "1"}, cgroup_root=str(v2)) == usable_cpus()
