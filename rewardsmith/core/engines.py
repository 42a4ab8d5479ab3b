"""Execution engines: where a reward's samples run when they leave the calling process.

A reward's ``engine`` setting names one. ``"local"`` (the default) is
:class:`~rewardsmith.core.pool.WorkerPool`: worker subprocesses on this
machine, used when the reward has a ``timeout`` or ``workers > 1``. Other
engines are registered by plug-ins; ``rewardsmith[ray]`` registers ``"ray"``,
which scores samples on Ray actors (:mod:`rewardsmith.integrations.rayengine`).
With an engine other than ``"local"`` every sample goes to that engine, and
``workers`` is the number of its workers (actors).

An engine is a factory of pools with the local pool's contract:

* ``make_pool(payload, size, reward_name, file_modules)`` builds a pool for one
  reward (``payload`` is the reward pickled by
  :func:`~rewardsmith.core.pickling.dumps_for_worker`, ``file_modules`` the
  modules loaded from files, to load again where the reward is unpickled);
* ``pool.map(rows, timeout, keys)`` scores one sample per row of keyword
  arguments and returns, in input order, a ``RewardResult`` or a
  :class:`~rewardsmith.core.result.Failure` per row: ``timeout`` when a sample
  ran past ``timeout`` seconds (the worker running it is stopped and
  replaced), ``crash`` when its worker died (it is replaced); ``keys`` are
  optional affinity keys;
* ``pool.close()`` stops its workers; ``pool.closed`` says whether it was.

The core never imports an engine's libraries. An installed package declares
an engine in the ``rewardsmith.engines`` entry-point group (a name and a
:class:`PoolEngine` object), loaded only when that name is asked for::

    [project.entry-points."rewardsmith.engines"]
    ray = "rewardsmith.integrations.rayengine:RAY_ENGINE"

or registers it with :func:`register_pool_engine` (from a plug-in module, or
any code that runs first). ``check`` says, before anything runs, when the
engine cannot be used here (its extra is not installed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.lookup import Registry

__all__ = [
    "ENGINES",
    "ENGINE_GROUP",
    "LOCAL",
    "Pool",
    "PoolEngine",
    "pool_engine",
    "pool_engine_names",
    "register_pool_engine",
]

#: The entry-point group where installed packages declare engines by name.
ENGINE_GROUP = "rewardsmith.engines"

#: The engine of worker subprocesses on this machine (the default).
LOCAL = "local"


class Pool(Protocol):
    """What an engine's pool provides (see the module docs)."""

    closed: bool

    def map(self, rows: list[dict[str, Any]], timeout: float | None, keys: list[Any] | None = None) -> list[Any]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class PoolEngine:
    """A named way to run a reward's samples: a pool factory, and a check that it can run here.

    >>> engine = pool_engine("local")
    >>> engine.name, engine.check()
    ('local', None)
    """

    name: str
    make_pool: Callable[[bytes, int, str, dict[str, str]], Pool]
    #: Raises a :class:`~rewardsmith.core.errors.RewardsmithError` saying what to install when the engine cannot run.
    check: Callable[[], None] = lambda: None
    description: str = ""


def _local_pool(payload: bytes, size: int, reward_name: str, file_modules: dict[str, str]) -> Pool:
    from rewardsmith.core.pool import WorkerPool

    return WorkerPool(payload, size, reward_name, file_modules)


#: The engines, on the registry mechanism names are looked up with (:class:`~rewardsmith.core.lookup.Registry`):
#: registered ones, and those an installed package declares in :data:`ENGINE_GROUP`, loaded when asked for.
ENGINES = Registry("engine", ENGINE_GROUP)
ENGINES.register(LOCAL, PoolEngine(LOCAL, _local_pool, description="worker subprocesses on this machine"))


def register_pool_engine(engine: PoolEngine, *, replace: bool = False) -> None:
    """Make ``engine`` available as a reward's ``engine`` setting (what a plug-in calls when it loads).

    >>> register_pool_engine(PoolEngine("local-copy", pool_engine("local").make_pool))
    >>> "local-copy" in pool_engine_names()
    True
    >>> ENGINES.unregister("local-copy")
    """
    if not isinstance(engine.name, str) or not engine.name:
        raise RewardConfigError(f"an engine needs a non-empty name, got {engine.name!r}")
    known = ENGINES.registered(engine.name)
    if known is not None and known != engine and not replace:
        raise RewardConfigError(f"an engine named {engine.name!r} is already registered; pass replace=True")
    ENGINES.register(engine.name, engine, replace=True)


def pool_engine_names() -> list[str]:
    """The engines registered so far (plug-ins included once loaded), the local one first.

    >>> pool_engine_names()[0]
    'local'
    """
    return ENGINES.registered_names()


def pool_engine(name: str) -> PoolEngine:
    """The engine registered as ``name``; an unknown name is looked up in the entry points, then the plug-ins.

    >>> pool_engine("locla")
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.RewardConfigError: unknown engine 'locla'. Did you mean: local? ...
    """
    if not isinstance(name, str):
        raise RewardConfigError(f"engine must be the name of an engine such as 'local' or 'ray', got {name!r}")
    return ENGINES.named(name, PoolEngine, " ('ray' comes with pip install 'rewardsmith[ray]')")
