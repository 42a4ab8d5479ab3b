"""The ``ray`` engine of rewards: samples scored on Ray actors, in batches, with the local pool's semantics.

``get_reward("math_accuracy", engine="ray", workers=8, timeout=5)`` scores
samples on 8 Ray actors (one CPU each), anywhere in the cluster. Samples
travel in batches sized by the reward's measured cost, and each actor reports
its results as it goes (:mod:`rewardsmith.integrations.rayengine.batching`).
What the local pool (:class:`~rewardsmith.core.pool.WorkerPool`) promises
holds here too:

* results come back in input order, one ``RewardResult`` or ``Failure`` per row;
* a sample that passes ``timeout`` has its actor killed (``ray.kill``: the
  actor's process is ended, so a reward stuck in C code stops too) and
  replaced; it becomes a ``timeout`` failure; the rest of its batch is scored;
* an actor that dies while scoring (segfault, ``os._exit``, the OOM killer, a
  lost node) is replaced; its sample becomes a ``crash`` failure; the rest of
  its batch is scored;
* ``prepare_worker()`` runs once per actor before it takes samples, and
  starting an actor never counts against a sample's timeout;
* actors are reused between calls and stopped by ``reward.close()`` or at exit.

A deadline is never shorter than ``timeout`` for the sample it stops; it may
be longer by the actor's report interval (at most 50 ms). When a killed or
dead actor's batch had more than one sample without a result, those samples
are sent again one per batch, so that the one that hangs or crashes is found:
that sample runs (and is stopped) twice. Affinity keys are not used: batches
go to whichever actor is free.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
import weakref
from collections import deque
from typing import Any

from rewardsmith.core.errors import RewardExecutionError, RewardReturnError
from rewardsmith.core.pool import STARTUP_TIMEOUT, WORKERS_VARIABLE, StartupDeaths
from rewardsmith.core.result import Failure
from rewardsmith.core.sample import score_sample
from rewardsmith.integrations.rayengine.batching import Batch, ray_batch_sizes, report_every
from rewardsmith.integrations.rayengine.cluster import connect, load_reward

__all__ = ["RayPool", "RewardActor"]

logger = logging.getLogger("rewardsmith")

_ACTOR_CPUS = float(os.environ.get("REWARDSMITH_RAY_ACTOR_CPUS", "1"))


class RewardActor:
    """One Ray actor holding one reward; scores batches of samples (the class Ray runs remotely)."""

    def __init__(self, payload: bytes, file_modules: dict[str, str], sys_path: list[str], pool_size: int = 1) -> None:
        os.environ[WORKERS_VARIABLE] = str(pool_size)
        target = load_reward(payload, file_modules, sys_path)
        target.prepare_worker()
        self.fn = target.sample_function()
        self.to_result = target.to_result

    def ready(self) -> int:
        """The actor's process id, once the reward is loaded."""
        return os.getpid()

    def score_batch(self, rows: list[dict[str, Any]], every: float) -> Any:
        """Score ``rows`` in order, yielding ``(outcomes, seconds spent)`` once ``every`` seconds have passed since
        the last report (after each sample when 0) and at the end; an outcome is ``("ok", RewardResult)``,
        ``("error", Failure)`` or ``("fatal", error)``, and a fatal one ends the batch."""
        outcomes: list[tuple[str, Any]] = []
        spent, last = 0.0, time.monotonic()
        for row in rows:
            started = time.perf_counter()
            outcome = score_sample(self.fn, self.to_result, row, in_worker=True)
            spent += time.perf_counter() - started
            outcomes.append(outcome)
            if outcome[0] == "fatal":
                break
            if time.monotonic() - last >= every:
                yield outcomes, spent
                outcomes, spent, last = [], 0.0, time.monotonic()
        if outcomes:
            yield outcomes, spent


class _Slot:
    """One actor of the pool: started, ready, or busy with one batch."""

    def __init__(self, handle: Any, ready_ref: Any) -> None:
        self.handle = handle
        self.ready_ref = ready_ref
        self.ready = False
        self.started = time.monotonic()
        self.pid: int | None = None
        self.batch: Batch | None = None


class _Call:
    """One ``map`` call: its rows, results, the rows not sent yet, and groups of rows to run carefully."""

    def __init__(self, rows: list[dict[str, Any]], timeout: float | None) -> None:
        self.rows = rows
        self.timeout = timeout
        self.results: list[Any] = [None] * len(rows)
        self.pending: deque[int] = deque(range(len(rows)))
        self.careful: deque[list[int]] = deque()


class RayPool:
    """``size`` Ray actors that score samples for one reward (the ``ray`` engine's pool).

    Built by the engine from the pickled reward; see the module docs for
    what it guarantees.
    """

    def __init__(self, payload: bytes, size: int, reward_name: str, file_modules: dict[str, str]) -> None:
        self.ray = connect(f"reward {reward_name!r} with engine='ray'")
        self.size = max(1, int(size))
        self.reward_name = reward_name
        self.closed = False
        self._payload = self.ray.put(payload)
        self._file_modules = dict(file_modules)
        self._actor_class = self.ray.remote(RewardActor).options(
            num_cpus=_ACTOR_CPUS, max_restarts=0, max_task_retries=0, max_concurrency=1
        )
        self._slots: list[_Slot] = []
        self._lock = threading.Lock()
        self._startup_deaths = StartupDeaths()
        self.sizes = ray_batch_sizes(self.size)
        self.batches_sent = 0
        weakref.finalize(self, _kill_all, self.ray, self._slots)

    @property
    def pids(self) -> list[int]:
        """Process ids of the actors that are ready (they may run on other nodes)."""
        return [s.pid for s in self._slots if s.pid is not None]

    def _launch_actor(self) -> _Slot:
        handle = self._actor_class.remote(self._payload, self._file_modules, list(sys.path), self.size)
        return _Slot(handle, handle.ready.remote())

    def _restart_actor(self, slot: _Slot) -> None:
        slot.batch = None
        with contextlib.suppress(Exception):
            self.ray.kill(slot.handle, no_restart=True)
        if not self.closed and slot in self._slots:
            self._slots[self._slots.index(slot)] = self._launch_actor()

    def map(self, rows: list[dict[str, Any]], timeout: float | None, keys: list[Any] | None = None) -> list[Any]:
        """Score every row; each result is a ``RewardResult`` or a :class:`Failure`, in input order."""
        with self._lock:
            if self.closed:
                raise RewardExecutionError(f"the Ray actors of reward {self.reward_name!r} were closed")
            while len(self._slots) < self.size:
                self._slots.append(self._launch_actor())
            call = _Call(rows, timeout)
            try:
                while call.pending or call.careful or any(s.batch for s in self._slots):
                    self._hand_out(call)
                    self._wait(call)
            except BaseException:
                # Ctrl-C or an error mid-call: replace the busy actors so that no stale result reaches the next call.
                for slot in list(self._slots):
                    if slot.batch is not None:
                        self._restart_actor(slot)
                raise
            return call.results

    def _hand_out(self, call: _Call) -> None:
        share = len(call.pending)  # every idle actor of this round gets an equal part of what is left
        for slot in self._slots:
            if not (call.pending or call.careful):
                return
            if not slot.ready or slot.batch is not None:
                continue
            careful = bool(call.careful)
            if careful:
                indices = call.careful.popleft()
            else:
                take = min(self.sizes.take(share), len(call.pending))
                indices = [call.pending.popleft() for _ in range(take)]
            every = report_every(call.timeout, careful)
            batch = [call.rows[i] for i in indices]
            stream = slot.handle.score_batch.options(num_returns="streaming").remote(batch, every)
            slot.batch = Batch(stream, indices, careful, every)
            self.batches_sent += 1

    def _wait(self, call: _Call) -> None:
        watched: list[tuple[Any, _Slot]] = []
        deadlines = []
        for slot in self._slots:
            if slot.batch is not None:
                watched.append((slot.batch.handle, slot))
                deadline = slot.batch.deadline(call.timeout)
                if deadline is not None:
                    deadlines.append(deadline)
            elif not slot.ready:
                watched.append((slot.ready_ref, slot))
                deadlines.append(slot.started + STARTUP_TIMEOUT)
        wait_for = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
        refs = [ref for ref, _ in watched]
        done, rest = self.ray.wait(refs, num_returns=1, timeout=wait_for)
        if done and rest:  # take everything else that is ready too, without waiting
            more, _ = self.ray.wait(rest, num_returns=len(rest), timeout=0)
            done = list(done) + list(more)
        ready = {id(ref) for ref in done}
        for ref, slot in watched:
            if id(ref) not in ready:
                continue
            if slot.batch is not None and ref is slot.batch.handle:
                self._take_report(slot, call)
            else:
                self._started(slot, ref)
        self._enforce_deadlines(call)

    def _started(self, slot: _Slot, ref: Any) -> None:
        try:
            slot.pid = self.ray.get(ref)
        except self.ray.exceptions.RayActorError as exc:
            why = (f"the Ray actors of reward {self.reward_name!r} could not load it (the reward must be importable "
                   f"or picklable where Ray runs it):\n{_cause(exc)}")  # fmt: skip
            self._startup_deaths.died(self.close, why)
            logger.debug("reward %r: a Ray actor died while starting; starting another", self.reward_name)
            self._restart_actor(slot)
            return
        slot.ready = True
        self._startup_deaths.ready()

    def _take_report(self, slot: _Slot, call: _Call) -> None:
        batch = slot.batch
        assert batch is not None
        try:
            outcomes, seconds = self.ray.get(next(batch.handle))
        except StopIteration:  # the stream ended before every row came back (cannot happen but after a fatal one)
            self._lost(slot, call, Failure("error", "the Ray actor stopped before scoring this sample", "RayError"))
            return
        except self.ray.exceptions.RayActorError as exc:
            failure = Failure("crash", f"the Ray actor died while scoring this sample ({_cause(exc)})", "WorkerCrash")
            self._lost(slot, call, failure)
            return
        except self.ray.exceptions.RayError as exc:  # e.g. a result that cannot be sent back
            self._lost(
                slot, call, Failure("error", f"Ray could not return this sample's result: {_cause(exc)}", "RayError")
            )
            return
        self.sizes.measured(seconds, len(outcomes))
        for kind, payload in outcomes:
            if kind == "fatal":  # the actor stopped this batch: it is idle, and the call fails
                slot.batch = None
                raise payload if isinstance(payload, BaseException) else RewardReturnError(str(payload))
            call.results[batch.rows[batch.done]] = payload
            batch.done += 1
        batch.progress_at = time.monotonic()
        if batch.finished:
            slot.batch = None

    def _lost(self, slot: _Slot, call: _Call, failure: Failure) -> None:
        """The actor of ``slot`` was killed or died (or its stream broke): replace it, and settle its batch.

        One unreported sample, or a careful batch (one sample), gets ``failure``. Several unreported samples of a
        plain batch are sent again one per batch, so the one that hangs or crashes is found: a dead actor's reports
        that were not read yet are lost with it, so only a batch of one says which sample it was.
        """
        batch = slot.batch
        assert batch is not None
        left = batch.unreported
        self._restart_actor(slot)
        if len(left) == 1 or (batch.careful and left):
            call.results[left[0]] = failure
            call.pending.extendleft(reversed(left[1:]))
        elif left:
            logger.debug("reward %r: sending %d samples again one by one to find the one", self.reward_name, len(left))
            call.careful.extend([index] for index in left)

    def _enforce_deadlines(self, call: _Call) -> None:
        now = time.monotonic()
        for slot in list(self._slots):
            deadline = slot.batch.deadline(call.timeout) if slot.batch is not None else None
            if deadline is not None and now >= deadline:
                self._lost(slot, call, Failure("timeout", f"timed out after {call.timeout:g}s", "Timeout"))
            elif not slot.ready and now - slot.started > STARTUP_TIMEOUT:
                cpus = self.ray.cluster_resources().get("CPU", 0)
                self.close()
                raise RewardExecutionError(
                    f"the Ray actors of reward {self.reward_name!r} did not start within {STARTUP_TIMEOUT:g}s; "
                    f"{self.size} actors of {_ACTOR_CPUS:g} CPU each were asked for and the cluster has {cpus:g} "
                    "CPUs (lower workers, set REWARDSMITH_RAY_ACTOR_CPUS, or set REWARDSMITH_WORKER_STARTUP_TIMEOUT "
                    "to wait longer)"
                )

    def close(self) -> None:
        """Stop every actor. The pool cannot be used afterwards."""
        self.closed = True
        _kill_all(self.ray, self._slots)


def _kill_all(ray: Any, slots: list[_Slot]) -> None:
    for slot in slots:
        with contextlib.suppress(Exception):
            ray.kill(slot.handle, no_restart=True)
    slots.clear()


def _cause(exc: BaseException) -> str:
    """The useful part of a Ray error: the exception that killed the actor, when Ray kept it."""
    text = str(exc).strip()
    return text[-2000:] if len(text) > 2000 else text
