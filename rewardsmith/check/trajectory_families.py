"""Trajectory families for the linear-time rule: rollouts of many turns, in every shape a reward reads.

Member ``n`` of a family is a list of messages of about ``n`` characters, one
turn (an assistant message and what follows it) per 100 characters: the fuzz
test's sizes of 10 kB, 100 kB and 1 MB are rollouts of 100, 1,000 and 10,000
turns. The shapes: TRL's parsed ``tool_calls`` with results in order, OpenAI
calls with ids and JSON-string arguments answered by ``tool_call_id``,
``<tool_call>`` blocks in text (some inside ``<think>``), calls that never get
a result, and every call failing with TRL's error text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

__all__ = ["TRAJECTORY_FAMILIES", "TrajectoryFamily"]

#: Characters per turn: a size of ``n`` characters is ``n // TURN_CHARS`` turns.
TURN_CHARS = 100
FINAL = {"role": "assistant", "content": "<think>done</think><answer>18</answer>"}


@dataclass(frozen=True)
class TrajectoryFamily:
    """Rollouts of any length: ``text(n)`` is the member of about ``n`` characters (``n // 100`` turns)."""

    name: str
    turn: Callable[[int], list[dict[str, Any]]] = field(repr=False, compare=False)

    def text(self, n: int) -> list[dict[str, Any]]:
        """The member of ``n // 100`` turns and a final answer (cached: the same rollout for every reward).

        >>> member = TRAJECTORY_FAMILIES[0].text(1_000)
        >>> sum(1 for m in member if m["role"] == "assistant"), member[-1]["content"][-19:]
        (11, '<answer>18</answer>')
        """
        return _member(self, n)


@lru_cache(maxsize=16)
def _member(fam: TrajectoryFamily, n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(max(1, n // TURN_CHARS)):
        out += fam.turn(i)
    return [*out, FINAL]


def _trl(i: int) -> list[dict[str, Any]]:
    call = {"type": "function", "function": {"name": "lookup", "arguments": {"key": f"k{i % 10}"}}}
    return [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "name": "lookup", "content": "7"},
    ]


def _openai(i: int) -> list[dict[str, Any]]:
    calls = [
        {"id": f"c{i}_{j}", "type": "function", "function": {"name": "lookup", "arguments": json.dumps({"key": j})}}
        for j in range(2)
    ]
    results = [{"role": "tool", "tool_call_id": c["id"], "content": "7"} for c in reversed(calls)]
    return [{"role": "assistant", "content": None, "tool_calls": calls}, *results]


def _text(i: int) -> list[dict[str, Any]]:
    block = '<tool_call>{"name": "lookup", "arguments": {"key": "k"}}</tool_call>'
    content = f"<think>{block}</think>{block}" if i % 2 else block
    return [{"role": "assistant", "content": content}, {"role": "tool", "content": "7"}]


def _unanswered(i: int) -> list[dict[str, Any]]:
    call = {"type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    return [{"role": "assistant", "content": f"step {i}", "tool_calls": [call, call]}]


def _failing(i: int) -> list[dict[str, Any]]:
    call = {"type": "function", "function": {"name": "lookup", "arguments": {"key": "missing"}}}
    error = str({"error": "KeyError: 'missing'"})
    return [{"role": "assistant", "content": "", "tool_calls": [call]}, {"role": "tool", "content": error}]


#: Every trajectory family, in a fixed order.
TRAJECTORY_FAMILIES: tuple[TrajectoryFamily, ...] = (
    TrajectoryFamily("trajectory:trl_calls", _trl),
    TrajectoryFamily("trajectory:openai_ids", _openai),
    TrajectoryFamily("trajectory:text_calls", _text),
    TrajectoryFamily("trajectory:unanswered", _unanswered),
    TrajectoryFamily("trajectory:failing", _failing),
)
