"""The output folder of an evaluation job: ``results.jsonl`` written as it goes, and resumable.

Rows are appended to ``results.jsonl`` in ``(index, sample)`` order, one JSON
object per line, and flushed to the operating system after every batch, so a
killed process (even ``kill -9``) loses at most the batch it was working on.
Because the order is fixed, the file is always a prefix of the job: resuming
means counting its lines. A last line cut short by a kill (no newline, or not
valid JSON) is detected and cut off before anything is appended; every other
line must be the row its position says, or the file is refused.

One job writes to a folder at a time, whatever its flags: a lock on ``.lock``
is held while it runs (:mod:`rewardsmith.evaluation.folder_lock`: the
system's lock, and a record of the holder that still refuses where the
platform or file system has no working lock).
``job.json`` records what the job is (data, rewards, completions), so that
rerunning a *different* job into the same folder is an error instead of a mix.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rewardsmith.core.errors import RewardsmithError
from rewardsmith.evaluation.folder_lock import FolderLock, FolderLockedError

__all__ = ["EvaluationError", "JobFolder", "iter_results"]

logger = logging.getLogger("rewardsmith")

RESULTS = "results.jsonl"
SUMMARY = "summary.json"
REPORT = "report.html"
JOB = "job.json"
LOCK = ".lock"


class EvaluationError(RewardsmithError):
    """An evaluation job cannot run as asked: its output folder holds another job, is in use, or is damaged."""


def to_json_line(row: dict[str, Any]) -> str:
    """One results row as a line of JSON (NumPy and other odd values made plain).

    Text that is not valid Unicode (a lone surrogate, which a model's tokenizer
    or a server's JSON can produce) is kept exactly, as a JSON escape that
    reads back as the same string.

    >>> to_json_line({"index": 0, "text": "é"})
    '{"index": 0, "text": "é"}\\n'
    >>> line = to_json_line({"text": "a\\ud800b"})
    >>> line, json.loads(line)["text"] == "a\\ud800b"
    ('{"text": "a\\\\ud800b"}\\n', True)
    """
    line = json.dumps(row, ensure_ascii=False, default=_plain) + "\n"
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(row, ensure_ascii=True, default=_plain) + "\n"
    return line


def _plain(value: Any) -> Any:
    for attribute in ("tolist", "item"):
        method = getattr(value, attribute, None)
        if callable(method):
            return method()
    return str(value)


def iter_results(path: str | os.PathLike[str]) -> Iterable[dict[str, Any]]:
    """The rows of a ``results.jsonl`` file, read one at a time (a torn last line is skipped).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "results.jsonl"
    >>> _ = path.write_text('{"index": 0, "sample": 0}\\n{"index": 1, "sa')
    >>> list(iter_results(path))
    [{'index': 0, 'sample': 0}]
    """
    with open(path, "rb") as handle:
        for line in handle:
            if not line.endswith(b"\n"):
                return
            try:
                yield json.loads(line)
            except ValueError:
                return


class JobFolder:
    """An evaluation job's output folder: lock, identity check, resumable ``results.jsonl``, summary and report.

    >>> import tempfile
    >>> with JobFolder(tempfile.mkdtemp(), {"job": "demo"}, n=1) as folder:
    ...     folder.recover(lambda row: None)
    ...     folder.append([{"index": 0, "sample": 0}])
    ...     folder.recover(lambda row: None)
    0
    1
    """

    def __init__(self, path: str | os.PathLike[str], identity: dict[str, Any], n: int, overwrite: bool = False) -> None:
        self.path = Path(path)
        self.identity = identity
        self.n = n
        self.overwrite = overwrite
        self._lock: Any = None
        self._file: Any = None

    @property
    def results_path(self) -> Path:
        """``results.jsonl``."""
        return self.path / RESULTS

    def __enter__(self) -> JobFolder:
        try:
            if self.path.exists() and not self.path.is_dir():
                raise EvaluationError(
                    f"output_dir {str(self.path)!r} is a file; give a folder (it is created if missing)"
                )
            self.path.mkdir(parents=True, exist_ok=True)
            self._refuse_links()
            self._take_lock()
        except OSError as exc:
            raise EvaluationError(_unwritable(self.path, exc)) from None
        try:
            self._check_identity()
        except BaseException:
            self._release_lock()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._release_lock()

    def _take_lock(self) -> None:
        lock = FolderLock(self.path / LOCK)
        try:
            lock.take()
        except FolderLockedError as exc:
            raise EvaluationError(
                f"another evaluation ({exc}) is writing to {str(self.path)!r}; wait for it to finish, or give this "
                "job its own output_dir (overwrite=True does not take a folder from a running job)"
            ) from None
        self._lock = lock

    def _refuse_links(self) -> None:
        """Refuse a folder whose result files are symbolic links: the job would write wherever they point."""
        for name in (RESULTS, LOCK, JOB, SUMMARY, REPORT):
            target = self.path / name
            if target.is_symlink():
                raise EvaluationError(
                    f"{str(target)!r} is a symbolic link (to {os.readlink(target)!r}); an evaluation writes only "
                    "inside its output_dir, so remove the link or give another output_dir"
                )

    def _release_lock(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def _check_identity(self) -> None:
        job_path = self.path / JOB
        if self.overwrite:
            for name in (RESULTS, SUMMARY, REPORT, JOB):
                (self.path / name).unlink(missing_ok=True)
        if job_path.exists():
            try:
                recorded = json.loads(job_path.read_text(encoding="utf-8")).get("identity")
            except ValueError:
                recorded = None
            if recorded != json.loads(json.dumps(self.identity, default=str)):
                differs = _differences(recorded, self.identity)
                raise EvaluationError(
                    f"{str(self.path)!r} holds the results of another evaluation job (it differs in: {differs}). "
                    "Give this job another output_dir, or pass overwrite=True (--overwrite) to delete those results "
                    "and start over."
                )
        elif self.results_path.exists() and self.results_path.stat().st_size:
            raise EvaluationError(
                f"{str(self.path)!r} has a results.jsonl but no job.json, so it cannot be resumed safely; give another "
                "output_dir, or pass overwrite=True (--overwrite) to start over"
            )
        elif not self.overwrite and self._foreign():
            names = ", ".join(sorted(self._foreign())[:5])
            raise EvaluationError(
                f"{str(self.path)!r} already holds files this job did not write ({names}); a job writes "
                f"{RESULTS}, {SUMMARY} and {REPORT} there and would replace them. Give an empty or new output_dir, "
                "or pass overwrite=True (--overwrite) to write there anyway"
            )
        else:
            _write_atomic(job_path, json.dumps({"identity": self.identity}, indent=2, default=str) + "\n")

    def _foreign(self) -> list[str]:
        """What a new job finds in its folder that it did not put there (its lock and an empty results file aside)."""
        found = []
        for entry in self.path.iterdir():
            if entry.name == LOCK or (entry.name == RESULTS and entry.is_file() and not entry.stat().st_size):
                continue
            found.append(entry.name)
        return found

    def recover(self, on_row: Callable[[dict[str, Any]], None]) -> int:
        """Read back the rows already written (each passed to ``on_row``), cut off a torn last line; the count."""
        path = self.results_path
        if not path.exists():
            return 0
        count = good = 0
        with open(path, "rb") as handle:
            while True:
                line = handle.readline()
                if not line.endswith(b"\n"):
                    break  # end of file, or a line a kill cut short
                try:
                    row = json.loads(line)
                except ValueError:
                    if handle.read(1):
                        raise EvaluationError(
                            f"line {count + 1} of {str(path)!r} is not valid JSON, and it is not the last line, so the "
                            "file was not written by one job alone; move it away, or pass overwrite=True"
                        ) from None
                    break
                expected = divmod(count, self.n)
                if not isinstance(row, dict) or (row.get("index"), row.get("sample")) != expected:
                    raise EvaluationError(
                        f"line {count + 1} of {str(path)!r} should hold prompt {expected[0]}, sample {expected[1]}; "
                        "the file was edited or written by another job. Move it away, or pass overwrite=True"
                    )
                on_row(row)
                count += 1
                good += len(line)
        size = path.stat().st_size
        if good < size:
            logger.warning(
                "results.jsonl: cut off %d bytes of an unfinished last line (written when stopped)", size - good
            )
            with open(path, "r+b") as handle:
                handle.truncate(good)
        return count

    def append(self, rows: list[dict[str, Any]]) -> None:
        """Append rows and hand them to the operating system (they survive the process being killed)."""
        if self._file is None:
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
            try:
                fd = os.open(self.results_path, flags, 0o644)
            except OSError as exc:
                raise EvaluationError(_unwritable(self.results_path, exc)) from None
            self._file = open(fd, "a", encoding="utf-8", newline="\n")  # noqa: SIM115
        self._file.write("".join(map(to_json_line, rows)))
        self._file.flush()

    def write_text(self, name: str, text: str) -> Path:
        """Write ``name`` in the folder atomically (a reader never sees half a file)."""
        target = self.path / name
        _write_atomic(target, text)
        return target


def _unwritable(path: Path, exc: OSError) -> str:
    """What to do when the output folder cannot be written: a read-only place, a name too long, a link."""
    why = exc.strerror or type(exc).__name__
    return (
        f"cannot write the evaluation's output at {str(path)[:300]!r}: {why}. Give an output_dir (--output-dir) "
        "in a folder you can write to, with a shorter name"
    )


def _write_atomic(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    # a lone surrogate is written as its escape (\ud800), which JSON reads back as the same string
    temporary.write_text(text, encoding="utf-8", errors="backslashreplace")
    os.replace(temporary, path)


def _differences(recorded: Any, identity: dict[str, Any]) -> str:
    if not isinstance(recorded, dict):
        return "job.json is unreadable"
    current = json.loads(json.dumps(identity, default=str))
    keys = [k for k in dict.fromkeys([*recorded, *current]) if recorded.get(k) != current.get(k)]
    return "; ".join(f"{k}: {recorded.get(k)!r} before, {current.get(k)!r} now" for k in keys) or "unknown"
