"""The constraints of a data row: IFEval's ``instruction_id_list`` + ``kwargs`` columns, or one ground-truth column.

Two layouts are read:

* IFEval's own (``google/IFEval``, ``input_data.jsonl``): a list of
  constraint ids and a parallel list of argument dicts (``None`` values, as
  in the Hugging Face copy, mean "absent"; a ``None`` dict means no
  arguments);
* Tulu 3 / open-instruct style: one column (``ground_truth``) holding
  ``{"instruction_id": [...], "kwargs": [...]}``, as a dict, a JSON string
  or a Python-literal string, possibly wrapped in a one-element list
  (``"[{'instruction_id': [...], 'kwargs': [...]}]"``).

Every id and argument is checked here, so a bad row is a
:class:`~rewardsmith.rewards.ifeval.registry.ConstraintError` naming it.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from rewardsmith.rewards.ifeval.registry import Constraint, ConstraintError, get_constraint

__all__ = ["Bound", "parse_constraints", "parse_ground_truth"]


class Bound(NamedTuple):
    """A constraint with its checked arguments, ready to check responses."""

    constraint: Constraint
    args: dict[str, Any]

    @property
    def id(self) -> str:
        """The constraint's id."""
        return self.constraint.id

    def check(self, response: str) -> bool:
        """Whether ``response`` follows this constraint (strict: the response as it is)."""
        return bool(self.constraint.check(response, self.args))


def parse_constraints(ids: Any, kwargs: Any = None) -> list[Bound]:
    """The constraints of one row in IFEval's layout: ``ids`` and the parallel ``kwargs`` (``None``: no arguments).

    ``kwargs`` may also be a JSON text of that list.

    >>> [b.id for b in parse_constraints(["punctuation:no_comma", "keywords:existence"], [{}, {"keywords": ["cat"]}])]
    ['punctuation:no_comma', 'keywords:existence']
    >>> parse_constraints(["punctuation:no_comma"], [{}, {}])
    Traceback (most recent call last):
    ...
    rewardsmith.rewards.ifeval.registry.ConstraintError: 1 constraint id but 2 kwargs entries: ...
    """
    if isinstance(ids, str) or not isinstance(ids, Sequence) or isinstance(ids, bytes):
        if hasattr(ids, "tolist"):  # a numpy array from a pandas or Arrow column
            ids = ids.tolist()
        else:
            raise ConstraintError(f"the constraint ids must be a list of ids, got {ids!r}")
    if kwargs is None:
        kwargs = [None] * len(ids)
    elif isinstance(kwargs, str):  # stored as JSON text (as the ifeval converter writes it)
        kwargs = _literal(kwargs)
    elif hasattr(kwargs, "tolist"):
        kwargs = kwargs.tolist()
    if isinstance(kwargs, (str, bytes)) or not isinstance(kwargs, Sequence):
        raise ConstraintError(f"the constraint kwargs must be a list of dicts parallel to the ids, got {kwargs!r}")
    if len(kwargs) != len(ids):
        raise ConstraintError(
            f"{len(ids)} constraint id{'s' if len(ids) != 1 else ''} but {len(kwargs)} kwargs entries: "
            "they must be parallel lists"
        )
    out = []
    for constraint_id, args in zip(ids, kwargs):
        if args is not None and not isinstance(args, Mapping):
            raise ConstraintError(f"the arguments of constraint {constraint_id!r} must be a dict, got {args!r}")
        found = get_constraint(constraint_id)
        out.append(Bound(found, found.bind(args)))
    return out


def parse_ground_truth(value: Any) -> list[Bound]:
    """The constraints of one row in Tulu 3 / open-instruct style (one ground-truth value).

    >>> [b.id for b in parse_ground_truth('[{"instruction_id": ["detectable_format:title"], "kwargs": [null]}]')]
    ['detectable_format:title']
    >>> [b.id for b in parse_ground_truth("{'instruction_id': ['punctuation:no_comma'], 'kwargs': [{}]}")]
    ['punctuation:no_comma']
    """
    data = value
    if isinstance(data, str):
        data = _literal(data)
    if isinstance(data, (list, tuple)) and len(data) == 1:
        data = data[0]
        if isinstance(data, str):
            data = _literal(data)
    if not isinstance(data, Mapping):
        raise ConstraintError(
            "a ground truth must be {'instruction_id': [...], 'kwargs': [...]} (a dict, JSON, or a list holding one), "
            f"got {str(value)[:200]!r}"
        )
    if "func_name" in data:
        raise ConstraintError(
            f"this ground truth uses open-instruct's older 'func_name' layout ({data['func_name']!r}), which names "
            "functions, not IFEval constraint ids; convert it to {'instruction_id': [...], 'kwargs': [...]}"
        )
    ids = data.get("instruction_id", data.get("instruction_id_list"))
    if ids is None:
        raise ConstraintError(f"the ground truth has no 'instruction_id' list: {str(value)[:200]!r}")
    return parse_constraints(ids, data.get("kwargs"))


def _literal(text: str) -> Any:
    if len(text) > 1_000_000:
        raise ConstraintError(f"the constraints are {len(text):,} characters long; that is not a constraint list")
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        raise ConstraintError(f"cannot read the ground truth as JSON or a Python literal: {text[:200]!r}") from None
