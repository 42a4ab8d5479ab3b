"""One CPU budget per node: how many worker processes this process's pools may run.

With 8 training ranks on a node (torchrun, accelerate, DeepSpeed), each rank
opening ``min(workers, cpus)`` pool processes oversubscribes the node up to 8
times. The budget of this process is the node's CPUs shared among the ranks
on it:

* the node's CPUs: ``REWARDSMITH_NODE_CPUS`` when set (an explicit budget for
  all the ranks of the node), else the CPUs this process may run on (its
  affinity mask), lowered to the cgroup's CPU quota (``cpu.max`` of cgroup v2,
  ``cpu.cfs_quota_us`` of v1: a container limited to 4 CPUs of a 64-core host
  has 4);
* the ranks on the node: ``LOCAL_WORLD_SIZE`` (set by torchrun and
  accelerate), else 1; rank ``LOCAL_RANK`` gets ``cpus // ranks``, and the
  first ``cpus % ranks`` ranks one more, at least 1 each.

Every pool of the process is sized by it (:class:`rewardsmith.core.pool.WorkerPool`),
and never above the CPUs this process may run on.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path

from rewardsmith.core.processes import usable_cpus

__all__ = ["NODE_CPUS_VARIABLE", "cgroup_cpu_limit", "cpu_budget", "node_cpus"]

#: The explicit CPU budget of a node, shared by all its ranks.
NODE_CPUS_VARIABLE = "REWARDSMITH_NODE_CPUS"


def cgroup_cpu_limit(root: str | os.PathLike[str] = "/sys/fs/cgroup") -> int | None:
    """The CPUs the cgroup's quota allows (rounded up), or ``None`` when there is no quota.

    Reads cgroup v2's ``cpu.max`` (``"400000 100000"``: 4 CPUs; ``"max 100000"``: none), else v1's
    ``cpu/cpu.cfs_quota_us`` and ``cpu.cfs_period_us`` (a quota of ``-1``: none).
    """
    base = Path(root)
    try:
        quota, _, period = (base / "cpu.max").read_text().strip().partition(" ")
        if quota != "max":
            return max(1, math.ceil(int(quota) / int(period or "100000")))
        return None
    except (OSError, ValueError):
        pass
    for folder in (base / "cpu", base / "cpu,cpuacct", base):
        try:
            quota_us = int((folder / "cpu.cfs_quota_us").read_text())
            period_us = int((folder / "cpu.cfs_period_us").read_text())
        except (OSError, ValueError):
            continue
        return max(1, math.ceil(quota_us / period_us)) if quota_us > 0 and period_us > 0 else None
    return None


def _positive(value: str | None) -> int | None:
    try:
        number = int(str(value).strip())
    except ValueError:
        return None
    return number if number > 0 else None


def node_cpus(environ: Mapping[str, str] | None = None, cgroup_root: str = "/sys/fs/cgroup") -> int:
    """The CPUs of this node for rewardsmith's pools (see the module docs).

    >>> node_cpus({"REWARDSMITH_NODE_CPUS": "12"})
    12
    """
    env = os.environ if environ is None else environ
    explicit = _positive(env.get(NODE_CPUS_VARIABLE))
    if explicit is not None:
        return explicit
    limit = cgroup_cpu_limit(cgroup_root)
    cpus = usable_cpus()
    return min(cpus, limit) if limit is not None else cpus


def cpu_budget(environ: Mapping[str, str] | None = None, cgroup_root: str = "/sys/fs/cgroup") -> int:
    """The worker processes this process's pools may run: its rank's share of the node's CPUs.

    >>> cpu_budget({"REWARDSMITH_NODE_CPUS": "10", "LOCAL_WORLD_SIZE": "4", "LOCAL_RANK": "1"})
    3
    >>> cpu_budget({"REWARDSMITH_NODE_CPUS": "10", "LOCAL_WORLD_SIZE": "4", "LOCAL_RANK": "3"})
    2
    >>> cpu_budget({"REWARDSMITH_NODE_CPUS": "2", "LOCAL_WORLD_SIZE": "8", "LOCAL_RANK": "5"})
    1
    """
    env = os.environ if environ is None else environ
    cpus = node_cpus(env, cgroup_root)
    ranks = _positive(env.get("LOCAL_WORLD_SIZE")) or 1
    rank = _positive(env.get("LOCAL_RANK")) or 0
    share = cpus // ranks + (1 if rank % ranks < cpus % ranks else 0)
    return max(1, share)
