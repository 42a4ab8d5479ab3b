"""The registry of IFEval constraints: constraint id -> checker, its arguments, and what it checks.

A constraint is a function ``check(response, args) -> bool`` registered with
:func:`constraint` under IFEval's id (``"punctuation:no_comma"``) and the
arguments it takes. :meth:`Constraint.bind` checks and normalises a data
row's arguments once (the way IFEval's ``build_description`` does: keywords
and phrases stripped where it strips them, letters and first words lower
case), so a bad row is an error naming the constraint and the argument,
never a silent guess. IFEval itself fills a missing argument with a random
value; here a missing argument is an error.

>>> sorted(CONSTRAINTS)[:3]
['change_case:capital_word_frequency', 'change_case:english_capital', 'change_case:english_lowercase']
>>> get_constraint("punctuation:no_coma")
Traceback (most recent call last):
...
rewardsmith.rewards.ifeval.registry.ConstraintError: unknown IFEval constraint id 'punctuation:no_coma'. ...
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rewardsmith.core.errors import DatasetError
from rewardsmith.core.names import did_you_mean, first_line

__all__ = ["CONSTRAINTS", "RELATIONS", "Arg", "Constraint", "ConstraintError", "constraint", "get_constraint"]

#: IFEval's comparison relations.
RELATIONS = ("less than", "at least")

Check = Callable[[str, Mapping[str, Any]], bool]


class ConstraintError(DatasetError):
    """A constraint in the data that cannot be checked: an unknown id, or a missing or invalid argument."""


@dataclass(frozen=True)
class Arg:
    """One argument of a constraint.

    ``kind``: ``int`` (a whole number >= 0), ``text`` (a non-empty string),
    ``words`` (a non-empty list of non-empty strings), ``relation`` (one of
    :data:`RELATIONS`). ``normalize`` turns the valid value into what the
    checker reads (a ``ValueError`` it raises says what is wrong with it).
    """

    name: str
    kind: str
    normalize: Callable[[Any], Any] | None = None


@dataclass(frozen=True)
class Constraint:
    """A registered constraint: its id, its checker, its arguments and a one-line description."""

    id: str
    check: Check
    args: tuple[Arg, ...]
    description: str

    def bind(self, kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
        """The checker's arguments from a data row's ``kwargs`` (``None`` values are absent, as in IFEval's data).

        >>> get_constraint("keywords:frequency").bind({"keyword": " war ", "frequency": 2, "relation": "at least"})
        {'keyword': 'war', 'frequency': 2, 'relation': 'at least'}
        >>> get_constraint("keywords:frequency").bind({"keyword": "war", "relation": "at least"})
        Traceback (most recent call last):
        ...
        rewardsmith.rewards.ifeval.registry.ConstraintError: IFEval constraint 'keywords:frequency' needs ...
        """
        given = {k: v for k, v in (kwargs or {}).items() if v is not None}
        unknown = sorted(set(given) - {a.name for a in self.args})
        if unknown:
            raise ConstraintError(
                f"IFEval constraint {self.id!r} takes no argument {unknown[0]!r} (it takes: "
                f"{', '.join(a.name for a in self.args) or 'none'})"
            )
        out = {}
        for arg in self.args:
            if arg.name not in given:
                raise ConstraintError(
                    f"IFEval constraint {self.id!r} needs the argument {arg.name!r} ({_KIND_WORDS[arg.kind]}); "
                    f"the row gives {dict(kwargs or {})!r}"
                )
            value = _valid(self.id, arg, given[arg.name])
            try:
                out[arg.name] = arg.normalize(value) if arg.normalize else value
            except ValueError as exc:
                raise ConstraintError(f"IFEval constraint {self.id!r}: argument {arg.name!r} {exc}") from None
        return out


_KIND_WORDS = {
    "int": "a whole number >= 0",
    "text": "a non-empty text",
    "words": "a list of non-empty texts",
    "relation": "'less than' or 'at least'",
}


def _valid(constraint_id: str, arg: Arg, value: Any) -> Any:
    def bad() -> ConstraintError:
        return ConstraintError(
            f"IFEval constraint {constraint_id!r}: argument {arg.name!r} must be {_KIND_WORDS[arg.kind]}, got {value!r}"
        )

    if arg.kind == "int":
        if isinstance(value, bool):
            raise bad()
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        elif isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if not isinstance(value, int) or value < 0:
            raise bad()
        return value
    if arg.kind == "relation":
        if value not in RELATIONS:
            raise bad()
        return value
    if arg.kind == "words":
        if isinstance(value, str) or not isinstance(value, (list, tuple)) or not value:
            raise bad()
        if not all(isinstance(w, str) and w.strip() for w in value):
            raise bad()
        return list(value)
    if not isinstance(value, str) or not value.strip():
        raise bad()
    return value


#: Every registered constraint, by id.
CONSTRAINTS: dict[str, Constraint] = {}


def constraint(constraint_id: str, *args: Arg) -> Callable[[Check], Check]:
    """Register ``check(response, args) -> bool`` as the checker of ``constraint_id`` (its docstring describes it).

    >>> @constraint("demo:shout", Arg("min_letters", "int"))
    ... def shout(response, args):
    ...     '''The response is in capitals and has at least `min_letters` letters.'''
    ...     return response.isupper() and sum(c.isalpha() for c in response) >= args["min_letters"]
    >>> get_constraint("demo:shout").check("HELLO", {"min_letters": 3})
    True
    >>> del CONSTRAINTS["demo:shout"]
    """

    def register(check: Check) -> Check:
        if constraint_id in CONSTRAINTS:
            raise ValueError(f"IFEval constraint {constraint_id!r} is already registered")
        CONSTRAINTS[constraint_id] = Constraint(constraint_id, check, args, first_line(check.__doc__))
        return check

    return register


def get_constraint(constraint_id: Any) -> Constraint:
    """The registered constraint with this id, or a :class:`ConstraintError` naming it and the closest ids."""
    found = CONSTRAINTS.get(constraint_id) if isinstance(constraint_id, str) else None
    if found is None:
        hint = did_you_mean(str(constraint_id), CONSTRAINTS)
        raise ConstraintError(
            f"unknown IFEval constraint id {constraint_id!r}.{hint} Known ids: {', '.join(sorted(CONSTRAINTS))}"
        )
    return found
