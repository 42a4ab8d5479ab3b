"""Structured output: ``json_schema`` (JSON matching a schema) and ``tool_call_match`` (the expected tool calls)."""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

from rewardsmith.core.engine import OnError
from rewardsmith.core.injection import Column, Input, Value
from rewardsmith.core.registry import register_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward
from rewardsmith.rewards._text import fenced_blocks, paired_blocks, tag_blocks, visible_text
from rewardsmith.rewards.json_formats import schema_validator

__all__ = ["JSONSchema", "ToolCallMatch", "extract_json", "normalise_tool_calls", "strict_json"]

_NOT_FOUND = object()


def _not_a_number(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of the range of a JSON number")
    return value


def strict_json(text: str) -> Any:
    """``text`` parsed as standard JSON: ``NaN``, ``Infinity`` and numbers that overflow to infinity are errors.

    Python's ``json`` accepts ``NaN`` (which passes every ``minimum``/``maximum``
    check of a schema, since no comparison with it is true); the standard does not.

    >>> strict_json('{"p": 0.5}')
    {'p': 0.5}
    >>> strict_json('{"p": NaN}')
    Traceback (most recent call last):
    ...
    ValueError: NaN is not JSON
    """
    return json.loads(text, parse_constant=_not_a_number, parse_float=_finite)


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


# -- tool calls ---------------------------------------------------------------------------------------


def _canonical(value: Any) -> Any:
    """A hashable form in which JSON-equal values are equal (1 == 1.0, but true != 1)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if isinstance(value, (int, float)):
        try:
            return ("number", Fraction(value))
        except (ValueError, OverflowError):  # nan, inf
            return ("number", repr(value))
    if isinstance(value, (list, tuple)):
        return ("array", tuple(_canonical(v) for v in value))
    if isinstance(value, dict):
        return ("object", tuple(sorted((str(k), _canonical(v)) for k, v in value.items())))
    return ("other", repr(value))


def _one_call(call: Any) -> tuple[str, Any] | None:
    try:
        return _read_call(call)
    except RecursionError:  # arguments nested too deeply to compare: a malformed call
        return None


def _read_call(call: Any) -> tuple[str, Any] | None:
    if isinstance(call, str):
        call = _loads(call.strip())
    if not isinstance(call, dict):
        return None
    if isinstance(call.get("function"), dict):  # OpenAI: {"type": "function", "function": {...}}
        call = call["function"]
    name = call.get("name")
    if not isinstance(name, str):
        return None
    arguments = call.get("arguments", call.get("parameters", {}))
    if isinstance(arguments, str):
        parsed = _loads(arguments) if arguments.strip() else {}
        arguments = arguments if parsed is _NOT_FOUND else parsed
    return name, _canonical(arguments)


def normalise_tool_calls(calls: Any) -> list[tuple[str, Any] | None]:
    """Tool calls in any common shape (OpenAI, ``{"name", "arguments"}``, a JSON string) in one comparable form.

    A malformed call stays in the list as ``None`` (it matches nothing).

    >>> a = normalise_tool_calls([{"type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}])
    >>> b = normalise_tool_calls('[{"name": "f", "arguments": {"x": 1.0}}]')
    >>> a == b
    True
    """
    if calls is None:
        return []
    if isinstance(calls, str):
        parsed = _loads(calls)
        calls = parsed if parsed is not _NOT_FOUND else [calls]
    if isinstance(calls, dict):
        calls = [calls]
    return [_one_call(c) for c in calls]


def _predicted_calls(completion: str, messages: list[dict[str, Any]]) -> list[Any]:
    calls: list[Any] = []
    for message in messages:
        calls += normalise_tool_calls(message.get("tool_calls") or [])
    for block in paired_blocks(visible_text(completion), "<tool_call>", "</tool_call>"):
        calls.append(_one_call(block))
    return calls


@register_reward("tool_call_match")
@dataclass
class ToolCallMatch(Reward):
    """The tool calls in the completion match the expected ones: names and arguments compared as JSON values.

    Calls are read from OpenAI-style ``tool_calls`` in the completion's
    messages and from ``<tool_call>{json}</tool_call>`` blocks in its text.
    Expected calls come from ``expected_column`` in any common shape. Order
    matters only with ``ordered``. The score is the number of matched calls
    over the larger of expected and predicted counts (extra calls cost as
    much as missing ones); without ``partial_credit`` it is 1 or 0. No calls
    expected and none made scores 1.

    Columns: ``tool_calls`` (configurable). Range: [0, 1].

    >>> r = ToolCallMatch()
    >>> expected = [{"name": "get_weather", "arguments": {"city": "Oslo"}}]
    >>> r(completions=['<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>',
    ...                '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>'],
    ...   tool_calls=[expected, expected])
    [1.0, 0.0]
    """

    default_name = "tool_call_match"
    score_range = (0.0, 1.0)
    expected_column: str = "tool_calls"
    ordered: bool = False
    partial_credit: bool = True
    #: A sample whose check crashes scores as calls that match nothing.
    on_error: OnError = field(default="zero", kw_only=True)

    def inputs(self) -> dict[str, Input]:
        return {"expected": Column(self.expected_column)}

    def score(self, completion: str, completion_messages: list[dict[str, Any]], expected: Any) -> RewardResult:
        want = normalise_tool_calls(expected)
        if any(call is None for call in want):
            return RewardResult(None, "the expected tool calls are malformed")
        got = _predicted_calls(completion, completion_messages)
        if not want and not got:
            return RewardResult(1.0, "no calls expected, none made")
        if self.ordered:
            matched = sum(1 for w, g in zip(want, got) if g is not None and w == g)
        else:
            matched = sum((Counter(want) & Counter(g for g in got if g is not None)).values())
        total = max(len(want), len(got))
        value = matched / total
        if not self.partial_credit:
            value = 1.0 if matched == len(want) == len(got) else 0.0
        malformed = sum(1 for g in got if g is None)
        note = f", {malformed} malformed" if malformed else ""
        return RewardResult(value, f"{matched} of {len(want)} expected call(s) matched, {len(got)} made{note}")
