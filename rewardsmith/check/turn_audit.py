"""The audit of a per-turn reward's per-turn return: what a trainer that takes a reward per turn optimises.

A per-turn reward gives TRL one number per rollout (its ``aggregate``), but
verl, prime-rl and SkyRL take its per-turn vector and optimise the sum of it
over the rollout (discounting aside). A reward whose one number resists
padding (``aggregate="min"`` or ``"mean"``) may still pay for padding per turn:
each junk turn adds to the return. So the audit of a per-turn reward whose
aggregate is not already ``sum`` runs the trajectory probes a second time on
the per-turn return (the same reward with ``aggregate="sum"``) and reports
what it finds as ``turn_return/...`` findings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rewardsmith.check.findings import Finding
from rewardsmith.check.trajectory_probes import FAMILY
from rewardsmith.core.reward import Reward
from rewardsmith.core.turns import TurnReward

__all__ = ["audit_turn_return", "turn_return"]


def turn_return(reward: Reward) -> TurnReward | None:
    """The reward a per-turn trainer optimises (the per-turn rewards summed), or ``None`` when the one number
    already is that sum (or the reward is not per turn).

    >>> from rewardsmith import get_reward
    >>> turn_return(get_reward("tool_success_turns")) is None, turn_return(get_reward("think_format"))
    (True, None)
    >>> turn_return(get_reward("tool_success_turns", aggregate="min")).aggregate
    'sum'
    """
    if not isinstance(reward, TurnReward) or reward.aggregate == "sum":
        return None
    summed = "sum" if reward.aggregate != "progress" else "progress"
    if summed == "progress" and reward.gamma == 1:
        return None  # progress deltas summed are the last progress: the one number already
    return reward.configure(aggregate=summed, gamma=1.0).named(f"{reward.name}.turn_return")


def audit_turn_return(report: Any, reward: Reward, families: Sequence[str], rerun: Callable[[Reward], Any]) -> None:
    """Add the trajectory findings of ``reward``'s per-turn return to ``report`` (``rerun`` audits a reward)."""
    returned = turn_return(reward)
    if returned is None or FAMILY not in families:
        return
    other = rerun(returned)
    found = [f for f in other.findings if f.name.startswith(f"{FAMILY}/")]
    report.findings += [
        Finding(f.check, f"turn_return/{f.name}", f"per-turn return: {f.message}", f.value, f.threshold, f.example)
        for f in found
    ]
    note = (
        f"the per-turn return of {reward.name} (its turn rewards summed, what verl, prime-rl and SkyRL optimise) "
        + ("pays for what the trajectory probes build: " + ", ".join(f.name for f in found) if found else "holds")
    )
    report.notes.append(note)
    report.summary["notes"] = report.notes
    report.summary["turn_return"] = {"findings": [f.as_dict() for f in found]}
