"""``evaluate``: score a dataset's completions, or generate completions and score them, resumably.

The job, in order:

1. check everything before anything is written
   (:func:`~rewardsmith.evaluation.validate.check_job`): build the rewards
   (anything ``rewards_from_config`` takes), the generation settings, prepare
   the data and check on its first row that every column the rewards need is
   there; every problem is reported at once, and a job that fails here leaves
   no file behind;
2. read the rows already in ``results.jsonl`` back into the running statistics
   (cutting off a line a kill left unfinished), and skip that many rows;
3. stream the rest of the data (``prepare_dataset(..., streaming=True)``) in
   batches of ``batch_size`` prompts: take or generate the completions, score
   them with every reward (``reward.explain``), append the rows to
   ``results.jsonl`` and update the statistics;
4. write ``summary.json`` and ``report.html``, also when stopped by Ctrl-C or an
   error, so that what was done can be read at once (marked partial).

Memory stays flat: the data is streamed, only one batch is held, and the
statistics are running ones (:mod:`rewardsmith.evaluation.summary`).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardsmith.core.extras import require_extra
from rewardsmith.core.problems import ConfigProblems
from rewardsmith.core.reward import Reward
from rewardsmith.evaluation.engines import Shard, ShardScores, eval_engine
from rewardsmith.evaluation.failures import FailureTracker, check_max_error_rate, failed_rewards
from rewardsmith.evaluation.generation import Generated, GenerationConfig, SampleRequest
from rewardsmith.evaluation.report import render_report
from rewardsmith.evaluation.results import REPORT, SUMMARY, JobFolder, iter_results
from rewardsmith.evaluation.summary import SummaryBuilder, check_pass_threshold
from rewardsmith.evaluation.validate import CheckedJob, check_job
from rewardsmith.reports.progress import Progress

__all__ = ["EvalReport", "evaluate"]

logger = logging.getLogger("rewardsmith")


@dataclass
class EvalReport:
    """What an evaluation job produced: its folder, ``summary.json`` as a dict, and whether it ran to the end."""

    output_dir: Path
    summary: dict[str, Any]
    complete: bool

    @property
    def results_path(self) -> Path:
        """``results.jsonl``: one row per (prompt, sample)."""
        return self.output_dir / "results.jsonl"

    @property
    def summary_path(self) -> Path:
        """``summary.json``."""
        return self.output_dir / SUMMARY

    @property
    def report_path(self) -> Path:
        """``report.html``, self-contained."""
        return self.output_dir / REPORT

    def mean(self, reward: str) -> float | None:
        """The mean score of ``reward`` over the rows it scored."""
        return self.summary["rewards"][reward]["mean"]

    @property
    def failed(self) -> dict[str, dict[str, Any]]:
        """The rewards that failed on every row (or above ``max_error_rate``): rate, first error, traceback."""
        return self.summary.get("failed", {})

    def rows(self) -> Iterator[dict[str, Any]]:
        """The rows of ``results.jsonl``, read one at a time."""
        return iter(iter_results(self.results_path))


def evaluate(
    dataset: Any,
    rewards: Any,
    output_dir: str | os.PathLike[str],
    *,
    split: str = "test",
    completions_column: str | None = None,
    generation: GenerationConfig | dict[str, Any] | None = None,
    batch_size: int = 64,
    pass_threshold: float | dict[str, float] | None = None,
    max_error_rate: float | None = None,
    overwrite: bool = False,
    progress: bool = True,
    on_warning: Callable[[str], None] | None = None,
    engine: str = "local",
    **dataset_options: Any,
) -> EvalReport:
    """Score a dataset with rewards, from a column of completions or generated ones; resumable.

    Args:
        dataset: what :func:`~rewardsmith.data.prepare_dataset` loads (a Hub name, a local file or
            folder, rows, a ``Dataset``, ``fireworks:ACCOUNT/ID``); ``split`` and ``dataset_options``
            (``config``, ``converter``, ``system_prompt``, ``max_samples``, converter settings, ...) are
            passed to it.
        rewards: anything :func:`~rewardsmith.compose.rewards_from_config` takes: ``"a,b"``, a list of
            names, config entries or ``Reward`` objects.
        output_dir: where ``results.jsonl``, ``summary.json`` and ``report.html`` go. Running the same
            job again continues where it stopped; a different job there is an error (``overwrite=True``
            starts over).
        completions_column: score the completions in this column, or
        generation: generate them (a :class:`GenerationConfig` or a dict of its settings).
        batch_size: prompts per batch (each batch is generated, scored and written together).
        pass_threshold: the score a sample needs to pass, for pass@k: one number for every reward, or a
            mapping of reward name to number (default: the top of the reward's ``score_range``, else 1.0).
            ``summary.json`` states the threshold of each reward.
        max_error_rate: the share of rows a reward may fail on before the job counts as failed
            (default: only a reward that failed on every row). Failed rewards are listed, with the
            first error and its traceback, under ``summary["failed"]`` (:attr:`EvalReport.failed`).
        progress: show rows done, rows/s and the time left on standard error.
        on_warning: called with each warning found before the job starts (an optional column a reward
            reads that the data lacks); by default they are logged.
        engine: where the batches are scored: ``"local"`` (this process) or ``"ray"`` (Ray tasks, several
            batches at a time; ``rewardsmith[ray]``). The files written are the same; see
            :mod:`rewardsmith.evaluation.engines`.

    Every problem found before the job starts (unknown rewards, bad settings, data that does not load,
    columns the rewards need) is raised at once, and nothing is written then.

    Ctrl-C stops the job after writing what was done (``KeyboardInterrupt`` is raised again).

    >>> import tempfile
    >>> rows = [{"question": "2+3?", "answer": "#### 5", "reply": "It is 5."},
    ...         {"question": "2+2?", "answer": "#### 4", "reply": "It is 5."}]
    >>> report = evaluate(rows, "gsm8k_accuracy", tempfile.mkdtemp(), converter="gsm8k",
    ...                   completions_column="reply", progress=False)
    >>> report.mean("gsm8k_accuracy"), report.complete, report.summary["rows"]
    (0.5, True, 2)
    """
    require_extra("eval", "an evaluation job")
    checked, scoring = _checked_job(
        dataset,
        rewards,
        split=split,
        completions_column=completions_column,
        generation=generation,
        batch_size=batch_size,
        pass_threshold=pass_threshold,
        max_error_rate=max_error_rate,
        engine=engine,
        **dataset_options,
    )
    for warning in checked.warnings:
        (on_warning or logger.warning)(warning)
    n = checked.n
    runner = _BatchRunner(checked.rewards, checked.columns, completions_column, checked.generator, n)
    complete = False
    try:
        with JobFolder(output_dir, checked.identity, n, overwrite) as folder:
            builder, tracker, done = _recovered(folder, checked, pass_threshold)
            prompts = _count_prompts(dataset, dataset_options)
            bar = Progress(None if prompts is None else prompts * n, done, enabled=progress)
            try:
                scored = _scored_rows(scoring, checked, runner, _shards(checked, runner, done, batch_size))
                _append_all(scored, folder, builder, tracker, bar)
                complete = True
            finally:
                bar.finish(complete)
                summary = _write_summary(folder, builder, tracker, checked, complete, max_error_rate)
    finally:
        runner.close()
    return EvalReport(Path(output_dir), summary, complete)


_STOPPED = "evaluation stopped: %d rows are kept in %s; run the same job again to continue"


def _append_all(
    scored: Iterator[list[dict[str, Any]]],
    folder: JobFolder,
    builder: SummaryBuilder,
    tracker: FailureTracker,
    bar: Progress,
) -> None:
    """Append each scored batch to ``results.jsonl`` and to the statistics; on Ctrl-C, say what is kept."""
    try:
        for out in scored:
            with _sigint_deferred():  # the file and the statistics move together
                folder.append(out)
                for row in out:
                    builder.add(row)
                    tracker.add(row)
            bar.advance(len(out))
    except KeyboardInterrupt:
        logger.warning(_STOPPED, builder.rows, folder.results_path)
        raise


def _recovered(
    folder: JobFolder, checked: CheckedJob, pass_threshold: float | dict[str, float] | None
) -> tuple[SummaryBuilder, FailureTracker, int]:
    """The statistics and failures of the rows an earlier run of the job wrote, and how many rows that is."""
    builder = SummaryBuilder({r.name: r.score_range for r in checked.rewards}, checked.n, pass_threshold)
    tracker = FailureTracker()
    done = folder.recover(lambda row: (builder.add(row), tracker.add(row)))
    return builder, tracker, done


def _scored_rows(scoring: Any, checked: CheckedJob, runner: _BatchRunner, shards: Iterator[Any]) -> Iterator[list]:
    """The results rows of each shard, as the engine scores them."""
    for shard, scores in scoring.score_shards(checked.rewards, shards):
        yield runner.rows(shard, scores)


def _checked_job(
    dataset: Any,
    rewards: Any,
    *,
    pass_threshold: float | dict[str, float] | None,
    max_error_rate: float | None,
    engine: str,
    **job: Any,
) -> tuple[CheckedJob, Any]:
    """The job checked whole before anything is written (every problem raised at once), and its scoring engine."""
    problems = ConfigProblems("the evaluation", "nothing was written")
    checked = check_job(dataset, rewards, problems, **job)
    names = [r.name for r in checked.rewards] if checked is not None else None
    for problem in (check_pass_threshold(pass_threshold, names), check_max_error_rate(max_error_rate)):
        if problem:
            problems.add(problem)
    scoring = None
    with problems.check():
        scoring = eval_engine(engine)
        scoring.check(checked.rewards if checked is not None else [])
    problems.raise_if_any()
    assert checked is not None and scoring is not None
    return checked, scoring


def _shards(checked: CheckedJob, runner: _BatchRunner, done: int, batch_size: int) -> Iterator[Any]:
    """The batches still to score, as shards: from the first prompt not done, and its first sample not done."""
    start, first_sample = divmod(done, checked.n)
    rows = itertools.islice(enumerate(checked.prepared), start, None)
    batches = iter(lambda: list(itertools.islice(rows, batch_size)), [])
    return (runner.shard(batch, first_sample if k == 0 else 0) for k, batch in enumerate(batches))


def _write_summary(
    folder: JobFolder,
    builder: SummaryBuilder,
    tracker: FailureTracker,
    checked: CheckedJob,
    complete: bool,
    max_error_rate: float | None,
) -> dict[str, Any]:
    """Write ``summary.json`` and the report for what is done so far (also after Ctrl-C); the summary."""
    summary = {**builder.summary(), "complete": complete, "job": checked.description}
    failed = failed_rewards(summary, checked.rewards, tracker, max_error_rate)
    if failed:
        summary["failed"] = failed
    folder.write_text(SUMMARY, json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n")
    folder.write_text(REPORT, render_report(summary, builder.samples(), checked.description))
    return summary


class _BatchRunner:
    """Completions for one batch (from the column or the generator), scored by every reward, as results rows."""

    def __init__(self, rewards: list[Reward], columns: list[str], column: str | None, generator: Any, n: int) -> None:
        self.rewards = rewards
        self.columns = columns
        self.column = column
        self.generator = generator
        self.n = n

    def shard(self, batch: list[tuple[int, dict[str, Any]]], first_sample: int) -> Shard:
        """The batch's samples with their completions (taken or generated), as the scoring work of one shard."""
        samples = [
            (index, s, row)
            for k, (index, row) in enumerate(batch)
            for s in range(first_sample if k == 0 else 0, self.n)
        ]
        if self.generator is not None:
            made = self.generator.generate([SampleRequest(index, s, row["prompt"]) for index, s, row in samples])
        else:
            made = [_from_column(row.get(self.column), self.column) for _, _, row in samples]
        scored = [i for i, g in enumerate(made) if g.completion is not None]
        prompts = [samples[i][2]["prompt"] for i in scored]
        completions = [made[i].completion for i in scored]
        columns = {c: [samples[i][2].get(c) for i in scored] for c in self.columns}
        return Shard(prompts, completions, columns, context=(samples, made, scored))

    def rows(self, shard: Shard, scores: ShardScores) -> list[dict[str, Any]]:
        """The results rows of a scored shard, in ``(index, sample)`` order."""
        samples, made, scored = shard.context
        results, score_s = scores.results, scores.seconds_per_sample
        position = {i: k for k, i in enumerate(scored)}
        out = []
        for i, (index, s, row) in enumerate(samples):
            generated = made[i]
            entries = {}
            for reward in self.rewards:
                if i in position:
                    r = results[reward.name][position[i]]
                    entries[reward.name] = {
                        "score": r.score,
                        "reason": r.reason,
                        "metrics": r.metrics,
                        "error": r.error,
                    }
                else:
                    missing = f"not scored: {generated.error}"
                    entries[reward.name] = {"score": None, "reason": "", "metrics": {}, "error": missing}
            out.append(
                {
                    "index": index,
                    "sample": s,
                    "prompt": row["prompt"],
                    "completion": generated.completion,
                    "columns": {c: row.get(c) for c in self.columns},
                    "rewards": entries,
                    "generation": generated.info() if self.generator is not None else None,
                    "score_s": score_s if i in position else None,
                }
            )
        return out

    def close(self) -> None:
        if self.generator is not None:
            self.generator.close()
        for reward in self.rewards:
            reward.close()


def _from_column(value: Any, column: str | None) -> Generated:
    if value is None:
        return Generated(None, error=f"the column {column!r} holds no completion for this row")
    return Generated(value)


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Hold Ctrl-C until the block is done (on the main thread; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[Any] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def _count_prompts(source: Any, options: dict[str, Any]) -> int | None:
    """How many prompts the job has, when that is cheap to know (for the time left); else ``None``."""
    count: int | None = None
    if isinstance(source, list):
        count = len(source)
    elif isinstance(source, (str, os.PathLike)) and Path(source).is_file():
        path = Path(source)
        if path.suffix.lower() == ".jsonl":
            with open(path, "rb") as handle:
                count = sum(1 for line in handle if line.strip())
        elif path.suffix.lower() == ".parquet":
            import pyarrow.parquet as pq

            count = pq.ParquetFile(path).metadata.num_rows
    elif hasattr(source, "num_rows") and isinstance(source.num_rows, int):
        count = source.num_rows
    cap = options.get("max_samples")
    if isinstance(cap, int):
        count = cap if count is None else min(count, cap)
    return count
