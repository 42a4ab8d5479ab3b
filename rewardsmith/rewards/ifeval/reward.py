"""The ``ifeval`` reward: the share of a row's IFEval constraints that a completion follows, strict or loose.

IFEval's two modes:

* ``strict``: each constraint is checked on the response as it is;
* ``loose``: a constraint is followed when it holds for any of eight
  variants of the response: as it is, without its first line, without its
  last line, without both, and each of these with every ``*`` removed
  (lines are split on ``\\n``; the variants without a line are stripped).
  This forgives a preamble ("Sure, here it is:"), a closing remark, and
  markdown emphasis.

In both modes an empty (or blank) response follows nothing. The response is
checked as it is seen (:func:`~rewardsmith.rewards._text.visible_text`):
zero-width and other invisible characters are removed first, so they neither
fill a blank response, split a word into more words, nor hide a forbidden one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.extras import require_extra
from rewardsmith.core.injection import Column, Input
from rewardsmith.core.inputs import Batch
from rewardsmith.core.registry import register_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward
from rewardsmith.rewards._text import visible_text
from rewardsmith.rewards.ifeval.registry import ConstraintError
from rewardsmith.rewards.ifeval.spec import Bound, parse_constraints, parse_ground_truth
from rewardsmith.rewards.reasoning import after_reasoning

__all__ = ["IFEval", "follows", "ifeval_verdicts", "loose_variants", "row_constraints"]

Mode = Literal["strict", "loose"]
_MODES = ("strict", "loose")


def loose_variants(response: str) -> list[str]:
    """IFEval's loose variants of a response, without repeats (blank ones included; they follow nothing).

    >>> loose_variants("Sure!\\n**Hi**\\nBye")  # doctest: +NORMALIZE_WHITESPACE
    ['Sure!\\n**Hi**\\nBye', 'Sure!\\nHi\\nBye', '**Hi**\\nBye', 'Sure!\\n**Hi**', '**Hi**',
     'Hi\\nBye', 'Sure!\\nHi', 'Hi']
    """
    lines = response.split("\n")
    without_first = "\n".join(lines[1:]).strip()
    without_last = "\n".join(lines[:-1]).strip()
    without_both = "\n".join(lines[1:-1]).strip()
    variants = [response, response.replace("*", ""), without_first, without_last, without_both]
    variants += [v.replace("*", "") for v in (without_first, without_last, without_both)]
    return list(dict.fromkeys(variants))


def follows(constraint: Bound, response: str, mode: Mode = "strict", variants: Sequence[str] | None = None) -> bool:
    """Whether ``response`` follows one constraint in IFEval's ``strict`` or ``loose`` mode.

    ``variants`` are the loose variants when already computed (they are the
    same for every constraint of a response).

    >>> title = parse_constraints(["detectable_format:title"])[0]
    >>> follows(title, "Sure.\\n<<Ode>>"), follows(title, "<< >>\\nx"), follows(title, "<< >>\\nx", "loose")
    (True, False, False)
    """
    if mode == "strict":
        return bool(response.strip()) and constraint.check(response)
    return any(v.strip() and constraint.check(v) for v in (variants or loose_variants(response)))


def row_constraints(ids: Any, kwargs: Any = None) -> list[Bound]:
    """A row's constraints from IFEval's columns (a list of ids, and kwargs), or from one ground-truth value.

    >>> [b.id for b in row_constraints(["punctuation:no_comma"], [{}])]
    ['punctuation:no_comma']
    >>> [b.id for b in row_constraints('{"instruction_id": ["startend:quotation"], "kwargs": [{}]}')]
    ['startend:quotation']
    >>> row_constraints(None)  # a row without constraints (another task's row in mixed data)
    []
    """
    if ids is None:
        return []
    if isinstance(ids, (str, bytes, Mapping)):
        return parse_ground_truth(ids)
    if isinstance(ids, Sequence) and len(ids) == 1 and isinstance(ids[0], (str, Mapping)):
        only = ids[0]
        if isinstance(only, Mapping) or only.lstrip().startswith(("{", "[")):
            return parse_ground_truth(ids)
    return parse_constraints(ids, kwargs)


def ifeval_verdicts(response: str, instruction_id_list: Any, kwargs: Any = None, mode: Mode = "strict") -> list[bool]:
    """IFEval's verdict for each constraint of a row, in order: the reference checker's ``follow_instruction_list``.

    >>> ifeval_verdicts("<<Hello>> there, friend", ["detectable_format:title", "punctuation:no_comma"], [{}, {}])
    [True, False]
    """
    constraints = row_constraints(instruction_id_list, kwargs)
    variants = loose_variants(response) if mode == "loose" else None
    return [follows(c, response, mode, variants) for c in constraints]


@register_reward("ifeval", aliases=("instruction_following",))
@dataclass
class IFEval(Reward):
    """Verifiable instruction following (IFEval's 25 constraint types): the share of the row's constraints followed.

    The constraints come from IFEval's columns, ``instruction_id_list`` and
    ``kwargs`` (as in ``google/IFEval``), or from one ``ground_truth`` column
    holding ``{"instruction_id": [...], "kwargs": [...]}`` (Tulu 3 /
    open-instruct style). ``mode`` is IFEval's ``strict`` (default) or
    ``loose`` (also tries the response without its first or last line, and
    without ``*``). With ``all_or_nothing`` the score is 1 only when every
    constraint is followed (IFEval's prompt-level accuracy). Only the text
    after the reasoning is checked (after the last ``</think>``, as
    open-instruct's verifier does; set ``think_tag=None`` to check the whole
    completion).

    Each constraint's verdict is in the result's metrics (keyed by its id;
    a repeated id gets ``#2``), and each constraint type's follow rate in a
    batch is logged to TRL as ``ifeval/<id>``. An unknown id or a missing
    argument is a :class:`~rewardsmith.rewards.ifeval.ConstraintError` naming
    it, raised before any sample of the batch is scored. A row with no
    constraints (an empty list, or ``None`` in mixed data) scores ``None``. Needs ``pip install 'rewardsmith[text]'``
    for the sentence, capital-word and language constraints.

    Columns: ``instruction_id_list`` and ``kwargs``, or ``ground_truth``.
    Range: [0, 1] or None.

    >>> r = IFEval()
    >>> r(completions=["<<Ode to Joy>>\\nJoy and more joy", "Joy, joy"],
    ...   instruction_id_list=[["detectable_format:title", "punctuation:no_comma"]] * 2, kwargs=[[{}, {}]] * 2)
    [1.0, 0.0]
    >>> answer = "Sure! Here it is:\\n*THIS IS MY ANSWER IN CAPITAL LETTERS ONLY.*"
    >>> [IFEval(mode=m).check(answer, instruction_id_list=["change_case:english_capital"], kwargs=[{}]).score
    ...  for m in ("strict", "loose")]
    [0.0, 1.0]
    """

    default_name = "ifeval"
    score_range = (0.0, 1.0)

    mode: Mode = "strict"
    all_or_nothing: bool = False
    think_tag: str | None = "think"
    instructions_column: str = "instruction_id_list"
    kwargs_column: str = "kwargs"
    ground_truth_column: str = "ground_truth"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.mode not in _MODES:
            raise RewardConfigError(f"reward {self.name!r}: mode must be 'strict' or 'loose', got {self.mode!r}")
        # Checked when the reward is made, so a missing extra stops a run before training, not in its first step.
        require_extra(
            "text", f"reward {self.name!r} (sentences, word tokens, languages)", ["nltk", "punkt", "langdetect"]
        )

    def inputs(self) -> dict[str, Input]:
        return {
            "ids": Column(self.instructions_column, self.ground_truth_column),
            "arguments": Column(self.kwargs_column, required=False),
        }

    def check_data(self, columns: dict[str, Sequence[Any]]) -> None:
        """Every row's constraints, before training: a :class:`ConstraintError` naming the bad rows (up to five)."""
        ids = columns.get("ids")
        if ids is None:
            return
        arguments = columns.get("arguments") or [None] * len(ids)
        problems = []
        for row, (row_ids, row_arguments) in enumerate(zip(ids, arguments)):
            try:
                row_constraints(row_ids, row_arguments)
            except ConstraintError as exc:
                problems.append(f"row {row}: {str(exc)[:300]}")
        if problems:
            more = f"\n  ... and {len(problems) - 5} more rows" if len(problems) > 5 else ""
            raise ConstraintError(
                f"reward {self.name!r}: {len(problems)} row(s) hold constraints it cannot check:\n  "
                + "\n  ".join(problems[:5])
                + more
            )

    def score_batch(self, batch: Batch) -> list[Any]:
        """Check every row's constraints first (a bad row is an error before anything is scored), then score."""
        rows = self.injection.rows(batch)
        for row in rows:
            row_constraints(row["ids"], row.get("arguments"))
        values = self.run_samples(rows)
        if batch.log_metric is not None:
            _log_rates(batch, self.name, values)
        return values

    def score(self, completion: str, ids: Any, arguments: Any = None) -> RewardResult:
        constraints = row_constraints(ids, arguments)
        if not constraints:
            return RewardResult(None, "the row has no constraints")
        response = completion = visible_text(completion)  # checked as it is seen: zero-width characters count nothing
        if self.think_tag:  # the answer after the reasoning, as open-instruct's IFEval verifier reads it
            response = after_reasoning(completion, (f"</{self.think_tag}>",))
            if response is None:
                response = completion
        variants = loose_variants(response) if self.mode == "loose" else None
        verdicts = [follows(c, response, self.mode, variants) for c in constraints]
        metrics: dict[str, float] = {}
        for c, ok in zip(constraints, verdicts):
            key, n = c.id, 1
            while key in metrics:
                n += 1
                key = f"{c.id}#{n}"
            metrics[key] = float(ok)
        met = sum(verdicts)
        missed = [c.id for c, ok in zip(constraints, verdicts) if not ok]
        value = float(met == len(verdicts)) if self.all_or_nothing else met / len(verdicts)
        reason = f"{met}/{len(verdicts)} constraints followed ({self.mode})"
        if missed:
            reason += "; not followed: " + ", ".join(missed)
        return RewardResult(value, reason, metrics)


def _log_rates(batch: Batch, name: str, values: list[Any]) -> None:
    """Each constraint type's follow rate in the batch, through TRL's ``log_metric``."""
    followed: dict[str, list[float]] = defaultdict(list)
    for value in values:
        if isinstance(value, RewardResult):
            for key, ok in value.metrics.items():
                followed[key.split("#", 1)[0]].append(ok)
    assert batch.log_metric is not None
    for constraint_id, oks in sorted(followed.items()):
        batch.log_metric(f"{name}/{constraint_id}", sum(oks) / len(oks))
