"""Command-line overrides of a training config: ``key=value``, values read as YAML.

Dotted keys address the sectioned config (``trainer.learning_rate=3e-3``,
``dataset.mix.1.source=data.jsonl``); flat keys (``max_steps=2``) are applied
to the config as written, before the seed-style keys are mapped
(:func:`rewardsmith.config.seed.split_overrides`).
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

import yaml

from rewardsmith.core.problems import ConfigError, ConfigProblems

__all__ = ["apply_overrides"]


def _parse_value(text: str) -> Any:
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value


def apply_overrides(
    raw: dict[str, Any], overrides: list[str], problems: ConfigProblems | None = None
) -> dict[str, Any]:
    """Apply ``dotted.key=value`` overrides (values read as YAML) to a raw config dict.

    A malformed override is recorded in ``problems`` (the others are still
    applied); without ``problems`` it raises.

    >>> apply_overrides({"trainer": {"learning_rate": 1e-6}}, ["trainer.learning_rate=3e-3", "model.name_or_path=x"])
    {'trainer': {'learning_rate': '3e-3'}, 'model': {'name_or_path': 'x'}}
    >>> apply_overrides({"dataset": {"mix": [{"source": "a"}, {"source": "b"}]}}, ["dataset.mix.1.source=c"])
    {'dataset': {'mix': [{'source': 'a'}, {'source': 'c'}]}}
    """
    collector = problems if problems is not None else ConfigProblems()
    out = copy.deepcopy(raw)
    for item in overrides:
        with collector.check():
            _apply(out, item)
    if problems is None:
        collector.raise_if_any()
    return out


def _apply(out: dict[str, Any], item: str) -> None:
    key, sep, text = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(
            f"overrides are written key=value (trainer.learning_rate=3e-3, or max_steps=2 for a training argument), "
            f"got {item!r}"
        )
    parts = key.strip().split(".")
    node: Any = out
    for part, following in itertools.pairwise(parts):
        node = _child(node, part, following, item)
    _set(node, parts[-1], _parse_value(text), item)


def _child(node: Any, part: str, following: str, item: str) -> Any:
    if isinstance(node, list):
        index = _index(node, part, item)
        return node[index]
    child = node.get(part)
    if child is None:
        child = node[part] = [] if following.isdigit() else {}
    if not isinstance(child, (dict, list)):
        raise ConfigError(f"override {item!r}: {part!r} is a value, not a section")
    return child


def _index(node: list, part: str, item: str) -> int:
    if not part.isdigit() or int(part) >= len(node):
        raise ConfigError(f"override {item!r}: {part!r} is not an index of a list of {len(node)}")
    return int(part)


def _set(node: Any, key: str, value: Any, item: str) -> None:
    if isinstance(node, list):
        node[_index(node, key, item)] = value
    else:
        node[key] = value
