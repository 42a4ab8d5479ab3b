"""How the ``ray`` engine cuts a call's samples into batches for its actors, and what one batch in flight knows.

A Ray call costs about a millisecond of scheduling and transport, far more than
a cheap reward spends on a sample, so samples travel in batches, as in the
local pool (:mod:`rewardsmith.core.pool_batches`, whose sizing and reporting
this uses, with bigger batches). Their size
comes from the reward's measured cost: the first batch of a pool is one sample
per actor; after that each batch holds about :data:`BATCH_SECONDS` of work
(the actors report the time they spent scoring), and never more than an equal
share of what is left, so every actor gets work and the last batches shrink.

An actor reports its results as it goes (a streaming generator): after each
sample once ``report_every`` seconds have passed since its last report, and at
the end. That is what keeps the per-sample guarantees with batches:

* a deadline runs from the last report: the sample running then started at most
  ``report_every`` after it, so killing at ``last report + timeout +
  report_every`` never cuts a sample short of its ``timeout``;
* when an actor is killed (a timeout) or dies (a crash), the results read
  from it are kept; when one sample was without a result, it is the one; when
  more were (some finished since the last report, and a dead actor's reports
  not read yet die with it), they are sent again as *careful* batches of one
  sample each, which find the one that hangs or crashes, while the others are
  scored.

>>> sizes = ray_batch_sizes(actors=2)
>>> sizes.take(pending=100)  # no cost measured yet: one sample
1
>>> sizes.measured(seconds=0.001, count=10)  # 0.1 ms a sample
>>> sizes.take(pending=100), sizes.take(pending=1000)
(50, 500)
"""

from __future__ import annotations

import os

from rewardsmith.core.pool_batches import BatchSizes as _Sizes
from rewardsmith.core.pool_batches import Task, report_every

__all__ = ["BATCH_SECONDS", "Batch", "ray_batch_sizes", "report_every"]

#: Seconds of work a batch aims at, once the reward's cost is measured. Each batch costs Ray a few
#: milliseconds, so at 0.05 s a reward of ~2 ms per sample ran 1-4% slower than the local pool; at 0.2 s the
#: same (benchmarks/ray_scale.py). Results still come back every ``report_every`` seconds within a batch.
BATCH_SECONDS = float(os.environ.get("REWARDSMITH_RAY_BATCH_SECONDS", "0.2"))
_MAX_BATCH = 1024  # bounds what a crash sends again one by one


def ray_batch_sizes(actors: int) -> _Sizes:
    """The local pool's :class:`~rewardsmith.core.pool_batches.BatchSizes`, with the Ray engine's target and cap."""
    return _Sizes(actors, target=BATCH_SECONDS, most=_MAX_BATCH)


#: One batch in flight on one actor: its handle is the actor's result stream.
Batch = Task
