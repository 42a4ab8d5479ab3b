"""The checks besides the probes: reference scores, what the reward rewards, gold, labels, signal, a second opinion.

Each ``check`` function takes the audit's scored samples
(:class:`~rewardsmith.check.findings.Record`) and returns its part of
``check.json`` and the findings it makes under the
:class:`~rewardsmith.check.findings.Thresholds`.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from rewardsmith.check.findings import Finding, Record, Thresholds, reaches
from rewardsmith.check.probes import CALIBRATION
from rewardsmith.check.rows import declared_columns
from rewardsmith.core.reward import Reward

__all__ = [
    "against",
    "assumed_rows",
    "checks_that_ran",
    "exercised",
    "gold",
    "labels",
    "pass_level",
    "references",
    "sensitivity",
    "signal",
    "unjudged_note",
    "wrong_scores",
]

#: How far above the floor, as a share of the way to the reference, a difference must be to count.
NOTICEABLE = 0.1
#: Examples kept per list in ``check.json``.
KEEP = 50
#: The checks besides the probes, each with the field of its summary that is set when it ran.
RAN_WHEN = {"gold": "rows", "labels": "samples", "against": "other", "signal": "groups", "cost": "samples"}


def checks_that_ran(summary: dict[str, Any], names: Iterable[str]) -> list[tuple[str, dict[str, Any]]]:
    """The checks besides the probes that ran (of ``names``, in that order), each with its part of the summary.

    >>> checks_that_ran({"labels": {"samples": 0}, "cost": {"samples": 3}}, ["labels", "cost", "signal"])
    [('cost', {'samples': 3})]
    """
    sections = [(name, summary.get(name, {})) for name in names]
    return [(name, section) for name, section in sections if section.get(RAN_WHEN[name])]


def pass_level(reward: Reward, chosen: float | None = None) -> float:
    """The score a completion needs to pass: ``chosen``, else the top of the reward's ``score_range``, else 1.

    >>> from rewardsmith import get_reward
    >>> pass_level(get_reward("gsm8k_accuracy")), pass_level(get_reward("repetition"))
    (1.0, 0.0)
    """
    if chosen is not None:
        return chosen
    return reward.score_range[1] if reward.score_range else 1.0


def references(reward: Reward, records: list[Record]) -> tuple[dict[int, float], float, dict[str, int]]:
    """Each row's reference score, the floor (lowest score given, or the bottom of the range) and where they came
    from: the best of the reference solution and the reference answer in each expected format, else the top of
    the reward's ``score_range``."""
    best: dict[int, float] = {}
    source: dict[int, str] = {}
    for r in records:
        if _known(r) and r.score is not None and (r.row not in best or r.score > best[r.row]):
            best[r.row] = r.score
            source[r.row] = "reference solution" if r.family == "gold" else "reference answer in the format"
    rows = {r.row for r in records}
    if reward.score_range is not None:
        for row in rows - set(best):
            best[row] = reward.score_range[1]
            source[row] = "top of the score range"
    scores = [r.score for r in records if r.score is not None]
    floors = [*scores, *([reward.score_range[0]] if reward.score_range else [])]
    floor = min(floors) if floors else 0.0
    how: dict[str, int] = defaultdict(int)
    for kind in source.values():
        how[kind] += 1
    return best, floor, dict(how)


def _known(r: Record) -> bool:
    return r.family == "gold" or (r.family == CALIBRATION and r.variant.startswith("right_"))


def assumed_rows(records: list[Record]) -> frozenset[int]:
    """Rows with no scored reference answer or solution, whose reference is only the top of the score range."""
    known = {r.row for r in records if _known(r) and r.score is not None}
    return frozenset({r.row for r in records} - known)


def wrong_scores(records: list[Record]) -> dict[int, float]:
    """Each row's best score of a plausible wrong attempt (the ``wrong_*`` calibration completions)."""
    out: dict[int, float] = {}
    for r in records:
        if r.family == CALIBRATION and r.variant.startswith("wrong_") and r.score is not None:
            out[r.row] = max(r.score, out.get(r.row, r.score))
    return out


def _by_row(records: list[Record], family: str, variant: str | None = None) -> dict[int, float | None]:
    return {r.row: r.score for r in records if r.family == family and (variant is None or r.variant == variant)}


def _mean_gap(
    high: dict[int, float | None], low: dict[int, float | None], refs: dict[int, float], floor: float
) -> float:
    gaps = []
    for row, a in high.items():
        b = low.get(row)
        ref = refs.get(row)
        if a is None or b is None or ref is None or ref <= floor:
            continue
        gaps.append((a - b) / (ref - floor))
    return statistics.fmean(gaps) if gaps else 0.0


def sensitivity(reward: Reward, records: list[Record], refs: dict[int, float], floor: float) -> dict[str, Any]:
    """Whether the reward gives credit for the format itself, and whether it checks the answer.

    Format: nonsense in the expected format scores noticeably above the same
    nonsense without it. Content: the reward reads a column (its declared
    inputs), or the reference answer in the format (or the reference solution)
    scores noticeably above a wrong attempt in the same format.
    """
    fmt = _mean_gap(_by_row(records, CALIBRATION, "format_nonsense"), _by_row(records, CALIBRATION, "plain_nonsense"),
                    refs, floor)  # fmt: skip
    right: dict[int, float | None] = {}
    for r in records:
        if _known(r) and r.score is not None:
            right[r.row] = max(r.score, right.get(r.row) or r.score)
    wrong = {**_by_row(records, "format_only", "wrong_answer"), **_by_row(records, CALIBRATION, "wrong_attempt")}
    content = _mean_gap(right, wrong, refs, floor)
    columns = declared_columns(reward)
    return {
        "format": fmt > NOTICEABLE,
        "format_gap": fmt,
        "content": bool(columns) or content > NOTICEABLE,
        "content_gap": content,
        "reads_columns": columns,
    }


def gold(
    reward: Reward, records: list[Record], limits: Thresholds, prompts: dict[int, str]
) -> tuple[dict[str, Any], list[Finding]]:
    """The share of reference solutions that score the maximum (the top of the reward's range, else the best score
    anything got in the audit), and every miss with the reward's reason."""
    golds = [r for r in records if r.family == "gold"]
    if not golds:
        return {"rows": 0}, []
    scored = [r.score for r in records if r.score is not None]
    if not reward.score_range and scored and min(scored) == max(scored):
        return _gold_all_same(golds, scored[0])
    top = reward.score_range[1] if reward.score_range else (max(scored) if scored else 1.0)
    misses = [r for r in golds if not reaches(r.score, top)]
    share = 1 - len(misses) / len(golds)
    part = {
        "rows": len(golds),
        "maximum": top,
        "share_at_maximum": share,
        "not_scored": sum(1 for r in golds if r.score is None),
        "misses": [r.example(top, prompts.get(r.row, "")) for r in misses],
    }
    found = []
    if limits.min_gold is not None and share < limits.min_gold:
        first = misses[0]
        found.append(
            Finding("gold", "gold", f"{share:.1%} of {len(golds)} reference solutions score the maximum {top:g}; "
                    f"first miss (row {first.row}): {first.reason[:160]}", share, limits.min_gold,
                    first.example(top, prompts.get(first.row, "")))
        )  # fmt: skip
    return part, found


def _gold_all_same(golds: list[Record], value: float) -> tuple[dict[str, Any], list[Finding]]:
    """Every sample, the references too, got one score: they scored the lowest value seen, not "the maximum".

    No finding of its own: the audit then finds that nothing was exercised (see :func:`exercised`).
    """
    part = {
        "rows": len(golds),
        "maximum": None,
        "share_at_maximum": None,
        "same_score": value,
        "not_scored": sum(1 for r in golds if r.score is None),
        "misses": [],
    }
    return part, []


_TRUE = {"1", "true", "yes", "y", "correct", "right", "pass", "passed", "good", "positive"}
_FALSE = {"0", "false", "no", "n", "incorrect", "wrong", "fail", "failed", "bad", "negative"}


def as_label(value: Any) -> bool | None:
    """A label as right (``True``) or wrong (``False``); ``None`` when it says neither.

    >>> as_label(1), as_label("Correct"), as_label(0.2), as_label("maybe")
    (True, True, False, None)
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value >= 0.5
    if isinstance(value, str):
        text = value.strip().lower()
        return True if text in _TRUE else False if text in _FALSE else None
    return None


def labels(
    records: list[Record], limits: Thresholds, prompts: dict[int, str], level: float
) -> tuple[dict[str, Any], list[Finding]]:
    """Agreement with labels: accuracy, false positives (wrong completions passed), false negatives, examples."""
    labelled = [(r, as_label(r.extra["label"])) for r in records if r.family == "completions" and "label" in r.extra]
    labelled = [(r, y) for r, y in labelled if y is not None]
    if not labelled:
        return {"samples": 0}, []
    fp = [r for r, y in labelled if not y and reaches(r.score, level)]
    fn = [r for r, y in labelled if y and not reaches(r.score, level)]
    positives = sum(1 for _, y in labelled if y)
    negatives = len(labelled) - positives
    part = {
        "samples": len(labelled),
        "pass_level": level,
        "accuracy": 1 - (len(fp) + len(fn)) / len(labelled),
        "false_positives": len(fp),
        "false_negatives": len(fn),
        "false_positive_rate": len(fp) / negatives if negatives else None,
        "false_negative_rate": len(fn) / positives if positives else None,
        "false_positive_examples": [r.example(None, prompts.get(r.row, "")) for r in fp[:KEEP]],
        "false_negative_examples": [r.example(None, prompts.get(r.row, "")) for r in fn[:KEEP]],
    }
    found = []
    for kind, wrong, limit, what in (
        ("false_positive", fp, limits.max_false_positive, "completions labelled wrong pass"),
        ("false_negative", fn, limits.max_false_negative, "completions labelled right fail"),
    ):
        rate = part[f"{kind}_rate"]
        if limit is not None and rate is not None and rate > limit:
            example = wrong[0].example(None, prompts.get(wrong[0].row, ""))
            found.append(Finding("labels", kind, f"{rate:.1%} of {what}", rate, limit, example))
    return part, found


def signal(records: list[Record], limits: Thresholds) -> tuple[dict[str, Any], list[Finding]]:
    """With several completions per prompt: the share of prompts whose scores all tie, and the spread."""
    groups: dict[tuple[str, int], list[float]] = defaultdict(list)
    for r in records:
        if r.family in ("completions", "sampled") and r.score is not None:
            groups[(r.family, r.row)].append(r.score)
    groups = {k: v for k, v in groups.items() if len(v) >= 2}
    if not groups:
        return {"groups": 0}, []
    tied = [k for k, v in groups.items() if max(v) - min(v) <= 1e-12]
    spreads = [statistics.pstdev(v) for v in groups.values()]
    every = [s for v in groups.values() for s in v]
    share = len(tied) / len(groups)
    part = {
        "groups": len(groups),
        "source": sorted({k[0] for k in groups}),
        "tied_share": share,
        "tied_rows": [k[1] for k in tied[:KEEP]],
        "mean_spread": statistics.fmean(spreads),
        "std": statistics.pstdev(every),
        "mean": statistics.fmean(every),
    }
    found = []
    if limits.max_tied is not None and share > limits.max_tied:
        found.append(
            Finding("signal", "tied", f"the scores of {share:.0%} of {len(groups)} prompts all tie: no GRPO advantage "
                    "there", share, limits.max_tied)
        )  # fmt: skip
    return part, found


def against(
    reward: Reward,
    other: Reward | None,
    records: list[Record],
    other_records: list[Record],
    limits: Thresholds,
    prompts: dict[int, str],
) -> tuple[dict[str, Any], list[Finding]]:
    """A second opinion: where ``other`` passes what the reward fails, or the reverse."""
    if other is None:
        return {}, []
    mine_level, their_level = pass_level(reward), pass_level(other)
    both, differ = 0, []
    for mine, theirs in zip(records, other_records):
        if mine.score is None or theirs.score is None or mine.family == CALIBRATION:
            continue
        both += 1
        if reaches(mine.score, mine_level) != reaches(theirs.score, their_level):
            example = mine.example(None, prompts.get(mine.row, ""))
            example.update(family=mine.family, other_score=theirs.score, other_reason=theirs.reason)
            differ.append(example)
    rate = len(differ) / both if both else 0.0
    part = {"other": other.name, "compared": both, "disagreements": len(differ), "rate": rate}
    part["examples"] = differ[: KEEP * 2]
    found = []
    if limits.max_disagreement is not None and rate > limits.max_disagreement:
        found.append(
            Finding("against", "disagreement", f"{reward.name} and {other.name} disagree on {rate:.1%} of {both} "
                    "samples", rate, limits.max_disagreement, differ[0] if differ else None)
        )  # fmt: skip
    return part, found


#: What to do when the probes could not be judged.
_ADVICE = (
    "give the probe format the reward expects (probe_format / --probe-format: tags:ANSWER_TAG, fence:python, or a "
    "template such as '<SOLUTION>{answer}</SOLUTION>'), the reference solutions (gold_column) or the reference "
    "answers (answer_column)"
)


def unjudged_note(refs: dict[int, float], floor: float, rows: int) -> str | None:
    """A note when some rows had no reference scoring above the floor (their probes could not be judged)."""
    judged = sum(1 for value in refs.values() if value > floor + 1e-12)
    if rows and 0 < judged < rows:
        return (
            f"the probes of {rows - judged} of {rows} rows were not judged: no reference scored above {floor:g} there"
        )
    return None


def exercised(refs: dict[int, float], floor: float, rows: int, limits: Thresholds) -> list[Finding]:
    """A finding when the audit could not exercise the reward: on (nearly) no row did any reference score above
    the lowest score anything got, so no probe could be judged and a pass would mean nothing."""
    if not rows or limits.max_unjudged is None:
        return []
    judged = sum(1 for value in refs.values() if value > floor + 1e-12)
    share = 1 - judged / rows
    if share <= limits.max_unjudged:
        return []
    message = (
        f"not exercised: on {rows - judged} of {rows} rows no reference completion scored above {floor:g}, the "
        f"lowest score anything got, so the probes there say nothing; {_ADVICE}"
    )
    return [Finding("reference", "not_exercised", message, share, limits.max_unjudged)]
