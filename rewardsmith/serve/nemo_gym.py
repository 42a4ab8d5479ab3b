"""NeMo-Gym's resources-server ``verify``: ``POST /verify`` with a rollout in the OpenAI Responses format.

NeMo-Gym sends a verify request holding ``responses_create_params`` (the
request that started the rollout: its ``input`` messages, its ``tools``), the
``response`` (a Responses API object whose ``output`` items are
``message``, ``function_call`` and ``function_call_output`` items) and the
task's own fields at the top level. The answer is the request echoed back
with ``reward`` (a float) and, since rewardsmith knows when a score is not a
measurement, ``mask_sample``, ``failure_kind`` and ``failure_reason`` for a
rollout no reward could score.

:func:`responses_to_messages` turns the ``output`` items into chat messages,
which the core reads as a trajectory like any other.
"""

from __future__ import annotations

import json
from typing import Any

from rewardsmith.core.tool_calls import message_text

__all__ = ["responses_to_messages", "verify_columns", "verify_response"]

#: Keys of a verify request that are not task columns.
_PROTOCOL_KEYS = frozenset({"responses_create_params", "response", "_ng_rollout_id"})


def responses_to_messages(items: Any) -> list[dict[str, Any]]:
    """Responses API ``output`` (or ``input``) items as chat messages, calls and results matched by ``call_id``.

    >>> responses_to_messages([
    ...     {"type": "function_call", "name": "add", "arguments": '{"a": 1}', "call_id": "c1"},
    ...     {"type": "function_call_output", "call_id": "c1", "output": "2"},
    ...     {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "2"}]},
    ... ])[1:]
    [{'role': 'tool', 'tool_call_id': 'c1', 'content': '2'}, {'role': 'assistant', 'content': '2'}]
    """
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    messages: list[dict[str, Any]] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "function_call":
            call = {"id": item.get("call_id"), "type": "function"}
            call["function"] = {"name": item.get("name"), "arguments": item.get("arguments", "{}")}
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant" and not last.get("content") and "tool_calls" in last:
                last["tool_calls"].append(call)
            else:
                messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            text = output if isinstance(output, str) else json.dumps(output)
            messages.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": text})
        elif kind == "message":
            messages.append({"role": item.get("role", "assistant"), "content": message_text(item.get("content"))})
    return messages


def verify_columns(body: dict[str, Any]) -> dict[str, list[Any]]:
    """The task's own fields of a verify request, as one-row columns.

    >>> verify_columns({"responses_create_params": {}, "response": {}, "expected_answer": "4"})
    {'expected_answer': ['4']}
    """
    return {key: [value] for key, value in body.items() if key not in _PROTOCOL_KEYS}


def verify_response(body: dict[str, Any], score: float | None, reason: str = "") -> dict[str, Any]:
    """The verify answer: the request echoed with ``reward``; an unscored rollout is masked, with the reason.

    >>> verify_response({"response": {}}, None, "no reward applies")["mask_sample"]
    True
    """
    out = dict(body)
    out["reward"] = 0.0 if score is None else float(score)
    out["mask_sample"] = score is None
    if score is None:
        out["failure_kind"] = "rewardsmith:unscored"
        out["failure_reason"] = reason or "no reward scored this rollout"
    return out
