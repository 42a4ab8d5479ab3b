"""``summary.json`` and the report's samples, built one results row at a time.

:class:`SummaryBuilder` takes the rows of ``results.jsonl`` in order (from a
resumed file first, then as they are written) and keeps only running
statistics (:mod:`rewardsmith.evaluation.stats`), so its memory does not grow
with the number of rows.

What counts as what, per reward:

* ``rows``: rows the reward was asked about; ``scored``: rows with a score;
* ``none_rate``: share of rows where the reward said "not applicable"
  (``None`` without an error); ``error_rate``: share of rows whose scoring
  failed, or that had no completion to score because generation failed;
* ``mean``, ``std``, ``min``, ``max`` and the histogram are over scored rows;
* ``pass@k`` (with several samples per prompt): a sample passes when its
  score is at least ``pass_threshold`` (one number, or one per reward by
  name; default: the top of the reward's ``score_range``, else 1.0, stated
  as ``pass_threshold``); each prompt counts with the samples that were
  scored, and k larger than that is skipped for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.core.inputs import completion_text, prompt_text
from rewardsmith.evaluation.stats import Extremes, Histogram, PassAtK, RunningStats
from rewardsmith.evaluation.trajectory_view import reward_notes, turn_text

__all__ = ["SummaryBuilder", "check_pass_threshold"]

PROMPT_CHARS = 1500
COMPLETION_CHARS = 3000
REASON_CHARS = 600
SAMPLES_KEPT = 5


@dataclass
class _RewardStats:
    n: int
    score_range: tuple[float, float] | None
    threshold: float | None = None
    with_histogram: bool = True
    rows: int = 0
    none: int = 0
    errors: int = 0
    scores: RunningStats = field(default_factory=RunningStats)
    passes: PassAtK = field(init=False)
    histogram: Histogram | None = field(init=False)

    def __post_init__(self) -> None:
        self.passes = PassAtK(self.n)
        self.histogram = Histogram(self.score_range) if self.with_histogram else None

    def add(self, score: float | None, error: Any) -> None:
        self.rows += 1
        if error is not None:
            self.errors += 1
        elif score is None:
            self.none += 1
        if score is not None:
            self.scores.add(score)
            if self.histogram is not None:
                self.histogram.add(score)

    def as_dict(self) -> dict[str, Any]:
        rows = self.rows or 1
        out: dict[str, Any] = {"rows": self.rows, "scored": self.scores.count, **self.scores.as_dict()}
        out["none_rate"] = self.none / rows
        out["error_rate"] = self.errors / rows
        if self.threshold is not None:
            out["pass_threshold"] = self.threshold
        if self.n > 1:
            out["pass_at_k"] = self.passes.as_dict()
        if self.histogram is not None:
            out["histogram"] = self.histogram.as_dict()
        return out


class SummaryBuilder:
    """Running statistics of an evaluation: per reward, per task, of generation; and samples for the report.

    >>> builder = SummaryBuilder({"exact": (0.0, 1.0)}, n=2)
    >>> for i, s, score in [(0, 0, 1.0), (0, 1, 0.0), (1, 0, 0.0), (1, 1, 0.0)]:
    ...     builder.add({"index": i, "sample": s, "prompt": "p", "completion": "c", "columns": {},
    ...                  "rewards": {"exact": {"score": score, "reason": "", "metrics": {}, "error": None}}})
    >>> summary = builder.summary()
    >>> summary["rows"], summary["rewards"]["exact"]["mean"], summary["rewards"]["exact"]["pass_at_k"]
    (4, 0.25, {'prompts': 2, 'pass@1': 0.25, 'pass@2': 0.5})
    """

    def __init__(
        self,
        score_ranges: dict[str, tuple[float, float] | None],
        n: int = 1,
        pass_threshold: float | dict[str, float] | None = None,
        task_column: str = "task",
    ) -> None:
        self.n = n
        self.task_column = task_column
        given = pass_threshold if isinstance(pass_threshold, dict) else {}
        self.thresholds = {
            name: float(
                given[name]
                if name in given
                else pass_threshold
                if isinstance(pass_threshold, (int, float))
                else (rng[1] if rng else 1.0)
            )
            for name, rng in score_ranges.items()
        }
        self.rewards = {name: _RewardStats(n, rng, self.thresholds[name]) for name, rng in score_ranges.items()}
        self.tasks: dict[str, dict[str, _RewardStats]] = {}
        self.extremes = {name: Extremes(SAMPLES_KEPT) for name in score_ranges}
        self.errors: dict[str, list[dict[str, Any]]] = {name: [] for name in score_ranges}
        self.rows = 0
        self.prompts = 0
        self.generation = _GenerationStats()
        self._group: tuple[int, str | None] | None = None
        self._group_counts: dict[str, list[int]] = {}

    def add(self, row: dict[str, Any]) -> None:
        """Take one results row into account (rows must come in ``(index, sample)`` order)."""
        index = row["index"]
        task = row.get("columns", {}).get(self.task_column)
        task = None if task is None else str(task)
        if self._group is None or self._group[0] != index:
            self._close_group()
            self._group = (index, task)
            self.prompts += 1
        self.rows += 1
        if row.get("generation") is not None:
            self.generation.add(row["generation"])
        for name, entry in row["rewards"].items():
            stats = self.rewards.get(name)
            if stats is None:
                continue
            score, error = entry.get("score"), entry.get("error")
            stats.add(score, error)
            if task is not None:
                per_task = self.tasks.setdefault(task, {})
                if name not in per_task:
                    per_task[name] = _RewardStats(self.n, None, self.thresholds[name], with_histogram=False)
                per_task[name].add(score, error)
            counts = self._group_counts.setdefault(name, [0, 0])
            if score is not None:
                counts[0] += 1
                counts[1] += score >= self.thresholds[name]
                position = index * self.n + row["sample"]
                self.extremes[name].add(score, position, lambda entry=entry: _sample(row, entry))
            elif error is not None and len(self.errors[name]) < SAMPLES_KEPT:
                self.errors[name].append(_sample(row, entry))

    def _close_group(self) -> None:
        if self._group is None or self.n < 2:
            self._group_counts = {}
            return
        _, task = self._group
        for name, (scored, passed) in self._group_counts.items():
            self.rewards[name].passes.add_group(scored, passed)
            if task is not None:
                self.tasks[task][name].passes.add_group(scored, passed)
        self._group_counts = {}

    def summary(self) -> dict[str, Any]:
        """The statistics, as ``summary.json`` holds them; call it once every row is added.

        A prompt whose samples are not all there (a stopped job) counts in
        pass@k with the samples it has.
        """
        self._close_group()
        self._group = None
        out: dict[str, Any] = {
            "rows": self.rows,
            "prompts": self.prompts,
            "samples_per_prompt": self.n,
            "rewards": {name: stats.as_dict() for name, stats in self.rewards.items()},
        }
        if self.tasks:
            out["tasks"] = {
                task: {"rows": max(s.rows for s in per.values()), "rewards": {k: s.as_dict() for k, s in per.items()}}
                for task, per in sorted(self.tasks.items())
            }
        if self.generation.rows:
            out["generation"] = self.generation.as_dict()
        return out

    def samples(self) -> dict[str, dict[str, list[dict[str, Any]]]]:
        """Per reward: the lowest- and highest-scoring samples and the first failures, for the report."""
        return {
            name: {"lowest": ext.lowest(), "highest": ext.highest(), "errors": list(self.errors[name])}
            for name, ext in self.extremes.items()
        }


@dataclass
class _GenerationStats:
    rows: int = 0
    errors: int = 0
    truncated: int = 0
    latency: RunningStats = field(default_factory=RunningStats)
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, info: dict[str, Any]) -> None:
        self.rows += 1
        if info.get("error") is not None:
            self.errors += 1
            return
        if info.get("finish_reason") == "length":
            self.truncated += 1
        if info.get("latency_s") is not None:
            self.latency.add(info["latency_s"])
        self.prompt_tokens += info.get("prompt_tokens") or 0
        self.completion_tokens += info.get("completion_tokens") or 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "samples": self.rows,
            "error_rate": self.errors / self.rows,
            "truncated_rate": self.truncated / self.rows,
            "latency_s": self.latency.as_dict(),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_pass_threshold(value: Any, names: list[str] | None) -> str | None:
    """The problem with a ``pass_threshold`` setting (a number, or reward name to number), or ``None``.

    >>> check_pass_threshold({"brevity": 0.5}, ["brevity"]) is None
    True
    >>> check_pass_threshold({"brevty": 0.5}, ["brevity"])
    "pass_threshold names 'brevty', which is not a reward of this evaluation; the rewards are: brevity"
    """
    if value is None or _is_number(value):
        return None
    if not isinstance(value, dict):
        return (
            f"pass_threshold must be a finite number, or a mapping of reward name to number (brevity: 0.5), "
            f"got {value!r}"
        )
    for name, threshold in value.items():
        if not _is_number(threshold):
            return f"pass_threshold for {name!r} must be a finite number, got {threshold!r}"
        if names is not None and name not in names:
            return (
                f"pass_threshold names {name!r}, which is not a reward of this evaluation; "
                f"the rewards are: {', '.join(names)}"
            )
    return None


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f" … [{len(text) - limit} more characters]"


def _sample(row: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    turns = turn_text(row.get("completion"))
    extra = (
        {} if turns is None else {"turns": _cut(turns, 2 * COMPLETION_CHARS), "rewards": reward_notes(row["rewards"])}
    )
    return extra | {
        "index": row["index"],
        "sample": row["sample"],
        "score": entry.get("score"),
        "reason": _cut(str(entry.get("reason") or ""), REASON_CHARS),
        "error": None if entry.get("error") is None else _cut(str(entry["error"]), REASON_CHARS),
        "prompt": _cut(prompt_text(row.get("prompt")), PROMPT_CHARS),
        "completion": _cut(completion_text(row.get("completion")), COMPLETION_CHARS),
    }
