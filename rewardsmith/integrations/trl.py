"""TRL integration: rewards in the form ``GRPOTrainer(reward_funcs=...)`` takes.

A :class:`~rewardsmith.Reward` already is that form: a picklable callable
with TRL's signature whose ``__name__`` is its name (what TRL logs as
``rewards/<name>/mean``), sync or async. :func:`to_trl` is the bridge for
lists: it applies :func:`~rewardsmith.get_reward` to each item (names, paths,
config entries, plain functions, reward-kit functions) and passes TRL's own
reward-model modules through.
"""

from __future__ import annotations

from typing import Any

from rewardsmith.core.registry import get_reward
from rewardsmith.core.reward import Reward

__all__ = ["to_trl"]


def _is_model(obj: Any) -> bool:
    """A ``torch.nn.Module`` (a reward model TRL runs itself), checked without importing torch."""
    return any(c.__module__.startswith("torch.nn") and c.__name__ == "Module" for c in type(obj).__mro__)


def _one(obj: Any) -> Any:
    if isinstance(obj, Reward) or _is_model(obj):
        return obj
    return get_reward(obj)


def to_trl(rewards: Any) -> Any:
    """Rewards as TRL's ``reward_funcs``: one in, one out; a list (or a comma-separated string) in, a list out.

    >>> from rewardsmith import to_trl
    >>> def short(completions, **kwargs):
    ...     return [float(len(c) < 10) for c in completions]
    >>> funcs = to_trl([short, "think_format"])
    >>> [f.__name__ for f in funcs]
    ['short', 'think_format']
    >>> funcs[0](prompts=["p"], completions=["ok"], trainer_state=None, log_metric=lambda *a: None)
    [1.0]
    """
    if isinstance(rewards, str) and "," in rewards:
        return [_one(part.strip()) for part in rewards.split(",") if part.strip()]
    if isinstance(rewards, (list, tuple)):
        return [_one(item) for item in rewards]
    return _one(rewards)
