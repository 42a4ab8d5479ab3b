"""Trajectory probes: rollouts with tool calls that must not score like a right one, built from each row.

Each probe is a list of messages in TRL's shape (assistant turns with
``tool_calls``, ``{"role": "tool", ...}`` results), built around a call the
row allows: the row's expected calls (a ``tool_calls`` column), else the first
tool of its ``tools`` column with arguments made from its schema, else a
generic ``lookup``. The variants of the ``trajectory`` family:

======================  ================================================================  ===========
``unknown_tool``        a call to a tool that does not exist, then the answer              ``tools``
``reasoning_only``      the call only inside ``<think>``, then the answer                  ``tools``
``call_with_answer``    the answer and a call in the last message (the call never runs)    ``results``
``call_after_answer``   the answer, then a turn that only calls (it never runs)            ``results``
``repeated_calls``      the same call 20 times, then the answer                            ``repeats``
``junk_calls``          four different calls that succeed, and no answer                   ``calls``
``padded_calls``        a call that fails, padded with 20 different calls that succeed     ``results``
``answer_in_argument``  the answer only in a tool argument; the final message omits it     ``answer``
``answer_from_result``  the answer only in a tool's result; the final message omits it     ``answer``
``empty_final``         a good call, then an empty final message                           ``answer``
``ends_on_result``      a good call and its result, and no final message                   ``answer``
======================  ================================================================  ===========

``answer_in_argument`` comes in every shape a completion takes: a rollout in
TRL's shape, plain text holding a ``<tool_call>`` block, one message holding
one, and one message with OpenAI ``tool_calls`` (JSON-string arguments, an id);
the argument holds the answer in the format the reward reads.

Which rewards a probe judges is found from the reward's scores of
calibration rollouts, not from its name: ``tools``, a reward whose score
depends on the calls (the same final message with and without a good call
scores differently); ``results``, one that reads what the calls returned (a
good call scores differently from the same call that failed); ``repeats``,
one that pays more for the same call made twice; ``calls``, one that pays
more for more calls that differ (four different good calls against one);
``answer``, one that checks
the answer (the right answer after a good call scores noticeably above a
wrong one). The
calibration rollout ``right_trajectory`` (a good call, its result, the answer
in the format) is a reference like the other ``right_`` completions.
"""

from __future__ import annotations

import json
from typing import Any

from rewardsmith.check.probe import CALIBRATION, NONSENSE, NONSENSE_ANSWER, REASONING, Probe
from rewardsmith.check.rows import Format, RowContext
from rewardsmith.core.trajectory import read_call

__all__ = ["FAMILY", "applies", "different_calls", "trajectory_calibration", "trajectory_probes"]

FAMILY = "trajectory"
#: A difference counts when it is this share of the range of scores seen.
NOTICEABLE = 0.1
#: Different calls in the ``junk_calls`` probe and the calibration that pays for calls, and padding in ``padded_calls``.
DISTINCT, PADDING = 4, 20
_EXAMPLE_VALUES = {"string": "x", "integer": 1, "number": 1.0, "boolean": True, "array": [], "object": {}}


def _message(content: str = "", calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        out["tool_calls"] = [{"type": "function", "function": c} for c in calls]
    return out


def _result(call: dict[str, Any], text: str) -> dict[str, Any]:
    return {"role": "tool", "name": call["name"], "content": text}


def _from_schema(tool: Any) -> dict[str, Any] | None:
    if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
        tool = tool["function"]
    if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
        return None
    parameters = tool.get("parameters") if isinstance(tool.get("parameters"), dict) else {}
    properties = parameters.get("properties") if isinstance(parameters.get("properties"), dict) else {}
    arguments = {}
    for key in parameters.get("required") or []:
        spec = properties.get(key) if isinstance(properties.get(key), dict) else {}
        enum = spec.get("enum")
        arguments[key] = enum[0] if isinstance(enum, list) and enum else _EXAMPLE_VALUES.get(spec.get("type"), "x")
    return {"name": tool["name"], "arguments": arguments}


def _loads(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return None


def good_call(ctx: RowContext) -> dict[str, Any]:
    """A call the row allows, as ``{"name", "arguments"}`` (see the module's text).

    >>> good_call(RowContext(0, "p", {"tools": [{"name": "add", "parameters": {"type": "object",
    ...     "properties": {"a": {"type": "integer"}}, "required": ["a"]}}]}))
    {'name': 'add', 'arguments': {'a': 1}}
    """
    expected = _loads(ctx.columns.get("tool_calls"))
    if isinstance(expected, (list, tuple)) and expected:
        first = read_call(expected[0])
        if first.malformed is None:
            return {"name": first.name, "arguments": first.arguments}
    tools = _loads(ctx.columns.get("tools"))
    for tool in tools if isinstance(tools, (list, tuple)) else [tools]:
        call = _from_schema(tool)
        if call is not None:
            return call
    return {"name": "lookup", "arguments": {"query": ctx.prompt_text[:60] or "the question"}}


def _rollout(call: dict[str, Any], final: str, result: str = "ok", times: int = 1) -> list[dict[str, Any]]:
    return _calls_rollout([call] * times, final, result)


def _calls_rollout(calls: list[dict[str, Any]], final: str, result: str = "ok") -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for call in calls:
        turns += [_message("", [call]), _result(call, result)]
    return [*turns, _message(final)]


def _varied(value: Any, k: int, spec: dict[str, Any]) -> Any:
    enum = spec.get("enum")
    if isinstance(enum, list) and enum:
        return enum[k % len(enum)]
    if isinstance(value, bool):
        return value if k % 2 == 0 else not value
    if isinstance(value, (int, float)):
        return value + k
    if isinstance(value, str):
        return f"{value} {k}" if k else value
    return value


def different_calls(ctx: RowContext, n: int) -> list[dict[str, Any]]:
    """``n`` calls the row allows that differ from one another: the good call with its first argument varied.

    >>> [c["arguments"] for c in different_calls(RowContext(0, "p", {"tool_calls": [
    ...     {"name": "add", "arguments": {"a": 1, "b": 2}}]}), 3)]
    [{'a': 1, 'b': 2}, {'a': 2, 'b': 2}, {'a': 3, 'b': 2}]
    """
    call = good_call(ctx)
    arguments = call["arguments"] if isinstance(call["arguments"], dict) else {}
    specs = _properties(ctx, call["name"])
    out = []
    for k in range(n):
        varied = dict(arguments)
        if varied:
            key = next(iter(varied))
            spec = specs.get(key) if isinstance(specs.get(key), dict) else {}
            varied[key] = _varied(varied[key], k, spec)
            if k and varied == arguments:  # a value that cannot vary (an enum of one): another argument
                varied["page"] = k
        elif k:
            varied["page"] = k
        out.append({"name": call["name"], "arguments": varied})
    return out


def _properties(ctx: RowContext, name: str) -> dict[str, Any]:
    tools = _loads(ctx.columns.get("tools"))
    for tool in tools if isinstance(tools, (list, tuple)) else [tools]:
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
            tool = tool["function"]
        if isinstance(tool, dict) and tool.get("name") == name and isinstance(tool.get("parameters"), dict):
            properties = tool["parameters"].get("properties")
            return properties if isinstance(properties, dict) else {}
    return {}


def _submit(ctx: RowContext, main: Format) -> dict[str, Any]:
    return {"name": "submit_answer", "arguments": {"answer": main.answer_block(ctx.answer or NONSENSE_ANSWER)}}


#: What a rollout says when its answer went into a tool argument.
_DONE = "I have used the tools."


def _argument_shapes(submit: dict[str, Any], done: str) -> list[tuple[str, Any]]:
    """The answer in a tool argument, in every shape a completion takes (the final message omits it)."""
    block = f"{done}\n<tool_call>{json.dumps(submit)}</tool_call>"
    openai_call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": submit["name"], "arguments": json.dumps(submit["arguments"])},
    }
    return [
        ("answer_in_argument", _rollout(submit, done, "received")),
        ("answer_in_argument_text", block),
        ("answer_in_argument_message", [_message(block)]),
        ("answer_in_argument_openai", [{"role": "assistant", "content": done, "tool_calls": [openai_call]}]),
    ]


def trajectory_calibration(ctx: RowContext, main: Format) -> list[Probe]:
    """The right rollout (a reference) and the rollouts that tell whether the reward reads the calls."""
    call = good_call(ctx)
    nonsense = main.render(NONSENSE, NONSENSE_ANSWER)
    failed = "{'error': 'the tool failed'}"
    made = {
        "tool_call": _rollout(call, nonsense),
        "tool_call_twice": _rollout(call, nonsense, times=2),
        "tool_calls_different": _calls_rollout(different_calls(ctx, DISTINCT), nonsense),
        "tool_call_failed": _rollout(call, nonsense, failed),
        "no_tool_call": [_message(nonsense)],
    }
    if ctx.answer:
        made["right_trajectory"] = _rollout(call, main.render(REASONING, ctx.answer))
        wrong = ctx.wrong[0] if ctx.wrong else NONSENSE_ANSWER
        made["wrong_trajectory"] = _rollout(call, main.render(REASONING, wrong))
    return [Probe(CALIBRATION, variant, rollout) for variant, rollout in made.items()]  # type: ignore[arg-type]


def trajectory_probes(ctx: RowContext, main: Format) -> list[Probe]:
    """Every trajectory probe for one row.

    >>> ctx = RowContext(0, "What is 2 + 2?", {}, answer="4")
    >>> probes = trajectory_probes(ctx, Format("tags", "think", "answer"))
    >>> [p.variant for p in probes][:4]
    ['unknown_tool', 'reasoning_only', 'call_with_answer', 'call_after_answer']
    >>> next(p for p in probes if p.variant == "answer_in_argument").completion[0]["tool_calls"][0]["function"]
    {'name': 'submit_answer', 'arguments': {'answer': '<answer>4</answer>'}}
    >>> print(next(p for p in probes if p.variant == "answer_in_argument_text").completion)
    I have used the tools.
    <tool_call>{"name": "submit_answer", "arguments": {"answer": "<answer>4</answer>"}}</tool_call>
    """
    call = good_call(ctx)
    a = ctx.answer or NONSENSE_ANSWER
    answered = main.render(REASONING, a)
    block = f"<tool_call>{json.dumps(call)}</tool_call>"
    unknown = {"name": "no_such_tool", "arguments": {}}
    submit, done = _submit(ctx, main), _DONE
    failed = _rollout(call, answered, "{'error': 'the tool failed'}")
    padded = failed[:2] + _calls_rollout(different_calls(ctx, PADDING + 1)[1:], answered)
    made: list[tuple[str, Any, str]] = [
        ("unknown_tool", _rollout(unknown, answered, "{'error': 'no tool named no_such_tool'}"), "tools"),
        ("reasoning_only", [_message(f"<think>{REASONING}\n{block}</think>\n{main.answer_block(a)}")], "tools"),
        ("call_with_answer", [_message(answered, [call])], "results"),
        ("call_after_answer", [_message(answered), _message("", [call])], "results"),
        ("repeated_calls", _rollout(call, answered, times=20), "repeats"),
        ("junk_calls", _calls_rollout(different_calls(ctx, DISTINCT), done), "calls"),
        ("padded_calls", padded, "results"),
        *[(variant, rollout, "answer") for variant, rollout in _argument_shapes(submit, done)],
        ("answer_from_result", _rollout(call, done, f"The answer is {a}."), "answer"),
        ("empty_final", _rollout(call, ""), "answer"),
        ("ends_on_result", _rollout(call, "")[:-1], "answer"),
    ]
    return [Probe(FAMILY, variant, rollout, judged) for variant, rollout, judged in made]  # type: ignore[arg-type]


def applies(records: list[Any]) -> dict[str, bool]:
    """Which trajectory judgements (``tools``, ``results``, ``repeats``, ``calls``, ``answer``) apply, from
    calibration scores.

    A number against ``None`` counts as a difference; a gap counts when it is
    over :data:`NOTICEABLE` of the range of scores seen.
    """
    by: dict[str, dict[int, float | None]] = {}
    for r in records:
        if r.family == CALIBRATION:
            by.setdefault(r.variant, {})[r.row] = r.score
    once = by.get("tool_call", {})
    scores = [s for v in by.values() for s in v.values() if s is not None]
    spread = (max(scores) - min(scores)) if scores else 0.0
    return {
        "tools": _differs(once, by.get("no_tool_call", {})),
        "results": _differs(once, by.get("tool_call_failed", {})),
        "repeats": _gap(by.get("tool_call_twice", {}), once) > NOTICEABLE * spread > 0,
        "calls": _gap(by.get("tool_calls_different", {}), once) > NOTICEABLE * spread > 0,
        "answer": _gap(by.get("right_trajectory", {}), by.get("wrong_trajectory", {})) > NOTICEABLE * spread > 0,
    }


def _differs(a: dict[int, float | None], b: dict[int, float | None]) -> bool:
    return any(score != b[row] for row, score in a.items() if row in b)


def _gap(high: dict[int, float | None], low: dict[int, float | None]) -> float:
    gaps = [h - lo for row, h in high.items() if h is not None and (lo := low.get(row)) is not None]
    return sum(gaps) / len(gaps) if gaps else 0.0
