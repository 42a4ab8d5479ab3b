"""Everything an evaluation job checks before it writes anything, every problem reported at once.

:func:`check_job` resolves the rewards, the generation settings and where the
completions come from, prepares the data (streamed) and checks its first row
against the rewards. Problems are collected in a
:class:`~rewardsmith.core.problems.ConfigProblems` (the one training configs
use), so a job with several mistakes is reported in one message, and a job
that fails here leaves its output folder untouched: the corrected job can
then run into the same folder without ``overwrite``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.compose.config import rewards_with_problems
from rewardsmith.core.errors import DatasetError
from rewardsmith.core.problems import ConfigProblems
from rewardsmith.core.reward import Reward
from rewardsmith.data.columns import check_columns, optional_column_warnings
from rewardsmith.data.loading import describe_source
from rewardsmith.evaluation.backends import make_generator
from rewardsmith.evaluation.generation import GenerationConfig

__all__ = ["MAX_BATCH_SIZE", "CheckedJob", "check_job"]

#: The most prompts in one batch (a batch is held in memory: generated, scored and written together).
MAX_BATCH_SIZE = 1_000_000


@dataclass
class CheckedJob:
    """An evaluation job that passed its checks: what to run, and what it is (for ``job.json``)."""

    rewards: list[Reward]
    generation: GenerationConfig | None
    completions_column: str | None
    prepared: Any
    columns: list[str]
    description: dict[str, Any]
    identity: dict[str, Any]
    generator: Any = None
    warnings: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        """Samples per prompt."""
        return self.generation.n if self.generation is not None else 1


def check_job(
    dataset: Any,
    rewards: Any,
    problems: ConfigProblems,
    *,
    split: str = "test",
    completions_column: str | None = None,
    generation: GenerationConfig | dict[str, Any] | None = None,
    batch_size: int = 64,
    **dataset_options: Any,
) -> CheckedJob | None:
    """Check an evaluation job (the arguments of :func:`~rewardsmith.evaluation.evaluate`); ``None`` on problems.

    Every problem is recorded in ``problems``: unknown rewards (each), bad
    generation settings, completions from both or neither of a column and a
    model, a bad ``batch_size``, data that does not load, and, on the first
    prepared row, the completions column and the columns the rewards need. A
    ``dataset`` or ``rewards`` of ``None`` skips the checks that need it.
    Nothing is written.

    >>> problems = ConfigProblems("the evaluation", "nothing was written")
    >>> rows = [{"question": "2+3?", "answer": "#### 5", "reply": "5"}]
    >>> check_job(rows, ["gsm8k_acuracy", "countdown"], problems, converter="gsm8k", batch_size=0) is None
    True
    >>> for error in problems.errors:
    ...     print(str(error).splitlines()[0][:60])
    rewards[0]: unknown reward 'gsm8k_acuracy'. Did you mean: gs
    say where the completions come from: completions_column= (a
    batch_size must be a whole number from 1 to 1,000,000, got 0
    1 reward needs columns the dataset does not have:
    """
    made, weights = rewards_with_problems(rewards, None, problems) if rewards is not None else ([], None)
    gen = _checked_settings(problems, completions_column, generation, batch_size)
    prepared = first = None
    if dataset is not None:
        with problems.check():
            from rewardsmith.data.prepare import prepare_dataset

            prepared = prepare_dataset(dataset, split, streaming=True, **dataset_options)
            first = _first_row(prepared)
    columns: list[str] = []
    if first is not None:
        columns = [c for c in first if c not in ("prompt", completions_column)]
        with problems.check():
            _check_completions_column(first, completions_column)
        if made:
            with problems.check():
                check_columns(columns, made)
    if problems:
        return None
    description = _describe_job(dataset, split, made, completions_column, gen)
    if weights and any(w != 1.0 for w in weights):  # as trained with: stated, each reward still scored on its own
        description["weights"] = {r.name: w for r, w in zip(made, weights)}
    identity = _job_identity(description, dataset_options, made, gen)
    warnings = optional_column_warnings(columns, made)
    checked = CheckedJob(made, gen, completions_column, prepared, columns, description, identity, warnings=warnings)
    with problems.check():
        checked.generator = make_generator(gen) if gen is not None else None
    return None if problems else checked


def _job_identity(
    description: dict[str, Any], dataset_options: dict[str, Any], made: list[Reward], gen: GenerationConfig | None
) -> dict[str, Any]:
    """What makes two jobs the same job (a folder's results are resumed only for the same identity)."""
    return {
        **description,
        "dataset_options": _plain(dataset_options),
        "rewards": {r.name: _plain(r.settings) for r in made},
        "generation": gen.identity() if gen is not None else None,
    }


def _checked_settings(
    problems: ConfigProblems,
    completions_column: str | None,
    generation: GenerationConfig | dict[str, Any] | None,
    batch_size: Any,
) -> GenerationConfig | None:
    """The generation settings (``None`` without a model); where completions come from and ``batch_size`` checked."""
    gen = None
    if generation is not None:
        with problems.check():
            gen = GenerationConfig.of(generation)
    if (completions_column is None) == (generation is None):
        problems.add(
            "say where the completions come from: completions_column= (score a column of the data) or generation= "
            "(generate them with a model), not both"
            if generation is not None
            else "say where the completions come from: completions_column= (a column of the data, e.g. 'completion') "
            "or generation={'model': ..., 'base_url': ...} (generate them)"
        )
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or not 1 <= batch_size <= MAX_BATCH_SIZE:
        problems.add(f"batch_size must be a whole number from 1 to {MAX_BATCH_SIZE:,}, got {batch_size!r}")
    return gen


def _first_row(prepared: Any) -> dict[str, Any]:
    first = next(iter(prepared.take(1)), None)
    if first is None:
        raise DatasetError("the dataset has no rows to evaluate")
    return dict(first)


def _check_completions_column(first: dict[str, Any], column: str | None) -> None:
    if column is not None and column not in first:
        raise DatasetError(
            f"completions_column={column!r} is not a column of the prepared data; its columns are "
            f"{', '.join(first)}. Name the column that holds the completions (the chat converter writes 'completion')."
        )


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
