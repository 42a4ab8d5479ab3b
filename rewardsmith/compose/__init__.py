"""Composing rewards: weighted combinations, normalisation, gating, multi-task routing, coverage checks.

Every operation returns a :class:`~rewardsmith.Reward`, so the results nest
and go straight into ``trl.GRPOTrainer(reward_funcs=...)``. A composite whose
components include an async reward is async itself (TRL awaits it, and its
components run concurrently); otherwise it is sync. Composites pickle like any
reward.

>>> from rewardsmith.compose import combine, gate
>>> r = combine(["think_format", gate("think_format", "gsm8k_accuracy")], weights=[0.2, 1.0])
>>> r.name
'think_format+gsm8k_accuracy_if_think_format'
>>> r(completions=["<think>9*2</think><answer>18</answer>", "#### 18"], answer=["18", "18"])
[1.2, 0.0]
"""

from rewardsmith.compose.combine import AsyncCombined, Combined, combine, format_and_content
from rewardsmith.compose.config import rewards_from_config
from rewardsmith.compose.coverage import CoverageError, CoverageReport, coverage
from rewardsmith.compose.gate import AsyncGated, Gated, gate
from rewardsmith.compose.groups import normalize_scores, prompt_groups
from rewardsmith.compose.route import AsyncForTask, AsyncRouted, ForTask, Routed, for_task, route

__all__ = [
    "AsyncCombined",
    "AsyncForTask",
    "AsyncGated",
    "AsyncRouted",
    "Combined",
    "CoverageError",
    "CoverageReport",
    "ForTask",
    "Gated",
    "Routed",
    "combine",
    "coverage",
    "for_task",
    "format_and_content",
    "gate",
    "normalize_scores",
    "prompt_groups",
    "rewards_from_config",
    "route",
]
