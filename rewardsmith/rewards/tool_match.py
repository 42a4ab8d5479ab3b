"""``tool_call_match``: the calls a rollout made against the expected ones, as JSON values, with F1 partial credit."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from rewardsmith.core.engine import OnError
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.injection import Column, Input
from rewardsmith.core.registry import register_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward
from rewardsmith.core.trajectory import ToolCall, Trajectory, read_call, strict_json

__all__ = ["ToolCallMatch", "expected_calls", "maximum_matching", "normalise_tool_calls", "same_value"]

ArgumentMode = Literal["exact", "expected_only", "name_only"]
_MODES = ("exact", "expected_only", "name_only")


def expected_calls(expected: Any) -> list[ToolCall]:
    """The expected calls of a row, in any common shape: a list, one call, or a JSON string of either.

    >>> [(c.name, c.arguments) for c in expected_calls('[{"name": "f", "arguments": "{\\\\"x\\\\": 1}"}]')]
    [('f', {'x': 1})]
    """
    if expected is None:
        return []
    if isinstance(expected, str):
        try:
            expected = strict_json(expected)
        except (ValueError, RecursionError):
            return [read_call(expected)]
    if isinstance(expected, dict):
        expected = [expected]
    if not isinstance(expected, (list, tuple)):
        return [read_call(expected)]
    return [read_call(call) for call in expected]


def _canonical(value: Any) -> Any:
    """A hashable form in which JSON-equal values are equal (1 == 1.0, but true != 1)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if isinstance(value, int):
        return ("number", value)
    if isinstance(value, float):  # 1.0 is 1; nan and inf equal nothing but themselves
        return ("number", int(value) if value.is_integer() else value if math.isfinite(value) else repr(value))
    if isinstance(value, (list, tuple)):
        return ("array", tuple(_canonical(v) for v in value))
    if isinstance(value, dict):
        return ("object", tuple(sorted((str(k), _canonical(v)) for k, v in value.items())))
    return ("other", repr(value))


def normalise_tool_calls(calls: Any) -> list[tuple[str, Any] | None]:
    """Calls in any common shape as comparable ``(name, arguments)`` pairs; a malformed call is ``None``.

    >>> a = normalise_tool_calls([{"type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}])
    >>> b = normalise_tool_calls('[{"name": "f", "arguments": {"x": 1.0}}]')
    >>> a == b
    True
    """
    out: list[tuple[str, Any] | None] = []
    for call in expected_calls(calls):
        try:
            out.append(None if call.malformed else (call.name, _canonical(call.arguments)))
        except RecursionError:
            out.append(None)
    return out


def maximum_matching(options: list[list[int]]) -> int:
    """The most pairs of a bipartite matching: ``options[i]`` are the right-side items left item ``i`` may take.

    Augmenting paths (Kuhn's algorithm), so the order of the items does not
    matter, where a greedy choice would let the first item take the only match
    of a later one.

    >>> maximum_matching([[0, 1], [0]])  # greedy gives the first item 0 and the second nothing
    2
    """
    owner: dict[int, int] = {}  # right item -> the left item holding it
    held: dict[int, int] = {}  # left item -> the right item it holds
    for start in range(len(options)):
        if options[start]:
            _augment(start, options, owner, held)
    return len(held)


def _augment(start: int, options: list[list[int]], owner: dict[int, int], held: dict[int, int]) -> None:
    """Find a free right item for ``start`` along an alternating path (depth first, without recursion)."""
    seen: set[int] = set()
    via: dict[int, int] = {}  # right item -> the left item the path reached it from
    stack = [(start, iter(options[start]))]
    while stack:
        left, choices = stack[-1]
        for j in choices:
            if j in seen:
                continue
            seen.add(j)
            via[j] = left
            if j not in owner:  # a free item: flip the path back to start
                while True:
                    i = via[j]
                    before = held.get(i)
                    owner[j], held[i] = i, j
                    if i == start:
                        return
                    j = before  # type: ignore[assignment]
            stack.append((owner[j], iter(options[owner[j]])))
            break
        else:
            stack.pop()


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def same_value(want: Any, got: Any, tolerance: float = 0.0, _depth: int = 0) -> bool:
    """Whether two JSON values are equal: numbers within a relative ``tolerance``, ``true`` never ``1``.

    >>> same_value({"x": [1, 2.0]}, {"x": [1.0, 2]}), same_value(True, 1), same_value(100, 101, tolerance=0.02)
    (True, False, True)
    """
    if _depth > 100:
        raise RecursionError("JSON nested too deeply to compare")
    if _is_number(want) and _is_number(got):
        if want == got:
            return True
        if not (math.isfinite(want) and math.isfinite(got)):
            return False
        return tolerance > 0 and abs(want - got) <= tolerance * max(abs(want), abs(got))
    if type(want) is not type(got) and not (isinstance(want, (list, tuple)) and isinstance(got, (list, tuple))):
        return False
    if isinstance(want, dict):
        return want.keys() == got.keys() and all(same_value(want[k], got[k], tolerance, _depth + 1) for k in want)
    if isinstance(want, (list, tuple)):
        return len(want) == len(got) and all(same_value(w, g, tolerance, _depth + 1) for w, g in zip(want, got))
    return want == got


@register_reward("tool_call_match")
@dataclass
class ToolCallMatch(Reward):
    """The calls the rollout made match the expected ones: names, and arguments compared as JSON values.

    Calls are read from the whole trajectory (TRL's tool loop, OpenAI
    ``tool_calls``, ``<tool_call>{json}</tool_call>`` text) where a runtime
    reads them: never from inside the reasoning; a call with two different
    names is malformed and matches nothing. Expected calls come from
    ``expected_column`` in any common shape. ``ordered`` compares them in order
    (the longest matching subsequence), else as a multiset. ``arguments``:
    ``"exact"`` (every argument, no extra ones), ``"expected_only"`` (the
    expected arguments; extra ones ignored) or ``"name_only"``. Numbers match
    within the relative ``tolerance``. The score is the F1 of matched calls
    (precision over calls made, recall over calls expected); without
    ``partial_credit`` it is 1 only for a perfect match. No calls expected and
    none made scores 1.

    Columns: ``tool_calls`` (configurable). Range: [0, 1].

    >>> r = ToolCallMatch()
    >>> expected = [{"name": "get_weather", "arguments": {"city": "Oslo"}}]
    >>> r(completions=['<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>',
    ...                '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>',
    ...                '<think><tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call></think>'],
    ...   tool_calls=[expected] * 3)
    [1.0, 0.0, 0.0]
    """

    default_name = "tool_call_match"
    score_range = (0.0, 1.0)
    expected_column: str = "tool_calls"
    ordered: bool = False
    partial_credit: bool = True
    arguments: ArgumentMode = "exact"
    tolerance: float = 0.0
    #: A sample whose check crashes scores as calls that match nothing.
    on_error: OnError = field(default="zero", kw_only=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.arguments not in _MODES:
            raise RewardConfigError(f"reward {self.name!r}: arguments must be one of {_MODES}, got {self.arguments!r}")
        if isinstance(self.tolerance, bool) or not isinstance(self.tolerance, (int, float)) or self.tolerance < 0:
            raise RewardConfigError(f"reward {self.name!r}: tolerance must be a number >= 0, got {self.tolerance!r}")

    def inputs(self) -> dict[str, Input]:
        return {"expected": Column(self.expected_column)}

    def _matches(self, want: ToolCall, got: ToolCall) -> bool:
        if got.malformed or want.name != got.name:
            return False
        if self.arguments == "name_only":
            return True
        expected, made = want.arguments, got.arguments
        if self.arguments == "expected_only":
            made = {k: made[k] for k in expected if k in made}
        return same_value(expected, made, self.tolerance)

    def _matched(self, want: list[ToolCall], got: list[ToolCall]) -> int:
        if self.ordered:  # longest common subsequence, one row at a time
            row = [0] * (len(got) + 1)
            for w in want:
                previous = 0
                for j, g in enumerate(got):
                    current = row[j + 1]
                    row[j + 1] = previous + 1 if self._matches(w, g) else max(row[j + 1], row[j])
                    previous = current
            return row[-1]
        if self.arguments == "exact" and self.tolerance == 0:  # hashable: a multiset intersection, linear
            key = lambda c: (c.name, _canonical(c.arguments))  # noqa: E731
            return sum((Counter(map(key, want)) & Counter(key(g) for g in got if not g.malformed)).values())
        return maximum_matching([[j for j, g in enumerate(got) if self._matches(w, g)] for w in want])

    def score(self, trajectory: Trajectory, expected: Any) -> RewardResult:
        want = expected_calls(expected)
        if any(call.malformed for call in want):
            return RewardResult(None, "the expected tool calls are malformed")
        got = list(trajectory.calls)
        if not want and not got:
            return RewardResult(1.0, "no calls expected, none made")
        try:
            matched = self._matched(want, got)
        except RecursionError:
            return RewardResult(0.0, "call arguments nested too deeply to compare")
        value = 2 * matched / (len(want) + len(got))  # F1
        if not self.partial_credit:
            value = 1.0 if matched == len(want) == len(got) else 0.0
        reason = f"{matched} of {len(want)} expected call(s) matched, {len(got)} made"
        malformed = [c.malformed for c in got if c.malformed]
        if malformed:
            reason += f"; malformed: {malformed[0]}" + (f" (+{len(malformed) - 1})" if len(malformed) > 1 else "")
        return RewardResult(value, reason)
