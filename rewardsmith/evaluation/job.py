"""``evaluate``: score a dataset's completions, or generate completions and score them, resumably.

The job, in order:

1. build the rewards (anything ``rewards_from_config`` takes) and check, on the
   first prepared row, that every column they need is there, before any
   completion is generated;
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
import hashlib
import itertools
import json
import logging
import os
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardsmith.compose.config import rewards_from_config
from rewardsmith.core.errors import DatasetError, RewardConfigError
from rewardsmith.core.extras import require_extra
from rewardsmith.core.reward import Reward
from rewardsmith.data.columns import check_columns
from rewardsmith.data.loading import describe_source
from rewardsmith.data.prepare import prepare_dataset
from rewardsmith.evaluation.backends import make_generator
from rewardsmith.evaluation.generation import Generated, GenerationConfig, SampleRequest
from rewardsmith.evaluation.progress import Progress
from rewardsmith.evaluation.report import render_report
from rewardsmith.evaluation.results import REPORT, SUMMARY, JobFolder, iter_results
from rewardsmith.evaluation.summary import SummaryBuilder

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
    pass_threshold: float | None = None,
    overwrite: bool = False,
    progress: bool = True,
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
        pass_threshold: the score a sample needs to pass, for pass@k (default: the top of the reward's
            ``score_range``, else 1.0).
        progress: show rows done, rows/s and the time left on standard error.

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
    made, _ = rewards_from_config(rewards)
    gen = GenerationConfig.of(generation) if generation is not None else None
    if (completions_column is None) == (gen is None):
        raise RewardConfigError(
            "say where the completions come from: completions_column= (score a column of the data) or generation= "
            "(generate them with a model), not both"
            if gen is not None
            else "say where the completions come from: completions_column= (a column of the data, e.g. 'completion') "
            "or generation={'model': ..., 'base_url': ...} (generate them)"
        )
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise RewardConfigError(f"batch_size must be a whole number >= 1, got {batch_size!r}")
    n = gen.n if gen is not None else 1
    job = _describe_job(dataset, split, made, completions_column, gen)
    identity = {
        **job,
        "dataset_options": _plain(dataset_options),
        "rewards": {r.name: _plain(r.settings) for r in made},
        "generation": gen.identity() if gen is not None else None,
    }
    with JobFolder(output_dir, identity, n, overwrite) as folder:
        prepared = prepare_dataset(dataset, split, streaming=True, **dataset_options)
        columns = _check_first_row(prepared, made, completions_column)
        builder = SummaryBuilder({r.name: r.score_range for r in made}, n, pass_threshold)
        done = folder.recover(builder.add)
        prompts = _count_prompts(dataset, dataset_options)
        bar = Progress(None if prompts is None else prompts * n, done, enabled=progress)
        runner = _BatchRunner(made, columns, completions_column, make_generator(gen) if gen else None, n)
        complete = False
        try:
            start, first_sample = divmod(done, n)
            rows = itertools.islice(enumerate(prepared), start, None)
            for batch in iter(lambda: list(itertools.islice(rows, batch_size)), []):
                out = runner.run(batch, first_sample)
                first_sample = 0
                with _sigint_deferred():  # the file and the statistics move together
                    folder.append(out)
                    for row in out:
                        builder.add(row)
                bar.advance(len(out))
            complete = True
        except KeyboardInterrupt:
            logger.warning(
                "evaluation stopped: %d rows are kept in %s; run the same job again to continue",
                builder.rows,
                folder.results_path,
            )
            raise
        finally:
            bar.finish(complete)
            runner.close()
            summary = {**builder.summary(), "complete": complete, "job": job}
            folder.write_text(SUMMARY, json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n")
            folder.write_text(REPORT, render_report(summary, builder.samples(), job))
    return EvalReport(Path(output_dir), summary, complete)


class _BatchRunner:
    """Completions for one batch (from the column or the generator), scored by every reward, as results rows."""

    def __init__(self, rewards: list[Reward], columns: list[str], column: str | None, generator: Any, n: int) -> None:
        self.rewards = rewards
        self.columns = columns
        self.column = column
        self.generator = generator
        self.n = n

    def run(self, batch: list[tuple[int, dict[str, Any]]], first_sample: int) -> list[dict[str, Any]]:
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
        results: dict[str, list[Any]] = {}
        started = time.perf_counter()
        for reward in self.rewards:
            results[reward.name] = reward.explain(prompts=prompts, completions=completions, **columns) if scored else []
        score_s = (time.perf_counter() - started) / max(1, len(scored))
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


def _check_first_row(prepared: Any, rewards: list[Reward], column: str | None) -> list[str]:
    """The columns passed to the rewards; errors for a missing completions column or reward column."""
    first = next(iter(prepared.take(1)), None)
    if first is None:
        raise DatasetError("the dataset has no rows to evaluate")
    if column is not None and column not in first:
        raise DatasetError(
            f"completions_column={column!r} is not a column of the prepared data; its columns are "
            f"{', '.join(first)}. Name the column that holds the completions (the chat converter writes 'completion')."
        )
    columns = [c for c in first if c not in ("prompt", column)]
    check_columns(columns, rewards)
    return columns


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


def _describe_job(
    dataset: Any, split: str, rewards: list[Reward], column: str | None, gen: GenerationConfig | None
) -> dict[str, Any]:
    if isinstance(dataset, list):
        digest = hashlib.sha256(json.dumps(dataset, sort_keys=True, default=str).encode()).hexdigest()[:12]
        source = f"{describe_source(dataset)} (sha256 {digest})"
    elif isinstance(dataset, (str, os.PathLike)):
        source = os.fspath(dataset)
    else:
        source = f"{type(dataset).__name__} {getattr(dataset, '_fingerprint', '')}".strip()
    if gen is not None:
        completions = (
            f"generated by {gen.model} ({gen.resolved_backend}, n={gen.n}, temperature={gen.sampling_temperature:g}, "
            f"max_tokens={gen.max_tokens})"
        )
    else:
        completions = f"column {column!r}"
    return {"dataset": source, "split": split, "completions": completions, "reward_names": [r.name for r in rewards]}


def _plain(value: Any) -> Any:
    """``value`` as plain JSON data (functions by their qualified name, other objects by ``repr``)."""

    def default(obj: Any) -> Any:
        if callable(obj):
            return f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', type(obj).__name__)}"
        return repr(obj)

    return json.loads(json.dumps(value, sort_keys=True, default=default))
