"""Helpers for testing your own rewards with pytest: expected scores, gaming probes, reference solutions.

A test file for a reward takes a few lines (see ``examples/test_my_reward.py``)::

    import pytest
    from rewardsmith.testing import assert_gold_is_max, assert_not_gamed, assert_scores, probe_cases

    ROWS = [{"prompt": "2 + 2?", "answer": "4", "solution": "<think>2 and 2</think><answer>4</answer>"}]

    def test_expected_scores():
        assert_scores(my_reward, [("<answer>4</answer>", {"answer": "4"}, 1.0), ("4 or 5", {"answer": "4"}, 0.0)])

    @pytest.mark.parametrize("case", probe_cases(my_reward, ROWS), ids=str)
    def test_cannot_be_gamed(case):
        assert_not_gamed(case)

    def test_reference_solutions_score_the_maximum():
        assert_gold_is_max(my_reward, ROWS)

The probes are those of ``rewardsmith check`` (:mod:`rewardsmith.check.probes`),
generated from your rows: each case is one probe on one row, and fails when
the probe scores as high as that row's reference (its reference solution, or
the reference answer in the format your reward rewards). A probe that only
matters for some rewards (a bare answer only for rewards that give credit to
the format itself; a wrong answer in the right format only for rewards that
check the answer) is skipped, saying why, when it does not apply to yours.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.check.checks import references, sensitivity
from rewardsmith.check.findings import Record, preview, reaches
from rewardsmith.check.probes import FAMILIES, Probe, calibration, format_trials, make_probes
from rewardsmith.check.rows import Format, RowContext, build_rows, candidate_formats, choose_formats
from rewardsmith.check.scoring import Sample, Scorer
from rewardsmith.check.trajectory_probes import applies as trajectory_applies
from rewardsmith.core.registry import get_reward
from rewardsmith.core.reward import Reward

__all__ = ["ProbeCase", "assert_check_passes", "assert_gold_is_max", "assert_not_gamed", "assert_scores", "probe_cases"]


def _as_reward(reward: Any) -> Reward:
    import rewardsmith.compose  # noqa: F401 - registers the config entry kinds

    return get_reward(reward)


def assert_scores(reward: Any, cases: Iterable[Any], *, tolerance: float = 1e-9) -> None:
    """Every case scores as expected; one ``AssertionError`` lists every case that does not, with the reason.

    A case is ``(completion, columns, expected)``, or a dict with ``completion``,
    ``expected``, an optional ``prompt`` and the columns. ``expected`` may be
    ``None`` (the reward must not apply).

    >>> assert_scores("gsm8k_accuracy", [("#### 4", {"answer": "4"}, 1.0), ("#### 5", {"answer": "4"}, 0.0)])
    >>> assert_scores("gsm8k_accuracy", [("#### 5", {"answer": "4"}, 1.0)])
    Traceback (most recent call last):
    ...
    AssertionError: 1 of 1 cases scored otherwise:
      case 0: expected 1.0, got 0.0 (predicted 5 (####), reference 4) for '#### 5'
    """
    made = _as_reward(reward)
    wrong = []
    items = list(cases)
    for i, case in enumerate(items):
        if isinstance(case, dict):
            columns = {k: v for k, v in case.items() if k not in ("completion", "expected", "prompt")}
            completion, expected, prompt = case["completion"], case["expected"], case.get("prompt")
        else:
            completion, columns, expected = case
            prompt = None
        result = made.check(completion, prompt, **columns)
        ok = (result.score is None) if expected is None else (
            result.score is not None and math.isclose(result.score, expected, rel_tol=tolerance, abs_tol=tolerance)
        )  # fmt: skip
        if not ok:
            why = f" ({result.reason})" if result.reason else ""
            wrong.append(f"case {i}: expected {expected}, got {result.score}{why} for {preview(completion, 80)!r}")
    if wrong:
        raise AssertionError(f"{len(wrong)} of {len(items)} cases scored otherwise:\n  " + "\n  ".join(wrong))


def assert_gold_is_max(
    reward: Any, rows: Sequence[dict[str, Any]], *, gold_column: str = "solution", maximum: float | None = None
) -> None:
    """Every row's reference solution (``gold_column``) scores the maximum: ``maximum``, else the top of the
    reward's ``score_range``, else the best score any of them gets. Lists every miss with the reward's reason.

    >>> rows = [{"prompt": "2+2?", "answer": "4", "solution": "2 and 2 make 4.\\n#### 4"}]
    >>> assert_gold_is_max("gsm8k_accuracy", rows)
    """
    made = _as_reward(reward)
    scored = []
    for i, row in enumerate(rows):
        columns = {k: v for k, v in row.items() if k not in ("prompt", gold_column)}
        scored.append((i, row[gold_column], made.check(row[gold_column], row.get("prompt"), **columns)))
    top = maximum
    if top is None:
        values = [r.score for _, _, r in scored if r.score is not None]
        top = made.score_range[1] if made.score_range else max(values, default=1.0)
    misses = [
        f"row {i}: {r.score} ({r.reason}) for {preview(g, 80)!r}" for i, g, r in scored if not reaches(r.score, top)
    ]
    if misses:
        raise AssertionError(f"{len(misses)} of {len(rows)} reference solutions score below {top:g}:\n  " +
                             "\n  ".join(misses))  # fmt: skip


@dataclass
class _Suite:
    """What the probe cases of one reward and one set of rows share: the rows, the formats, the references."""

    reward: Reward
    contexts: list[RowContext]
    candidates: list[Format]
    formats: list[Format]
    timeout: float | None
    _scorer: Scorer | None = None
    _judged: dict[str, Any] = field(default_factory=dict)

    @property
    def scorer(self) -> Scorer:
        if self._scorer is None:
            self._scorer = Scorer(self.reward, self.timeout)
        return self._scorer

    def score(self, ctx: RowContext, probes: list[Probe]) -> list[Record]:
        outcomes = self.scorer.score([Sample(ctx.prompt, p.completion, ctx.columns) for p in probes])
        return [
            Record(ctx.index, p.family, p.variant, p.judged, o.score, o.reason, o.failure, o.seconds,
                   len(str(p.completion)), preview(p.completion))
            for p, o in zip(probes, outcomes)
        ]  # fmt: skip

    def judged(self) -> dict[str, Any]:
        """References per row, the floor, and what the reward rewards (scored once, on the first case)."""
        if not self._judged:
            records: list[Record] = []
            for ctx in self.contexts:
                extra = [Probe("gold", "solution", ctx.gold)] if ctx.gold is not None else []
                records += self.score(ctx, calibration(ctx, self.candidates, self.formats[0]) + extra)
                wrong = [p for p in make_probes(ctx, self.formats) if p.variant == "wrong_answer"]
                records += self.score(ctx, wrong)
            refs, floor, _ = references(self.reward, records)
            judged = {"refs": refs, "floor": floor, **sensitivity(self.reward, records, refs, floor)}
            self._judged = {**judged, "applies": trajectory_applies(records)}
        return self._judged


@dataclass
class ProbeCase:
    """One probe on one row, for :func:`assert_not_gamed`; ``str(case)`` is its test id."""

    probe: Probe
    row: RowContext
    suite: _Suite

    def __str__(self) -> str:
        return f"{self.probe.family}-{self.probe.variant}-row{self.row.index}"


def probe_cases(
    reward: Any,
    rows: Sequence[dict[str, Any]],
    *,
    families: Sequence[str] | None = None,
    answer_column: str | None = None,
    gold_column: str | None = "solution",
    timeout: float | None = None,
) -> list[ProbeCase]:
    """The gaming probes of ``rows`` as test cases, for ``@pytest.mark.parametrize("case", ..., ids=str)``.

    ``rows`` are dicts with ``prompt`` and the columns the reward reads;
    ``answer_column`` holds the reference answers (default: the first column
    the reward declares, else ``answer``), ``gold_column`` the reference
    solutions when the rows have it. ``families`` picks probe families (default:
    all but the 1 MB ones; add ``"huge"`` to include them). ``timeout``
    scores each sample in a worker process that is killed after that many seconds.

    >>> rows = [{"prompt": "2+2?", "answer": "4", "solution": "2 and 2 make 4.\\n#### 4"}]
    >>> cases = probe_cases("gsm8k_accuracy", rows, families=["hedging"])
    >>> str(cases[0]), cases[0].probe.completion
    ('hedging-two_hashes_right_last-row0', '#### 5\\n#### 4')
    """
    made = _as_reward(reward)
    gold = gold_column if rows and gold_column in rows[0] else None
    contexts, _ = build_rows(list(rows), made, answer_column=answer_column, gold_column=gold)
    candidates = candidate_formats([c.gold or "" for c in contexts], [c.prompt_text for c in contexts], made)
    scorer = Scorer(made, timeout)
    scores: dict[Format, list[float]] = {f: [] for f in candidates}
    for ctx in contexts[:5]:
        trials = format_trials(ctx, candidates)
        for f, outcome in zip(
            candidates, scorer.score([Sample(ctx.prompt, p.completion, ctx.columns) for p in trials])
        ):
            if outcome.score is not None:
                scores[f].append(outcome.score)
    suite = _Suite(made, contexts, candidates, choose_formats(candidates, scores), timeout, scorer)
    chosen = set(families) if families is not None else set(FAMILIES) - {"huge"}
    return [ProbeCase(p, ctx, suite) for ctx in contexts for p in make_probes(ctx, suite.formats) if p.family in chosen]


def assert_not_gamed(case: ProbeCase) -> None:
    """The probe scores below its row's reference; skipped (pytest) when the probe does not apply to the reward."""
    judged = case.suite.judged()
    applies = {"always": True, "format": judged["format"], "content": judged["content"], **judged["applies"]}
    applies = applies[case.probe.judged]
    reference = judged["refs"].get(case.row.index)
    if not applies or reference is None or reference <= judged["floor"]:
        import pytest

        why = {
            "format": "the reward gives the format no credit of its own",
            "content": "the reward does not check the answer",
            "tools": "the reward does not read tool calls",
            "results": "the reward does not read tool results",
            "repeats": "the reward does not pay more for a repeated call",
            "answer": "the reward does not check a rollout's answer",
        }.get(case.probe.judged, f"no reference on row {case.row.index} scores above {judged['floor']:g}")
        pytest.skip(f"{case}: does not apply ({why})")
    (record,) = case.suite.score(case.row, [case.probe])
    if reaches(record.score, reference):
        raise AssertionError(
            f"{case.probe.family} probe {case.probe.variant!r} on row {case.row.index} scores {record.score:g}, "
            f"as high as the reference ({reference:g}): {record.reason or 'no reason given'}\n"
            f"completion: {record.preview!r}"
        )


def assert_check_passes(reward: Any, dataset: Any, **options: Any) -> None:
    """``rewardsmith check`` on ``dataset`` finds nothing (options as for :func:`rewardsmith.check.check`);
    the ``AssertionError`` lists every finding."""
    from rewardsmith.check import check

    options.setdefault("progress", False)
    report = check(reward, dataset, **options)
    if report.findings:
        raise AssertionError(f"rewardsmith check found {len(report.findings)}:\n  " +
                             "\n  ".join(f.message for f in report.findings))  # fmt: skip
