"""Entry point of a reward worker process (``python -m rewardsmith.core._worker RFD WFD``).

The parent sends one ``init`` message (its ``sys.path``, the modules it loaded
from files, and the pickled reward), then tasks: batches of samples; the
worker scores a batch in order and reports its results as it goes (after each
sample once the batch's ``every`` seconds have passed since the last report,
and at the end). A watchdog thread ends the worker, and every process it
started, when its parent dies, so a killed training run leaves no processes
behind.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import sys
import threading
import time
import traceback
from multiprocessing.connection import Connection


def _end_what_was_started() -> None:
    """Kill every process the reward started in this worker (not the worker itself)."""
    if os.name == "posix":
        from rewardsmith.core.processes import TAG_VARIABLE, kill_tree

        kill_tree(os.getpid(), os.environ.get(TAG_VARIABLE), group=False)


def _watch_parent(parent_pid: int) -> None:
    while True:
        time.sleep(0.5)
        if os.getppid() != parent_pid:
            _end_what_was_started()
            os._exit(0)


def _load_file_modules(file_modules: dict[str, str]) -> None:
    for module_name, path in file_modules.items():
        if module_name in sys.modules:
            continue
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)


def main(read_fd: int, write_fd: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    inbox = Connection(read_fd, writable=False)
    outbox = Connection(write_fd, readable=False)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    try:
        _, sys_path, file_modules, payload = inbox.recv()
        sys.path[:] = sys_path
        _load_file_modules(file_modules)
        import cloudpickle

        from rewardsmith.core.sample import score_sample

        target = cloudpickle.loads(payload)
        target.prepare_worker()
        fn = target.sample_function()
        to_result = target.to_result
    except BaseException:
        outbox.send(("init_error", traceback.format_exc()))
        return
    outbox.send(("ready",))
    while True:
        try:
            message = inbox.recv()
        except (EOFError, OSError):  # the parent is gone
            _end_what_was_started()
            return
        if message is None:
            _end_what_was_started()
            return
        task_id, rows, every = message
        _score_batch(outbox, task_id, rows, every, lambda row: score_sample(fn, to_result, row, in_worker=True))


def _score_batch(outbox: Connection, task_id: int, rows: list, every: float, score) -> None:
    """Score ``rows`` in order, sending ``(task_id, outcomes, seconds spent)`` once ``every`` seconds have passed
    since the last report (after each sample when 0) and at the end; a ``fatal`` outcome ends the batch."""
    outcomes: list = []
    spent, last = 0.0, time.monotonic()
    for row in rows:
        started = time.perf_counter()
        outcomes.append(score(row))
        spent += time.perf_counter() - started
        fatal = outcomes[-1][0] == "fatal"
        if fatal or time.monotonic() - last >= every:
            _send(outbox, task_id, outcomes, spent)
            outcomes, spent, last = [], 0.0, time.monotonic()
        if fatal:
            return
    if outcomes:
        _send(outbox, task_id, outcomes, spent)


def _send(outbox: Connection, task_id: int, outcomes: list, spent: float) -> None:
    try:
        outbox.send((task_id, outcomes, spent))
    except Exception:
        for index, (kind, payload) in enumerate(outcomes):  # find what could not be pickled
            try:
                outbox.send((task_id, [(kind, payload)], spent if index == 0 else 0.0))
            except Exception as exc:
                outbox.send((task_id, [("error", _unsendable(exc))], 0.0))


def _unsendable(exc: Exception):
    from rewardsmith.core.result import Failure

    return Failure("error", f"the result could not be sent back from the worker: {exc}", type(exc).__name__)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
