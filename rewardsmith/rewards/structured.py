"""Structured output: ``json_schema`` (JSON matching a schema); tool calls are in ``rewards.tool_match``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from rewardsmith.core.engine import OnError
from rewardsmith.core.injection import Column, Input, Value
from rewardsmith.core.registry import register_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward
from rewardsmith.core.trajectory import strict_json
from rewardsmith.rewards._text import fenced_blocks, tag_blocks, visible_text
from rewardsmith.rewards.json_formats import schema_validator

__all__ = ["JSONSchema", "extract_json", "strict_json"]

_NOT_FOUND = object()


def _loads(text: str) -> Any:
    try:
        return strict_json(text)
    except (ValueError, RecursionError):
        return _NOT_FOUND


def extract_json(completion: str) -> tuple[Any, str]:
    """The JSON value a completion gives: the whole text, else its last fenced block, else its ``<answer>`` block.

    Returns the value (or a sentinel when none parses) and where it came from.

    >>> extract_json('Here you go:\\n```json\\n{"a": 1}\\n```')
    ({'a': 1}, 'fenced block')
    >>> extract_json("no json")[1]
    'no parseable JSON'
    """
    completion = visible_text(completion)
    value = _loads(completion.strip())
    if value is not _NOT_FOUND:
        return value, "whole completion"
    fenced = fenced_blocks(completion, ("", "json"))
    if fenced:
        value = _loads(fenced[-1].strip())
        if value is not _NOT_FOUND:
            return value, "fenced block"
    blocks = tag_blocks(completion, "answer", limit=1)
    if blocks and len(blocks) == 1:
        value = _loads(blocks[0].strip())
        if value is not _NOT_FOUND:
            return value, "<answer> block"
    return _NOT_FOUND, "no parseable JSON"


@lru_cache(maxsize=256)
def _validator(schema_json: str) -> Any:
    return schema_validator(json.loads(schema_json))


def _schema_key(schema: Any) -> str:
    if isinstance(schema, str):
        schema = json.loads(schema)
    if not isinstance(schema, (dict, bool)):
        raise ValueError(f"a JSON Schema is an object, got {type(schema).__name__}")
    return json.dumps(schema, sort_keys=True)


@register_reward("json_schema")
@dataclass
class JSONSchema(Reward):
    """The completion is JSON (whole, in a fenced ```json block, or in ``<answer>``) that validates against a schema.

    The schema is the ``schema`` setting, or else the row's ``schema_column``
    (an object or a JSON string); rows without a usable schema score
    ``None``. Valid: 1.0. With ``partial_credit``, JSON that parses but fails
    validation scores half the share of the schema's top-level properties it
    gives and gets right (an absent property earns nothing, so ``{}`` never
    beats an attempt); otherwise 0. Schemas are read as the standard reads
    them: ``format`` is checked (``email``, ``date-time``, ``ipv4``, ...) and
    ``pattern`` has ECMA-262 semantics (:mod:`rewardsmith.rewards.json_formats`).

    Columns: ``schema`` (configurable; not needed with the ``schema`` setting). Range: [0, 1] or None.

    >>> schema = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    ...           "required": ["name", "age"]}
    >>> r = JSONSchema(schema=schema, partial_credit=True)
    >>> r(completions=['{"name": "Ada", "age": 36}', '```json\\n{"name": "Ada", "age": "old"}\\n```', "Ada, 36"])
    [1.0, 0.25, 0.0]
    """

    default_name = "json_schema"
    score_range = (0.0, 1.0)

    schema: Any = None
    schema_column: str = "schema"
    partial_credit: bool = False
    #: A sample whose check crashes scores as an invalid answer.
    on_error: OnError = field(default="zero", kw_only=True)

    def inputs(self) -> dict[str, Input]:
        return {"row_schema": Value(self.schema) if self.schema is not None else Column(self.schema_column)}

    def score(self, completion: str, row_schema: Any) -> RewardResult:
        if row_schema is None:
            return RewardResult(None, "no schema for this row")
        try:
            key = _schema_key(row_schema)
            validator = _validator(key)
        except Exception as exc:  # an invalid schema makes the row unscorable, not the completion wrong
            return RewardResult(None, f"unusable schema: {str(exc).splitlines()[0][:120]}")
        value, where = extract_json(completion)
        if value is _NOT_FOUND:
            return RewardResult(0.0, where)
        try:
            errors = list(validator.iter_errors(value))
        except RecursionError:
            return RewardResult(0.0, "JSON nested too deeply to validate")
        if not errors:
            return RewardResult(1.0, f"valid ({where})")
        first = errors[0].message[:120]
        if not self.partial_credit:
            return RewardResult(0.0, f"{len(errors)} schema error(s): {first}")
        share = _property_share(json.loads(key), value, validator)
        return RewardResult(0.5 * share, f"{len(errors)} schema error(s): {first}")


def _property_share(schema: Any, value: Any, validator: Any) -> float:
    """Share of the schema's top-level properties that a JSON object gives, valid."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(value, dict) or not isinstance(properties, dict) or not properties:
        return 0.0
    right = 0
    for name, subschema in properties.items():
        if name not in value:  # absent earns nothing: emptiness never beats an attempt
            continue
        try:
            right += validator.evolve(schema=subschema).is_valid(value[name])
        except Exception:  # a sub-schema that cannot stand alone (e.g. a $ref) counts as wrong
            continue
    return right / len(properties)
