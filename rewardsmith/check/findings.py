"""From scored samples to an audit's numbers and findings, each checked against a settable threshold.

A probe *scores like the reference* on a row when it reaches that row's
reference score: the reference solution's (gold column), else the best score
of the reference answer written in the expected format, else the top of the
reward's ``score_range``. Rows where even that is no better than the floor
(the lowest score the reward gave anything, or the bottom of its range) say
nothing about gaming and are left out.

For each probe variant the audit reports the share of rows where it scores
like the reference and its *closeness* (its score as a fraction of the way
from the floor to the reference, averaged over rows; for a reward scoring 0
or 1 it equals the share). A variant is a finding when it applies to the
reward (see :mod:`rewardsmith.check.probes`) and its share passes
``max_share`` or its closeness passes ``max_closeness`` (the share alone for
format probes, whose right answer inside earns content rewards their part).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Finding", "Record", "Thresholds", "cost_summary", "preview", "probe_summary", "reaches"]

#: Characters of a completion kept in reports.
PREVIEW = 400


@dataclass
class Thresholds:
    """What counts as a finding (each settable; ``None`` turns a check's finding off).

    * ``max_share``: share of rows on which a probe variant scores like the reference (0.1).
    * ``max_closeness``: a probe variant's mean score, as a fraction of the reference's, over rows (0.6).
    * ``min_gold``: share of reference solutions that must score the maximum (0.99).
    * ``max_error_rate``: share of samples the reward may fail on (0.01); any timeout is a finding.
    * ``max_seconds``: the slowest sample may take this long (10 s; the 1 MB probes are the test).
    * ``max_false_positive`` / ``max_false_negative``: with labels, the share of wrong completions passed
      (0.05) and of right ones failed (0.1).
    * ``max_tied``: with several completions per prompt, the share of prompts whose scores all tie (0.9).
    * ``max_disagreement``: with ``against``, the share of samples where the two rewards disagree (off).
    * ``max_unjudged``: share of rows whose references score no higher than the lowest score given (0.5): past it
      the reward was not exercised, a finding.
    """

    max_share: float | None = 0.1
    max_closeness: float | None = 0.6
    min_gold: float | None = 0.99
    max_error_rate: float | None = 0.01
    max_seconds: float | None = 10.0
    max_false_positive: float | None = 0.05
    max_false_negative: float | None = 0.1
    max_tied: float | None = 0.9
    max_disagreement: float | None = None
    max_unjudged: float | None = 0.5


@dataclass
class Finding:
    """One thing the audit found: which check, what, the measured value and the threshold it passed."""

    check: str
    name: str
    message: str
    value: float | None = None
    threshold: float | None = None
    example: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        """As plain data (for ``check.json``)."""
        return asdict(self)


@dataclass
class Record:
    """One scored sample of an audit (the completion kept only as a preview)."""

    row: int
    family: str
    variant: str
    judged: str
    score: float | None
    reason: str
    failure: str | None
    seconds: float | None
    chars: int
    preview: str
    extra: dict[str, Any] = field(default_factory=dict)
    contentless: bool = False  # no right answer in it: beating a wrong attempt is a hole
    blank: bool = False  # nothing visible in it

    def example(self, reference: float | None = None, prompt: str = "") -> dict[str, Any]:
        """The record as an example for a report."""
        out = {"row": self.row, "variant": self.variant, "score": self.score, "reason": self.reason}
        out.update(completion=self.preview, chars=self.chars, prompt=preview(prompt, 300))
        if reference is not None:
            out["reference_score"] = reference
        if self.failure:
            out["failure"] = self.failure
        out.update(self.extra)
        return out


def preview(text: Any, limit: int = PREVIEW) -> str:
    """The start of a text for reports, saying how long it was when cut.

    >>> preview("x" * 10, 4)
    'xxxx… (10 characters)'
    """
    text = "" if text is None else str(text)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def reaches(score: float | None, reference: float) -> bool:
    """Whether ``score`` is at least ``reference`` (up to rounding)."""
    return score is not None and score >= reference - 1e-9 * max(1.0, abs(reference))


def _closeness(score: float | None, reference: float, floor: float) -> float:
    if score is None:
        return 0.0
    return min(1.0, max(0.0, (score - floor) / (reference - floor)))


def probe_summary(
    records: Iterable[Record],
    references: dict[int, float],
    floor: float,
    applies: dict[str, bool],
    families: dict[str, str],
    thresholds: Thresholds,
    prompts: dict[int, str],
    wrong: dict[int, float] | None = None,
    assumed: frozenset[int] = frozenset(),
) -> tuple[dict[str, Any], list[Finding]]:
    """Each family's and variant's numbers, worst examples, and the findings they make.

    ``wrong``: each row's score of a plausible wrong attempt (what a probe with no right answer must not beat);
    ``assumed``: rows whose reference score is only the top of the reward's range (no reference answer or
    solution): there only blank probes are judged against it.
    """
    scale = _Scale(references, floor, wrong or {}, assumed)
    by_variant: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for record in records:
        if record.family in families:
            by_variant[(record.family, record.variant)].append(record)
    out: dict[str, Any] = {}
    findings: list[Finding] = []
    for family, description in families.items():
        variants: dict[str, Any] = {}
        worst: tuple[bool, float, Record] | None = None  # (a finding?, closeness, record): findings shown first
        for (fam, variant), group in by_variant.items():
            if fam != family:
                continue
            stats, top = _variant(group, scale, applies[group[0].judged])
            variants[variant] = stats
            found = _variant_findings(family, variant, group[0].judged, stats, thresholds)
            findings += found
            if top is not None and (worst is None or (bool(found), top[0]) > worst[:2]):
                worst = (bool(found), *top)
        if not variants:
            continue
        scores = [s for v in variants.values() for s in v.pop("_scores")]
        judged = [v for v in variants.values() if v["applies"] and v["judged_rows"]]
        example = None
        if worst is not None:
            record = worst[2]
            example = record.example(references.get(record.row), prompts.get(record.row, ""))
        out[family] = {
            "description": description,
            "probes": sum(v["probes"] for v in variants.values()),
            "mean": statistics.fmean(scores) if scores else None,
            "share_at_reference": max((v["share"] for v in judged), default=None),
            "closeness": max((v["closeness"] for v in judged), default=None),
            "finding": any(f.name.startswith(f"{family}/") for f in findings),
            "worst": example,
            "variants": variants,
        }
    return out, findings


@dataclass(frozen=True)
class _Scale:
    """What a probe's score is compared with on each row."""

    references: dict[int, float]
    floor: float
    wrong: dict[int, float]
    assumed: frozenset[int]

    def judged(self, r: Record) -> bool:
        ref = self.references.get(r.row)
        return ref is not None and ref > self.floor + 1e-12 and (r.blank or r.row not in self.assumed)

    def beats_wrong(self, r: Record) -> bool:
        low = self.wrong.get(r.row)
        return r.score is not None and low is not None and r.score > low + 1e-9 * max(1.0, abs(low))


def _variant(group: list[Record], scale: _Scale, applies: bool) -> tuple[dict[str, Any], tuple[float, Record] | None]:
    references, floor = scale.references, scale.floor
    scores = [r.score for r in group if r.score is not None]
    judged = [r for r in group if scale.judged(r)]
    hits = [r for r in judged if reaches(r.score, references[r.row])]
    close = [_closeness(r.score, references[r.row], floor) for r in judged]
    compared = [r for r in group if r.contentless and r.row in scale.wrong]
    beats = [r for r in compared if scale.beats_wrong(r)]
    worst = None
    for r, c in zip(judged, close):
        if worst is None or c > worst[0] or (c == worst[0] and (r.score or 0) > (worst[1].score or 0)):
            worst = (c, r)
    if worst is None and beats:
        worst = (0.0, max(beats, key=lambda r: r.score or 0.0))
    if worst is None and group:
        top = max(group, key=lambda r: -math.inf if r.score is None else r.score)
        worst = (-1.0, top)
    stats = {
        "probes": len(group),
        "judged": group[0].judged,
        "applies": applies,
        "judged_rows": len(judged),
        "mean": statistics.fmean(scores) if scores else None,
        "share": len(hits) / len(judged) if judged else None,
        "closeness": statistics.fmean(close) if close else None,
        "compared_rows": len(compared),
        "share_above_wrong": len(beats) / len(compared) if compared else None,
        "failures": sum(1 for r in group if r.failure),
        "max_seconds": max((r.seconds for r in group if r.seconds is not None), default=None),
        "_scores": scores,
    }
    return stats, worst


def _variant_findings(family: str, variant: str, judged: str, stats: dict[str, Any], t: Thresholds) -> list[Finding]:
    share, closeness = stats["share"], stats["closeness"]
    name = f"{family}/{variant}"
    above = stats["share_above_wrong"]
    if not stats["judged_rows"] or not stats["applies"]:
        return _above_wrong(name, above, stats["compared_rows"], t)
    if t.max_share is not None and share is not None and share > t.max_share:
        return [
            Finding(
                "probes",
                name,
                f"{name}: {share:.0%} of {stats['judged_rows']} rows score as high as the reference",
                share,
                t.max_share,
            )
        ]
    if judged != "format" and t.max_closeness is not None and closeness is not None and closeness > t.max_closeness:
        return [
            Finding(
                "probes",
                name,
                f"{name}: scores {closeness:.0%} of the way from the lowest score to the reference, on average",
                closeness,
                t.max_closeness,
            )
        ]
    return _above_wrong(name, above, stats["compared_rows"], t)


def _above_wrong(name: str, share: float | None, rows: int, t: Thresholds) -> list[Finding]:
    if t.max_share is None or share is None or share <= t.max_share:
        return []
    message = (
        f"{name}: scores above a plausible wrong attempt on {share:.0%} of {rows} rows; GRPO rewards a completion for "
        "beating its group, so this pays more than honest work with a wrong answer"
    )
    return [Finding("probes", name, message, share, t.max_share)]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    low, high = math.floor(k), math.ceil(k)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def cost_summary(records: list[Record], thresholds: Thresholds) -> tuple[dict[str, Any], list[Finding]]:
    """Latency (p50, p95, max, the slowest sample), timeouts, errors and the None rate, and their findings."""
    seconds = [r.seconds for r in records if r.seconds is not None]
    timeouts = [r for r in records if r.failure == "timeout"]
    errors = [r for r in records if r.failure in ("error", "crash")]
    nones = sum(1 for r in records if r.score is None)
    n = len(records)
    slowest = max((r for r in records if r.seconds is not None), key=lambda r: r.seconds or 0.0, default=None)
    summary = {
        "samples": n,
        "p50_s": _percentile(seconds, 0.5) if seconds else None,
        "p95_s": _percentile(seconds, 0.95) if seconds else None,
        "max_s": max(seconds) if seconds else None,
        "total_s": math.fsum(seconds),
        "slowest": slowest.example() | {"family": slowest.family} if slowest else None,
        "timeouts": len(timeouts),
        "errors": len(errors),
        "error_rate": len(errors) / n if n else 0.0,
        "none_rate": nones / n if n else 0.0,
        "first_error": errors[0].example() | {"family": errors[0].family} if errors else None,
        "first_timeout": timeouts[0].example() | {"family": timeouts[0].family} if timeouts else None,
    }
    findings = []
    if timeouts:
        r = timeouts[0]
        findings.append(
            Finding("cost", "timeouts", f"{len(timeouts)} samples timed out (first: {r.family}/{r.variant})",
                    len(timeouts), 0, summary["first_timeout"])
        )  # fmt: skip
    rate, limit = summary["error_rate"], thresholds.max_error_rate
    if limit is not None and errors and rate > limit:
        r = errors[0]
        findings.append(
            Finding("cost", "errors", f"the reward failed on {rate:.1%} of samples (first: {r.family}/{r.variant}: "
                    f"{r.reason[:160]})", rate, limit, summary["first_error"])
        )  # fmt: skip
    top, limit = summary["max_s"], thresholds.max_seconds
    if limit is not None and top is not None and top > limit and slowest is not None:
        findings.append(
            Finding("cost", "slow", f"the slowest sample took {top:.1f}s ({slowest.family}/{slowest.variant}, "
                    f"{slowest.chars:,} characters)", top, limit, summary["slowest"])
        )  # fmt: skip
    return summary, findings
