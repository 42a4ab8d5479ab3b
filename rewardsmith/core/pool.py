"""A pool of worker processes that scores samples with hard per-sample timeouts.

Why not ``concurrent.futures.ProcessPoolExecutor``: it cannot stop one task
that runs too long, and one crashed worker breaks the whole executor. Here
each worker is a plain ``python -m rewardsmith.core._worker`` subprocess with
its own pipes, and one dispatcher loop on the calling thread:

* a task that passes its deadline gets its worker killed (``SIGKILL``) and
  replaced; the sample becomes a ``timeout`` failure;
* a worker that dies (segfault, ``os._exit``, the OOM killer) is replaced; its
  sample becomes a ``crash`` failure;
* results come back in input order; workers are reused between calls;
* samples travel in batches sized by the reward's measured cost, reported as
  they are scored, with the same guarantees (:mod:`rewardsmith.core.pool_batches`);
* workers are plain subprocesses, not forks: no fork-after-threads hazards
  with PyTorch or TRL's event-loop thread, no re-running of the user's script,
  and rewards defined in ``__main__`` or a notebook travel by value
  (cloudpickle).

Pools are closed at interpreter exit; a worker whose parent dies (even by
``SIGKILL``) notices within half a second and exits.

Whatever a reward starts (``subprocess``, ``fork``, a compiler, a test
harness) dies with its worker: each worker leads its own process group and
tags its environment, and a worker killed on a timeout, replaced after a
crash, stopped when the pool closes or orphaned by its parent's death takes
its whole tree with it (:mod:`rewardsmith.core.processes`).

A pool never runs more workers than this process's CPU budget (a warning
says so once): the node's CPUs (affinity, cgroup quota, or
``REWARDSMITH_NODE_CPUS``) shared by the ``LOCAL_WORLD_SIZE`` ranks on it
(:mod:`rewardsmith.core.budget`); a call starts no more workers than it has
samples.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
import weakref
from collections import deque
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from rewardsmith.core.budget import NODE_CPUS_VARIABLE, cpu_budget
from rewardsmith.core.errors import RewardExecutionError, RewardReturnError
from rewardsmith.core.pool_batches import BatchSizes, Task, report_every
from rewardsmith.core.processes import TAG_VARIABLE, descendants, kill_tree, usable_cpus
from rewardsmith.core.result import Failure

__all__ = ["STARTUP_TIMEOUT", "WORKERS_VARIABLE", "StartupDeaths", "WorkerPool", "close_all_pools", "engine_workers"]

logger = logging.getLogger("rewardsmith")

#: Seconds a worker (a process here, a Ray actor in :mod:`rewardsmith.integrations.rayengine`) may take to start.
STARTUP_TIMEOUT = float(os.environ.get("REWARDSMITH_WORKER_STARTUP_TIMEOUT", "300"))
_POOLS: weakref.WeakSet[WorkerPool] = weakref.WeakSet()
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
#: Set in every worker to the number of workers its pool runs (what :func:`engine_workers` reads).
WORKERS_VARIABLE = "REWARDSMITH_ENGINE_WORKERS"


class StartupDeaths:
    """Workers that died before they were ready, in a row: the third means the reward cannot load there.

    >>> deaths, closed = StartupDeaths(), []
    >>> deaths.died(lambda: closed.append(True), "the reward could not load")
    >>> deaths.ready()  # a worker started: the count starts again
    >>> deaths.died(lambda: closed.append(True), "the reward could not load")
    >>> deaths.died(lambda: closed.append(True), "the reward could not load")
    >>> deaths.died(lambda: closed.append(True), "the reward could not load")
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.RewardExecutionError: the reward could not load
    >>> closed
    [True]
    """

    limit = 3

    def __init__(self) -> None:
        self.count = 0

    def ready(self) -> None:
        """A worker started: the deaths before it no longer count."""
        self.count = 0

    def died(self, close: Callable[[], None], why: str) -> None:
        """Count one; at the limit, ``close()`` the pool and raise :class:`RewardExecutionError` saying ``why``."""
        self.count += 1
        if self.count >= self.limit:
            close()
            raise RewardExecutionError(why) from None


def engine_workers() -> int:
    """How many workers score the reward this process is scoring for: its pool's size in a worker, else 1.

    >>> engine_workers() >= 1
    True
    """
    try:
        return max(1, int(os.environ.get(WORKERS_VARIABLE, "1")))
    except ValueError:
        return 1


def _budget_source() -> str:
    """What the CPU budget was taken from, for the warning."""
    explicit = os.environ.get(NODE_CPUS_VARIABLE)
    node = f"{NODE_CPUS_VARIABLE}={explicit}" if explicit else "the usable CPUs and the cgroup's quota"
    ranks = os.environ.get("LOCAL_WORLD_SIZE")
    return node + (f", shared by LOCAL_WORLD_SIZE={ranks} ranks" if ranks else "")


def _signal_name(code: int | None) -> str:
    if code is None:
        return "unknown status"
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


class _Worker:
    """One worker subprocess and the two pipe ends the parent holds."""

    def __init__(self, init_message: tuple[Any, ...], pool_size: int = 1) -> None:
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH", "")) if p)
        self.tag = uuid.uuid4().hex
        env[TAG_VARIABLE] = self.tag  # inherited by every process the reward starts
        env[WORKERS_VARIABLE] = str(pool_size)  # rewards that start processes size their own parallelism by it
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "rewardsmith.core._worker", str(to_child_r), str(from_child_w)],
                pass_fds=(to_child_r, from_child_w),
                stdin=subprocess.DEVNULL,
                env=env,
                close_fds=True,
                start_new_session=os.name == "posix",  # its own process group, for killing its whole tree
            )
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
        self.inbox = Connection(from_child_r, writable=False)
        self.outbox = Connection(to_child_w, readable=False)
        self.ready = False
        self.started = time.monotonic()
        self.outbox.send(init_message)

    def send(self, message: Any) -> None:
        self.outbox.send(message)

    def kill(self, known: list[int] | None = None) -> int | None:
        """Kill the worker and every process it started; its exit code (``None`` if it would not die)."""
        if os.name == "posix":
            kill_tree(self.proc.pid, self.tag, known)
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        self._close_pipes()
        return code

    def request_stop(self) -> None:
        """Ask the worker to exit once it is idle."""
        with contextlib.suppress(OSError, ValueError):
            self.outbox.send(None)

    def exit_code(self) -> int | None:
        try:
            return self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return None

    def _close_pipes(self) -> None:
        for conn in (self.inbox, self.outbox):
            with contextlib.suppress(OSError):
                conn.close()


class _Lanes:
    """Pending task indices, one lane per worker slot.

    With affinity keys, the rows are cut into ``size`` contiguous runs of
    about equal length, each boundary moved to where the key changes, so
    that a run of rows with the same key (a prompt group: TRL passes a
    prompt's completions consecutively) stays on one worker and its caches
    serve all of them: the group's reference is parsed once. Contiguous runs
    also keep neighbouring rows, which tend to share work, together. A worker
    whose lane is empty steals from the tail of the longest lane, so the load
    stays balanced. Without keys, one shared lane.

    >>> [list(lane) for lane in _Lanes(8, 2, ["a", "a", "a", "b", "b", "c", "c", "c"]).lanes]
    [[0, 1, 2, 3, 4], [5, 6, 7]]
    """

    def __init__(self, n: int, size: int, keys: list[Any] | None) -> None:
        if keys is None or size < 2:
            self.lanes = [deque(range(n))]
            return
        bounds = [0]
        for lane in range(1, size):
            cut = max(bounds[-1], round(n * lane / size))
            while 0 < cut < n and keys[cut] == keys[cut - 1]:
                cut += 1
            bounds.append(cut)
        bounds.append(n)
        self.lanes = [deque(range(start, end)) for start, end in itertools.pairwise(bounds)]

    def __bool__(self) -> bool:
        return any(self.lanes)

    def __len__(self) -> int:
        return sum(map(len, self.lanes))

    def _lane(self, slot: int) -> deque:
        return self.lanes[slot % len(self.lanes)]

    def take(self, slot: int) -> int:
        lane = self._lane(slot)
        if lane:
            return lane.popleft()
        return max(self.lanes, key=len).pop()

    def put_back(self, slot: int, index: int) -> None:
        self._lane(slot).appendleft(index)


class WorkerPool:
    """``size`` worker processes that score samples for one reward.

    ``payload`` is the reward pickled with cloudpickle; ``file_modules`` maps
    module names to the files they were loaded from, so that workers can load
    them again before unpickling.
    """

    def __init__(self, payload: bytes, size: int, reward_name: str, file_modules: dict[str, str]) -> None:
        self.requested = max(1, int(size))
        budget = min(cpu_budget(), usable_cpus())
        self.size = min(self.requested, budget)
        if self.size < self.requested:
            logger.warning(
                "reward %r asks for workers=%d, but this process's CPU budget is %d (%s): it runs at most %d "
                "worker processes (and never more than a batch has samples)",
                reward_name,
                self.requested,
                budget,
                _budget_source(),
                self.size,
            )
        self.reward_name = reward_name
        self._init_message = ("init", list(sys.path), dict(file_modules), payload)
        self._workers: list[_Worker] = []
        self._task_ids = itertools.count()
        self._lock = threading.Lock()
        self._startup_deaths = StartupDeaths()
        self.sizes = BatchSizes(self.size)
        self.batches_sent = 0
        self.closed = False
        _POOLS.add(self)
        # Stops the workers when the pool is garbage-collected or the interpreter exits.
        weakref.finalize(self, _stop_workers, self._workers)

    @property
    def pids(self) -> list[int]:
        """Process ids of the current workers."""
        return [w.proc.pid for w in self._workers]

    def _start(self) -> _Worker:
        return _Worker(self._init_message, self.size)

    def _ensure_workers(self, needed: int) -> None:
        if self.closed:
            raise RewardExecutionError(f"the worker pool of reward {self.reward_name!r} was closed")
        while len(self._workers) < min(self.size, max(1, needed)):
            self._workers.append(self._start())

    def _replace(self, worker: _Worker) -> int | None:
        code = worker.kill()
        if not self.closed and worker in self._workers:
            self._workers[self._workers.index(worker)] = self._start()
        return code

    def map(self, rows: list[dict[str, Any]], timeout: float | None, keys: list[Any] | None = None) -> list[Any]:
        """Score every row; each result is a ``RewardResult`` or a :class:`Failure`, in input order.

        ``keys`` (one per row) are affinity keys: rows with the same key are
        scored by the same worker where the load allows.
        """
        with self._lock:
            return self._map(rows, timeout, keys)

    def _map(self, rows: list[dict[str, Any]], timeout: float | None, keys: list[Any] | None) -> list[Any]:
        self._ensure_workers(len(rows))
        results: list[Any] = [None] * len(rows)
        pending = _Lanes(len(rows), len(self._workers), keys)
        careful: deque[int] = deque()  # samples of a lost batch, sent again one at a time
        busy: dict[_Worker, Task] = {}
        try:
            while pending or careful or busy:
                self._dispatch(rows, pending, careful, busy, results, timeout)
                self._collect(busy, careful, results, timeout)
        except BaseException:
            # Ctrl-C or an error mid-batch: the busy workers hold tasks of this
            # call; replace them so that no stale result reaches the next call.
            for worker in list(busy):
                self._replace(worker)
            raise
        return results

    def _dispatch(self, rows, pending, careful, busy, results, timeout) -> None:
        for slot, worker in enumerate(list(self._workers)):
            if not pending and not careful:
                return
            if not worker.ready or worker in busy:
                continue
            if careful:
                indices, one = [careful.popleft()], True
            else:
                count = self.sizes.take(len(pending))
                indices, one = [pending.take(slot) for _ in range(min(count, len(pending)))], False
            task = Task(next(self._task_ids), indices, one, report_every(timeout, one))
            try:
                worker.send((task.handle, [rows[i] for i in indices], task.every))
            except (BrokenPipeError, ConnectionError, EOFError):
                for index in reversed(indices):
                    pending.put_back(slot, index)
                self._replace(worker)
                continue
            except Exception as exc:
                if len(indices) > 1:  # one of them cannot be sent: each alone finds which
                    careful.extend(indices)
                    continue
                results[indices[0]] = Failure(
                    "error", f"the inputs of this sample could not be sent to a worker: {exc}", type(exc).__name__
                )
                continue
            busy[worker] = task
            self.batches_sent += 1

    def _collect(self, busy, careful, results, timeout) -> None:
        now = time.monotonic()
        deadlines = [d for d in (t.deadline(timeout) for t in busy.values()) if d is not None]
        deadlines += [w.started + STARTUP_TIMEOUT for w in self._workers if not w.ready]
        wait_for = max(0.0, min(deadlines) - now) if deadlines else None
        by_conn = {w.inbox: w for w in self._workers if w in busy or not w.ready}
        for conn in wait(list(by_conn), timeout=wait_for):
            worker = by_conn[conn]
            try:
                message = conn.recv()
            except (EOFError, OSError):
                self._worker_died(worker, busy, careful, results)
                continue
            if message[0] == "ready":
                worker.ready = True
                self._startup_deaths.ready()
            elif message[0] == "init_error":
                self.close()
                raise RewardExecutionError(
                    f"the worker processes of reward {self.reward_name!r} could not load it "
                    f"(the reward must be importable or picklable):\n{message[1]}"
                )
            else:
                self._task_done(worker, message, busy, results)
        self._expire(busy, careful, results, timeout)

    def _task_done(self, worker, message, busy, results) -> None:
        task_id, outcomes, seconds = message
        task = busy.get(worker)
        if task is None or task.handle != task_id:
            return  # a stale answer for a task that was already given up on
        self.sizes.measured(seconds, len(outcomes))
        for kind, payload in outcomes:
            index = task.rows[task.done]
            task.done += 1
            if kind == "fatal":
                busy.pop(worker)
                raise payload if isinstance(payload, BaseException) else RewardReturnError(str(payload))
            results[index] = payload
        task.progress_at = time.monotonic()
        if task.finished:
            busy.pop(worker)

    @staticmethod
    def _settle(task: Task, failure: Failure, careful: deque[int], results: list[Any]) -> None:
        """A lost batch: its one unreported sample gets ``failure``; several are sent again one at a time."""
        left = task.unreported
        if len(left) == 1 or (task.careful and left):
            results[left[0]] = failure
            careful.extendleft(reversed(left[1:]))
        elif left:
            careful.extend(left)

    def _worker_died(self, worker, busy, careful, results) -> None:
        code = worker.exit_code()
        task = busy.pop(worker, None)
        if task is not None:
            failure = Failure(
                "crash", f"the worker process died ({_signal_name(code)}) while scoring this sample", "WorkerCrash"
            )
            self._settle(task, failure, careful, results)
        elif not worker.ready:
            why = f"keep dying while starting ({_signal_name(code)}); see the output above for the cause"
            self._startup_deaths.died(self.close, f"the worker processes of reward {self.reward_name!r} {why}")
        logger.debug("reward %r: worker %s died (%s); starting another", self.reward_name, worker.proc.pid, code)
        self._replace(worker)

    def _expire(self, busy, careful, results, timeout) -> None:
        now = time.monotonic()
        for worker, task in list(busy.items()):
            deadline = task.deadline(timeout)
            if deadline is not None and now >= deadline:
                busy.pop(worker)
                self._settle(task, Failure("timeout", f"timed out after {timeout:g}s", "Timeout"), careful, results)
                self._replace(worker)
        for worker in list(self._workers):
            if not worker.ready and now - worker.started > STARTUP_TIMEOUT:
                self.close()
                raise RewardExecutionError(
                    f"the worker processes of reward {self.reward_name!r} did not start within "
                    f"{STARTUP_TIMEOUT:g}s (set REWARDSMITH_WORKER_STARTUP_TIMEOUT to wait longer)"
                )

    def close(self) -> None:
        """Stop every worker. The pool cannot be used afterwards."""
        self.closed = True
        _stop_workers(self._workers)


def _stop_workers(workers: list[_Worker]) -> None:
    """Ask every worker to exit, give them a second together, then kill what is left, with what they started."""
    started = {worker: descendants(worker.proc.pid) for worker in workers}  # before an exit orphans them
    for worker in workers:
        worker.request_stop()
    deadline = time.monotonic() + 1.0
    for worker in workers:
        with contextlib.suppress(subprocess.TimeoutExpired):
            worker.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        worker.kill(started[worker])
    workers.clear()


def close_all_pools() -> None:
    """Stop the workers of every pool still open."""
    for pool in list(_POOLS):
        pool.close()
