"""Rewards that count tokens, given the tokenizer of the model a config trains.

In training TRL passes each completion's token ids; a completion scored from
text (``rewardsmith eval``, ``check --config``, ``serve``, the adapters) has
none, so ``cosine_length``, ``soft_overlong`` and the like are given the
tokenizer of the model the config trains, unless their entry names a
tokenizer or another unit. The model's folder is resolved by the front end
(``rewardsmith.train`` builds or converts built-in models), and only when
some entry needs it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rewardsmith.core.errors import RewardsmithError
from rewardsmith.core.registry import find_target

__all__ = ["counts_tokens", "with_tokenizer"]


def counts_tokens(entry: Any) -> bool:
    """Whether a reward entry measures length in tokens and names no tokenizer.

    >>> counts_tokens("soft_overlong"), counts_tokens({"name": "cosine_length", "kwargs": {"unit": "words"}})
    (True, False)
    >>> counts_tokens({"name": "soft_overlong", "kwargs": {"tokenizer": "gpt2"}}), counts_tokens("think_format")
    (False, False)
    """
    name = entry if isinstance(entry, str) else entry.get("name") if isinstance(entry, dict) else None
    kwargs = (entry.get("kwargs") or {}) if isinstance(entry, dict) else {}
    try:
        fields = getattr(find_target(name), "__dataclass_fields__", {}) if isinstance(name, str) else {}
    except RewardsmithError:
        return False  # an unknown reward: reported when the rewards are built
    if "unit" not in fields or "tokenizer" not in fields or not isinstance(kwargs, dict):
        return False
    return kwargs.get("unit", fields["unit"].default) == "tokens" and kwargs.get("tokenizer") is None


def with_tokenizer(entries: list[Any], tokenizer: Callable[[], str | None]) -> list[Any]:
    """``entries`` with ``tokenizer()`` (called once, only if some entry needs it) set on each that counts tokens.

    >>> with_tokenizer(["think_format", "soft_overlong"], lambda: "./model")
    ['think_format', {'name': 'soft_overlong', 'kwargs': {'tokenizer': './model'}}]
    """
    path: list[str | None] = []
    out = []
    for entry in entries:
        if counts_tokens(entry):
            if not path:
                path.append(tokenizer())
            if path[0] is not None:
                entry = {**({"name": entry} if isinstance(entry, str) else entry)}
                entry["kwargs"] = {**(entry.get("kwargs") or {}), "tokenizer": path[0]}
        out.append(entry)
    return out
