"""Plug-ins: packages that add rewards, converters, dataset sources or config entry kinds when loaded.

A package declares modules in the ``rewardsmith.plugins`` entry-point group;
each is imported once, the first time anything is looked up by name (a
reward, a converter, a ``scheme:`` dataset source), and registers what it
provides as it is imported (``@register_reward``, ``register_converter``,
``register_source_scheme``)::

    # pyproject.toml of a package with rewards
    [project.entry-points."rewardsmith.plugins"]
    my_rewards = "my_package.rewards"

rewardsmith's own judges, composition entries and the Fireworks source are
loaded the same way, so the core imports no layer above it; built-in reward
names are found first in a static table that imports only the module of the
name asked for (:data:`rewardsmith.core.registry.BUILTIN_REWARDS`), and every
module of that table is imported when all names are listed. Single objects can also be declared one by one in the
``rewardsmith.rewards`` and ``rewardsmith.converters`` groups (a name and the
object), loaded only when that name is asked for.

A plug-in that fails to import is logged and skipped; what it would have
registered is then unknown, and the error for an unknown name says which
plug-ins failed (:func:`failed_plugins`).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

__all__ = ["PLUGIN_GROUP", "entry_points_of", "failed_plugins", "load_plugins"]

logger = logging.getLogger("rewardsmith")

PLUGIN_GROUP = "rewardsmith.plugins"

_LOCK = threading.RLock()
_loaded = False
_loading = False
_failed: dict[str, str] = {}


def entry_points_of(group: str) -> list[Any]:
    """The installed entry points of ``group`` (each distribution's once).

    >>> [ep.value for ep in entry_points_of("rewardsmith.plugins") if ep.name == "rewards"]
    ['rewardsmith.rewards']
    """
    from importlib.metadata import entry_points

    seen: dict[tuple[str, str], Any] = {}
    for ep in entry_points(group=group):
        seen.setdefault((ep.name, ep.value), ep)
    return list(seen.values())


def load_plugins() -> None:
    """Import every module of the ``rewardsmith.plugins`` group, once per process (thread-safe).

    Called by every lookup by name; cheap after the first call. A plug-in that
    looks something up while it loads does not load the plug-ins again.
    """
    global _loaded, _loading
    if _loaded:
        return
    with _LOCK:
        if _loaded or _loading:
            return
        _loading = True
        try:
            for ep in entry_points_of(PLUGIN_GROUP):
                try:
                    loaded = ep.load()  # a module registers as it is imported; a function is called
                    if callable(loaded):
                        loaded()
                except Exception as exc:  # a broken plug-in must not take the others down
                    _failed[ep.value] = f"{type(exc).__name__}: {exc}"
                    logger.warning("rewardsmith plug-in %s (%s) failed to load: %s", ep.name, ep.value, exc)
            _loaded = True
        finally:
            _loading = False


def failed_plugins() -> dict[str, str]:
    """Plug-ins that failed to load, with their errors (empty when all loaded).

    >>> load_plugins()
    >>> failed_plugins()
    {}
    """
    return dict(_failed)
