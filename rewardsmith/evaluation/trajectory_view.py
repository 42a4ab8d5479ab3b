"""A stored trajectory turn by turn, as plain text for the report: each assistant turn, its calls, the results.

The report shows a kept sample whose completion is a trajectory (tool calls,
tool results, several turns) with :func:`turn_text` instead of its final
message alone, and under it every reward's score and reason for that sample
(:func:`reward_notes`). The text is escaped by the page like any completion.
"""

from __future__ import annotations

import json
from typing import Any

from rewardsmith.core.trajectory import Message, ToolCall, is_trajectory, trajectory

__all__ = ["reward_notes", "turn_text"]

#: Characters kept of one message's text, of one call's arguments and of one tool result.
MESSAGE_CHARS, ARGUMENT_CHARS, RESULT_CHARS = 600, 300, 300


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f" … [{len(text) - limit} more characters]"


def _call(call: ToolCall) -> str:
    if call.malformed:
        return f"  -> malformed call: {call.malformed}"
    arguments = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True, default=str)
    line = f"  -> call {call.name}({_cut(arguments, ARGUMENT_CHARS)})"
    if call.error is not None:
        return f"{line}\n     <- error: {_cut(call.error, RESULT_CHARS)}"
    if call.result is None:
        return f"{line}\n     <- no result (never ran)"
    return f"{line}\n     <- result: {_cut(call.result, RESULT_CHARS)}"


def _message(message: Message, turn: int) -> list[str]:
    if message.role == "tool":
        return []  # shown under the call it answers
    head = f"[{message.role} {turn}]" if message.role == "assistant" else f"[{message.role}]"
    lines = [f"{head} {_cut(message.content.strip(), MESSAGE_CHARS)}".rstrip()]
    return lines + [_call(call) for call in message.calls]


def turn_text(completion: Any) -> str | None:
    """A trajectory as text, turn by turn with its calls and their results; ``None`` for a plain completion.

    >>> print(turn_text([
    ...     {"role": "assistant", "content": "", "tool_calls": [
    ...         {"type": "function", "function": {"name": "add", "arguments": {"a": 2, "b": 2}}}]},
    ...     {"role": "tool", "name": "add", "content": "4"},
    ...     {"role": "assistant", "content": "<answer>4</answer>"}]))
    [assistant 1]
      -> call add({"a": 2, "b": 2})
         <- result: 4
    [assistant 2] <answer>4</answer>
    >>> turn_text("just text") is None
    True
    """
    if not is_trajectory(completion):
        return None
    lines: list[str] = []
    turn = 0
    for message in trajectory(completion).messages:
        turn += message.role == "assistant"
        lines += _message(message, turn)
    return "\n".join(lines)


def reward_notes(rewards: dict[str, Any]) -> list[str]:
    """Every reward's score and reason for one sample, one line each; a per-turn reward's turns one line each.

    >>> reward_notes({"tool_success": {"score": 1.0, "reason": "1 of 1 call(s) succeeded"}, "x": {"score": None}})
    ['tool_success: 1 (1 of 1 call(s) succeeded)', 'x: None']
    >>> reward_notes({"t": {"score": 0.0, "reason": "...", "metrics": {
    ...     "turn_scores": [1.0, 0.0, None], "turn_reasons": ["ok", "add failed", ""]}}})
    ['t: 0 (per turn: 1, 0, None)', '  turn 1: 1 (ok)', '  turn 2: 0 (add failed)', '  turn 3: not judged']
    """
    out = []
    for name, entry in rewards.items():
        score = entry.get("score")
        shown = "None" if score is None else f"{score:.4g}"
        turns = (entry.get("metrics") or {}).get("turn_scores")
        if isinstance(turns, list) and not entry.get("error"):
            out.append(f"{name}: {shown} (per turn: {', '.join(_shown(s) for s in turns)})")
            reasons = (entry.get("metrics") or {}).get("turn_reasons") or [""] * len(turns)
            out += [_turn_note(i, s, why) for i, (s, why) in enumerate(zip(turns, reasons))][:TURN_LINES]
            continue
        why = entry.get("error") or entry.get("reason")
        out.append(f"{name}: {shown}" + (f" ({str(why)[:200]})" if why else ""))
    return out


#: Turns of a per-turn reward shown one line each under a sample.
TURN_LINES = 50


def _shown(score: float | None) -> str:
    return "None" if score is None else f"{score:.4g}"


def _turn_note(i: int, score: float | None, why: str) -> str:
    if score is None:
        return f"  turn {i + 1}: not judged" + (f" ({str(why)[:120]})" if why else "")
    return f"  turn {i + 1}: {score:.4g}" + (f" ({str(why)[:120]})" if why else "")
