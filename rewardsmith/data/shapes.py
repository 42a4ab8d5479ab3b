"""Before training: each plain TRL reward function called once on a row shaped as the trainer will shape it.

TRL passes completions as plain strings for a standard dataset and as lists
of chat messages for a conversational one. A function written for the other
shape (``re.search(pattern, c) for c in completions`` on chat data) fails
only at the first training step, after the model has loaded. This check
calls each plain TRL function (the rewards written as ``f(completions,
**kwargs)``; rewardsmith's own rewards read either shape) once, on the first
row of the prepared data with a completion in the trainer's shape, and turns a
shape error into one that names ``completion_shape``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.functions import AsyncBatchFunctionReward, BatchFunctionReward
from rewardsmith.core.inputs import RESERVED_KWARGS
from rewardsmith.core.registry import get_rewards
from rewardsmith.data.columns import leaf_rewards

__all__ = ["TRIAL_COMPLETION", "check_completion_shapes"]

#: The text of the trial completion (any text does: only the shape is checked).
TRIAL_COMPLETION = "<think>\nLet me work it out.\n</think>\n<answer>\n4\n</answer>"
#: What a function written for the other shape raises (``TypeError`` or ``AttributeError`` messages).
_SHAPE_WORDS = (
    "expected string or bytes-like object",
    "string indices must be integers",
    "'list' object",
    "'dict' object",
    "can only concatenate str",
    "must be str, not list",
    "'str' object has no attribute",
)


def check_completion_shapes(dataset: Any, rewards: Any) -> None:
    """Call each plain TRL reward function once on the first row, in the trainer's shape; a shape error says the fix.

    >>> import re
    >>> def has_answer(completions, **kwargs):
    ...     return [float(bool(re.search(r"<answer>", c))) for c in completions]
    >>> check_completion_shapes([{"prompt": "2+2?"}], [has_answer])  # plain text: fine
    >>> check_completion_shapes([{"prompt": [{"role": "user", "content": "2+2?"}]}], [has_answer])
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.RewardConfigError: reward 'has_answer' fails on a completion shaped as training ...
    """
    row = _first_row(dataset)
    if row is None:
        return
    chat = isinstance(row.get("prompt"), list)
    completion: Any = [{"role": "assistant", "content": TRIAL_COMPLETION}] if chat else TRIAL_COMPLETION
    columns = {k: [v] for k, v in row.items() if k != "prompt" and k not in RESERVED_KWARGS}
    for made in get_rewards(rewards):
        for leaf, _ in leaf_rewards(made):
            if not isinstance(leaf, (BatchFunctionReward, AsyncBatchFunctionReward)) or leaf.completion_shape != "auto":
                continue
            _trial(leaf, row.get("prompt"), completion, columns, chat)


def _trial(reward: Any, prompt: Any, completion: Any, columns: dict[str, list[Any]], chat: bool) -> None:
    import asyncio

    trial = reward.replace(on_error="raise")
    try:
        out = trial(prompts=[prompt], completions=[completion], **columns)
        if asyncio.iscoroutine(out):
            asyncio.run(out)
    except (TypeError, AttributeError) as exc:
        message = str(exc)
        if not any(word in message for word in _SHAPE_WORDS):
            return
        shape = "chat messages ([{'role': 'assistant', 'content': ...}])" if chat else "plain strings"
        fix = (
            "completion_shape: text (kwargs: {completion_shape: text}) passes it each completion's text"
            if chat
            else "completion_shape: chat (kwargs: {completion_shape: chat}) passes it each completion as one message"
        )
        raise RewardConfigError(
            f"reward {reward.name!r} fails on a completion shaped as training passes it: the dataset is "
            f"{'conversational' if chat else 'plain text'}, so TRL passes {shape}, and it raised "
            f"{type(exc).__name__}: {message}. It is written for the other shape: set {fix}, or make the prompts "
            f"{'plain text (conversational: false)' if chat else 'chat messages (conversational: true)'}"
        ) from exc
    except Exception:  # another failure, on a made-up completion, is not a shape mismatch
        return


def _first_row(dataset: Any) -> dict[str, Any] | None:
    if isinstance(dataset, (list, tuple)):
        return dict(dataset[0]) if dataset and isinstance(dataset[0], Mapping) else None
    try:
        return dict(dataset[0]) if len(dataset) else None
    except (TypeError, KeyError, IndexError):
        first = next(iter(dataset.take(1)), None) if hasattr(dataset, "take") else None
        return dict(first) if first is not None else None
