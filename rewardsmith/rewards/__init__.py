"""Built-in rewards, one module per family, each registered by name when its module is imported.

Nothing is imported with this package: a built-in name (``get_reward("think_format")``) imports only
the module of its family (:data:`rewardsmith.core.registry.BUILTIN_REWARDS`), and a class named here
(``from rewardsmith.rewards import ThinkFormat``) is imported from its module on first use, so worker
processes that unpickle one reward load that reward's module only. Heavy dependencies (math-verify,
jsonschema, NLTK, langdetect, jieba) are imported inside the rewards that need them.
"""

from __future__ import annotations

import importlib
from typing import Any

_CLASSES = {
    "CodeSyntax": "code",
    "CodeTests": "code_tests",
    "CosineLength": "length",
    "Countdown": "countdown",
    "EnvironmentReward": "tools",
    "GSM8KAccuracy": "gsm8k",
    "GroupLength": "group_length",
    "IFEval": "ifeval",
    "JSONSchema": "structured",
    "LanguageConsistency": "language",
    "Length": "length",
    "MathAccuracy": "math",
    "ReasoningSteps": "repetition",
    "Repetition": "repetition",
    "SoftOverlong": "length",
    "TagCount": "format",
    "ThinkFormat": "format",
    "ToolCallMatch": "tool_match",
    "ToolEfficiency": "tools",
    "ToolSchema": "tools",
    "ToolSchemaTurns": "tool_turns",
    "ToolSuccess": "tools",
    "ToolSuccessTurns": "tool_turns",
}

__all__ = sorted(_CLASSES)


def __getattr__(name: str) -> Any:
    if name in _CLASSES:
        return getattr(importlib.import_module(f"rewardsmith.rewards.{_CLASSES[name]}"), name)
    raise AttributeError(f"module 'rewardsmith.rewards' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_CLASSES])
