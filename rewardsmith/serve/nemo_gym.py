"""NeMo-Gym's resources-server ``verify``: ``POST /verify`` with a rollout in the OpenAI Responses format.

NeMo-Gym sends a verify request holding ``responses_create_params`` (the
request that started the rollout: its ``input`` messages, its ``tools``), the
``response`` (a Responses API object whose ``output`` items are
``message``, ``function_call`` and ``function_call_output`` items) and the
task's own fields at the top level. The answer is the request echoed back
with ``reward`` (a float) and, since rewardsmith knows when a score is not a
measurement, ``mask_sample``, ``failure_kind`` and ``failure_reason`` for a
rollout no reward could score, and ``reward_components`` (each reward's score,
``null`` where it did not apply) so that training that normalises each reward
on its own (GDPO) sees them.

:func:`responses_to_messages` turns the ``output`` items into chat messages,
which the core reads as a trajectory like any other; the server does it with
:class:`ResponseMessages` while it reads the body, an item at a time.
"""

from __future__ import annotations

import json
from typing import Any

from rewardsmith.core.tool_calls import message_text, text_parts
from rewardsmith.serve.body import TooLongText, texts_over

__all__ = [
    "VERIFY_SINKS",
    "ResponseMessages",
    "responses_to_messages",
    "verify_columns",
    "verify_fields",
    "verify_request",
    "verify_response",
]

#: The roles messages take, shared by all messages instead of one copy each.
_ROLES = {role: role for role in ("assistant", "user", "system", "developer", "tool")}

#: Keys of a verify request that are not task columns.
_PROTOCOL_KEYS = frozenset({"responses_create_params", "response", "_ng_rollout_id", "reward_components"})


class ResponseMessages:
    """Responses API items turned into chat messages one at a time, as they are read (a body ``Sink``).

    The server gives each ``output`` item of a verify request to :meth:`add` as soon as it is parsed, so the
    items themselves are never held together, only the messages.

    >>> messages = ResponseMessages()
    >>> messages.add({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "2"}]})
    >>> messages.messages
    [{'role': 'assistant', 'content': '2'}]
    """

    def __init__(self, max_text: int | None = None, path: tuple[str, ...] = ("response", "output")) -> None:
        self.messages: list[dict[str, Any]] = []
        self.max_text, self.path = max_text, path

    def add(self, item: Any) -> None:
        """Add one item: a call joins the assistant message of calls before it; anything else not an item is skipped."""
        if not isinstance(item, dict):
            return
        messages = self.messages
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
            role = item.get("role", "assistant")
            if type(role) is str:  # one string per role, not one per message (58 bytes each)
                role = _ROLES.get(role, role)
            content = item.get("content")
            if self.max_text is not None and isinstance(content, list):
                self.bound(content)
            messages.append({"role": role, "content": message_text(content)})

    def bound(self, parts: list[Any]) -> None:
        """Refuse a message whose text parts, joined, would take more than ``max_text`` bytes of UTF-8 (before
        they are joined: each part is bounded by the body's reader, their sum is bounded here).

        >>> parts = [{"type": "output_text", "text": "abc"}] * 2
        >>> ResponseMessages(max_text=6).bound(parts)
        >>> ResponseMessages(max_text=5).bound(parts)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rewardsmith.serve.body.TooLongText: the text of a message at 'response.output[]' (its parts joined) ...
        """
        if texts_over(text_parts(parts), self.max_text or 0):
            raise TooLongText((*self.path, "[]"), self.max_text or 0, joined=True)


def responses_to_messages(items: Any) -> list[dict[str, Any]]:
    """Responses API ``output`` (or ``input``) items as chat messages, calls and results matched by ``call_id``.

    >>> responses_to_messages([
    ...     {"type": "function_call", "name": "add", "arguments": '{"a": 1}', "call_id": "c1"},
    ...     {"type": "function_call_output", "call_id": "c1", "output": "2"},
    ...     {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "2"}]},
    ... ])[1:]
    [{'role': 'tool', 'tool_call_id': 'c1', 'content': '2'}, {'role': 'assistant', 'content': '2'}]
    """
    if isinstance(items, ResponseMessages):
        return items.messages
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    messages = ResponseMessages()
    for item in items if isinstance(items, list) else []:
        messages.add(item)
    return messages.messages


#: Where a verify request's items lie: read into :class:`ResponseMessages` as they are parsed.
VERIFY_SINKS = {("response", "output"): ResponseMessages, ("responses_create_params", "input"): ResponseMessages}


def verify_columns(body: dict[str, Any]) -> dict[str, list[Any]]:
    """The task's own fields of a verify request, as one-row columns.

    >>> verify_columns({"responses_create_params": {}, "response": {}, "expected_answer": "4"})
    {'expected_answer': ['4']}
    """
    return {key: [value] for key, value in body.items() if key not in _PROTOCOL_KEYS}


def verify_request(body: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, list[Any]]]:
    """A verify request's prompt and completion (as messages) and task columns; ``ValueError`` saying what is wrong.

    >>> verify_request({"response": {"output": "18"}})
    Traceback (most recent call last):
    ...
    ValueError: 'response.output' must be a list of Responses API output items (message, function_call, ...), got str
    """
    if not isinstance(body, dict) or not isinstance(body.get("response"), dict):
        raise ValueError("a verify request is a JSON object with 'response' (a Responses API object)")
    output = body["response"].get("output")
    if not isinstance(output, (list, ResponseMessages)):
        raise ValueError(
            "'response.output' must be a list of Responses API output items (message, function_call, ...), "
            f"got {type(output).__name__}"
        )
    params = body.get("responses_create_params")
    prompt = responses_to_messages(params.get("input") if isinstance(params, dict) else None)
    return prompt, responses_to_messages(output), verify_columns(body)


def verify_fields(
    score: float | None, reason: str = "", components: dict[str, float | None] | None = None
) -> dict[str, Any]:
    """What the verify answer adds to the request: ``reward``, each reward's score as ``reward_components``,
    and ``mask_sample`` (with the reason) for an unscored rollout.

    >>> verify_fields(None, "no reward applies")["mask_sample"]
    True
    >>> verify_fields(1.5, components={"a": 1.0, "b": 0.5})
    {'reward': 1.5, 'reward_components': {'a': 1.0, 'b': 0.5}, 'mask_sample': False}
    """
    out: dict[str, Any] = {"reward": 0.0 if score is None else float(score)}
    out["reward_components"] = dict(components or {})
    out["mask_sample"] = score is None
    if score is None:
        out["failure_kind"] = "rewardsmith:unscored"
        out["failure_reason"] = reason or "no reward scored this rollout"
    return out


def verify_response(
    body: dict[str, Any], score: float | None, reason: str = "", components: dict[str, float | None] | None = None
) -> dict[str, Any]:
    """The verify answer: the request echoed with :func:`verify_fields` (the server cuts the echo from the
    request's text instead: :func:`rewardsmith.serve.answer.echo_object`).

    >>> verify_response({"response": {}}, None, "no reward applies")["failure_kind"]
    'rewardsmith:unscored'
    """
    return {**body, **verify_fields(score, reason, components)}
