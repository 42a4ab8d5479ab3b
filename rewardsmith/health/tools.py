"""Health of tool use during training: rollouts that never call a tool, calls that mostly fail, too many calls.

The metrics come from the rewards that read rollouts as trajectories
(:attr:`rewardsmith.core.inputs.Batch.trajectories` logs them through TRL):
``trajectory/calls_per_rollout``, ``trajectory/failed_call_share`` (of all
calls) and ``trajectory/no_call_share`` (of rollouts). The monitor
(:class:`~rewardsmith.health.monitor.HealthMonitor`) keeps them as
``health/tool_calls_per_rollout``, ``health/tool_failed_call_share`` and
``health/tool_no_call_share`` and asks :func:`tool_warnings` about their means
over the last ``window`` logs.

Per-turn rewards (:mod:`rewardsmith.core.turns`) log
``turns/<name>/judged_share``; the monitor keeps it as
``health/turn_unjudged_share/<name>`` (the share of turns left ``None``) and
warns when a per-turn reward judges almost no turn.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TOOL_METRICS", "tool_metrics", "tool_warnings"]

#: The logged metric each health metric is read from.
TOOL_METRICS = {
    "tool_calls_per_rollout": "trajectory/calls_per_rollout",
    "tool_failed_call_share": "trajectory/failed_call_share",
    "tool_no_call_share": "trajectory/no_call_share",
}


def tool_metrics(logs: dict[str, Any]) -> dict[str, float]:
    """The tool-use metrics of one training log, under their health names.

    >>> tool_metrics({"trajectory/no_call_share": 1.0, "reward": 0.5, "turns/tool_success_turns/judged_share": 0.25})
    {'tool_no_call_share': 1.0, 'turn_unjudged_share/tool_success_turns': 0.75}
    """
    out = {name: float(logs[key]) for name, key in TOOL_METRICS.items() if logs.get(key) is not None}
    for key, value in logs.items():
        if key.startswith("turns/") and key.endswith("/judged_share") and value is not None:
            out[f"turn_unjudged_share/{key[len('turns/') : -len('/judged_share')]}"] = 1.0 - float(value)
    return out


def _no_calls(share: float, window: int) -> str:
    return (
        f"{'no' if share >= 1 else f'only {1 - share:.0%} of the'} rollouts called a tool over the last {window} "
        "logs: the tool rewards score None and teach nothing, and the model is not learning to use its tools. Check "
        "that the prompts offer the tools (tools= or environment_factory= in the trainer), that the chat template "
        "renders them and TRL parses the model's calls (rewardsmith train --dry-run checks both), and teach the call "
        "format first (a few supervised steps) if the model never writes one."
    )


def _failed(share: float, window: int) -> str:
    return (
        f"{share:.0%} of the tool calls failed over the last {window} logs (malformed, an error from the tool, or "
        "made with the final answer so they never ran): the rollouts learn from broken calls. Look at the failing "
        "calls (rewardsmith eval on saved rollouts shows each call and its result), check the tools' schemas and "
        "errors, and reward valid calls (tool_schema, tool_success)."
    )


def _many(calls: float, window: int) -> str:
    return (
        f"rollouts make {calls:.1f} tool calls on average over the last {window} logs: the model may repeat the "
        "same call or loop until max_tool_calling_iterations. Reward doing it in fewer calls (tool_efficiency) or "
        "lower max_tool_calling_iterations."
    )


def _unjudged(name: str, share: float, window: int) -> str:
    return (
        f"per-turn reward {name} left {share:.0%} of the turns unjudged (None) over the last {window} logs: the "
        "turns it is meant to score are not in the rollouts (a tool reward whose rollouts make no calls, a turn "
        "shape it does not read), so it teaches nothing per turn. Look at its reasons per turn (rewardsmith eval "
        "shows them under each sample) and at the rollouts' turns."
    )


#: (warning kind, health metric, threshold field, message).
_CHECKS = (
    ("no_tool_calls", "tool_no_call_share", "no_tool_calls", _no_calls),
    ("failed_tool_calls", "tool_failed_call_share", "failed_tool_calls", _failed),
    ("max_tool_calls", "tool_calls_per_rollout", "max_tool_calls", _many),
)


def tool_warnings(recent: dict[str, float | None], limits: Any) -> list[tuple[str, str, float, float]]:
    """``(kind, message, value, threshold)`` for each tool-use threshold crossed by the recent means.

    ``limits`` has ``no_tool_calls``, ``failed_tool_calls`` and
    ``max_tool_calls`` (``None`` turns one off) and ``window``.

    >>> from rewardsmith.health.monitor import HealthThresholds
    >>> [w[0] for w in tool_warnings({"tool_no_call_share": 1.0, "tool_calls_per_rollout": 0.0},
    ...                              HealthThresholds())]
    ['no_tool_calls']
    """
    out = []
    for kind, metric, field, message in _CHECKS:
        value, limit = recent.get(metric), getattr(limits, field)
        if value is not None and limit is not None and value >= limit:
            out.append((kind, message(value, limits.window), value, limit))
    limit = getattr(limits, "unjudged_turns", None)
    for metric, value in recent.items():
        if metric.startswith("turn_unjudged_share/") and value is not None and limit is not None and value >= limit:
            name = metric.split("/", 1)[1]
            out.append((f"unjudged_turns:{name}", _unjudged(name, value, limits.window), value, limit))
    return out
