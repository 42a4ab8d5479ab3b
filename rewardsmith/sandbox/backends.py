"""Sandbox backends by name: ``local``, ``limits``, ``sandboxfusion``, and any registered with :func:`register_backend`.

* ``local``: bubblewrap when it works here, else resource limits only, after a
  loud warning (:class:`~rewardsmith.sandbox.local.LocalBackend`);
* ``limits``: resource limits only;
* ``sandboxfusion``: a SandboxFusion server's ``/run_code`` API
  (:class:`~rewardsmith.sandbox.sandboxfusion.SandboxFusionBackend`, setting ``url``).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.names import did_you_mean
from rewardsmith.sandbox.backend import Backend
from rewardsmith.sandbox.local import LocalBackend
from rewardsmith.sandbox.sandboxfusion import SandboxFusionBackend

__all__ = ["backend_names", "get_backend", "register_backend"]

_LOCK = threading.Lock()
_FACTORIES: dict[str, Callable[..., Backend]] = {}


def register_backend(name: str, factory: Callable[..., Backend], *, replace: bool = False) -> None:
    """Make ``factory(**settings)`` available as the backend ``name``.

    >>> from rewardsmith.sandbox import LocalBackend
    >>> register_backend("mine", LocalBackend)
    >>> type(get_backend("mine")).__name__
    'LocalBackend'
    >>> _FACTORIES.pop("mine") is LocalBackend
    True
    """
    with _LOCK:
        if name in _FACTORIES and _FACTORIES[name] is not factory and not replace:
            raise RewardConfigError(f"a sandbox backend named {name!r} is already registered; pass replace=True")
        _FACTORIES[name] = factory


def backend_names() -> list[str]:
    """The registered backend names."""
    _builtins()
    return sorted(_FACTORIES)


def get_backend(spec: str | Backend, **settings: Any) -> Backend:
    """A backend by name with its settings (a :class:`Backend` is returned as it is).

    >>> get_backend("limits").isolation
    'limits'
    >>> get_backend("sandbox_fusion")
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.RewardConfigError: unknown sandbox backend 'sandbox_fusion'. Did you mean: ...
    """
    if isinstance(spec, Backend):
        if settings:
            raise RewardConfigError("settings are given to a backend by name, not to a backend object")
        return spec
    _builtins()
    factory = _FACTORIES.get(spec) if isinstance(spec, str) else None
    if factory is None:
        raise RewardConfigError(
            f"unknown sandbox backend {spec!r}.{did_you_mean(str(spec), list(_FACTORIES))} "
            f"Backends: {', '.join(sorted(_FACTORIES))}"
        )
    try:
        return factory(**settings)
    except TypeError as exc:
        raise RewardConfigError(f"sandbox backend {spec!r}: {exc}") from None


def _builtins() -> None:
    if "local" not in _FACTORIES:
        register_backend("local", LocalBackend)
        register_backend("limits", functools.partial(LocalBackend, isolation="limits"))
        register_backend("sandboxfusion", SandboxFusionBackend)
