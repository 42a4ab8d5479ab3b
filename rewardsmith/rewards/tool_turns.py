"""Per-turn forms of the tool rewards: ``tool_success_turns`` and ``tool_schema_turns``.

Each scores every assistant turn that calls a tool with a penalty: 0 when all
its calls are right, -1 when one is not; turns without calls are not judged
(``None``). A trainer that takes a reward per turn sees which turn went wrong,
and its return (the sum over the turns) counts the turns that went wrong:
padding a rollout with more good turns adds nothing, as it earns nothing in
``tool_success`` / ``tool_schema``. One number per rollout is that sum by
default. A form paying 1 per good turn would pay for padding in a per-turn
trainer whatever its one number; the audit checks the per-turn return too
(:mod:`rewardsmith.check.turn_audit`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rewardsmith.core.engine import OnError
from rewardsmith.core.registry import register_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.core.turns import Turn, TurnReward
from rewardsmith.rewards.tools import ToolsSetting, call_problem, failure_reason, schema_checks

__all__ = ["ToolSchemaTurns", "ToolSuccessTurns"]


@register_reward("tool_success_turns")
@dataclass
class ToolSuccessTurns(TurnReward):
    """Each turn that calls tools: 0 when every call returned without an error, else -1; other turns ``None``.

    What fails is what fails in ``tool_success`` (malformed, an error back,
    never ran). The reason of a turn names its first failed call. One number
    per rollout: minus the turns that failed (``aggregate="sum"``).

    Columns: none. Range: [-turns, 0] or None.

    >>> call = {"function": {"name": "add", "arguments": {"a": 1}}}
    >>> rollout = [{"role": "assistant", "tool_calls": [call]}, {"role": "tool", "content": "2"},
    ...            {"role": "assistant", "tool_calls": [call]}, {"role": "tool", "content": "{'error': 'busy'}"},
    ...            {"role": "assistant", "content": "2"}]
    >>> r = ToolSuccessTurns()
    >>> r(completions=[rollout]), r.turn_scores(completions=[rollout])
    ([-1.0], [[0.0, -1.0, None]])
    >>> r.check(rollout).reason
    "turn 1: 0 (1 of 1 call(s) succeeded); turn 2: -1 (add failed: {'error': 'busy'}); turn 3: not judged"
    """

    default_name = "tool_success_turns"
    aggregate: str = "sum"
    on_error: OnError = field(default="zero", kw_only=True)

    def score_turn(self, turn: Turn) -> RewardResult | None:
        if not turn.calls:
            return None
        failed = [c for c in turn.calls if not c.ok]
        if failed:
            return RewardResult(-1.0, failure_reason(failed[0]))
        return RewardResult(0.0, f"{len(turn.calls)} of {len(turn.calls)} call(s) succeeded")


@register_reward("tool_schema_turns")
@dataclass
class ToolSchemaTurns(ToolsSetting, TurnReward):
    """Each turn that calls tools: 0 when every call names a known tool with arguments its schema accepts, else -1.

    Tools as in ``tool_schema`` (the ``tools`` setting, else the row's
    ``tools_column``). Turns without calls, and rows without usable tools, are
    not judged. One number per rollout: minus the turns with a bad call.

    Columns: ``tools`` (configurable; not needed with the ``tools`` setting). Range: [-turns, 0] or None.

    >>> tools = [{"name": "add", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}]
    >>> rollout = [{"role": "assistant", "tool_calls": [{"function": {"name": "add", "arguments": {"a": 1}}}]},
    ...            {"role": "tool", "content": "1"},
    ...            {"role": "assistant", "tool_calls": [{"function": {"name": "rm", "arguments": {}}}]}]
    >>> ToolSchemaTurns(tools=tools).turn_scores(completions=[rollout])
    [[0.0, -1.0]]
    """

    default_name = "tool_schema_turns"
    aggregate: str = "sum"
    on_error: OnError = field(default="zero", kw_only=True)

    def score_turn(self, turn: Turn, row_tools: Any) -> RewardResult | None:
        if not turn.calls or row_tools is None:
            return None
        checks = schema_checks(row_tools, self.tools is not None)
        if isinstance(checks, RewardResult):
            return checks
        bad = [p for p in (call_problem(c, checks) for c in turn.calls) if p is not None]
        if bad:
            return RewardResult(-1.0, bad[0])
        return RewardResult(0.0, f"{len(turn.calls)} call(s) valid")
