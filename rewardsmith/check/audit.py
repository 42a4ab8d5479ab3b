"""The audit itself: score probes, reference solutions, labelled and sampled completions; sum up; find.

:func:`check` (what ``rewardsmith.check(...)`` and ``rewardsmith check``
run) takes a reward and a dataset, scores for each row its probes
(:mod:`rewardsmith.check.probes`), its reference solution, its labelled
completions and its sampled completions, one sample at a time under a hard
timeout (:mod:`rewardsmith.check.scoring`), then sums up each check
(:mod:`rewardsmith.check.findings`, :mod:`rewardsmith.check.checks`) and
writes ``check.json`` and ``check.html`` when given a folder. Ctrl-C stops it
after the row being scored; what was done is summed up and written (marked
partial), then ``KeyboardInterrupt`` is raised again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rewardsmith.check import checks, trajectory_probes
from rewardsmith.check.findings import Finding, Record, Thresholds, cost_summary, preview, probe_summary
from rewardsmith.check.not_run import families_not_run
from rewardsmith.check.probes import (
    CALIBRATION,
    FAMILIES,
    Probe,
    calibration,
    contentless,
    format_trials,
    make_probes,
)
from rewardsmith.check.rows import Format, RowContext, build_rows, candidate_formats, choose_formats, declared_columns
from rewardsmith.check.scoring import Sample, Scorer
from rewardsmith.check.trajectory_probes import FAMILY
from rewardsmith.check.turn_audit import audit_turn_return
from rewardsmith.core.errors import DatasetError, RewardConfigError
from rewardsmith.core.inputs import completion_text
from rewardsmith.core.reward import Reward
from rewardsmith.data.shapes import check_completion_shapes
from rewardsmith.reports.progress import Progress
from rewardsmith.rewards._text import visible_text

__all__ = ["CheckReport", "Sampler", "check"]

#: ``sample(prompts, n)``: ``n`` completions for each prompt (what a model would say), for the signal check.
Sampler = Callable[[list[Any], int], list[list[Any]]]
#: Columns taken for the reference solutions when none is named.
GOLD_COLUMNS = ("solution", "reference_solution", "gold", "gold_solution", "code")
#: Rows whose probes include the 1 MB ones (they test cost and hangs, not the row).
HUGE_ROWS = 3
#: Rows on which each candidate format is tried, to find the formats the reward rewards.
FORMAT_ROWS = 5


@dataclass
class CheckReport:
    """What an audit found: ``summary`` (the contents of ``check.json``) and ``findings``; ``passed`` if none."""

    reward: str
    summary: dict[str, Any]
    findings: list[Finding]
    complete: bool = True
    output_dir: Path | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Whether no check passed its threshold."""
        return not self.findings

    @property
    def json_path(self) -> Path | None:
        """``check.json``, when written."""
        return None if self.output_dir is None else self.output_dir / "check.json"

    @property
    def html_path(self) -> Path | None:
        """``check.html``, when written."""
        return None if self.output_dir is None else self.output_dir / "check.html"


def _resolve(spec: Any, what: str) -> Reward:
    import rewardsmith.compose  # noqa: F401 - registers the config entry kinds (gate:, combine:, ...)
    from rewardsmith.core.registry import get_reward

    try:
        return get_reward(spec)
    except RewardConfigError as exc:
        raise type(exc)(f"{what}: {exc}") from exc


def _load(dataset: Any, split: str, options: dict[str, Any]) -> list[dict[str, Any]]:
    from rewardsmith.data.prepare import prepare_dataset

    # Without a training config to say how prompts are shaped, follow the data: a text prompt stays text.
    prepared = prepare_dataset(dataset, split, **{"conversational": "auto", **options})
    rows = [dict(row) for row in prepared]
    if not rows:
        raise DatasetError("the dataset has no rows to check")
    return rows


def _gold_column(rows: list[dict[str, Any]], chosen: str | bool | None, taken: set[str]) -> str | None:
    if chosen is False or chosen == "":
        return None
    if isinstance(chosen, str):
        if chosen not in rows[0]:
            raise DatasetError(f"gold_column={chosen!r} is not a column of the prepared data ({', '.join(rows[0])})")
        return chosen
    return next((c for c in GOLD_COLUMNS if c in rows[0] and c not in taken), None)


class _Audit:
    """The state of one audit while it scores rows."""

    def __init__(self, reward: Reward, scorer: Scorer, against: Reward | None, against_scorer: Scorer | None) -> None:
        self.reward = reward
        self.scorer = scorer
        self.against = against
        self.against_scorer = against_scorer
        self.records: list[Record] = []
        self.other: list[Record] = []

    def score(self, ctx: RowContext, items: list[tuple[Probe, dict[str, Any]]]) -> None:
        samples = [Sample(ctx.prompt, probe.completion, ctx.columns) for probe, _ in items]
        for (probe, extra), outcome in zip(items, self.scorer.score(samples)):
            self.records.append(_record(ctx.index, probe, outcome, extra))
        if self.against_scorer is not None:
            for (probe, extra), outcome in zip(items, self.against_scorer.score(samples)):
                self.other.append(_record(ctx.index, probe, outcome, extra))


def _record(row: int, probe: Probe, outcome: Any, extra: dict[str, Any]) -> Record:
    text = completion_text(probe.completion)
    return Record(
        row, probe.family, probe.variant, probe.judged, outcome.score, outcome.reason[:500], outcome.failure,
        outcome.seconds, len(text), preview(text), extra, contentless(probe.family, probe.variant),
        not visible_text(text[:10_000]).strip() and len(text) <= 10_000,
    )  # fmt: skip


def _formats(scorer: Scorer, contexts: list[RowContext], candidates: list[Format]) -> list[Format]:
    """The candidate formats the reward scores best, tried on the first rows."""
    scores: dict[Format, list[float]] = {f: [] for f in candidates}
    for ctx in contexts[:FORMAT_ROWS]:
        trials = format_trials(ctx, candidates)
        outcomes = scorer.score([Sample(ctx.prompt, p.completion, ctx.columns) for p in trials])
        for f, outcome in zip(candidates, outcomes):
            if outcome.score is not None:
                scores[f].append(outcome.score)
    return choose_formats(candidates, scores)


def _in_fence(gold: str, main: Format) -> str:
    """A reference program as a completion: in the fenced block the reward reads, when it is bare code."""
    if main.kind != "fence" or "```" in gold:
        return gold
    return main.render("", gold.replace("\r\n", "\n")).lstrip()


def _row_items(
    ctx: RowContext,
    row: dict[str, Any],
    formats: tuple[list[Format], list[Format]],
    families: Sequence[str],
    completions_column: str | None,
    labels_column: str | None,
    sampled: list[Any] | None,
) -> list[tuple[Probe, dict[str, Any]]]:
    items: list[tuple[Probe, dict[str, Any]]] = []
    candidates, chosen = formats
    if families:
        probes = [p for p in make_probes(ctx, chosen) if p.family in families]
        if ctx.index >= HUGE_ROWS:
            probes = [p for p in probes if p.family != "huge"]
        items += [(p, {}) for p in calibration(ctx, candidates, chosen[0]) + probes]
    if ctx.gold is not None:
        items.append((Probe("gold", "solution", ctx.gold), {}))
    if completions_column is not None:
        given = row.get(completions_column)
        labels = row.get(labels_column) if labels_column else None
        many = isinstance(given, (list, tuple)) and not (given and isinstance(given[0], dict))
        completions = list(given) if many else [given]
        label_list = list(labels) if isinstance(labels, (list, tuple)) else [labels] * len(completions)
        for k, (completion, label) in enumerate(zip(completions, label_list)):
            if completion is None:
                continue
            extra: dict[str, Any] = {"sample": k}
            if labels_column is not None:
                extra["label"] = label
            items.append((Probe("completions", "column", completion), extra))
    for k, completion in enumerate(sampled or []):
        items.append((Probe("sampled", "model", completion), {"sample": k}))
    return items


def check(
    reward: Any,
    dataset: Any,
    *,
    split: str = "test",
    gold_column: str | bool | None = None,
    answer_column: str | None = None,
    completions_column: str | None = None,
    labels_column: str | None = None,
    against: Any = None,
    sample: Sampler | None = None,
    n: int = 4,
    families: Sequence[str] | None = None,
    probe_format: str | Sequence[str] | None = None,
    thresholds: Thresholds | dict[str, Any] | None = None,
    pass_threshold: float | None = None,
    timeout: float | None = 20.0,
    workers: int = 1,
    output_dir: str | os.PathLike[str] | None = None,
    progress: bool = True,
    **dataset_options: Any,
) -> CheckReport:
    """Audit a reward on a dataset: gaming probes, reference solutions, labels, a second opinion, cost, signal.

    Args:
        reward: anything :func:`~rewardsmith.get_reward` takes (a name, ``./file.py:fn``, a config entry,
            a ``Reward``, a TRL function).
        dataset: what :func:`~rewardsmith.data.prepare_dataset` loads; ``split`` and ``dataset_options``
            (``config``, ``converter``, ``system_prompt``, ``max_samples``, ...) are passed to it, as for
            :func:`~rewardsmith.evaluate`.
        gold_column: the column of reference solutions (completions known to be right); by default
            ``solution`` (or ``reference_solution``, ``gold``) when the data has it; ``""`` for none (when
            the data's solutions are not in the format the reward expects).
        answer_column: the column of reference answers probes are built from; by default chosen by meaning
            (:mod:`rewardsmith.check.reference`: the reference column the reward reads, such as ``answer`` or
            ``ground_truth``, else the data's); candidates that disagree are an error asking for this.
        completions_column: a column of completions (one, or a list per row) to score; with
            ``labels_column`` (right/wrong labels) it gives label agreement, with lists the signal check.
        against: a second reward scoring the same samples; their disagreements are listed.
        sample: ``sample(prompts, n) -> [[completion, ...], ...]`` draws ``n`` completions per prompt from a
            model for the signal check (``rewardsmith check --model`` wires an evaluation backend here).
        families: the probe families to run (default: all of :data:`FAMILIES`; ``[]`` for none).
        probe_format: the format completions state their answer in, when the audit cannot find it from the
            data (a custom format scores every probe 0 otherwise, and the audit then says it was not exercised):
            ``boxed``, ``hashes``, ``phrase``, ``tags:ANSWER_TAG``, ``tags:THINK_TAG,ANSWER_TAG``,
            ``fence:LANGUAGE``, or a template such as ``"<reasoning>{reasoning}</reasoning><SOLUTION>{answer}
            </SOLUTION>"``; several for several formats.
        thresholds: a :class:`Thresholds` or a dict of its fields: what counts as a finding.
        pass_threshold: the score a labelled completion needs to pass (default: the top of the reward's
            ``score_range``, else 1).
        timeout: seconds per sample; each sample runs in a worker process killed when time is up (``None``:
            in this process, no limit). ``workers``: that many worker processes.
        output_dir: where ``check.json`` and ``check.html`` go (nothing is written without it).
        progress: show rows done and the time left on standard error.

    Returns a :class:`CheckReport`; ``report.passed`` is false when any check passed its threshold
    (``report.findings`` says which). Ctrl-C stops after the current row and writes what was done.

    >>> import rewardsmith
    >>> from rewardsmith import reward
    >>> @reward
    ... def mentions_answer(completion: str, answer: str) -> float:
    ...     return float(answer in completion)
    >>> rows = [{"question": f"What is {a} + {b}?", "answer": f"{a} + {b} = {a + b}\\n#### {a + b}"}
    ...         for a, b in [(3, 4), (10, 5), (2, 9)]]
    >>> report = rewardsmith.check(mentions_answer, rows, converter="gsm8k", families=["empty", "hedging"],
    ...                            timeout=None, progress=False)
    >>> report.passed, sorted({f.name.split("/")[0] for f in report.findings})
    (False, ['hedging'])
    """
    made = _resolve(reward, "the reward to check")
    other = _resolve(against, "against") if against is not None else None
    limits = _thresholds(thresholds)
    chosen = _families(families)
    given = _probe_formats(probe_format)
    if labels_column is not None and completions_column is None:
        raise RewardConfigError("labels_column needs completions_column: the completions the labels are about")
    rows = _load(dataset, split, dataset_options)
    _check_columns(rows, made, other, completions_column, labels_column)
    check_completion_shapes(rows, [made, *([other] if other is not None else [])])  # as the dry run does
    taken = {c for c in (completions_column, labels_column) if c}
    gold = _gold_column(rows, gold_column, taken)
    contexts, reference = build_rows(rows, made, answer_column=answer_column, gold_column=gold, exclude=sorted(taken))
    golds, prompts = [c.gold or "" for c in contexts], [c.prompt_text for c in contexts]
    candidates = candidate_formats(golds, prompts, made, given)
    scorer = Scorer(made, timeout, workers)
    audit = _Audit(made, scorer, other, Scorer(other, timeout, workers) if other is not None else None)
    columns = (completions_column, labels_column)
    run = _run(audit, rows, contexts, candidates, chosen, columns, (sample, n), progress)
    setup = _setup(made, other, dataset, split, rows, audit, scorer, run, given)
    setup.update(answer_column=reference.column, answer_column_how=reference.how, gold_column=gold)
    setup.update(completions_column=completions_column)
    setup.update(labels_column=labels_column)
    report = summarise(made, audit.records, audit.other, other, contexts, setup, limits, chosen, pass_threshold)
    report.complete = run.complete
    report.notes += [scorer.note] if scorer.note else []
    report.summary["complete"] = run.complete
    report.summary["notes"] = report.notes
    # the per-turn return of a per-turn reward, audited from the caller's own arguments (the same choices follow)
    options = {"gold_column": gold_column, "answer_column": answer_column, "probe_format": probe_format}
    options.update(thresholds=thresholds, timeout=timeout, workers=workers, progress=False)
    audit_turn_return(report, made, chosen, lambda r: check(r, rows, families=[FAMILY], **options))
    if output_dir is not None:
        write_report(report, Path(output_dir))
    if run.interrupted:
        raise KeyboardInterrupt
    return report


def _setup(
    made: Reward,
    other: Reward | None,
    dataset: Any,
    split: str,
    rows: list[Any],
    audit: _Audit,
    scorer: Scorer,
    run: _Run,
    given: list[Any],
) -> dict[str, Any]:
    """What was checked and how, for the summary (the columns are added by the caller)."""
    return {
        "reward": made.name,
        "dataset": dataset if isinstance(dataset, (str, os.PathLike)) else type(dataset).__name__,
        "split": split,
        "rows": len(rows),
        "rows_checked": len({r.row for r in audit.records}),
        "against": other.name if other is not None else None,
        "formats": [f.label for f in run.formats],
        "formats_given": bool(given),
        "declared_columns": declared_columns(made),
        "timeout_s": scorer.timeout,
        "scored_in": scorer.mode,
    }


def _families(families: Sequence[str] | None) -> list[str]:
    chosen = list(FAMILIES) if families is None else list(families)
    unknown = [f for f in chosen if f not in FAMILIES]
    if unknown:
        raise RewardConfigError(f"unknown probe families {unknown}; the families are: {', '.join(FAMILIES)}")
    return chosen


def _probe_formats(spec: str | Sequence[str] | None) -> list[Format]:
    """The user's probe formats (``probe_format``), each parsed; a bad one is a config error."""
    specs = [spec] if isinstance(spec, str) else list(spec or [])
    try:
        return [Format.parse(s) for s in specs if s.strip()]
    except ValueError as exc:
        raise RewardConfigError(str(exc)) from exc


@dataclass
class _Run:
    """How the scoring went: the formats used, whether every row was scored, whether Ctrl-C stopped it."""

    formats: list[Format]
    complete: bool = False
    interrupted: bool = False


def _run(
    audit: _Audit,
    rows: list[dict[str, Any]],
    contexts: list[RowContext],
    candidates: list[Format],
    families: list[str],
    columns: tuple[str | None, str | None],
    sampling: tuple[Sampler | None, int],
    progress: bool,
) -> _Run:
    """Score every row's probes, reference and completions; Ctrl-C stops after the current row."""
    bar = Progress(len(rows), enabled=progress, label="check", unit="rows")
    run = _Run(candidates[:1])
    try:
        run.formats = _formats(audit.scorer, contexts, candidates)
        for ctx in contexts:
            ctx.gold = None if ctx.gold is None else _in_fence(ctx.gold, run.formats[0])
        sampled = _sampled(sampling[0], [c.prompt for c in contexts], sampling[1])
        for row, ctx, drawn in zip(rows, contexts, sampled):
            audit.score(ctx, _row_items(ctx, row, (candidates, run.formats), families, *columns, drawn))
            bar.advance(1)
        run.complete = True
    except KeyboardInterrupt:
        run.interrupted = True
    finally:
        bar.finish(run.complete)
        audit.scorer.close()
        if audit.against_scorer is not None:
            audit.against_scorer.close()
    return run


def _sampled(sample: Sampler | None, prompts: list[Any], n: int) -> list[list[Any] | None]:
    if sample is None:
        return [None] * len(prompts)
    drawn = sample(prompts, n)
    if len(drawn) != len(prompts):
        raise RewardConfigError(f"sample(prompts, n) gave {len(drawn)} lists of completions for {len(prompts)} prompts")
    return list(drawn)


def _check_columns(
    rows: list[dict[str, Any]], reward: Reward, other: Reward | None, completions: str | None, labels: str | None
) -> None:
    from rewardsmith.data.columns import check_columns

    have = list(rows[0])
    for column, what in ((completions, "completions_column"), (labels, "labels_column")):
        if column is not None and column not in have:
            raise DatasetError(f"{what}={column!r} is not a column of the prepared data ({', '.join(have)})")
    check_columns(have, [r for r in (reward, other) if r is not None])


def _thresholds(value: Thresholds | dict[str, Any] | None) -> Thresholds:
    if value is None:
        return Thresholds()
    if isinstance(value, Thresholds):
        return value
    try:
        return Thresholds(**value)
    except TypeError as exc:
        known = ", ".join(Thresholds.__dataclass_fields__)
        raise RewardConfigError(f"unknown threshold in {sorted(value)}; the thresholds are: {known}") from exc


def summarise(
    reward: Reward,
    records: list[Record],
    other_records: list[Record],
    other: Reward | None,
    contexts: list[RowContext],
    setup: dict[str, Any],
    limits: Thresholds,
    families: Sequence[str],
    pass_threshold: float | None,
) -> CheckReport:
    """The report of an audit from its scored samples."""
    prompts = {c.index: c.prompt_text for c in contexts}
    refs, floor, how = checks.references(reward, records)
    sensitivity = checks.sensitivity(reward, records, refs, floor)
    applies = {"always": True, "format": sensitivity["format"], "content": sensitivity["content"]}
    applies.update(trajectory_probes.applies(records))
    chosen = {f: FAMILIES[f] for f in families}
    probe_records = [r for r in records if r.family in chosen or r.family == CALIBRATION]
    wrong, assumed = checks.wrong_scores(records), checks.assumed_rows(records)
    probes, findings = probe_summary(probe_records, refs, floor, applies, chosen, limits, prompts, wrong, assumed)
    summary: dict[str, Any] = {"setup": setup, "thresholds": asdict(limits)}
    summary["reference"] = {"floor": floor, "how": how, **sensitivity}
    summary["probes"] = probes
    ran = {r.family for r in probe_records}
    summary["not_run"] = families_not_run(chosen, ran, contexts, setup.get("answer_column"))
    for name, result in (
        ("gold", checks.gold(reward, records, limits, prompts)),
        ("labels", checks.labels(records, limits, prompts, checks.pass_level(reward, pass_threshold))),
        ("signal", checks.signal(records, limits)),
        ("against", checks.against(reward, other, records, other_records, limits, prompts)),
        ("cost", cost_summary(records, limits)),
    ):
        part, found = result
        summary[name] = part
        findings += found
    rows = len({r.row for r in records if r.family in chosen})
    findings += checks.exercised(refs, floor, rows, limits) if chosen else []
    summary["findings"] = [f.as_dict() for f in findings]
    summary["passed"] = not findings
    note = checks.unjudged_note(refs, floor, rows) if chosen else None
    return CheckReport(reward.name, summary, findings, notes=[note] if note else [])


def write_report(report: CheckReport, folder: Path) -> None:
    """Write ``check.json`` and ``check.html`` into ``folder``."""
    from rewardsmith.check.page import render_check_page

    folder.mkdir(parents=True, exist_ok=True)
    report.output_dir = folder
    text = json.dumps(report.summary, indent=2, ensure_ascii=False, default=str) + "\n"
    (folder / "check.json").write_text(text, encoding="utf-8")
    (folder / "check.html").write_text(render_check_page(report.summary), encoding="utf-8")
